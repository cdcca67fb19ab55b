"""Applied forces: the document's force elements as tree generalized forces Q (N, n), and their potential.

Gravity is not here: the tree dynamics apply it (and `gravity_potential` gives its energy). Each element
maps to Q through the virtual work of its force: a force F at a world point P of a body gives Q = J_Pᵀ F,
a force along a coordinate is that coordinate's entry of Q. Element values (stiffness, damping, ...) are
expressions in the parameters, evaluated once per back-end; time functions are expressions in `t` too.

Compliant stops of the coordinates (document: `Coordinate.stop`) join the elements as `CoordinateStop`s, and
tyres press on the model's road: both through `contact_force`, a spring-damper that only pushes, so that they
are traced into the compiled engine like any other force.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..kinematics.tree import MotionState
from ..model.document import (
    Actuator,
    CompliantStop,
    Coordinate,
    Joint,
    JointFriction,
    JointSpringDamper,
    PointForce,
    SpringDamper,
    Tyre,
)
from ..model.errors import ModelError
from ..model.expressions import evaluate, names
from ..numerics.compiled import over_times, piecewise_linear
from ..numerics.spatial import dot
from .mass_matrix import mass_matrix
from .road_profile import float_distances, smooth_height_and_slope
from .spatial_tree import body_inertia


@dataclass(frozen=True)
class CoordinateStop:
    """A coordinate's compliant stop as a force element: it pushes the coordinate back inside [lower, upper]
    (either may be None) by the contact law of `contact_force`. Named `stop:<coordinate>`, as its column."""

    name: str
    coordinate: str
    lower: float | None
    upper: float | None
    stop: CompliantStop


def compliant_stops(mech: Mechanism) -> list[CoordinateStop]:
    """The compliant stops of the document's coordinates, as force elements."""
    return [
        CoordinateStop(f"stop:{c.name}", c.name, c.min, c.max, c.stop)
        for joint, c in stopped_coordinates(mech)
        if isinstance(c.stop, CompliantStop)
    ]


def stopped_coordinates(mech: Mechanism) -> list[tuple[Joint, Coordinate]]:
    """(joint, coordinate) of every coordinate with a stop; a ModelError for one of a cut joint, whose coordinates
    the loops decide and the motion does not carry."""
    out = [(j, c) for j in mech.model.joints for c in j.coordinates if c.stop is not None]
    for joint, c in out:
        if c.name not in mech.coordinates:
            raise ModelError(
                f"joint '{joint.name}' coordinate '{c.name}'.stop",
                "is on a cut joint of the spanning tree, whose coordinates the motion does not carry",
                None,
                'a stop on a tree joint\'s coordinate: mark another joint of its loop as the cut one ("cut": true)',
            )
    return out


def contact_force(stiffness, damping, engagement, depth, rate):
    """A contact that only pushes: max(0, k δ + c s(δ) δ̇) at penetrations δ > 0, 0 otherwise, where the damping's
    share s(δ) = 3u² − 2u³, u = min(δ / d, 1), rises smoothly from 0 at contact to 1 at the engagement distance d
    (so the force does not jump when contact begins). Written with |x| alone, which every back-end has."""
    inside = _positive(depth)
    u = inside / engagement
    u = u - _positive(u - 1)
    return _positive(stiffness * inside + damping * u * u * (3 - 2 * u) * rate)


def _positive(x):
    """max(x, 0), elementwise, in any back-end."""
    numeric = isinstance(x, np.ndarray) and x.dtype.kind != "O"
    return (x + (np.abs(x) if numeric else _element_abs(x))) / 2


# |x| of each object: CasADi before 3.8 gives its symbols fabs() but no abs()
_element_abs = np.frompyfunc(lambda e: e.fabs() if hasattr(e, "fabs") else abs(e), 1, 1)


class AppliedForces:
    """The force elements of a mechanism's document (or the given list) in the mechanism's back-end; the
    document's own list gains its coordinates' compliant stops."""

    def __init__(self, mech: Mechanism, elements: list | None = None) -> None:
        self.mech = mech
        own = elements is None
        self.elements = list(mech.model.forces if own else elements) + (compliant_stops(mech) if own else [])
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
        if element.table is None:
            return self.time_function(element.formula, t)
        table = np.asarray(element.table, dtype=float)
        return self.table_value(table[:, 0], table[:, 1], _instants(t))

    def table_value(self, xs: np.ndarray, ys: np.ndarray, at: list) -> np.ndarray:
        """The table (xs, ys) interpolated linearly at the arguments `at` (floats or traced symbols), held beyond
        its ends."""
        if any(isinstance(x, numbers.Real) for x in at):
            return self.mech.backend.asarray(np.interp(np.asarray(at, dtype=float), xs, ys))
        return self.mech.backend.asarray([piecewise_linear(x, xs, ys) for x in at])

    def time_function(self, formula, t) -> np.ndarray:
        """An expression in the parameters and the time at the times t (N,)."""
        times = _instants(t)
        if self.mech.backend.name == "float64" and len(times) > 1:
            values = over_times(self.geometry.symbols, formula, np.asarray(times, dtype=float))
            if np.isfinite(values).all():  # else one at a time, for the evaluator's message on the culprit
                return values
        return self.mech.backend.asarray([self.value(formula, ti) for ti in times])

    def is_time_dependent(self, element) -> bool:
        if isinstance(element, Actuator):
            return element.table is not None or "t" in names(element.formula)
        if isinstance(element, JointSpringDamper):
            return "t" in names(element.rest)
        if isinstance(element, Tyre):
            return self.mech.model.road is not None and self.value(self.mech.model.road.speed) != 0
        return isinstance(element, PointForce) and any("t" in names(e) for e in element.force)

    def has_potential(self, element) -> bool:
        """Whether `potential` counts the element's rest part (its force at q̇ = 0): springs, stops, tyres on a
        still road, constant forces. The whole power of the others (dampers apart) is work done on the model."""
        if isinstance(element, JointFriction):
            return False
        return not self.is_time_dependent(element)

    # ------------------------------------------------------------------ generalized forces
    def generalized(self, t, q, qd) -> np.ndarray:
        """Q (N, n) of all elements at time(s) t (scalar or (N,)), coordinates q and velocities q̇ (N, n)."""
        mech = self.mech
        with mech.backend.context():
            q, qd = mech.as_batch(q), mech.as_batch(qd)
            Q = mech.backend.zeros(q.shape)
            st = self.placed(q)
            for element in self.elements:
                Q = Q + self.of_element(element, t, q, qd, st)
            return Q

    def element_power(self, t, q, qd, st: MotionState | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(P_nc (N,), Σ Q_e (N, n)): the power of the force elements beyond their potential's, and their generalized
        forces. An element with a potential (`has_potential`) loses its rest part, its force at q̇ = 0, which the
        potential energy holds; the whole power of the others counts. `st`: the poses at q (`placed`)."""
        with self.mech.backend.context():
            q, qd = self.mech.as_batch(q), self.mech.as_batch(qd)
            st = self.placed(q) if st is None else st  # once for every element
            power, elements = self.mech.backend.zeros(len(q)), self.mech.backend.zeros(q.shape)
            for element in self.elements:
                Q_e = self.of_element(element, t, q, qd, st)
                elements = elements + Q_e
                if self.has_potential(element):
                    Q_e = Q_e - self.of_element(element, t, q, self.mech.backend.zeros(qd.shape), st)
                power = power + (Q_e * qd).sum(axis=1)
            return power, elements

    def placed(self, q) -> MotionState | None:
        """The bodies' poses at q (N, n) where an element acts at a body point (its rates come from J q̇), once
        for all elements; None where they all act on coordinates."""
        if any(isinstance(e, SpringDamper | PointForce | Tyre) for e in self.elements):
            return self.mech.tree.motion(self.mech.as_batch(q))
        return None

    def of_element(self, element, t, q, qd, st: MotionState | None = None) -> np.ndarray:
        """Q (N, n) of one element; `st` the poses at q (`placed`) when the caller has them."""
        mech = self.mech
        with mech.backend.context():
            q, qd = mech.as_batch(q), mech.as_batch(qd)
            if isinstance(element, SpringDamper | PointForce | Tyre):
                st = mech.tree.motion(q) if st is None else st
            if isinstance(element, SpringDamper):
                return self._spring_damper(element, st, qd)
            if isinstance(element, PointForce):
                return self._point_force(element, t, st)
            if isinstance(element, Tyre):
                return self._tyre(element, t, st, qd)
            Q = mech.backend.zeros(q.shape)
            k = mech.coordinates.index(element.coordinate)
            Q[:, k] = self.coordinate_force(element, t, q[:, k], qd[:, k])
            return Q

    def coordinate_force(self, element, t, x, v):
        """The force (N,) of a joint spring-damper, joint friction, actuator or compliant stop at its coordinate's
        values x and rates v (N,), at the time(s) t."""
        if isinstance(element, JointSpringDamper):
            rest = self.time_function(element.rest, t) if self.is_time_dependent(element) else self.value(element.rest)
            return -self.value(element.stiffness) * (x - rest) - self.value(element.damping) * v
        if isinstance(element, CoordinateStop):
            return self.stop_force(element, x, v)
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

    def stop_force(self, element: CoordinateStop, x, v):
        """The compliant stop's push (N,) on its coordinate: up from `lower`, down from `upper`."""
        law = [self.value(getattr(element.stop, key)) for key in ("stiffness", "damping", "engagement")]
        force = self.mech.backend.zeros(np.shape(x))
        if element.lower is not None:
            force = force + contact_force(*law, element.lower - x, -v)
        if element.upper is not None:
            force = force - contact_force(*law, x - element.upper, v)
        return force

    def _tyre(self, element: Tyre, t, st: MotionState, qd: np.ndarray) -> np.ndarray:
        """Q = J_zᵀ F for the tyre's vertical push F on the wheel centre."""
        centre, J = self._point(st, element.body, element.point)
        velocity = (J * qd[:, None, :]).sum(axis=2)
        return self.tyre_load(element, t, centre, velocity)[:, None] * J[:, 2, :]

    def tyre_load(self, element: Tyre, t, centre: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """The tyre's vertical push (N,) for wheel centres at `centre` (N, 3) moving at `velocity` (N, 3)."""
        height, slope, speed = self.road(t, centre[:, 0])
        depth = self.value(element.radius) + height - centre[:, 2]
        rate = slope * (velocity[:, 0] + speed) - velocity[:, 2]
        law = [self.value(getattr(element, key)) for key in ("stiffness", "damping", "engagement")]
        return contact_force(*law, depth, rate)

    def road(self, t, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, object]:
        """The road's height and slope (N,) under world x positions (N,) at the time(s) t, and its speed: the
        profile at the travelled distance s = x + speed t (flat at 0 without a road), its rows joined by straight
        lines or smoothly (road_profile.py)."""
        road = self.mech.model.road
        if road is None:
            return self.mech.backend.zeros(len(x)), self.mech.backend.zeros(len(x)), 0.0
        speed = self.value(road.speed)
        s = x + speed * self.mech.backend.asarray(_instants(0.0 if t is None else t, len(x))) if speed != 0 else x
        table = np.asarray(road.profile, dtype=float)
        xs, zs = table[:, 0], table[:, 1]
        if road.interpolation == "smooth":
            return (*smooth_height_and_slope(xs, zs, s, self.mech.backend), speed)
        slopes = np.diff(zs) / np.diff(xs)
        return self.table_value(xs, zs, list(s)), self._slope(xs, slopes, s), speed

    def _slope(self, xs: np.ndarray, slopes: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The profile's slope at distances s: each segment's on [x_i, x_i+1), 0 beyond the ends."""
        b = self.mech.backend
        if b.name == "casadi":
            segments = list(zip(slopes, xs[:-1], xs[1:], strict=True))
            return b.asarray([sum(m * (si >= x0) * (si < x1) for m, x0, x1 in segments) for si in s])
        at = float_distances(s)
        inside = (at >= xs[0]) & (at < xs[-1])
        segment = np.clip(np.searchsorted(xs, at, side="right") - 1, 0, max(len(slopes) - 1, 0))
        return b.asarray(np.where(inside, slopes[segment] if len(slopes) else 0.0, 0.0))

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
                elif isinstance(element, JointSpringDamper) and not self.is_time_dependent(element):
                    stretch = q[:, mech.coordinates.index(element.coordinate)] - self.value(element.rest)
                    V = V + self.value(element.stiffness) * stretch * stretch / 2
                elif isinstance(element, CoordinateStop):
                    V = V + self.stop_energy(element, q[:, mech.coordinates.index(element.coordinate)])
                elif isinstance(element, Tyre) and not self.is_time_dependent(element):
                    V = V + self._tyre_energy(element, st)
                elif isinstance(element, PointForce) and not self.is_time_dependent(element):
                    world = self._point(st, element.body, element.point)[0]
                    V = V - dot(self.world_force(element, None, len(q)), world)
                elif isinstance(element, Actuator) and not self.is_time_dependent(element):
                    V = V - self.actuator_value(element, 0.0) * q[:, mech.coordinates.index(element.coordinate)]
            return V

    def stop_energy(self, element: CoordinateStop, x):
        """½ k δ² of the compliant stop's spring at each limit passed, at the coordinate's value(s) x."""
        k, energy = self.value(element.stop.stiffness), 0 * x
        if element.lower is not None:
            energy = energy + k * _positive(element.lower - x) ** 2 / 2
        if element.upper is not None:
            energy = energy + k * _positive(x - element.upper) ** 2 / 2
        return energy

    def _tyre_energy(self, element: Tyre, st: MotionState) -> np.ndarray:
        """½ k δ² of the tyre pressed into a still road."""
        centre = self._point(st, element.body, element.point)[0]
        height = self.road(None, centre[:, 0])[0]
        depth = _positive(self.value(element.radius) + height - centre[:, 2])
        return self.value(element.stiffness) * depth * depth / 2


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
