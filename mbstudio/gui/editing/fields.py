"""What the properties panel shows for each tree key: typed fields, their SI units (the panel shows them in the
display units), and how each writes into a model (no Qt). Writing happens on a copy of the document
(Document.edit)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

from ...io.display_units import SI, typed_value
from ...model import INERTIA_NAMES, JOINT_MOTIONS, JOINT_TYPES, Frame, Model, ModelError
from ...model.document import (
    PLACES,
    STOPS,
    Bushing,
    CompliantStop,
    Contact,
    ContactPair,
    Harmonic,
    ImpactStop,
    Trajectory,
    body_key,
    turns,
)
from ...model.fileformat import bushing_field, bushing_text
from ...model.surface_files import file_sha256
from ...model.units import Quantity
from ...model.units import text as as_written
from . import edits
from .contact_shape_fields import PAIR_SHAPE_FIELDS, SHAPE_FIELDS, shape_fields

SHAPE_TYPES = ("(links)", "box", "cylinder", "sphere", "mesh")
SHAPE_DEFAULTS = {
    "box": {"size": [0.1, 0.05, 0.05]},
    "cylinder": {"radius": 0.02, "length": 0.1, "axis": [1, 0, 0]},
    "sphere": {"radius": 0.05},
    # a mesh file (STL, OBJ, PLY, VTK, DAE) relative to the model's folder: until it is typed in, the view
    # draws the body from its points and names the missing file
    "mesh": {"file": "part.stl", "scale": [1.0, 1.0, 1.0]},
}
INERTIA_UNITS = {"m": "kg", "mx": "kg m", "my": "kg m", "mz": "kg m"}  # the others kg m^2


@dataclass
class Field:
    """kind: text, expr (number or expression), number, optional (number or empty), vector (three
    expressions), optional_vector (three expressions or empty), origin (a point name or three expressions;
    `choices` are the point names offered), choice, bool. `unit`: the SI unit of a value, shown in the display
    units; `own_unit`: a parameter's own unit, in which its number is shown and typed."""

    name: str
    kind: str
    value: object
    apply: Callable[[Model, object], None]
    unit: str = ""
    choices: tuple[str, ...] = ()
    renames: bool = False  # the value is the last part of the item's key
    own_unit: bool = False


def fields_for(model: Model, key: tuple) -> tuple[str, list[Field]]:
    """A title and the fields of the item `key`; no fields for group items."""
    builders = {
        "model": _model,
        "parameter": _parameter,
        "body": _body,
        "point": _point,
        "frame": _frame,
        "inertia": _inertia,
        "shape": _shape,
        "joint": _joint,
        "coordinate": _coordinate,
        "force": _force,
        "measure": _measure,
        "trajectory": _trajectory,
        "coupling": _coupling,
        "road": _road,
    }
    if key[0] not in builders:
        return key[0].capitalize() if key[0] != "ground" else "Ground (fixed)", []
    return builders[key[0]](model, *key[1:])


def _set(obj_of: Callable[[Model], object], attr: str) -> Callable[[Model, object], None]:
    return lambda m, v: setattr(obj_of(m), attr, v)


def _model(model: Model) -> tuple[str, list[Field]]:
    return "Model", [
        Field("name", "text", model.name, _set(lambda m: m, "name")),
        Field("description", "text", model.description, _set(lambda m: m, "description")),
        Field("gravity", "vector", model.gravity, _set(lambda m: m, "gravity"), "m/s^2"),
    ]


def _param(m: Model, name: str):
    return next(p for p in m.parameters if p.name == name)


def _parameter(model: Model, name: str) -> tuple[str, list[Field]]:
    """The value is shown and typed in the parameter's own unit (the document holds it in SI)."""
    p = _param(model, name)

    def set_value(m: Model, value) -> None:
        parameter = _param(m, name)
        parameter.value = Quantity(value, parameter.unit, "object") if parameter.unit else value

    number = Quantity.from_si(p.value, p.unit).number if p.unit else p.value
    return f"parameter '{name}'", [
        Field("name", "text", p.name, lambda m, v: edits.rename_parameter(m, name, v), renames=True),
        Field("value", "number", number, set_value, p.unit or "", own_unit=True),
        Field("unit", "text", p.unit or "", lambda m, v: setattr(_param(m, name), "unit", v or None)),
        Field(
            "description", "text", p.description or "", lambda m, v: setattr(_param(m, name), "description", v or None)
        ),
    ]


def _body(model: Model, label: str) -> tuple[str, list[Field]]:
    b = model.body(label)
    return f"body '{b.name}'", [
        Field("label", "text", b.label, lambda m, v: edits.rename_body(m, label, v), renames=True),
        Field("name", "text", b.name, _set(lambda m: m.body(label), "name")),
    ]


def _point(model: Model, label: str, name: str) -> tuple[str, list[Field]]:
    p = model.body(label).points[name]

    def move(m: Model, v) -> None:
        m.body(label).points[name] = v

    return f"point '{name}' of body '{model.body(label).name}'", [
        Field("name", "text", name, lambda m, v: edits.rename_point(m, label, name, v), renames=True),
        Field("position", "vector", p, move, "m"),
    ]


def _frame_fields(frame: Frame, frame_of: Callable[[Model], Frame], points: list[str], prefix: str = "") -> list[Field]:
    """Origin (typed, or picked among the body's `points`), z axis and x reference of a frame on a body."""
    return [
        Field(f"{prefix}origin", "origin", frame.origin, _set(frame_of, "origin"), "m", tuple(points)),
        Field(f"{prefix}z axis", "vector", frame.z or [0, 0, 1], _set(frame_of, "z")),
        Field(f"{prefix}x reference", "optional_vector", frame.x, _set(frame_of, "x")),
    ]


def _frame(model: Model, label: str, name: str) -> tuple[str, list[Field]]:
    body = model.body(label)
    return f"frame '{name}' of body '{body.name}'", [
        Field("name", "text", name, lambda m, v: edits.rename_frame(m, label, name, v), renames=True),
        *_frame_fields(body.frames[name], lambda m: m.body(label).frames[name], list(body.points)),
    ]


def _inertia(model: Model, label: str) -> tuple[str, list[Field]]:
    b = model.body(label)

    def setter(n: str) -> Callable[[Model, object], None]:
        return lambda m, v: m.body(label).inertia.__setitem__(n, v)

    return f"inertia of body '{b.name}' (about its origin, in body axes)", [
        Field(n, "expr", b.inertia[n], setter(n), INERTIA_UNITS.get(n, "kg m^2")) for n in INERTIA_NAMES
    ]


def _shape(model: Model, label: str) -> tuple[str, list[Field]]:
    shape = model.body(label).shape or {}

    def set_type(m: Model, v) -> None:
        old = m.body(label).shape or {}
        keep = {k: old[k] for k in ("origin", "color") if k in old}
        m.body(label).shape = None if v == "(links)" else {"type": v, **SHAPE_DEFAULTS[v], **keep}

    def setter(k: str) -> Callable[[Model, object], None]:
        return lambda m, v: m.body(label).shape.__setitem__(k, v)

    fields = [Field("type", "choice", shape.get("type", "(links)"), set_type, choices=SHAPE_TYPES)]
    kinds = {
        "size": ("vector", "m"),
        "radius": ("expr", "m"),
        "length": ("expr", "m"),
        "axis": ("vector", ""),
        "origin": ("vector", "m"),
        "color": ("text", "#rrggbb"),
        "file": ("text", "STL, OBJ, PLY, VTK or DAE"),
        "scale": ("vector", ""),
        "z": ("vector", ""),
        "x": ("vector", ""),
    }
    fields += [Field(k, kinds[k][0], v, setter(k), kinds[k][1]) for k, v in shape.items() if k in kinds]
    return f"shape of body '{model.body(label).name}'", fields


def _joint(model: Model, name: str) -> tuple[str, list[Field]]:
    j = model.joint(name)
    labels = tuple(model.body_labels())
    return f"joint '{name}'", [
        Field("name", "text", j.name, lambda m, v: edits.rename_joint(m, name, v), renames=True),
        Field("type", "choice", j.type, lambda m, v: edits.set_joint_type(m, name, v), choices=JOINT_TYPES),
        Field("parent", "choice", body_key(j.parent), _set(lambda m: m.joint(name), "parent"), choices=labels),
        Field("child", "choice", body_key(j.child), _set(lambda m: m.joint(name), "child"), choices=labels),
        Field("cut joint", "bool", bool(j.cut), lambda m, v: setattr(m.joint(name), "cut", v or None)),
        *_joint_frame_fields(model, name, "parent"),
        *_joint_frame_fields(model, name, "child"),
    ]


def _coupling(model: Model, name: str) -> tuple[str, list[Field]]:
    """follower = offset + ratio · leader, or a polynomial in the leader (typed as 'c0, c1, c2, ...'); the
    empty leader holds the follower at the offset."""
    c = edits.coupling_of(model, name)
    axial = tuple(model.axial_coordinates())

    def setter(attr: str, convert: Callable[[str], object]) -> Callable[[Model, object], None]:
        return lambda m, v: setattr(edits.coupling_of(m, name), attr, convert(str(v)))

    def terms(text: str) -> list[float | str] | None:  # 'c0, c1, ...', empty: none
        parts = [p.strip() for p in text.split(",")]
        return [edits.parse_expression(p) for p in parts] if any(parts) else None

    def optional(text: str) -> float | str | None:
        return edits.parse_expression(text) if text.strip() else None

    polynomial = ", ".join(str(x) for x in c.polynomial) if c.polynomial is not None else ""
    return f"coupling '{name}': {c.formula()}", [
        Field("name", "text", c.name, lambda m, v: edits.rename_coupling(m, name, v), renames=True),
        Field("follower", "choice", c.follower, setter("follower", str), choices=axial),
        Field("leader", "choice", c.leader or "", setter("leader", lambda v: v or None), choices=("", *axial)),
        Field("ratio", "text", _shown(c.ratio), setter("ratio", optional), "follower per leader unit"),
        Field("offset", "text", _shown(c.offset), setter("offset", optional), "rad or m"),
        Field("polynomial", "text", polynomial, setter("polynomial", terms), "c0, c1, … instead of ratio and offset"),
    ]


def _road(model: Model) -> tuple[str, list[Field]]:
    """The road's speed, and its surface as a formula z(x, y) or a CSV grid (a full path here; saving copies the
    file beside the model): typing either makes the road that surface."""

    def speed(m: Model, value) -> None:
        m.road.speed = value

    def formula(m: Model, text) -> None:
        m.road.formula, m.road.surface, m.road.surface_sha256 = edits.parse_expression(str(text)), None, None
        m.road.profile = []

    def surface(m: Model, text) -> None:
        path = Path(str(text).strip())
        if not path.is_absolute() or not path.is_file():
            raise ModelError("road.surface", "is not a CSV file's full path", str(text), "e.g. /home/me/road.csv")
        m.road.surface, m.road.surface_sha256, m.road.formula, m.road.profile = str(path), file_sha256(path), None, []

    road = model.road
    return "Road", [
        Field("speed", "expr", road.speed, speed, "m/s"),
        Field("formula", "text", _shown(road.formula), formula, "z(x, y) in m"),
        Field("surface", "text", _shown(road.surface), surface, "CSV grid"),
    ]


def _shown(value) -> str:
    return "" if value is None else str(value)


OWN_FRAME = "(the joint's own)"


def _joint_frame_fields(model: Model, joint: str, side: str) -> list[Field]:
    """Which frame of the `side` body the joint uses (a named one, or its own) and, for its own, where."""
    j = model.joint(joint)
    body, frame = model.body(getattr(j, side)), getattr(j, f"{side}_frame")

    def choose(m: Model, v) -> None:
        edits.set_joint_frame(m, joint, side, None if v == OWN_FRAME else v)

    out = [
        Field(
            f"{side} frame",
            "choice",
            OWN_FRAME if isinstance(frame, Frame) else frame,
            choose,
            choices=(OWN_FRAME, *body.frames),
        )
    ]
    if isinstance(frame, Frame):
        out += _frame_fields(frame, lambda m: getattr(m.joint(joint), f"{side}_frame"), list(body.points), f"{side} ")
    return out


def _coordinate(model: Model, joint: str, name: str) -> tuple[str, list[Field]]:
    j = model.joint(joint)
    k = [c.name for c in j.coordinates].index(name)
    unit = "rad" if turns(JOINT_MOTIONS[j.type][k]) else "m"

    def coord(m: Model):
        return m.joint(joint).coordinates[k]

    return f"coordinate '{name}' of joint '{joint}'", [
        Field("name", "text", name, lambda m, v: edits.rename_coordinate(m, joint, name, v), renames=True),
        Field("initial", "optional", j.coordinates[k].initial, _set(coord, "initial"), unit),
        Field("min", "optional", j.coordinates[k].min, _set(coord, "min"), unit),
        Field("max", "optional", j.coordinates[k].max, _set(coord, "max"), unit),
        *_stop_fields(j.coordinates[k].stop, coord, unit),
    ]


NO_STOP = "none (limits not enforced)"
NEW_STOPS = {"impact": ImpactStop, "compliant": lambda: CompliantStop(1e5, 1e3)}


def _stop_fields(stop, coord: Callable[[Model], object], unit: str) -> list[Field]:
    """How the limits are enforced in simulations (docs/file-format.md, coordinate): none, impacts, or a
    compliant stop, and the chosen kind's values."""

    def choose(m: Model, kind) -> None:
        coord(m).stop = None if kind == NO_STOP else NEW_STOPS[kind]()

    force = "N" if unit == "m" else "N m"
    units = {"stiffness": f"{force}/{unit}", "damping": f"{force} s/{unit}", "engagement": unit, "restitution": ""}
    out = [Field("stop", "choice", NO_STOP if stop is None else stop.type, choose, choices=(NO_STOP, *STOPS))]
    for f in fields(stop) if stop is not None else ():
        out.append(Field(f"stop {f.name}", "expr", getattr(stop, f.name), _set(lambda m: coord(m).stop, f.name),
                         units[f.name]))  # fmt: skip
    return out


_FORCE_TEXT = {"formula"}
# Fields of force elements and measures picked from what the model has: bodies, the chosen body's points,
# coordinates, force elements. A body field's point field (a measure's wheel carries its centre).
POINT_OF = dict(PLACES)
_BODY_OF = {point: body for body, point in POINT_OF.items()} | {"end2": "body2"}  # a contact pair's capsule end
_CHOICES = {*POINT_OF, *_BODY_OF, "coordinate", "element", "damper"}
_UNITS = {
    "stiffness": "N/m or N m/rad",
    "damping": "N s/m or N m s/rad",
    "length": "m",
    "force": "N",
    "velocity_scale": "m/s or rad/s",
    "radius": "m",
    "engagement": "m",
    "axis1": "body axes",
    "axis2": "body axes",
    "spin_axis": "body axes",
}


# A contact's fields whose units differ from the same names' elsewhere (docs/contact.md)
_CONTACT_UNITS = {
    "radius1": "m",
    "radius2": "m",
    "dissipation": "s/m",
    "stiction_velocity": "m/s",
    "plane_origin": "m",
    "plane_normal": "world axes",
}


def _unit(element, name: str) -> str:
    """The unit shown beside an element's field: a contact's stiffness in N/m^n for its exponent n."""
    if element.type not in (Contact.type, ContactPair.type):
        return _UNITS.get(name, "")
    if name == "stiffness":
        exponent = element.exponent
        numeric = isinstance(exponent, int | float) and not isinstance(exponent, bool)
        return f"N/m^{float(exponent):g}" if numeric else "N/m^n (n the exponent)"
    return _CONTACT_UNITS.get(name, _UNITS.get(name, ""))


def _force(model: Model, name: str) -> tuple[str, list[Field]]:
    return _element(model, name, edits.force_of)


def _measure(model: Model, name: str) -> tuple[str, list[Field]]:
    return _element(model, name, edits.measure_of)


def _element(model: Model, name: str, element_of: Callable[[Model, str], object]) -> tuple[str, list[Field]]:
    """Every field of a force element's or a measure's type; a table (actuator) is shown and edited as
    't: value; ...'."""
    element = element_of(model, name)
    out = []
    for f in fields(element):
        if f.name == "name":
            continue
        value = getattr(element, f.name)
        set_value = _set(lambda m: element_of(m, name), f.name)
        if f.name == "table":
            text = "; ".join(f"{as_written(t)}: {as_written(v)}" for t, v in value) if value else ""
            out.append(Field("table", "text", text, lambda m, v, s=set_value: s(m, _table(v)), "t [s]: value"))
        elif f.name in _OPTIONAL:  # the empty choice is none
            setter = lambda m, v, s=set_value: s(m, v or None)  # noqa: E731
            out.append(Field(f.name, "choice", value or "", setter, choices=_choices(model, element, f.name)))
        elif f.name == "against":  # a contact's ground: the empty choice is its plane
            setter = lambda m, v, s=set_value: s(m, v or None)  # noqa: E731
            out.append(Field(f.name, "choice", value or "", setter, choices=("", "road")))
        elif element.type == Contact.type and f.name in SHAPE_FIELDS:  # only the chosen shape's
            out += shape_fields(element, f.name, lambda m: element_of(m, name), Field)
        elif element.type == ContactPair.type and f.name in PAIR_SHAPE_FIELDS:  # a side's, as a contact's
            out += shape_fields(element, f.name[:-1], lambda m: element_of(m, name), Field, f.name[-1])
        elif f.name in _BUSHING_FRAMES:
            body = getattr(element, _BUSHING_FRAMES[f.name])
            out.append(Field(f.name, "choice", value, set_value, choices=_frames_of(model, body, value)))
        elif f.name in _BUSHING_JSON and element.type == Bushing.type:
            setter = lambda m, v, s=set_value, k=f.name: s(m, _bushing_value(k, v, name))  # noqa: E731
            out.append(Field(f.name, "text", bushing_text(value), setter, _BUSHING_JSON[f.name]))
        elif f.name in _CHOICES:
            setter = _body_setter(name, f.name, element_of) if f.name in POINT_OF else set_value
            out.append(Field(f.name, "choice", value, setter, choices=_choices(model, element, f.name)))
        elif f.name in _FORCE_TEXT:
            out.append(Field(f.name, "text", value, set_value))
        else:
            kind = "vector" if isinstance(value, list) else "expr"
            out.append(Field(f.name, kind, value, set_value, _unit(element, f.name)))
    return f"{element.type} '{name}'", out


_OPTIONAL = ("damper", "end2")  # a suspension's damper, a contact pair's capsule end


# A bushing's frames (choices among its bodies' frames) and its matrices, preload and tables, edited as the file
# writes them (one line of JSON; numbers may carry units: "2 N/mm").
_BUSHING_FRAMES = {"frame1": "body1", "frame2": "body2"}
_BUSHING_JSON = {
    "stiffness": "6 or 6×6: N/m, N m/rad",
    "damping": "6 or 6×6: N s/m, N m s/rad",
    "preload": "N, N m",
    "tables": '{"z": [[m, N], ...]}',
}


def _frames_of(model: Model, label: str, current: str) -> tuple[str, ...]:
    try:
        valid = list(model.body(label).frames)
    except KeyError:
        valid = []
    return tuple(valid if current in valid else [current, *valid])


def _bushing_value(key: str, text: object, name: str):
    where = f"force '{name}'.{key}"
    try:
        data = json.loads(str(text))
    except json.JSONDecodeError as error:
        raise ModelError(where, f"is not a JSON value ({error.msg})", text, _BUSHING_JSON[key]) from None
    return bushing_field(key, data, where)


def _body_setter(name: str, field: str, element_of) -> Callable[[Model, object], None]:
    """Move one end of a force element or measure to another body; a point the new body lacks becomes its
    first point, so that the move is one valid edit (a body without points is refused by the model's check)."""

    def apply(m: Model, label: object) -> None:
        element = element_of(m, name)
        setattr(element, field, label)
        point = POINT_OF[field]
        points = list(m.body(str(label)).points)
        if hasattr(element, point) and getattr(element, point) not in points and points:
            setattr(element, point, points[0])
        frame = next((f for f, body in _BUSHING_FRAMES.items() if body == field and hasattr(element, f)), None)
        frames = list(m.body(str(label)).frames)
        if frame is not None and getattr(element, frame) not in frames and frames:
            setattr(element, frame, frames[0])

    return apply


def _choices(model: Model, element, field: str) -> tuple[str, ...]:
    """The valid values of a body, point, coordinate or force-element field (the point of `point2` is one of
    `body2`'s); the current value stays listed even if invalid, so the form shows what the file says."""
    if field == "coordinate":
        valid = model.coordinate_names()
    elif field == "element":
        valid = [e.name for e in model.forces]
    elif field == "damper":
        valid = ["", *(e.name for e in model.forces if e.type == "spring_damper")]
    elif field in POINT_OF:
        valid = model.body_labels()
    else:
        try:
            valid = list(model.body(getattr(element, _BODY_OF[field])).points)
        except KeyError:  # the element's body does not exist: the form still shows the point
            valid = []
    current = str(getattr(element, field) or "")
    if field == "end2":  # a sphere without it
        valid = ["", *valid]
    return tuple(valid if current in valid else [current, *valid])


def _table(text: str) -> list[list[float]] | None:
    """'t: value; ...' rows; each number may carry its unit ('0.5 s: 2 N*m')."""
    if not text.strip():
        return None
    rows = []
    for pair in text.split(";"):
        parts = [typed_value(p, "", SI, "table") for p in pair.split(":")]
        rows.append(parts if len(parts) == 2 and not any(isinstance(p, str) for p in parts) else None)
        if rows[-1] is None:
            raise ModelError("table", "must be pairs 't: value' separated by ';'", pair.strip(), "e.g. 0: 0; 1: 2.5")
    return rows


def _trajectory(model: Model, name: str) -> tuple[str, list[Field]]:
    """Duration, samples, and per coordinate its harmonics as 'A @ ω [@ φ]; ...' (ω in rad/s)."""
    t = edits.trajectory_of(model, name)

    def trajectory(m: Model) -> Trajectory:
        return edits.trajectory_of(m, name)

    out = [
        Field("duration", "number", t.duration, _set(trajectory, "duration"), "s"),
        Field("samples", "number", t.samples, lambda m, v: setattr(trajectory(m), "samples", _count(v))),
        Field(
            "description", "text", t.description or "", lambda m, v: setattr(trajectory(m), "description", v or None)
        ),
    ]
    for coordinate, terms in t.coordinates.items():
        out.append(
            Field(coordinate, "text", _harmonics_text(terms), _harmonics_setter(name, coordinate), "A @ ω [@ φ]; ...")
        )
    return f"trajectory '{name}'", out


def _count(value: float) -> int:
    if value != int(value) or value < 1:
        raise ModelError("samples", "must be a whole number of samples, at least 1", value, "e.g. 200")
    return int(value)


def _harmonics_text(terms: list[Harmonic]) -> str:
    written = [[as_written(x) for x in (h.amplitude, h.frequency, h.phase) if x is not None] for h in terms]
    return "; ".join(" @ ".join(term) for term in written)


def _harmonics_setter(name: str, coordinate: str) -> Callable[[Model, object], None]:
    def apply(m: Model, text: object) -> None:
        terms = []
        for term in filter(str.strip, str(text).split(";")):
            parts = [typed_value(p, "", SI, coordinate) for p in term.split("@")]  # "30 deg @ 2 rad/s" too
            if len(parts) not in (2, 3):
                raise ModelError(
                    coordinate,
                    "each term is 'amplitude @ frequency' or 'amplitude @ frequency @ phase'",
                    term.strip(),
                    "e.g. 0.5 @ 3; 0.1 @ 10",
                )
            terms.append(Harmonic(*parts))
        edits.trajectory_of(m, name).coordinates[coordinate] = terms

    return apply
