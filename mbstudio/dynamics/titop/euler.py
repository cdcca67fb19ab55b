"""The 3-2-1 Euler attitude of a floating base: Θ = (φ, θ, ψ),
P_{b/i} = Rz(ψ) Ry(θ) Rx(φ), and the rate matrix Γ(Θ) with Θdot = Γ(Θ) ω_b, singular at θ = ±90° (gimbal lock).

A document's free joint moves as Tx Ty Tz Rz Ry Rx about its own axes, so its coordinates (ψ, θ, φ) are these
angles in the order the joint lists them.
"""

from __future__ import annotations

import numpy as np

from ...model.errors import ModelError
from .motion import mm

GIMBAL_MARGIN = 1e-6  # |cos θ| below this: Γ(Θ) is singular to working precision


def _elementary(axis: int, c, s) -> np.ndarray:
    """Rotation by the angle (cos c, sin s) about a coordinate axis, (N, 3, 3)."""
    one, zero = np.ones_like(c), np.zeros_like(c)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.empty(np.shape(c) + (3, 3), dtype=np.asarray(c).dtype)
    for row in range(3):
        for col in range(3):
            R[..., row, col] = one if row == col == axis else zero
    R[..., i, i], R[..., j, j], R[..., i, j], R[..., j, i] = c, c, -s, s
    return R


def dcm(euler: np.ndarray, backend) -> np.ndarray:
    """P_{b/i} = Rz(ψ) Ry(θ) Rx(φ) for Θ = (φ, θ, ψ) (N, 3)."""
    c, s = backend.cos(euler), backend.sin(euler)
    return mm(
        mm(_elementary(2, c[..., 2], s[..., 2]), _elementary(1, c[..., 1], s[..., 1])),
        _elementary(0, c[..., 0], s[..., 0]),
    )


def angles(R: np.ndarray) -> np.ndarray:
    """Θ = (φ, θ, ψ) of P_{b/i} (float64): θ = −asin P20, φ = atan2(P21, P22), ψ = atan2(P10, P00)."""
    R = np.asarray(R, dtype=float)
    return np.stack(
        [
            np.arctan2(R[..., 2, 1], R[..., 2, 2]),
            -np.arcsin(np.clip(R[..., 2, 0], -1, 1)),
            np.arctan2(R[..., 1, 0], R[..., 0, 0]),
        ],
        axis=-1,
    )


def rate_matrix(euler: np.ndarray, backend) -> np.ndarray:
    """Γ(Θ) (N, 3, 3), Θdot = Γ(Θ) ω_b: [[1, sφ tθ, cφ tθ], [0, cφ, −sφ], [0, sφ/cθ, cφ/cθ]]."""
    c, s = backend.cos(euler[..., :2]), backend.sin(euler[..., :2])
    cf, sf, ct, st = c[..., 0], s[..., 0], c[..., 1], s[..., 1]
    one, zero = np.ones_like(cf), np.zeros_like(cf)
    rows = [[one, sf * st / ct, cf * st / ct], [zero, cf, -sf], [zero, sf / ct, cf / ct]]
    return _matrix(rows)


def inverse_rate_matrix(euler: np.ndarray, backend) -> np.ndarray:
    """Γ(Θ)⁻¹ (N, 3, 3), ω_b = Γ⁻¹ Θdot: [[1, 0, −sθ], [0, cφ, sφ cθ], [0, −sφ, cφ cθ]] (regular everywhere)."""
    c, s = backend.cos(euler[..., :2]), backend.sin(euler[..., :2])
    cf, sf, ct, st = c[..., 0], s[..., 0], c[..., 1], s[..., 1]
    one, zero = np.ones_like(cf), np.zeros_like(cf)
    return _matrix([[one, zero, -st], [zero, cf, sf * ct], [zero, -sf, cf * ct]])


def _matrix(rows: list[list[np.ndarray]]) -> np.ndarray:
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def check_gimbal(theta: np.ndarray, joint: str, coordinate: str, when: str) -> None:
    """A ModelError when θ is at the 3-2-1 gimbal lock (|cos θ| < GIMBAL_MARGIN), naming the joint, its
    coordinate and the time or state (`when`)."""
    theta = np.asarray(theta, dtype=float)
    if np.any(np.abs(np.cos(theta)) < GIMBAL_MARGIN):
        value = float(np.ravel(theta)[np.argmin(np.abs(np.cos(np.ravel(theta))))])
        raise ModelError(
            f"joint '{joint}'",
            f"its 3-2-1 Euler angle {coordinate} = {np.degrees(value):.6g}° {when} is at the gimbal lock of the "
            "floating-base block, where Θdot = Γ(Θ) ω has no solution",
            value,
            f"{coordinate} away from ±90° (the attitude is Rz(ψ) Ry(θ) Rx(φ) from the free joint's parent frame: "
            "turn that frame so the motion keeps θ away from ±90°)",
        )
