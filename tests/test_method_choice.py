"""The integrator chosen where the caller names none (simulation/method_choice.py): CVODES-BDF for a model with
compliant contacts, CVODES for every other, the same from Python, the command line, ensembles and the window's
job; a method named always wins; the run's provenance and summaries say what was chosen and why. Each run is
compared, bit for bit, with the same run whose method is named: the automatic choice is that method, nothing
else."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.jobs.options import SimulationOptions
from mbstudio.jobs.tasks import simulation
from mbstudio.model import dumps, load
from mbstudio.model.document import ContactPair
from mbstudio.simulation import run as run_module
from mbstudio.simulation.ensemble import simulate_ensemble
from mbstudio.simulation.method_choice import chosen_method, compliant_contacts
from mbstudio.simulation.run import simulate

from .test_contact import ball

T_END, SAMPLES = 0.3, 31  # the ball of test_contact lands at 0.1 s: the run passes through its contact
REASON = "chosen for the stiff friction of 1 compliant contact"
NO_CONTACTS = ("four_bar", "slider_crank", "double_pendulum", "vehicle")  # the vehicle's tyres are no contacts


def landing_ball():
    return ball(0.15, 0.3)


def states(result) -> np.ndarray:
    return np.hstack([result.q, result.qd])


def test_the_rule_reads_the_contact_elements_and_a_named_method_wins():
    model = landing_ball()
    assert chosen_method(model).method == "CVODES-BDF"
    assert chosen_method(model, None).reason == REASON
    assert chosen_method(model, "CVODES").method == "CVODES" and not chosen_method(model, "CVODES").reason
    assert chosen_method(model, "Radau").method == "Radau"
    assert chosen_method(model, contact="rigid").method == "CVODES"  # Moreau's steps: no integrator applies
    model.forces.append(ContactPair("pair", "0", "o", "1", "c", 0.1, 0.1, 1e5))
    assert compliant_contacts(model) == 2
    assert chosen_method(model).reason.endswith("of 2 compliant contacts")
    for name in samples.names():
        assert compliant_contacts(load(samples.path(name))) == 0, name  # no sample has contacts
        assert chosen_method(load(samples.path(name))) == chosen_method(load(samples.path(name)), "CVODES")


def test_python_runs_a_contact_model_on_bdf_bit_for_bit_and_says_why():
    model = landing_ball()
    auto = simulate(model, T_END, samples=SAMPLES)
    named = simulate(model, T_END, "CVODES-BDF", samples=SAMPLES)
    assert auto.provenance.method == "CVODES-BDF" and auto.provenance.method_reason == REASON
    assert named.provenance.method_reason == ""
    assert np.array_equal(states(auto), states(named))
    assert auto.provenance.error_estimate == named.provenance.error_estimate  # the same companion run
    adams = simulate(model, T_END, "CVODES", samples=SAMPLES, error_estimate=False)
    assert adams.provenance.method == "CVODES" and adams.provenance.method_reason == ""
    assert adams.provenance.rhs_evaluations != named.provenance.rhs_evaluations  # another integrator ran


@pytest.mark.parametrize("name", NO_CONTACTS[:2])
def test_python_runs_a_model_without_contacts_on_adams_bit_for_bit(name):
    model = load(samples.path(name))
    auto = simulate(model, 0.2, samples=21)
    named = simulate(model, 0.2, "CVODES", samples=21)
    assert auto.provenance.method == "CVODES" and auto.provenance.method_reason == ""
    assert np.array_equal(states(auto), states(named))
    assert auto.provenance.error_estimate == named.provenance.error_estimate


def test_the_error_estimate_and_the_accuracy_check_run_on_the_method_chosen(monkeypatch):
    """The companion runs integrate with the run's own method (one method throughout, as with a named one)."""
    methods = []
    compiled = run_module._run_compiled

    def recorded(mech, times, y0, method, *rest, **options):
        methods.append(method)
        return compiled(mech, times, y0, method, *rest, **options)

    monkeypatch.setattr(run_module, "_run_compiled", recorded)
    result = simulate(landing_ball(), T_END, samples=SAMPLES, check_accuracy=True)
    assert result.provenance.error_estimate is not None and result.provenance.accuracy is not None
    assert methods == ["CVODES-BDF"] * 3  # the run, its error estimate's companion, its accuracy check


def test_the_command_line_chooses_as_python_does_and_its_summary_says_why(tmp_path, capsys):
    path = tmp_path / "ball.mbs"
    path.write_text(dumps(landing_ball()))
    common = ["simulate", str(path), "--t-end", str(T_END), "--samples", str(SAMPLES), "--quiet"]
    assert main([*common, "--out", str(tmp_path / "auto.csv")]) == 0
    summary = capsys.readouterr().out
    assert f"  method CVODES-BDF ({REASON}; --method CVODES to choose Adams)" in summary.splitlines()
    assert main([*common, "--method", "CVODES-BDF", "--out", str(tmp_path / "named.csv")]) == 0
    assert "chosen for" not in capsys.readouterr().out
    assert (tmp_path / "auto.csv").read_bytes() == (tmp_path / "named.csv").read_bytes()
    assert main([*common, "--method", "CVODES", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["method"] == "CVODES" and figures["method_reason"] == ""
    assert main([*common, "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["method"] == "CVODES-BDF" and figures["method_reason"] == REASON


def test_the_command_line_keeps_adams_for_a_sample_bit_for_bit(tmp_path, capsys):
    common = ["simulate", str(samples.path("four_bar")), "--t-end", "0.2", "--samples", "21", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "auto.csv")]) == 0
    assert "  method " not in capsys.readouterr().out  # nothing chosen otherwise than the plain default
    assert main([*common, "--method", "CVODES", "--out", str(tmp_path / "named.csv")]) == 0
    assert (tmp_path / "auto.csv").read_bytes() == (tmp_path / "named.csv").read_bytes()


def test_an_ensemble_of_a_contact_model_chooses_bdf_and_a_named_method_wins():
    model = landing_ball()
    auto = simulate_ensemble(model, T_END, velocities=[[0.0] * 6], samples=SAMPLES)[0]
    adams = simulate_ensemble(model, T_END, velocities=[[0.0] * 6], method="CVODES", samples=SAMPLES)[0]
    assert (auto.provenance.method, auto.provenance.method_reason) == ("CVODES-BDF", REASON)
    assert (adams.provenance.method, adams.provenance.method_reason) == ("CVODES", "")


def test_the_windows_simulation_job_defaults_to_automatic_and_notes_the_choice():
    assert SimulationOptions().method == "auto"
    text = dumps(landing_ball())
    job = simulation(text, {"t_end": T_END, "samples": SAMPLES}, lambda *_: None, lambda: False)
    assert job.provenance.method == "CVODES-BDF"
    assert job.provenance.options["method"] == "auto"
    hint = "(the Simulate dialog's integrator CVODES chooses Adams)"
    assert job.data.notes[0] == f"integrator CVODES-BDF, {REASON} {hint}"
    named = simulation(text, {"t_end": T_END, "samples": SAMPLES, "method": "CVODES"}, lambda *_: None, lambda: False)
    assert named.provenance.method == "CVODES" and not any("chosen for" in n for n in named.data.notes)
