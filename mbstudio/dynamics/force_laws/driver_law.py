"""A path-following driver on the steering: a single-point preview controller (the look-ahead point's lateral error
to the path sets the steering target; MacAdam, "Application of an optimal preview control for simulation of
closed-loop automobile driving", IEEE Transactions on Systems, Man, and Cybernetics, 1981, is the classic
treatment; this is its simplest, proportional form) acting through a position servo on the steering coordinate.

With the body's origin p and its heading h (its x axis in the road plane, normalised), the preview point is
P = p + L h, the lateral error e = y_path(P_x) − P_y (the path's rows joined by straight lines), the target
x* = gain × e, and the effort on the coordinate −k (x − x*) − c ẋ. The target depends on the car's state, so the
driver does work on the model (no potential): its power counts in the energy balance as an actuator's would.

The circle driver is the same servo with the error e = |P − C| − R to a circle of centre C and radius R that the car
goes round turning left (ISO 4138's constant radius): on the circle the preview point lies L²/(2R) outside it, so
pure pursuit's gain asks for the road-wheel angle L_wheelbase / R that a car without slip needs.
"""

from __future__ import annotations

import numpy as np

from ...model.document import CircleDriver, PathDriver
from ...model.errors import ModelError
from .base import ForceLaw, register


@register
class PathDriverLaw(ForceLaw):
    """−k (x − gain × e) − c ẋ on the steering coordinate x, e the preview point's lateral error to the path."""

    type = PathDriver.type
    on_bodies = True

    @property
    def time_dependent(self) -> bool:
        return True  # a controller: its target moves with the car, so no potential holds its force

    def target(self, st) -> np.ndarray:
        """The steering target x* (N,) at the poses `st`: gain × the preview point's lateral error."""
        e, f = self.element, self.forces
        b = f.mech.backend
        i = f.mech.tree.body_index(e.body)
        origin, heading = st.p[i], st.R[i][:, :, 0]
        length = b.sqrt(heading[:, 0] * heading[:, 0] + heading[:, 1] * heading[:, 1])
        ahead = f.value(e.preview)
        x = origin[:, 0] + ahead * heading[:, 0] / length
        y = origin[:, 1] + ahead * heading[:, 1] / length
        return f.value(e.gain) * self.lateral_error(x, y)

    def lateral_error(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """How far the path lies to the left of the preview points (x, y) (N,): y_path(x) − y."""
        path = np.asarray(self.element.path, dtype=float)
        return self.forces.table_value(path[:, 0], path[:, 1], list(x)) - y

    def generalized(self, t, q, qd, st) -> np.ndarray:
        e, f = self.element, self.forces
        k = f.mech.coordinates.index(e.coordinate)
        Q = f.mech.backend.zeros(q.shape)
        Q[:, k] = -f.value(e.stiffness) * (q[:, k] - self.target(st)) - f.value(e.damping) * qd[:, k]
        return Q

    def measure(self, motion, name: str) -> list:
        """<name>.target (the coordinate's unit) and <name>.force, the effort on the coordinate."""
        k = motion.mech.coordinates.index(self.element.coordinate)
        target = np.asarray(self.target(motion.mech.tree.motion(motion.q)), float)
        effort = np.asarray(self.generalized(motion.t, motion.q, motion.qd, motion.mech.tree.motion(motion.q)))
        return [(f"{name}.target", "m|rad", target), (f"{name}.force", "N|N m", effort[:, k].astype(float))]

    def block_load(self, where):
        raise ModelError(f"force '{self.name}'", "is a driver: the block models have no road to follow", None,
                         "a model without a path driver")  # fmt: skip


@register
class CircleDriverLaw(PathDriverLaw):
    """The path driver's servo with the preview point's distance outside a circle as its error."""

    type = CircleDriver.type

    def lateral_error(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """|P − C| − R (N,): how far the circle, turning left round C, lies to the left of the preview points."""
        e, f = self.element, self.forces
        dx, dy = x - f.value(e.centre_x), y - f.value(e.centre_y)
        return f.mech.backend.sqrt(dx * dx + dy * dy) - f.value(e.radius)
