"""The compiled engine: the closed-loop equations of motion of one model revision, traced once through the
same algorithms on CasADi symbols (numerics/compiled.py) and evaluated natively one state at a time.

    eng = engine(model)                       # built once per model revision, then taken from the cache
    qdd_ind = eng.accelerations(t, q, qd_ind)  # q: assembled tree coordinates (n,), qd_ind (n_ind,)
    q, residual = eng.close_loops(q_guess)     # Newton on the dependent coordinates, compiled Φ and Φ_q
    J = eng.jacobians(t, q, qd_ind)            # exact ∂q̈_ind/∂(q_ind, q̇_ind, τ) and Φ_q
    y_dot = eng.ode(t, y, tau)                 # the simulation's state equation, y = eng.pack(q, q̇_ind)

The state equation carries all tree coordinates q in its state, next to q̇_ind (a ball or free joint's
orientation, when independent, as a quaternion and its rate as an angular velocity: kinematics/ball_states.py;
`pack` and `unpack` convert): the integrated q is only the
starting point of NEWTON_STEPS Newton steps on the dependent coordinates inside the compiled graph, so the
loops are closed at every evaluation (quadratic convergence from the integrator's prediction, which is within
its local error) without a Python loop, and q̇ = R q̇_ind carries the dependent coordinates along. That makes
the right-hand side one native call, and lets CasADi's CVODES step natively (simulation/run.py).

Forces (springs, dampers, friction, actuators with their time functions, gravity) are traced with the
symbolic time, so the compiled right-hand side is the whole model. `tau` adds generalized forces on the tree
coordinates (an input of linearisation and control). The numpy path stays the reference: tests compare both.
"""

from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass

import casadi
import numpy as np

from ..kinematics.ball_states import StateMap, float_where
from ..kinematics.coordinates import Partition
from ..kinematics.mechanism import Mechanism
from ..model import Model, dumps
from ..model.errors import AssemblyError
from ..numerics.compiled import FastCall, Traced, from_sx, native, symbols, to_sx
from .closed_loop import closed_loop_forward_dynamics
from .forces import AppliedForces

NEWTON_ITERATIONS = 50
# The traced graph grows as the cube of the coordinates (symbolic factorisations of the mass matrix and the
# loop Jacobian): the Delta (16) builds in 1.4 s, the SLA (20, its cut joints' included) in 0.5 s, a 30-link
# chain in 29 s, a 60-link chain in 185 s and 3 GB. Beyond this count of the document's joint coordinates the
# numpy path serves (simulation.py).
MAX_COORDINATES = 24
NEWTON_STEPS = 3  # inside the state equation: from 1e-4 off, 1e-8, 1e-16, then a step at the rounding floor


@dataclass(eq=False)  # hashed by identity: one engine per model revision
class Engine:
    mech: Mechanism  # float64: coordinates, partition, length scale
    rhs: casadi.Function  # (t, q, qd_ind, tau) -> q̈_ind
    r_matrix: casadi.Function  # q -> R = ∂q/∂q_ind
    closure: casadi.Function  # q -> (Φ of the independent rows, their Jacobian in the dependent coordinates)
    state_equation: casadi.Function  # (t, y = (q, q̇_ind), tau) -> (ẏ, q closed, max |Φ| there)
    build_seconds: float  # tracing and compiling
    # rhs and state_equation as compiled C where a compiler exists (numerics/compiled.native): evaluated ten
    # times faster, but not differentiable; the traced ones above serve the derivatives
    fast_rhs: casadi.Function
    fast_state_equation: casadi.Function
    states: StateMap  # the state's layout: y = (q, q̇_ind), quaternions and angular velocities for balls

    @property
    def state_size(self) -> int:
        return self.states.size

    def pack(self, q: np.ndarray, qd_ind: np.ndarray) -> np.ndarray:
        """The state y (size,) or (K, size) for assembled q (n,) or (K, n) and q̇_ind."""
        one = np.ndim(q) == 1
        y = self.states.pack(np.atleast_2d(np.asarray(q, float)), np.atleast_2d(np.asarray(qd_ind, float)))
        return y[0] if one else y

    def unpack(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q as integrated, before the loops are closed (K, n); q̇_ind (K, n_ind)) of states y (K, size)."""
        return self.states.unpack(np.atleast_2d(np.asarray(y, float)), float_where)

    @functools.cached_property
    def _state_call(self) -> FastCall:
        return FastCall(self.fast_state_equation)

    @functools.cached_property
    def _rhs_call(self) -> FastCall:
        return FastCall(self.fast_rhs)

    @property
    def native(self) -> bool:
        """True when the functions run as compiled C (a C compiler was found), else on CasADi's VM."""
        return self.fast_state_equation.is_a("External")

    @property
    def n(self) -> int:
        return self.mech.n

    def ode(self, t: float, y: np.ndarray, tau: np.ndarray | None = None) -> np.ndarray:
        """ẏ for the state y = (q (n), q̇_ind): q̇ = R q̇_ind and q̈_ind, both at the closed q."""
        tau = np.zeros(self.mech.n) if tau is None else tau
        return self._state_call(t, y, tau)[0]

    def closed(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The closed coordinates q (K, n) and the residual left (K,) for states y (K, n + n_ind), in one call."""
        q, _, residual = self.outputs(np.zeros(len(np.atleast_2d(y))), y)
        return q, residual

    def outputs(self, t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """At the times t (K,) and states y (K, n + n_ind), in one call: the closed q (K, n), q̈_ind (K, n_ind)
        and the residual left (K,)."""
        y = np.atleast_2d(y)
        tau = np.zeros((self.mech.n, len(y)))
        y_dot, q, residual = self.fast_state_equation.map(len(y))(np.asarray(t, dtype=float)[None, :], y.T, tau)
        q_integrated, v = self.unpack(y)
        qdd_ind = self.states.accelerations(y, q_integrated, v, np.asarray(y_dot).T)
        return np.asarray(q).T, qdd_ind, np.asarray(residual).ravel()

    def state_jacobian(self, t: float, y: np.ndarray) -> np.ndarray:
        """∂ẏ/∂y, exact (for the implicit integrators)."""
        return np.asarray(_state_jacobian(self)(t, y, np.zeros(self.mech.n)))

    @property
    def independent(self) -> list[int]:
        return list(self.mech.partition.independent)

    def accelerations(self, t: float, q: np.ndarray, qd_ind: np.ndarray, tau: np.ndarray | None = None) -> np.ndarray:
        tau = np.zeros(self.mech.n) if tau is None else tau
        return self._rhs_call(t, q, qd_ind, tau)[0]

    def velocities(self, q: np.ndarray, qd_ind: np.ndarray) -> np.ndarray:
        return np.asarray(self.r_matrix(q)) @ qd_ind

    def close_loops(self, q: np.ndarray, tol: float | None = None) -> tuple[np.ndarray, float]:
        """Newton on the dependent coordinates from q (n,), to `tol` (default 1e-12 per length scale); the
        coordinates and the residual left. A residual that stops falling at the rounding floor is accepted
        with its value (it cannot be met in float64); one that stays large raises AssemblyError."""
        dep = list(self.mech.partition.dependent)
        q = np.array(q, dtype=float)
        if not dep:
            return q, 0.0
        tol = 1e-12 * self.mech.length_scale if tol is None else tol
        residual, best = np.inf, np.inf
        for _ in range(NEWTON_ITERATIONS):
            phi, jac = (np.asarray(x) for x in self.closure(q))
            residual = float(np.abs(phi).max(initial=0.0))
            if residual <= tol or (residual >= best and residual < 1e3 * tol):  # converged, or at the floor
                return q, residual
            best = min(best, residual)
            q[dep] -= np.linalg.solve(jac, phi.ravel())
        if residual > 1e3 * tol:
            raise AssemblyError(
                f"the loops do not close here: residual {residual:.3g} after {NEWTON_ITERATIONS} Newton steps"
            )
        return q, residual

    def jacobians(self, t: float, q: np.ndarray, qd_ind: np.ndarray, tau: np.ndarray | None = None) -> dict:
        """Exact derivatives at an assembled state: ∂q̈_ind/∂q_ind (through the loop closure, ∂q/∂q_ind = R),
        ∂q̈_ind/∂q̇_ind, ∂q̈_ind/∂τ (τ on the tree coordinates), R and the constraint Jacobian Φ_q."""
        tau = np.zeros(self.mech.n) if tau is None else tau
        d_q, d_v, d_tau = (np.asarray(x) for x in _derivatives(self)(t, q, qd_ind, tau))
        R = np.asarray(self.r_matrix(q))
        return {
            "qdd_q_ind": d_q @ R,
            "qdd_qd_ind": d_v,
            "qdd_tau": d_tau,
            "R": R,
            "phi_q": self.mech.constraint_jacobian(q)[0],
        }


@functools.cache
def _derivatives(eng: Engine) -> casadi.Function:
    t, q, v, tau = (
        casadi.SX.sym(n, s) for n, s in (("t", 1), ("q", eng.mech.n), ("v", len(eng.independent)), ("tau", eng.mech.n))
    )
    out = eng.rhs(t, q, v, tau)
    return casadi.Function("derivatives", [t, q, v, tau], [casadi.jacobian(out, x) for x in (q, v, tau)])


@functools.cache
def _state_jacobian(eng: Engine) -> casadi.Function:
    t, y, tau = casadi.SX.sym("t"), casadi.SX.sym("y", eng.state_size), casadi.SX.sym("tau", eng.n)
    return casadi.Function("state_jacobian", [t, y, tau], [casadi.jacobian(eng.state_equation(t, y, tau)[0], y)])


def engine(model: Model, text: str | None = None, partition: Partition | None = None) -> Engine:
    """The compiled engine of this model revision (cached by its canonical text, `text` when the caller has
    it already: writing it costs the Delta 6 ms), for the document's partition or the one given."""
    if not fits_engine(model):
        coordinates = sum(len(j.coordinates) for j in model.joints)
        raise TooLarge(f"{coordinates} coordinates: the compiled engine is built for at most {MAX_COORDINATES}")
    return _build(dumps(model) if text is None else text, partition)


def fits_engine(model: Model) -> bool:
    return sum(len(j.coordinates) for j in model.joints) <= MAX_COORDINATES


class TooLarge(ValueError):
    """The model has too many coordinates for the compiled engine (MAX_COORDINATES)."""


@functools.lru_cache(maxsize=8)
def _build(text: str, partition: Partition | None = None) -> Engine:
    from ..model import loads

    start = time.perf_counter()
    model = loads(text)
    mech = Mechanism(model, backend=Traced(), partition=partition)
    n, k = mech.n, len(mech.independent)
    q_sx, q = symbols("q", n)
    v_sx, v = symbols("qd_ind", k)
    tau_sx, tau = symbols("tau", n)
    t_sx = casadi.SX.sym("t")
    batch = q[None, :]
    R = mech.r_matrix(batch)
    qd = (R * v[None, None, :]).sum(axis=2)
    Q = AppliedForces(mech).generalized(np.array([t_sx], dtype=object), batch, qd) + tau[None, :]
    qdd = closed_loop_forward_dynamics(mech, batch, qd, Q, R)[0]
    phi, jac = _closure(mech, q)
    accelerations = casadi.Function(
        "accelerations", [t_sx, q_sx, v_sx, tau_sx], [to_sx(qdd)], ["t", "q", "qd_ind", "tau"], ["qdd_ind"]
    )
    states = StateMap(mech.tree, list(range(n)), list(mech.partition.independent))
    state_equation = _state_equation(mech, accelerations, t_sx, tau_sx, states)
    r_matrix = casadi.Function("r_matrix", [q_sx], [to_sx(R[0])], ["q"], ["R"])
    closure = casadi.Function("closure", [q_sx], [to_sx(phi), to_sx(jac)], ["q"], ["phi", "phi_q_dependent"])
    fast = native(accelerations), native(state_equation)
    if partition is None:  # filed by model, for the window's sliders (kinematics/fast_assembly.py)
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        for function in (closure, r_matrix):
            native(function, key)
    return Engine(
        Mechanism(model, partition=partition),
        accelerations,
        r_matrix,
        closure,
        state_equation,
        time.perf_counter() - start,
        *fast,
        states,
    )


def _traced_where(x: np.ndarray, a: float, b: float) -> np.ndarray:
    """a where the traced x ≥ 0, else b (rodrigues.from_quaternion's choice of hemisphere)."""
    return np.array([casadi.if_else(value >= 0, a, b) for value in x.ravel()], dtype=object).reshape(x.shape)


def _closure(mech: Mechanism, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Φ of the independent rows and its Jacobian in the dependent coordinates, traced at q (n,)."""
    rows, dep = list(mech.partition.rows), list(mech.partition.dependent)
    batch = q[None, :]
    return mech.residual(batch)[0][rows], mech.constraint_jacobian(batch)[0][np.ix_(rows, dep)]


def _state_equation(
    mech: Mechanism, accelerations: casadi.Function, t: casadi.SX, tau: casadi.SX, states: StateMap
) -> casadi.Function:
    """(t, y, tau) -> (ẏ, closed q, max |Φ|): NEWTON_STEPS Newton steps on the dependent coordinates from
    the state's q, then q̇ = R q̇_ind and q̈_ind at the closed q (and the rates of a carried orientation)."""
    y_sx, y = symbols("y", states.size)
    q_state, v_state = states.unpack(y[None, :], _traced_where)
    q, dep = q_state[0].copy(), list(mech.partition.dependent)
    for _ in range(NEWTON_STEPS if dep else 0):
        phi, jac = _closure(mech, q)
        q[dep] = q[dep] - from_sx(casadi.solve(to_sx(jac), to_sx(phi)))[:, 0]
    q_sx, v_sx = to_sx(q), to_sx(v_state[0])
    R = to_sx(mech.r_matrix(q[None, :])[0])
    residual = casadi.mmax(casadi.fabs(to_sx(_closure(mech, q)[0]))) if dep else casadi.SX(0)
    qd, qdd = R @ v_sx, accelerations(t, q_sx, v_sx, tau)
    if states.quaternions:
        rates = states.rate(y[None, :], q[None, :], v_state, from_sx(qd).T, from_sx(qdd).T)[0]
        y_dot = to_sx(rates)
    else:
        y_dot = casadi.vertcat(qd, qdd)
    return casadi.Function(
        "state_equation", [t, y_sx, tau], [y_dot, q_sx, residual], ["t", "y", "tau"], ["y_dot", "q", "residual"]
    )
