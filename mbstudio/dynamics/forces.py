"""Applied forces: the document's force elements as tree generalized forces Q (N, n), and their potential.

Gravity is not here: the tree dynamics apply it (and `gravity_potential` gives its energy). What each element does
is its force law (force_laws/: one law per element type, found through a registry), which this class binds to
the mechanism's back-end: element values (stiffness, damping, ...) are expressions in the parameters, evaluated
once per back-end; time functions are expressions in `t` too.

Compliant stops of the coordinates (document: `Coordinate.stop`) join the elements as `CoordinateStop`s, and
tyres press on the model's road: both through `contact_force` (force_laws/base.py), a spring-damper that only
pushes, so that they are traced into the compiled engine like any other force.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..kinematics.tree import MotionState
from ..model.document import CompliantStop, Coordinate, Joint
from ..model.errors import ModelError
from ..model.expressions import evaluate
from ..model.road_formula import formula_height_and_gradient
from ..model.surface_files import read_grid
from ..numerics.compiled import over_times, piecewise_linear
from .force_laws import CoordinateStop, ForceLaw, law_class
from .force_laws.base import instants
from .mass_matrix import mass_matrix
from .road_profile import float_distances, smooth_height_and_slope
from .road_surface import height_and_gradient
from .spatial_tree import body_inertia


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


class AppliedForces:
    """The force elements of a mechanism's document (or the given list) in the mechanism's back-end, each with its
    law (`laws`, in the same order); the document's own list gains its coordinates' compliant stops."""

    def __init__(self, mech: Mechanism, elements: list | None = None) -> None:
        self.mech = mech
        own = elements is None
        self.elements = list(mech.model.forces if own else elements) + (compliant_stops(mech) if own else [])
        self.geometry = mech.tree.geometry
        self.laws: list[ForceLaw] = [law_class(element)(element, self) for element in self.elements]
        self._slices, start = {}, 0  # each law's columns of the laws' states z, in the elements' order
        for law in self.laws:
            self._slices[id(law)] = slice(start, start + len(law.states))
            start += len(law.states)

    @property
    def state_names(self) -> list[tuple[str, str]]:
        """The states the laws own, as ('<element>.<state>', unit), in the order of z."""
        return [(f"{law.name}.{name}", unit) for law in self.laws for name, unit in law.states]

    def states_of(self, law: ForceLaw, z, count: int) -> np.ndarray:
        """The law's columns of z (N, all states), zeros (the states at rest) where z is None."""
        if z is None:
            return self.mech.backend.zeros((count, len(law.states)))
        return z[:, self._slices[id(law)]]

    def _of(self, law: ForceLaw, t, q, qd, st, z) -> np.ndarray:
        if not law.states:
            return law.generalized(t, q, qd, st)
        return law.generalized(t, q, qd, st, z=self.states_of(law, z, len(q)))

    def state_rates(self, t, q, qd, z) -> np.ndarray:
        """ż (N, all states) of the laws' states z (N, all states) at the time(s) t and the motion (q, q̇)."""
        mech = self.mech
        with mech.backend.context():
            q, qd = mech.as_batch(q), mech.as_batch(qd)
            st = self.placed(q)
            rates = [law.state_rates(t, q, qd, st, self.states_of(law, z, len(q))) for law in self.laws if law.states]
            return np.concatenate(rates, axis=1) if rates else mech.backend.zeros((len(q), 0))

    def law(self, element) -> ForceLaw:
        """The law of one of the elements."""
        return next(law for law in self.laws if law.element is element)

    # ------------------------------------------------------------------ values
    def value(self, expr, t=None):
        """An element's expression; `t` (a float, or the compiled engine's time symbol) is the time for time
        functions."""
        b = self.mech.backend
        if t is not None:
            t = b.scalar(t) if isinstance(t, numbers.Real) else t
        symbols = self.geometry.symbols if t is None else {**self.geometry.symbols, "t": t}
        return evaluate(expr, b.scalar, symbols, b.functions)

    def table_value(self, xs: np.ndarray, ys: np.ndarray, at: list) -> np.ndarray:
        """The table (xs, ys) interpolated linearly at the arguments `at` (floats or traced symbols), held beyond
        its ends."""
        if any(isinstance(x, numbers.Real) for x in at):
            return self.mech.backend.asarray(np.interp(np.asarray(at, dtype=float), xs, ys))
        return self.mech.backend.asarray([piecewise_linear(x, xs, ys) for x in at])

    def time_function(self, formula, t) -> np.ndarray:
        """An expression in the parameters and the time at the times t (N,)."""
        numeric = isinstance(t, np.ndarray) and t.dtype.kind == "f"  # a run's times: not one Python float each
        times = t.ravel() if numeric else instants(t)
        if self.mech.backend.name == "float64" and len(times) > 1:
            values = over_times(self.geometry.symbols, formula, np.asarray(times, dtype=float))
            if np.isfinite(values).all():  # else one at a time, for the evaluator's message on the culprit
                return values
        return self.mech.backend.asarray([self.value(formula, ti) for ti in times])

    # ------------------------------------------------------------------ generalized forces
    def generalized(self, t, q, qd, z=None) -> np.ndarray:
        """Q (N, n) of all elements at time(s) t (scalar or (N,)), coordinates q and velocities q̇ (N, n), and the
        laws' states z (N, len(state_names)); None: at rest."""
        mech = self.mech
        with mech.backend.context():
            q, qd = mech.as_batch(q), mech.as_batch(qd)
            Q = mech.backend.zeros(q.shape)
            st = self.placed(q)
            for law in self.laws:
                Q = Q + self._of(law, t, q, qd, st, z)
            return Q

    def element_power(self, t, q, qd, st: MotionState | None = None, z=None) -> tuple[np.ndarray, np.ndarray]:
        """(P_nc (N,), Σ Q_e (N, n)): the power of the force elements beyond their potential's, and their generalized
        forces. An element with a potential (`ForceLaw.has_potential`) loses its rest part, its force at q̇ = 0,
        which the potential energy holds; the whole power of the others counts. `st`: the poses at q (`placed`); z: the
        laws' states (`generalized`)."""
        with self.mech.backend.context():
            q, qd = self.mech.as_batch(q), self.mech.as_batch(qd)
            st = self.placed(q) if st is None else st  # once for every element
            power, elements = self.mech.backend.zeros(len(q)), self.mech.backend.zeros(q.shape)
            for law in self.laws:
                Q_e = self._of(law, t, q, qd, st, z)
                elements = elements + Q_e
                if law.has_potential:
                    Q_e = Q_e - self._of(law, t, q, self.mech.backend.zeros(qd.shape), st, z)
                power = power + (Q_e * qd).sum(axis=1)
            return power, elements

    def placed(self, q) -> MotionState | None:
        """The bodies' poses at q (N, n) where an element acts at a body point (its rates come from J q̇), once
        for all elements; None where they all act on coordinates."""
        if any(law.on_bodies for law in self.laws):
            return self.mech.tree.motion(self.mech.as_batch(q))
        return None

    def of_law(self, law: ForceLaw, t, q, qd, st: MotionState | None = None, z=None) -> np.ndarray:
        """Q (N, n) of one element's law; `st` the poses at q (`placed`) when the caller has them; z the laws'
        states (`generalized`)."""
        mech = self.mech
        with mech.backend.context():
            q, qd = mech.as_batch(q), mech.as_batch(qd)
            if law.on_bodies and st is None:
                st = mech.tree.motion(q)
            return self._of(law, t, q, qd, st, z)

    def point(self, st: MotionState, label: str, point: str) -> tuple[np.ndarray, np.ndarray]:
        """World position (N, 3) and Jacobian (N, 3, n) of a named body point."""
        tree = self.mech.tree
        i = tree.body_index(label)
        local = self.geometry.point(self.mech.model.body(label), point)
        world = st.p[i] + (st.R[i] * local[None, None, :]).sum(axis=2)
        return world, tree.point_jacobian(st, i, world)

    def road(self, t, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, object]:
        """The road's height and slope (N,) under world x positions (N,) at the time(s) t, and its speed: the
        profile at the travelled distance s = x + speed t (flat at 0 without a road), its rows joined by straight
        lines or smoothly (road_profile.py)."""
        road = self.mech.model.road
        if road is None:
            return self.mech.backend.zeros(len(x)), self.mech.backend.zeros(len(x)), 0.0
        speed = self.value(road.speed)
        s = x + speed * self.mech.backend.asarray(instants(0.0 if t is None else t, len(x))) if speed != 0 else x
        table = np.asarray(road.profile, dtype=float)
        xs, zs = table[:, 0], table[:, 1]
        if road.interpolation == "smooth":
            return (*smooth_height_and_slope(xs, zs, s, self.mech.backend), speed)
        slopes = np.diff(zs) / np.diff(xs)
        return self.table_value(xs, zs, list(s)), self._slope(xs, slopes, s), speed

    def road_surface(self, t, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, object, object]:
        """The road's height and gradient ∂z/∂x, ∂z/∂y (N,) under world positions x, y (N,) at the time(s) t, and
        its speed: the grid or formula surface at (x + speed t, y) (road_surface.py, model/road_formula.py), or the
        x-profile (`road`) with ∂z/∂y None (no term of it, so that a profile road computes exactly as before)."""
        road = self.mech.model.road
        if road is None or (road.surface is None and road.formula is None):
            height, slope, speed = self.road(t, x)
            return height, slope, None, speed
        speed, b = self.value(road.speed), self.mech.backend
        s = x + speed * b.asarray(instants(0.0 if t is None else t, len(x))) if speed != 0 else x
        if road.formula is not None:
            return *formula_height_and_gradient(road.formula, self.geometry.symbols, s, y, b), speed
        return *height_and_gradient(read_grid(road.surface, road.surface_sha256), s, y, b), speed

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
        """V (N,) of the elements with a potential: springs, stops, tyres on a still road, constant forces
        (−F·r_P, −τ q: a constant force is conservative)."""
        mech = self.mech
        with mech.backend.context():
            q = mech.as_batch(q)
            st = mech.tree.motion(q)
            V = mech.backend.zeros(len(q))
            for law in self.laws:
                energy = law.potential(q, st)
                if energy is not None:
                    V = V + energy
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
