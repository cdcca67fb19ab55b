"""A run that cannot end in reasonable time stops with a message: functions of time are checked during the run
(at load only t = 0 was), and a wall-time budget bounds the rest (a force that grows without bound drives the
motion ever faster, and the steps shrink without end)."""

from __future__ import annotations

import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.model import save
from mbstudio.model.document import Actuator, JointSpringDamper
from mbstudio.simulation.run import simulate


def _with(element):
    model = samples.load("four_bar")
    model.forces = [*model.forces, element]
    return model


def test_a_function_of_time_that_runs_away_stops_the_run_naming_the_element(tmp_path, capsys):
    """The rest angle 10**(500 t) passes 1e12 at t = 0.024 s; the run stops at the next check of its time
    functions (the pieces' starts, every 1/20 of the run), not at the end."""
    model = _with(JointSpringDamper("spring", "theta1", stiffness="0", damping="0", rest="10**(500*t)"))
    with pytest.raises(RuntimeError, match=r"the force element 'spring' reaches 1e\+15 at t = 0.03 s, outside ±1e\+12"):
        simulate(model, 0.2, samples=21)
    path = tmp_path / "runaway.mbs"
    save(model, path)
    assert main(["simulate", str(path), "--t-end", "0.2", "--quiet"]) == 1
    assert "the force element 'spring' reaches" in capsys.readouterr().err


def test_a_run_stops_when_its_time_budget_is_spent(tmp_path, capsys):
    """A torque of 1e12 t on the four-bar's crank stays below the bound over 0.2 s but spins it ever faster: the
    steps shrink without end, and the budget stops the run (it ran for minutes)."""
    model = _with(Actuator("drive", "theta1", formula="1e12*t"))
    with pytest.raises(RuntimeError, match=r"the simulation used its time budget of 0.5 s \(wall clock\)"):
        simulate(model, 0.2, samples=21, budget=0.5)
    path = tmp_path / "fast.mbs"
    save(model, path)
    assert main(["simulate", str(path), "--t-end", "0.2", "--quiet", "--time-budget", "0.5"]) == 1
    assert "time budget of 0.5 s" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["simulate", str(path), "--t-end", "0.2", "--time-budget", "0"])
    assert refused.value.code == 2 and "out of range" in capsys.readouterr().err


@pytest.mark.parametrize("method", ["DOP853", "BDF"])
def test_a_piece_handed_to_scipy_may_start_from_a_strided_state(method):
    """Where CVODES gives up, scipy takes the piece from CVODES' last state, which may be a strided view: the native
    state equation takes contiguous float64 only, and BDF's Jacobian call raised ValueError on such a state."""
    import numpy as np

    from mbstudio.dynamics.engine import engine
    from mbstudio.simulation.integrators import _scipy

    eng = engine(samples.load("four_bar"))
    y0 = np.concatenate([eng.mech.tree.initial_coordinates(), [1.0]])  # q, then the crank rate
    strided = np.repeat(y0, 2)[::2]
    assert not strided.flags.c_contiguous
    times = np.linspace(0.0, 0.05, 3)
    expected, _ = _scipy(eng, times, y0.copy(), method, 1e-10, 1e-12, None)
    got, _ = _scipy(eng, times, strided, method, 1e-10, 1e-12, None)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("given", [[1.0, 2.0], [float("nan")], "fast", [[0.5]]])
def test_velocities_that_are_not_one_finite_value_per_independent_coordinate_are_refused_by_name(given):
    model = samples.load("four_bar")  # one independent coordinate
    with pytest.raises(
        ValueError, match=r"velocities: .* is not one finite value .* for each of the 1 independent coordinates \(\w+\)"
    ):
        simulate(model, 0.01, velocities=given, error_estimate=False)
    assert simulate(model, 0.01, velocities=[0.5], error_estimate=False).qd[0].any()  # one value: the run starts
