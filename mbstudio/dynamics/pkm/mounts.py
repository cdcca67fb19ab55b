"""Congruent limbs and their mount frames (Müller 2021, sec. 7): a limb that is the representative limb placed by
a rigid motion S_0 of its ground joints' frames and S_p of its platform joints' frames, everything else equal
(joint types, frames on its own bodies, inertias), moves as the representative limb does, seen from S_0:
C_i = S_0 C_i' for its bodies and C_p = S_0 C_p' S_p⁻¹ for the platform (eq. 122-123). Its kinematics and its
mass and Coriolis terms are the representative limb's; only gravity is rotated, R_0ᵀ g (eq. 126)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...kinematics.geometry import FrameValue, Geometry
from ...model.document import GROUND, Model, body_key
from ...numerics.backends import Float64
from .topology import Limb

TOLERANCE = 1e-12  # relative: data typed the same way in every limb agrees to rounding


@dataclass(frozen=True)
class Mount:
    """S_0 = (rotation, origin) carries the representative limb's ground frames to this limb's, S_p its
    platform frames; `joints` pairs the representative limb's joints with this limb's, in order."""

    rotation: np.ndarray
    origin: np.ndarray
    platform_rotation: np.ndarray
    platform_origin: np.ndarray
    joints: tuple[tuple[str, str], ...]

    def coordinate_names(self, model: Model) -> dict[str, str]:
        """The representative limb's coordinate names -> this limb's."""
        return {
            a.name: b.name
            for ra, rb in self.joints
            for a, b in zip(model.joint(ra).coordinates, model.joint(rb).coordinates, strict=True)
        }


def identity_mount(limb: Limb) -> Mount:
    eye, zero = np.eye(3), np.zeros(3)
    return Mount(eye, zero, eye, zero, tuple((n, n) for n in limb.joint_names))


def _matrix(frame: FrameValue) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = np.asarray(frame.rotation, float), np.asarray(frame.origin, float)
    return out


def _close(a, b, scale: float = 1.0) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.abs(a - b).max(initial=0.0) <= TOLERANCE * max(scale, np.abs(a).max(initial=0.0)))


def mount(model: Model, reference: Limb, other: Limb, platform: str) -> Mount | None:
    """The mount frames placing `reference` as `other`, or None when the two are not congruent in this
    description (joints in the same order with the same types, bodies with the same inertia and the same
    joint frames, ground and platform frames each related by one rigid motion)."""
    if len(reference.joints) != len(other.joints) or len(reference.bodies) != len(other.bodies):
        return None
    geometry = Geometry(model, Float64())
    bodies: dict[str, str] = {GROUND: GROUND, platform: platform}
    ends: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {GROUND: [], platform: []}
    for a, b in zip(reference.joints, other.joints, strict=True):
        if a.type != b.type:
            return None
        for body_a, body_b, frame_a, frame_b in (
            (a.parent, b.parent, a.parent_frame, b.parent_frame),
            (a.child, b.child, a.child_frame, b.child_frame),
        ):
            la, lb = body_key(body_a), body_key(body_b)
            if bodies.setdefault(la, lb) != lb or (lb in (GROUND, platform) and la != lb):
                return None
            fa = _matrix(geometry.frame(model.body(la), frame_a))
            fb = _matrix(geometry.frame(model.body(lb), frame_b))
            if la in ends:
                ends[la].append((fa, fb))
            elif not _close(fa, fb):
                return None
    if any(
        not _close(geometry.inertia(model.body(a)), geometry.inertia(model.body(b)))
        for a, b in bodies.items()
        if a not in ends
    ):
        return None
    placements = [_placement(ends[end]) for end in (GROUND, platform)]
    if any(p is None for p in placements):
        return None
    (r0, t0), (rp, tp) = placements
    return Mount(r0, t0, rp, tp, tuple((a.name, b.name) for a, b in zip(reference.joints, other.joints, strict=True)))


def _placement(pairs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray] | None:
    """The one rigid motion S with F_other = S F_reference for every pair, or None."""
    if not pairs:
        return None
    first_a, first_b = pairs[0]
    S = first_b @ np.linalg.inv(first_a)
    if not all(_close(S @ fa, fb) for fa, fb in pairs[1:]):
        return None
    return S[:3, :3], S[:3, 3]
