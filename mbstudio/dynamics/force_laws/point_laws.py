"""Force laws at body points: a spring-damper between two bodies' points, and a force given in world axes at a
body point. A force F at a world point P maps to the tree coordinates by Q = J_Pᵀ F."""

from __future__ import annotations

import numpy as np

from ...model.document import PointForce, SpringDamper
from ...model.expressions import names
from ...numerics.spatial import dot
from .base import ForceLaw, instants, register


@register
class SpringDamperLaw(ForceLaw):
    """Tension f = k (L − L₀) + c L̇ pulls the two points together (L their distance): Q = −f ∂L/∂q, and
    V = ½ k (L − L₀)²."""

    type = SpringDamper.type
    on_bodies = True

    def line(self, st) -> tuple[np.ndarray, np.ndarray]:
        """Length L (N,) and dL/dq (N, n) of the line from point 1 to point 2."""
        e = self.element
        (p1, J1), (p2, J2) = self.forces.point(st, e.body1, e.point1), self.forces.point(st, e.body2, e.point2)
        d = p2 - p1
        length = self.forces.mech.backend.sqrt(dot(d, d))
        u = d / length[:, None]
        return length, (u[:, :, None] * (J2 - J1)).sum(axis=1)

    def tension(self, length, rate):
        """k (L − L₀) + c L̇ at lengths L and rates L̇: positive pulls the two points together."""
        k, c, free = (self.forces.value(x) for x in (self.element.stiffness, self.element.damping, self.element.length))
        return k * (length - free) + c * rate

    def spring_energy(self, length):
        """½ k (L − L₀)² at lengths L."""
        stretch = length - self.forces.value(self.element.length)
        return self.forces.value(self.element.stiffness) * stretch * stretch / 2

    def generalized(self, t, q, qd, st) -> np.ndarray:
        length, dL = self.line(st)
        return -self.tension(length, (dL * qd).sum(axis=1))[:, None] * dL

    def potential(self, q, st):
        return self.spring_energy(self.line(st)[0])

    def measure(self, motion, name: str) -> list:
        e = self.element
        length, rate = motion.line(e.body1, e.point1, e.body2, e.point2)
        return [(f"{name}.length", "m", length), (f"{name}.force", "N", self.tension(length, rate))]

    def arrows(self, motion, t: float) -> list:
        e = self.element
        (p1, v1, _), (p2, v2, _) = motion.point(e.body1, e.point1), motion.point(e.body2, e.point2)
        length = float(np.linalg.norm(p2[0] - p1[0]))
        along = (p2[0] - p1[0]) / length
        tension = self.tension(length, along @ (v2[0] - v1[0]))
        return [(e.name, p1[0], tension * along), (e.name, p2[0], -tension * along)]

    @classmethod
    def output_parts(cls, element, force_unit) -> dict[str, str]:
        return {"length": "m", "force": "N"}

    def output(self, part: str, outputs):
        e = self.element
        length = outputs.distance(e.body1, e.point1, e.body2, e.point2)
        return length if part == "length" else self.tension(length, outputs.rates(length, 1))

    def block_load(self, where):
        e = self.element
        ends = (where.named(e.body1, e.point1), where.named(e.body2, e.point2))
        return where.spring_load(ends, self.tension, self.spring_energy, e.name)


@register
class PointForceLaw(ForceLaw):
    """A world force F(t) at a body point P: Q = J_Pᵀ F; a constant one is conservative, V = −F·r_P."""

    type = PointForce.type
    on_bodies = True

    @property
    def time_dependent(self) -> bool:
        return any("t" in names(e) for e in self.element.force)

    def time_functions(self):
        return [lambda t, x=x: self.forces.time_function(x, t) for x in self.element.force if "t" in names(x)]

    def world_force(self, t, count: int) -> np.ndarray:
        """F (count, 3) at the time(s) t."""
        times = instants(0.0 if t is None else t, count)
        return self.forces.mech.backend.asarray(
            [[self.forces.value(e, ti) for e in self.element.force] for ti in times]
        )

    def generalized(self, t, q, qd, st) -> np.ndarray:
        world, J = self.forces.point(st, self.element.body, self.element.point)
        return (J * self.world_force(t, len(world))[:, :, None]).sum(axis=1)

    def potential(self, q, st):
        if self.time_dependent:
            return None
        world = self.forces.point(st, self.element.body, self.element.point)[0]
        return -dot(self.world_force(None, len(q)), world)

    def measure(self, motion, name: str) -> list:
        world = np.asarray(self.world_force(motion.t, len(motion.t)), float)
        return [(f"{name}.f{axis}", "N", world[:, k]) for k, axis in enumerate("xyz")]

    def arrows(self, motion, t: float) -> list:
        (position, *_) = motion.point(self.element.body, self.element.point)
        world = np.asarray(self.world_force(motion.t, 1), float)[0]
        return [(self.element.name, position[0], world)]

    def block_load(self, where):
        block, offset = where.named(self.element.body, self.element.point)
        return where.point_load(block, offset, self.world_force, not self.time_dependent, self.element.name)
