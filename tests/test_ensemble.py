"""Ensembles (simulation/ensemble.py, `mbstudio simulate --ensemble`): every run equals the same run simulated
alone, inputs are read by name, and bad tables are refused by line and column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.model import ModelError
from mbstudio.simulation.ensemble import simulate_ensemble
from mbstudio.simulation.run import simulate

TIGHT = {"rtol": 1e-11, "atol": 1e-12, "samples": 21}


def test_each_run_equals_the_run_alone():
    model = samples.load("four_bar")
    velocities = [[0.0], [1.5], [-2.0]]
    runs = simulate_ensemble(model, 0.5, velocities=velocities, **TIGHT)
    for v, run in zip(velocities, runs, strict=True):
        alone = simulate(model, 0.5, velocities=np.array(v), **TIGHT)
        assert np.abs(run.q - alone.q).max() < 1e-8 and run.residual.max() < 1e-12


def test_initial_coordinates_and_parameters_per_run():
    model = samples.load("four_bar")
    runs = simulate_ensemble(model, 0.3, initial=[[0.2], [0.2]], parameters=[{}, {"L2": 0.36}], **TIGHT)
    assert runs[0].q[0, 0] == pytest.approx(0.2) and runs[1].q[0, 0] == pytest.approx(0.2)
    changed = samples.load("four_bar")
    next(p for p in changed.parameters if p.name == "L2").value = 0.36
    start = runs[1].q[0]
    alone = simulate_ensemble(changed, 0.3, initial=[[0.2]], **TIGHT)[0]
    assert np.abs(alone.q - runs[1].q).max() < 1e-8 and np.abs(alone.q[0] - start).max() < 1e-12
    assert np.abs(runs[0].q - runs[1].q).max() > 1e-3  # the parameter made a difference
    with pytest.raises(ModelError, match="'nothing', which is not a parameter"):
        simulate_ensemble(model, 0.1, parameters=[{"nothing": 1.0}])
    with pytest.raises(ValueError, match="different numbers of runs"):
        simulate_ensemble(model, 0.1, initial=[[0.1], [0.2]], velocities=[[0.0], [1.0], [2.0]])


def test_the_command_reads_runs_by_name_and_writes_a_run_column(tmp_path, capsys):
    runs = tmp_path / "runs.csv"
    runs.write_text("# three runs\ntheta1,d_theta1,L2\n0.1,0,\n,1.0,0.36\n0.3,-1,\n")
    out = tmp_path / "out.csv"
    assert (
        main(
            ["simulate", str(samples.path("four_bar")), "--t-end", "0.2", "--samples", "11"]
            + ["--ensemble", str(runs), "--out", str(out), "--quiet"]
        )
        == 0
    )
    table = pd.read_csv(out)
    assert list(table["run"].unique()) == [0, 1, 2] and len(table) == 33
    assert table.loc[table.run == 0, "theta1 [rad]"].iloc[0] == pytest.approx(0.1)
    assert table.loc[table.run == 2, "d_theta1 [rad/s]"].iloc[0] == pytest.approx(-1.0)
    assert "3 runs" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("theta9\n0.1\n", "column 'theta9': is not an input of this model"),
        ("theta1\nabc\n", "line 2, column 'theta1': is not a number"),
        ("theta1,L2\n0.1\n", "line 2: has 1 fields"),
        ("theta1\n", "has no runs"),
    ],
)
def test_bad_run_tables_are_refused_by_line_and_column(tmp_path, capsys, text, words):
    runs = tmp_path / "runs.csv"
    runs.write_text(text)
    code = main(["simulate", str(samples.path("four_bar")), "--t-end", "0.1", "--ensemble", str(runs), "--quiet"])
    assert code == 2 and words in capsys.readouterr().err


@pytest.mark.slow  # three runs of a ball on a thin box, each alone and in the ensemble: 12 s
def test_an_ensemble_with_contact_pairs_runs_each_member_as_alone():
    """A ball dropped onto a 2-mm box (a contact pair: its runs are cut into legs and each touch-down located, as
    in tests/test_located_contacts.py), from three heights (one the document's) at 0, 5 and 20 m/s: integrated as
    one system, the fastest run passes through the box; each member of the ensemble lands on it and is the run
    simulated alone from the same start, bit for bit."""
    from mbstudio.dynamics.engine import engine
    from mbstudio.simulation.integrators import integrate

    from .test_located_contacts import on_thin_box

    model = on_thin_box(0.002)
    heights, speeds = [np.nan, 0.5, 0.3], [0.0, 5.0, 20.0]
    initial = [[0.0, 0.0, z, 0.0, 0.0, 0.0] for z in heights]
    velocities = [[0.0, 0.0, -v, 0.0, 0.0, 0.0] for v in speeds]
    options = {"rtol": 1e-10, "atol": 1e-12, "samples": 201}
    eng = engine(model)
    starts = eng.pack(np.where(np.isnan(initial), 1.0, initial), np.array(velocities))
    together, _, _ = integrate(eng, np.linspace(0.0, 0.3, 201), starts, "CVODES", 1e-10, 1e-12)
    assert together[:, 2, 2].min() < -0.002  # through the box, as one system
    runs = simulate_ensemble(model, 0.3, initial=initial, velocities=velocities, **options)
    for z, v, run in zip(heights, velocities, runs, strict=True):
        alone_model = on_thin_box(0.002)
        if not np.isnan(z):
            next(c for c in alone_model.joints[0].coordinates if c.name == "z").initial = z
        alone = simulate(alone_model, 0.3, velocities=np.array(v), **options)
        assert np.array_equal(run.q, alone.q) and np.array_equal(run.qd, alone.qd)
        assert np.array_equal(run.total, alone.total)
        assert run.q[:, 2].min() > 0.0  # the ball's centre never below the box's top face
    assert runs[0].q[0, 2] == 1.0 and runs[1].q[0, 2] == 0.5
