"""Measures: quantities the user defines in the document (`model.measures`), evaluated along any motion and
added to its columns, so a kinematics run, a simulation and their CSV files all carry them.

    columns = measure_columns(mech, t, q, qd, qdd)   # [(name, unit, values (N,)), ...]

Positions, velocities and accelerations come from the tree's motion state (exact, no differencing); the rates
of the suspension set (motion ratio, bump steer) are ratios of exact rates along the motion, so they hold for a
wheel-travel sweep and for a simulation alike, and are NaN where the wheel centre does not move vertically.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from ..dynamics.force_laws.base import Arrow, Column
from ..dynamics.forces import AppliedForces
from ..kinematics.mechanism import Mechanism
from ..kinematics.tree import BodyMotion
from ..model.document import (
    AngleMeasure,
    DistanceMeasure,
    ForceMeasure,
    Measure,
    PointMeasure,
    SuspensionMeasure,
)
from ..numerics.spatial import cross  # numpy's cross costs 40 µs a call on these short arrays

STILL = 1e-9  # m/s: a wheel centre slower than this vertically has no motion ratio or bump steer
Z = np.array([0.0, 0.0, 1.0])


class _Motion:
    """World positions, velocities and accelerations of body points and axes along one motion."""

    def __init__(
        self,
        mech: Mechanism,
        t: np.ndarray,
        q: np.ndarray,
        qd: np.ndarray,
        qdd: np.ndarray | None,
        state: BodyMotion | None = None,
        law_states: dict[str, np.ndarray] | None = None,
    ) -> None:
        """`state`: the motion's BodyMotion (a MotionState is one) when the caller has it; `law_states`: the states
        force laws own (force_laws/base.py), (N, its count) by element name."""
        self.mech, self.t, self.q, self.qd = mech, t, q, qd
        self.law_states = law_states or {}
        self.state = mech.motion(q, qd, np.zeros_like(q) if qdd is None else qdd) if state is None else state
        self.geometry = mech.tree.geometry

    def point(self, label: str, name: str, at_document_pose: bool = False, rates: int = 2) -> tuple[np.ndarray, ...]:
        """Position, velocity, acceleration (N, 3) of a named point, the position and its first `rates` rates only
        where the caller needs no more (at the document's pose: position only)."""
        local = _local_point(self.mech, label, name)
        st = document_pose(self.mech)[1] if at_document_pose else self.state
        i = self.mech.tree.body_index(label)
        r = np.einsum("nij,j->ni", st.R[i], local)
        if at_document_pose or rates == 0:
            return (st.p[i] + r,)
        w = st.w[i]
        if rates == 1:
            return st.p[i] + r, st.v[i] + cross(w, r)
        return st.p[i] + r, st.v[i] + cross(w, r), st.a[i] + cross(st.al[i], r) + cross(w, cross(w, r))

    def axis(self, label: str, vector) -> tuple[np.ndarray, np.ndarray]:
        """Unit direction (N, 3) of an axis fixed in a body, and its rate ω × d."""
        local = np.asarray(self.geometry.vector(vector), float)
        i = self.mech.tree.body_index(label)
        d = np.einsum("nij,j->ni", self.state.R[i], local / np.linalg.norm(local))
        return d, cross(self.state.w[i], d)

    def line(self, body1: str, point1: str, body2: str, point2: str) -> tuple[np.ndarray, np.ndarray]:
        """Distance between two body points and its rate."""
        (p1, v1), (p2, v2) = self.point(body1, point1, rates=1), self.point(body2, point2, rates=1)
        d = p2 - p1
        length = np.linalg.norm(d, axis=1)
        return length, np.einsum("ni,ni->n", d, v2 - v1) / length


# the document's pose of each mechanism alive, assembled once: every run of a document measures from it
_POSES: weakref.WeakKeyDictionary[Mechanism, tuple] = weakref.WeakKeyDictionary()


def _local_point(mech: Mechanism, label: str, name: str) -> np.ndarray:
    """A named point in its body's frame (3,), evaluated once per mechanism as `document_pose` is: every run of a
    document measures at the same points (their expressions were a fifth of the SLA's measures)."""
    points = _POINTS.setdefault(mech, {})
    if (label, name) not in points:
        points[label, name] = np.asarray(mech.tree.geometry.point(mech.model.body(label), name), float)
    return points[label, name]


_POINTS: weakref.WeakKeyDictionary[Mechanism, dict] = weakref.WeakKeyDictionary()


def document_pose(mech: Mechanism) -> tuple[np.ndarray, object]:
    """The mechanism's initial values with its loops closed (1, n), float64 (assembled without raising), where
    wheel travel is zero, and the bodies' poses there."""
    found = _POSES.get(mech)
    if found is None:
        pose = np.asarray(mech.assemble(None, strict=False), float)
        found = _POSES[mech] = (pose, mech.motion(pose))
    return found


def remember_pose(mech: Mechanism, closed: np.ndarray) -> None:
    """Files `closed` (1, n), what mech.assemble(None) gave without a branch change, as the document's pose of a
    mechanism whose measures need it: document_pose would take the same Newton steps from the same values."""
    if mech.model.measures and mech not in _POSES:
        pose = np.array(closed, float)
        _POSES[mech] = (pose, mech.motion(pose))


def measure_columns(
    mech: Mechanism, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, state=None, law_states=None
) -> list[Column]:
    """Every measure of the document along the motion (t, q, q̇, q̈), each (N,) in float64; `state`: the
    motion's state (mech.motion(q, q̇, q̈)) when the caller has it already; `law_states`: the force laws' own states
    along it, by element name (at rest where absent)."""
    if not mech.model.measures:
        return []
    q, qd, qdd = (np.asarray(x, float) for x in (q, qd, qdd))
    motion = _Motion(mech, np.asarray(t, float), q, qd, qdd, state, law_states)
    return [column for m in mech.model.measures for column in EVALUATORS[type(m)](motion, m)]


def _point(motion: _Motion, m: PointMeasure) -> list[Column]:
    pos, vel, acc = motion.point(m.body, m.point)
    out = []
    for prefix, unit, values in (("", "m", pos), ("v", "m/s", vel), ("a", "m/s^2", acc)):
        out += [(f"{m.name}.{prefix}{axis}", unit, values[:, k]) for k, axis in enumerate("xyz")]
    return out


def _distance(motion: _Motion, m: DistanceMeasure) -> list[Column]:
    length, rate = motion.line(m.body1, m.point1, m.body2, m.point2)
    return [(m.name, "m", length), (f"{m.name}.rate", "m/s", rate)]


def _angle(motion: _Motion, m: AngleMeasure) -> list[Column]:
    (d1, _), (d2, _) = motion.axis(m.body1, m.axis1), motion.axis(m.body2, m.axis2)
    # atan2 of |d1 × d2| and d1·d2: accurate near 0 and pi, where arccos of the dot product is not
    angle = np.arctan2(np.linalg.norm(cross(d1, d2), axis=1), np.einsum("ni,ni->n", d1, d2))
    return [(m.name, "rad", angle)]


def _force(motion: _Motion, m: ForceMeasure) -> list[Column]:
    element = next(e for e in motion.mech.model.forces if e.name == m.element)
    return AppliedForces(motion.mech, [element]).laws[0].measure(motion, m.name)


def _suspension(motion: _Motion, m: SuspensionMeasure) -> list[Column]:
    """The alignment angles from the spin axis s (outboard) and the kingpin axis k (lower to upper ball)."""
    centre, centre_velocity = motion.point(m.wheel, m.centre, rates=1)
    (reference_centre,) = motion.point(m.wheel, m.centre, at_document_pose=True)
    side = 1.0 if reference_centre[0, 1] >= 0 else -1.0  # +1: a left wheel (y > 0), -1: a right one
    s, s_rate = motion.axis(m.wheel, m.spin_axis)
    flip = np.where(s[:, 1] * side < 0, -1.0, 1.0)[:, None]  # the spin axis pointing outboard
    s, s_rate = s * flip, s_rate * flip
    heading, heading_rate = side * cross(s, Z), side * cross(s_rate, Z)  # forward in the wheel plane
    toe = np.arctan2(-side * heading[:, 1], heading[:, 0])
    toe_rate = (heading[:, 0] * -side * heading_rate[:, 1] + side * heading[:, 1] * heading_rate[:, 0]) / (
        heading[:, 0] ** 2 + heading[:, 1] ** 2
    )
    (lower,), (upper,) = (
        motion.point(m.lower_body, m.lower_point, rates=0),
        motion.point(m.upper_body, m.upper_point, rates=0),
    )
    k = (upper - lower) / np.linalg.norm(upper - lower, axis=1)[:, None]
    down = -Z + s[:, 2:3] * s  # down in the wheel plane, towards the contact point
    contact = centre + float(motion.geometry.value(m.radius)) * down / np.linalg.norm(down, axis=1)[:, None]
    ground_point = lower + k * ((contact[:, 2] - lower[:, 2]) / k[:, 2])[:, None]  # kingpin axis meets the ground
    vertical = centre_velocity[:, 2]
    moving = np.abs(vertical) > STILL

    def per_travel(rate: np.ndarray) -> np.ndarray:
        return np.divide(rate, vertical, out=np.full_like(rate, np.nan), where=moving)

    out = [
        (f"{m.name}.toe", "rad", toe),
        (f"{m.name}.camber", "rad", np.arcsin(np.clip(-s[:, 2], -1, 1))),
        (f"{m.name}.caster", "rad", np.arctan2(-k[:, 0], k[:, 2])),
        (f"{m.name}.kingpin_inclination", "rad", np.arctan2(-side * k[:, 1], k[:, 2])),
        (f"{m.name}.scrub_radius", "m", side * (contact[:, 1] - ground_point[:, 1])),
        (f"{m.name}.wheel_travel", "m", centre[:, 2] - reference_centre[0, 2]),
        (f"{m.name}.bump_steer", "rad/m", per_travel(toe_rate)),
    ]
    if m.damper is not None:
        damper = next(e for e in motion.mech.model.forces if e.name == m.damper)
        _, rate = motion.line(damper.body1, damper.point1, damper.body2, damper.point2)
        out.append((f"{m.name}.motion_ratio", "1", per_travel(-rate)))  # compression per bump: positive
    return out


def applied_forces(mech: Mechanism, t: float, q: np.ndarray, qd: np.ndarray) -> list[Arrow]:
    """The forces the elements acting at body points apply at one state: (element, application point, force)
    in world axes, a spring-damper's tension once at each end pulling them together; for force arrows."""
    motion = _Motion(mech, np.array([t], float), np.asarray(q, float)[None], np.asarray(qd, float)[None], None)
    return [arrow for law in AppliedForces(mech, mech.model.forces).laws for arrow in law.arrows(motion, t)]


EVALUATORS: dict[type, Callable[[_Motion, Measure], list[Column]]] = {
    PointMeasure: _point,
    DistanceMeasure: _distance,
    AngleMeasure: _angle,
    ForceMeasure: _force,
    SuspensionMeasure: _suspension,
}
