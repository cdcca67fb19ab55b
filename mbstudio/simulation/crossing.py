"""Crossing a singular configuration, where the mechanism's whole set of loop equations loses rank.

There no choice of independent coordinates can carry the motion (charts.py): every square block of Φ_q is
singular, the Newton steps that close the loops and the velocity map R = ∂q/∂q_ind blow up, and the integrator
stalls. The configuration itself is not where the motion ends: a motion on one branch of the configuration space
passes transversally through the point where another branch meets it (the loop equations' rank falls by one
there and recovers after), its velocity and inertia carry it across.

So the run crosses it in all the tree coordinates, where nothing has to be inverted but the mass matrix: from the
first fixed check point (or the stall) where the rank-th singular value of the whole Φ_q is below ENTER of its value at
the start, the motion is integrated in z = (q, q̇) as an index-one DAE with Baumgarte's stabilisation (Baumgarte
1972), its multipliers damped where the constraints turn redundant (the singularity-robust inverse of Nakamura &
Hanafusa 1986: a regularisation of the constraint that turns redundant):

    M q̈ = Q − C − Φ_qᵀ λ,   Φ_q q̈ = −(γ + 2 ω Φ̇ + ω² Φ)   solved on the singular values of Φ_q L⁻ᵀ (M = L Lᵀ),
    each σ replaced by σ / (σ² + ε²) in the inverse

so that the right-hand side is a smooth function of the state with no decision inside it: the constraints are held
exactly where σ ≫ ε, and the one whose multiplier is undetermined at the point itself is released over the few
microseconds where its σ is below ε. Once the singular value has risen past LEAVE of its start value (hysteresis:
LEAVE > ENTER) at a check point, q is projected onto Φ = 0 by least-squares Newton steps (the nearest closed
configuration: the branch the motion took) and q̇ onto Φ_q q̇ = 0 in the metric of M (the least change of kinetic
energy), and the run goes on in independent coordinates from there. What the crossing did, with the size of the
projection, is reported (`Crossing.note`): the run's energy balance checks it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics.engine import Engine
from ..dynamics.forces import AppliedForces
from ..dynamics.inverse_dynamics import inverse_dynamics
from ..dynamics.mass_matrix import mass_matrix
from ..kinematics.mechanism import Mechanism
from .integrators import CHECKS, IntegrationError

ENTER = 0.02  # the rank-th singular value of Φ_q as a part of its value at the start: the crossing begins below it
LEAVE = 0.04  # ... and ends above it, at a check point past the singular configuration
DAMPING = 1e-3  # the multipliers' damping: below this part of the start's rank-th singular value of Φ_q L⁻ᵀ
STABILITY = 1.0  # Baumgarte's ω, in units of 1 / (the run's check interval): Φ decays within a few intervals
PROJECTIONS = 8  # least-squares Newton steps at most, back onto the loops after the crossing


@dataclass
class Crossing:
    """A crossing from `start` to `end`: the tree coordinates (q, q̇, q̈) at the output times in (start, end], the
    state to go on from at `end` (q closed, q̇ on the velocity constraints), the evaluations made and a note."""

    start: float
    end: float
    states: tuple[np.ndarray, np.ndarray, np.ndarray]
    q: np.ndarray
    qd: np.ndarray
    calls: int
    note: str


def rank_value(mech: Mechanism, q: np.ndarray) -> float:
    """The rank-th singular value of the whole constraint Jacobian at q (n,): zero where the loop equations lose
    the rank the mechanism has (decided at its start, kinematics/coordinates.py)."""
    rank = mech.partition.rank
    if not rank:
        return np.inf
    return float(np.linalg.svd(np.asarray(mech.constraint_jacobian(q[None])[0], float), compute_uv=False)[rank - 1])


def crossing_due(eng: Engine, y: np.ndarray, y_start: np.ndarray) -> bool:
    """Whether the state y (the engine's layout) is near a singular configuration of the whole set of loop
    equations: its rank-th singular value below ENTER of the start's. A tree, or a model whose orientations are
    carried as quaternions (ball joints: their rates are not the coordinates' derivatives), is never crossed."""
    if not eng.mech.partition.rows or eng.states.quaternions:
        return False
    q, q0 = (eng.closed(np.asarray(x)[None])[0][0] for x in (y, y_start))
    return rank_value(eng.mech, q) < ENTER * rank_value(eng.mech, q0)


class _Augmented:
    """The right-hand side ż = (q̇, q̈) of z = (q, q̇) in all tree coordinates, the multipliers damped below
    `floor`, a singular value of the mass-weighted Jacobian (Nakamura & Hanafusa 1986)."""

    def __init__(self, mech: Mechanism, omega: float, floor: float, clock) -> None:
        self.mech, self.forces, self.omega, self.floor, self.clock = mech, AppliedForces(mech), omega, floor, clock
        self.calls = 0

    def accelerations(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """M q̈ = Q − C − Φ_qᵀ λ with Φ̈ + 2ωΦ̇ + ω²Φ = 0 solved by the singular values of B = Φ_q L⁻ᵀ (M = L Lᵀ):
        q̈ = L⁻ᵀ (w − V Σ² (Σ² + ε)⁻¹ Vᵀ w − V Σ (Σ² + ε)⁻¹ Uᵀ target), w = L⁻¹ (Q − C), ε = floor²: each
        direction on its own singular value, so that the small ones are not swamped by rounding of the large."""
        mech, n = self.mech, self.mech.n
        q, qd = q[None, :], qd[None, :]
        with mech.backend.context():
            M = np.asarray(mass_matrix(mech, q)[0], float)
            motion = mech.motion(q, qd)
            jac = np.asarray(mech.constraints.jacobian(motion)[0], float)
            phi = np.asarray(mech.constraints.residual(motion)[0], float)
            gamma = np.asarray(mech.constraints.acceleration_bias(motion)[0], float)
        free = self.forces.generalized(np.array([t]), q, qd)[0] - inverse_dynamics(mech, q, qd, np.zeros((1, n)))[0]
        target = gamma + 2 * self.omega * (jac @ qd[0]) + self.omega**2 * phi  # Φ_q q̈ = −target, stabilised
        factor = np.linalg.cholesky(M)
        w = np.linalg.solve(factor, free)
        U, sigma, Vt = np.linalg.svd(np.linalg.solve(factor, jac.T).T, full_matrices=False)
        squares = sigma**2 + self.floor**2  # zero only on the rows a planar loop repeats, with no damping asked
        damped = np.divide(sigma, squares, out=np.zeros_like(sigma), where=squares > 0)
        w = w - Vt.T @ (sigma * damped * (Vt @ w) + damped * (U.T @ target))
        return np.linalg.solve(factor.T, w)

    def __call__(self, t: float, z: np.ndarray) -> np.ndarray:
        self.calls += 1
        if self.clock is not None:
            self.clock(t)
        n = self.mech.n
        return np.concatenate([z[n:], self.accelerations(t, z[:n], z[n:])])


def weighted_rank_value(mech: Mechanism, q: np.ndarray) -> float:
    """The rank-th singular value of Φ_q L⁻ᵀ (M = L Lᵀ) at q (n,): the scale the multipliers' damping is set on."""
    M = np.asarray(mass_matrix(mech, q[None])[0], float)
    jac = np.asarray(mech.constraint_jacobian(q[None])[0], float)
    weighted = np.linalg.solve(np.linalg.cholesky(M), jac.T).T
    return float(np.linalg.svd(weighted, compute_uv=False)[mech.partition.rank - 1])


def cross(eng: Engine, t0: float, y0: np.ndarray, times: np.ndarray, tolerances, clock, y_start) -> Crossing:
    """The crossing from the state y0 (engine layout) at t0, with the run's output times `times` (from t0 on) and
    tolerances (rtol, atol): integrated by DOP853 between the run's fixed check points until the rank-th singular
    value of Φ_q exceeds LEAVE of its start value (y_start's), or the run ends."""
    from scipy.integrate import solve_ivp  # 0.3 s to import: for the runs that use it

    mech, (rtol, atol), n = eng.mech, tolerances, eng.mech.n
    t_end = times[-1]
    q, _ = eng.closed(np.asarray(y0)[None])
    qd = eng.velocities(q[0], eng.unpack(np.asarray(y0)[None])[1][0])
    q_start = eng.closed(np.asarray(y_start)[None])[0][0]
    rhs = _Augmented(mech, STABILITY * CHECKS / t_end, DAMPING * weighted_rank_value(mech, q_start), clock)
    z, start, t = np.concatenate([q[0], qd]), rank_value(mech, q_start), t0
    lowest = rank_value(mech, q[0])
    outputs = []
    checks = t_end * np.arange(1, CHECKS + 1) / CHECKS
    for end in checks[checks > t0 + 1e-12 * t_end]:
        inside = times[(times > t) & (times <= end)]
        solution = solve_ivp(rhs, (t, end), z, "DOP853", np.union1d(inside, [end]), rtol=rtol, atol=atol)
        if not solution.success:
            raise IntegrationError(t, f"the crossing of a singular configuration failed ({solution.message})")
        outputs += [(s, solution.y[:, k]) for k, s in enumerate(solution.t) if s in inside]
        z, t = solution.y[:, -1], end
        value = rank_value(mech, z[:n])
        lowest = min(lowest, value)
        if value > LEAVE * start:
            break
    q_end, moved = _closed(mech, z[:n])
    qd_end = _on_constraints(mech, q_end, z[n:])
    states = _outputs(rhs, outputs, n)
    note = (
        f"the motion crossed a singular configuration between t = {t0:.6g} s and {t:.6g} s: the loop equations lost "
        f"rank there (their {mech.partition.rank}th singular value fell to {lowest / start:.2g} of its start value); "
        "it was integrated in all the coordinates, the multipliers damped where the constraints turned redundant "
        f"(Nakamura & Hanafusa 1986), and projected back onto the loops at {t:.6g} s (coordinates moved by "
        f"{moved:.2g} m|rad, rates by {np.abs(qd_end - z[n:]).max():.2g} /s)"
    )
    return Crossing(t0, t, states, q_end, qd_end, rhs.calls, note)


def _outputs(rhs: _Augmented, outputs: list, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, q̇, q̈) at the outputs inside the crossing, q and q̇ projected onto the constraints as every other sample
    is closed (the integrated state, held by the stabilisation alone, goes on unchanged)."""
    if not outputs:
        return np.empty((0, n)), np.empty((0, n)), np.empty((0, n))
    q = np.array([_closed(rhs.mech, z[:n])[0] for _, z in outputs])
    qd = np.array([_on_constraints(rhs.mech, x, z[n:]) for x, (_, z) in zip(q, outputs, strict=True)])
    qdd = np.array([rhs.accelerations(s, z[:n], z[n:]) for s, z in outputs])
    return q, qd, qdd


def _closed(mech: Mechanism, q: np.ndarray) -> tuple[np.ndarray, float]:
    """q moved onto Φ = 0 by least-squares Newton steps (the nearest closed configuration), and how far."""
    start, tol = q.copy(), 1e-13 * mech.length_scale
    for _ in range(PROJECTIONS):
        phi = np.asarray(mech.residual(q[None])[0], float)
        if np.abs(phi).max(initial=0.0) <= tol:
            break
        jac = np.asarray(mech.constraint_jacobian(q[None])[0], float)
        q = q - np.linalg.lstsq(jac, phi, rcond=None)[0]
    return q, float(np.abs(q - start).max())


def _on_constraints(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """q̇ projected onto Φ_q q̇ = 0 in the metric of M: the nearest admissible rates in kinetic energy."""
    M = np.asarray(mass_matrix(mech, q[None])[0], float)
    jac = np.asarray(mech.constraint_jacobian(q[None])[0], float)[list(mech.partition.rows)]
    Minv_jt = np.linalg.solve(M, jac.T)
    return qd - Minv_jt @ np.linalg.solve(jac @ Minv_jt, jac @ qd)
