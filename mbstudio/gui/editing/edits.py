"""Document edits as plain functions on a Model (no Qt): each mutates the model it is given.

The window applies them to a copy, validates the copy, and only then makes it the document (commands.py),
so an edit that raises or leaves an invalid model changes nothing.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterator

import numpy as np

from ...kinematics import Mechanism
from ...kinematics.topology import spanning_tree
from ...model import (
    INERTIA_NAMES,
    JOINT_MOTIONS,
    Body,
    Coordinate,
    Coupling,
    Frame,
    Joint,
    Model,
    ModelError,
    Parameter,
)
from ...model.document import (
    BUSHING_DIRECTIONS,
    FORCE_ELEMENTS,
    GROUND,
    MEASURES,
    PLACES,
    Bushing,
    Harmonic,
    Trajectory,
    body_key,
)
from ...model.expressions import names as expression_names
from ...numerics import rodrigues

# Inertia of a new body: 1 kg, a small positive-definite tensor, so the model stays physically valid.
_NEW_INERTIA = {**dict.fromkeys(INERTIA_NAMES, 0.0), "m": 1.0, "Ixx": 0.001, "Iyy": 0.001, "Izz": 0.001}


def parse_expression(text: str) -> float | str:
    """What the user typed in an expression field: a number when it is one, else the expression text."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        return text


def parse_vector(text: str, where: str, value=parse_expression) -> list[float | str]:
    """Three comma-separated numbers or expressions (each read by `value`), or a ModelError naming `where`."""
    parts = text.split(",")
    if len(parts) != 3 or not all(p.strip() for p in parts):
        raise ModelError(where, "must be three values separated by commas", text.strip(), "x, y, z, e.g. 0, 0, 1")
    return [value(p) for p in parts]


def free_name(prefix: str, taken: set[str]) -> str:
    i = 1
    while f"{prefix}{i}" in taken:
        i += 1
    return f"{prefix}{i}"


# ------------------------------------------------------------------ references


def _expressions(model: Model):
    """(where, expression) for every geometric or inertial field of the model."""
    yield "gravity", model.gravity
    for body in [model.ground, *model.bodies]:
        owner = f"body '{body.name}'"
        for n, v in body.inertia.items():
            yield f"{owner} {n}", [v]
        for n, p in body.points.items():
            yield f"{owner} point '{n}'", p
        for n, f in body.frames.items():
            yield f"{owner} frame '{n}'", _frame_values(f)
        for k, v in (body.shape or {}).items():
            if k not in ("type", "color", "file"):
                yield f"{owner} shape {k}", v if isinstance(v, list) else [v]
    for joint in model.joints:
        for side in ("parent_frame", "child_frame"):
            frame = getattr(joint, side)
            if isinstance(frame, Frame):
                yield f"joint '{joint.name}' {side}", _frame_values(frame)
    for trajectory in model.trajectories:
        for coordinate, harmonics in trajectory.coordinates.items():
            yield (
                f"trajectory '{trajectory.name}' {coordinate}",
                [v for h in harmonics for v in (h.amplitude, h.frequency, h.phase)],
            )
    for kind, elements in (("force", model.forces), ("measure", model.measures)):
        for element in elements:
            yield (
                f"{kind} '{element.name}'",
                [v for _, value in _force_values(element) for v in (value if isinstance(value, list) else [value])],
            )


# Fields of force elements and measures that name something (or hold a table of numbers), not an expression.
_FORCE_REFERENCES = {"name", "coordinate", "table", "element", "damper", *(n for pair in PLACES for n in pair)}


def _force_values(element) -> Iterator[tuple[str, object]]:
    """(field, value) for a force element's or measure's expression fields (vectors as lists)."""
    for f in dataclasses.fields(element):
        if f.name not in _FORCE_REFERENCES:
            yield f.name, getattr(element, f.name)


def _force_ends(element) -> list[tuple[str, str | None]]:
    """The (body field, point field or None) pairs of a force element or measure: where it acts or measures
    (an angle measure's bodies carry axes, not points)."""
    return [(b, p if hasattr(element, p) else None) for b, p in PLACES if hasattr(element, b)]


def _frames_on(model: Model, label: str) -> Iterator[tuple[str, Frame]]:
    """(where, frame) for every frame placed on body `label`: its own and the joints' frames on it."""
    body = model.body(label)
    yield from ((f"frame '{n}'", f) for n, f in body.frames.items())
    for j in model.joints:
        for side in ("parent", "child"):
            frame = getattr(j, f"{side}_frame")
            if body_key(getattr(j, side)) == body_key(label) and isinstance(frame, Frame):
                yield f"joint '{j.name}' {side} frame", frame


def _frame_values(frame: Frame) -> list:
    origin = [] if isinstance(frame.origin, str) else list(frame.origin)
    return origin + list(frame.z or []) + list(frame.x or [])


def parameter_uses(model: Model, name: str) -> list[str]:
    """Where a parameter appears in expressions, in words."""
    return [where for where, values in _expressions(model) if any(name in expression_names(v) for v in values)]


def _acts_on_body(element, label: str) -> bool:
    return any(body_key(getattr(element, b)) == body_key(label) for b, _ in _force_ends(element))


def _acts_at_point(element, label: str, point: str) -> bool:
    return any(
        body_key(getattr(element, b)) == body_key(label) and p is not None and getattr(element, p) == point
        for b, p in _force_ends(element)
    )


def _measures_of(model: Model, forces: set[str]) -> list:
    """The measures of the force elements named."""
    return [m for m in model.measures if {getattr(m, "element", None), getattr(m, "damper", None)} & forces]


def body_uses(model: Model, label: str) -> list[str]:
    """The joints attached to a body, what refers to their coordinates, and the force elements on it."""
    joints = [j.name for j in model.joints if label in (body_key(j.parent), body_key(j.child))]
    return (
        [f"joint '{j}'" for j in joints]
        + [use for j in joints for use in joint_uses(model, j)]
        + [f"force '{e.name}'" for e in model.forces if _acts_on_body(e, label)]
        + [f"measure '{m.name}'" for m in model.measures if _acts_on_body(m, label)]
    )


def point_uses(model: Model, label: str, point: str) -> list[str]:
    return (
        [where for where, f in _frames_on(model, label) if f.origin == point]
        + [f"force '{e.name}'" for e in model.forces if _acts_at_point(e, label, point)]
        + [f"measure '{m.name}'" for m in model.measures if _acts_at_point(m, label, point)]
    )


def force_uses(model: Model, name: str) -> list[str]:
    return [f"measure '{m.name}'" for m in _measures_of(model, {name})]


def joint_uses(model: Model, name: str) -> list[str]:
    """What names the joint's coordinates: the chosen independent ones, actuated ones, force elements,
    trajectories and couplings."""
    coords = {c.name for c in model.joint(name).coordinates}
    chosen = model.independent_coordinates if isinstance(model.independent_coordinates, list) else []
    return (
        [f"independent coordinate '{c}'" for c in chosen if c in coords]
        + [f"actuated coordinate '{c}'" for c in model.actuated if c in coords]
        + [f"force '{e.name}'" for e in model.forces if getattr(e, "coordinate", None) in coords]
        + [f"trajectory '{t.name}' coordinate '{c}'" for t in model.trajectories for c in t.coordinates if c in coords]
        + [f"coupling '{c.name}'" for c in _couplings_of(model, coords)]
    )


def _couplings_of(model: Model, coordinates: set[str]) -> list[Coupling]:
    """The couplings whose follower or leader is one of `coordinates`."""
    return [c for c in model.couplings if c.follower in coordinates or c.leader in coordinates]


# ------------------------------------------------------------------ adding


def add_parameter(model: Model, value: float = 0.1, unit: str | None = "m") -> str:
    name = free_name("p", {p.name for p in model.parameters})
    model.parameters.append(Parameter(name, value, unit))
    return name


def add_point(model: Model, label: str) -> str:
    body = model.body(label)
    name = free_name("P", set(body.points))
    body.points[name] = [0.0, 0.0, 0.0]
    return name


def add_frame(model: Model, label: str) -> str:
    body = model.body(label)
    name = free_name("F", set(body.frames))
    body.frames[name] = Frame([0.0, 0.0, 0.0])
    return name


def _new_coordinates(model: Model, prefix: str, count: int, bare: bool = False) -> list[Coordinate]:
    """`count` new coordinates named prefix1, prefix2, ... (just `prefix` when `bare`, count is 1 and it is
    free), each starting at 0."""
    taken = set(model.coordinate_names())
    if bare and count == 1 and prefix not in taken:
        return [Coordinate(prefix, 0.0)]
    out = []
    for _ in range(count):
        out.append(Coordinate(free_name(prefix, taken), 0.0))
        taken.add(out[-1].name)
    return out


def add_body(model: Model, parent: str, joint_type: str, name: str = "", at_point: str | None = None) -> str:
    """A new body joined to `parent` by a new joint of `joint_type` placed at one of the parent's points
    (default its origin); the body gets a point 'tip' so that it is drawn as a link. Returns its label."""
    labels = {b.label for b in model.bodies}
    label = free_name("", labels) if not labels or all(lb.isdigit() for lb in labels) else free_name("b", labels)
    body = Body(label, name or f"body {label}", dict(_NEW_INERTIA), {"tip": [0.1, 0.0, 0.0]})
    model.bodies.append(body)
    count = len(JOINT_MOTIONS[joint_type])
    new_coords = _new_coordinates(model, f"q{label}" if count == 1 else f"q{label}_", count, bare=True)
    origin = at_point if at_point else [0.0, 0.0, 0.0]
    model.joints.append(
        Joint(
            free_name("J", {j.name for j in model.joints}),
            joint_type,
            body_key(parent),
            label,
            Frame(origin),
            Frame([0.0, 0.0, 0.0]),
            new_coords,
        )
    )
    if isinstance(model.independent_coordinates, list):  # a new branch adds its joint's freedoms
        model.independent_coordinates = [*model.independent_coordinates, *(c.name for c in new_coords)]
    return label


def rod_inertia(tip: np.ndarray, density: float, radius: float) -> dict[str, float]:
    """The ten inertial parameters, about the body origin in body axes, of a uniform solid rod of `density`
    (kg/m³) and `radius` from the origin to `tip`: m = ρπr²L; about its centre L²m/12 across and r²m/2 along;
    moved to the origin by the parallel-axis theorem (products stored as tensor entries, −∫xy dm)."""
    tip = np.asarray(tip, float)
    length = float(np.linalg.norm(tip))
    mass = density * np.pi * radius**2 * length
    along = tip / length
    centre = tip / 2
    about_centre = mass * length**2 / 12 * (np.eye(3) - np.outer(along, along)) + mass * radius**2 / 2 * np.outer(
        along, along
    )
    tensor = about_centre + mass * (centre @ centre * np.eye(3) - np.outer(centre, centre))
    (xx, xy, xz), (_, yy, yz), (_, _, zz) = tensor
    values = [mass, *(mass * centre), xx, xy, xz, yy, yz, zz]
    return {name: float(v) for name, v in zip(INERTIA_NAMES, values, strict=True)}


def add_link(
    model: Model,
    parent: str,
    start: np.ndarray,
    end: np.ndarray,
    axis: np.ndarray,
    density: float = 2700.0,
    radius: float = 0.01,
) -> str:
    """A link drawn from `start` to `end` (in the parent body's axes): a new body with its origin at start
    and a point 'tip' at end, joined to `parent` by a revolute joint at start about `axis` (parent axes), its
    frames chosen so that at a joint angle of 0 the link lies where it was drawn; the inertia of a rod of
    `density` and `radius` (aluminium, 10 mm by default; editable). Start becomes a point of the parent
    unless one is there already. Returns the new body's label."""
    start, end, axis = (np.asarray(v, float) for v in (start, end, axis))
    axis = axis / np.linalg.norm(axis)
    along = end - start
    if np.linalg.norm(along) < 1e-9:
        raise ModelError("link", "has no length: its two points coincide", start.tolist(), "two distinct points")
    across = along - (along @ axis) * axis  # the body's x axis: the link's direction across the joint axis
    if np.linalg.norm(across) < 1e-9 * np.linalg.norm(along):
        raise ModelError("link", "lies along the joint axis", axis.tolist(), "an axis not along the link")
    x = across / np.linalg.norm(across)
    frame_axes = np.column_stack([x, np.cross(axis, x), axis])  # body axes in the parent's at angle 0
    tip = frame_axes.T @ along
    point = _point_at(model, parent, start)
    label = add_body(model, parent, "revolute", at_point=point)
    body = model.body(label)
    body.points["tip"] = [float(v) for v in tip]
    body.inertia = rod_inertia(tip, density, radius)
    joint = model.joints[-1]
    joint.parent_frame = Frame(point, [float(v) for v in axis], [float(v) for v in x])
    return label


def _point_at(model: Model, label: str, position: np.ndarray) -> str:
    """The name of body `label`'s point at `position` (its axes), added as P<n> if it has none there."""
    body = model.body(label)
    for name, value in body.points.items():
        if all(isinstance(v, int | float) for v in value) and np.allclose(value, position, rtol=0, atol=1e-9):
            return name
    name = add_point(model, label)
    body.points[name] = [float(v) for v in position]
    return name


def add_joint(
    model: Model,
    parent: str,
    child: str,
    joint_type: str,
    parent_point: str | None = None,
    child_point: str | None = None,
    axis: list | None = None,
) -> str:
    """A joint between two bodies already in the mechanism, which closes a loop: placed at a point of each
    body (default its origin), its z axis `axis` in each body's axes. The Mechanism makes one joint of the
    loop a cut joint. Hand-chosen independent coordinates no longer fit the fewer freedoms, so the choice
    goes back to "auto". Returns the joint's name."""
    name = free_name("J", {j.name for j in model.joints})
    frames = [Frame(point or [0.0, 0.0, 0.0], list(axis) if axis else None) for point in (parent_point, child_point)]
    model.joints.append(
        Joint(
            name,
            joint_type,
            body_key(parent),
            body_key(child),
            *frames,
            _new_coordinates(model, f"{name}_q", len(JOINT_MOTIONS[joint_type])),
        )
    )
    model.independent_coordinates = "auto"
    return name


def set_joint_frame(model: Model, joint: str, side: str, frame: str | None) -> None:
    """Make a joint's frame on its `side` ("parent" or "child") a named frame of that body, or (None) a frame
    of the joint's own, starting where the named frame was."""
    j = model.joint(joint)
    current = getattr(j, f"{side}_frame")
    if frame is None and isinstance(current, str):
        frame = copy.deepcopy(model.body(getattr(j, side)).frames[current])
    setattr(j, f"{side}_frame", frame if frame is not None else current)


def independent_coordinates(model: Model) -> list[str]:
    """The independent coordinates: the chosen ones, else those the Mechanism picks."""
    if isinstance(model.independent_coordinates, list):
        return list(model.independent_coordinates)
    return Mechanism(model).independent


def add_trajectory(model: Model) -> str:
    """A Fourier trajectory over the independent coordinates (two harmonics each, at frequencies that are
    different for every coordinate and not in integer ratio, so that they excite independently)."""
    coordinates = independent_coordinates(model)
    if not coordinates:
        raise ModelError(
            "trajectory",
            "has no coordinate to move",
            "no independent coordinates",
            "a mechanism with at least one degree of freedom: add a body first",
        )
    name = free_name("trajectory", {t.name for t in model.trajectories})
    terms = {
        c: [Harmonic(0.1, float(2 * k + 1)), Harmonic(0.05, f"sqrt({2 * (2 * k + 1) ** 2})")]  # (2k+1)√2
        for k, c in enumerate(coordinates)
    }
    model.trajectories.append(Trajectory(name, terms, 10.0, 200))
    return name


def add_coupling(model: Model, follower: str, leader: str | None, ratio=1.0, offset=0.0) -> str:
    """A coupling follower = offset + ratio · leader (a mimic joint, a gear pair). Returns its name."""
    name = free_name("coupling", {c.name for c in model.couplings} | {j.name for j in model.joints})
    model.couplings.append(Coupling(name, follower, leader, None if leader is None else ratio, offset))
    return name


def add_force(model: Model, kind: str) -> str:
    """A force element of type `kind` (see FORCE_ELEMENTS) with zero values, placed on the first points or
    coordinate the model has, for the person to edit. Returns its name."""
    name = free_name(kind, {e.name for e in model.forces})
    places = [(b.label, p) for b in [*model.bodies, model.ground] for p in b.points]
    coordinates = independent_coordinates(model) or model.coordinate_names()
    cls = FORCE_ELEMENTS[kind]
    if cls is Bushing:
        model.forces.append(_new_bushing(model, name))
        return name
    needs = {f.name for f in dataclasses.fields(cls)}
    if "coordinate" in needs and not coordinates:
        raise ModelError(
            f"{kind} '{name}'",
            "needs a joint coordinate to act on",
            "no coordinates",
            "a mechanism with at least one moving joint: add a body first",
        )
    if "point" in needs and not places:
        raise ModelError(f"{kind} '{name}'", "needs a point to act at", "no points", "add a point to a body first")
    if "point1" in needs and len({b for b, _ in places}) < 2:
        raise ModelError(
            f"{kind} '{name}'",
            "needs points on two bodies",
            [f"{b}.{p}" for b, p in places],
            "add points to two bodies (or a body and the ground) first",
        )
    if "coordinate" in needs:
        extra = {"formula": 0.0} if kind == "actuator" else {}
        model.forces.append(cls(name, coordinates[0], **extra))
    elif "point" in needs:
        model.forces.append(cls(name, *places[0]))
    else:  # the first point of the first body and the last one of another body (the ground comes last)
        other = next(place for place in reversed(places) if place[0] != places[0][0])
        model.forces.append(cls(name, *places[0], *other))
    return name


def _new_bushing(model: Model, name: str) -> Bushing:
    """A bushing from the ground to the first body at that body's origin: a frame `name` on the body, and one on
    the ground at the same world pose at the document's pose, so that it starts undeflected; zero rates."""
    if not model.bodies:
        raise ModelError(f"bushing '{name}'", "needs a body to hold", "no bodies", "add a body first")
    body = model.bodies[0]
    frame, mount = free_name(name, set(body.frames)), free_name(name, set(model.ground.frames))
    body.frames[frame] = Frame([0.0, 0.0, 0.0])
    mech = Mechanism(model)
    st = mech.motion(np.asarray(mech.assemble(None, strict=False), float))
    i = mech.tree.body_index(body.label)
    R, origin = np.asarray(st.R[i][0], float), np.asarray(st.p[i][0], float)
    model.ground.frames[mount] = Frame(origin.tolist(), R[:, 2].tolist(), R[:, 0].tolist())
    return Bushing(name, GROUND, mount, body.label, frame)


# The bushing directions a joint leaves free, where they are fixed axes of its parent frame (a universal joint's
# second axis turns with the first: no diagonal bushing leaves it free).
COMPLIANT_FREEDOMS = {
    "revolute": ("rz",),
    "prismatic": ("z",),
    "cylindrical": ("z", "rz"),
    "planar": ("x", "y", "rz"),
    "ball": ("rx", "ry", "rz"),
    "spherical": ("rx", "ry", "rz"),
    "fixed": (),
}


def make_compliant(model: Model, name: str, translational: float = 1e7, rotational: float = 1e5) -> str:
    """Turn joint `name` into a free joint held by a bushing between its two joint frames (made named frames of
    the bodies where the joint held them inline): stiff (N/m, N m/rad) in the directions the joint constrained,
    free in those it allowed, undamped (give it damping in its properties). The free joint starts at the joint's
    nominal position, so the bushing starts undeflected; its six coordinates replace the joint's among the chosen
    independent ones. Returns the bushing's name; a ModelError when the joint
    cannot be one or other items name its coordinates."""
    joint = model.joint(name)
    where = f"joint '{name}'"
    if joint.type not in COMPLIANT_FREEDOMS:
        raise ModelError(f"{where}.type", "has no bushing form (its freedoms are not fixed axes of its parent frame)",
                         joint.type, "a " + ", ".join(COMPLIANT_FREEDOMS) + " joint")  # fmt: skip
    uses = [use for use in joint_uses(model, name) if not use.startswith("independent coordinate")]
    if uses:
        raise ModelError(where, "has coordinates that other items name", ", ".join(uses), "remove those uses first")
    ends = [_named_joint_frame(model, joint, side) for side in ("parent", "child")]
    position, rotation = _joint_displacement(joint)
    start = [*position, *rodrigues.from_rotation_matrix(rotation)]
    taken = set(model.coordinate_names())
    old = {c.name for c in joint.coordinates}
    joint.coordinates = []
    for direction, value in zip(BUSHING_DIRECTIONS, start, strict=True):
        joint.coordinates.append(Coordinate(free_name(f"{name}_{direction}", taken), float(value)))
        taken.add(joint.coordinates[-1].name)
    free = COMPLIANT_FREEDOMS[joint.type]
    joint.type = "free"
    if isinstance(model.independent_coordinates, list):
        kept = [c for c in model.independent_coordinates if c not in old]
        model.independent_coordinates = kept + [c.name for c in joint.coordinates]
        if joint in spanning_tree(model).cut:  # a loop's free joint is cut (no coordinates): the tree changed
            model.independent_coordinates = "auto"
    stiffness = [0.0 if d in free else (rotational if d.startswith("r") else translational) for d in BUSHING_DIRECTIONS]
    bushing = free_name(f"{name}_bushing", {e.name for e in model.forces} | taken)
    model.forces.append(Bushing(bushing, joint.parent, ends[0], joint.child, ends[1], stiffness))
    return bushing


def _named_joint_frame(model: Model, joint: Joint, side: str) -> str:
    """The name of the joint's frame on its `side` body, naming an inline frame there first."""
    frame = getattr(joint, f"{side}_frame")
    if isinstance(frame, str):
        return frame
    body = model.body(getattr(joint, side))
    named = free_name(f"{joint.name}_{side}", set(body.frames))
    body.frames[named] = frame
    setattr(joint, f"{side}_frame", named)
    return named


def _joint_displacement(joint: Joint) -> tuple[np.ndarray, np.ndarray]:
    """The child joint frame's origin and axes in the parent joint frame at the coordinates' initial values
    (0 where none is given): the joint's primitive motions applied in turn (model/document.py, JOINT_MOTIONS)."""
    position, rotation = np.zeros(3), np.eye(3)
    values = [0.0 if c.initial is None else float(c.initial) for c in joint.coordinates]
    motions = JOINT_MOTIONS[joint.type]
    if motions and motions[0][0] == "B":  # a ball's three rotation parameters turn together
        return position, rodrigues.rotation(np.array(values))
    for motion, value in zip(motions, values, strict=True):
        axis = "xyz".index(motion[1])
        if motion[0] == "T":
            position = position + rotation[:, axis] * value
        else:
            rotation = rotation @ rodrigues.rotation(np.eye(3)[axis] * 4 * np.tan(value / 4))
    return position, rotation


def add_measure(model: Model, kind: str) -> str:
    """A measure of type `kind` (see MEASURES) on the first points, bodies or force element the model has,
    for the person to edit. Returns its name."""
    name = free_name(kind, {m.name for m in model.measures} | {e.name for e in model.forces})
    places = [(b.label, p) for b in [*model.bodies, model.ground] for p in b.points]
    where = f"{kind} measure '{name}'"
    if kind == "force":
        if not model.forces:
            raise ModelError(where, "needs a force element to measure", "none", "add a force element first")
        model.measures.append(MEASURES[kind](name, model.forces[0].name))
        return name
    if kind == "angle":
        labels = model.body_labels()
        model.measures.append(MEASURES[kind](name, labels[-1], [1.0, 0.0, 0.0], labels[0], [1.0, 0.0, 0.0]))
        return name
    others = [place for place in reversed(places) if places and place[0] != places[0][0]]
    if not places or (kind != "point" and not others):
        raise ModelError(where, "needs points on two bodies", [f"{b}.{p}" for b, p in places], "add points first")
    if kind == "point":
        model.measures.append(MEASURES[kind](name, *places[0]))
    elif kind == "distance":
        model.measures.append(MEASURES[kind](name, *places[0], *others[0]))
    else:  # suspension: the wheel centre, then the kingpin's lower and upper points, for the person to choose
        springs = [e.name for e in model.forces if e.type == "spring_damper"]
        kingpin = (*places[-1], *others[0]) if len(places) > 1 else (*places[0], *others[0])
        model.measures.append(
            MEASURES[kind](name, *places[0], [0.0, 1.0, 0.0], *kingpin, 0.3, springs[0] if springs else None)
        )
    return name


# ------------------------------------------------------------------ renaming


def _rename_in(expr, old: str, new: str):
    if isinstance(expr, str) and old in expression_names(expr):
        return re.sub(rf"\b{re.escape(old)}\b", new, expr)
    return expr


def _rename_vector(values, old, new):
    return values if isinstance(values, str) or values is None else [_rename_in(v, old, new) for v in values]


def _rename_frame(frame, old, new):
    if isinstance(frame, Frame):
        frame.origin = _rename_vector(frame.origin, old, new)
        frame.z, frame.x = _rename_vector(frame.z, old, new), _rename_vector(frame.x, old, new)


def _substitute(model: Model, old: str, new: str) -> None:
    """Replace the parameter name `old` by the text `new` in every expression of the model."""
    model.gravity = _rename_vector(model.gravity, old, new)
    for body in [model.ground, *model.bodies]:
        body.inertia = {k: _rename_in(v, old, new) for k, v in body.inertia.items()}
        body.points = {k: _rename_vector(v, old, new) for k, v in body.points.items()}
        for frame in body.frames.values():
            _rename_frame(frame, old, new)
        if body.shape:
            body.shape = {
                k: v
                if k in ("type", "color", "file")
                else (_rename_vector(v, old, new) if isinstance(v, list) else _rename_in(v, old, new))
                for k, v in body.shape.items()
            }
    for joint in model.joints:
        _rename_frame(joint.parent_frame, old, new)
        _rename_frame(joint.child_frame, old, new)
    for trajectory in model.trajectories:
        for harmonics in trajectory.coordinates.values():
            for h in harmonics:
                h.amplitude, h.frequency = _rename_in(h.amplitude, old, new), _rename_in(h.frequency, old, new)
                h.phase = _rename_in(h.phase, old, new)
    for element in [*model.forces, *model.measures]:
        for key, value in _force_values(element):
            setattr(
                element,
                key,
                _rename_vector(value, old, new) if isinstance(value, list) else _rename_in(value, old, new),
            )


def rename_parameter(model: Model, old: str, new: str) -> None:
    """Rename a parameter and every use of it in expressions."""
    next(p for p in model.parameters if p.name == old).name = new
    _substitute(model, old, new)


def rename_body(model: Model, old: str, new: str) -> None:
    """Change a body's label and the joints and force elements that name it; an export writes the new label, no
    longer the name the body was imported with."""
    body = model.body(old)
    body.label, body.source_name = new, None
    for j in model.joints:
        j.parent = new if body_key(j.parent) == old else j.parent
        j.child = new if body_key(j.child) == old else j.child
    for element in [*model.forces, *model.measures]:
        for b, _ in _force_ends(element):
            if body_key(getattr(element, b)) == old:
                setattr(element, b, new)


def rename_point(model: Model, label: str, old: str, new: str) -> None:
    """Rename a point and the frames and force elements placed at it."""
    frames = [f for _, f in _frames_on(model, label) if f.origin == old]
    body = model.body(label)
    body.points = {new if k == old else k: v for k, v in body.points.items()}
    for frame in frames:
        frame.origin = new
    for element in [*model.forces, *model.measures]:
        for b, p in _force_ends(element):
            if body_key(getattr(element, b)) == body_key(label) and p is not None and getattr(element, p) == old:
                setattr(element, p, new)


def rename_frame(model: Model, label: str, old: str, new: str) -> None:
    body = model.body(label)
    body.frames = {new if k == old else k: v for k, v in body.frames.items()}
    for j in model.joints:
        if body_key(j.parent) == body_key(label) and j.parent_frame == old:
            j.parent_frame = new
        if body_key(j.child) == body_key(label) and j.child_frame == old:
            j.child_frame = new
    for bushing in (e for e in model.forces if isinstance(e, Bushing)):
        for body, frame in (("body1", "frame1"), ("body2", "frame2")):
            if body_key(getattr(bushing, body)) == body_key(label) and getattr(bushing, frame) == old:
                setattr(bushing, frame, new)


def rename_joint(model: Model, old: str, new: str) -> None:
    """The new name, which an export writes instead of the one the joint was imported with."""
    joint = model.joint(old)
    joint.name, joint.source_name = new, None


def rename_coordinate(model: Model, joint: str, old: str, new: str) -> None:
    """Rename a coordinate everywhere it is named: independent and actuated lists, trajectories, forces, couplings
    (the URDF export then names a one-axis joint after it, not as it was imported)."""
    next(c for c in model.joint(joint).coordinates if c.name == old).name = new
    model.joint(joint).source_name = None
    if isinstance(model.independent_coordinates, list):
        model.independent_coordinates = [new if c == old else c for c in model.independent_coordinates]
    model.actuated = [new if c == old else c for c in model.actuated]
    for trajectory in model.trajectories:
        trajectory.coordinates = {new if c == old else c: h for c, h in trajectory.coordinates.items()}
    for element in model.forces:
        if getattr(element, "coordinate", None) == old:
            element.coordinate = new
    for coupling in model.couplings:
        coupling.follower = new if coupling.follower == old else coupling.follower
        coupling.leader = new if coupling.leader == old else coupling.leader


def force_of(model: Model, name: str):
    return next(e for e in model.forces if e.name == name)


def trajectory_of(model: Model, name: str) -> Trajectory:
    return next(t for t in model.trajectories if t.name == name)


def measure_of(model: Model, name: str):
    return next(m for m in model.measures if m.name == name)


def coupling_of(model: Model, name: str) -> Coupling:
    return next(c for c in model.couplings if c.name == name)


def rename_coupling(model: Model, old: str, new: str) -> None:
    coupling_of(model, old).name = new  # validation refuses a duplicate, or a joint's name


def delete_coupling(model: Model, name: str) -> None:
    model.couplings = [c for c in model.couplings if c.name != name]


def rename_force(model: Model, old: str, new: str) -> None:
    """Rename a force element and the measures of it (validation refuses a duplicate)."""
    force_of(model, old).name = new
    for m in _measures_of(model, {old}):
        for field in ("element", "damper"):
            if getattr(m, field, None) == old:
                setattr(m, field, new)


def rename_measure(model: Model, old: str, new: str) -> None:
    measure_of(model, old).name = new  # validation refuses a duplicate


def rename_trajectory(model: Model, old: str, new: str) -> None:
    if any(t.name == new for t in model.trajectories):
        raise ModelError(
            f"trajectory '{old}'", "cannot take the name of another trajectory", new, "a name no other trajectory has"
        )
    trajectory_of(model, old).name = new


def set_joint_type(model: Model, name: str, joint_type: str) -> None:
    """Change a joint's type, keeping as many of its coordinates as the new type has and naming new ones."""
    joint = model.joint(name)
    count = len(JOINT_MOTIONS[joint_type])
    kept = joint.coordinates[:count]
    kept += _new_coordinates(model, f"{name}_q", count - len(kept))
    dropped = {c.name for c in joint.coordinates[count:]}
    joint.type, joint.coordinates = joint_type, kept
    if isinstance(model.independent_coordinates, list):
        model.independent_coordinates = [c for c in model.independent_coordinates if c not in dropped]
    model.couplings = [c for c in model.couplings if c not in _couplings_of(model, dropped)]


# ------------------------------------------------------------------ deleting


def delete_parameter(model: Model, name: str) -> None:
    """Remove a parameter; its uses are replaced by its value, so the geometry stays as it was."""
    value = next(p for p in model.parameters if p.name == name).value
    _substitute(model, name, f"({value!r})")
    model.parameters = [p for p in model.parameters if p.name != name]


def delete_body(model: Model, label: str) -> None:
    """Remove a body, the joints attached to it and the force elements acting on it."""
    model.bodies = [b for b in model.bodies if b.label != label]
    gone = {e.name for e in model.forces if _acts_on_body(e, label)}
    model.forces = [e for e in model.forces if e.name not in gone]
    dropped = _measures_of(model, gone)
    model.measures = [m for m in model.measures if m not in dropped and not _acts_on_body(m, label)]
    removed = [j for j in model.joints if label in (body_key(j.parent), body_key(j.child))]
    for j in removed:
        delete_joint(model, j.name)


def delete_joint(model: Model, name: str) -> None:
    """Remove a joint and every reference to its coordinates (force elements and couplings on them too)."""
    coords = {c.name for c in model.joint(name).coordinates}
    model.joints = [j for j in model.joints if j.name != name]
    if isinstance(model.independent_coordinates, list):
        model.independent_coordinates = [c for c in model.independent_coordinates if c not in coords]
    model.actuated = [c for c in model.actuated if c not in coords]
    gone = {e.name for e in model.forces if getattr(e, "coordinate", None) in coords}
    model.forces = [e for e in model.forces if e.name not in gone]
    model.measures = [m for m in model.measures if m not in _measures_of(model, gone)]
    for t in model.trajectories:
        t.coordinates = {c: h for c, h in t.coordinates.items() if c not in coords}
    model.couplings = [c for c in model.couplings if c not in _couplings_of(model, coords)]


def delete_point(model: Model, label: str, name: str) -> None:
    """Remove a point; frames placed at it keep its position as their origin, force elements at it go."""
    frames = [f for _, f in _frames_on(model, label) if f.origin == name]
    position = model.body(label).points.pop(name)
    for frame in frames:
        frame.origin = list(position)
    gone = {e.name for e in model.forces if _acts_at_point(e, label, name)}
    model.forces = [e for e in model.forces if e.name not in gone]
    dropped = _measures_of(model, gone)
    model.measures = [m for m in model.measures if m not in dropped and not _acts_at_point(m, label, name)]


def delete_frame(model: Model, label: str, name: str) -> None:
    del model.body(label).frames[name]


def delete_force(model: Model, name: str) -> None:
    """Remove a force element and the measures of it."""
    dropped = _measures_of(model, {name})
    model.forces = [e for e in model.forces if e.name != name]
    model.measures = [m for m in model.measures if m not in dropped]


def delete_measure(model: Model, name: str) -> None:
    model.measures = [m for m in model.measures if m.name != name]


def delete_trajectory(model: Model, name: str) -> None:
    model.trajectories = [t for t in model.trajectories if t.name != name]
