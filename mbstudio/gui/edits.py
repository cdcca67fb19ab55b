"""Document edits as plain functions on a Model (no Qt): each mutates the model it is given.

The window applies them to a copy, validates the copy, and only then makes it the document (commands.py),
so an edit that raises or leaves an invalid model changes nothing.
"""

from __future__ import annotations

import re

from ..model import INERTIA_NAMES, JOINT_MOTIONS, Body, Coordinate, Frame, Joint, Model, Parameter
from ..model.document import body_key
from ..model.expressions import names as expression_names

# Inertia of a new body: 1 kg, a small positive-definite tensor, so the model stays physically valid.
_NEW_INERTIA = {**dict.fromkeys(INERTIA_NAMES, 0.0), "m": 1.0, "Ixx": 0.001, "Iyy": 0.001, "Izz": 0.001}


def parse_expression(text: str) -> float | str:
    """What the user typed in an expression field: a number when it is one, else the expression text."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        return text


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
            yield (f"trajectory '{trajectory.name}' {coordinate}",
                   [v for h in harmonics for v in (h.amplitude, h.frequency, h.phase)])


def _frame_values(frame: Frame) -> list:
    origin = [] if isinstance(frame.origin, str) else list(frame.origin)
    return origin + list(frame.z or []) + list(frame.x or [])


def parameter_uses(model: Model, name: str) -> list[str]:
    """Where a parameter appears in expressions, in words."""
    return [where for where, values in _expressions(model)
            if any(name in expression_names(v) for v in values)]


def body_uses(model: Model, label: str) -> list[str]:
    return [f"joint '{j.name}'" for j in model.joints if label in (body_key(j.parent), body_key(j.child))]


def point_uses(model: Model, label: str, point: str) -> list[str]:
    body = model.body(label)
    return [f"frame '{n}'" for n, f in body.frames.items() if f.origin == point]


def joint_uses(model: Model, name: str) -> list[str]:
    coords = {c.name for c in model.joint(name).coordinates}
    chosen = model.independent_coordinates if isinstance(model.independent_coordinates, list) else []
    return [f"independent coordinate '{c}'" for c in chosen if c in coords]


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


def add_body(model: Model, parent: str, joint_type: str, name: str = "", at_point: str | None = None) -> str:
    """A new body joined to `parent` by a new joint of `joint_type` placed at one of the parent's points
    (default its origin); the body gets a point 'tip' so that it is drawn as a link. Returns its label."""
    labels = {b.label for b in model.bodies}
    label = free_name("", labels) if not labels or all(lb.isdigit() for lb in labels) else free_name("b", labels)
    body = Body(label, name or f"body {label}", dict(_NEW_INERTIA), {"tip": [0.1, 0.0, 0.0]})
    model.bodies.append(body)
    joints = {j.name for j in model.joints}
    coords = set(model.coordinate_names())
    motions = JOINT_MOTIONS[joint_type]
    prefix = f"q{label}" if len(motions) == 1 else f"q{label}_"
    new_coords = []
    for _ in motions:
        cname = prefix if len(motions) == 1 and prefix not in coords else free_name(prefix, coords)
        coords.add(cname)
        new_coords.append(Coordinate(cname, 0.0))
    origin = at_point if at_point else [0.0, 0.0, 0.0]
    model.joints.append(Joint(free_name("J", joints), joint_type, body_key(parent), label, Frame(origin),
                              Frame([0.0, 0.0, 0.0]), new_coords))
    if isinstance(model.independent_coordinates, list):  # a new branch adds its joint's freedoms
        model.independent_coordinates = [*model.independent_coordinates, *(c.name for c in new_coords)]
    return label


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
            body.shape = {k: v if k in ("type", "color", "file") else
                          (_rename_vector(v, old, new) if isinstance(v, list) else _rename_in(v, old, new))
                          for k, v in body.shape.items()}
    for joint in model.joints:
        _rename_frame(joint.parent_frame, old, new)
        _rename_frame(joint.child_frame, old, new)
    for trajectory in model.trajectories:
        for harmonics in trajectory.coordinates.values():
            for h in harmonics:
                h.amplitude, h.frequency = _rename_in(h.amplitude, old, new), _rename_in(h.frequency, old, new)
                h.phase = _rename_in(h.phase, old, new)


def rename_parameter(model: Model, old: str, new: str) -> None:
    """Rename a parameter and every use of it in expressions."""
    next(p for p in model.parameters if p.name == old).name = new
    _substitute(model, old, new)


def rename_body(model: Model, old: str, new: str) -> None:
    """Change a body's label and the joints that name it."""
    model.body(old).label = new
    for j in model.joints:
        j.parent = new if body_key(j.parent) == old else j.parent
        j.child = new if body_key(j.child) == old else j.child


def rename_point(model: Model, label: str, old: str, new: str) -> None:
    body = model.body(label)
    body.points = {new if k == old else k: v for k, v in body.points.items()}
    for frame in body.frames.values():
        frame.origin = new if frame.origin == old else frame.origin


def rename_frame(model: Model, label: str, old: str, new: str) -> None:
    body = model.body(label)
    body.frames = {new if k == old else k: v for k, v in body.frames.items()}
    for j in model.joints:
        if body_key(j.parent) == body_key(label) and j.parent_frame == old:
            j.parent_frame = new
        if body_key(j.child) == body_key(label) and j.child_frame == old:
            j.child_frame = new


def rename_joint(model: Model, old: str, new: str) -> None:
    model.joint(old).name = new


def rename_coordinate(model: Model, joint: str, old: str, new: str) -> None:
    next(c for c in model.joint(joint).coordinates if c.name == old).name = new
    if isinstance(model.independent_coordinates, list):
        model.independent_coordinates = [new if c == old else c for c in model.independent_coordinates]
    for trajectory in model.trajectories:
        trajectory.coordinates = {new if c == old else c: h for c, h in trajectory.coordinates.items()}


def set_joint_type(model: Model, name: str, joint_type: str) -> None:
    """Change a joint's type, keeping as many of its coordinates as the new type has and naming new ones."""
    joint = model.joint(name)
    taken = set(model.coordinate_names())
    count = len(JOINT_MOTIONS[joint_type])
    kept = joint.coordinates[:count]
    while len(kept) < count:
        cname = free_name(f"{name}_q", taken)
        taken.add(cname)
        kept.append(Coordinate(cname, 0.0))
    dropped = {c.name for c in joint.coordinates[count:]}
    joint.type, joint.coordinates = joint_type, kept
    if isinstance(model.independent_coordinates, list):
        model.independent_coordinates = [c for c in model.independent_coordinates if c not in dropped]


# ------------------------------------------------------------------ deleting

def delete_parameter(model: Model, name: str) -> None:
    """Remove a parameter; its uses are replaced by its value, so the geometry stays as it was."""
    value = next(p for p in model.parameters if p.name == name).value
    _substitute(model, name, f"({value!r})")
    model.parameters = [p for p in model.parameters if p.name != name]


def delete_body(model: Model, label: str) -> None:
    """Remove a body and the joints attached to it."""
    model.bodies = [b for b in model.bodies if b.label != label]
    removed = [j for j in model.joints if label in (body_key(j.parent), body_key(j.child))]
    for j in removed:
        delete_joint(model, j.name)


def delete_joint(model: Model, name: str) -> None:
    coords = {c.name for c in model.joint(name).coordinates}
    model.joints = [j for j in model.joints if j.name != name]
    if isinstance(model.independent_coordinates, list):
        model.independent_coordinates = [c for c in model.independent_coordinates if c not in coords]


def delete_point(model: Model, label: str, name: str) -> None:
    """Remove a point; frames placed at it keep its position as their origin."""
    body = model.body(label)
    position = body.points.pop(name)
    for frame in body.frames.values():
        if frame.origin == name:
            frame.origin = list(position)


def delete_frame(model: Model, label: str, name: str) -> None:
    del model.body(label).frames[name]

