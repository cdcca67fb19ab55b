"""A speed controller on a car's driven wheels: a driver's foot on the pedals, proportional to the speed error.

With the body's origin velocity v (from the body's point Jacobian at its origin, J q̇) and its heading h (its x axis
in the road plane, normalised), the forward speed is V = v·h; the torque T = gain × (speed − V) × radius drives
(positive) or brakes, split equally to the driven coordinates. The set speed may be a function of the time. A
proportional law holds the speed with an error of the resisting force over the gain (rolling resistance and
cornering drag, a few hundred newtons on a car: at 2·10⁴ N s/m about 0.02 m/s). Like the path driver it does work on
the model (no potential): its power counts in the energy balance as an actuator's would.
"""

from __future__ import annotations

import numpy as np

from ...model.document import SpeedController
from ...model.errors import ModelError
from .base import ForceLaw, instants, register


@register
class SpeedControllerLaw(ForceLaw):
    """gain × (speed − V) × radius / n on each of the n driven coordinates, V the body's forward speed."""

    type = SpeedController.type
    on_bodies = True

    @property
    def time_dependent(self) -> bool:
        return True  # a controller: its effort follows the car's speed, so no potential holds it

    def forward_speed(self, st, qd) -> np.ndarray:
        """V (N,): the body origin's velocity along its heading in the road plane."""
        f = self.forces
        tree, b = f.mech.tree, f.mech.backend
        i = tree.body_index(self.element.body)
        origin, heading = st.p[i], st.R[i][:, :, 0]
        velocity = (tree.point_jacobian(st, i, origin) * qd[:, None, :]).sum(axis=2)
        length = b.sqrt(heading[:, 0] * heading[:, 0] + heading[:, 1] * heading[:, 1])
        return (velocity[:, 0] * heading[:, 0] + velocity[:, 1] * heading[:, 1]) / length

    def time_functions(self) -> list:
        return [lambda t: self.forces.time_function(self.element.speed, t)]

    def torque(self, t, st, qd):
        """The total torque T (N,) on the driven coordinates at the time(s) t."""
        e, f = self.element, self.forces
        speed = f.time_function(e.speed, instants(t, len(qd)))
        return f.value(e.gain) * (speed - self.forward_speed(st, qd)) * f.value(e.radius)

    def generalized(self, t, q, qd, st) -> np.ndarray:
        coordinates = self.element.coordinates
        share = self.torque(t, st, qd) / len(coordinates)
        Q = self.forces.mech.backend.zeros(q.shape)
        for name in coordinates:
            Q[:, self.forces.mech.coordinates.index(name)] = share
        return Q

    def measure(self, motion, name: str) -> list:
        """<name>.speed (m/s), the body's forward speed, and <name>.torque (N m), the total on the driven wheels."""
        st = motion.mech.tree.motion(motion.q)
        qd = np.asarray(motion.qd, float)
        speed = np.asarray(self.forward_speed(st, qd), float)
        torque = np.asarray(self.torque(motion.t, st, qd), float)
        return [(f"{name}.speed", "m/s", speed), (f"{name}.torque", "N m", torque)]

    def block_load(self, where):
        raise ModelError(f"force '{self.name}'", "is a driver: the block models have no car speed to hold", None,
                         "a model without a speed controller")  # fmt: skip
