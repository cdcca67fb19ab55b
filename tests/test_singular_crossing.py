"""A run through a singular configuration of the whole set of loop equations (simulation/crossing.py): the free Delta
3R[2US] used to stop at t = 1.29678 s, where its 18 loop equations fall to rank 17."""

import re

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.augmented import augmented_functions
from mbstudio.dynamics.closed_loop import closed_loop_forward_dynamics
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.inverse_dynamics import inverse_dynamics
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.kinematics.mechanism import Mechanism
from mbstudio.model import dumps
from mbstudio.simulation import crossing
from mbstudio.simulation.run import CLOSURE_LIMIT, simulate

EPS = np.finfo(float).eps


def _svd_accelerations(mech, t, q, qd, omega, floor):
    """The crossing's q̈ by another route: numpy, on the singular values of B = Φ_q L⁻ᵀ (M = L Lᵀ), each σ replaced
    by σ / (σ² + floor²) in the inverse: q̈ = L⁻ᵀ (w − V Σ² (Σ² + ε²)⁻¹ Vᵀ w − V Σ (Σ² + ε²)⁻¹ Uᵀ target)."""
    n = mech.n
    M = mass_matrix(mech, q[None])[0]
    motion = mech.motion(q[None], qd[None])
    jac = mech.constraints.jacobian(motion)[0]
    phi, gamma = mech.constraints.residual(motion)[0], mech.constraints.acceleration_bias(motion)[0]
    free = AppliedForces(mech).generalized(np.array([t]), q[None], qd[None])[0]
    free = free - inverse_dynamics(mech, q[None], qd[None], np.zeros((1, n)))[0]
    target = gamma + 2 * omega * (jac @ qd) + omega**2 * phi
    L = np.linalg.cholesky(M)
    w = np.linalg.solve(L, free)
    U, sigma, Vt = np.linalg.svd(np.linalg.solve(L, jac.T).T, full_matrices=False)
    squares = sigma**2 + floor**2
    damped = np.divide(sigma, squares, out=np.zeros_like(sigma), where=squares > 0)
    return np.linalg.solve(L.T, w - Vt.T @ (sigma * damped * (Vt @ w) + damped * (U.T @ target)))


def _weighted_rank_value(mech, q):
    L = np.linalg.cholesky(mass_matrix(mech, q[None])[0])
    weighted = np.linalg.solve(L, mech.constraint_jacobian(q[None])[0].T).T
    return np.linalg.svd(weighted, compute_uv=False)[mech.partition.rank - 1], weighted


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "delta_3rus"])
def test_the_crossings_accelerations_are_the_closed_loop_ones_away_from_a_singularity(name):
    """In all the coordinates with multipliers (undamped, by singular values), q̈ is the independent-coordinate
    route's R q̈_ind + a at a regular state, to the rounding of both routes times the mass-weighted Jacobian's
    conditioning. Damped at DAMPING of the state's own rank-th singular value, each direction of the constraint
    forces loses at most DAMPING² of itself: in the kinetic-energy norm |Lᵀ x| (M = L Lᵀ), the change is at most
    DAMPING² of the constraints' part of q̈, its difference from the tree's unconstrained q̈. The compiled rate
    (dynamics/augmented.py: QR of the stacked [Bᵀ; ε I], never B Bᵀ) is the singular values' damped q̈, off the
    loops too (Baumgarte's terms at work), to the rounding of the damped problem's conditioning."""
    model = samples.load(name)
    mech = Mechanism(model)
    q = mech.assemble(None)[0]
    qd = mech.velocities(q[None], np.ones((1, len(mech.independent))))[0]
    R = mech.r_matrix(q[None])
    reduced = mech.accelerations(q[None], qd[None], closed_loop_forward_dynamics(mech, q[None], qd[None], R=R), R)[0]
    sigma, weighted = _weighted_rank_value(mech, q)
    exact = _svd_accelerations(mech, 0.0, q, qd, 0.0, 0.0)
    L = np.linalg.cholesky(mass_matrix(mech, q[None])[0])
    conditioning = np.linalg.svd(weighted, compute_uv=False)[0] / sigma
    rounding = 1e3 * EPS * conditioning**2 * np.abs(reduced).max()
    assert np.abs(exact - reduced).max() <= rounding
    Q = AppliedForces(mech).generalized(np.zeros(1), q[None], qd[None])
    tree = forward_dynamics(mech, q[None], qd[None], Q)[0]
    floor = crossing.DAMPING * sigma
    damped = _svd_accelerations(mech, 0.0, q, qd, 0.0, floor)
    change, constrained = (np.linalg.norm(L.T @ x) for x in (damped - exact, exact - tree))
    assert 0 < change <= crossing.DAMPING**2 * constrained + np.linalg.norm(L.T) * rounding
    functions = augmented_functions(dumps(model))
    rate, redundant = functions.calls["augmented_rate"], bool(mech.partition.redundant_rows)
    assert functions.functions["augmented_rate"].nnz_in(2) == 2 + redundant  # γ only where the rows are redundant
    off = q + 1e-3 * mech.length_scale * np.sin(np.arange(mech.n))  # off the loops: the stabilisation acts
    for at, omega in ((q, 0.0), (off, 50.0)):
        reference = _svd_accelerations(mech, 0.3, at, qd, omega, floor)
        compiled = rate(0.3, np.concatenate([at, qd]), np.array([omega, floor, *[0.0] * redundant]))
        assert np.array_equal(compiled[: mech.n], qd)
        damped_conditioning = np.linalg.svd(weighted, compute_uv=False)[0] / floor
        assert np.abs(compiled[mech.n :] - reference).max() <= 10 * EPS * damped_conditioning * np.abs(reference).max()


def test_a_crossing_of_redundant_loop_equations_returns_the_state_onto_the_loops():
    """The four-bar's six loop equations have rank three: its crossing's rate carries the return at γ (dynamics/
    augmented.py), q̇ = v − γ P Φ and v̇ = q̈ − γ P Φ_q v with P = L⁻ᵀ Bᵀ (B Bᵀ + ε² I)⁻¹ (B = Φ_q L⁻ᵀ, M = L Lᵀ),
    here by numpy's singular values, off the loops: the compiled rate's to the rounding of the damped conditioning."""
    model = samples.load("four_bar")
    mech = Mechanism(model)
    q = mech.assemble(None)[0]
    qd = mech.velocities(q[None], np.ones((1, len(mech.independent))))[0]
    sigma, weighted = _weighted_rank_value(mech, q)
    floor, gamma = crossing.DAMPING * sigma, crossing.RETURN
    off = q + 1e-3 * mech.length_scale * np.sin(np.arange(mech.n))
    rate = augmented_functions(dumps(model)).calls["augmented_rate"]
    z = np.concatenate([off, qd])
    plain, returned = (rate(0.3, z, np.array([50.0, floor, g])) for g in (0.0, gamma))
    L = np.linalg.cholesky(mass_matrix(mech, off[None])[0])
    motion = mech.motion(off[None], qd[None])
    jac, phi = mech.constraints.jacobian(motion)[0], mech.constraints.residual(motion)[0]
    U, s, Vt = np.linalg.svd(np.linalg.solve(L, jac.T).T, full_matrices=False)

    def pull(x):  # P x
        return np.linalg.solve(L.T, Vt.T @ (s / (s**2 + floor**2) * (U.T @ x)))

    expected = np.concatenate([qd - gamma * pull(phi), plain[mech.n :] - gamma * pull(jac @ qd)])
    scale = np.abs(expected).max() * np.linalg.svd(weighted, compute_uv=False)[0] / floor
    assert np.abs(gamma * pull(phi)).max() > 1e3 * EPS * scale  # the return is at work off the loops
    assert np.abs(returned - expected).max() <= 10 * EPS * scale


@pytest.mark.slow  # seconds of CPU where CVODES stalls before the crossings; a cold cache compiles two engines
def test_the_free_3rus_delta_runs_its_2_s_through_its_singular_configuration():
    """It runs the 2 s, says where it crossed a singular configuration and how, keeps its loops closed, and keeps
    its energy (gravity only: a conservative motion) through the crossings within ten times a regular run's budget
    (1e-7 of its scale over 2 s at the default tolerances, run.py): the independent check of what the crossings
    did. (The command line moves it the same, bit for bit: test_simulation_determinism.py.)"""
    model = samples.load("delta_3rus")
    mech = Mechanism(model)
    run = simulate(model, 2.0)
    assert run.t[-1] == 2.0
    crossings = run.provenance.crossings
    assert crossings and all(note in run.notes for note in crossings)
    spans = [[float(x) for x in note.split("between t = ")[1].split(" s:")[0].split(" s and ")] for note in crossings]
    assert any(start < 1.2968 < end for start, end in spans)  # where the run used to stop
    fell = [float(note.split("singular value fell to ")[1].split(" of")[0]) for note in crossings]
    assert all(value <= crossing.ENTER for value in fell)  # each began where it fell to ENTER (two digits)
    assert run.residual.max() <= CLOSURE_LIMIT * mech.length_scale
    assert run.energy_drift <= 1e-6


@pytest.mark.parametrize("t_end", [pytest.param(0.4, marks=pytest.mark.slow), 0.5])
def test_a_short_run_of_the_free_3rus_delta_crosses_as_the_2_s_run(t_end):
    """Baumgarte's ω is one per check interval, at most 100/s: runs of 0.35-0.5 s had ω = 400-571/s and stopped at
    their first crossing (t = 0.275 s, "CVODES gave up"). Now they run to their end through it, with the loops
    closed and the energy kept as the 2-s run's."""
    model = samples.load("delta_3rus")
    run = simulate(model, t_end, error_estimate=False)
    assert run.t[-1] == t_end and run.provenance.crossings
    assert run.residual.max() <= CLOSURE_LIMIT * Mechanism(model).length_scale
    assert run.energy_drift <= 1e-6


class _Solver:
    def stats(self) -> dict:
        return {"nfevals": 5}


def _parts_root(monkeypatch, outcome, rank: bool = False) -> tuple:
    """integrators._Parts.root from t = 0.25 to the fall at t = 0.75 (state [0.75]) over a run of 1 s, the states
    at CVODES' returns y = [t] (None: it gives up), the margin 1 - 2 y (the rank's alone with `rank`): the place,
    the state and the evaluations, and the integrations made."""
    from types import SimpleNamespace

    from mbstudio.simulation import integrators

    made = []

    def solved(chunk, limits, x0, p):
        made.append(chunk.args[1])  # the returns asked for
        if outcome is None:
            raise integrators._GaveUp(7)
        return _Solver(), np.array([[p[0] + p[1] * mark] for mark in chunk.args[1]]), 3

    def margins(states):
        return 1.0 - 2.0 * states[:, 0]

    monkeypatch.setattr(integrators, "_solved", solved)
    times = np.linspace(0.0, 1.0, 11)
    watch = SimpleNamespace(margins=margins if not rank else None, rank_margins=margins if rank else None)
    parts = integrators._Parts(None, times, None, ("adams", 1e-10, 1e-12), lambda t: None, watch, SimpleNamespace())
    parts.limit = SimpleNamespace(steps=lambda: 100)
    return (*parts.root((0.25, np.array([0.25])), (0.75, np.array([0.75])), rank=rank), made)


@pytest.mark.parametrize("rank", [False, True])
def test_a_falls_place_is_the_first_fine_point_below_from_one_integration(monkeypatch, rank):
    """The margin 1 - 2 t is zero at t = 0.5, a point of the fine grid (FINE points a check interval of 1 / CHECKS
    s): the fall is placed at the next point, where the margin is below zero, with the state CVODES returned
    there; one integration from the point before to the fall's, returning at every point of the grid between."""
    from mbstudio.simulation.integrators import CHECKS, FINE

    t, y, calls, made = _parts_root(monkeypatch, True, rank)
    spacing = 1.0 / (CHECKS * FINE)
    assert len(made) == 1 and len(made[0]) == round(0.5 / spacing)  # the grid's points inside, then the end
    assert t == pytest.approx(0.5 + spacing, abs=1e-15) and y[0] == pytest.approx(t, abs=1e-15)
    assert calls == 3 + 5


def test_a_crossings_entry_is_the_falls_point_where_cvodes_gives_up(monkeypatch):
    """IRSBot-2 at rtol = atol = 1e-11 with 2001 outputs used to stop with an internal error: CVODES gave up inside
    the entry's search, the coordinates turning singular short of the fall. The entry is then the fall's own point
    and state, the evaluations of the give-up counted."""
    t, y, calls, _ = _parts_root(monkeypatch, None)
    assert (t, float(y[0]), calls) == (0.75, 0.75, 7)


@pytest.mark.slow  # IRSBot-2: about 2 s of CPU with its engines cached, a cold cache compiles several
def test_irsbot2_runs_its_2_s_with_dense_outputs_at_tight_tolerances():
    """The run that stopped with CVODES giving up inside the entry's search (above) crosses its singular
    configurations and writes every output, closed on the loops. It crosses where its own motion's rank value falls
    below ENTER: every output where it is below lies inside a crossing, and each crossing reaches below NEAR. (How
    many times depends on the motion, which does not converge at these tolerances (docs/accuracy.md): its third dip
    reached 0.0166 and 0.0210 of the start's value at two runs whose pieces differed, either side of ENTER = 0.02.)"""
    model = samples.load("irsbot2")
    times = np.linspace(0.0, 2.0, 2001)
    run = simulate(model, 2.0, rtol=1e-11, atol=1e-11, t_eval=times, error_estimate=False)
    assert np.array_equal(run.t, times) and np.isfinite(np.asarray(run.q)).all()
    mech = Mechanism(model)
    jacobians = np.asarray(mech.constraint_jacobian(np.asarray(run.q)), float)
    values = np.linalg.svd(jacobians, compute_uv=False)[:, mech.partition.rank - 1]  # the whole Φ_q's
    ratio = values / values[0]
    spans = [
        [float(t) for t in re.findall(r"between t = (\S+) s and (\S+) s", note)[0]] for note in run.provenance.crossings
    ]
    inside = np.zeros(len(times), bool)
    for start, end in spans:
        within = (times >= start - 1e-6) & (times <= end + 1e-6)  # the notes' times are rounded to 6 digits
        inside |= within
        assert ratio[within].min() < crossing.NEAR
    assert len(spans) >= 2 and inside[ratio < crossing.ENTER].all()
    length = mech.length_scale
    assert np.abs(run.residual).max() <= 1e3 * EPS * length
