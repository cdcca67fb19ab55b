"""Exciting trajectories: Fourier coefficients chosen to make W_b well conditioned (Iriarte et al. 2017, refs. 15-18).

Each independent coordinate follows q_j(t) = q_j0 + Σ_l A_jl sin(ω_jl t + ψ_jl) about its initial value q_j0 (a
`FourierPath`, or a document `Trajectory`) with the frequencies ω_jl fixed; the amplitudes A_jl and phases ψ_jl
are chosen to minimise log10 cond₂(W_b), W_b the observation matrix over one period 2π/ω_f of the base
frequency (sampled as the base-parameter pipeline samples a trajectory: both ends included), restricted to the
base-parameter columns found on the starting trajectory (so the parameter set does not change under the
optimiser).

On a tree the optimiser (L-BFGS-B by default) gets the exact gradient of log10 cond₂(W_b) from one CasADi
function of the coefficients and its adjoint (`TreeCondition`): a step costs about two evaluations of W_b, where
finite differences over the numpy observation matrix take one per coefficient (36 for a 6-dof arm with three
harmonics). A
closed loop's samples need the assembly, so its gradient is left to the optimiser's finite differences.

Coordinate limits (the document's min/max, or `limits`) hold by construction: |q_j − q_j0| ≤ Σ_l A_jl, so each
amplitude is bounded by the smaller distance from q_j0 to a limit divided by the number of terms. Velocity and
acceleration limits hold the same way, |q̇_j| ≤ Σ_l A_jl ω_jl and |q̈_j| ≤ Σ_l A_jl ω_jl², each term taking its
share: A_jl ≤ v_max / (L ω_jl) and A_jl ≤ a_max / (L ω_jl²). This is conservative (the terms rarely peak
together) but needs no constraint in the optimiser. A sample where a
closed loop cannot assemble gives the objective a fixed penalty above any attainable value.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import casadi
import numpy as np
import scipy.optimize

from ..dynamics.kernels import kernel_function
from ..kinematics.mechanism import Mechanism
from ..model.document import Harmonic, Trajectory
from ..model.errors import AssemblyError
from .estimation import condition_number
from .gautier import gautier_dp
from .observation import FourierPath, observation_matrix

FAILED_ASSEMBLY = 40.0  # objective (log10 cond) where the mechanism cannot close: worse than any real W_b

# scipy methods that take the exact gradient (given for trees; a closed loop's W_b needs the assembly)
GRADIENT_METHODS = {"L-BFGS-B", "TNC"}

Limits = Mapping[str, tuple[float | None, float | None]]
Rates = float | Sequence[float]  # one limit for every independent coordinate, or one each


@dataclass
class Excitation:
    terms: list[list[tuple[float, float, float]]]  # FourierPath terms (amplitude, omega, phase) per coordinate
    coordinates: list[str]  # the independent coordinates the terms drive
    duration: float  # one period of the base frequency
    samples: int  # over [0, duration], both ends included
    kept: list[str]  # the base-parameter columns of W_b
    condition_before: float  # cond₂(W_b) of the starting trajectory
    condition_after: float
    evaluations: int
    seconds: float  # wall-clock
    cpu_seconds: float  # this process's CPU time, its BLAS threads' included
    message: str  # the optimiser's

    @property
    def times(self) -> np.ndarray:
        return np.linspace(0.0, self.duration, self.samples)

    def path(self, mech: Mechanism) -> FourierPath:
        return FourierPath(mech, self.terms)

    def trajectory(self, name: str = "optimised excitation") -> Trajectory:
        """The result as a document trajectory, ready for `model.trajectories`."""
        return Trajectory(
            name,
            {c: [Harmonic(*t) for t in terms] for c, terms in zip(self.coordinates, self.terms, strict=True)},
            self.duration,
            self.samples,
            f"cond(W_b) {self.condition_before:.4g} -> {self.condition_after:.4g}",
        )


def default_start(n_coordinates: int, base_frequency: float, harmonics: int, amplitude: float) -> list[list[tuple]]:
    """Every coordinate: harmonics 1..L of ω_f, all of amplitude `amplitude` and phase 0 (a plain, not
    specially exciting, trajectory to start from)."""
    return [[(amplitude, (k + 1) * base_frequency, 0.0) for k in range(harmonics)] for _ in range(n_coordinates)]


def coordinate_limits(mech: Mechanism, limits: Limits | None = None) -> list[tuple[float, float]]:
    """(min, max) of each independent coordinate: `limits` first, then the document, else unbounded."""
    document = {c.name: (c.min, c.max) for j in mech.model.joints for c in j.coordinates}
    chosen = {**document, **(limits or {})}
    return [
        (-np.inf if chosen[n][0] is None else chosen[n][0], np.inf if chosen[n][1] is None else chosen[n][1])
        for n in mech.independent
    ]


def amplitude_bounds(
    mech: Mechanism, terms_per_coordinate: Sequence[int], max_amplitude: float, limits: Limits | None = None
) -> list[float]:
    """Largest amplitude of each term of each coordinate (flattened) that keeps q_j within its limits."""
    initial = np.asarray(mech.tree.initial_coordinates(), dtype=float)[list(mech.partition.independent)]
    bounds = []
    for name, q0, (lo, hi), count in zip(
        mech.independent, initial, coordinate_limits(mech, limits), terms_per_coordinate, strict=True
    ):
        room = min(q0 - lo, hi - q0)
        if room <= 0:
            raise ValueError(f"coordinate '{name}' starts at {q0}, not inside its limits [{lo}, {hi}]")
        bounds += [min(max_amplitude, room / count)] * count
    return bounds


def rate_bounds(
    omegas: Sequence[Sequence[float]], max_velocity: Rates | None = None, max_acceleration: Rates | None = None
) -> list[float]:
    """Largest amplitude of each term (flattened) that keeps |q̇_j| ≤ v_max,j and |q̈_j| ≤ a_max,j; a limit is one
    number for every coordinate or one per coordinate, None for none."""
    bounds = []
    for j, terms in enumerate(omegas):
        v, a = (_per_coordinate(x, j, len(omegas)) for x in (max_velocity, max_acceleration))
        bounds += [min(v / (len(terms) * abs(w)), a / (len(terms) * w * w)) if w else np.inf for w in terms]
    return bounds


def _per_coordinate(limit: Rates | None, j: int, count: int) -> float:
    if limit is None:
        return np.inf
    values = np.broadcast_to(np.asarray(limit, dtype=float), (count,))
    if not (values > 0).all():
        raise ValueError(f"velocity and acceleration limits must be positive; got {limit}")
    return float(values[j])


def _decision_vector(mech: Mechanism, start: Sequence[Sequence[tuple]], bound: list[float]) -> np.ndarray:
    """FourierPath terms -> (amplitudes, phases); a negative amplitude becomes a positive one half a turn on."""
    flat = [(float(t[0]), float((*t, 0.0)[2])) for terms in start for t in terms]
    where = [(name, k) for name, terms in zip(mech.independent, start, strict=True) for k in range(len(terms))]
    for (amp, _), b, (name, k) in zip(flat, bound, where, strict=True):
        if abs(amp) > b:
            raise ValueError(
                f"the starting amplitude {amp} of term {k} of '{name}' exceeds its bound {b:.6g} "
                "(max_amplitude, or the coordinate's limits shared among its terms)"
            )
    return np.array([abs(a) for a, _ in flat] + [p + (np.pi if a < 0 else 0.0) for a, p in flat])


def _split(x: np.ndarray, omegas: list[list[float]]) -> list[list[tuple[float, float, float]]]:
    """Decision vector (amplitudes then phases, flattened per coordinate) -> FourierPath terms."""
    count = sum(len(w) for w in omegas)
    amps, phases, out, k = x[:count], x[count:], [], 0
    for w in omegas:
        out.append([(float(amps[k + i]), float(w[i]), float(phases[k + i])) for i in range(len(w))])
        k += len(w)
    return out


def log_condition(mech: Mechanism, terms, times: np.ndarray, kept: list[int]) -> float:
    """log10 cond₂(W_b) along the trajectory, capped at FAILED_ASSEMBLY, its value where a loop cannot close."""
    try:
        W = observation_matrix(mech, times, FourierPath(mech, terms))
    except AssemblyError:
        return FAILED_ASSEMBLY
    return min(float(np.log10(condition_number(W[:, kept]))), FAILED_ASSEMBLY)


class TreeCondition:
    """log10 cond₂(W_b) of a tree's trajectory and its exact gradient in the decision vector (amplitudes, phases).

    W_b and its Gram matrix G = W_bᵀ W_b are one CasADi function of the decision vector: the Fourier series at
    the samples, the traced regressor (`dynamics.kernels`) mapped over them, the base columns. A simple
    eigenvalue of G moves as dλ = vᵀ dG v (Golub & Van Loan 2013, section 8.1), so the gradient of
    log10 cond₂(W_b) = ½ log10(λ_max/λ_min) is one reverse (adjoint) pass seeded with
    (v_max v_maxᵀ/λ_max − v_min v_minᵀ/λ_min)/(2 ln 10): about two evaluations of W_b, where finite differences
    take one per variable. The eigenvalues of G (a small matrix) come without a LAPACK call on the tall W_b;
    they carry a relative error of about ε cond², so above cond 1e5 the singular values come from W_b itself."""

    def __init__(self, mech: Mechanism, omegas: list[list[float]], times: np.ndarray, kept: list[int]) -> None:
        if mech.partition.dependent:
            raise ValueError("TreeCondition needs a tree: a closed loop's samples must be assembled")
        count, samples, columns = sum(len(w) for w in omegas), len(times), 10 * len(mech.model.bodies)
        self.shape = (samples, mech.n, len(kept))
        x = casadi.MX.sym("x", 2 * count)
        q, qd, qdd = _fourier_series(mech, omegas, np.asarray(times, dtype=float), x)
        mapped = kernel_function(mech.model, "regressor").map(samples)(q, qd, qdd)  # n × (samples · columns)
        W = mapped[:, (np.arange(samples)[:, None] * columns + np.asarray(kept)[None, :]).ravel().tolist()]
        blocks = casadi.horzsplit(W, list(range(0, samples * len(kept) + 1, len(kept))))
        G = sum(casadi.mtimes(block.T, block) for block in blocks)  # W_bᵀ W_b, summed over the samples
        seed = casadi.MX.sym("seed", G.shape)
        self._matrices = casadi.Function("W_b", [x], [W, G])
        self._adjoint = casadi.Function("G_adjoint", [x, seed], [casadi.gradient(casadi.dot(G, seed), x)])

    def matrix(self, x: np.ndarray) -> np.ndarray:
        """W_b (samples · n, base columns), rows sample by sample as `observation_matrix`."""
        samples, n, kept = self.shape
        return np.asarray(self._matrices(x)[0]).reshape(n, samples, kept).transpose(1, 0, 2).reshape(-1, kept)

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(log10 cond₂(W_b), its gradient); FAILED_ASSEMBLY and no slope where W_b loses rank."""
        lam, v = np.linalg.eigh(np.asarray(self._matrices(x)[1]))
        if lam[0] < 1e-10 * lam[-1]:
            _, s, vt = np.linalg.svd(self.matrix(x), full_matrices=False)
            lam, v = s[::-1] ** 2, vt[::-1].T
        if not lam[0] > lam[-1] * 10 ** (-2 * FAILED_ASSEMBLY):
            return FAILED_ASSEMBLY, np.zeros_like(x)
        seed = (np.outer(v[:, -1], v[:, -1]) / lam[-1] - np.outer(v[:, 0], v[:, 0]) / lam[0]) / (2 * np.log(10.0))
        return float(0.5 * np.log10(lam[-1] / lam[0])), np.asarray(self._adjoint(x, seed)).ravel()


def _fourier_series(mech: Mechanism, omegas: list[list[float]], times: np.ndarray, x: casadi.MX) -> list[casadi.MX]:
    """Positions, velocities, accelerations (n × samples) of the FourierPath whose amplitudes then phases are x."""
    initial = np.asarray(mech.tree.initial_coordinates(), dtype=float)
    t = casadi.DM(times[None, :])
    rows = [[casadi.MX(casadi.DM.zeros(1, len(times)))] * mech.n for _ in range(3)]
    k, count = 0, sum(len(w) for w in omegas)
    for c, terms in zip(mech.partition.independent, omegas, strict=True):
        rows[0][c] = rows[0][c] + initial[c]
        for omega in terms:
            angle = omega * t + x[count + k]
            rows[0][c] = rows[0][c] + x[k] * casadi.sin(angle)
            rows[1][c] = rows[1][c] + x[k] * omega * casadi.cos(angle)
            rows[2][c] = rows[2][c] - x[k] * omega**2 * casadi.sin(angle)
            k += 1
    return [casadi.vertcat(*r) for r in rows]


def optimise_excitation(
    mech: Mechanism,
    base_frequency: float,
    harmonics: int = 3,
    samples: int = 100,
    max_amplitude: float = 0.5,
    start: Sequence[Sequence[tuple]] | None = None,
    limits: Limits | None = None,
    method: str = "L-BFGS-B",
    max_evaluations: int = 2000,
    max_velocity: Rates | None = None,
    max_acceleration: Rates | None = None,
) -> Excitation:
    """Amplitudes and phases of the independent coordinates' Fourier terms minimising cond₂(W_b).

    `start`: FourierPath terms (amplitude, omega[, phase]) per independent coordinate to start from, which also
    fix the frequencies; default `default_start` with `harmonics` multiples of `base_frequency` (rad/s) at half
    the allowed amplitude. `max_amplitude` bounds every term (in the coordinate's unit); `limits` (name ->
    (min, max)) overrides the document's coordinate limits. `method`: a scipy.optimize.minimize method that
    takes bounds ("L-BFGS-B", "TNC", "Nelder-Mead", "Powell"); `max_evaluations` caps the objective evaluations.
    `max_velocity`, `max_acceleration`: limits of |q̇_j| and |q̈_j| (one for all, or one per coordinate)."""
    clock, cpu = time.perf_counter(), time.process_time()
    if start is None:
        omegas = [[(k + 1) * base_frequency for k in range(harmonics)] for _ in mech.independent]
    else:
        omegas = [[float(term[1]) for term in terms] for terms in start]
    bound = amplitude_bounds(mech, [len(w) for w in omegas], max_amplitude, limits)
    bound = list(np.minimum(bound, rate_bounds(omegas, max_velocity, max_acceleration)))
    if start is None:
        start = default_start(len(mech.independent), base_frequency, harmonics, 0.5 * min(bound))
    x0 = _decision_vector(mech, start, bound)
    duration = 2 * np.pi / base_frequency
    times = np.linspace(0.0, duration, samples)
    W0 = observation_matrix(mech, times, FourierPath(mech, _split(x0, omegas)))
    kept = gautier_dp(W0, mech.model.inertial_parameter_names()).kept_indices
    evaluations = 0
    exact = method in GRADIENT_METHODS and not mech.partition.dependent
    condition = TreeCondition(mech, omegas, times, kept) if exact else None

    def objective(x: np.ndarray) -> float | tuple[float, np.ndarray]:
        nonlocal evaluations
        evaluations += 1
        return condition(x) if exact else log_condition(mech, _split(x, omegas), times, kept)

    before = log_condition(mech, _split(x0, omegas), times, kept)
    bounds = [(0.0, b) for b in bound] + [(-2 * np.pi, 2 * np.pi)] * len(bound)
    budget = "maxfun" if method in GRADIENT_METHODS else "maxfev"
    result = scipy.optimize.minimize(
        objective, x0, method=method, jac=exact or None, bounds=bounds, options={budget: max_evaluations}
    )
    # the reported condition numbers come from the numpy observation matrix, as any later use of the trajectory
    after = log_condition(mech, _split(result.x, omegas), times, kept)
    best, after = (result.x, after) if after < before else (x0, before)
    names = mech.model.inertial_parameter_names()
    return Excitation(
        _split(best, omegas),
        mech.independent,
        duration,
        samples,
        [names[k] for k in kept],
        10**before,
        10**after,
        evaluations,
        time.perf_counter() - clock,
        time.process_time() - cpu,
        str(result.message),
    )
