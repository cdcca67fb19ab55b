"""Angles a URDF writes rounded: π/2 as 1.5708 or 1.57079632679. The rounding tilts a joint by 3.7·10⁻⁶ or 4.9·10⁻¹²
rad, which couples parameters the exact geometry keeps apart (cos 1.5708 = 3.7·10⁻⁶ multiplies a first moment in the
base parameters) and, in variable precision, separates directions no log can resolve (docs/identification.md).

A joint origin's rotation R = Rz(yaw) Ry(pitch) Rx(roll) (URDF's rpy) is read back into its three angles; an angle
within SNAP_TOLERANCE of a multiple of π/4 is named, and `snapped` rebuilds R with those angles exact. At a pitch of
±π/2 only roll ∓ yaw is defined (gimbal lock): it is read as the roll with yaw 0, which gives the same R."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SNAP_TOLERANCE = 1e-5  # rad
QUARTER = math.pi / 4
EXACT = 8 * np.finfo(float).eps  # an angle this close to a multiple of π/4 is that multiple in float64


@dataclass(frozen=True)
class RoundedAngle:
    name: str  # roll, pitch or yaw
    value: float  # as read from the rotation
    multiple: int  # of π/4

    def text(self) -> str:
        return f"{self.name} {self.value:.10g} ≈ {_multiple_text(self.multiple)}"


def rpy(R: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) with R = Rz(yaw) Ry(pitch) Rx(roll); at gimbal lock (pitch within SNAP_TOLERANCE of
    ±π/2) yaw is 0 and roll is read as if pitch were exactly ±π/2 (R rebuilt to within the pitch's distance)."""
    pitch = math.asin(max(-1.0, min(1.0, -R[2, 0])))
    if abs(abs(pitch) - math.pi / 2) < SNAP_TOLERANCE:
        sign = 1.0 if pitch > 0 else -1.0
        return math.atan2(sign * R[0, 1], R[1, 1]), pitch, 0.0
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


def rotation(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (f(a) for a in (roll, pitch, yaw) for f in (math.cos, math.sin))
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def roll_pitch_yaw(rotation: np.ndarray) -> np.ndarray:
    """URDF's fixed-axis roll, pitch, yaw (R = Rz(yaw) Ry(pitch) Rx(roll)) of a rotation matrix, which give R back
    to rounding at every pitch, ±90° included. The yaw is read first; roll and pitch are then read from
    Rz(yaw)ᵀ R = Ry(pitch) Rx(roll), whose entries they are (cosines and sines of size one), instead of from
    entries of R scaled by cos(pitch): near ±90° those are tiny, and their rounding became errors of
    1e-16 / cos(pitch) in roll and yaw (1e-8 rad for a pitch written as 1.5707963). At ±90° only yaw − roll (or
    yaw + roll) matters, and the yaw read there, however poorly determined, is matched by the roll."""
    yaw = np.arctan2(rotation[1, 0], rotation[0, 0])
    c, s = np.cos(yaw), np.sin(yaw)
    turned_back = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]) @ rotation  # Ry(pitch) Rx(roll)
    pitch = np.arctan2(-turned_back[2, 0], turned_back[0, 0])
    roll = np.arctan2(-turned_back[1, 2], turned_back[1, 1])
    return np.array([roll, pitch, yaw])


def rounded_angles(R: np.ndarray) -> list[RoundedAngle]:
    """The angles of R within SNAP_TOLERANCE of a multiple of π/4 but not exactly one."""
    out = []
    for name, value in zip(("roll", "pitch", "yaw"), rpy(R), strict=True):
        k = round(value / QUARTER)
        if EXACT * max(1.0, abs(value)) < abs(value - k * QUARTER) < SNAP_TOLERANCE:
            out.append(RoundedAngle(name, value, k))
    return out


def snapped(R: np.ndarray) -> np.ndarray:
    """R with each angle within SNAP_TOLERANCE of a multiple of π/4 made that multiple; the exact zeros and ones of
    such a rotation are written as such (cos(π/2) in float64 is 6·10⁻¹⁷)."""
    out = rotation(*(_snap(a) for a in rpy(R)))
    out[np.abs(out) < EXACT] = 0.0
    unit = np.abs(np.abs(out) - 1.0) < EXACT
    out[unit] = np.sign(out[unit])
    return out


def _snap(angle: float) -> float:
    multiple = round(angle / QUARTER) * QUARTER
    return multiple if abs(angle - multiple) < SNAP_TOLERANCE else angle


def _multiple_text(k: int) -> str:
    """k·π/4 in lowest terms: 'π/2', '-3π/4', '0'."""
    if k == 0:
        return "0"
    g = math.gcd(abs(k), 4)
    num, den = k // g, 4 // g
    head = "-" if num < 0 else ""
    count = "" if abs(num) == 1 else str(abs(num))
    return f"{head}{count}π" + ("" if den == 1 else f"/{den}")
