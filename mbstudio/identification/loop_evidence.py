"""Identities of the bodies' motions, decided in two precisions at random assembled states.

Closed loops impose what no single joint shows: a parallelogram's coupler only translates, the opposite rods of a
parallelogram turn together, the two rods of a symmetric trapezoid move as mirror images. The symbolic route
(`ground_motion`, `motion_copies`) learns such facts by testing exact candidates (a frame axis, a joint centre, a
rotation between two bodies) at states where the loops are closed:

- in float64 a relation is only *proposed*: its residual, relative to the scale of the motion, is below SCREEN;
- it *holds* when, at the same states closed again at DIGITS digits, the residual falls to the accuracy those
  states reached (their closure residual, at least 10^−DIGITS), give or take the rounding's growth
  (`vanishing_bound`): an identity of the kinematics falls with the precision, while a small but real effect
  stays where it is, down to 10^-30 of the motion (IRSBot-2's distal rods turn about their own axes at 1e-5 of
  their swing; the UR5's right angles, written as 1.57079632679, leave products of two 5e-12 cosines, 2e-23).

`lagrangian_residuals` then checks a direction of parameter space the same way, from the kinetic and potential
energy (energy.py): it is a null vector of the observation matrix exactly when T does not change along it and V
changes by a constant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import gmpy2
import numpy as np
import sympy

from ..kinematics.mechanism import Mechanism
from ..numerics.spatial import cross, dot, matvec
from .energy import energy_rows, random_states

SCREEN = 1e-6  # float64 residual (relative) below which a relation is tested at DIGITS digits
DIGITS = 40
SAMPLES = 12  # float64 states; the first VP_SAMPLES are closed again at DIGITS digits
VP_SAMPLES = 6


def vanishing_bound(accuracy: float, digits: int = DIGITS) -> float:
    """The largest relative residual of an identity at `digits` digits on states of relative `accuracy`: three
    quarters of the way down, on a log scale, from the motion's scale to the accuracy reached (10^-30 at 40
    digits). The 10 orders above the accuracy cover the rounding's growth through the energies and the loops'
    conditioning (identities measure 10^-39 on the samples); a real effect is never taken for an identity unless
    it is 10^30 times smaller than the motion, where a halfway bound (10^-20) took the UR5's 2e-23."""
    return max(accuracy, 10.0**-digits) ** 0.75


@dataclass
class BodyMotion:
    """One body at N states: rotation (body axes -> ground), origin position (ground), angular velocity and
    origin velocity (body axes)."""

    R: np.ndarray
    p: np.ndarray
    w: np.ndarray
    v: np.ndarray


@dataclass
class Motions:
    """Every body's motion at N assembled states, in one arithmetic (float64 or MPFR at `digits`)."""

    digits: int
    bodies: dict[str, BodyMotion]
    gravity: np.ndarray
    values: dict  # geometric symbol -> its value in this arithmetic's reading (exact rationals for MPFR)
    accuracy: float  # relative closure residual the states reached
    angular_scale: float
    speed_scale: float
    backend: object = field(repr=False)  # arithmetic rounds to `digits` only inside backend.context()
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def vp(self) -> bool:
        return self.digits > 16

    def number(self, expr):
        """An exact geometric expression in this arithmetic."""
        key = sympy.sympify(expr)
        if key not in self._cache:
            value = key.subs(self.values)
            with self.backend.context():  # an mpfr takes the precision of the context it is made in
                self._cache[key] = gmpy2.mpfr(str(sympy.N(value, self.digits + 10))) if self.vp else float(value)
        return self._cache[key]

    def vector(self, exprs: Iterable) -> np.ndarray:
        return np.array([self.number(e) for e in exprs], dtype=object if self.vp else float)

    def matrix(self, m: sympy.Matrix) -> np.ndarray:
        return self.vector(list(m)).reshape(m.shape)

    def world_w(self, label: str) -> np.ndarray:
        b = self.bodies[label]
        return matvec(b.R, b.w)

    def point_velocity(self, label: str, x: np.ndarray) -> np.ndarray:
        """Velocity (ground axes) of the body point x (body axes)."""
        b = self.bodies[label]
        return matvec(b.R, b.v + cross(b.w, x))


@dataclass
class LoopEvidence:
    """The same random assembled states in float64 and at DIGITS digits; `holds` decides a relation."""

    mechanism: Mechanism  # float64
    float64: Motions
    vp: Motions | None
    notes: list[str]
    vp_mechanism: Mechanism | None = None

    def holds(self, residual: Callable[[Motions], object], scale: str = "angular") -> bool:
        """Whether `residual(motions)` (an array, any shape) vanishes identically: below SCREEN relative in
        float64, then below `vanishing_bound` relative at DIGITS digits (module docstring). `scale`: "angular" or
        "speed", what the residual is measured against."""
        if not self._small(self.float64, residual, scale, SCREEN):
            return False
        return self.vp is not None and self._small(self.vp, residual, scale, None)

    @staticmethod
    def _small(m: Motions, residual, scale: str, threshold: float | None) -> bool:
        size = getattr(m, f"{scale}_scale")
        if size == 0:
            return True
        bound = (threshold if threshold is not None else vanishing_bound(m.accuracy, m.digits)) * size
        with m.backend.context():
            r = np.asarray(residual(m), dtype=object).ravel()
        return all(abs(x) <= bound for x in r)

    def unchanged(self, float64: float, vp: float | None) -> bool:
        """Whether relative energy changes (`lagrangian_residuals`) vanish by the rules of `holds`."""
        if float64 > SCREEN or self.vp is None or vp is None:
            return False
        return vp <= vanishing_bound(self.vp.accuracy, self.vp.digits)

    def initial_closes(self) -> bool:
        """Whether the document's initial coordinates, read as the decimals they are, close every loop: their
        closure residual at DIGITS digits is below `vanishing_bound` of the mechanism's length scale (the exact
        tree there then gives the bodies' constant relative rotations exactly)."""
        if self.vp_mechanism is None:
            return False
        vm = self.vp_mechanism
        with vm.backend.context():
            residual = vm.residual(vm.tree.initial_coordinates()[None, :])
        return all(abs(x) <= vanishing_bound(0.0) * vm.length_scale for x in residual.ravel())


def loop_evidence(mech: Mechanism, seed: int = 7) -> LoopEvidence:
    """Random assembled states of the float64 mechanism `mech`, and the first VP_SAMPLES of them closed again
    at DIGITS digits (assembly, velocities and motion all at that precision)."""
    notes: list[str] = []
    q, qd = random_states(mech, SAMPLES, seed)
    model = mech.model
    exact = {sympy.Symbol(p.name, real=True): sympy.Rational(repr(p.value)) for p in model.parameters}
    floats = {s: float(v) for s, v in exact.items()}
    first = _motions(mech, q, qd, floats, 16)
    if len(q) == 0:
        return LoopEvidence(mech, first, None, ["no random state assembles: no loop-imposed motion is looked for"])
    vm = Mechanism(model, precision=DIGITS)
    ind = list(mech.partition.independent)
    with vm.backend.context():
        qv = vm.assemble(q[:VP_SAMPLES, ind], guess=q[:VP_SAMPLES], strict=False)
        closed = vm.last_report.converged if vm.partition.dependent else np.ones(len(qv), bool)
        if not closed.any():
            notes.append(f"no state closes at {DIGITS} digits: loop-imposed motions are not confirmed")
            return LoopEvidence(mech, first, None, notes, vm)
        qv = qv[closed]
        second = _motions(vm, qv, vm.velocities(qv, qd[:VP_SAMPLES][closed][:, ind]), exact, DIGITS)
    return LoopEvidence(mech, first, second, notes, vm)


def _motions(mech: Mechanism, q, qd, values: dict, digits: int) -> Motions:
    st = mech.motion(q, qd)
    bodies = {}
    for body in mech.model.bodies:
        i = mech.tree.body_index(body.label)
        R = st.R[i]
        Rt = np.swapaxes(R, 1, 2)
        bodies[body.label] = BodyMotion(R, st.p[i], matvec(Rt, st.w[i]), matvec(Rt, st.v[i]))
    gravity = np.asarray(mech.tree.geometry.gravity())
    length = mech.length_scale
    accuracy = float(np.abs(mech.residual(q)).max()) / length if mech.partition.dependent and len(q) else 0.0
    w = max([0.0, *(float(_norm(b.w)) for b in bodies.values())])
    v = max([0.0, *(float(_norm(b.v)) for b in bodies.values())]) + w * length
    return Motions(digits, bodies, gravity, values, accuracy, w, v, mech.backend)


def _norm(x: np.ndarray):
    """The largest Euclidean norm of the rows of x (N, 3), in x's arithmetic."""
    return max(dot(x, x), default=0) ** 0.5


# ---------------------------------------------------------------------------------------- directions
def lagrangian_residuals(
    evidence: LoopEvidence, names: list[str], directions: list[dict[str, sympy.Expr]]
) -> list[tuple[float, float | None]]:
    """For each direction (parameter name -> exact coefficient): the largest change of T and of V's variation
    along it, relative to the energies' scale, in float64 and at DIGITS digits (None without VP states)."""
    out = []
    per_precision = [_energy_changes(m, names, directions) for m in (evidence.float64, evidence.vp) if m is not None]
    for k in range(len(directions)):
        values = [changes[k] for changes in per_precision]
        out.append((values[0], values[1] if len(values) > 1 else None))
    return out


def _energy_changes(m: Motions, names: list[str], directions: list[dict]) -> list[float]:
    index = {n: i for i, n in enumerate(names)}
    with m.backend.context():
        blocks = [energy_rows(b.R, b.p, b.w, b.v, m.gravity) for b in m.bodies.values()]  # names' order
        T = np.concatenate([t for t, _ in blocks], axis=1)
        V = np.concatenate([v for _, v in blocks], axis=1)
        scale = max(float(np.abs(T).max()), float(np.abs(V).max()), 1e-300) if T.size else 1.0
        out = []
        for d in directions:
            columns, coefficients = [index[n] for n in d], m.vector(d.values())
            dT, dV = T[:, columns] @ coefficients, V[:, columns] @ coefficients
            change = max([abs(x) for x in dT] + [abs(x - dV[0]) for x in dV], default=0)
            out.append(float(change) / scale)
    return out
