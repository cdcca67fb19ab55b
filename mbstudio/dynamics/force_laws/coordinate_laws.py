"""Force laws on one coordinate: joint spring-dampers, joint friction, actuators and compliant stops. Each is an
effort τ(t, x, ẋ) on its coordinate x, the coordinate's entry of Q."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...model.document import Actuator, CompliantStop, JointFriction, JointSpringDamper
from ...model.expressions import names
from .base import ForceLaw, JointTerms, contact_force, instants, positive, register


class CoordinateLaw(ForceLaw):
    """An effort on the element's `coordinate`: `effort(t, x, v)` at its values x and rates v (N,)."""

    @property
    def coordinate(self) -> str:
        return self.element.coordinate

    def effort(self, t, x, v):
        raise NotImplementedError

    def coordinate_potential(self, x):
        """V (N,) at the coordinate's values x, None without a potential."""
        return None

    def generalized(self, t, q, qd, st=None) -> np.ndarray:
        Q = self.forces.mech.backend.zeros(q.shape)
        k = self.forces.mech.coordinates.index(self.coordinate)
        Q[:, k] = self.effort(t, q[:, k], qd[:, k])
        return Q

    def potential(self, q, st=None):
        return self.coordinate_potential(q[:, self.forces.mech.coordinates.index(self.coordinate)])

    def measure(self, motion, name: str) -> list:
        k = motion.mech.coordinates.index(self.coordinate)
        generalized = np.asarray(self.forces.of_law(self, motion.t, motion.q, motion.qd), float)[:, k]
        return [(f"{name}.force", "N m" if motion.mech.tree.kinds[k] == "R" else "N", generalized)]

    @classmethod
    def output_parts(cls, element, force_unit) -> dict[str, str]:
        return {"force": force_unit(element.coordinate)}

    def output(self, part: str, outputs):
        k = self.forces.mech.coordinates.index(self.coordinate)
        return self.forces.of_law(self, outputs.t, *outputs.coordinate_rows())[0][k]

    def block_load(self, where):
        potential = self._block_potential if self.has_potential else None
        return where.joint_law(self.coordinate, self.effort, potential, self.time_dependent, self.name)

    def _block_potential(self, x):
        """`coordinate_potential`, 0 for a law that has none (a block model adds up every load's energy)."""
        energy = self.coordinate_potential(x)
        return 0 * x if energy is None else energy


@register
class JointSpringDamperLaw(CoordinateLaw):
    """−k (x − rest) − c ẋ; its rest may move in time (then it has no potential)."""

    type = JointSpringDamper.type
    carried_by = frozenset({"mjcf"})

    @property
    def time_dependent(self) -> bool:
        return "t" in names(self.element.rest)

    def time_functions(self):
        return [lambda t: self.forces.time_function(self.element.rest, t)] if self.time_dependent else []

    def effort(self, t, x, v):
        e, forces = self.element, self.forces
        rest = forces.time_function(e.rest, t) if self.time_dependent else forces.value(e.rest)
        return -forces.value(e.stiffness) * (x - rest) - forces.value(e.damping) * v

    def coordinate_potential(self, x):
        if self.time_dependent:
            return None
        stretch = x - self.forces.value(self.element.rest)
        return self.forces.value(self.element.stiffness) * stretch * stretch / 2

    @classmethod
    def joint_terms(cls, element, value) -> JointTerms:
        return JointTerms(element.coordinate, float(value(element.damping)), 0.0, float(value(element.stiffness)),
                          float(value(element.rest)))  # fmt: skip


@register
class JointFrictionLaw(CoordinateLaw):
    """−b ẋ − F_c tanh(ẋ / v_eps): viscous and smoothed Coulomb friction, all its power dissipated."""

    type = JointFriction.type
    carried_by = frozenset({"mjcf", "urdf"})

    @property
    def has_potential(self) -> bool:
        return False

    def effort(self, t, x, v):
        e, value = self.element, self.forces.value
        smooth = self.forces.mech.backend.tanh(v / value(e.velocity_scale))
        return -value(e.viscous) * v - value(e.coulomb) * smooth

    @classmethod
    def joint_terms(cls, element, value) -> JointTerms:
        return JointTerms(element.coordinate, float(value(element.viscous)), float(value(element.coulomb)))

    @classmethod
    def export_note(cls, element, target: str, value) -> str | None:
        if target == "mjcf" and float(value(element.coulomb)) > 0:
            return (f"force element '{element.name}': its smoothed Coulomb friction is MuJoCo's frictionloss, "
                    "a friction constraint")  # fmt: skip
        return super().export_note(element, target, value)


@register
class ActuatorLaw(CoordinateLaw):
    """A prescribed effort: a formula in the time, or a table interpolated linearly (held beyond its ends).
    A constant one is conservative: V = −τ x."""

    type = Actuator.type
    actuated = True
    carried_by = frozenset({"mjcf"})

    @property
    def time_dependent(self) -> bool:
        return self.element.table is not None or "t" in names(self.element.formula)

    def prescribed(self, t) -> np.ndarray:
        """The effort at the times t (N,)."""
        if self.element.table is None:
            return self.forces.time_function(self.element.formula, t)
        table = np.asarray(self.element.table, dtype=float)
        return self.forces.table_value(table[:, 0], table[:, 1], instants(t))

    def time_functions(self):
        return [self.prescribed] if self.time_dependent else []

    def effort(self, t, x, v):
        return np.broadcast_to(self.prescribed(t), x.shape)

    def coordinate_potential(self, x):
        return None if self.time_dependent else -(self.prescribed(0.0) * x)

    @classmethod
    def export_note(cls, element, target: str, value) -> str | None:
        if target == "mjcf":
            return (f"actuator '{element.name}': a MuJoCo motor whose ctrl is the force; its formula or table is "
                    "not carried")  # fmt: skip
        return super().export_note(element, target, value)

    @classmethod
    def idle(cls, element: Actuator) -> None:
        """Make the actuator push with zero (an input then gives its effort)."""
        element.formula, element.table = 0.0, None


@dataclass(frozen=True)
class CoordinateStop:
    """A coordinate's compliant stop as a force element: it pushes the coordinate back inside [lower, upper]
    (either may be None) by the contact law of `contact_force`. Named `stop:<coordinate>`, as its column."""

    name: str
    coordinate: str
    lower: float | None
    upper: float | None
    stop: CompliantStop
    type: ClassVar[str] = "compliant_stop"


@register
class CompliantStopLaw(CoordinateLaw):
    """Pushes up from `lower` and down from `upper` by `contact_force`; its spring's ½ k δ² is its potential."""

    type = CoordinateStop.type

    def effort(self, t, x, v):
        e = self.element
        law = [self.forces.value(getattr(e.stop, key)) for key in ("stiffness", "damping", "engagement")]
        force = self.forces.mech.backend.zeros(np.shape(x))
        if e.lower is not None:
            force = force + contact_force(*law, e.lower - x, -v)
        if e.upper is not None:
            force = force - contact_force(*law, x - e.upper, v)
        return force

    def coordinate_potential(self, x):
        e = self.element
        k, energy = self.forces.value(e.stop.stiffness), 0 * x
        if e.lower is not None:
            energy = energy + k * positive(e.lower - x) ** 2 / 2
        if e.upper is not None:
            energy = energy + k * positive(x - e.upper) ** 2 / 2
        return energy
