"""Applied forces: the document's force elements as tree generalized forces Q (N, n), and their potential.

Gravity is not here: the tree dynamics apply it (and `gravity_potential` gives its energy). Each element
maps to Q through the virtual work of its force: a force F at a world point P of a body gives Q = J_Pᵀ F,
a force along a coordinate is that coordinate's entry of Q. Element values (stiffness, damping, ...) are
expressions in the parameters, evaluated once per back-end; time functions are expressions in `t` too.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..kinematics.tree import MotionState
from ..model.document import Actuator, JointFriction, JointSpringDamper, PointForce, SpringDamper
from ..model.expressions import evaluate, names
from ..numerics.compiled import over_times, piecewise_linear
from ..numerics.spatial import dot
from .mass_matrix import mass_matrix
from .spatial_tree import body_inertia


class AppliedForces:
    """The force elements of a mechanism's document (or the given list) in the mechanism's back-end."""

    def __init__(self, mech: Mechanism, elements: list | None = None) -> None:
        self.mech = mech
        self.elements = list(mech.model.forces if elements is None else elements)
        self.geometry = mech.tree.geometry

    # ------------------------------------------------------------------ values
    def value(self, expr, t=None):
        """An element's expression; `t` (a float, or the compiled engine's time symbol) is the time for time
        functions."""
        b = self.mech.backend
        if t is not None:
            t = b.scalar(t) if isinstance(t, numbers.Real) else t
        symbols = self.geometry.symbols if t is None else {**self.geometry.symbols, "t": t}
        return evaluate(expr, b.scalar, symbols, b.functions)

    def actuator_value(self, element: Actuator, t) -> np.ndarray:
        """The actuator's force at the times t (N,): its formula, or its table interpolated linearly
        (held constant outside the table)."""
        times = _instants(t)
        if element.table is not None:
            table = np.asarray(element.table, dtype=float)
            if any(isinstance(ti, numbers.Real) for ti in times):
                return self.mech.backend.asarray(np.interp(times, table[:, 0], table[:, 1]))
            return self.mech.backend.asarray([piecewise_linear(ti, table[:, 0], table[:, 1]) for ti in times])
        if self.mech.backend.name == "float64" and len(times) > 1:
            values = over_times(self.geometry.symbols, element.formula, np.asarray(times, dtype=float))
            if np.isfinite(values).all():  # else one at a time, for the evaluator's message on the culprit
                return values
        return self.mech.backend.asarray([self.value(element.formula, ti) for ti in times])

    def is_time_dependent(self, element) -> bool:
        if isinstance(element, Actuator):
            return element.table is not None or "t" in names(element.formula)
        return isinstance(element, PointForce) and any("t" in names(e) for e in element.force)

    # ------------------------------------------------------------------ generalized forces
    def generalized(self, t, q, qd) -> np.ndarray:
        """Q (N, n) of all elements at time(s) t (scalar or (N,)), coordinates q and velocities q̇ (N, n)."""
        mech = self.mech
        with mech.backend.context():
            q, qd = mech.as_batch(q), mech.as_batch(qd)
            Q = mech.backend.zeros(q.shape)
            st = mech.tree.motion(q, qd) if self.elements else None
            for element in self.elements:
                Q = Q + self.of_element(element, t, q, qd, st)
            return Q

    def of_element(self, element, t, q, qd, st: MotionState | None = None) -> np.ndarray:
        """Q (N, n) of one element."""
        mech = self.mech
        with mech.backend.context():
            q, qd = mech.as_batch(q), mech.as_batch(qd)
            st = mech.tree.motion(q, qd) if st is None else st
            if isinstance(element, SpringDamper):
                return self._spring_damper(element, st, qd)
            if isinstance(element, PointForce):
                return self._point_force(element, t, st)
            Q = mech.backend.zeros(q.shape)
            k = mech.coordinates.index(element.coordinate)
            Q[:, k] = self.coordinate_force(element, t, q[:, k], qd[:, k])
            return Q

    def coordinate_force(self, element, t, x, v):
        """The force (N,) of a joint spring-damper, joint friction or actuator at its coordinate's values x and
        rates v (N,), at the time(s) t."""
        if isinstance(element, JointSpringDamper):
            return -self.value(element.stiffness) * (x - self.value(element.rest)) - self.value(element.damping) * v
        if isinstance(element, JointFriction):
            smooth = self.mech.backend.tanh(v / self.value(element.velocity_scale))
            return -self.value(element.viscous) * v - self.value(element.coulomb) * smooth
        return np.broadcast_to(self.actuator_value(element, t), x.shape)

    def _line(self, element: SpringDamper, st: MotionState):
        """Length L (N,) and dL/dq (N, n) of the line from point 1 to point 2."""
        (p1, J1), (p2, J2) = (
            self._point(st, element.body1, element.point1),
            self._point(st, element.body2, element.point2),
        )
        d = p2 - p1
        length = self.mech.backend.sqrt(dot(d, d))
        u = d / length[:, None]
        return length, (u[:, :, None] * (J2 - J1)).sum(axis=1)

    def _point(self, st: MotionState, label: str, point: str) -> tuple[np.ndarray, np.ndarray]:
        """World position (N, 3) and Jacobian (N, 3, n) of a named body point."""
        tree = self.mech.tree
        i = tree.body_index(label)
        local = self.geometry.point(self.mech.model.body(label), point)
        world = st.p[i] + (st.R[i] * local[None, None, :]).sum(axis=2)
        return world, tree.point_jacobian(st, i, world)

    def _spring_damper(self, element: SpringDamper, st: MotionState, qd: np.ndarray) -> np.ndarray:
        """Tension f = k (L − L₀) + c L̇ pulls the points together: Q = −f ∂L/∂q."""
        length, dL = self._line(element, st)
        return -self.tension(element, length, (dL * qd).sum(axis=1))[:, None] * dL

    def tension(self, element: SpringDamper, length: np.ndarray, rate: np.ndarray) -> np.ndarray:
        """k (L − L₀) + c L̇ at lengths L and rates L̇: positive pulls the two points together."""
        k, c, free = (self.value(x) for x in (element.stiffness, element.damping, element.length))
        return k * (length - free) + c * rate

    def _point_force(self, element: PointForce, t, st: MotionState) -> np.ndarray:
        """Q = J_Pᵀ F for the world force F(t) at the body point P."""
        world, J = self._point(st, element.body, element.point)
        return (J * self.world_force(element, t, len(world))[:, :, None]).sum(axis=1)

    def world_force(self, element: PointForce, t, count: int) -> np.ndarray:
        """F (count, 3) at the time(s) t."""
        times = _instants(0.0 if t is None else t, count)
        return self.mech.backend.asarray([[self.value(e, ti) for e in element.force] for ti in times])

    # ------------------------------------------------------------------ energy
    def potential(self, q) -> np.ndarray:
        """V (N,) of the springs and of the constant forces (−F·r_P, −τ q: a constant force is conservative)."""
        mech = self.mech
        with mech.backend.context():
            q = mech.as_batch(q)
            st = mech.tree.motion(q)
            V = mech.backend.zeros(len(q))
            for element in self.elements:
                if isinstance(element, SpringDamper):
                    stretch = self._line(element, st)[0] - self.value(element.length)
                    V = V + self.value(element.stiffness) * stretch * stretch / 2
                elif isinstance(element, JointSpringDamper):
                    stretch = q[:, mech.coordinates.index(element.coordinate)] - self.value(element.rest)
                    V = V + self.value(element.stiffness) * stretch * stretch / 2
                elif isinstance(element, PointForce) and not self.is_time_dependent(element):
                    world = self._point(st, element.body, element.point)[0]
                    V = V - dot(self.world_force(element, None, len(q)), world)
                elif isinstance(element, Actuator) and not self.is_time_dependent(element):
                    V = V - self.actuator_value(element, 0.0) * q[:, mech.coordinates.index(element.coordinate)]
            return V


def kinetic_energy(mech: Mechanism, q, qd) -> np.ndarray:
    """T = ½ q̇ᵀ M q̇ (N,)."""
    with mech.backend.context():
        qd = mech.as_batch(qd)
        return (qd * (mass_matrix(mech, q) * qd[:, None, :]).sum(axis=2)).sum(axis=1) / 2


def gravity_potential(mech: Mechanism, q) -> np.ndarray:
    """V_g = −g · Σ m_b c_b (N,), zero with every centre of mass at the world origin."""
    with mech.backend.context():
        st = mech.motion(q)
        g = mech.tree.geometry.gravity()
        first_moment = sum(body_inertia(mech, st, i).c for i in range(1, len(mech.tree.body_labels)))
        return -(g[:, None] * first_moment).sum(axis=0)


def _instants(t, count: int | None = None) -> list:
    """The times as a list of floats, or of the compiled engine's time symbol as it is."""
    times = np.atleast_1d(np.asarray(t, dtype=object))
    if count is not None:
        times = np.broadcast_to(times, (count,))
    return [float(ti) if isinstance(ti, numbers.Real) else ti for ti in times]
