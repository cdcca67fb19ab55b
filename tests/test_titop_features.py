"""The block models as features: `mbstudio blocks` (the listing, a cross-checked run and its file, bad input),
the Simulate job's cross-check, and the invariant monitors every simulation now carries, against the
independent centre-of-mass and momentum route of tests/test_simulation.py."""

from __future__ import annotations

import numpy as np
import pandas
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.jobs.tasks import simulation
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, dumps
from mbstudio.simulation.run import simulate

from .test_simulation import buoyant_balloon, centre_of_mass_and_momentum


def sample_file(name: str) -> str:
    return str(samples.path(name))


def test_blocks_lists_the_blocks_and_checks_the_initial_accelerations(capsys):
    assert main(["blocks", sample_file("balloon")]) == 0
    out = capsys.readouterr().out
    assert "4 blocks, 3 joint channels, 1 floating base(s), 4 loads" in out
    assert out.splitlines()[2].split() == [
        "0",
        "B",
        "balloon",
        "floating",
        "inertial",
        "(0,",
        "0,",
        "0)",
        *["xB", "yB", "zB", "psiB", "thetaB", "phiB"],
    ]
    assert "slider_spring: JointLaw" in out and "buoyancy: PointLoad" in out
    assert "dd_p = -1.99457306" in out  # the sample's description: p̈ = −1.994573 m/s²
    difference = float(out.rsplit("max |difference| ", 1)[1].split()[0])
    assert difference < 1e-13
    assert main(["blocks", sample_file("four_bar")]) == 0
    out = capsys.readouterr().out
    assert "coupler_rocker: Closure" in out and "the loop closures start relaxed" in out


def test_blocks_cross_checks_a_run_and_writes_the_error_series(tmp_path, capsys):
    out_file = tmp_path / "run.csv"
    args = ["blocks", sample_file("double_pendulum"), "--t-end", "1", "--samples", "21", "--out", str(out_file)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "largest |block − general|" in text and "coordinates" in text
    coordinates = float(next(line for line in text.splitlines() if line.split()[0] == "coordinates").split()[1])
    assert 0 < coordinates < 1e-8
    table = pandas.read_csv(out_file)
    assert {"error:theta1 [rad]", "error:d_theta2 [rad/s]", "energy_balance [J]", "com.x [m]"} <= set(table)
    largest = np.abs(table[["error:theta1 [rad]", "error:theta2 [rad]"]].to_numpy()).max()
    assert largest == pytest.approx(coordinates, rel=1e-2)  # as printed, to 3 digits


def test_blocks_refuses_bad_input_with_the_reason(tmp_path, capsys):
    assert main(["blocks", sample_file("balloon"), "--t-end", "1", "--out", str(tmp_path / "run.txt")]) == 2
    assert "must end in .csv or .npz" in capsys.readouterr().err
    assert main(["blocks", sample_file("balloon"), "--t-end", "1", "--velocity", "theta9=1"]) == 2
    assert "'theta9' is not an independent coordinate" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["blocks", sample_file("balloon"), "--solver", "newton"])
    assert "invalid choice: 'newton'" in capsys.readouterr().err


def test_the_simulation_job_cross_checks_on_request():
    model = samples.load("double_pendulum")
    options = {"t_end": 0.5, "samples": 11, "cross_check": True, "method": "DOP853", "rtol": 1e-10, "atol": 1e-12}
    reported = []
    result = simulation(dumps(model), options, lambda f, m, part=None: reported.append((f, m)), lambda: False)
    series = result.data.series
    assert "block-model cross-check" in result.title
    assert 0 < np.abs(series["error:theta2 [rad]"]).max() < 1e-9
    assert result.data.cross_check["largest"]["error:theta2"] == np.abs(series["error:theta2 [rad]"]).max()
    assert result.data.cross_check["provenance"]["method"] == "DOP853"
    assert reported[-1][0] == 1.0 and any(m.startswith("block model") for _, m in reported)
    plain = simulation(dumps(model), {"t_end": 0.5, "samples": 11}, lambda f, m, part=None: None, lambda: False)
    assert not [n for n in plain.data.series if n.startswith("error:")] and plain.data.cross_check is None


def test_a_failed_cross_check_keeps_the_simulation_and_says_why(monkeypatch):
    import mbstudio.simulation.cross_check as titop

    def refuse(*args, **kwargs):
        raise ModelError("joint 'balloon'", "its 3-2-1 Euler angle thetaB = 90° at t = 0.3 s is at the gimbal lock")

    monkeypatch.setattr(titop, "cross_check", refuse)
    options = {"t_end": 0.2, "samples": 5, "cross_check": True}
    result = simulation(dumps(samples.load("double_pendulum")), options, lambda f, m, part=None: None, lambda: False)
    assert "cross-check failed: joint 'balloon': its 3-2-1 Euler angle thetaB = 90°" in result.title
    assert "gimbal lock" in result.data.cross_check["error"] and "theta1 [rad]" in result.data.series


def test_every_simulation_monitors_centre_of_mass_momentum_and_energy_balance():
    """The monitors against the independent route of tests/test_simulation.py (each body's centre of mass and
    Jacobian); the balloon's momentum stays zero; its energy balance holds to the output samples' quadrature."""
    model = buoyant_balloon(50.0, 5.0, 0.5)
    result = simulate(model, 0.5, rtol=1e-11, atol=1e-12, samples=101)
    columns = {name: values for name, _, values in result.columns()}
    G, H = centre_of_mass_and_momentum(result, Mechanism(model))
    ours = np.stack([columns[f"com.{a}"] for a in "xyz"], axis=1)
    np.testing.assert_allclose(ours, G, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.stack([columns[f"angular_momentum.{a}"] for a in "xyz"], axis=1), H, atol=1e-11)
    assert np.abs(np.stack([columns[f"momentum.{a}"] for a in "xyz"])).max() < 1e-8  # neutral buoyancy, from rest
    assert columns["dissipated_energy"][-1] > 0.01 * result.kinetic.max()
    balance = columns["energy_balance"]
    assert np.abs(balance - balance[0]).max() < 1e-4 * columns["dissipated_energy"][-1]
