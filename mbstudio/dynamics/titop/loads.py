"""What acts on a block model besides gravity: effort laws on joint channels, forces at body
points (the balloon's buoyancy), spring-dampers between two bodies' points. Each adds its efforts and wrenches
(at the blocks' P, in their axes) for a state, and says its potential energy and the power it brings in
without a potential (negative when it dissipates), for the energy balance of invariants.py.

Every callable takes and returns batched arrays of the model's back-end, so the same loads run in float64 and
traced on CasADi symbols.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .motion import dot, tmv, world_point, wrench_at

if TYPE_CHECKING:
    from .blocks import Kinematics
    from .interconnection import BlockModel, BlockState


@dataclass(frozen=True, eq=False)
class JointLaw:
    """effort(t, q, q̇) -> (N,) on one coordinate: a spring-damper, friction, an actuator. `potential(q)`, when
    given, is the energy of its part at rest (a spring; a constant actuator's −τ q), which `effort(t, q, 0)`
    is, unless `time_dependent`: then all its work comes in as power."""

    coordinate: str
    effort: Callable
    potential: Callable | None = None
    time_dependent: bool = False
    name: str = ""

    def apply(
        self, model: BlockModel, t, state: BlockState, kin: list[Kinematics], efforts: np.ndarray, wrenches: list
    ) -> None:
        q, qd = model.coordinate_values(state, self.coordinate)
        model.add_coordinate_force(state, self.coordinate, self.effort(t, q, qd), efforts, wrenches)

    def energy(self, model: BlockModel, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
        return 0 if self.potential is None else self.potential(model.coordinate_values(state, self.coordinate)[0])

    def power(self, model: BlockModel, t, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
        q, qd = model.coordinate_values(state, self.coordinate)
        moving = self.effort(t, q, qd)
        return (moving if self.time_dependent else moving - self.effort(t, q, 0 * qd)) * qd


@dataclass(frozen=True, eq=False)
class PointLoad:
    """A force given in inertial axes, force(t, N) -> (N, 3), at the point `offset` from block `block`'s P
    (block axes). `constant`: its potential is −F·r; otherwise its power F·v comes in."""

    block: int
    offset: np.ndarray
    force: Callable
    constant: bool = True
    name: str = ""

    def apply(
        self, model: BlockModel, t, state: BlockState, kin: list[Kinematics], efforts: np.ndarray, wrenches: list
    ) -> None:
        motion = kin[self.block].motion
        F = tmv(motion.R, self.force(t, len(motion.pos)))  # in the block's axes
        wrenches[self.block] = wrenches[self.block] + wrench_at(F, self.offset)

    def energy(self, model: BlockModel, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
        if not self.constant:
            return 0
        motion = kin[self.block].motion
        return -dot(self.force(0.0, len(motion.pos)), world_point(motion, self.offset)[0])

    def power(self, model: BlockModel, t, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
        if self.constant:
            return 0
        motion = kin[self.block].motion
        return dot(self.force(t, len(motion.pos)), world_point(motion, self.offset)[1])


@dataclass(frozen=True, eq=False)
class SpringLoad:
    """A spring-damper between two bodies' points (block −1: the inertial frame, offset its point): tension(L,
    L̇) pulls them together; potential(L) is its spring's energy."""

    ends: tuple[tuple[int, np.ndarray], tuple[int, np.ndarray]]
    tension: Callable
    potential: Callable
    name: str = ""

    def _line(self, model: BlockModel, kin: list[Kinematics]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Length L, rate L̇, unit vector u from end 1 to end 2 (inertial), and both ends' world points."""
        (p1, v1), (p2, v2) = (world_point(model.motion_of(kin, block), offset) for block, offset in self.ends)
        d = p2 - p1
        length = model.backend.sqrt(dot(d, d))
        u = d / length[..., None]
        return length, dot(u, v2 - v1), u

    def apply(
        self, model: BlockModel, t, state: BlockState, kin: list[Kinematics], efforts: np.ndarray, wrenches: list
    ) -> None:
        length, rate, u = self._line(model, kin)
        pull = self.tension(length, rate)[..., None] * u  # on end 1, towards end 2; the opposite on end 2
        for (block, offset), force in zip(self.ends, (pull, -pull), strict=True):
            if block >= 0:
                F = tmv(kin[block].motion.R, force)
                wrenches[block] = wrenches[block] + wrench_at(F, offset)

    def energy(self, model: BlockModel, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
        return self.potential(self._line(model, kin)[0])

    def power(self, model: BlockModel, t, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
        length, rate, _ = self._line(model, kin)
        return -(self.tension(length, rate) - self.tension(length, 0 * rate)) * rate
