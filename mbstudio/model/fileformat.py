"""Reading and writing `.mbs` files (docs/file-format.md): strict, canonical, atomic."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path

from .document import (
    FORCE_ELEMENTS,
    INERTIA_NAMES,
    MEASURES,
    STOPS,
    Body,
    Coordinate,
    Coupling,
    Frame,
    Harmonic,
    Joint,
    Model,
    Parameter,
    Platform,
    Road,
    Trajectory,
)
from .errors import ModelError
from .files import write_all
from .surface_files import resolve_surface_file, with_relative_surface_file
from .tyre_files import resolve_tyre_files, with_relative_tyre_files
from .units import Quantity, read, read_vector, written
from .validation import validate

FORMAT = "mbstudio"
SCHEMA_VERSION = 2
# What each older schema called a joint type that has another meaning now: version 1's "free" turned by Euler
# angles, which version 2 calls "free_euler" ("free" has no gimbal lock since).
RENAMED_JOINT_TYPES = {1: {"free": "free_euler"}}
MAX_SAMPLES = 1_000_000  # a trajectory's samples, bounded as `mbstudio kinematics --samples` is
TOP_KEYS = (
    "format",
    "schema_version",
    "name",
    "description",
    "gravity",
    "parameters",
    "bodies",
    "joints",
    "independent_coordinates",
    "trajectories",
    "ground",
    "forces",
    "actuated",
    "measures",
    "platform",
    "couplings",
    "road",
)


# ---------------------------------------------------------------- reading


def loads(text: str, source: str = "<string>") -> Model:
    """Parse and validate a model; raise ModelError (never anything else) for any bad input."""
    model = from_dict(_parsed(text, source), consume=True)  # the JSON freed as read: 250 MB for 100 000 bodies
    validate(model)
    return model


def load(path: str | os.PathLike) -> Model:
    path = Path(path)
    model = from_dict(_parsed(_text(path), str(path)), consume=True)  # neither text nor JSON kept while validating
    resolve_tyre_files(model, path.parent)
    resolve_surface_file(model, path.parent)
    validate(model)
    return model


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # tolerate the BOM some Windows editors add
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(str(path), f"cannot be read: {exc}") from exc


def _parsed(text: str, source: str):
    """The JSON of a model file, strictly read: no repeated key, no NaN or Infinity, no lone surrogate."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_float=_float())
    except json.JSONDecodeError as exc:
        raise ModelError(
            f"{source}, line {exc.lineno}, column {exc.colno}",
            f"malformed JSON: {exc.msg}",
            expected="a JSON object as described in docs/file-format.md",
        ) from exc
    except ModelError as exc:
        raise ModelError(f"{source}: {exc.where}", exc.problem, exc.value, exc.expected) from None
    except RecursionError:
        raise ModelError(
            source,
            "malformed JSON: lists or objects nested too deeply",
            expected="a JSON object as described in docs/file-format.md",
        ) from None
    except ValueError as exc:  # e.g. an integer with more than 4300 digits
        raise ModelError(
            source, f"malformed JSON: {exc}", expected="a JSON object as described in docs/file-format.md"
        ) from None
    if _ESCAPED_SURROGATE.search(text):  # only a \ud800-style escape makes one: the walk is for those files
        _no_lone_surrogate(data, source)
    return data


def _float():
    """JSON's float reader, giving one object per distinct number among the first few thousand written: a model
    repeats a few values (0.0, 1.0) many times, and a 100 000-body chain held 3 million float objects for them."""
    seen: dict[str, float] = {}

    def read(text: str) -> float:
        number = seen.get(text)
        if number is None:
            number = float(text)
            if len(seen) < 4096:
                seen[text] = number
        return number

    return read


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _no_lone_surrogate(data, source: str) -> None:
    """A ModelError naming the first name or other string (key or value) holding half of a UTF-16 pair without
    the other half: no character, it cannot be printed (a model name of one made `check` crash). Descriptions,
    free text no command prints, keep theirs, written back escaped."""
    stack = [("", data)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                inside = f"{where}.{_printable(key)}" if where else _printable(key)
                stack += [(inside, "" if key == "description" else value), (f"{inside} (the key)", key)]
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", value) for i, value in enumerate(node))
        elif isinstance(node, str) and _printable(node) != node:
            raise ModelError(
                f"{source}: {where}",
                "holds a lone surrogate, half of a UTF-16 pair, which is no character",
                _printable(node)[:80],
                "text: a character beyond U+FFFF written as itself or as both halves (\\ud83d\\ude00)",
            )


def _printable(text: str) -> str:
    """The text with lone surrogates written as \\udXXX escapes (other text unchanged)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _unique_keys(pairs):
    """JSON objects may not repeat a key (json.loads would silently keep the last one)."""
    result = dict(pairs)
    if len(result) < len(pairs):
        keys, seen = [k for k, _ in pairs], set()
        twice = next(k for k in keys if k in seen or seen.add(k))
        raise ModelError(
            f"the JSON object with keys {', '.join(keys)}",
            f"repeats the key '{twice}'",
            twice,
            "each key (field, point or frame name) once per object",
        )
    return result


def _no_constant(name):
    raise ModelError("JSON", f"contains {name}, which is not valid JSON", name, "a finite number")


def from_dict(data: object, consume: bool = False) -> Model:
    """The model a file's parsed JSON describes (not yet validated). `consume`: each body and joint is taken out
    of `data` as it is read, so that the two are never held whole at once (a 100 000-body chain: 250 MB each)."""
    obj = _object(data, "file", TOP_KEYS)
    if obj.get("format") != FORMAT:
        raise ModelError("format", "this is not an MB Studio model", obj.get("format"), f'"{FORMAT}"')
    if "schema_version" not in obj:
        raise ModelError("schema_version", "is missing", expected=f"an integer, {SCHEMA_VERSION} for this MB Studio")
    version = obj.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelError("schema_version", "must be a positive integer", version, str(SCHEMA_VERSION))
    if version > SCHEMA_VERSION:
        raise ModelError(
            "schema_version",
            "the file was written by a newer MB Studio",
            version,
            f"at most {SCHEMA_VERSION}; update MB Studio to open it",
        )
    model = Model(
        name=_string(obj.get("name", "untitled"), "name"),
        description=_string(obj.get("description", ""), "description"),
        gravity=_vector(obj.get("gravity", [0.0, 0.0, -9.81]), "gravity"),
        parameters=[_parameter(p, i) for i, p in enumerate(_list(obj.get("parameters", []), "parameters"))],
        bodies=[_body(b, i) for i, b in _items(_list(obj.get("bodies", []), "bodies"), consume)],
        joints=[_joint(j, i, version) for i, j in _items(_list(obj.get("joints", []), "joints"), consume)],
        independent_coordinates=_independent(obj.get("independent_coordinates", "auto")),
        trajectories=[_trajectory(t, i) for i, t in enumerate(_list(obj.get("trajectories", []), "trajectories"))],
    )
    if "ground" in obj:
        ground = _object(obj["ground"], "ground", ("points", "frames"))
        model.ground.points = _points(ground.get("points", {}), "ground")
        model.ground.frames = _frames(ground.get("frames", {}), "ground")
    model.forces = [
        _element(f, i, "force", FORCE_ELEMENTS) for i, f in enumerate(_list(obj.get("forces", []), "forces"))
    ]
    model.measures = [
        _element(m, i, "measure", MEASURES) for i, m in enumerate(_list(obj.get("measures", []), "measures"))
    ]
    model.actuated = [_string(n, "actuated") for n in _list(obj.get("actuated", []), "actuated")]
    if "platform" in obj:
        model.platform = _platform(obj["platform"])
    model.couplings = [_coupling(c, i) for i, c in enumerate(_list(obj.get("couplings", []), "couplings"))]
    if "road" in obj:
        model.road = _road(obj["road"])
    return model


def _items(items: list, consume: bool) -> Iterator[tuple[int, object]]:
    """enumerate(items), each item taken out of the list as it is given when `consume`."""
    for index, item in enumerate(items):
        if consume:
            items[index] = None
        yield index, item


def _coupling(data, index) -> Coupling:
    fields = ("name", "follower", "leader", "ratio", "offset", "polynomial")
    obj = _object(data, f"couplings[{index}]", fields)
    where = f"coupling '{_string(obj.get('name'), f'couplings[{index}].name')}'"
    if "follower" not in obj:
        raise ModelError(where, "lacks 'follower'", expected="the name of the coordinate the coupling drives")
    polynomial = obj.get("polynomial")
    return Coupling(
        obj["name"],
        _string(obj["follower"], f"{where}.follower"),
        None if obj.get("leader") is None else _string(obj["leader"], f"{where}.leader"),
        None if obj.get("ratio") is None else _expr(obj["ratio"], f"{where}.ratio"),
        None if obj.get("offset") is None else _expr(obj["offset"], f"{where}.offset"),
        None
        if polynomial is None
        else [_expr(c, f"{where}.polynomial[{k}]") for k, c in enumerate(_list(polynomial, f"{where}.polynomial"))],
    )


def _road(data) -> Road:
    obj = _object(data, "road", ("profile", "speed", "interpolation", "surface", "surface_sha256", "formula"))
    if sum(key in obj for key in ("profile", "surface", "formula")) != 1:
        expected = '"profile": [[s, z], ...] (m), "surface": "a CSV grid of heights" or "formula": "z(x, y)"'
        raise ModelError("road", "must have one of 'profile', 'surface' and 'formula'", sorted(obj), expected)
    profile = _table(obj["profile"], "road.profile", "[s, z]") if "profile" in obj else []
    surface = _string(obj["surface"], "road.surface") if "surface" in obj else None
    speed = _expr(obj.get("speed", 0.0), "road.speed")
    digest = _string(obj["surface_sha256"], "road.surface_sha256") if "surface_sha256" in obj else None
    formula = _expr(obj["formula"], "road.formula") if "formula" in obj else None
    return Road(profile, speed, obj.get("interpolation", "linear"), surface, digest, formula)  # validation checks


def _platform(data) -> Platform:
    obj = _object(data, "platform", ("body", "task", "paths"))
    if "body" not in obj:
        raise ModelError("platform", "lacks 'body'", expected="the label of the platform body")
    task = obj.get("task")
    return Platform(
        _string(obj["body"], "platform.body"),
        None if task is None else [_string(n, "platform.task") for n in _list(task, "platform.task")],
        [_trajectory(t, i, "platform.paths") for i, t in enumerate(_list(obj.get("paths", []), "platform.paths"))],
    )


def _object(data, where, keys=None):
    """`data` as a JSON object whose fields are among `keys` (None: any, as a body's named points)."""
    if not isinstance(data, dict):
        raise ModelError(where, "must be a JSON object", type(data).__name__)
    unknown = None if keys is None else next((k for k in data if k not in keys), None)
    if unknown is not None:
        raise ModelError(where, f"has the unknown field '{unknown}'", expected="one of " + ", ".join(keys))
    return data


def _list(data, where):
    if not isinstance(data, list):
        raise ModelError(where, "must be a list", type(data).__name__)
    return data


def _string(data, where):
    if not isinstance(data, str):
        raise ModelError(where, "must be a string", data)
    return data


def _number(data, where, optional=False):
    if optional and data is None:
        return None
    quantity = read(data, where)
    if quantity is not None:
        return quantity
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise ModelError(where, "must be a number", data)
    return _float_range(data, where)


def _float_range(data, where):
    if not isinstance(data, int):
        return data
    try:
        float(data)
    except OverflowError:  # an integer beyond float range
        raise ModelError(
            where, "is too large", f"an integer of {data.bit_length()} bits", "a number of magnitude below 1e308"
        ) from None
    return data


def _expr(data, where):
    quantity = read(data, where)
    if quantity is not None:
        return quantity
    if isinstance(data, bool) or not isinstance(data, int | float | str):
        raise ModelError(where, "must be a number or an expression string", data)
    return _float_range(data, where)


def _vector(data, where):
    grouped = read_vector(data, where)
    if grouped is not None:
        return grouped
    if not isinstance(data, list) or len(data) != 3:
        raise ModelError(where, "must be a list of three numbers or expressions", data)
    return [_expr(v, f"{where}[{i}]") for i, v in enumerate(data)]


def _parameter(data, index):
    where = f"parameters[{index}]"
    obj = _object(data, where, ("name", "value", "unit", "description"))
    name = _string(obj.get("name"), f"{where}.name")
    where = f"parameter '{name}'"
    value = obj.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ModelError(f"{where}.value", "must be a number (its unit goes in 'unit')", value, "e.g. 100")
    unit = None if obj.get("unit") is None else _string(obj["unit"], f"{where}.unit")
    return Parameter(
        name,
        _float_range(value, f"{where}.value") if unit is None else _parameter_quantity(value, unit, where),
        unit,
        None if obj.get("description") is None else _string(obj["description"], f"{where}.description"),
    )


def _parameter_quantity(value, unit, where):
    """A parameter's value in its unit, in SI."""
    _float_range(value, f"{where}.value")
    if not math.isfinite(value):
        raise ModelError(f"{where}.value", "is not finite", value, "a finite number")
    quantity = Quantity(value, unit, "object", f"{where}.unit")
    if quantity != quantity or abs(quantity) == float("inf"):
        raise ModelError(f"{where}.value", "is too large in SI units", f"{value} {unit}", "a finite value")
    return quantity


def _points(data, owner):
    obj = _object(data, f"body '{owner}'.points")
    return {_string(k, f"body '{owner}' point name"): _vector(v, f"body '{owner}' point '{k}'") for k, v in obj.items()}


def _frame(data, where):
    if isinstance(data, str):
        return data
    obj = _object(data, where, ("origin", "z", "x"))
    origin = obj.get("origin", [0.0, 0.0, 0.0])
    origin = origin if isinstance(origin, str) else _vector(origin, f"{where}.origin")
    return Frame(
        origin,
        None if obj.get("z") is None else _vector(obj["z"], f"{where}.z"),
        None if obj.get("x") is None else _vector(obj["x"], f"{where}.x"),
    )


def _frames(data, owner):
    obj = _object(data, f"body '{owner}'.frames")
    result = {}
    for k, v in obj.items():
        frame = _frame(v, f"body '{owner}' frame '{k}'")
        if isinstance(frame, str):
            raise ModelError(f"body '{owner}' frame '{k}'", "must be a frame object", frame)
        result[k] = frame
    return result


def _body(data, index):
    keys = ("label", "name", "inertia", "points", "frames", "shape", "source_name")
    obj = _object(data, f"bodies[{index}]", keys)
    label = _string(obj.get("label"), f"bodies[{index}].label")
    where = f"body '{label}'"
    inertia = _object(obj.get("inertia", {}), f"{where}.inertia", INERTIA_NAMES)
    missing = [n for n in INERTIA_NAMES if n not in inertia]
    if missing:
        raise ModelError(f"{where}.inertia", f"lacks '{missing[0]}'", expected="all of " + ", ".join(INERTIA_NAMES))
    shape = obj.get("shape")
    if shape is not None and not isinstance(shape, dict):
        raise ModelError(f"{where}.shape", "must be an object", shape)
    return Body(
        label,
        _string(obj.get("name", label), f"{where}.name"),
        {n: _expr(inertia[n], f"{where}.inertia.{n}") for n in INERTIA_NAMES},
        _points(obj.get("points", {}), label),
        _frames(obj.get("frames", {}), label),
        shape if shape is None else {k: _shape_value(v, f"{where}.shape.{k}") for k, v in shape.items()},
        _source_name(obj, where),
    )


def _source_name(obj: dict, where: str) -> str | None:
    """The name in the file a body or joint was imported from (validation.check_source_name says which are valid)."""
    if obj.get("source_name") is None:
        return None
    return _string(obj["source_name"], f"{where}.source_name")


def _shape_value(data, where):
    """A shape's field with its numbers written with units in SI; everything else as it is, for validation
    to judge."""
    grouped = read_vector(data, where)
    if grouped is not None:
        return grouped
    if isinstance(data, list):
        return [_shape_value(v, f"{where}[{i}]") for i, v in enumerate(data)]
    quantity = read(data, where)
    return data if quantity is None else quantity


def _coordinate(data, where):
    obj = _object(data, where, ("name", "initial", "min", "max", "stop"))
    name = _string(obj.get("name"), f"{where}.name")
    where = f"{where.rsplit('.', 1)[0]} coordinate '{name}'"
    return Coordinate(
        name,
        _number(obj.get("initial"), f"{where}.initial", True),
        _number(obj.get("min"), f"{where}.min", True),
        _number(obj.get("max"), f"{where}.max", True),
        None if obj.get("stop") is None else _stop(obj["stop"], f"{where}.stop"),
    )


def _stop(data, where):
    """A coordinate's stop: its `type` picks the dataclass, whose fields are the allowed keys."""
    if not isinstance(data, dict):
        raise ModelError(where, "must be a JSON object", type(data).__name__)
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in STOPS:
        raise ModelError(f"{where}.type", "is not a known stop type", kind, ", ".join(STOPS))
    fields = dataclasses.fields(STOPS[kind])
    obj = _object(data, where, ("type", *(f.name for f in fields)))
    missing = [f.name for f in fields if f.default is dataclasses.MISSING and f.name not in obj]
    if missing:
        every = ", ".join(f.name for f in fields)
        raise ModelError(where, f"lacks '{missing[0]}'", expected=f"a {kind} stop has {every}")
    return STOPS[kind](**{f.name: _expr(obj[f.name], f"{where}.{f.name}") for f in fields if f.name in obj})


def _joint(data, index, version: int = SCHEMA_VERSION):
    keys = ("name", "type", "parent", "child", "parent_frame", "child_frame", "coordinates", "cut", "source_name")
    obj = _object(data, f"joints[{index}]", keys)
    name = _string(obj.get("name"), f"joints[{index}].name")
    where = f"joint '{name}'"
    for key in ("type", "parent", "child", "parent_frame", "child_frame"):
        if key not in obj:
            raise ModelError(where, f"lacks '{key}'")
    cut = obj.get("cut")
    if cut is not None and not isinstance(cut, bool):
        raise ModelError(f"{where}.cut", "must be true or false", cut)
    coords = _list(obj.get("coordinates", []), f"{where}.coordinates")
    kind = _string(obj["type"], f"{where}.type")
    return Joint(
        name,
        RENAMED_JOINT_TYPES.get(version, {}).get(kind, kind),
        _string(obj["parent"], f"{where}.parent"),
        _string(obj["child"], f"{where}.child"),
        _frame(obj["parent_frame"], f"{where}.parent_frame"),
        _frame(obj["child_frame"], f"{where}.child_frame"),
        [_coordinate(c, f"{where}.coordinates[{i}]") for i, c in enumerate(coords)],
        cut,
        _source_name(obj, where),
    )


def _trajectory(data, index, section="trajectories"):
    obj = _object(data, f"{section}[{index}]", ("name", "description", "duration", "samples", "coordinates"))
    name = _string(obj.get("name"), f"{section}[{index}].name")
    where = f"trajectory '{name}'" if section == "trajectories" else f"{section} '{name}'"
    samples = obj.get("samples")
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise ModelError(  # as the command line's --samples: beyond, a run ends out of memory, not in a result
            f"{where}.samples", f"must be a whole number of samples, at least 1 and at most {MAX_SAMPLES}", samples
        )
    coordinates = _object(obj.get("coordinates", {}), f"{where}.coordinates")
    return Trajectory(
        name,
        {
            c: [
                _harmonic(h, f"{where} coordinate '{c}' term {k}")
                for k, h in enumerate(_list(terms, f"{where} coordinate '{c}'"))
            ]
            for c, terms in coordinates.items()
        },
        _number(obj.get("duration"), f"{where}.duration"),
        samples,
        None if obj.get("description") is None else _string(obj["description"], f"{where}.description"),
    )


def _harmonic(data, where):
    obj = _object(data, where, ("amplitude", "frequency", "phase"))
    for key in ("amplitude", "frequency"):
        if key not in obj:
            raise ModelError(where, f"lacks '{key}'", expected="amplitude and frequency (rad/s), optional phase")
    phase = obj.get("phase")
    return Harmonic(
        _expr(obj["amplitude"], f"{where}.amplitude"),
        _expr(obj["frequency"], f"{where}.frequency"),
        None if phase is None else _expr(phase, f"{where}.phase"),
    )


def _independent(data):
    if data == "auto":
        return "auto"
    items = _list(data, "independent_coordinates")
    return [_string(n, "independent_coordinates") for n in items]


_NAME_FIELDS = (
    *("name", "body", "body1", "body2", "point", "point1", "point2", "coordinate", "element", "wheel", "centre"),
    *("lower_body", "lower_point", "upper_body", "upper_point", "damper", "frame1", "frame2", "tir", "side"),
    *("relaxation", "against", "end2", "shape", "shape1", "shape2"),
)
_VECTOR_FIELDS = ("force", "axis1", "axis2", "spin_axis", "plane_origin", "plane_normal", "half_extents", "rpy",
                  "half_extents1", "half_extents2", "rpy1", "rpy2")  # fmt: skip


def _element(data, index: int, section: str, kinds: dict):
    """A force element or a measure: its `type` picks the dataclass, whose fields are the allowed keys."""
    where = f"{section}s[{index}]"
    if not isinstance(data, dict):
        raise ModelError(where, "must be a JSON object", type(data).__name__)
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in kinds:
        raise ModelError(f"{where}.type", f"is not a known {section} type", kind, ", ".join(kinds))
    fields = dataclasses.fields(kinds[kind])
    obj = _object(data, where, ("type", *(f.name for f in fields)))
    where = f"{section} '{_string(obj.get('name'), f'{where}.name')}'"
    required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    missing = [key for key in required if key not in obj]
    if missing:
        raise ModelError(where, f"lacks '{missing[0]}'", expected=f"every {kind} has " + ", ".join(required))
    read_field = bushing_field if kind == "bushing" else _element_field
    return kinds[kind](
        **{f.name: read_field(f.name, obj[f.name], f"{where}.{f.name}") for f in fields if f.name in obj}
    )


def bushing_field(key, data, where):
    """A bushing's fields: six diagonal entries or six rows of six (stiffness, damping), six values (preload),
    direction → [deflection, force] rows (tables); its names as any element's."""
    if key in ("stiffness", "damping", "preload"):
        rows = _list(data, where)
        if len(rows) != 6 or (key == "preload" and any(isinstance(r, list) for r in rows)):
            raise ModelError(
                where, "must be a list of six", data, "six values" + ("" if key == "preload" else " or six rows of six")
            )
        return [
            _six(r, f"{where}[{i}]") if isinstance(r, list) else _expr(r, f"{where}[{i}]") for i, r in enumerate(rows)
        ]
    if key == "tables":
        if not isinstance(data, dict):
            raise ModelError(
                where,
                "must be a JSON object",
                type(data).__name__,
                'direction → rows, e.g. {"z": [[0, 0], [0.01, 500]]}',
            )
        return {
            direction: _table(rows, f"{where}.{direction}", "[deflection, force]") for direction, rows in data.items()
        }
    return _element_field(key, data, where)


def bushing_text(value) -> str:
    """A bushing's stiffness, damping, preload or tables as one line of the file's JSON (the window shows them so,
    and reads them back by `bushing_field`)."""
    return json.dumps(json.loads(_dump(value, 0)), ensure_ascii=False)


def _six(data, where):
    if len(data) != 6:
        raise ModelError(where, "must be a row of six numbers or expressions", data)
    return [_expr(v, f"{where}[{i}]") for i, v in enumerate(data)]


def _element_field(key, data, where):
    if key in _NAME_FIELDS:
        return _string(data, where)
    if key in _VECTOR_FIELDS:
        return _vector(data, where)
    if key == "table":
        return _table(data, where, "[t, value]")
    if key == "path":
        return _table(data, where, "[x, y]")
    if key in ("vertices", "vertices1", "vertices2"):
        return vertex_rows(data, where)
    if key == "coordinates":  # a speed controller's driven coordinates
        return [_string(v, f"{where}[{i}]") for i, v in enumerate(_list(data, where))]
    return _expr(data, where)


def vertex_rows(data, where: str) -> list[list[float]]:
    """A contact mesh's vertices: [x, y, z] rows of numbers, in m (each may carry its unit)."""
    rows = _list(data, where)
    if not all(isinstance(r, list) and len(r) == 3 for r in rows):
        raise ModelError(where, "must hold [x, y, z] rows", data, "rows of three numbers, in m")
    return [[_number(v, f"{where}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]


def _table(data, where: str, pair: str) -> list[list[float]]:
    """Rows of two numbers (an actuator's [t, value], a road's [s, z])."""
    rows = _list(data, where)
    for i, r in enumerate(rows):
        if not isinstance(r, list) or len(r) != 2:
            raise ModelError(f"{where}[{i}]", f"must be a pair {pair}", r)
    return [[_number(v, f"{where}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]


# ---------------------------------------------------------------- writing


def to_dict(model: Model) -> dict:
    data = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "name": model.name,
        "description": model.description,
        "gravity": list(model.gravity),
        "parameters": [
            _drop_none(
                {"name": p.name, "value": _in_unit(p.value, p.unit), "unit": p.unit, "description": p.description}
            )
            for p in model.parameters
        ],
        "bodies": [_body_dict(b) for b in model.bodies],
        "joints": [_joint_dict(j) for j in model.joints],
        "independent_coordinates": model.independent_coordinates,
    }
    if model.trajectories:
        data["trajectories"] = [_trajectory_dict(t) for t in model.trajectories]
    if model.ground.points or model.ground.frames:
        data["ground"] = {
            "points": model.ground.points,
            "frames": {k: _frame_dict(f) for k, f in model.ground.frames.items()},
        }
    if model.forces:
        data["forces"] = [_element_dict(e) for e in model.forces]
    if model.measures:
        data["measures"] = [_element_dict(m) for m in model.measures]
    if model.actuated:
        data["actuated"] = list(model.actuated)
    if model.platform is not None:
        data["platform"] = _drop_none(
            {"body": model.platform.body, "task": model.platform.task}
            | ({"paths": [_trajectory_dict(t) for t in model.platform.paths]} if model.platform.paths else {})
        )
    if model.couplings:
        data["couplings"] = [_drop_none(dataclasses.asdict(c)) for c in model.couplings]
    if model.road is not None:
        data["road"] = {"speed": model.road.speed}
        shape = {"profile": model.road.profile} if model.road.surface is None else {"surface": model.road.surface}
        shape = {"formula": model.road.formula} if model.road.formula is not None else shape
        data["road"] |= shape | ({"surface_sha256": model.road.surface_sha256} if model.road.surface_sha256 else {})
        if model.road.interpolation != "linear":  # a file without it reads as before
            data["road"]["interpolation"] = model.road.interpolation
    return data


def _in_unit(value, unit: str | None):
    """A parameter's SI value as the number to write beside its unit (as it was written when unchanged)."""
    if not unit:
        return float(value) if isinstance(value, Quantity) else value
    if isinstance(value, Quantity) and value.unit == unit:
        return value.number
    return Quantity.from_si(float(value), unit).number


def _element_dict(element) -> dict:
    return _drop_none({"type": element.type, **{f.name: getattr(element, f.name) for f in dataclasses.fields(element)}})


def _trajectory_dict(t: Trajectory):
    terms = {
        c: [_drop_none({"amplitude": h.amplitude, "frequency": h.frequency, "phase": h.phase}) for h in hs]
        for c, hs in t.coordinates.items()
    }
    return _drop_none(
        {
            "name": t.name,
            "description": t.description,
            "duration": t.duration,
            "samples": t.samples,
            "coordinates": terms,
        }
    )


def _drop_none(d):
    return {k: v for k, v in d.items() if v is not None}


def _frame_dict(f):
    return f if isinstance(f, str) else _drop_none({"origin": f.origin, "z": f.z, "x": f.x})


def _body_dict(b: Body):
    return _drop_none(
        {
            "label": b.label,
            "name": b.name,
            "inertia": dict(b.inertia),
            "points": b.points,
            "frames": {k: _frame_dict(f) for k, f in b.frames.items()},
            "shape": b.shape,
            "source_name": b.source_name,
        }
    )


def _joint_dict(j: Joint):
    coords = [
        _drop_none({"name": c.name, "initial": c.initial, "min": c.min, "max": c.max})
        | ({"stop": _element_dict(c.stop)} if c.stop is not None else {})
        for c in j.coordinates
    ]
    return _drop_none(
        {
            "name": j.name,
            "type": j.type,
            "parent": j.parent,
            "child": j.child,
            "parent_frame": _frame_dict(j.parent_frame),
            "child_frame": _frame_dict(j.child_frame),
            "coordinates": coords,
            "cut": j.cut,
            "source_name": j.source_name,
        }
    )


def dumps(model: Model) -> str:
    """Canonical text: two-space indentation, short lists of scalars on one line, trailing newline."""
    return _dump(to_dict(model), 0) + "\n"


def _dump(value, level):
    pad, inner = "  " * level, "  " * (level + 1)
    value = written(value)
    if isinstance(value, dict) and set(value) == {"value", "unit"}:  # a number or vector with its unit: one line
        return "{" + f'"value": {_dump(value["value"], level)}, "unit": {_scalar(value["unit"])}' + "}"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{_scalar(k)}: {_dump(v, level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if all(not isinstance(written(v), dict | list) for v in value):
            return "[" + ", ".join(_dump(v, level) for v in value) + "]"
        return "[\n" + ",\n".join(inner + _dump(v, level + 1) for v in value) + "\n" + pad + "]"
    return _scalar(value)


def _scalar(value) -> str:
    """A JSON scalar, non-ASCII text written as itself; a lone surrogate (possible from a "\\ud800" escape in
    the file) stays escaped, since UTF-8 cannot encode it."""
    kind = type(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return repr(value)  # json.dumps' own text for these, without its encoder (half of writing a model)
    if kind is str and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'  # nothing to escape: json.dumps' text (a name, a unit), a third of writing a model
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value)
    return text


def save(model: Model, path: str | os.PathLike) -> None:
    """Validate the model, then write its canonical text atomically (see files.write_all): an invalid
    document is never written over a good file. Tyre files from outside the folder are copied into it, written
    with the model as one set (every file or none)."""
    validate(model)
    saved, copies = with_relative_tyre_files(model, Path(path).parent)
    saved, grid = with_relative_surface_file(saved, Path(path).parent)
    write_all({path: dumps(saved), **copies, **grid})
