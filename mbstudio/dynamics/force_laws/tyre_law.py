"""The tyre on the model's road: a vertical spring-damper that only pushes, between a wheel-centre point and the
road's height under it (the contact law of compliant stops); the road, a profile z(x) or a surface z(x, y), comes
from `AppliedForces.road_surface`."""

from __future__ import annotations

import numpy as np

from ...model.document import Tyre
from ...model.errors import ModelError
from .base import ForceLaw, contact_force, positive, register


@register
class TyreLaw(ForceLaw):
    """Pressed in by δ = radius − (z_centre − road height), the tyre pushes the wheel centre up (world +z):
    Q = J_zᵀ F. On a still road its spring's ½ k δ² is a potential; on a rolling road it works on the model."""

    type = Tyre.type
    on_bodies = True

    @property
    def time_dependent(self) -> bool:
        road = self.forces.mech.model.road
        return road is not None and self.forces.value(road.speed) != 0

    def load(self, t, centre: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """The tyre's vertical push (N,) for wheel centres at `centre` (N, 3) moving at `velocity` (N, 3)."""
        height, slope, slope_y, speed = self.forces.road_surface(t, centre[:, 0], centre[:, 1])
        depth = self.forces.value(self.element.radius) + height - centre[:, 2]
        rate = slope * (velocity[:, 0] + speed) - velocity[:, 2]
        if slope_y is not None:  # a surface z(x, y): its rise under the centre's sideways motion too
            rate = rate + slope_y * velocity[:, 1]
        law = [self.forces.value(getattr(self.element, key)) for key in ("stiffness", "damping", "engagement")]
        return contact_force(*law, depth, rate)

    def generalized(self, t, q, qd, st) -> np.ndarray:
        centre, J = self.forces.point(st, self.element.body, self.element.point)
        velocity = (J * qd[:, None, :]).sum(axis=2)
        return self.load(t, centre, velocity)[:, None] * J[:, 2, :]

    def potential(self, q, st):
        if self.time_dependent:
            return None
        centre = self.forces.point(st, self.element.body, self.element.point)[0]
        height = self.forces.road_surface(None, centre[:, 0], centre[:, 1])[0]
        depth = positive(self.forces.value(self.element.radius) + height - centre[:, 2])
        return self.forces.value(self.element.stiffness) * depth * depth / 2

    def measure(self, motion, name: str) -> list:
        centre, velocity, _ = motion.point(self.element.body, self.element.point)
        height = np.asarray(self.forces.road_surface(motion.t, centre[:, 0], centre[:, 1])[0], float)
        deflection = float(motion.geometry.value(self.element.radius)) + height - centre[:, 2]
        load = np.asarray(self.load(motion.t, centre, velocity), float)
        return [(f"{name}.force", "N", load), (f"{name}.deflection", "m", deflection)]

    def arrows(self, motion, t: float) -> list:
        position, velocity, _ = motion.point(self.element.body, self.element.point)
        load = float(np.asarray(self.load(t, position, velocity))[0])
        return [(self.element.name, position[0], np.array([0.0, 0.0, load]))]

    def block_load(self, where):
        raise ModelError(f"force '{self.name}'", "is a tyre: the block models have no road", None,
                         "a model without tyres")  # fmt: skip
