"""The compiled engine: the closed-loop equations of motion of one model revision, traced once through the
same algorithms on CasADi symbols (numerics/compiled.py) and evaluated natively one state at a time.

    eng = engine(model)                       # built once per model revision, then taken from the cache
    qdd_ind = eng.accelerations(t, q, qd_ind)  # q: assembled tree coordinates (n,), qd_ind (n_ind,)
    q, residual = eng.close_loops(q_guess)     # Newton on the dependent coordinates, compiled Φ and Φ_q
    J = eng.jacobians(t, q, qd_ind)            # exact ∂q̈_ind/∂(q_ind, q̇_ind, τ) and Φ_q
    y_dot = eng.ode(t, y, tau)                 # the simulation's state equation, y = eng.pack(q, q̇_ind)

The graph keeps the algorithms' structure (docs/architecture.md, principle 11), so its size grows gently with the
model's: the recursive algorithms are traced on scalar symbols into small functions of their own (a tree's forward
dynamics by the articulated-body algorithm, O(n); for closed loops the loop equations with their sparse Jacobian,
the mass matrix by the composite-rigid-body algorithm and one inverse-dynamics pass), and the closed-loop
projection joins them in a graph of matrix symbols (CasADi MX) whose solves are factorisation nodes, which CasADi
writes as C: the dependent columns of Φ_q split into the blocks of independent loops (`loop_blocks`: a vehicle's
corners), each factorised alone, a small one by straight-line Householder QR whose factors serve both the velocity
map R and the acceleration bias; LDLᵀ of Rᵀ M R, R keeping its structural zeros (`rigid_columns`).
Nothing is eliminated symbolically. The same assembly on scalar symbols with symbolic solves
(`Engine.symbolic`) serves the exports that need plain expressions, built only when asked for.

Force laws may own states of their own (force_laws/base.py: a tyre's relaxed slips): the state y then ends with
them, z, and the state equation gives their rates next to q̇ and q̈_ind; the functions of (t, q, q̇_ind) alone
(accelerations and their derivatives, for linearisation and exports) do not carry them and refuse such a model.

The state equation carries all tree coordinates q in its state, next to q̇_ind (a ball or free joint's
orientation, when independent, as a quaternion and its rate as an angular velocity: kinematics/ball_states.py;
`pack` and `unpack` convert): the integrated q is only the
starting point of NEWTON_STEPS Newton steps on the dependent coordinates inside the compiled graph, so the
loops are closed at every evaluation (quadratic convergence from the integrator's prediction, which is within
its local error) without a Python loop, and q̇ = R q̇_ind carries the dependent coordinates along. That makes
the right-hand side one native call, and lets CVODES step natively on it (simulation/cvodes_driver.py).

Forces (springs, dampers, friction, actuators with their time functions, gravity) are traced with the
symbolic time, so the compiled right-hand side is the whole model. `tau` adds generalized forces on the tree
coordinates (an input of linearisation and control). The numpy path stays the reference: tests compare both.

A built engine is filed in the cache under the hash of the model's canonical text, the partition and the code
that traces it (numerics/compiled.cached_functions): a later process loads the native functions and the
partition without tracing anything; the traced graphs are built only when derivatives or exports ask for them.
A simulation's output series (`Engine.series`) are a library of their own filed beside it, traced and compiled
when a run first asks for its results: a first run integrates as soon as the state equation is compiled.
"""

from __future__ import annotations

import functools
import os
import pickle
import time
from dataclasses import dataclass

import casadi
import numpy as np

from ..kinematics.ball_states import StateMap, float_where
from ..kinematics.coordinates import Partition
from ..kinematics.mechanism import Mechanism
from ..model import Model, dumps
from ..model.errors import AssemblyError
from ..numerics.compiled import Native, Traced, cached_functions, engine_key, is_external, symbols, to_sparse_sx, to_sx
from ..numerics.small_solves import householder_factor, householder_solve, ldl_solve, sparse_qr_factor, sparse_qr_solve
from .force_laws.base import states_refused
from .forces import AppliedForces, gravity_potential
from .forward_dynamics import forward_dynamics
from .inverse_dynamics import inverse_dynamics
from .mass_matrix import mass_matrix
from .spatial_tree import body_inertia, components, cross, spatial_dot

NEWTON_ITERATIONS = 50
NEWTON_STEPS = 3  # inside the state equation, at most: from 1e-4 off, 1e-8, 1e-16, then one at the rounding floor
# the steps after the first are skipped where max |Φ| is already within CLOSED times the length scale (a step from
# there moves q by rounding): an integrator's prediction, within its local error of the loops, needs one step. The
# first is always taken: its derivative is the projection onto the loops' tangent, which the skipped ones keep
CLOSED = 1e-14
# Beyond this many coordinates the C compiler's time dominates (it grows with the graph, linearly: a 100-link
# chain's cold build takes about 22 s on two cores, Talos' about 10 s) and the numpy path serves: a 5 000-body
# model is checked, not compiled.
MAX_COORDINATES = 400
# loop blocks of at most this many rows are solved by a dense Householder QR; a larger one (loops sharing bodies)
# by CasADi's sparse QR, whose work grows with its nonzeros where the dense one's grows as the cube (both traced
# as straight-line code)
SMALL_BLOCK = 12
NATIVE = ("accelerations", "state_equation", "work_rate", "motion", "r_matrix", "closure")
# the document's coordinates' engine of a closed loop (orientations not carried as quaternions) also holds
# "loop_jacobian": Φ_q of every loop equation, which the crossing watch reads (simulation/crossing.py)
# a simulation's output series (energies, poses, reactions) in a library of their own, traced and compiled when a run
# first asks for its results (`Engine.series_functions`): nearly half of a 100-link chain's compile, which a run's
# integration, the sliders' assembly and the linearisation do not wait for
SERIES = "series"


@dataclass(eq=False)  # hashed by identity: one engine per model revision
class Engine:
    mech: Mechanism  # float64: coordinates, partition, length scale
    compiled: Native  # NATIVE: compiled C and its calls from Python where a compiler exists, else traced
    build_seconds: float  # tracing and compiling, or loading from the cache
    text: str  # the model's canonical text, from which the traced graphs are built when asked for
    key: str  # what the engine is filed under in the cache (compiled.engine_key), its series beside it

    def __post_init__(self) -> None:
        calls = self.compiled.calls
        self._state, self._rhs = calls["state_equation"], calls["accelerations"]
        self._closure, self._r, self._motion = calls["closure"], calls["r_matrix"], calls["motion_rows"]
        self._no_tau = np.zeros(self.mech.n)
        self.states = state_map(self.mech)  # the state's layout: quaternions and angular velocities for balls
        self._plain = not self.states.carried and all(i == slot for i, slot in self.states.plain)
        # the force laws' own states (name, unit), at the end of y
        self.law_states = [tuple(x) for x in self.compiled.metadata.get("law_states", [])]

    @property
    def state_size(self) -> int:
        return self.states.size + len(self.law_states)

    def pack(self, q: np.ndarray, qd_ind: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
        """The state y (size,) or (K, size) for assembled q (n,) or (K, n), q̇_ind and the laws' states z (zero, at
        rest, where None)."""
        one = np.ndim(q) == 1
        y = self.states.pack(np.atleast_2d(np.asarray(q, float)), np.atleast_2d(np.asarray(qd_ind, float)))
        if self.law_states:
            z = np.zeros((len(y), len(self.law_states))) if z is None else np.atleast_2d(np.asarray(z, float))
            y = np.concatenate([y, np.broadcast_to(z, (len(y), len(self.law_states)))], axis=1)
        return y[0] if one else y

    def unpack(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q as integrated, before the loops are closed (K, n); q̇_ind (K, n_ind)) of states y (K, size)."""
        y = np.atleast_2d(np.asarray(y, float))[:, : self.states.size]
        if self._plain:  # y = (q, q̇_ind) as they are: a copy of each part
            return y[:, : self.n].copy(), y[:, self.n :].copy()
        return self.states.unpack(y, float_where)

    def laws_states(self, y: np.ndarray) -> np.ndarray:
        """The force laws' states z (K, len(law_states)) of states y (K, size)."""
        return np.atleast_2d(np.asarray(y, float))[:, self.states.size :].copy()

    def refuse_law_states(self, what: str) -> None:
        """A ModelError naming the force laws' states, which `what` does not carry."""
        if self.law_states:
            raise states_refused([name for name, _ in self.law_states], what)

    @functools.cached_property
    def traced(self) -> dict[str, casadi.Function]:
        """The differentiable graphs (MX) of NATIVE, traced when first asked for (derivatives, exports, BDF)."""
        functions = self.compiled.traced or _trace(self.text, self.mech.partition)[0]
        return {f.name(): f for f in functions}

    @functools.cached_property
    def symbolic(self) -> dict[str, casadi.Function]:
        """NATIVE and SERIES as functions of scalar symbols (SX), the solves done symbolically: for the exports and
        outputs that need plain expressions (their size grows as the cube of the coordinates)."""
        return {f.name(): f for f in _trace(self.text, self.mech.partition, symbolic=True, series=True)[0]}

    @functools.cached_property
    def series_functions(self) -> Native:
        """SERIES compiled into a library of its own, filed beside the engine's: loaded from the cache, or traced
        and compiled the first time a run asks for its results (or where the engine was not filed)."""
        return cached_functions(self.key, SERIES, functools.partial(_trace_series, self.text, self.mech.partition))

    @functools.cached_property
    def traced_series(self) -> casadi.Function:
        """The differentiable graph of SERIES (exports): the one this process traced, else traced now."""
        return (self.series_functions.traced or _trace_series(self.text, self.mech.partition)[0])[0]

    # the traced graphs where derivatives are asked for, the compiled functions where values are
    rhs = property(lambda self: self.traced["accelerations"])
    state_equation = property(lambda self: self.traced["state_equation"])
    r_matrix = property(lambda self: self.compiled.functions["r_matrix"])
    closure = property(lambda self: self.compiled.functions["closure"])
    fast_rhs = property(lambda self: self.compiled.functions["accelerations"])
    fast_state_equation = property(lambda self: self.compiled.functions["state_equation"])
    work_rate = property(lambda self: self.traced["work_rate"])
    fast_work_rate = property(lambda self: self.compiled.functions["work_rate"])

    @property
    def native(self) -> bool:
        """True when the functions run as compiled C (a C compiler was found), else on CasADi's VM."""
        return is_external(self.fast_state_equation)

    @property
    def n(self) -> int:
        return self.mech.n

    def ode(self, t: float, y: np.ndarray, tau: np.ndarray | None = None) -> np.ndarray:
        """ẏ for the state y = (q (n), q̇_ind) (`pack`): q̇ = R q̇_ind and q̈_ind, both at the closed q."""
        return self._state(t, y, self._no_tau if tau is None else tau)[0]

    def closed(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The closed coordinates q (K, n) and the residual left (K,) for states y (K, state size), in one call."""
        q, _, _, residual = self.outputs(np.zeros(len(np.atleast_2d(y))), y)
        return q, residual

    def outputs(self, t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """At the times t (K,) and states y (K, state size), in one native call: the closed q, q̇ and q̈ of every
        tree coordinate (K, n each) and the residual left (K,)."""
        y = np.ascontiguousarray(np.atleast_2d(y), dtype=float)
        q, qd, qdd, residual = (np.empty((len(y), size)) for size in (self.n, self.n, self.n, 1))
        self._motion(np.ascontiguousarray(t, dtype=float), y, self._no_tau, q, qd, qdd, residual)
        return q, qd, qdd, residual[:, 0]

    def series(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> dict[str, np.ndarray]:
        """At the samples t (K,) of a motion (q, q̇, q̈ (K, n)), in one native call: "kinetic" and "potential"
        energies (K,), "phi" (K, m), "reactions" (K, rows) of the partition's rows, "Q" (K, n), "poses"
        (K, bodies, 12: R by columns, then the origin; the ground first), "rates" (K, bodies, 12: ω, the origin's
        v, α, a, in world axes), and the monitors (simulation/monitors.py) "com", "momentum" and "angular_momentum"
        about the centre of mass (K, 3 each)."""
        function = self.series_functions.functions[SERIES]
        out = [np.empty((len(t), function.nnz_out(i))) for i in range(function.n_out())]
        q, qd, qdd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd, qdd))
        self.series_functions.calls[f"{SERIES}_rows"](np.ascontiguousarray(t, dtype=float), q, qd, qdd, *out)
        kinetic, potential, phi, reactions, Q, poses, monitors, rates = out
        return {
            "com": monitors[:, :3],
            "momentum": monitors[:, 3:6],
            "angular_momentum": monitors[:, 6:],
            "kinetic": kinetic[:, 0],
            "potential": potential[:, 0],
            "phi": phi,
            "reactions": reactions,
            "Q": Q,
            "poses": poses.reshape(len(t), -1, 12),
            "rates": rates.reshape(len(t), -1, 12),
        }

    def state_jacobian(self, t: float, y: np.ndarray) -> np.ndarray:
        """∂ẏ/∂y, exact (for the implicit integrators)."""
        return np.asarray(_state_jacobian(self)(t, y, np.zeros(self.mech.n)))

    @property
    def independent(self) -> list[int]:
        return list(self.mech.partition.independent)

    def accelerations(self, t: float, q: np.ndarray, qd_ind: np.ndarray, tau: np.ndarray | None = None) -> np.ndarray:
        self.refuse_law_states("the accelerations of (t, q, q̇_ind) alone (linearisation, equilibria)")
        return self._rhs(t, q, qd_ind, self._no_tau if tau is None else tau)

    def velocity_map(self, q: np.ndarray) -> np.ndarray:
        """R = ∂q/∂q_ind (n, n_ind) at the assembled q (n,)."""
        return self._r(q).reshape(self.n, len(self.independent), order="F")

    def velocities(self, q: np.ndarray, qd_ind: np.ndarray) -> np.ndarray:
        return self.velocity_map(q) @ qd_ind

    def loop_block(self, q: np.ndarray) -> np.ndarray:
        """Φ_q[rows, dep] of the partition's rows and dependent coordinates at q (n,), in one native call."""
        phi, jac = self._closure(np.asarray(q, dtype=float))
        return jac.reshape(len(phi), len(self.mech.partition.dependent), order="F")

    def smallest_singular_value(self, q: np.ndarray) -> float:
        """σ_min of loop_block(q): the smallest over the loops' blocks (`loop_blocks`, filed with the engine),
        whose singular values together are the whole block's, the blocks of one shape in one batched SVD (the
        vehicle's 36 × 36 costs five times its eight blocks); inf without loops."""
        return float(self.smallest_singular_values(np.asarray(q, dtype=float)[None])[0])

    def smallest_singular_values(self, q: np.ndarray) -> np.ndarray:
        """smallest_singular_value at each of the coordinates q (K, n), the K states' blocks in one batched SVD
        per shape (a run's check points at once); each value is the one a single state's call gives."""
        if not (self.mech.partition.rows and self.mech.partition.dependent):
            return np.full(len(q), np.inf)
        blocks = self._loop_blocks(q)
        return np.min(
            [np.linalg.svd(blocks[:, at], compute_uv=False).min(axis=(1, 2)) for at in self._block_entries], axis=0
        )

    def surely_conditioned(self, q: np.ndarray, bound: float) -> bool:
        """Whether smallest_singular_value is at least `bound` at every one of the coordinates q (K, n), by a margin
        beyond its rounding (1e-10 of the blocks' norms), a few times cheaper than the SVD and without one: every loop
        block's Gram matrix less bound² has a Cholesky factor. False where unsure: the SVD then decides."""
        if not (self.mech.partition.rows and self.mech.partition.dependent) or not len(q):
            return True
        blocks = self._loop_blocks(q)
        for at in self._block_entries:
            shaped = blocks[:, at]
            gram = (
                shaped @ np.swapaxes(shaped, 2, 3) if at.shape[1] < at.shape[2] else np.swapaxes(shaped, 2, 3) @ shaped
            )
            size = float(np.abs(gram).max(initial=0.0)) * gram.shape[-1]  # at least the Gram matrices' norms
            allowance = bound + 1e-10 * np.sqrt(size)  # beyond the SVD's rounding of σ as well
            try:
                np.linalg.cholesky(gram - (allowance**2 + 1e-10 * size) * np.eye(gram.shape[-1]))
            except np.linalg.LinAlgError:
                return False
        return True

    def _loop_blocks(self, q: np.ndarray) -> np.ndarray:
        """loop_block at each of the coordinates q (K, n), flattened (K, rows × dependent), in one native call."""
        rows, columns = len(self.mech.partition.rows), len(self.mech.partition.dependent)
        phi, jac = np.empty((len(q), rows)), np.empty((len(q), rows * columns))
        self.compiled.calls["closure_rows"](np.ascontiguousarray(q, dtype=float), phi, jac)
        return jac.reshape(len(q), columns, rows).transpose(0, 2, 1).reshape(len(q), -1)  # by columns: by rows

    @functools.cached_property
    def _block_entries(self) -> list[np.ndarray]:
        """For each shape of the loops' blocks, where their entries lie in loop_block's flattened array (blocks,
        rows, columns)."""
        p = self.mech.partition
        rows, columns = len(p.rows), len(p.dependent)
        blocks = self.compiled.metadata.get("blocks") or [[list(range(rows)), list(range(columns))]]
        shapes: dict[tuple[int, int], list[np.ndarray]] = {}
        for r, c in blocks:
            shapes.setdefault((len(r), len(c)), []).append(np.asarray(r)[:, None] * columns + np.asarray(c)[None, :])
        return [np.stack(same) for same in shapes.values()]

    def loop_jacobians(self, q: np.ndarray) -> np.ndarray:
        """Φ_q (K, m, n) of every loop equation at each of the coordinates q (K, n), in one native call (the engine of
        the document's coordinates of a closed loop carried without quaternions: `loop_jacobian`)."""
        m = self.mech.constraints.m
        out = np.empty((len(q), m * self.n))
        self.compiled.calls["loop_jacobian_rows"](np.ascontiguousarray(q, dtype=float), out)
        return out.reshape(len(q), self.n, m).transpose(0, 2, 1)  # by columns: by rows

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
            phi, jac = self._closure(q)
            residual = float(np.abs(phi).max(initial=0.0))
            if residual <= tol or (residual >= best and residual < 1e3 * tol):  # converged, or at the floor
                return q, residual
            best = min(best, residual)
            q[dep] -= np.linalg.solve(jac.reshape(len(phi), len(dep), order="F"), phi)
        if residual > 1e3 * tol:
            raise AssemblyError(
                f"the loops do not close here: residual {residual:.3g} after {NEWTON_ITERATIONS} Newton steps"
            )
        return q, residual

    def jacobians(self, t: float, q: np.ndarray, qd_ind: np.ndarray, tau: np.ndarray | None = None) -> dict:
        """Exact derivatives at an assembled state: ∂q̈_ind/∂q_ind (through the loop closure, ∂q/∂q_ind = R),
        ∂q̈_ind/∂q̇_ind, ∂q̈_ind/∂τ (τ on the tree coordinates), R and the constraint Jacobian Φ_q."""
        self.refuse_law_states("linearisation")
        tau = np.zeros(self.mech.n) if tau is None else tau
        d_q, d_v, d_tau = (np.asarray(x) for x in _derivatives(self)(t, q, qd_ind, tau))
        R = self.velocity_map(q)
        return {
            "qdd_q_ind": d_q @ R,
            "qdd_qd_ind": d_v,
            "qdd_tau": d_tau,
            "R": R,
            "phi_q": self.mech.constraint_jacobian(q)[0],
        }


@functools.cache
def _derivatives(eng: Engine) -> casadi.Function:
    n, k = eng.n, len(eng.independent)
    t, q, v, tau = (casadi.MX.sym(name, size) for name, size in (("t", 1), ("q", n), ("v", k), ("tau", n)))
    out = eng.rhs(t, q, v, tau)
    return casadi.Function("derivatives", [t, q, v, tau], [casadi.jacobian(out, x) for x in (q, v, tau)])


@functools.cache
def _state_jacobian(eng: Engine) -> casadi.Function:
    t, y, tau = casadi.MX.sym("t"), casadi.MX.sym("y", eng.state_size), casadi.MX.sym("tau", eng.n)
    return casadi.Function("state_jacobian", [t, y, tau], [casadi.jacobian(eng.state_equation(t, y, tau)[0], y)])


def engine(
    model: Model, text: str | None = None, partition: Partition | None = None, mech: Mechanism | None = None
) -> Engine:
    """The compiled engine of this model revision (cached by its canonical text, `text` when the caller has
    it already: writing it costs the Delta 6 ms), for the document's partition or the one given. `mech`: the
    float64 mechanism of this text and partition, when the caller has it already."""
    if not fits_engine(model):
        coordinates = sum(len(j.coordinates) for j in model.joints)
        raise TooLarge(f"{coordinates} coordinates: the compiled engine is built for at most {MAX_COORDINATES}")
    return _build(canonical_text(model) if text is None else text, partition, mech)


def canonical_text(model: Model) -> str:
    """The model's canonical text (model.dumps), remembered for the last few models by their pickled state: pickling
    takes the SLA 0.2 ms where writing its text takes 4 ms (a 50-link chain 0.3 and 11 ms), and equal pickled
    states are equal documents, hence equal texts."""
    try:
        state = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):  # a document holding something unpicklable
        return dumps(model)
    text = _TEXTS.get(state)
    if text is None:
        text = dumps(model)
        if len(_TEXTS) >= _KEPT:
            _TEXTS.pop(next(iter(_TEXTS)))
        _TEXTS[state] = text
    return text


def fits_engine(model: Model) -> bool:
    return sum(len(j.coordinates) for j in model.joints) <= MAX_COORDINATES


class TooLarge(ValueError):
    """The model has too many coordinates for the compiled engine (MAX_COORDINATES)."""


# the last few engines of this process, by text, partition and cache folder (a process that changes folders, as a
# test does, finds its engines filed in the new one)
_BUILT: dict[tuple[str, Partition | None, str | None], Engine] = {}
_TEXTS: dict[bytes, str] = {}
_KEPT = 8


def _build(text: str, partition: Partition | None = None, mech: Mechanism | None = None) -> Engine:
    where = (text, partition, os.environ.get("MBSTUDIO_CACHE"))
    found = _BUILT.get(where)
    if found is not None:
        return found
    from ..model import loads

    start = time.perf_counter()
    key = engine_key(text, partition)
    compiled = cached_functions(key, "engine", lambda: _trace(text, partition))
    if mech is None:
        fields = compiled.metadata["partition"]
        chosen = partition or Partition(*(tuple(f) if isinstance(f, list) else f for f in fields))
        mech = Mechanism(loads(text), partition=chosen)
    eng = Engine(mech, compiled, time.perf_counter() - start, text, key)
    if len(_BUILT) >= _KEPT:
        _BUILT.pop(next(iter(_BUILT)))
    _BUILT[where] = eng
    return eng


def state_map(mech: Mechanism) -> StateMap:
    """The layout of the state equation's y: every tree coordinate, then the independent velocities, a ball or
    free joint's independent orientation as a quaternion and its rate as the angular velocity."""
    return StateMap(mech.tree, list(range(mech.n)), list(mech.partition.independent))


def clear_engines() -> None:
    """Forgets this process's engines (the cached libraries stay): the next build is what a new process sees."""
    _BUILT.clear()
    _derivatives.cache_clear()
    _state_jacobian.cache_clear()


# ---------------------------------------------------------------------------------------- tracing
def _trace(
    text: str, partition: Partition | None, symbolic: bool = False, series: bool = False
) -> tuple[list[casadi.Function], dict]:
    """The NATIVE functions of the model text (and SERIES after them where `series`), and the metadata filed with
    them (the partition)."""
    graph = _graph(text, partition, symbolic)
    pieces, p = graph.pieces, graph.pieces.mech.partition
    fields = (p.independent, p.dependent, p.rows, p.rank, p.redundant_rows)
    metadata = {"partition": [[int(i) for i in f] if isinstance(f, tuple) else int(f) for f in fields]}
    metadata["blocks"] = [[[int(r) for r in rows], [int(c) for c in columns]] for rows, columns, _ in graph.blocks]
    metadata["law_states"] = [list(x) for x in pieces.applied.state_names]
    functions = graph.functions() + ([graph.series()] if series else [])
    if partition is None and p.rows and not graph.states.quaternions:  # a run that may cross (crossing.py)
        functions.append(loop_jacobian(pieces.mech))  # one per model: engines of other coordinates read this one
    return functions, metadata


def loop_jacobian(mech: Mechanism) -> casadi.Function:
    """q -> Φ_q (m, n) of every loop equation (the partition's rows or not), dense: what the crossing watch decides
    on (simulation/crossing.py). Traced as dynamics/augmented.py's loop terms trace it, so that both give the same
    bits, whichever library a run has."""
    q_sx, q = symbols("q", mech.n)
    jac = to_sx(mech.constraint_jacobian(q[None, :])[0])
    return casadi.Function("loop_jacobian", [q_sx], [jac], ["q"], ["phi_q"], _MERGED)


def _trace_series(text: str, partition: Partition) -> tuple[list[casadi.Function], dict]:
    """SERIES of the model text alone (the engine's partition given: the same graph as the engine's trace)."""
    return [_graph(text, partition, symbolic=False).series()], {}


def _graph(text: str, partition: Partition | None, symbolic: bool) -> _Graph:
    from ..model import loads

    mech = Mechanism(loads(text), backend=Traced(), partition=partition)
    return _Graph(_Pieces(mech), mech.partition, casadi.SX if symbolic else casadi.MX, symbolic)


# the pieces' repeated subexpressions computed once (CasADi's common-subexpression elimination: the same operations
# on the same operands, hence the same bits): the output terms trace the kinematics in several algorithms, and a
# 100-link chain's lose a third of their statements, with as much of their compile time
_MERGED = {"cse": True}


class _Pieces:
    """The recursive algorithms traced on scalar symbols (SX), each into a function of its own, with the sparsity
    of its outputs: the tree's forces, forward and inverse dynamics and mass matrix, and the loop equations."""

    def __init__(self, mech: Mechanism) -> None:
        self.mech = mech
        n = mech.n
        self.rows = list(mech.partition.rows)
        self.t = casadi.SX.sym("t")
        self.q, self.qd, self.x = (symbols(name, n) for name in ("q", "qd", "x"))  # x: q̈ or τ
        self.z = symbols("z", len(self.applied.state_names))  # the force laws' own states
        self._projected: dict[tuple, casadi.Function] = {}

    def _function(self, name: str, arguments: list, outputs: list[np.ndarray]) -> casadi.Function:
        return casadi.Function(name, [a[0] for a in arguments], [to_sparse_sx(o) for o in outputs], _MERGED)

    @functools.cached_property
    def applied(self) -> AppliedForces:
        """The document's force elements, traced by the forces, their power and the series."""
        return AppliedForces(self.mech)

    @functools.cached_property
    def forces(self) -> casadi.Function:
        """(t, q, q̇, τ, z) -> Q + τ: the document's force elements and the given generalized forces."""
        q, qd, tau, z = (x[1][None, :] for x in (self.q, self.qd, self.x, self.z))
        Q = self.applied.generalized(np.array([self.t], dtype=object), q, qd, z) + tau
        arguments = [self.t, self.q[0], self.qd[0], self.x[0], self.z[0]]
        return casadi.Function("forces", arguments, [to_sparse_sx(Q[0])], _MERGED)

    @functools.cached_property
    def power(self) -> casadi.Function:
        """(t, q, q̇, τ, z) -> P_nc: the power of the force elements beyond their potential's, and of τ (what the
        energy balance integrates: simulation/monitors.py)."""
        q, qd, tau, z = (x[1][None, :] for x in (self.q, self.qd, self.x, self.z))
        power = self.applied.element_power(np.array([self.t], dtype=object), q, qd, z=z)[0]
        power = power[0] + (tau[0] * qd[0]).sum()
        arguments = [self.t, self.q[0], self.qd[0], self.x[0], self.z[0]]
        return casadi.Function("nonconservative_power", arguments, [power], _MERGED)

    @functools.cached_property
    def law_rates(self) -> casadi.Function:
        """(t, q, q̇, z) -> ż: the rates of the force laws' own states."""
        q, qd, z = (x[1][None, :] for x in (self.q, self.qd, self.z))
        rates = self.applied.state_rates(np.array([self.t], dtype=object), q, qd, z)[0]
        arguments = [self.t, self.q[0], self.qd[0], self.z[0]]
        return casadi.Function("law_state_rates", arguments, [to_sx(rates)], _MERGED)

    @functools.cached_property
    def forward(self) -> casadi.Function:
        """(q, q̇, τ) -> q̈ of the tree, by the articulated-body algorithm."""
        q, qd, tau = (x[1][None, :] for x in (self.q, self.qd, self.x))
        qdd = forward_dynamics(self.mech, q, qd, tau)[0]
        return self._function("forward_dynamics", [self.q, self.qd, self.x], [qdd])

    def projected_dynamics(self, pattern: casadi.Sparsity) -> casadi.Function:
        """(q, q̇, q̈, F, R) -> (Rᵀ (F − τ), Rᵀ M R), R with the given sparsity: τ of the tree by the recursive
        Newton-Euler algorithm, M (its structural zeros kept) by the composite-rigid-body algorithm, in one
        function, so that the bodies' poses both trace from q are computed once (the common-subexpression
        elimination merges them), and the products with R are straight-line code over their structural
        nonzeros."""
        key = (pattern.size1(), pattern.size2(), *map(tuple, pattern.get_triplet()))
        if key not in self._projected:  # one per engine: the accelerations and the state equation share it
            self._projected[key] = self._projected_dynamics(pattern)
        return self._projected[key]

    def _projected_dynamics(self, pattern: casadi.Sparsity) -> casadi.Function:
        q, qd, qdd = (x[1][None, :] for x in (self.q, self.qd, self.x))
        forces, R = casadi.SX.sym("F", self.mech.n), casadi.SX.sym("R", pattern)
        tau, mass = inverse_dynamics(self.mech, q, qd, qdd)[0], mass_matrix(self.mech, q)[0]
        rhs = casadi.mtimes(R.T, forces - to_sx(tau))
        reduced = casadi.mtimes([R.T, to_sparse_sx(mass), R])
        arguments = [self.q[0], self.qd[0], self.x[0], forces, R]
        return casadi.Function("projected_dynamics", arguments, [rhs, reduced], _MERGED)

    @functools.cached_property
    def loops(self) -> casadi.Function:
        """q -> (Φ, Φ_q) of the independent rows, Φ_q with its structural zeros (each row depends only on the
        coordinates of its loop)."""
        q = self.q[1][None, :]
        phi, jac = self.mech.residual(q)[0][self.rows], self.mech.constraint_jacobian(q)[0][self.rows]
        for r, row in enumerate(self.rows):
            jac[r, rigid_columns(self.mech, row)] = 0.0
        return self._function("loop_equations", [self.q], [phi, jac])

    @functools.cached_property
    def series_terms(self) -> casadi.Function:
        """(t, q, q̇, q̈) -> (T, V, poses, Φ of every row, Φ_q of the independent rows, τ_tree − Q, Q, monitors,
        rates): what a simulation's results hold at one sample. T = ½ Σ V_bᵀ I_b V_b over the bodies (O(n), where
        ½ q̇ᵀ M q̇ would be O(n²)); poses by body: R by columns, then the origin; rates by body: ω, v, α, a (the
        document's measures read them)."""
        mech, tree = self.mech, self.mech.tree
        q, qd, qdd = (x[1][None, :] for x in (self.q, self.qd, self.x))
        st = mech.motion(q, qd, qdd)
        kinetic, mass, first, momentum = 0.0, 0.0, 0.0, 0.0
        for b in range(1, len(tree.body_labels)):
            w, p = components(st.w[b]), components(st.p[b])
            velocity = np.concatenate([w, components(st.v[b]) + cross(p, w)])  # at the world origin
            inertia = body_inertia(mech, st, b)
            h = inertia.apply(velocity)
            kinetic = kinetic + spatial_dot(velocity, h)[0] / 2
            mass, first, momentum = mass + inertia.m, first + inertia.c[:, 0], momentum + h[:, 0]
        forces = self.applied
        potential = gravity_potential(mech, q)[0] + forces.potential(q)[0]
        poses = [x for b in range(len(tree.body_labels)) for x in (*st.R[b][0].T, st.p[b][0])]
        Q = forces.generalized(np.array([self.t], dtype=object), q, qd)
        needed = inverse_dynamics(self.mech, q, qd, qdd)[0] - Q[0]
        phi = mech.residual(q)[0]
        jac = mech.constraint_jacobian(q)[0][self.rows]
        centre = first / mass if mass else np.zeros(3)
        linear = momentum[3:]
        angular = momentum[:3] - cross(centre[:, None], linear[:, None])[:, 0]  # about the centre of mass
        monitors = np.concatenate([centre, linear, angular])
        rates = [x[0] for b in range(len(tree.body_labels)) for x in (st.w[b], st.v[b], st.al[b], st.a[b])]
        outputs = [np.array([kinetic]), np.array([potential]), np.concatenate(poses), phi, jac, needed, Q[0], monitors]
        outputs.append(np.concatenate(rates))
        arguments = [self.t, self.q[0], self.qd[0], self.x[0]]
        return casadi.Function("series_terms", arguments, [to_sparse_sx(o) for o in outputs], _MERGED)

    @functools.cached_property
    def velocity_terms(self) -> casadi.Function:
        """(t, q, q̇, τ, z) -> (Φ̈ at q̈ = 0 of the independent rows (the velocity-product terms), Q + τ as `forces`,
        P_nc as `power`): one function, so that the motion they trace from (q, q̇) is computed once."""
        q, qd, tau, z = (x[1][None, :] for x in (self.q, self.qd, self.x, self.z))
        st = self.mech.motion(self.q[1], self.qd[1])
        gamma = self.mech.constraints.acceleration_bias(st)[0][self.rows]
        t = np.array([self.t], dtype=object)
        Q = self.applied.generalized(t, q, qd, z) + tau
        power = self.applied.element_power(t, q, qd, z=z)[0][0] + (tau[0] * qd[0]).sum()
        arguments = [self.t, self.q[0], self.qd[0], self.x[0], self.z[0]]
        outputs = [to_sparse_sx(gamma), to_sparse_sx(Q[0]), power]
        return casadi.Function("velocity_terms", arguments, outputs, _MERGED)


def rigid_columns(mech: Mechanism, row: int) -> list[int]:
    """The coordinates whose column of Φ_q is zero in the constraint row `row` whatever q: those on the path from
    the ground to both bodies of its cut joint, which carry the joint's two frames together as one rigid body.
    Every loop equation (a_i·d = 0, a_i·b_j = 0) is unchanged by a rigid motion of both frames, so its derivative
    along them is zero; computed, it is rounding (1e-16), which would make the velocity map of a vehicle's
    corners depend on the chassis' angles. A coupling row keeps its columns."""
    joint = mech.constraints.rows[row][0]
    if joint is None:
        return []
    support = mech.tree.support
    a, b = (side.body for side in mech.constraints.sides[joint])
    return sorted(set(support[a]) & set(support[b]))


class _Graph:
    """The closed-loop equations assembled from the pieces on matrix symbols (MX, solves as sparse factorisation
    nodes) or on scalar symbols (SX, solves symbolic)."""

    def __init__(self, pieces: _Pieces, partition: Partition, kind: type, symbolic: bool) -> None:
        self.pieces, self.kind = pieces, kind
        self.n, self.k = pieces.mech.n, len(partition.independent)
        self.ind, self.dep = list(partition.independent), list(partition.dependent)
        self.states = state_map(pieces.mech)
        self.symbolic = symbolic
        self.blocks = loop_blocks(pieces.loops.sparsity_out(1), self.dep, self.ind) if self.dep else []
        # the blocks' dependent coordinates, one block after the other, onto the tree's coordinates (n, dependent)
        placed = [self.dep[c] for _, columns, _ in self.blocks for c in columns]
        self.place = _selection(self.n, placed)
        self.identity = _selection(self.n, self.ind)  # q̇_ind onto the tree's coordinates (n, k)
        # each block's independent columns, one block after the other, from q̇_ind: (Σ columns, k)
        self.pick = _selection(self.k, [i for *_, touched in self.blocks for i in touched]).T

    def solve(self, a, b, spd: bool = False):
        if self.symbolic:
            return casadi.solve(a, b)
        return casadi.solve(a, b, "ldl" if spd else "qr")

    def _dependent_step(self, factorised: _Factorised, b) -> object:
        """J_dep⁻¹ b on the dependent coordinates, zero on the independent ones (n,): solved loop block by loop
        block."""
        return self._placed(self._block_steps(factorised, b))

    def _block_steps(self, factorised: _Factorised, b) -> object:
        """J_dep⁻¹ b, the blocks' dependent coordinates one block after the other."""
        return casadi.vertcat(*(factorised.solve(k, b[rows]) for k, (rows, _, _) in enumerate(self.blocks)))

    def _placed(self, steps) -> object:
        """`_block_steps` onto the tree's coordinates (n,)."""
        return casadi.mtimes(self.place, steps)

    def velocity_map(self, factorised: _Factorised, kind: type | None = None):
        """R = ∂q/∂q_ind from the rows' Jacobian: identity on the independents, −J_dep⁻¹ J_ind below, block by
        block on the independent coordinates each loop block's rows touch, so that R keeps its structural zeros
        (the products Rᵀ M R and R q̈_ind then skip them). `kind`: the symbols' (the graph's unless given)."""
        return self._assembled(self._coupling(factorised, kind))

    def _coupling(self, factorised: _Factorised, kind: type | None = None):
        """The blocks' −J_dep⁻¹ J_ind, block-diagonal (the blocks' dependent coordinates by their independent ones)."""
        jac, ind = factorised.jac, self.ind
        return casadi.diagcat(
            *(
                -factorised.solve(k, jac[rows, [ind[i] for i in touched]])
                if touched
                else (kind or self.kind)(len(columns), 0)  # a loop no independent coordinate moves
                for k, (rows, columns, touched) in enumerate(self.blocks)
            )
        )

    def _assembled(self, coupling):
        """R from the blocks' coupling (`_coupling`)."""
        return self.identity + casadi.mtimes([self.place, coupling, self.pick])

    def accelerations(self, t, q, v, tau, jac=None, z=None) -> tuple:
        """(q̈_ind, q̇, q̈, P_nc) at the closed q: Rᵀ M R q̈_ind = Rᵀ (Q − τ_tree(q, q̇, a)), a the acceleration term,
        and q̈ = R q̈_ind + a; P_nc the power of the force elements beyond their potential's and of τ. z: the force
        laws' own states (at rest where None)."""
        p = self.pieces
        z = self.kind.zeros(p.z[0].numel()) if z is None else z
        if not self.dep:
            qdd = p.forward(q, v, p.forces(t, q, v, tau, z))
            return qdd, v, qdd, p.power(t, q, v, tau, z)
        jac = p.loops(q)[1] if jac is None else jac
        if self.straight_line:
            return self._moved(v, *self._projection(t, q, v, tau, z, jac))
        rhs, reduced, qd, a, R, power, _ = self._projected(t, q, v, tau, z, jac, self.kind)
        return qdd_and_rates(qd, self.solve(reduced, rhs, spd=True), a, R, power)

    def _moved(self, v, qdd, steps, coupling, power) -> tuple:
        """(q̈_ind, q̇ = R q̇_ind, q̈ = R q̈_ind + a, P_nc) from the scalar projection's outputs: R and its products
        on the graph, as the graph's route forms them (its sums start from an exact zero, so a rate that is zero
        is +0, and a run's outputs keep their bytes)."""
        R = self._assembled(coupling)
        return qdd_and_rates(casadi.mtimes(R, v), qdd, self._placed(steps), R, power)

    @property
    def straight_line(self) -> bool:
        """Whether every loop block is factorised by straight-line code: then the projection at a closed q is one
        function of scalar code (`_projection`)."""
        return not self.symbolic and all(len(rows) <= SMALL_BLOCK for rows, _, _ in self.blocks)

    def _projected(self, t, q, v, tau, z, jac, kind: type) -> tuple:
        """(Rᵀ (Q − τ_tree(q, q̇, a)), Rᵀ M R, q̇, a, R, P_nc) at the closed q with the rows' Jacobian `jac`."""
        p = self.pieces
        factorised = _Factorised(self, jac)  # one for the map and the bias
        coupling = self._coupling(factorised, kind)
        R = self._assembled(coupling)
        qd = casadi.mtimes(R, v)
        gamma, forces, power = p.velocity_terms(t, q, qd, tau, z)
        steps = self._block_steps(factorised, -gamma)
        a = self._placed(steps)
        rhs, reduced = p.projected_dynamics(R.sparsity())(q, qd, a, forces, R)
        return rhs, reduced, qd, a, R, power, (coupling, steps)

    @staticmethod
    def _solved(rhs, reduced, qd, a, R, power, blocks) -> tuple:
        """(q̈_ind, the blocks' steps of a, their coupling, P_nc) of `_projected`'s outputs on scalar symbols,
        Rᵀ M R q̈_ind = rhs solved by scalar code (the same operations as the graph's solve); R, a and their
        products are the graph's (`_moved`)."""
        coupling, steps = blocks
        return ldl_solve(reduced, rhs), steps, coupling, power

    @functools.cached_property
    def _projection(self) -> casadi.Function:
        """`_projected` traced on scalar symbols, the blocks' factorisations and solves, the velocity terms and
        the projected dynamics in one function: the motion of the bodies that the velocity terms and the
        inverse dynamics both trace from (q, q̇) is computed once (common subexpressions: the same operations,
        hence the same bits), and the graph's products, copies and calls between them go (the vehicle's state
        equation: 13.6 -> 11.1 µs an evaluation in CVODES' steps)."""
        X, p = casadi.SX, self.pieces
        t, q, v, tau = X.sym("t"), X.sym("q", self.n), X.sym("qd_ind", self.k), X.sym("tau", self.n)
        z, jac = X.sym("z", p.z[0].numel()), X.sym("jac", p.loops.sparsity_out(1))
        outputs = self._solved(*self._projected(t, q, v, tau, z, jac, X))
        names = ["qdd_ind", "steps", "coupling", "power"]
        arguments = [t, q, v, tau, z, jac]
        return casadi.Function(
            "closed_projection", arguments, list(outputs), ["t", "q", "qd_ind", "tau", "z", "jac"], names, _MERGED
        )

    def functions(self) -> list[casadi.Function]:
        n, k, p, X = self.n, self.k, self.pieces, self.kind
        size = self.states.size + p.z[0].numel()
        t, q, v, tau, y = X.sym("t"), X.sym("q", n), X.sym("qd_ind", k), X.sym("tau", n), X.sym("y", size)
        qdd = self.accelerations(t, q, v, tau)[0]
        names = ["t", "q", "qd_ind", "tau"]
        accelerations = casadi.Function("accelerations", [t, q, v, tau], [qdd], names, ["qdd_ind"])
        y_dot, closed, residual, qd, qdd_tree, power = self._state_equation(t, y, tau)
        state_equation = casadi.Function(
            "state_equation", [t, y, tau], [y_dot, closed, residual], ["t", "y", "tau"], ["y_dot", "q", "residual"]
        )
        work_rate = casadi.Function(  # the state equation with the power a CVODES run integrates alongside
            "work_rate", [t, y, tau], [y_dot, power], ["t", "y", "tau"], ["y_dot", "power"]
        )
        motion = casadi.Function(  # a run's outputs: every tree coordinate's rates, evaluated over the samples
            "motion",
            [t, y, tau],
            [casadi.densify(x) for x in (closed, qd, qdd_tree, residual)],
            ["t", "y", "tau"],
            ["q", "qd", "qdd", "residual"],
        )
        if self.dep:
            phi, jac = p.loops(q)
            R, dependent = self.velocity_map(_Factorised(self, jac)), jac[:, self.dep]
        else:
            phi, R, dependent = X(0, 1), X.eye(n), X(0, 0)
        r_matrix = casadi.Function("r_matrix", [q], [casadi.densify(R)], ["q"], ["R"])
        closure = casadi.Function(
            "closure", [q], [casadi.densify(phi), casadi.densify(dependent)], ["q"], ["phi", "phi_q_dependent"]
        )
        return [accelerations, state_equation, work_rate, motion, r_matrix, closure]

    def _state_equation(self, t, y, tau) -> tuple:
        """(ẏ, closed q, max |Φ|, q̇, q̈, P_nc) at the state y: Newton on the dependent coordinates from the integrated q,
        then q̇ = R q̇_ind, q̈_ind and q̈ = R q̈_ind + a; a carried orientation's state read back as ρ, ρ̇ first and its
        rates (the quaternion's, ω̇) written from them (kinematics/ball_states.py)."""
        n, size = self.n, self.states.size
        y, z = (y, None) if y.numel() == size else (y[:size], y[size:])  # the laws' own states at the end
        if not self.states.quaternions:
            closed, residual, qdd, qd, qdd_tree, power = self._closed_motion(t, y[:n], y[n:], tau, z)
            y_dot = casadi.vertcat(qd, qdd)
        else:
            unpack, rate = self._ball_maps()
            q_state, v_state = unpack(y)
            closed, residual, qdd, qd, qdd_tree, power = self._closed_motion(t, q_state, v_state, tau, z)
            y_dot = rate(y, q_state, v_state, qd, qdd)
        if z is not None:
            y_dot = casadi.vertcat(y_dot, self.pieces.law_rates(t, closed, qd, z))
        return casadi.densify(y_dot), closed, casadi.densify(residual), qd, qdd_tree, power

    def _ball_maps(self) -> tuple[casadi.Function, casadi.Function]:
        """The state map's unpack (y -> q, q̇_ind) and rates ((y, q, q̇_ind, q̇, q̈_ind) -> ẏ), traced on scalar
        symbols (the map's arithmetic is elementwise) and called in the graph as one node each."""
        size, n, k = self.states.size, self.n, self.k
        (y_sx, y), (q_sx, q), (v_sx, v), (qd_sx, qd), (a_sx, a) = (
            symbols(name, length) for name, length in (("y", size), ("q", n), ("v", k), ("qd", n), ("a", k))
        )
        q_state, v_state = self.states.unpack(y[None, :], _traced_where)
        unpack = casadi.Function("unpack_state", [y_sx], [to_sx(q_state[0]), to_sx(v_state[0])])
        rates = self.states.rate(y[None, :], q[None, :], v[None, :], qd[None, :], a[None, :])[0]
        return unpack, casadi.Function("state_rates", [y_sx, q_sx, v_sx, qd_sx, a_sx], [to_sx(rates)])

    def series(self) -> casadi.Function:
        """(t, q, q̇, q̈) -> (T, V, Φ, λ of the independent rows, Q, poses, monitors, rates): a simulation's results
        at one sample, λ from Φ_q Φ_qᵀ λ = Φ_q (τ_tree − Q) (closed_loop.joint_reactions)."""
        X, n = self.kind, self.n
        t, q, qd, qdd = X.sym("t"), X.sym("q", n), X.sym("qd", n), X.sym("qdd", n)
        kinetic, potential, poses, phi, jac, needed, Q, monitors, rates = self.pieces.series_terms(t, q, qd, qdd)
        if jac.size1():
            reactions = self.solve(casadi.mtimes(jac, jac.T), casadi.mtimes(jac, needed), spd=True)
        else:
            reactions = X(0, 1)
        outputs = [kinetic, potential, phi, reactions, Q, poses, monitors, rates]
        names = ["kinetic", "potential", "phi", "reactions", "Q", "poses", "monitors", "rates"]
        return casadi.Function(
            "series", [t, q, qd, qdd], [casadi.densify(o) for o in outputs], ["t", "q", "qd", "qdd"], names
        )

    def _closed_motion(self, t, q, v, tau, z) -> tuple:
        """(closed q, max |Φ| there, q̈_ind, q̇, q̈, P_nc) from the integrated q: `_closed`, then `accelerations`.
        Where the projection is scalar code (`straight_line`), the first Newton step and the loops at its q are
        traced into it (`_closing_projection`: those bodies' motion is the dynamics', computed once), and the further
        steps, taken where that q is not closed yet, project again at theirs (`_finish`): the same operations."""
        if not (self.dep and self.straight_line):
            closed, residual, jac = self._closed(q)
            return (closed, residual, *self.accelerations(t, closed, v, tau, jac, z))
        p = self.pieces
        z = self.kind.zeros(p.z[0].numel()) if z is None else z
        q, phi, jac, *projected = self._closing_projection(t, q, v, tau, z)
        closed = casadi.mmax(casadi.fabs(phi)) <= CLOSED * p.mech.length_scale
        q, phi, *projected = self._finish()(closed, q, phi, jac, *projected, t, v, tau, z)
        return q, casadi.mmax(casadi.fabs(phi)), *self._moved(v, *projected)

    @functools.cached_property
    def _closing_projection(self) -> casadi.Function:
        """(t, q, q̇_ind, τ, z) -> (q after the first Newton step, Φ and Φ_q there, then `_projection`'s outputs
        there): one function of scalar code."""
        X, p = casadi.SX, self.pieces
        t, q, v, tau = X.sym("t"), X.sym("q", self.n), X.sym("qd_ind", self.k), X.sym("tau", self.n)
        z = X.sym("z", p.z[0].numel())
        phi, jac = p.loops(q)
        stepped = q - self._dependent_step(_Factorised(self, jac), phi)  # always: its derivative is the projection
        phi, jac = p.loops(stepped)
        outputs = [stepped, phi, jac, *self._solved(*self._projected(t, stepped, v, tau, z, jac, X))]
        return casadi.Function("closing_projection", [t, q, v, tau, z], outputs, _MERGED)

    def _finish(self) -> casadi.Function:
        """(closed, q, Φ, Φ_q, the projection's outputs at q, t, q̇_ind, τ, z) -> (q, Φ, the projection's outputs):
        as they are where `closed`; else NEWTON_STEPS - 1 more Newton steps, as `_closed` takes them, and the
        projection at their q (a switch: neither is computed where the loops are closed)."""
        M, p = casadi.MX, self.pieces
        q, phi = M.sym("q", self.n), M.sym("phi", len(p.rows))
        jac = M.sym("jac", p.loops.sparsity_out(1))
        projected = [M.sym(name, self._projection.sparsity_out(name)) for name in self._projection.name_out()]
        t, v, tau, z = M.sym("t"), M.sym("qd_ind", self.k), M.sym("tau", self.n), M.sym("z", p.z[0].numel())
        arguments = [q, phi, jac, *projected, t, v, tau, z]
        stay = casadi.Function("projected_closed", arguments, [q, phi, *projected])
        stepped = q - self._dependent_step(_Factorised(self, jac), phi)  # the newton switch's step
        stepped_phi, stepped_jac = p.loops(stepped)
        newton, closed = self._newton(), CLOSED * p.mech.length_scale
        for _ in range(NEWTON_STEPS - 2):
            closing = casadi.mmax(casadi.fabs(stepped_phi)) <= closed
            stepped, stepped_phi, stepped_jac = newton(closing, stepped, stepped_phi, stepped_jac)
        again = self._projection(t, stepped, v, tau, z, stepped_jac)
        step = casadi.Function("projected_stepped", arguments, [stepped, stepped_phi, *again])
        return casadi.Function.if_else("projected", stay, step)

    def _closed(self, q) -> tuple:
        """NEWTON_STEPS Newton steps on the dependent coordinates from q: (closed q, max |Φ| there, Φ_q there)."""
        if not self.dep:
            return q, self.kind(1, 1), None
        phi, jac = self.pieces.loops(q)
        q = q - self._dependent_step(_Factorised(self, jac), phi)  # always: its derivative is the projection
        phi, jac = self.pieces.loops(q)
        if self.symbolic:
            for _ in range(NEWTON_STEPS - 1):
                q = q - self._dependent_step(_Factorised(self, jac), phi)
                phi, jac = self.pieces.loops(q)
            return q, casadi.mmax(casadi.fabs(phi)), jac
        newton = self._newton()
        closed = CLOSED * self.pieces.mech.length_scale
        for _ in range(NEWTON_STEPS - 1):
            q, phi, jac = newton(casadi.mmax(casadi.fabs(phi)) <= closed, q, phi, jac)
        return q, casadi.mmax(casadi.fabs(phi)), jac

    def _newton(self) -> casadi.Function:
        """(closed, q, Φ, Φ_q) -> (q, Φ, Φ_q) after one Newton step on the dependent coordinates, or as they
        were where `closed` (a switch: the step's factorisations and the loops' evaluation are skipped)."""
        q, phi = casadi.MX.sym("q", self.n), casadi.MX.sym("phi", len(self.pieces.rows))
        jac = casadi.MX.sym("jac", self.pieces.loops.sparsity_out(1))
        stepped = q - self._dependent_step(_Factorised(self, jac), phi)
        names, out = ["q", "phi", "jac"], ["q_next", "phi_next", "jac_next"]
        step = casadi.Function("newton_step", [q, phi, jac], [stepped, *self.pieces.loops(stepped)], names, out)
        stay = casadi.Function("newton_closed", [q, phi, jac], [q, phi, jac], names, out)
        return casadi.Function.if_else("newton", stay, step)


class _Factorised:
    """J_dep at one configuration, loop block by loop block, each block factorised once for all the solves with
    it, by straight-line code (numerics/small_solves.py): the small ones by a dense Householder QR, the larger ones
    by the operations of CasADi's sparse QR (its results to the bit: the free Delta's 18-row block, 84.5 -> 75 ms a
    2-s run, as the graph's solve made it but factorised once where that factorised at each solve); the symbolic
    graph's by the graph's solve."""

    def __init__(self, graph: _Graph, jac) -> None:
        self.graph, self.jac, self._factors = graph, jac, {}

    def solve(self, block: int, b):
        """J_dep[block]⁻¹ b for b with the block's rows."""
        graph = self.graph
        rows, columns, _ = graph.blocks[block]
        a = self.jac[rows, [graph.dep[c] for c in columns]]
        if graph.symbolic:
            return graph.solve(a, b)
        sparse = len(rows) > SMALL_BLOCK  # CasADi's sparse QR, its own operations as straight-line code
        if block not in self._factors:
            factor = sparse_qr_factor(a.sparsity()) if sparse else householder_factor(len(rows))
            self._factors[block] = factor(a if sparse else casadi.densify(a))
        solve = sparse_qr_solve(a.sparsity(), b.shape[1]) if sparse else householder_solve(len(rows), b.shape[1])
        return solve(*self._factors[block], casadi.densify(b))


def loop_blocks(pattern: casadi.Sparsity, dep: list[int], ind: list[int]) -> list[tuple]:
    """The independent loops' blocks of Φ_q (the rows' Jacobian with its structural zeros): the connected parts
    of the graph joining each row to the dependent coordinates it involves, each as (its rows, the positions of
    its dependent coordinates in `dep`, the positions in `ind` of the independent ones its rows involve). A
    vehicle's four corners give blocks of their own, so each is factorised alone. A part that is not square
    (no unique solve alone) makes the whole one block."""
    rows, columns = pattern.get_triplet()
    parent = list(range(pattern.size1() + len(dep)))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    position = {c: k for k, c in enumerate(dep)}
    for r, c in zip(rows, columns, strict=True):
        if c in position:
            parent[root(r)] = root(pattern.size1() + position[c])
    parts: dict[int, tuple[list[int], list[int]]] = {}
    for r in range(pattern.size1()):
        parts.setdefault(root(r), ([], []))[0].append(r)
    for k in range(len(dep)):
        parts.setdefault(root(pattern.size1() + k), ([], []))[1].append(k)
    if any(len(r) != len(c) for r, c in parts.values()):
        parts = {0: (list(range(pattern.size1())), list(range(len(dep))))}
    independent = {c: k for k, c in enumerate(ind)}
    blocks = []
    for part_rows, part_columns in parts.values():
        members = set(part_rows)
        touched = sorted(
            {independent[c] for r, c in zip(rows, columns, strict=True) if r in members and c in independent}
        )
        blocks.append((part_rows, part_columns, touched))
    return blocks


def qdd_and_rates(qd, qdd, a, R, power) -> tuple:
    """(q̈_ind, q̇, q̈ = R q̈_ind + a, P_nc)."""
    return qdd, qd, casadi.mtimes(R, qdd) + a, power


def _selection(size: int, targets: list[int]) -> casadi.DM:
    """(size, len(targets)): column k a one at row targets[k]."""
    return casadi.DM(casadi.Sparsity.triplet(size, len(targets), targets, list(range(len(targets)))), 1.0)


def _traced_where(x: np.ndarray, a: float, b: float) -> np.ndarray:
    """a where the traced x ≥ 0, else b (rodrigues.from_quaternion's choice of hemisphere)."""
    return np.array([casadi.if_else(value >= 0, a, b) for value in x.ravel()], dtype=object).reshape(x.shape)
