"""The compiled engine (dynamics/engine.py) against the numpy path it is traced from, against finite
differences for its exact derivatives, and its integrators against each other."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.closed_loop import closed_loop_forward_dynamics, reduced_mass_matrix
from mbstudio.dynamics.engine import engine, fits_engine
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps, loads
from mbstudio.model.document import Actuator, SpringDamper
from mbstudio.numerics.compiled import piecewise_linear
from mbstudio.simulation.run import nearest_calls, simulate

from .conftest import slow_for

NAMES = [n for n in samples.names() if fits_engine(samples.load(n))]  # the 3R[2US] Delta is too large


def _state(mech: Mechanism, seed: int) -> tuple[float, np.ndarray, np.ndarray]:
    """A time, an assembled configuration near the document's and random independent velocities."""
    rng = np.random.default_rng(seed)
    k = len(mech.independent)
    q0 = mech.assemble(None)
    q = mech.assemble(q0[:, list(mech.partition.independent)] + 0.05 * rng.standard_normal(k), guess=q0)[0]
    return float(rng.uniform(0, 2)), q, rng.standard_normal(k)


def _bound(mech: Mechanism, q: np.ndarray) -> float:
    """1e-12, or the rounding the reduced mass matrix's condition number allows where it is larger (the
    PUMA's is 8e4: two correct solves differ by κ ε)."""
    return max(1e-12, 1e-15 * np.linalg.cond(reduced_mass_matrix(mech, q[None])[0]))


def _numpy_accelerations(mech: Mechanism, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    R = mech.r_matrix(q[None])
    qd = (R * v[None, None, :]).sum(axis=2)
    Q = AppliedForces(mech).generalized(np.array([t]), q[None], qd)
    return closed_loop_forward_dynamics(mech, q[None], qd, Q, R)[0]


@pytest.mark.parametrize("name", slow_for(NAMES, {"delta_3rr2rrr", "sla_suspension_bushed"}))
def test_compiled_accelerations_equal_the_numpy_path(name):
    eng = engine(samples.load(name))
    for seed in range(3):
        t, q, v = _state(eng.mech, seed)
        ours = eng.accelerations(t, q, v)
        reference = _numpy_accelerations(eng.mech, t, q, v)
        assert np.abs(ours - reference).max() <= _bound(eng.mech, q) * max(1.0, np.abs(reference).max())
        assert np.allclose(eng.velocities(q, v), (eng.mech.r_matrix(q[None])[0] @ v), rtol=0, atol=1e-13)


@pytest.mark.parametrize("name", slow_for(NAMES, {"delta_3rr2rrr", "sla_suspension_bushed"}))
def test_the_state_equation_closes_the_loops_from_a_disturbed_state(name):
    """Dependent coordinates 1e-4 off (an integrator's prediction is closer): the Newton steps inside the
    graph land on the assembled configuration, and ẏ is (R q̇_ind, q̈_ind) there."""
    eng = engine(samples.load(name))
    t, q, v = _state(eng.mech, 7)
    off = q.copy()
    off[list(eng.mech.partition.dependent)] += 1e-4
    y = np.concatenate([off, v])
    closed, residual = eng.closed(y)
    assert np.abs(closed[0] - q).max() < 1e-12 and residual[0] < 1e-13
    y_dot = eng.ode(t, y)
    assert np.abs(y_dot[: eng.n] - eng.velocities(q, v)).max() < 1e-11
    assert np.allclose(y_dot[eng.n :], _numpy_accelerations(eng.mech, t, q, v), rtol=1e-11, atol=1e-11)


def _central(f, x: np.ndarray, h: float) -> np.ndarray:
    columns = []
    for i in range(len(x)):
        step = np.zeros_like(x)
        step[i] = h
        columns.append((f(x + step) - f(x - step)) / (2 * h))
    return np.array(columns).T


@pytest.mark.parametrize(
    "name", ["four_bar", "sla_suspension", pytest.param("delta_3rr2rrr", marks=pytest.mark.slow), "gripper"]
)  # the Delta's engine takes 23 s to build on a fresh machine: with the slow checks
def test_exact_derivatives_equal_central_differences(name):
    eng = engine(samples.load(name))
    mech = eng.mech
    t, q, v = _state(mech, 3)
    ind = list(mech.partition.independent)
    tau = np.zeros(mech.n)
    J = eng.jacobians(t, q, v, tau)

    def at_independent(x):  # the loops re-closed at the moved independent coordinates
        moved = q.copy()
        moved[ind] = x
        return eng.accelerations(t, eng.close_loops(moved)[0], v)

    scale = max(1.0, np.abs(eng.accelerations(t, q, v)).max())
    stiffness = max(scale, np.abs(J["qdd_q_ind"]).max())  # the gripper's entries reach 260
    assert np.abs(J["qdd_q_ind"] - _central(at_independent, q[ind], 1e-6)).max() < 1e-5 * stiffness
    assert np.abs(J["qdd_qd_ind"] - _central(lambda x: eng.accelerations(t, q, x), v, 1e-6)).max() < 1e-6 * scale
    assert np.abs(J["qdd_tau"] - _central(lambda x: eng.accelerations(t, q, v, x), tau, 1e-3)).max() < 1e-8 * scale
    assert np.abs(J["R"] - mech.r_matrix(q[None])[0]).max() < 1e-13
    y = np.concatenate([q, v])
    jac = eng.state_jacobian(t, y)
    assert np.abs(jac - _central(lambda x: eng.ode(t, x), y, 1e-6)).max() < 1e-5 * max(scale, np.abs(jac).max())


def test_time_functions_and_tables_are_traced_with_the_time():
    model = samples.load("four_bar")  # the smallest closed loop: its engine builds in a second
    model.forces = [
        Actuator("motor", "theta1", formula="-3.4 + 0.5*sin(2*pi*t)"),
        Actuator("brake", "theta2", table=[[0.0, -3.0], [0.5, -4.0], [1.0, -3.5]]),
    ]
    eng = engine(model)
    _, q, v = _state(eng.mech, 1)
    for t in (0.0, 0.3, 0.5, 0.8, 1.7):  # 1.7: beyond the table, held at its last value
        assert np.allclose(eng.accelerations(t, q, v), _numpy_accelerations(eng.mech, t, q, v), rtol=0, atol=1e-11)
    xs, ys = np.array([0.0, 0.5, 1.0]), np.array([-3.0, -4.0, -3.5])
    for t in (-1.0, 0.2, 0.5, 0.9, 3.0):
        assert float(piecewise_linear(t, xs, ys)) == pytest.approx(np.interp(t, xs, ys), abs=1e-15)


def test_one_engine_per_model_revision():
    model = samples.load("four_bar")
    first = engine(model)
    assert engine(loads(dumps(model))) is first and first.build_seconds > 0
    model.parameters[0].value = float(model.parameters[0].value) * 1.01 if model.parameters else 0
    assert model.parameters == [] or engine(model) is not first


# the closed loops' simulations against the numpy path take 11-12 s each: with the slow checks (their accelerations
# are compared in the README run by test_compiled_accelerations_equal_the_numpy_path)
@pytest.mark.parametrize(
    "name", [*(pytest.param(n, marks=pytest.mark.slow) for n in ("four_bar", "slider_crank")), "double_pendulum"]
)
def test_compiled_simulation_follows_the_numpy_path(name):
    model = samples.load(name)
    ours = simulate(model, 0.5, "DOP853", rtol=1e-12, atol=1e-12, samples=51)
    reference = simulate(model, 0.5, "DOP853", rtol=1e-12, atol=1e-12, samples=51, compiled=False)
    assert np.abs(ours.q - reference.q).max() < 1e-9
    assert np.abs(ours.qd - reference.qd).max() < 1e-8
    assert ours.residual.max() < 1e-12


@pytest.mark.slow  # 10 s: DOP853 at tight tolerances on the sprung SLA; the samples' runs check CVODES here
def test_cvodes_agrees_with_dop853_on_the_sprung_sla():
    model = samples.load("sla_suspension")
    model.forces = [SpringDamper("coilover", "6", "C", "7", "ball", stiffness=30_000.0, length=0.5)]
    adams, bdf, dop = (
        simulate(model, 1.0, method, rtol=1e-10, atol=1e-12, samples=101)
        for method in ("CVODES", "CVODES-BDF", "DOP853")
    )
    assert adams.kinetic.max() > 0.1  # it moves
    for run in (adams, bdf):
        assert np.abs(run.q - dop.q).max() < 1e-6
        assert run.residual.max() < 1e-12
    assert adams.provenance.rhs_evaluations > 0


def test_the_nearest_call_is_found_by_sorting():
    rng = np.random.default_rng(0)
    calls, outputs = rng.uniform(0, 1, 500), np.linspace(0, 1, 37)
    brute = np.abs(calls[None, :] - outputs[:, None]).argmin(axis=1)
    assert np.array_equal(calls[nearest_calls(calls, outputs)], calls[brute])


def test_cvodes_needs_the_compiled_engine():
    with pytest.raises(ValueError, match="compiled"):
        simulate(samples.load("four_bar"), 0.1, "CVODES", compiled=False)


@pytest.mark.parametrize("name", ["puma560", "gripper", "double_pendulum"])
def test_one_state_kernels_equal_the_batched_algorithms(name):
    from mbstudio.dynamics.kernels import KERNELS, kernel

    model = samples.load(name)
    mech = Mechanism(model)
    rng = np.random.default_rng(5)
    values = {a: rng.uniform(-1, 1, mech.n) for a in ("q", "qd", "qdd", "tau")}
    for kernel_name, (algorithm, arguments) in KERNELS.items():
        args = [values[a] for a in arguments]
        reference = algorithm(mech, *(a[None] for a in args))[0]
        ours = kernel(model, kernel_name)(*args)
        assert ours.shape == reference.shape
        assert np.abs(ours - reference).max() <= _bound(mech, values["q"]) * max(1.0, np.abs(reference).max())
    with pytest.raises(KeyError, match="the kernels are"):
        kernel(model, "nothing")


@pytest.mark.slow  # each new choice of coordinates compiles an engine: ~30 s on a machine that has none cached
def test_the_falling_delta_runs_through_where_its_first_coordinates_turn_singular():
    """Unactuated, the Delta falls until, near t = 0.2758 s, the loop equations and independent coordinates chosen
    at the start turn singular while its full (redundant) set keeps its rank; they are chosen anew before that
    (simulation/charts.py, at about 0.266 s) and the run goes on. Independent checks: energy is kept (no damping),
    the loops stay closed, and an independently built Pinocchio model with rigid contacts
    (io/pinocchio_reference.py) follows the same motion through it."""
    from scipy.integrate import solve_ivp

    from mbstudio.io.pinocchio_reference import ClosedLoopReference

    model = samples.load("delta_3rr2rrr")
    ours = simulate(model, 0.6, "DOP853", rtol=1e-10, atol=1e-12, samples=61)
    assert ours.residual.max() < 1e-12 and np.abs(ours.total - ours.total[0]).max() < 1e-7
    mech = Mechanism(model)
    reference = ClosedLoopReference.of(mech)
    times = np.linspace(0, 0.6, 61)
    theirs = solve_ivp(reference.rhs, (0, 0.6), reference.state(ours.q[0]), "DOP853", times, rtol=1e-10, atol=1e-12)
    th1a = mech.coordinates.index("th1a")
    assert ours.q[30, th1a] > 2.2  # well past the 1.8953 rad where the first choice turned singular
    difference = np.abs(reference.coordinates(theirs.y.T) - ours.q)
    arms = [i for i, name in enumerate(mech.coordinates) if name[:3] in ("th1", "th2")]
    # 4e-11 up to the switch (t = 0.27 s); after it 7e-10 to 7e-8 by the end, as the rounding of the switch state
    # falls (energy error 7e-9 J). Switching where the steps had stalled (as runs once did) cost 5.5e-5 after it
    # and a 4e-8 J energy error
    assert difference[:27, arms].max() < 1e-9
    assert difference[:, arms].max() < 1e-6 and difference.max() < 1e-6


@pytest.mark.parametrize("name", ["sla_suspension", "four_bar", "gripper", "balloon", "double_pendulum"])
def test_compiled_output_series_equal_the_numpy_series(name):
    """The energies, poses, residuals, joint reactions, monitors and measures of a run, from the engine's compiled
    series (one native call a sample; the measures from its bodies' rates), equal the numpy path's columns by
    columns (the kinetic energy by body momenta there, by ½ q̇ᵀ M q̇ here); with the work handed over too."""
    from mbstudio.dynamics.forces import AppliedForces
    from mbstudio.simulation.run import compiled_series, full_series

    model = samples.load(name)
    eng = engine(model)
    mech = eng.mech
    rng = np.random.default_rng(2)
    states = [_state(mech, seed) for seed in range(4)]
    t = np.arange(4) * 0.1  # the monitors integrate over increasing times
    q = np.array([s[1] for s in states])
    R = mech.r_matrix(q)
    qd = (R * np.array([s[2] for s in states])[:, None, :]).sum(axis=2)
    qdd = mech.accelerations(q, qd, rng.standard_normal((4, len(mech.independent))), R)
    forces = AppliedForces(mech)
    reference = full_series(mech, forces, t, q, qd, qdd)
    work = -next(v for n, _, v in reference.monitors if n == "dissipated_energy")  # as a CVODES run hands it over
    motion = (eng, mech, forces, t, q, qd, qdd)
    for ours in (compiled_series(*motion), compiled_series(*motion, work=work)):
        for (name_a, unit_a, a), (name_b, unit_b, b) in zip(ours.columns(), reference.columns(), strict=True):
            assert (name_a, unit_a) == (name_b, unit_b)
            assert np.allclose(a, b, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(b).max())), name_a


def test_cvodes_returns_at_the_check_points_whatever_the_outputs():
    """CVODES returns at every check point of a run (integrators.CHECKS of them, at fixed times), so that its step
    limit (integrators.StepLimit, at most MAX_STEPS) is counted over such a stretch: a stall is given up there. Where it
    returns decides its steps, not the outputs asked for: the motion with 3 outputs is the same bits as with 51
    (whose outputs are among those returns)."""
    from mbstudio.simulation.integrators import CHECKS, CHUNKS, _piece, _returns

    end, checks = _piece(0.0, 2.0, span=1)
    assert end == 2.0 / CHUNKS and len(checks) == CHECKS // CHUNKS
    returns, outputs, checked = _returns(np.array([0.05, 0.1]), checks, 0.0, end)
    assert len(returns) == CHECKS // CHUNKS and np.diff((0.0, *returns)).max() <= CHUNKS / CHECKS + 1e-12
    assert list(np.asarray(returns)[outputs]) == [0.5, 1.0] and list(checked) == list(range(len(returns)))
    assert _piece(0.0, 2.0, span=0)[0] == 2.0 / CHECKS
    assert _piece(0.1, 2.0, span=3)[0] == 4 * 2.0 / CHUNKS and _piece(1.9, 2.0, span=3)[0] == 2.0  # on the grid
    model = samples.load("four_bar")
    sparse, dense = simulate(model, 2.0, samples=3), simulate(model, 2.0, samples=51)
    assert np.array_equal(sparse.q[1:], dense.q[[25, 50]]) and sparse.provenance.rhs_evaluations > 1000
