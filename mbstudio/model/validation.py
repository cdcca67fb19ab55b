"""Checks that a document describes a mechanism that can exist; each failure is a ModelError in words."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from .document import (
    BUSHING_DIRECTIONS,
    CONTACT_SHAPES,
    GROUND,
    GROUND_ALIASES,
    INERTIA_NAMES,
    JOINT_MOTIONS,
    PLACES,
    ROAD_INTERPOLATIONS,
    TASK_COORDINATES,
    Actuator,
    Body,
    Bushing,
    Contact,
    ContactPair,
    Frame,
    Joint,
    Model,
    PointForce,
    Road,
    SpeedController,
    SpringDamper,
    SuspensionMeasure,
    body_key,
)
from .errors import ModelError
from .expressions import FUNCTIONS, evaluate, names
from .names import LABEL, check_inertial_symbols, check_name, check_unique
from .road_formula import check_formula
from .surface_files import read_grid
from .units import check_expressions, check_units

# Names of text (the model's, bodies', points', frames', names in an imported file) reach generated files only
# escaped, but stay one line of printable text, without the controls that make text display in another order
# than it is stored (Boucher and Anderson 2021, "Trojan Source"): embeddings, overrides, isolates and marks.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
UNPRINTABLE = re.compile(rf"[\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI_CONTROLS}]")
NAME_TEXT = re.compile(rf"[^\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI_CONTROLS}]{{0,200}}")
PATH_TEXT = re.compile(rf"[^\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI_CONTROLS}]{{1,4096}}")  # a mesh file's path
TEXT_RULE = (
    "up to 200 characters on one line, printable, without bidirectional controls (U+202A to U+202E, U+2066 to "
    "U+2069, U+200E, U+200F, U+061C), which show text in another order than it has"
)
_MATH = {name: getattr(math, name) for name in FUNCTIONS}
# Values beyond this (in SI units) only make the numbers overflow: a mass of 1e308 kg made `simulate` hang and
# `kinematics` write NaN. Documented in docs/file-format.md.
MAGNITUDE_MAX = 1e12
WITHIN = "a value within ±1e12 (SI units)"
# Relative tolerance for the physical-consistency checks: values typed with a few decimals must pass.
_INERTIA_TOL = 1e-9
POINT_MASS_MOMENT = 1e-12  # kg m^2 (1 g at 0.03 mm): moments below it are a point mass's, written with rounding noise


def float_value(value, symbols: dict[str, float], where: str) -> float:
    """An expression evaluated in float64, with errors that say where it was."""
    try:
        result = evaluate(value, float, {**symbols, "pi": math.pi}, _MATH)
    except ModelError as exc:
        if _infinite_at_start(value, symbols):
            raise ModelError(where, "is infinite at t = 0 s, where a run starts", value, FINITE_FROM_START) from None
        raise ModelError(where, exc.problem, exc.value, exc.expected) from None
    if not math.isfinite(result):
        raise ModelError(where, "evaluates to a non-finite number", value, "a finite number")
    if abs(result) > MAGNITUDE_MAX:
        raise ModelError(where, f"evaluates to {result:.3g}, beyond any mechanism's values", value, WITHIN)
    return float(result)


FINITE_FROM_START = "a function of time finite from t = 0, e.g. 1/(1 + t)"


def _infinite_at_start(value, symbols: dict[str, float]) -> bool:
    """Whether a function of time that cannot be evaluated at t = 0 (1/t, t**-1, 1/sin(t)) has a value just after:
    a pole at the start, which is what the person should read, not the division it makes."""
    if symbols.get("t") != 0.0 or not isinstance(value, str) or "t" not in names(value):
        return False
    try:
        return math.isfinite(evaluate(value, float, {**symbols, "t": 1e-6, "pi": math.pi}, _MATH))
    except (ModelError, ArithmeticError):
        return False


def _finite(value) -> bool:
    """math.isfinite that also answers (False) for integers too large for a float instead of raising."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def float_vector(values, symbols: dict[str, float], where: str) -> np.ndarray:
    return np.array([float_value(v, symbols, f"{where}[{i}]") for i, v in enumerate(values)])


def validate(model: Model) -> None:
    """Raise the first ModelError found; return None for a valid model."""
    check_text(model.name, "name")
    symbols = _check_parameters(model)
    check_units(model)  # first: a number in the wrong unit is the mistake, not what it makes of a body
    float_vector(model.gravity, symbols, "gravity")
    labels = _check_bodies(model, symbols)
    _check_joints(model, symbols, labels)
    _check_connected(model)
    _check_independent(model)
    _check_trajectories(model, symbols)
    _check_platform(model, symbols)
    _check_forces(model, symbols)
    _check_road(model, symbols)
    _check_measures(model, symbols)
    _check_coordinate_list(model, "actuated", model.actuated)
    _check_couplings(model, symbols)
    _check_shared_names(model)
    check_expressions(model)


def _check_shared_names(model: Model) -> None:
    """The names that become symbols or columns side by side, unique across their kinds."""
    coordinates = model.coordinate_names()
    before = check_unique(
        itertools.chain(
            ((p.name, f"parameter '{p.name}'") for p in model.parameters),
            ((c, f"coordinate '{c}'") for c in coordinates),
            ((f"d_{c}", f"the velocity of coordinate '{c}'") for c in coordinates),
        )
    )
    after = itertools.chain(
        ((e.name, f"force '{e.name}'") for e in model.forces),
        ((m.name, f"measure '{m.name}'") for m in model.measures),  # they head columns beside the coordinates
    )
    check_inertial_symbols([b.label for b in model.bodies], before, after)


def _check_parameters(model: Model) -> dict[str, float]:
    symbols: dict[str, float] = {}
    for p in model.parameters:
        where = f"parameter '{p.name}'"
        check_name(p.name, where)
        if p.name in symbols:
            raise ModelError(where, "is defined twice", p.name, "unique parameter names")
        if not _finite(p.value):
            raise ModelError(f"{where}.value", "is not finite", p.value, "a finite number")
        symbols[p.name] = float(p.value)
    return symbols


def check_source_name(name, where: str) -> None:
    """The name in the file a body or joint was imported from (None: the same as ours): one line of printable
    text, as a model's name, so that a saved document loads again."""
    if name is not None:
        check_text(name, f"{where}.source_name")


def check_text(text, where: str) -> None:
    """A name that is text, not an identifier (a model's, a body's, a point's): one line of printable text."""
    if not isinstance(text, str) or not NAME_TEXT.fullmatch(text):
        raise ModelError(where, "is not one line of printable text", text, TEXT_RULE)


def _check_bodies(model: Model, symbols) -> set[str]:
    labels: set[str] = set()
    for body in model.bodies:
        where = f"body '{body.label}'"
        if not isinstance(body.label, str) or not LABEL.fullmatch(body.label) or body.label in GROUND_ALIASES:
            raise ModelError(
                f"{where}.label",
                "is not a valid body label",
                body.label,
                "ASCII letters, digits or _, starting with a letter or digit, other than '0' and 'ground' "
                "(reserved for the ground)",
            )
        check_source_name(body.source_name, where)
        check_text(body.name, f"{where}.name")
        if body.label in labels:
            raise ModelError(where, "is defined twice", body.label, "unique body labels")
        labels.add(body.label)
        _check_inertia(body, symbols)
        _check_geometry(body, symbols)
        _check_shape(body, symbols)
    _check_geometry(model.ground, symbols)
    return labels


def inertia_about_centre(v: dict[str, float]) -> tuple[float, np.ndarray, np.ndarray]:
    """(m, centre of mass c, inertia tensor about c) from the ten parameters about the body origin, in body
    axes (c = 0 for a massless body)."""
    m = v["m"]
    first = np.array([v["mx"], v["my"], v["mz"]])
    tensor = np.array([[v["Ixx"], v["Ixy"], v["Ixz"]], [v["Ixy"], v["Iyy"], v["Iyz"]], [v["Ixz"], v["Iyz"], v["Izz"]]])
    c = first / m if m > 0 else np.zeros(3)
    return m, c, tensor - m * (c @ c * np.eye(3) - np.outer(c, c))


def _check_inertia(body: Body, symbols) -> None:
    where = f"body '{body.label}'.inertia"
    v = {n: float_value(body.inertia[n], symbols, f"{where}.{n}") for n in INERTIA_NAMES}
    m = v["m"]
    if m < 0:
        written = body.inertia["m"]
        raise ModelError(
            f"{where}.m",
            "is a negative mass",
            f"{written} = {m:.6g}" if isinstance(written, str) else m,
            "a mass >= 0 kg",
        )
    first = [v["mx"], v["my"], v["mz"]]
    if m == 0 and max(map(abs, first)) > 0:
        raise ModelError(where, "has first moments but zero mass", first, "mx = my = mz = 0 when m = 0")
    with np.errstate(all="ignore"):  # huge or tiny values: overflow is detected below, not warned about
        centroidal = inertia_about_centre(v)[2]
        principal = np.linalg.eigvalsh(centroidal) if np.isfinite(centroidal).all() else None
    if principal is None or not np.isfinite(principal).all():
        raise ModelError(
            where,
            "overflows when moved to the centre of mass",
            {n: v[n] for n in INERTIA_NAMES},
            "a centre of mass (mx/m, my/m, mz/m) and moments of inertia well within float range",
        )


def inertia_problem(centroidal: np.ndarray, scale: float) -> str | None:
    """Why no rigid body has this inertia tensor about its centre of mass (a negative principal moment, or one
    larger than the sum of the other two), or None. `scale`: the size its values are compared at."""
    a, b, c = principal = np.linalg.eigvalsh(centroidal)
    # four significant digits and never '-0': a small link's moments are 1e-5 kg m^2 and less, which rounding to
    # a fixed number of decimals showed as [-0.0, 0.0, 0.0]
    moments = f"principal moments {[float(f'{x:.4g}') + 0.0 for x in principal]} kg m^2 about the centre of mass"
    if a < -_INERTIA_TOL * scale:
        why = f"one is negative ({a:.3g}), where a body's moments of inertia are positive or zero"
    elif a + b < c - _INERTIA_TOL * scale:
        why = (
            f"the largest exceeds the sum of the other two by {c - a - b:.3g} kg m^2, which no mass distribution "
            "gives (the triangle inequality)"
        )
    else:
        return None
    if np.abs(principal).max() <= POINT_MASS_MOMENT:
        why += "; all are zero but for rounding: a point mass, its tensor written with noise"
    return f"{moments}: {why}"


def inertia_warnings(model: Model) -> list[str]:
    """The bodies whose inertia no rigid body can have, each named with its principal moments. They are warnings,
    not errors: inverse dynamics, the mass matrix, the regressor and the base parameters are linear in the
    inertias and hold for any values, and forward dynamics needs a mass matrix that is positive definite, a
    property of the whole mechanism at a state, not of one body (a light link with an impossible inertia on a
    heavy arm keeps it so). URDF files carry many (Pinocchio reads them as written); a simulation checks its
    mass matrix at the start (simulation/run.py)."""
    symbols = {p.name: float(p.value) for p in model.parameters}
    warnings = []
    for body in model.bodies:
        values = {n: float_value(body.inertia[n], symbols, f"body '{body.label}'.inertia.{n}") for n in INERTIA_NAMES}
        scale = max(abs(values[n]) for n in ("Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")) or 1e-300
        problem = inertia_problem(inertia_about_centre(values)[2], scale)
        if problem:
            warnings.append(f"body '{body.label}': its inertia is not one a rigid body can have ({problem})")
    return warnings


def _check_geometry(body: Body, symbols) -> None:
    owner = "ground" if body.label == GROUND else f"body '{body.label}'"
    for name, point in body.points.items():
        check_text(name, f"{owner} point name")
        float_vector(point, symbols, f"{owner} point '{name}'")
    for name, frame in body.frames.items():
        check_text(name, f"{owner} frame name")
        check_frame(frame, body, symbols, f"{owner} frame '{name}'")


# Each shape type: its required fields, then its optional ones (docs/file-format.md, body).
SHAPES = {
    "box": (("size",), ("z", "x")),
    "cylinder": (("radius", "length"), ("axis",)),
    "sphere": (("radius",), ()),
    "mesh": (("file",), ("z", "x", "scale")),
}
_COLOR = re.compile(r"#[0-9a-fA-F]{6}")


def _check_shape(body: Body, symbols) -> None:
    shape = body.shape
    if shape is None:
        return
    where = f"body '{body.label}'.shape"
    if not isinstance(shape, dict) or not isinstance(shape.get("type"), str) or shape["type"] not in SHAPES:
        got = shape.get("type") if isinstance(shape, dict) else shape
        raise ModelError(f"{where}.type", "is not a known shape type", got, ", ".join(SHAPES))
    required, optional = SHAPES[shape["type"]]
    allowed = ("type", *required, *optional, "origin", "color")
    for key in shape:
        if key not in allowed:
            raise ModelError(where, f"has the unknown field '{key}'", expected="one of " + ", ".join(allowed))
    for key in required:
        if key not in shape:
            raise ModelError(where, f"lacks '{key}'", expected=f"a {shape['type']} has " + ", ".join(required))
    for key in ("size", "axis", "origin", "scale"):
        if key in shape:
            if not isinstance(shape[key], list) or len(shape[key]) != 3:
                raise ModelError(f"{where}.{key}", "must be a list of three numbers or expressions", shape[key])
            values = float_vector(shape[key], symbols, f"{where}.{key}")
            if key == "size" and values.min() <= 0:
                raise ModelError(f"{where}.size", "has a side that is not positive", shape[key], "sides > 0 m")
            if key == "scale" and not np.abs(values).min() > 0:  # a negative factor mirrors the mesh
                raise ModelError(f"{where}.scale", "has a zero factor", shape[key], "non-zero factors")
            if key == "axis":
                _check_direction_size(values, shape[key], f"{where}.axis")
                if np.linalg.norm(values) == 0:
                    raise ModelError(f"{where}.axis", "is a zero axis", shape[key], "a non-zero direction")
    if "z" in shape or "x" in shape:  # the shape's axes, checked as a frame's are
        check_frame(Frame([0, 0, 0], shape.get("z"), shape.get("x")), body, symbols, where)
    for key in ("radius", "length"):
        if key in shape and float_value(shape[key], symbols, f"{where}.{key}") <= 0:
            raise ModelError(f"{where}.{key}", "is not positive", shape[key], "a length > 0 m")
    if "file" in shape and (not isinstance(shape["file"], str) or not shape["file"]):
        raise ModelError(f"{where}.file", "must be a file name", shape["file"], "a path to a mesh file")
    if "file" in shape and not PATH_TEXT.fullmatch(shape["file"]):
        raise ModelError(f"{where}.file", "is not one line of printable text", shape["file"], TEXT_RULE)
    if "color" in shape and not (isinstance(shape["color"], str) and _COLOR.fullmatch(shape["color"])):
        raise ModelError(f"{where}.color", "is not a colour", shape["color"], '"#rrggbb", e.g. "#3080c0"')


def check_frame(frame: Frame, body: Body, symbols, where: str) -> None:
    if isinstance(frame.origin, str):
        if frame.origin not in body.points:
            raise ModelError(
                f"{where}.origin",
                "names an unknown point",
                frame.origin,
                "one of the body's points: " + (", ".join(body.points) or "(none defined)"),
            )
    else:
        float_vector(frame.origin, symbols, f"{where}.origin")
    # plain floats, not numpy: a frame is three numbers, and numpy's calls on them cost a 100 000-body chain 20 s
    z = _floats(frame.z, symbols, f"{where}.z") if frame.z is not None else (0.0, 0.0, 1.0)
    _check_direction_size(z, frame.z, f"{where}.z")
    if _norm(z) < 1e-12:
        raise ModelError(f"{where}.z", "is a zero axis", frame.z, "a non-zero direction")
    if frame.x is not None:
        x = _floats(frame.x, symbols, f"{where}.x")
        _check_direction_size(x, frame.x, f"{where}.x")
        across = (x[1] * z[2] - x[2] * z[1], x[2] * z[0] - x[0] * z[2], x[0] * z[1] - x[1] * z[0])
        if _norm(across) < 1e-9 * max(_norm(x), 1e-300) * _norm(z):
            raise ModelError(
                f"{where}.x", "is zero or parallel to the z axis", frame.x, "a direction not parallel to z"
            )


def _floats(values, symbols: dict[str, float], where: str) -> list[float]:
    return [float_value(v, symbols, f"{where}[{i}]") for i, v in enumerate(values)]


def _norm(vector) -> float:
    """The Euclidean length as numpy's norm takes it (the root of the sum of squares, inf when that overflows)."""
    return math.sqrt(sum(float(c) * float(c) for c in vector))


def _check_direction_size(vector, written, where: str) -> None:
    if not math.isfinite(_norm(vector)):
        raise ModelError(
            where,
            "is too long to normalise in floating point",
            written,
            "a direction with components below 1e150 (only its direction matters)",
        )


def _check_joints(model: Model, symbols, labels: set[str]) -> None:
    names, coordinates = set(), set()
    for joint in model.joints:
        where = f"joint '{joint.name}'"
        check_name(joint.name, where, symbol=False)
        check_source_name(joint.source_name, where)
        if joint.name in names:
            raise ModelError(where, "has an empty or duplicate name", joint.name, "unique joint names")
        names.add(joint.name)
        if joint.type not in JOINT_MOTIONS:
            raise ModelError(f"{where}.type", "is an unknown joint type", joint.type, ", ".join(JOINT_MOTIONS))
        for side in ("parent", "child"):
            label = getattr(joint, side)
            if label not in labels and label not in GROUND_ALIASES:
                raise ModelError(
                    f"{where}.{side}", "names an unknown body", label, "one of: ground, " + ", ".join(sorted(labels))
                )
        if body_key(joint.parent) == body_key(joint.child):
            raise ModelError(where, "joins a body to itself", joint.parent, "two different bodies")
        for side in ("parent", "child"):
            body = model.body(getattr(joint, side))
            frame = getattr(joint, f"{side}_frame")
            if isinstance(frame, str):
                if frame not in body.frames:
                    raise ModelError(
                        f"{where}.{side}_frame",
                        f"names an unknown frame of body '{body.label}'",
                        frame,
                        "one of: " + (", ".join(body.frames) or "(none defined)"),
                    )
            else:
                check_frame(frame, body, symbols, f"{where}.{side}_frame")
        dof = len(JOINT_MOTIONS[joint.type])
        if len(joint.coordinates) != dof:
            raise ModelError(
                f"{where}.coordinates",
                f"a {joint.type} joint has {dof} coordinate(s)",
                [c.name for c in joint.coordinates],
                f"{dof} coordinate(s)",
            )
        for c in joint.coordinates:
            _check_coordinate(c, coordinates, where)
            _check_stop(c, symbols, f"{where} coordinate '{c.name}'")


def _check_coordinate(c, seen: set[str], where: str) -> None:
    cwhere = f"{where} coordinate '{c.name}'"
    check_name(c.name, cwhere)
    if c.name in seen:
        raise ModelError(cwhere, "is defined twice", c.name, "unique coordinate names in the model")
    seen.add(c.name)
    for key in ("initial", "min", "max"):
        value = getattr(c, key)
        if value is not None and not _finite(value):
            raise ModelError(f"{cwhere}.{key}", "is not finite", value, "a finite number")
    if c.min is not None and c.max is not None and c.min > c.max:
        raise ModelError(cwhere, "has min greater than max", [c.min, c.max], "min <= max")


# A stop's values: which are valid, in words.
_STOP_VALUES = {
    "restitution": (lambda e: 0 <= e <= 1, "from 0 (plastic) to 1 (elastic)"),
    "stiffness": (lambda k: k > 0, "a value > 0"),
    "damping": (lambda c: c >= 0, "a value >= 0"),
    "engagement": (lambda d: d > 0, "a distance > 0 (m or rad)"),
}


def _check_stop(c, symbols, where: str) -> None:
    """A stop acts at the limits given, with a restitution within [0, 1], a positive stiffness and engagement
    distance and a damping >= 0. (Where an impact stop's coordinate starts is checked when a run starts, at the
    assembled pose: a dependent coordinate's initial value is only the assembly's guess.)"""
    if c.stop is None:
        return
    if c.min is None and c.max is None:
        raise ModelError(
            f"{where}.stop", "has no limit to act at", None, "a min and/or a max for the coordinate, where it stops"
        )
    for key, (valid, expected) in _STOP_VALUES.items():
        if hasattr(c.stop, key) and not valid(float_value(getattr(c.stop, key), symbols, f"{where}.stop.{key}")):
            raise ModelError(f"{where}.stop.{key}", "is out of range", getattr(c.stop, key), expected)


def _check_connected(model: Model) -> None:
    tree, _ = _spanning_tree(model)  # linear in the joints: a 20 000-body chain is checked at once
    reached = {GROUND} | {child for _, _, child in tree}
    for body in model.bodies:
        if body.label not in reached:
            raise ModelError(
                f"body '{body.label}'",
                "is not connected to the ground by any chain of joints",
                body.name,
                "a joint path from the ground to every body",
            )


def _check_independent(model: Model) -> None:
    if model.independent_coordinates == "auto":
        return
    _check_coordinate_list(model, "independent_coordinates", model.independent_coordinates)


def _check_trajectories(model: Model, symbols) -> None:
    known = sorted(model.coordinate_names())
    for t in model.trajectories:
        _check_trajectory(t, f"trajectory '{t.name}'", known, "coordinates of the model's joints", symbols)


def _check_trajectory(t, where: str, known: list[str], kind: str, symbols) -> None:
    """A named, positive-duration Fourier path over `known` coordinates whose terms evaluate."""
    check_name(t.name, where, symbol=False)
    if not math.isfinite(t.duration) or t.duration <= 0:
        raise ModelError(f"{where}.duration", "must be a positive time", t.duration, "a duration > 0 s")
    for name, terms in t.coordinates.items():
        if name not in known:
            raise ModelError(f"{where}.coordinates", "names an unknown coordinate", name, f"{kind}: {', '.join(known)}")
        for k, h in enumerate(terms):
            for key in ("amplitude", "frequency", "phase"):
                if getattr(h, key) is not None:
                    float_value(getattr(h, key), symbols, f"{where} coordinate '{name}' term {k}.{key}")


def _check_platform(model: Model, symbols) -> None:
    """A moving body, task coordinates among x, y, z (each once), paths over them with unique names."""
    platform = model.platform
    if platform is None:
        return
    labels = [b.label for b in model.bodies]
    if platform.body not in labels:
        raise ModelError("platform.body", "is not a moving body of the model", platform.body, ", ".join(labels))
    task = list(TASK_COORDINATES) if platform.task is None else platform.task
    if not task or any(n not in TASK_COORDINATES for n in task) or len(set(task)) < len(task):
        raise ModelError("platform.task", "must list platform position components, each once", task, "x, y and/or z")
    check_unique((t.name, f"platform.paths '{t.name}'") for t in platform.paths)
    for t in platform.paths:
        _check_trajectory(t, f"platform.paths '{t.name}'", task, "the platform's task coordinates", symbols)


# Force-element values that must not be negative, and those that must be positive.
_NON_NEGATIVE = ("stiffness", "damping", "length", "viscous", "coulomb")
_POSITIVE = ("velocity_scale", "radius", "engagement")


def _check_forces(model: Model, symbols) -> None:
    """Unique names; known bodies, points and coordinates; values that evaluate (time functions at t = 0);
    no negative stiffness, damping, length or friction; a positive velocity scale; one of formula or table."""
    coordinates = set(model.coordinate_names())
    timed = {**symbols, "t": 0.0}
    for element, where in _named(model.forces, "force"):
        _check_places(model, element, where)
        if isinstance(element, Bushing):
            _check_bushing(model, element, symbols, where)
            continue
        if hasattr(element, "coordinate") and element.coordinate not in coordinates:
            raise ModelError(
                f"{where}.coordinate",
                "names an unknown coordinate",
                element.coordinate,
                "one of: " + ", ".join(sorted(coordinates)),
            )
        for key in (*_NON_NEGATIVE, *_POSITIVE, "rest"):
            if hasattr(element, key):  # a rest position may move with time t (a position servo)
                value = float_value(getattr(element, key), timed if key == "rest" else symbols, f"{where}.{key}")
                if key == "radius" and isinstance(element, Contact) and element.shape is not None:
                    continue  # a box's or mesh's vertices may be sharp: _check_contact_shape
                if (key in _NON_NEGATIVE and value < 0) or (key in _POSITIVE and value <= 0):
                    raise ModelError(
                        f"{where}.{key}",
                        "is out of range",
                        getattr(element, key),
                        "a value > 0" if key in _POSITIVE else "a value >= 0",
                    )
        if isinstance(element, PointForce):
            float_vector(element.force, timed, f"{where}.force")
        if isinstance(element, Actuator):
            _check_time_function(element, timed, where)
        if isinstance(element, Contact):
            _check_contact(element, symbols, where)
        if isinstance(element, ContactPair):
            _check_contact_pair(model, element, symbols, where)
        if isinstance(element, SpeedController):
            _check_speed_controller(element, coordinates, symbols, where)


def _check_speed_controller(element: SpeedController, coordinates: set[str], symbols, where: str) -> None:
    """Known, distinct driven coordinates (at least one); a speed and a gain that evaluate, the gain >= 0."""
    names = list(element.coordinates)
    if not names or len(set(names)) != len(names) or any(name not in coordinates for name in names):
        raise ModelError(f"{where}.coordinates", "must name distinct known coordinates (the driven wheels' spins)",
                         names, "one or more of: " + ", ".join(sorted(coordinates)))  # fmt: skip
    float_value(element.speed, {**symbols, "t": 0.0}, f"{where}.speed")  # a function of time t, or a constant
    if float_value(element.gain, symbols, f"{where}.gain") < 0:
        raise ModelError(f"{where}.gain", "is out of range", element.gain, "a value >= 0 (N s/m)")


# A contact's own ranges (its stiffness and radius are checked with every element's): the exponent from 1, so
# that the force's slope k n δ^(n−1) stays finite at touch-down (docs/contact.md)
_CONTACT_RANGES = {
    "exponent": (1.0, "a value >= 1 (1 linear, 1.5 Hertz's sphere)"),
    "dissipation": (0.0, "a value >= 0, in s/m"),
    "friction": (0.0, "a value >= 0 (the Coulomb coefficient μ)"),
}


def _check_contact_law(element: Contact | ContactPair, symbols, where: str) -> None:
    """The compliant law's exponent, dissipation and friction in range, a positive stiction velocity, and the rigid
    model's restitution from 0 to 1."""
    for key, (least, expected) in _CONTACT_RANGES.items():
        if not float_value(getattr(element, key), symbols, f"{where}.{key}") >= least:
            raise ModelError(f"{where}.{key}", "is out of range", getattr(element, key), expected)
    if not float_value(element.stiction_velocity, symbols, f"{where}.stiction_velocity") > 0:
        problem = "is not positive"
        raise ModelError(f"{where}.stiction_velocity", problem, element.stiction_velocity, "a speed > 0, in m/s")
    if not 0 <= float_value(element.restitution, symbols, f"{where}.restitution") <= 1:
        raise ModelError(f"{where}.restitution", "is out of range", element.restitution, "a value from 0 to 1")


def _check_contact_pair(model: Model, element: ContactPair, symbols, where: str) -> None:
    """The law's ranges, positive radii, two different bodies (a body's own spheres never meet), and a capsule's
    end another point of body2."""
    _check_contact_law(element, symbols, where)
    for k in (1, 2):  # each side as a contact's shape (dynamics/contact_shapes.pair_side)
        keys = ("body", "radius", "shape", "half_extents", "vertices", "rpy")
        side = SimpleNamespace(**{key: getattr(element, f"{key}{k}") for key in keys})
        _check_contact_shape(side, symbols, where, str(k))
        if side.shape in (None, "sphere") and not float_value(side.radius, symbols, f"{where}.radius{k}") > 0:
            raise ModelError(f"{where}.radius{k}", "is out of range", side.radius, "a radius > 0, in m")
    if element.end2 is not None and (element.shape1 or element.shape2 or "sphere") != "sphere":
        raise ModelError(f"{where}.end2", "makes body2 a capsule, which meets spheres only", element.end2,
                         "no end2 when either side is a box or a mesh (shape1, shape2)")  # fmt: skip
    if body_key(element.body1) == body_key(element.body2):
        raise ModelError(f"{where}.body2", "is the same body as body1", element.body2, "two different bodies")
    if element.end2 is not None:
        _check_body_point(model, element.body2, element.end2, f"{where}.body2", f"{where}.end2")
        if element.end2 == element.point2:
            raise ModelError(f"{where}.end2", "is point2 itself", element.end2,
                             "another point of body2 (the capsule's other end), or none for a sphere")  # fmt: skip


def _check_contact(element: Contact, symbols, where: str) -> None:
    """The law's ranges (with a restitution from 0 to 1) and a plane whose normal is a direction."""
    _check_contact_law(element, symbols, where)
    for key in ("plane_origin", "plane_normal"):
        if not isinstance(getattr(element, key), list) or len(getattr(element, key)) != 3:
            raise ModelError(f"{where}.{key}", "must hold three numbers", getattr(element, key), "[x, y, z]")
    _check_against(element, where)
    _check_contact_shape(element, symbols, where)
    float_vector(element.plane_origin, symbols, f"{where}.plane_origin")
    normal = float_vector(element.plane_normal, symbols, f"{where}.plane_normal")
    if not np.linalg.norm(normal) > 0:
        raise ModelError(f"{where}.plane_normal", "is not a direction", normal.tolist(), "3 numbers, not all 0")


def _check_contact_shape(element, symbols, where: str, suffix: str = "") -> None:
    """A known shape with its own fields only: a box's three positive half extents, a mesh's vertices (at least
    four [x, y, z] rows of finite numbers spanning a volume); three angles for rpy; a box's or mesh's radius
    (the vertices' spheres) >= 0. `element` a Contact, or a pair's side whose fields carry `suffix`."""
    shape, on = element.shape or "sphere", f" (the contact on body '{element.body}')"
    if shape not in CONTACT_SHAPES:
        raise ModelError(f"{where}.shape{suffix}", "is not a contact shape" + on, element.shape,
                         "sphere, box or mesh (no value: a sphere)")  # fmt: skip
    needed = {"box": "half_extents", "mesh": "vertices"}.get(shape)
    for key in ("half_extents", "vertices"):
        if key != needed and getattr(element, key) is not None:
            raise ModelError(f"{where}.{key}{suffix}", f"is given for a {shape}{on}", getattr(element, key),
                             f"no {key}, or shape {'box' if key == 'half_extents' else 'mesh'}")  # fmt: skip
    if needed is not None and getattr(element, needed) is None:
        raise ModelError(f"{where}.{needed}{suffix}", f"is missing: a {shape} needs it{on}", None,
                         "[a, b, c] half extents in m" if shape == "box" else "[[x, y, z], ...] rows in m")  # fmt: skip
    if element.rpy is not None:
        float_vector(element.rpy, symbols, f"{where}.rpy{suffix}")
    if shape == "sphere":
        return
    if float_value(element.radius, symbols, f"{where}.radius{suffix}") < 0:
        raise ModelError(f"{where}.radius{suffix}", "is out of range" + on, element.radius,
                         "a value >= 0 (the vertices' spheres, in m; 0: sharp corners)")  # fmt: skip
    if shape == "box":
        half = float_vector(element.half_extents, symbols, f"{where}.half_extents{suffix}")
        if not (half > 0).all():
            raise ModelError(f"{where}.half_extents{suffix}", "is out of range" + on, element.half_extents,
                             "three half extents > 0, in m")  # fmt: skip
        return
    _check_mesh(element.vertices, symbols, f"{where}.vertices{suffix}", on)


def _check_mesh(vertices, symbols, where: str, on: str) -> None:
    rows = np.array([float_vector(row, symbols, f"{where}[{i}]") for i, row in enumerate(vertices)]).reshape(-1, 3)
    if len(rows) < 4 or not np.isfinite(rows).all():
        raise ModelError(where, f"holds {len(rows)} rows, or a value that is not finite{on}", len(rows),
                         "at least four [x, y, z] rows of finite numbers, in m")  # fmt: skip
    from scipy.spatial import ConvexHull, QhullError

    try:
        ConvexHull(rows)
    except (QhullError, ValueError) as error:
        raise ModelError(where, "spans no volume (the points lie in a plane or a line)" + on, f"{len(rows)} rows",
                         "the corners of a convex solid") from error  # fmt: skip


def _check_against(element: Contact, where: str) -> None:
    """A contact against the plane (no value) or the road (_check_road: a still one)."""
    if element.against is None:
        return
    if element.against != "road":
        raise ModelError(f"{where}.against", "is not a ground", element.against, '"road", or no value for the plane')


# Rounding allowance of the bushing's matrix checks, in units of the matrix's largest entry: a matrix typed
# symmetric, or made of expressions that round differently, passes; a real asymmetry or a negative stiffness of
# a millionth of the largest entry does not.
_MATRIX_ULPS = 64 * np.finfo(float).eps


def _check_bushing(model: Model, element: Bushing, symbols, where: str) -> None:
    """Known bodies and named frames on them (two different bodies); stiffness and damping six entries or six
    rows of six, finite, symmetric and positive semi-definite (a negative stiffness has no rest, a negative damping
    makes energy); a finite preload of six; tables in known directions, of finite rows whose deflections increase."""
    for body_field, frame_field in (("body1", "frame1"), ("body2", "frame2")):
        label, frame = getattr(element, body_field), getattr(element, frame_field)
        _check_body_point(model, label, None, f"{where}.{body_field}", "")
        frames = model.body(label).frames
        if not isinstance(frame, str) or frame not in frames:
            raise ModelError(f"{where}.{frame_field}", f"names an unknown frame of body '{body_key(label)}'", frame,
                             "one of: " + (", ".join(frames) or "(none defined: add a frame to the body)"))  # fmt: skip
    if body_key(element.body1) == body_key(element.body2):
        raise ModelError(f"{where}.body2", "is the same body as body1", element.body2, "two different bodies")
    for key in ("stiffness", "damping"):
        _bushing_matrix(getattr(element, key), symbols, f"{where}.{key}")
    if not isinstance(element.preload, list) or len(element.preload) != 6:
        raise ModelError(f"{where}.preload", "must be six values", element.preload, "[Fx, Fy, Fz, Mx, My, Mz]")
    float_vector(element.preload, symbols, f"{where}.preload")
    if not isinstance(element.tables, dict):
        raise ModelError(f"{where}.tables", "must map directions to rows", element.tables, '{"z": [[δ, F], ...]}')
    for direction, rows in element.tables.items():
        _check_bushing_table(direction, rows, f"{where}.tables.{direction}")


def _bushing_matrix(entries, symbols, where: str) -> np.ndarray:
    """A bushing's stiffness or damping as a float 6×6 matrix, after its checks."""
    six = "six diagonal entries or six rows of six"
    rows = [isinstance(r, list) for r in entries] if isinstance(entries, list) else []
    if len(rows) != 6 or (any(rows) and not all(rows)) or any(len(r) != 6 for r in entries if isinstance(r, list)):
        raise ModelError(where, "is not a 6×6 matrix", entries, six)
    if all(rows):
        matrix = np.array([float_vector(r, symbols, f"{where}[{i}]") for i, r in enumerate(entries)])
    else:
        matrix = np.diag(float_vector(entries, symbols, where))
    scale = np.abs(matrix).max()
    asymmetry = np.abs(matrix - matrix.T)
    if asymmetry.max() > _MATRIX_ULPS * scale:
        i, j = np.unravel_index(np.argmax(asymmetry), matrix.shape)
        raise ModelError(f"{where}[{i}][{j}]", f"differs from [{j}][{i}] ({matrix[j, i]:g}): the matrix is not "
                         "symmetric", entries[i][j], "a symmetric matrix (entry [i][j] equal to [j][i])")  # fmt: skip
    lowest = float(np.linalg.eigvalsh((matrix + matrix.T) / 2).min())
    if lowest < -_MATRIX_ULPS * scale:
        raise ModelError(where, f"is not positive semi-definite (an eigenvalue is {lowest:.6g})", entries,
                         "a positive semi-definite matrix: non-negative diagonal entries, couplings no larger than "
                         "the diagonal allows")  # fmt: skip
    return matrix


def _check_bushing_table(direction, rows, where: str) -> None:
    if direction not in BUSHING_DIRECTIONS:
        raise ModelError(where, "is not a bushing direction", direction, ", ".join(BUSHING_DIRECTIONS))
    pairs = isinstance(rows, list) and all(isinstance(row, list | tuple) and len(row) == 2 for row in rows)
    if not pairs or len(rows) < 2 or not all(_finite(v) for row in rows for v in row):
        problem = "must hold at least two finite [deflection, force] rows"
        raise ModelError(where, problem, rows, "e.g. [[-0.01, -500], [0.01, 500]]")
    deflections = [row[0] for row in rows]
    if any(b <= a for a, b in zip(deflections, deflections[1:], strict=False)):
        raise ModelError(where, "has deflections that do not increase", deflections, "strictly increasing deflections")


def _check_road(model: Model, symbols) -> None:
    """A profile of finite [s, z] rows with increasing distances, and a speed that evaluates."""
    road = model.road
    if road is None:
        return
    rolling = float_value(road.speed, symbols, "road.speed") != 0
    for element in model.forces:
        if rolling and isinstance(element, Contact) and element.against == "road":
            raise ModelError(f"force '{element.name}'.against", "is a rolling road (road.speed is not 0)", "road",
                             "a contact against a still road, or against its plane")  # fmt: skip
    if road.surface is not None or road.formula is not None:
        _check_surface(road)
        check_formula(road.formula, symbols)
        return
    distances = [row[0] for row in road.profile]
    if not road.profile or not all(_finite(v) for row in road.profile for v in row):
        raise ModelError("road.profile", "must hold finite [s, z] rows", road.profile, "at least one row, in m")
    if any(b <= a for a, b in zip(distances, distances[1:], strict=False)):
        raise ModelError("road.profile", "has distances that do not increase", distances, "strictly increasing s")
    float_value(road.speed, symbols, "road.speed")
    if road.interpolation not in ROAD_INTERPOLATIONS:
        raise ModelError(
            "road.interpolation", "is not a way to join the rows", road.interpolation, " or ".join(ROAD_INTERPOLATIONS)
        )


def _check_surface(road: Road) -> None:
    """A surface grid that reads, once the model's folder has made its path absolute."""
    if road.surface is not None and Path(road.surface).is_absolute():
        read_grid(road.surface, road.surface_sha256)


def _named(elements: list, kind: str) -> Iterator[tuple[object, str]]:
    """Each force element or measure with the words naming it, once its name is checked valid and unique."""
    seen: set[str] = set()
    for element in elements:
        where = f"{kind} '{element.name}'"
        check_name(element.name, where, symbol=False)
        if element.name in seen:
            raise ModelError(where, "is defined twice", element.name, f"unique {kind} names")
        seen.add(element.name)
        yield element, where


def _check_places(model: Model, element, where: str) -> None:
    """Every (body, point) pair of a force element or measure names a body and one of its points."""
    for body_field, point_field in PLACES:
        if hasattr(element, point_field):
            body, point = getattr(element, body_field), getattr(element, point_field)
            _check_body_point(model, body, point, f"{where}.{body_field}", f"{where}.{point_field}")


def _check_measures(model: Model, symbols) -> None:
    """Unique names (they head columns); known bodies, points and force elements; axes that are not zero; a
    positive tyre radius; a suspension's damper a spring-damper."""
    elements = {e.name: e for e in model.forces}
    for measure, where in _named(model.measures, "measure"):
        _check_places(model, measure, where)
        for body_field, axis_field in (("body1", "axis1"), ("body2", "axis2"), ("wheel", "spin_axis")):
            if hasattr(measure, axis_field):
                _check_body_point(model, getattr(measure, body_field), None, f"{where}.{body_field}", "")
                axis = float_vector(getattr(measure, axis_field), symbols, f"{where}.{axis_field}")
                if len(axis) != 3 or not np.linalg.norm(axis) > 0:
                    raise ModelError(
                        f"{where}.{axis_field}", "is not a direction", axis.tolist(), "3 numbers, not all 0"
                    )
        element = getattr(measure, "element", None) or getattr(measure, "damper", None)
        if element is not None and element not in elements:
            field_name = "element" if hasattr(measure, "element") else "damper"
            raise ModelError(
                f"{where}.{field_name}", "names an unknown force element", element, ", ".join(elements) or "(none)"
            )
        if isinstance(measure, SuspensionMeasure):
            if measure.damper is not None and not isinstance(elements[measure.damper], SpringDamper):
                raise ModelError(f"{where}.damper", "is not a spring-damper", measure.damper, "a spring_damper's name")
            if not float_value(measure.radius, symbols, f"{where}.radius") > 0:
                raise ModelError(f"{where}.radius", "is not positive", measure.radius, "the tyre radius in m, > 0")


def _check_body_point(model: Model, label: str, point: str | None, body_where: str, point_where: str) -> None:
    """The body exists and, unless `point` is None, has that point."""
    try:
        body = model.body(label)
    except KeyError:
        raise ModelError(
            body_where, "names an unknown body", label, "one of: ground, " + ", ".join(b.label for b in model.bodies)
        ) from None
    if point is not None and point not in body.points:
        raise ModelError(
            point_where,
            f"names an unknown point of body '{body.label}'",
            point,
            "one of: " + (", ".join(body.points) or "(none defined)"),
        )


def _check_time_function(element: Actuator, timed, where: str) -> None:
    if (element.formula is None) == (element.table is None):
        raise ModelError(
            where,
            "needs exactly one of 'formula' and 'table'",
            expected='"formula": an expression in t, or "table": [[t, value], ...]',
        )
    if element.formula is not None:
        float_value(element.formula, timed, f"{where}.formula")
        return
    times = [row[0] for row in element.table]
    if not element.table or not all(_finite(v) for row in element.table for v in row):
        raise ModelError(f"{where}.table", "must hold finite [t, value] rows", element.table, "at least one row")
    if any(b <= a for a, b in zip(times, times[1:], strict=False)):
        raise ModelError(f"{where}.table", "has times that do not increase", times, "strictly increasing times")


def _check_couplings(model: Model, symbols) -> None:
    """Unique names, apart from the joints' too (both name constraint rows); a follower and a leader among the
    coordinates of joints that slide or turn about an axis (a ball joint's rotation parameters are no angle of a
    gear); either ratio and offset or a polynomial, whose values evaluate."""
    axial, known = sorted(model.axial_coordinates()), set(model.coordinate_names())
    joints = {j.name for j in model.joints}
    for coupling, where in _named(model.couplings, "coupling"):
        if coupling.name in joints:
            raise ModelError(where, "has the name of a joint", coupling.name, "a name no joint has")
        for key in ("follower", "leader"):
            name = getattr(coupling, key)
            if (key == "follower" or name is not None) and name not in axial:
                what = "a ball joint's rotation parameter" if name in known else "an unknown coordinate"
                raise ModelError(f"{where}.{key}", f"names {what}", name, "one of: " + ", ".join(axial))
        if coupling.leader == coupling.follower:
            raise ModelError(f"{where}.leader", "is the follower itself", coupling.leader, "another coordinate")
        if coupling.polynomial is not None and (coupling.ratio is not None or coupling.offset is not None):
            raise ModelError(where, "gives both a polynomial and a ratio or offset", expected="one of the two forms")
        most = 1 if coupling.leader is None else 9
        if coupling.polynomial is not None and not 1 <= len(coupling.polynomial) <= most:
            raise ModelError(
                f"{where}.polynomial",
                "has the wrong number of coefficients",
                coupling.polynomial,
                "[c0] without a leader, else [c0, c1, ...] up to the 8th power",
            )
        if coupling.leader is None and coupling.ratio is not None:
            raise ModelError(f"{where}.ratio", "is given without a leader", coupling.ratio, "a leader coordinate")
        for k, value in enumerate(coupling.coefficients()):
            field = f"polynomial[{k}]" if coupling.polynomial is not None else ("offset", "ratio")[k]
            float_value(value, symbols, f"{where}.{field}")


def _check_coordinate_list(model: Model, field: str, names: list[str]) -> None:
    """Each name a coordinate of the model's joints, none twice."""
    known = set(model.coordinate_names())
    seen: set[str] = set()
    for name in names:
        if name not in known:
            raise ModelError(
                field,
                "names an unknown coordinate",
                name,
                "coordinates of the model's joints: " + ", ".join(sorted(known)),
            )
        if name in seen:
            raise ModelError(field, "lists a coordinate twice", name, "each name once")
        seen.add(name)


def check_dynamics(model: Model) -> None:
    """Refuse, naming them, the bodies a run's mass matrix would have no inertia for: a joint that moves a
    subtree whose every body has no mass and no inertia (an imported robot's massless finger links) leaves
    its coordinates without inertia, and forward dynamics gives NaN for every acceleration. Subtrees a
    loop closes on, and coordinates a coupling drives, take their motion from elsewhere: they pass. Kinematics
    needs no masses: this is checked before a simulation, not at load."""
    symbols = _check_parameters(model)
    inert = {
        b.label
        for b in model.bodies
        if not any(float_value(b.inertia[n], symbols, f"body '{b.label}'.inertia.{n}") for n in INERTIA_NAMES)
    }
    driven = {c.follower for c in model.couplings}
    tree, closing = _spanning_tree(model)
    below: dict[str, list[str]] = {}
    for parent, _, child in tree:
        below.setdefault(parent, []).append(child)
    empty, free_of_loops = {}, {}  # per body, of its subtree: no mass nor inertia; no loop closing on it
    for _, _, body in reversed(tree):  # the leaves first
        empty[body] = body in inert and all(empty[c] for c in below.get(body, []))
        free_of_loops[body] = body not in closing and all(free_of_loops[c] for c in below.get(body, []))
    for _, joint, child in tree:  # from the ground out: the whole subtree is named at its first joint
        moving = [c.name for c in joint.coordinates if c.name not in driven]
        if moving and empty[child] and free_of_loops[child]:
            bodies = ", ".join(f"'{b}'" for b in _subtree(child, below))
            raise ModelError(
                f"joint '{joint.name}'",
                f"moves only bodies without mass or inertia ({bodies}), which leaves {', '.join(moving)} without "
                "inertia: forward dynamics would give NaN",
                expected="a mass or an inertia on one of these bodies, or the joint fixed (or its coordinate "
                "coupled to another)",
            )


def _spanning_tree(model: Model) -> tuple[list[tuple[str, Joint, str]], set[str]]:
    """(parent body, joint, the body it carries) from the ground outwards, breadth first; and the bodies a joint
    outside that tree (a loop's) touches."""
    around: dict[str, list[Joint]] = {}
    for joint in model.joints:
        for side in (joint.parent, joint.child):
            around.setdefault(body_key(side), []).append(joint)
    reached, tree, used, queue = {GROUND}, [], set(), [GROUND]
    for body in queue:  # grows as bodies are reached
        for joint in around.get(body, []):
            other = body_key(joint.child) if body_key(joint.parent) == body else body_key(joint.parent)
            if id(joint) in used or other in reached:
                continue
            used.add(id(joint))
            reached.add(other)
            tree.append((body, joint, other))
            queue.append(other)
    closing = {body_key(side) for j in model.joints if id(j) not in used for side in (j.parent, j.child)}
    return tree, closing


def _subtree(root: str, below: dict[str, list[str]]) -> list[str]:
    found, stack = [], [root]
    while stack:
        found.append(stack.pop())
        stack.extend(reversed(below.get(found[-1], [])))
    return found
