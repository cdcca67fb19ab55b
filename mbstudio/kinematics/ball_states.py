"""The state a time integration carries, y = (positions, independent velocities), with each ball or free joint's
orientation as a unit quaternion and its rate as an angular velocity.

Rotation parameters ρ (numerics/rodrigues.py) describe every orientation with |ρ| ≤ 4, but a body that keeps
tumbling carries its integrated ρ towards a full turn, where the chart is singular. Integrated instead: the
quaternion q and the angular velocity ω = J(ρ) ρ̇ (parent axes), a smooth state whatever the motion. At every
evaluation ρ is read back from q with |ρ| ≤ 4 (the shadow parameters where q's scalar part is negative) and ρ̇
from ω, the equations of motion are evaluated in ρ as everywhere else, and the state's rates are q̇ = ½ (0, ω) ⊗ q
and ω̇ = J ρ̈ + J̇ ρ̇: functions of the orientation and ω alone, so they do not jump where ρ passes to its shadow.
No event stops the integrator and every integrator (CVODES, scipy's) takes the state as it is.

A ball joint is carried so when its three parameters are all among the positions and all independent; one
inside a loop, whose parameters are partly dependent, keeps ρ and ρ̇ (a loop seldom lets a joint turn a full
turn). The same code serves the compiled engine (y = all tree coordinates, then the independent velocities) and
the numpy path (y = the independent coordinates, then their velocities), in any back-end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..numerics import rodrigues


@dataclass(frozen=True)
class _Carried:
    positions: tuple[int, int, int]  # ρ's places among the positions
    velocities: tuple[int, int, int]  # ρ̇'s places among the independent velocities
    slots: tuple[int, int, int, int]  # the quaternion's places (w, x, y, z) in y


class StateMap:
    """y (N, size) from positions (N, p) and independent velocities (N, k), and back; `positions` are the tree
    coordinate indices the state holds, in their order."""

    def __init__(self, tree, positions: list[int], independent: list[int]) -> None:
        self.p, self.k = len(positions), len(independent)
        balls = [b for b in tree.balls if all(c in positions and c in independent for c in b.coordinates)]
        held = {c for b in balls for c in b.coordinates[1:]}  # in the quaternion of their ball's first parameter
        self.carried: list[_Carried] = []
        self.plain: list[tuple[int, int]] = []  # (place among the positions, slot in y)
        slot = 0
        for i, coordinate in enumerate(positions):
            ball = next((b for b in balls if b.coordinates[0] == coordinate), None)
            if ball is not None:
                places = tuple(positions.index(c) for c in ball.coordinates)
                rates = tuple(independent.index(c) for c in ball.coordinates)
                self.carried.append(_Carried(places, rates, (slot, slot + 1, slot + 2, slot + 3)))
                slot += 4
            elif coordinate not in held:
                self.plain.append((i, slot))
                slot += 1
        self.size = slot + self.k

    @property
    def quaternions(self) -> bool:
        """Whether any orientation is carried as a quaternion (else y is plainly (positions, velocities))."""
        return bool(self.carried)

    def pack(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """y (N, size) for positions q (N, p) and independent velocities v (N, k)."""
        y = np.empty((q.shape[0], self.size), dtype=np.result_type(q, v))
        for i, slot in self.plain:
            y[:, slot] = q[:, i]
        y[:, self.size - self.k :] = v
        for c in self.carried:
            rho, rates = q[:, list(c.positions)], v[:, list(c.velocities)]
            w, vec = rodrigues.quaternion(rho)
            y[:, c.slots[0]], y[:, list(c.slots[1:])] = w, vec
            y[:, [self.size - self.k + j for j in c.velocities]] = _apply(rodrigues.jacobian(rho), rates)
        return y

    def unpack(self, y: np.ndarray, nonnegative) -> tuple[np.ndarray, np.ndarray]:
        """(positions (N, p), independent velocities (N, k)) of states y (N, size); `nonnegative(x, a, b)`
        picks a where x ≥ 0, else b, in the back-end of y (rodrigues.from_quaternion)."""
        q = np.empty((y.shape[0], self.p), dtype=y.dtype)
        v = y[:, self.size - self.k :].copy()
        for i, slot in self.plain:
            q[:, i] = y[:, slot]
        for c in self.carried:
            rho = rodrigues.from_quaternion(y[:, c.slots[0]], y[:, list(c.slots[1:])], nonnegative)
            q[:, list(c.positions)] = rho
            v[:, list(c.velocities)] = rodrigues.angular_velocity_to_rates(rho, v[:, list(c.velocities)])
        return q, v

    def rate(self, y: np.ndarray, q: np.ndarray, v: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """ẏ (N, size) at states y whose unpacked positions and velocities are q, v, given the positions' rates
        qd (N, p) and the independent accelerations qdd (N, k)."""
        out = np.empty(y.shape, dtype=np.result_type(y, qd, qdd))
        for i, slot in self.plain:
            out[:, slot] = qd[:, i]
        out[:, self.size - self.k :] = qdd
        for c in self.carried:
            rho, rates = q[:, list(c.positions)], v[:, list(c.velocities)]
            omega = y[:, [self.size - self.k + j for j in c.velocities]]
            w_dot, vec_dot = rodrigues.quaternion_rate(y[:, c.slots[0]], y[:, list(c.slots[1:])], omega)
            out[:, c.slots[0]], out[:, list(c.slots[1:])] = w_dot, vec_dot
            turning = _apply(rodrigues.jacobian(rho), qdd[:, list(c.velocities)]) + rodrigues.jacobian_rate(rho, rates)
            out[:, [self.size - self.k + j for j in c.velocities]] = turning
        return out

    def accelerations(self, y: np.ndarray, q: np.ndarray, v: np.ndarray, y_dot: np.ndarray) -> np.ndarray:
        """The independent accelerations (N, k) from the rates ẏ of states y (unpacked: q, v): ρ̈ = J⁻¹ (ω̇ − J̇ ρ̇)
        for a carried orientation, the velocities' rates otherwise."""
        out = y_dot[:, self.size - self.k :].copy()
        for c in self.carried:
            rho, rates = q[:, list(c.positions)], v[:, list(c.velocities)]
            turning = out[:, list(c.velocities)] - rodrigues.jacobian_rate(rho, rates)
            out[:, list(c.velocities)] = rodrigues.angular_velocity_to_rates(rho, turning)
        return out


def _apply(matrix: np.ndarray, x: np.ndarray) -> np.ndarray:
    return (matrix * x[..., None, :]).sum(axis=-1)


def float_where(x, a, b):
    """`nonnegative` for float arrays."""
    return np.where(x >= 0, a, b)
