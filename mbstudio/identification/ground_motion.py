"""What a body's motion relative to the ground keeps fixed, read from its joints (Iriarte et al. 2017, section 4.2).

A fact says that a body does not move ("fixed"), only translates (Ω = 0, "translation", possibly along one
fixed direction), turns about a direction fixed in space and in the body ("axis", Ω ∥ a, possibly with a line
of points at rest, or a fixed line whose points move only along it: a carriage's coaxial revolute, a cylindrical
joint), turns about a point at rest ("point"), or that nothing is known ("general"). Facts are carried from the
ground across every joint, tree or cut, from body to body; loops can impose more than the joints show, so the
motions at random assembled states are also inspected (`observed_facts`, each relation decided in two precisions
by `loop_evidence`).
Quantities are exact sympy expressions in body axes, while the yes/no questions (parallel? intersecting?)
are answered at the model's parameter values, i.e. for generic geometry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import sympy

from ..kinematics.geometry import FrameValue, Geometry
from ..model.document import GROUND, Joint, Model, body_key
from ..numerics.spatial import cross, matvec
from .loop_evidence import DIGITS, SCREEN, LoopEvidence, vanishing_bound


@dataclass(frozen=True)
class GroundMotion:
    """A fact about body `body`'s motion relative to the ground, found from `source` (joint names)."""

    body: str
    kind: str  # "fixed", "translation", "axis", "point" or "general"
    source: tuple[str, ...]
    axis: sympy.Matrix | None = None  # unit direction in body axes that Ω stays parallel to ("axis"), or of
    # the translation ("translation" along one direction)
    world_axis: sympy.Matrix | None = None  # the same direction in ground axes, when known
    point: sympy.Matrix | None = None  # a body point at rest: on the fixed axis ("axis") or the fixed point
    line: sympy.Matrix | None = None  # a body point of the axis whose velocity stays along it ("axis")


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
    """Every expression vanishes at the model's parameter values (generic-geometry decision), evaluated at
    DIGITS digits with the values read as the decimals they are: an expression that vanishes identically
    comes out exactly 0 or at the rounding of DIGITS digits, far below the `vanishing_bound` called zero, and a
    dimension of the mechanism far above it (right angles written as 1.57079632679 leave products of two 5e-12 cosines,
    2e-23, far above it too)."""
    exact = {s: sympy.Rational(repr(float(v))) for s, v in values.items()}
    bound = sympy.Float(vanishing_bound(0.0), DIGITS)
    return all(abs(sympy.N(sympy.sympify(e).subs(exact), DIGITS)) <= bound for e in exprs)


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

    def located(v):
        return None if v is None else tuple(round(float(e.subs(values)), 9) + 0.0 for e in v)

    return fact.body, fact.kind, rounded(fact.axis), located(fact.point), located(fact.line)


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
            line=None if fact.line is None else moved_point(fact.line, side),
        )
    if kind == "fixed":
        return from_ground(side, source)
    if kind == "translation":
        along = fact.axis is not None and is_zero(values, *(rotation * fact.axis).cross(z_near))
        if jtype == "prismatic":
            return (
                replace(fact, body=body, source=source, axis=rotation * fact.axis)
                if along
                else GroundMotion(body, "translation", source)
            )
        if jtype in ("revolute", "cylindrical") and along:  # about the line the body slides along
            return GroundMotion(
                body, "axis", source, rotation * fact.axis, fact.world_axis, line=side.near_frame.origin
            )
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
        return GroundMotion(body, "translation", source, z_near, side.far_frame.rotation[:, 2])
    if jtype == "cylindrical":
        return GroundMotion(body, "axis", source, z_near, side.far_frame.rotation[:, 2], line=origin)
    if jtype == "planar":
        return GroundMotion(body, "axis", source, z_near, side.far_frame.rotation[:, 2])
    return GroundMotion(body, "point", source, point=origin)  # universal, ball, spherical


def moved_point(p: sympy.Matrix, side: JointSide) -> sympy.Matrix:
    """A point of the far body, on every rotation axis of the joint, in near-body coordinates."""
    rotation = side.near_frame.rotation * side.far_frame.rotation.T
    return side.near_frame.origin + rotation * (p - side.far_frame.origin)


def across_turning_body(fact: GroundMotion, side: JointSide, source: tuple[str, ...], values: dict) -> GroundMotion:
    """Beyond a body turning about a fixed axis a (through the fixed point c, if any; the points of a fixed
    line through `line` may slide along a)."""
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
        # parallel axes (or a slide): Ω stays along a; the line at rest survives only a coaxial revolute, and
        # becomes a line sliding along a beyond a coaxial cylindrical joint or a slide along a
        on = c if c is not None else fact.line
        coaxial = on is not None and is_zero(values, *(o - on).cross(a))
        slides = jtype == "cylindrical" and coaxial or jtype == "prismatic" and is_zero(values, *a.cross(u))
        rests = jtype == "revolute" and coaxial and c is not None
        keeps = (jtype == "revolute" and coaxial or slides) and not rests and on is not None
        return GroundMotion(
            body,
            "axis",
            source,
            rotation * a,
            fact.world_axis,
            moved_point(c, side) if rests else None,
            moved_point(on, side) if keeps else None,
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
    evidence: LoopEvidence, facts: list[GroundMotion], geometry: Geometry, notes: list[str]
) -> list[GroundMotion]:
    """Facts the closed loops impose but the joints alone do not show (a parallelogram's coupler only
    translates; the coupler of a planar slider-crank built from spherical and universal joints turns about a
    fixed direction). Each is an identity decided in two precisions (`loop_evidence`): Ω ≡ 0; Ω × a ≡ 0 for an
    axis a of one of the body's frames; v + Ω × x ≡ 0 (at rest) or (v + Ω × x) × a ≡ 0 (sliding along the
    axis) for one of its named points or joint centres x."""
    model = geometry.model
    out = []
    for body in model.bodies:
        label, mine = body.label, [f for f in facts if f.body == body.label]
        if evidence.holds(lambda m, b=label: m.bodies[b].w):
            if not any(f.kind in ("fixed", "translation") for f in mine):
                out.append(GroundMotion(label, "translation", ("loop closure",)))
            continue
        axis = None
        if not any(f.kind in ("fixed", "axis") for f in mine):
            axis = next((a for a in axis_candidates(geometry, label) if turns_about(evidence, label, a)), None)
            if axis is None and (direction := fixed_direction(evidence.float64.bodies[label].w)) is not None:
                notes.append(
                    f"body {label} turns about the fixed direction {np.round(direction, 6).tolist()} (body "
                    "axes), which is none of its frame axes: its conditions 2 and 5 are not applied"
                )
        point = line = None
        if not any(f.kind in ("fixed", "point") or f.point is not None for f in mine):
            point = next((x for x in body_points(geometry, label) if at_rest(evidence, label, x)), None)
            body_motion = evidence.float64.bodies[label]
            if point is None and solvable(body_motion.w, -body_motion.v):
                notes.append(
                    f"body {label} has a point at rest that is none of its named points or joint "
                    "centres: its condition-1 monopole is not applied"
                )
        if axis is not None and point is None:
            line = next((x for x in body_points(geometry, label) if slides_along(evidence, label, x, axis)), None)
        if axis is not None:
            world = ground_direction(evidence, label, axis)
            out.append(GroundMotion(label, "axis", ("loop closure",), axis, world, point, line))
        elif point is not None:
            out.append(GroundMotion(label, "point", ("loop closure",), point=point))
    return out


def turns_about(evidence: LoopEvidence, label: str, a: sympy.Matrix) -> bool:
    return evidence.holds(lambda m: cross(m.bodies[label].w, m.vector(a)))


def at_rest(evidence: LoopEvidence, label: str, x: sympy.Matrix) -> bool:
    return evidence.holds(lambda m: m.bodies[label].v + cross(m.bodies[label].w, m.vector(x)), "speed")


def slides_along(evidence: LoopEvidence, label: str, x: sympy.Matrix, a: sympy.Matrix) -> bool:
    """The point x moves only along the axis a: (v + Ω × x) × a ≡ 0."""

    def residual(m):
        body = m.bodies[label]
        return cross(body.v + cross(body.w, m.vector(x)), m.vector(a))

    return evidence.holds(residual, "speed")


def fixed_direction(w: np.ndarray) -> np.ndarray | None:
    """The direction (body axes) that float64 angular velocities w (N, 3) keep to, if they keep to one."""
    s, vt = np.linalg.svd(np.asarray(w, dtype=float))[1:]
    return vt[0] if len(w) and s[1] < SCREEN * s[0] else None


def ground_direction(evidence: LoopEvidence, label: str, axis: sympy.Matrix) -> sympy.Matrix:
    """The body axis `axis` in ground axes: constant, since the body turns about it; taken from the states at
    DIGITS digits (to their accuracy, far below what `is_zero` calls zero), else from float64."""
    m = evidence.vp or evidence.float64
    world = matvec(m.bodies[label].R[0], m.vector(axis))
    return sympy.Matrix([sympy.Float(str(x), m.digits) for x in world])


def solvable(w: np.ndarray, y: np.ndarray) -> bool:
    """Whether ω × u = y holds at every float64 sample for one constant u (least squares; w, y (N, 3)); a
    screen for the notes, SCREEN relative."""
    w, y = np.asarray(w, dtype=float), np.asarray(y, dtype=float)
    skew = np.zeros((len(w), 3, 3))  # skew(ω) u = ω × u
    skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    skew[:, 1, 0], skew[:, 2, 0], skew[:, 2, 1] = w[:, 2], -w[:, 1], w[:, 0]
    A, b = skew.reshape(-1, 3), y.reshape(-1)
    u = np.linalg.lstsq(A, b, rcond=None)[0]
    return len(w) > 0 and np.abs(A @ u - b).max() < SCREEN * max(1.0, np.abs(b).max())


def axis_candidates(geometry: Geometry, label: str) -> list[sympy.Matrix]:
    """Exact unit axes of a body: its coordinate axes and the axes of its named and joint frames."""
    model = geometry.model
    body = model.body(label)
    frames = list(body.frames.values())
    frames += [j.parent_frame for j in model.joints if body_key(j.parent) == label]
    frames += [j.child_frame for j in model.joints if body_key(j.child) == label]
    candidates = [sympy.eye(3)[:, k] for k in range(3)]
    for frame in frames:
        rotation = exact_frame(geometry.frame(body, frame)).rotation
        candidates += [rotation[:, k] for k in range(3)]
    return candidates


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
