"""What a body's motion relative to the ground keeps fixed, read from its joints (seed 000, section 4.2).

A fact says that a body does not move ("fixed"), only translates (Ω = 0, "translation"), turns about a
direction fixed in space and in the body ("axis", Ω ∥ a, possibly with a line of points at rest), turns about
a point at rest ("point"), or that nothing is known ("general"). Facts are carried from the ground across
every joint, tree or cut, from body to body; loops can impose more than the joints show, so the angular
velocities at random assembled states are also inspected (`observed_facts`, `equal_rotation_pairs`).
Quantities are exact sympy expressions in body axes, while the yes/no questions (parallel? intersecting?)
are answered at the model's parameter values, i.e. for generic geometry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import sympy

from ..kinematics.geometry import FrameValue, Geometry
from ..kinematics.mechanism import Mechanism
from ..model.document import GROUND, Joint, Model, body_key
from .energy import random_states

TOLERANCE = 1e-9


@dataclass(frozen=True)
class GroundMotion:
    """A fact about body `body`'s motion relative to the ground, found from `source` (joint names)."""

    body: str
    kind: str  # "fixed", "translation", "axis", "point" or "general"
    source: tuple[str, ...]
    axis: sympy.Matrix | None = None  # unit direction in body axes that Ω stays parallel to ("axis")
    world_axis: sympy.Matrix | None = None  # the same direction in ground axes, when known
    point: sympy.Matrix | None = None  # a body point at rest: on the fixed axis ("axis") or the fixed point


@dataclass(frozen=True)
class JointSide:
    """A joint seen from body `near` (frame `near_frame`) towards body `far` (frame `far_frame`)."""

    joint: Joint
    far: str
    near: str
    far_frame: FrameValue
    near_frame: FrameValue


def exact_frame(frame: FrameValue) -> FrameValue:
    return FrameValue(sympy.Matrix(frame.rotation.tolist()), sympy.Matrix(list(frame.origin)))


def joint_sides(model: Model, geometry: Geometry, joint: Joint) -> tuple[JointSide, JointSide]:
    """The joint seen towards its child and towards its parent."""
    parent, child = body_key(joint.parent), body_key(joint.child)
    fp = exact_frame(geometry.frame(model.body(parent), joint.parent_frame))
    fc = exact_frame(geometry.frame(model.body(child), joint.child_frame))
    return JointSide(joint, parent, child, fp, fc), JointSide(joint, child, parent, fc, fp)


def is_zero(values: dict, *exprs) -> bool:
    """Every expression vanishes at the model's parameter values (generic-geometry decision)."""
    return all(abs(float(sympy.sympify(e).subs(values))) < TOLERANCE for e in exprs)


def ground_facts(
    model: Model, geometry: Geometry, values: dict, observed: Sequence[GroundMotion] = ()
) -> list[GroundMotion]:
    """Facts for every body, carried from the ground (and from `observed` facts) across every joint, tree
    or cut, breadth first, until nothing new is learnt: a body of a loop gets what any neighbour tells it."""
    sides = [s for j in model.joints for s in joint_sides(model, geometry, j) if s.near != GROUND]
    queue = [GroundMotion(GROUND, "fixed", ()), *observed]
    found = list(observed)
    seen = {signature(f, values) for f in observed}
    while queue:
        fact = queue.pop(0)
        for side in sides:
            if side.far != fact.body or side.joint.name in fact.source:
                continue
            new = carry(fact, side, values)
            key = signature(new, values)
            if new.kind != "general" and key not in seen:
                seen.add(key)
                found.append(new)
                queue.append(new)
    return found


def signature(fact: GroundMotion, values: dict) -> tuple:
    """What a fact says, in rounded numbers: facts saying the same are found once."""

    def rounded(v):
        if v is None:
            return None
        x = [float(e.subs(values)) for e in v]
        sign = -1 if x[max(range(3), key=lambda k: abs(x[k]))] < 0 else 1
        return tuple(round(sign * e, 9) + 0.0 for e in x)

    point = None if fact.point is None else tuple(round(float(e.subs(values)), 9) + 0.0 for e in fact.point)
    return fact.body, fact.kind, rounded(fact.axis), point


def carry(fact: GroundMotion, side: JointSide, values: dict) -> GroundMotion:
    """The fact for the body beyond a joint, from the fact of the body before it."""
    body, source = side.near, (*fact.source, side.joint.name)
    kind, jtype = fact.kind, side.joint.type
    rotation = side.near_frame.rotation * side.far_frame.rotation.T  # far-body axes -> near-body axes
    z_near = side.near_frame.rotation[:, 2]
    general = GroundMotion(body, "general", source)
    if kind == "general" or jtype in ("free", "free_euler"):
        return general
    if jtype == "fixed":
        return replace(
            fact,
            body=body,
            source=source,
            axis=None if fact.axis is None else rotation * fact.axis,
            point=None if fact.point is None else moved_point(fact.point, side),
        )
    if kind == "fixed":
        return from_ground(side, source)
    if kind == "translation":
        if jtype == "prismatic":
            return GroundMotion(body, "translation", source)
        if jtype in ("revolute", "cylindrical", "planar"):
            return GroundMotion(body, "axis", source, z_near)
        return general
    if kind == "axis":
        return across_turning_body(fact, side, source, values)
    return across_fixed_point(fact, side, source, values)


def from_ground(side: JointSide, source: tuple[str, ...]) -> GroundMotion:
    """The fact beyond a joint whose far body does not move."""
    body, jtype = side.near, side.joint.type
    z_near, origin = side.near_frame.rotation[:, 2], side.near_frame.origin
    if jtype == "revolute":
        return GroundMotion(body, "axis", source, z_near, side.far_frame.rotation[:, 2], origin)
    if jtype == "prismatic":
        return GroundMotion(body, "translation", source)
    if jtype in ("cylindrical", "planar"):
        return GroundMotion(body, "axis", source, z_near, side.far_frame.rotation[:, 2])
    return GroundMotion(body, "point", source, point=origin)  # universal, ball, spherical


def moved_point(p: sympy.Matrix, side: JointSide) -> sympy.Matrix:
    """A point of the far body, on every rotation axis of the joint, in near-body coordinates."""
    rotation = side.near_frame.rotation * side.far_frame.rotation.T
    return side.near_frame.origin + rotation * (p - side.far_frame.origin)


def across_turning_body(fact: GroundMotion, side: JointSide, source: tuple[str, ...], values: dict) -> GroundMotion:
    """Beyond a body turning about a fixed axis a (through the fixed point c, if any)."""
    body, jtype = side.near, side.joint.type
    a, c = fact.axis, fact.point
    u, o = side.far_frame.rotation[:, 2], side.far_frame.origin  # joint axis and origin in far-body axes
    rotation = side.near_frame.rotation * side.far_frame.rotation.T
    general = GroundMotion(body, "general", source)
    if (
        jtype in ("revolute", "cylindrical", "planar", "prismatic")
        and is_zero(values, *a.cross(u))
        or jtype == "prismatic"
    ):
        # parallel axes (or a slide): Ω stays along a; the fixed line survives only a coaxial revolute
        coaxial = jtype == "revolute" and c is not None and is_zero(values, *(o - c).cross(a))
        return GroundMotion(
            body, "axis", source, rotation * a, fact.world_axis, moved_point(c, side) if coaxial else None
        )
    if c is None:
        return general
    if jtype == "revolute":
        n = a.cross(u)
        if not is_zero(values, (o - c).dot(n)):  # skew lines: no common point
            return general
        t = (o - c).cross(u).dot(n) / n.dot(n)
        return GroundMotion(body, "point", source, point=moved_point(c + t * a, side))
    if jtype in ("universal", "ball", "spherical") and is_zero(values, *(o - c).cross(a)):
        return GroundMotion(body, "point", source, point=moved_point(o, side))
    return general


def across_fixed_point(fact: GroundMotion, side: JointSide, source: tuple[str, ...], values: dict) -> GroundMotion:
    """Beyond a body turning about a fixed point c: c stays at rest if every joint axis passes through it."""
    body, jtype = side.near, side.joint.type
    c = fact.point
    u, o = side.far_frame.rotation[:, 2], side.far_frame.origin
    through = (jtype == "revolute" and is_zero(values, *(c - o).cross(u))) or (
        jtype in ("universal", "ball", "spherical") and is_zero(values, *(c - o))
    )
    if through:
        return GroundMotion(body, "point", source, point=moved_point(c, side))
    return GroundMotion(body, "general", source)


def observed_facts(
    mech: Mechanism, facts: list[GroundMotion], geometry: Geometry, notes: list[str], samples: int = 12
) -> list[GroundMotion]:
    """Facts the closed loops impose but the joints alone do not show (e.g. the coupler of a planar slider-
    crank built from spherical and universal joints turns about a fixed direction). At random assembled states
    (float64 `mech`): Ω in body axes is zero, or stays along one direction, matched to an exact axis of one of
    the body's frames; a body point stays at rest, matched to the body's named points and joint centres."""
    q, qd = random_states(mech, samples, seed=7)
    st = mech.motion(q, qd)
    values = {geometry.symbols[p.name]: p.value for p in mech.model.parameters}
    out = []
    for body in mech.model.bodies:
        if len(q) == 0:
            break
        mine = [f for f in facts if f.body == body.label]
        i = mech.tree.body_index(body.label)
        R = np.asarray(st.R[i], dtype=float)
        w = np.einsum("nji,nj->ni", R, np.asarray(st.w[i], dtype=float))
        v = np.einsum("nji,nj->ni", R, np.asarray(st.v[i], dtype=float))
        s, vt = np.linalg.svd(w)[1:]
        axis = None
        if s[0] < TOLERANCE:
            if not any(f.kind in ("fixed", "translation") for f in mine):
                out.append(GroundMotion(body.label, "translation", ("loop closure",)))
            continue
        if s[1] < TOLERANCE * s[0] and not any(f.kind in ("fixed", "axis") for f in mine):
            axis = exact_axis(body, geometry, vt[0])
            if axis is None:
                notes.append(
                    f"body {body.label} turns about the fixed direction {np.round(vt[0], 6).tolist()} (body "
                    "axes), which is none of its frame axes: its conditions 2 and 5 are not applied"
                )
        point = None
        if not any(f.kind in ("fixed", "point") or f.point is not None for f in mine) and solvable(w, -v):
            point = next(
                (
                    x
                    for x in body_points(geometry, body.label)
                    if np.abs(v + np.cross(w, np.asarray(x.subs(values), dtype=float).ravel())).max() < TOLERANCE
                ),
                None,
            )
            if point is None:
                notes.append(
                    f"body {body.label} has a point at rest that is none of its named points or joint "
                    "centres: its condition-1 monopole is not applied"
                )
        if axis is not None:
            world = sympy.Matrix(R[0] @ np.asarray(axis.subs(values), dtype=float).ravel())
            out.append(GroundMotion(body.label, "axis", ("loop closure",), axis, world, point))
        elif point is not None:
            out.append(GroundMotion(body.label, "point", ("loop closure",), point=point))
    return out


def solvable(w: np.ndarray, y: np.ndarray) -> bool:
    """Whether ω × u = y holds at every sample for one constant u (least squares; w, y (N, 3))."""
    skew = np.zeros((len(w), 3, 3))  # skew(ω) u = ω × u
    skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    skew[:, 1, 0], skew[:, 2, 0], skew[:, 2, 1] = w[:, 2], -w[:, 1], w[:, 0]
    A, b = skew.reshape(-1, 3), y.reshape(-1)
    u = np.linalg.lstsq(A, b, rcond=None)[0]
    return len(w) > 0 and np.abs(A @ u - b).max() < TOLERANCE * max(1.0, np.abs(b).max())


def exact_axis(body, geometry: Geometry, direction: np.ndarray) -> sympy.Matrix | None:
    """The body's coordinate axis or joint-frame axis parallel to `direction` (unit, floats), if any."""
    model = geometry.model
    frames = list(body.frames.values())
    frames += [j.parent_frame for j in model.joints if body_key(j.parent) == body.label]
    frames += [j.child_frame for j in model.joints if body_key(j.child) == body.label]
    candidates = [sympy.eye(3)[:, k] for k in range(3)]
    for frame in frames:
        rotation = exact_frame(geometry.frame(body, frame)).rotation
        candidates += [rotation[:, k] for k in range(3)]
    values = {geometry.symbols[p.name]: p.value for p in model.parameters}
    for c in candidates:
        if np.linalg.norm(np.cross(np.asarray(c.subs(values), dtype=float).ravel(), direction)) < 1e-7:
            return c
    return None


def equal_rotation_pairs(mech: Mechanism, samples: int = 12) -> list[tuple[str, str]]:
    """Pairs of rotating bodies whose angular velocities are always equal (Ω_i = Ω_j at random assembled
    states, float64): any quadrupole can move between them (seed 000, section 4.3, condition 6)."""
    q, qd = random_states(mech, samples, seed=11)
    st = mech.motion(q, qd)
    w = {b.label: np.asarray(st.w[mech.tree.body_index(b.label)], dtype=float) for b in mech.model.bodies}
    scale = max([1.0, *(np.abs(x).max() for x in w.values())])
    labels = [b.label for b in mech.model.bodies if np.abs(w[b.label]).max() > TOLERANCE * scale]
    return [
        (a, b)
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
        if len(q) and np.abs(w[a] - w[b]).max() < TOLERANCE * scale
    ]


def translated_copies(mech: Mechanism, pairs: Sequence[tuple[str, str]], geometry: Geometry, samples: int = 12) -> dict:
    """For pairs (a, b) with equal Ω: points x_a of a and x_b of b with equal velocities at random assembled
    states (float64), chosen among the bodies' joint centres and named points (exact). Such bodies move as
    translated copies (the opposite rods of a parallelogram): any multipole may move between them. Maps each
    pair to (x_a, x_b), or to None when the pair has points of equal velocity but none among the candidates."""
    q, qd = random_states(mech, samples, seed=13)
    st = mech.motion(q, qd)
    values = {geometry.symbols[p.name]: p.value for p in geometry.model.parameters}

    def velocity(label: str, x: sympy.Matrix) -> np.ndarray:
        i = mech.tree.body_index(label)
        arm = np.einsum("nij,j->ni", np.asarray(st.R[i], dtype=float), np.asarray(x.subs(values), dtype=float).ravel())
        return np.asarray(st.v[i], dtype=float) + np.cross(np.asarray(st.w[i], dtype=float), arm)

    out = {}
    for a, b in pairs:
        if not has_equal_velocity_points(st, mech.tree.body_index(a), mech.tree.body_index(b)):
            continue
        out[(a, b)] = next(
            (
                (xa, xb)
                for xa in body_points(geometry, a)
                for xb in body_points(geometry, b)
                if np.abs(velocity(a, xa) - velocity(b, xb)).max() < TOLERANCE
            ),
            None,
        )
    return out


def has_equal_velocity_points(st, i: int, j: int) -> bool:
    """v_j − v_i = −Ω × R_i u for one constant u in body-i axes: points of equal velocity exist."""
    R = np.asarray(st.R[i], dtype=float)
    w = np.einsum("nji,nj->ni", R, np.asarray(st.w[i], dtype=float))
    dv = np.einsum("nji,nj->ni", R, np.asarray(st.v[j], dtype=float) - np.asarray(st.v[i], dtype=float))
    return solvable(w, -dv)


def body_points(geometry: Geometry, label: str) -> list[sympy.Matrix]:
    """Exact candidate points of a body: its origin, named points and joint-frame origins."""
    model = geometry.model
    body = model.body(label)
    points = [sympy.zeros(3, 1)] + [sympy.Matrix(list(geometry.point(body, n))) for n in body.points]
    for j in model.joints:
        for side in joint_sides(model, geometry, j):
            if side.near == label:
                points.append(side.near_frame.origin)
    return points
