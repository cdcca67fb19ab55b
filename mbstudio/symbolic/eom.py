"""Equations of motion as sympy expressions, from the inertial-parameter regressor.

    M(q) q̈ + c(q, q̇) + g(q) = τ            (tree)
    M q̈ + c + g = τ + Φ_qᵀ λ,  Φ_q q̈ = γ    (closed loop: tree equations and the cut joints' constraints)

The regressor K(q, q̇, q̈) gives τ = K φ, linear in the inertial parameters φ, so one symbolic evaluation
over a batch of n + 2 states yields everything: g = K(q, 0, 0) φ, c = K(q, q̇, 0) φ − g and column j of M
= K(q, 0, e_j) φ − g. This route is used rather than the dynamics functions with symbolic inertia because
every entry comes out as Σ_p c_p(q) φ_p with coefficients c_p free of inertia: each coefficient is a small
trigonometric polynomial that can be simplified on its own (many are identically zero, which only such a
canonical reduction detects), within a size limit, and between coefficients the job can be cancelled.
The dynamics route gives smaller raw expressions before simplification, but mixes the inertia into every
rotated tensor, so nothing is cheap to simplify there and linearity in φ is lost from view.

Every function here is top-level and takes plain data, so a job runner can call it in another process.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
import sympy

from .. import __version__
from ..dynamics.regressor import tree_regressor
from ..kinematics.geometry import GRAVITY_SYMBOL, gravity_symbol
from ..kinematics.mechanism import Mechanism
from ..model.document import Model
from ..model.hashing import model_hash
from ..numerics.backends import Float64, Symbolic
from ..progress import Cancel, Cancelled, Progress

CLOSED_LOOP_NOTE = (
    "closed loop: the projected equations Rᵀ M R q̈_ind + ... need R = ∂q/∂q_ind along the "
    "solution of Φ(q) = 0, which has no closed form in general; given instead are the tree "
    "equations M q̈ + c + g = τ + Φ_qᵀ λ with the constraint Jacobian Φ_q and Φ_q q̈ = γ "
    "(rows `independent_rows` are the independent constraints)"
)


@dataclass
class Monitor:
    """Progress reporting and cancellation polling for one job."""

    progress: Progress | None = None
    cancel: Cancel | None = None

    def report(self, fraction: float, message: str) -> None:
        self.check()
        if self.progress is not None:
            self.progress(min(max(fraction, 0.0), 1.0), message)

    def check(self) -> None:
        if self.cancel is None:
            return
        flag = self.cancel.is_set() if isinstance(self.cancel, threading.Event) else self.cancel()
        if flag:
            raise Cancelled("symbolic equations of motion cancelled")


@dataclass
class EquationsOfMotion:
    """M q̈ + c + g = τ (+ Φ_qᵀ λ for closed loops) in the symbols below; `values` holds the document's
    number for every parameter symbol (geometric and, unless substituted, inertial)."""

    model_name: str
    coordinates: list[sympy.Symbol]
    velocities: list[sympy.Symbol]
    geometric: list[sympy.Symbol]
    inertial: list[sympy.Symbol]  # empty when the document's inertial values were substituted
    mass_matrix: sympy.Matrix
    bias: sympy.Matrix  # c(q, q̇): Coriolis and centrifugal forces, without gravity
    gravity: sympy.Matrix
    values: dict[str, float]
    constraint_jacobian: sympy.Matrix | None = None
    constraint_rhs: sympy.Matrix | None = None  # γ = −Φ̇_q q̇
    constraint_labels: list[str] = field(default_factory=list)
    independent_rows: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.coordinates)

    @property
    def closed(self) -> bool:
        return self.constraint_jacobian is not None

    def groups(self) -> dict[str, sympy.Matrix]:
        """The result matrices by name, as exported."""
        out = {"mass_matrix": self.mass_matrix, "bias": self.bias, "gravity": self.gravity}
        if self.closed:
            out |= {"constraint_jacobian": self.constraint_jacobian, "constraint_rhs": self.constraint_rhs}
        return out


@dataclass
class TrigReducer:
    """Canonical form of polynomials in sin q_k, cos q_k: expanded and reduced modulo sin² + cos² − 1
    (a Gröbner basis, so zero coefficients come out as 0), then trigsimp when the result is small. Expressions
    in a ball joint's rotation parameters, rational functions rather than trigonometric ones, are left as they
    are (trigsimp spent minutes on a spherical pendulum's)."""

    trig: dict
    back: dict
    pythagoras: list
    generators: list
    size_limit: int
    trigsimp_limit: int
    rational: frozenset = frozenset()  # the rotation parameters' symbols

    def __call__(self, expr: sympy.Expr) -> sympy.Expr:
        if self.size_limit < 0 or expr == 0 or expr.free_symbols & self.rational:
            return expr
        size = sympy.count_ops(expr)
        if size > self.size_limit:
            return expr
        reduced = sympy.reduced(expr.xreplace(self.trig), self.pythagoras, *self.generators)[1].xreplace(self.back)
        if sympy.count_ops(reduced) <= self.trigsimp_limit:
            reduced = sympy.trigsimp(reduced)
        # the expanded canonical form can be longer than the nested original, which then shares more in CSE
        return reduced if sympy.count_ops(reduced) <= size else expr


def trig_reducer(mech: Mechanism, coordinates: list[sympy.Symbol], size_limit: int, trigsimp_limit: int) -> TrigReducer:
    """A reducer for the revolute coordinates of the mechanism."""
    revolute = [coordinates[k] for k in mech.tree.angles]
    s = [sympy.Dummy(f"s_{q}") for q in revolute]
    c = [sympy.Dummy(f"c_{q}") for q in revolute]
    trig = {sympy.sin(q): si for q, si in zip(revolute, s, strict=True)}
    trig |= {sympy.cos(q): ci for q, ci in zip(revolute, c, strict=True)}
    pythagoras = [si**2 + ci**2 - 1 for si, ci in zip(s, c, strict=True)]
    rational = frozenset(coordinates[k] for k in mech.tree.ball_coordinates)
    return TrigReducer(trig, {v: k for k, v in trig.items()}, pythagoras, s + c, size_limit, trigsimp_limit, rational)


def state_symbols(mech: Mechanism) -> tuple[list[sympy.Symbol], list[sympy.Symbol]]:
    """q named as the model's coordinates, q̇ as d_<coordinate>."""
    q = [sympy.Symbol(name, real=True) for name in mech.coordinates]
    return q, [sympy.Symbol(f"d_{name}", real=True) for name in mech.coordinates]


def regressor_batch(mech: Mechanism, q: list, qd: list) -> np.ndarray:
    """K at the states (q, 0, 0), (q, q̇, 0) and (q, 0, e_j), j = 1..n: shape (n + 2, n, 10·nb)."""
    n, zero, one = mech.n, sympy.Integer(0), sympy.Integer(1)
    Q = np.empty((n + 2, n), dtype=object)
    Q[:] = q
    QD = np.full((n + 2, n), zero, dtype=object)
    QD[1] = qd
    QDD = np.full((n + 2, n), zero, dtype=object)
    for j in range(n):
        QDD[2 + j, j] = one
    return tree_regressor(mech, Q, QD, QDD)


def inertial_parameters(mech: Mechanism, numeric_inertia: bool) -> tuple[list, list[sympy.Symbol]]:
    """φ as symbols named as in docs/architecture.md (conventions), or the document's values (exact, in the
    geometric symbols)."""
    if numeric_inertia:
        return list(np.concatenate([mech.tree.geometry.inertia(b) for b in mech.model.bodies])), []
    symbols = [sympy.Symbol(name, real=True) for name in mech.model.inertial_parameter_names()]
    return list(symbols), symbols


def linear_combination(coefficients: np.ndarray, phi: list, reduce: TrigReducer, monitor: Monitor) -> sympy.Expr:
    """Σ_p reduce(coefficient_p) φ_p, polling for cancellation between coefficients."""
    terms = []
    for coefficient, parameter in zip(coefficients, phi, strict=True):
        monitor.check()
        if coefficient != 0 and parameter != 0:
            terms.append(reduce(coefficient) * parameter)
    return sympy.Add(*terms)


def document_values(model: Model) -> dict[str, float]:
    """Numbers for every parameter symbol: the geometric parameters, g (gravity's magnitude, where the
    equations name it: kinematics.geometry.gravity_symbol) and the inertial parameters."""
    mech = Mechanism(model, backend=Float64())
    inertia = np.concatenate([mech.tree.geometry.inertia(b) for b in model.bodies]) if model.bodies else []
    named = gravity_symbol(model)
    gravity = {} if named is None else {GRAVITY_SYMBOL: named[1]}
    inertial = dict(zip(model.inertial_parameter_names(), map(float, inertia), strict=True))
    return model.parameter_values() | gravity | inertial


def equations_of_motion(
    model: Model,
    numeric_inertia: bool = False,
    simplify: bool = True,
    size_limit: int = 400,
    trigsimp_limit: int = 40,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> EquationsOfMotion:
    """M(q), c(q, q̇), g(q) (and for closed loops Φ_q, γ) of the document as sympy matrices.

    `simplify`: reduce each coefficient of an inertial parameter whose size (sympy.count_ops) is at most
    `size_limit` to its trigonometric canonical form, trigsimp it when then at most `trigsimp_limit`, and keep
    the result only when it is no longer than the original. `progress(fraction, message)` is called per stage
    and per column of M; `cancel` (a callable or a threading.Event) is polled between coefficients and raises
    Cancelled."""
    monitor, times = Monitor(progress, cancel), {}
    start = time.perf_counter()
    monitor.report(0.0, "kinematics and regressor")
    mech = Mechanism(model, backend=Symbolic())
    q, qd = state_symbols(mech)
    K = regressor_batch(mech, q, qd)
    phi, inertial = inertial_parameters(mech, numeric_inertia)
    times["regressor"] = time.perf_counter() - start
    reduce = trig_reducer(mech, q, size_limit if simplify else -1, trigsimp_limit)  # -1: reduce nothing
    n = mech.n
    stages = n + 2 + (1 if mech.constraints.m else 0)
    gravity = sympy.Matrix([linear_combination(K[0, i], phi, reduce, monitor) for i in range(n)])
    monitor.report(0.1 + 0.85 / stages, "gravity")
    bias = sympy.Matrix([linear_combination(K[1, i] - K[0, i], phi, reduce, monitor) for i in range(n)])
    monitor.report(0.1 + 0.85 * 2 / stages, "bias")
    M = sympy.zeros(n, n)
    for j in range(n):
        for i in range(j + 1):  # M is symmetric: the upper triangle from the columns
            M[i, j] = M[j, i] = linear_combination(K[2 + j, i] - K[0, i], phi, reduce, monitor)
        monitor.report(0.1 + 0.85 * (3 + j) / stages, f"mass matrix column {j + 1} of {n}")
    times["equations"] = time.perf_counter() - start - times["regressor"]
    eom = EquationsOfMotion(
        model.name, q, qd, geometric_symbols(mech), inertial, M, bias, gravity, document_values(model)
    )
    if mech.constraints.m:
        add_constraints(eom, mech, reduce, monitor)
        monitor.report(0.95, "constraint Jacobian")
    times["total"] = time.perf_counter() - start
    eom.provenance = {
        "model": model.name,
        "model_hash": model_hash(model)[:16],
        "method": "symbolic regressor",
        "numeric_inertia": numeric_inertia,
        "simplify": simplify,
        "size_limit": size_limit,
        "trigsimp_limit": trigsimp_limit,
        "seconds": times,
        "software": f"mbstudio {__version__}",
    }
    monitor.report(1.0, "equations of motion done")
    return eom


def geometric_symbols(mech: Mechanism) -> list[sympy.Symbol]:
    """The named geometric parameters as the Symbolic back-end gives them, document order, then g where the
    equations name gravity's magnitude (kinematics.geometry.gravity_symbol)."""
    named = [mech.tree.geometry.symbols[p.name] for p in mech.model.parameters]
    gravity = gravity_symbol(mech.model)
    return named + ([] if gravity is None else [mech.backend.parameter(GRAVITY_SYMBOL, gravity[1])])


def add_constraints(eom: EquationsOfMotion, mech: Mechanism, reduce: TrigReducer, monitor: Monitor) -> None:
    """Φ_q and γ = −Φ̇_q q̇ of the cut joints, and the note that the projected equations are not given."""
    q = np.array([eom.coordinates], dtype=object)
    qd = np.array([eom.velocities], dtype=object)
    jacobian = mech.constraint_jacobian(q)[0]
    with mech.backend.context():
        gamma = -mech.constraints.acceleration_bias(mech.motion(q, qd))[0]
    rows = []
    for r in range(mech.constraints.m):
        monitor.check()
        rows.append([reduce(e) for e in jacobian[r]])
    eom.constraint_jacobian = sympy.Matrix(rows)
    eom.constraint_rhs = sympy.Matrix([reduce(e) for e in gamma])
    eom.constraint_labels = list(mech.constraints.labels)
    eom.independent_rows = list(mech.partition.rows)
    eom.notes.append(CLOSED_LOOP_NOTE)
