"""Loop closures as stiff spring-dampers (Alazard et al. 2024, §3.4): a closed loop's cut joint becomes the
impedance L_C between the two open chains it joins.

The spring acts on exactly what the cut joint forbids: the rows of its loop equations (kinematics/constraints.py),
a_i·d = 0 (no offset of the child frame's origin along the parent frame's axis a_i) and a_i·b_j = 0 (two axes kept
perpendicular). With λ = −(k Φ + c Φ̇) per row, the virtual work λ δΦ gives the wrenches: for a_i·d, the force
λ a_i on the child side at o_B, −λ a_i on the parent side at o_A and the torque λ a_i × d on the parent side; for
a_i·b_j, the torques λ a_i × b_j on the parent side and λ b_j × a_i on the child side. Energy ½ k Φ² per row,
dissipation c Φ̇².

The stiffness is given as a frequency f: k = m (2πf)² for offsets and k = m ℓ² (2πf)² for angles, with m the
mechanism's moving mass and ℓ its length scale, and critical damping c = 2 √(k m) (c ℓ² for angles). The cut-point
mismatch falls as 1/f² (tests/test_titop_runs.py::test_loop_closures_converge_on_the_closed_loop_method).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...kinematics.constraints import EQUATIONS
from ...kinematics.mechanism import Mechanism
from .blocks import GROUND
from .motion import cross, dot, mv, tmv, world_point, wrench_at

if TYPE_CHECKING:
    from .blocks import Kinematics
    from .interconnection import BlockModel, BlockState

CLOSURE_FREQUENCY = 500.0  # Hz, the default for closed loops: errors of 1e-6 to 1e-5 on the samples' coordinates


@dataclass(frozen=True, eq=False)
class Side:
    """One side of a cut joint: its block (GROUND: the inertial frame), the joint frame's origin as an offset
    from the block's P and its axes, both in block axes."""

    block: int
    offset: np.ndarray
    axes: np.ndarray


@dataclass(frozen=True, eq=False)
class Closure:
    """A cut joint as a spring-damper on its loop equations `rows` (("d", i) or ("e", i, j)), with stiffness
    and damping per row."""

    name: str
    parent: Side
    child: Side
    rows: tuple
    stiffness: tuple
    damping: tuple

    def _frames(self, model: BlockModel, kin: list[Kinematics]) -> list[tuple]:
        """World origin, velocity, axes (3 columns) and angular velocity of both joint frames."""
        out = []
        for side in (self.parent, self.child):
            motion = model.motion_of(kin, side.block)
            origin, velocity = world_point(motion, side.offset)
            out.append(
                (origin, velocity, np.einsum("...ij,jk->...ik", motion.R, side.axes), mv(motion.R, motion.tw[..., 3:]))
            )
        return out

    def _rows(self, model: BlockModel, kin: list[Kinematics]) -> list[tuple]:
        """Per row: Φ, Φ̇, and its generalized direction as (force on the child at o_B, torque on the parent,
        torque on the child) in inertial axes, the parent getting −force at o_A."""
        (oA, vA, A, wA), (oB, vB, B, wB) = self._frames(model, kin)
        d, dd = oB - oA, vB - vA
        out = []
        for row in self.rows:
            a = A[..., :, row[1]]
            if row[0] == "d":
                phi, rate = dot(a, d), dot(cross(wA, a), d) + dot(a, dd)
                out.append((phi, rate, a, cross(a, d), 0 * a))
            else:
                bj = B[..., :, row[2]]
                phi, rate = dot(a, bj), dot(cross(wA, a), bj) + dot(a, cross(wB, bj))
                out.append((phi, rate, 0 * a, cross(a, bj), cross(bj, a)))
        return out

    def apply(
        self, model: BlockModel, t, state: BlockState, kin: list[Kinematics], efforts: np.ndarray, wrenches: list
    ) -> None:
        for (phi, rate, force, torque_parent, torque_child), k, c in zip(
            self._rows(model, kin), self.stiffness, self.damping, strict=True
        ):
            lam = -(k * phi + c * rate)[..., None]
            for side, F, T in ((self.child, force, torque_child), (self.parent, -force, torque_parent)):
                if side.block == GROUND:
                    continue
                R = kin[side.block].motion.R
                wrench = wrench_at(tmv(R, lam * F), side.offset)
                wrenches[side.block] = wrenches[side.block] + wrench + np.concatenate([0 * F, tmv(R, lam * T)], axis=-1)

    def energy(self, model: BlockModel, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
        return sum(k * phi * phi / 2 for (phi, *_), k in zip(self._rows(model, kin), self.stiffness, strict=True))

    def power(self, model: BlockModel, t, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
        return sum(-c * rate * rate for (_, rate, *_), c in zip(self._rows(model, kin), self.damping, strict=True))

    def mismatch(self, model: BlockModel, kin: list[Kinematics]) -> np.ndarray:
        """max |Φ| over the rows (N,): how far the cut joint is from closed (m for offsets, 1 for angles)."""
        rows = self._rows(model, kin)
        return np.max(np.abs(np.stack([np.asarray(r[0], dtype=float) for r in rows], axis=-1)), axis=-1)


def closure_loads(mech: Mechanism, where, frequency: float) -> list[Closure]:
    """The cut joints of the document as closures of frequency `frequency` (Hz)."""
    tree = mech.tree
    mass = sum(float(tree.geometry.inertia(mech.model.body(label))[0]) for label in tree.body_labels[1:])
    length = mech.length_scale
    omega = 2 * math.pi * frequency
    out = []
    for joint, sides in zip(mech.constraints.joints, mech.constraints.sides, strict=True):
        rows = EQUATIONS[joint.type]
        scale = [1.0 if row[0] == "d" else length**2 for row in rows]
        out.append(
            Closure(
                joint.name,
                *(_side(mech, where, side) for side in sides),
                rows,
                tuple(mass * omega**2 * s for s in scale),
                tuple(2 * mass * omega * s for s in scale),
            )
        )
    return out


def _side(mech: Mechanism, where, side) -> Side:
    label = mech.tree.body_labels[side.body]
    block = where.block(label)
    frame = where.frames[side.body]
    return Side(block, where.offset(label, side.frame.origin), frame.rotation.T @ side.frame.rotation)
