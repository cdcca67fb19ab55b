"""Numbers written with units in a model file: read with pint, held in SI, saved back as written.

A value may be written `"100 mm"` or `{"value": 100, "unit": "mm"}` (a vector `{"value": [100, 0, 20], "unit":
"mm"}`; a parameter keeps its `"unit"` field). Loading converts it to SI once: the document holds a `Quantity`,
a float whose value is SI and which remembers the number and unit written, so every algorithm sees SI while a
save writes back what the user wrote. Conversion factors are taken from pint as decimals and applied in decimal
arithmetic, so `319.6 mm` is the float nearest 0.3196 m, the same float a file written in metres holds.

`check_dimensions` checks a whole model: each unit against the dimension its place needs (a length for a point,
an angle for a revolute joint's coordinate, N/m or N·m/rad for a spring on a coordinate, ...), and each
expression's dimension, inferred from the units of the parameters it uses, against the same. Radians count as
dimensionless there (N·m and N·m/rad are both a torsional stiffness), except that an angle, or an angular
velocity, must be written in an angle's unit: `2 Hz` is not taken for 2 rad/s.

pint is imported the first time a unit is met: files without units never pay for it.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Context, Decimal
from functools import cache, lru_cache

from .document import FORCE_ELEMENTS, GROUND, JOINT_MOTIONS, Body, Frame, Harmonic, Model, Trajectory
from .errors import ModelError
from .expressions import parse

_DECIMAL = Context(prec=60)
UNIT_TEXT = re.compile(r"[^\W\d_][\w ·*/^().°²³%-]{0,39}|°")
# a number, then a unit starting with a letter, ° or %: read so only when it is not Python (2j, 1e3*x are)
NUMBER_WITH_UNIT = re.compile(r"\s*((?>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))\s*([^\W\d_].*?|[°%].*?)\s*")
EXAMPLES = "m, mm, in, deg, rad, kg, g, s, N, kN, N*m, N/mm, N*s/m, kg*m^2, rad/s, deg/s, rpm, m/s^2"
_SUGGESTIONS = (
    *("m", "mm", "cm", "km", "um", "in", "ft", "meter", "millimeter", "centimeter", "inch", "rad", "deg", "degree"),
    *("radian", "arcmin", "turn", "kg", "g", "gram", "kilogram", "lb", "s", "ms", "second", "minute", "N", "kN"),
    *("newton", "lbf", "N*m", "N*mm", "N/m", "N/mm", "N*s/m", "kg*m^2", "kg*mm^2", "g*cm^2", "rad/s", "deg/s"),
    *("rpm", "m/s", "mm/s", "km/h", "m/s^2", "g0"),
)


# ---------------------------------------------------------------- units and their conversion to SI


@cache
def _registry():
    import pint  # noqa: PLC0415 (deferred: about a second, paid only by files that carry units)

    return pint.UnitRegistry()


@dataclass(frozen=True)
class Conversion:
    """What a unit is in SI: `factor` (one unit in SI base units, a decimal) and its base units with their
    exponents (`meter`, `kilogram`, `second`, `radian`, ...)."""

    factor: Decimal
    base: tuple[tuple[str, float], ...]

    def to_si(self, number: int | float) -> float:
        return float(_DECIMAL.multiply(_decimal(number), self.factor))


def _decimal(number: int | float) -> Decimal:
    """The decimal a number is written as (0.3196 is 3196/10000, not the float's binary value)."""
    return Decimal(number) if isinstance(number, int) else Decimal(repr(float(number)))


def _si(**base: float) -> Conversion:
    return Conversion(Decimal(1), tuple(sorted((n, float(e)) for n, e in base.items())))


# SI units as files label them, known without importing pint (a second at start-up); tests/test_units.py checks
# them against pint
SI_UNITS = {
    "m": _si(meter=1),
    "kg": _si(kilogram=1),
    "s": _si(second=1),
    "rad": _si(radian=1),
    "N": _si(kilogram=1, meter=1, second=-2),
    "N m": _si(kilogram=1, meter=2, second=-2),
    "m/s": _si(meter=1, second=-1),
    "m/s^2": _si(meter=1, second=-2),
    "rad/s": _si(radian=1, second=-1),
    "N/m": _si(kilogram=1, second=-2),
    "N s/m": _si(kilogram=1, second=-1),
    "N m s/rad": _si(kilogram=1, meter=2, second=-1, radian=-1),
    "kg m^2": _si(kilogram=1, meter=2),
    "kg/m^3": _si(kilogram=1, meter=-3),
}


def conversion(unit: str, where: str = "unit") -> Conversion:
    """The unit's conversion to SI, or a ModelError naming `where`, the text and units that would do."""
    if isinstance(unit, str) and unit.strip() in SI_UNITS:
        return SI_UNITS[unit.strip()]
    try:
        return _conversion(unit)
    except ModelError as exc:
        raise ModelError(where, exc.problem, exc.value, exc.expected) from None


@lru_cache(maxsize=1024)
def _conversion(unit: str) -> Conversion:
    text = unit.strip() if isinstance(unit, str) else unit
    if not isinstance(text, str) or not UNIT_TEXT.fullmatch(text):
        raise ModelError("unit", "is not a unit's name", unit, f"a unit such as {EXAMPLES}")
    registry = _registry()
    try:
        parsed = registry.Unit(text)
        base = registry.Quantity(1, parsed).to_base_units().units
        offset = registry.Quantity(0, parsed).to_base_units().magnitude != 0
    except Exception:  # pint's parser raises many kinds (undefined, syntax, arithmetic); each means "unknown"
        import difflib  # for a message only

        close = difflib.get_close_matches(text, _SUGGESTIONS, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise ModelError("unit", f"is not a unit pint knows{hint}", text, f"a unit such as {EXAMPLES}") from None
    if offset:
        raise ModelError("unit", "is a unit with an offset (a temperature scale)", text, f"a unit such as {EXAMPLES}")
    factor = Decimal(1)
    for name, exponent in parsed._units.items():
        one = Decimal(repr(float(registry.Quantity(1, name).to_base_units().magnitude)))
        if float(exponent).is_integer():
            factor = _DECIMAL.multiply(factor, _DECIMAL.power(one, int(exponent)))
        else:
            factor = _DECIMAL.multiply(factor, Decimal(repr(float(one) ** float(exponent))))
    powers = tuple(sorted((str(n), float(e)) for n, e in base._units.items()))
    if not (factor.is_finite() and factor != 0 and 1e-30 < abs(factor) < 1e30) or any(abs(e) > 6 for _, e in powers):
        raise ModelError("unit", "is beyond any mechanism's scale", text, f"a unit such as {EXAMPLES}")
    return Conversion(factor, powers)


class Quantity(float):
    """A number written with a unit. Its float value is the SI value; `number` and `unit` are what was
    written and what a save writes back; `form` is how: "text" ("100 mm") or "object" ({"value": 100, "unit":
    "mm"}). Arithmetic on it gives plain floats."""

    number: int | float
    unit: str
    form: str

    def __new__(cls, number: int | float, unit: str, form: str = "text", where: str = "unit") -> Quantity:
        return _make(conversion(unit, where).to_si(number), number, unit.strip(), form)

    @classmethod
    def from_si(cls, value: float, unit: str, form: str = "text", where: str = "unit") -> Quantity:
        """The SI `value` written in `unit` with the fewest digits that give `value` back exactly."""
        convert = conversion(unit, where)
        exact = _DECIMAL.divide(_decimal(value), convert.factor)
        number: int | float = float(exact)
        for digits in range(1, 18):
            candidate = float(format(exact, f".{digits}g"))
            if convert.to_si(candidate) == value:
                number = candidate
                break
        if number.is_integer() and abs(number) < 2**53:
            number = int(number)
        return _make(convert.to_si(number), number, unit.strip(), form)

    def text(self) -> str:
        """'100 mm': how the window shows it and the short form of the file."""
        return f"{json.dumps(self.number)} {self.unit}"

    def written(self) -> str | dict:
        """What a file holds: the text, or the object."""
        return self.text() if self.form == "text" else {"value": self.number, "unit": self.unit}

    def __reduce__(self):  # copies and pickles keep what was written, without converting again
        return _make, (float(self), self.number, self.unit, self.form)


def _make(si: float, number: int | float, unit: str, form: str) -> Quantity:
    value = float.__new__(Quantity, si)
    value.number, value.unit, value.form = number, unit, form
    return value


def text(value: object) -> str:
    """A document value as the window shows it: '100 mm' for a number written with its unit."""
    return value.text() if isinstance(value, Quantity) else str(value)


def written(value: object) -> object:
    """A document value as a file holds it: a Quantity as written, a vector of numbers in one unit's object
    form as one object, anything else as it is."""
    if isinstance(value, Quantity):
        return value.written()
    if isinstance(value, list) and len(value) == 3 and all(_object_form(v, value[0]) for v in value):
        return {"value": [v.number for v in value], "unit": value[0].unit}
    return value


def _object_form(value: object, first: object) -> bool:
    return isinstance(value, Quantity) and value.form == "object" and value.unit == first.unit


def read(data: object, where: str) -> Quantity | None:
    """A number written with a unit — `"100 mm"` or `{"value": 100, "unit": "mm"}` — in SI; None when
    `data` is neither (a plain number or an expression)."""
    if isinstance(data, str):
        match = NUMBER_WITH_UNIT.fullmatch(data)
        if not match or _is_python(data):
            return None
        number = float(match[1])
        if number.is_integer() and not any(c in match[1] for c in ".eE"):
            number = int(match[1])
        return _finite(Quantity(number, match[2], "text", where), data, where)
    if isinstance(data, dict) and "unit" in data:
        number, unit = _object_parts(data, where)
        if isinstance(number, list):
            raise ModelError(where, "holds a list of numbers where one number is expected", data, "a number")
        return _finite(Quantity(number, unit, "object", where), data, where)
    return None


def _is_python(text: str) -> bool:
    """Whether Python reads the text at all ("2j", "2and 3" are; "100 mm", "30°" are not): such a text is an
    expression, right or wrong, and is judged as one."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


def read_vector(data: object, where: str) -> list[Quantity] | None:
    """`{"value": [x, y, z], "unit": "mm"}` as three Quantities; None for anything else."""
    if not (isinstance(data, dict) and isinstance(data.get("value"), list)):
        return None
    numbers, unit = _object_parts(data, where)
    if len(numbers) != 3:
        raise ModelError(where, "must hold three numbers", data, '{"value": [x, y, z], "unit": "mm"}')
    return [_finite(Quantity(n, unit, "object", f"{where}.unit"), n, f"{where}[{i}]") for i, n in enumerate(numbers)]


def _object_parts(data: dict, where: str) -> tuple[object, str]:
    unknown = [k for k in data if k not in ("value", "unit")]
    if unknown or "value" not in data:
        raise ModelError(where, "a number with a unit has 'value' and 'unit' only", data, '{"value": 1, "unit": "mm"}')
    numbers, unit = data["value"], data["unit"]
    if not isinstance(unit, str):
        raise ModelError(f"{where}.unit", "must be a string", unit, f"a unit such as {EXAMPLES}")
    for n in numbers if isinstance(numbers, list) else [numbers]:
        if isinstance(n, bool) or not isinstance(n, int | float):
            raise ModelError(f"{where}.value", "must be a number (an expression takes no unit)", n, "e.g. 100")
    return numbers, unit


def _finite(value: Quantity, data: object, where: str) -> Quantity:
    if value != value or abs(value) == float("inf"):
        raise ModelError(where, "is not a finite number in SI units", data, "a finite value")
    return value


def si_unit(unit: str | None) -> str:
    """The SI unit of a unit's dimension ('mm' -> 'm', 'deg' -> 'rad', 'kg/m^3' -> 'kg m^-3'); '' for none."""
    if not unit:
        return ""
    base = conversion(unit).base
    radians = dict(base).get("radian", 0)
    same = (d.si for d in DIMENSIONS if _powers(d.base) == _powers(base) and radians == (1 if d.angle else 0))
    return next(same, _format(base))


# ---------------------------------------------------------------- dimensions


@dataclass(frozen=True)
class Dimension:
    """What a place in the format holds: `name` for messages, `si` its SI unit, `examples` of units,
    `base` its SI base units and exponents (radian left out; None: no unit at all, a direction), and `angle`:
    the unit must name an angle."""

    name: str
    si: str
    examples: str
    base: tuple[tuple[str, float], ...] | None
    angle: bool = False


def _dim(name: str, si: str, examples: str, angle: bool = False, **base: float) -> Dimension:
    return Dimension(name, si, examples, tuple(sorted(base.items())), angle)


LENGTH = _dim("a length", "m", "m, mm, cm, in", meter=1)
ANGLE = _dim("an angle", "rad", "rad, deg, arcmin, turn", True)
MASS = _dim("a mass", "kg", "kg, g, lb", kilogram=1)
MASS_LENGTH = _dim("a first mass moment (mass times length)", "kg m", "kg*m, kg*mm, g*mm", kilogram=1, meter=1)
INERTIA = _dim("a moment of inertia", "kg m^2", "kg*m^2, kg*mm^2, g*cm^2", kilogram=1, meter=2)
TIME = _dim("a time", "s", "s, ms, min", second=1)
ACCELERATION = _dim("an acceleration", "m/s^2", "m/s^2, mm/s^2, g0", meter=1, second=-2)
VELOCITY = _dim("a velocity", "m/s", "m/s, mm/s, km/h", meter=1, second=-1)
ANGULAR_VELOCITY = _dim("an angular velocity", "rad/s", "rad/s, deg/s, rpm", True, second=-1)
FORCE = _dim("a force", "N", "N, kN, lbf", kilogram=1, meter=1, second=-2)
TORQUE = _dim("a torque", "N m", "N*m, N*mm, kN*m", kilogram=1, meter=2, second=-2)
STIFFNESS = _dim("a stiffness", "N/m", "N/m, N/mm, kN/m", kilogram=1, second=-2)
ROTARY_STIFFNESS = _dim("a rotational stiffness", "N m/rad", "N*m/rad, N*mm/deg", kilogram=1, meter=2, second=-2)
DAMPING = _dim("a damping coefficient", "N s/m", "N*s/m, N*s/mm", kilogram=1, second=-1)
ROTARY_DAMPING = _dim("a rotational damping coefficient", "N m s/rad", "N*m*s/rad", kilogram=1, meter=2, second=-1)
DIRECTION = Dimension("a direction", "", "no unit: only the direction counts", None)
NUMBER = Dimension("a plain number", "", "no unit: a ratio or an exponent", None)
SLOWNESS = _dim("a dissipation per speed", "s/m", "s/m", meter=-1, second=1)
# the dimensions messages name (a rotational stiffness is described as a torque, which it is in SI)
DIMENSIONS = (LENGTH, ANGLE, MASS, MASS_LENGTH, INERTIA, TIME, ACCELERATION, VELOCITY, ANGULAR_VELOCITY, FORCE, TORQUE)
DIMENSIONS += (STIFFNESS, DAMPING)
INERTIA_DIMENSIONS = {"m": MASS, "mx": MASS_LENGTH, "my": MASS_LENGTH, "mz": MASS_LENGTH} | dict.fromkeys(
    ("Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"), INERTIA
)
# What a coordinate's force elements hold, for a rotation ("R") and a translation ("T")
_OF_MOTION = {
    "value": {"R": ANGLE, "T": LENGTH},
    "rate": {"R": ANGULAR_VELOCITY, "T": VELOCITY},
    "stiffness": {"R": ROTARY_STIFFNESS, "T": STIFFNESS},
    "damping": {"R": ROTARY_DAMPING, "T": DAMPING},
    "effort": {"R": TORQUE, "T": FORCE},
}


# A bushing's matrices couple its translations (T) and rotations (R): entry (i, j) is direction i's force or
# moment per direction j's length or angle (per rate for the damping). Couplings of a force and an angle, or a
# moment and a length, have a force's base units (N/rad, N m/m), a damping's the momentum's (N s/rad, N m s/m).
_COUPLED = {
    "stiffness": _dim("a bushing's force–rotation coupling", "N/rad", "N/rad, N*m/m", kilogram=1, meter=1, second=-2),
    "damping": _dim("a bushing's damping coupling", "N s/rad", "N*s/rad, N*m*s/m", kilogram=1, meter=1, second=-1),
}
_BUSHING_MOTIONS = ("T",) * 3 + ("R",) * 3


def _bushing_matrix_dimension(quantity: str, i: int, j: int) -> Dimension:
    row, column = _BUSHING_MOTIONS[i], _BUSHING_MOTIONS[j]
    return _OF_MOTION[quantity][row] if row == column else _COUPLED[quantity]


def _bushing(element, where: str):
    """A bushing's values with their dimensions; misshapen fields are left to validation, which names them."""
    for quantity in ("stiffness", "damping"):
        matrix = getattr(element, quantity)
        for i, row in enumerate(matrix[:6] if isinstance(matrix, list) else []):
            if isinstance(row, list):
                for j, value in enumerate(row[:6]):
                    yield f"{where}.{quantity}[{i}][{j}]", value, _bushing_matrix_dimension(quantity, i, j)
            else:
                yield f"{where}.{quantity}[{i}]", row, _bushing_matrix_dimension(quantity, i, i)
    preload = element.preload if isinstance(element.preload, list) else []
    for i, value in enumerate(preload[:6]):
        yield f"{where}.preload[{i}]", value, _OF_MOTION["effort"][_BUSHING_MOTIONS[i]]
    for direction, rows in element.tables.items() if isinstance(element.tables, dict) else ():
        motion = "R" if str(direction).startswith("r") else "T"
        for i, row in enumerate(rows if isinstance(rows, list) else []):
            if isinstance(row, list) and len(row) == 2:
                yield f"{where}.tables.{direction}[{i}][0]", row[0], _OF_MOTION["value"][motion]
                yield f"{where}.tables.{direction}[{i}][1]", row[1], _OF_MOTION["effort"][motion]


def dimension_of(si: str) -> Dimension | None:
    """The dimension whose SI unit is `si` ('m' -> LENGTH); None for no unit or one no place names."""
    return next((d for d in DIMENSIONS if si and d.si == si), None)


def of_motion(quantity: str, kind: str) -> Dimension:
    """What a coordinate's `quantity` ("value", "rate", "effort", ...) is for a joint motion `kind` ("R" turns,
    "T" shifts): an angle or a length, an angular velocity or a velocity, a torque or a force, ..."""
    return _OF_MOTION[quantity][kind]


# the compliant contact law's fields, a ground contact's and a pair's alike (force_laws/contact_law.py)
_CONTACT_LAW = {
    "exponent": NUMBER,
    "dissipation": SLOWNESS,
    "friction": NUMBER,
    "stiction_velocity": VELOCITY,
    "restitution": NUMBER,
}
_ELEMENT_FIELDS = {
    "spring_damper": {"stiffness": STIFFNESS, "damping": DAMPING, "length": LENGTH},
    "joint_spring_damper": {"stiffness": "stiffness", "damping": "damping", "rest": "value"},
    "joint_friction": {"viscous": "damping", "coulomb": "effort", "velocity_scale": "rate"},
    "actuator": {"formula": "effort"},
    "suspension": {"radius": LENGTH},
    "contact": {"radius": LENGTH, **_CONTACT_LAW},
    "contact_pair": {"radius1": LENGTH, "radius2": LENGTH, **_CONTACT_LAW},
}


def contact_stiffness(exponent: float) -> Dimension:
    """What a contact's stiffness k is for the exponent n of its force k δ^n: N/m^n."""
    return _dim(f"a contact stiffness for exponent {exponent:g}", f"N/m^{exponent:g}", f"N/m^{exponent:g}",
                kilogram=1, meter=1 - exponent, second=-2)  # fmt: skip


def _contact(element, where: str):
    """A contact's stiffness, in N/m^n when its exponent n is a number (unchecked when n is an expression), and
    its plane."""
    exponent = element.exponent
    numeric = isinstance(exponent, int | float) and not isinstance(exponent, bool)
    yield f"{where}.stiffness", element.stiffness, contact_stiffness(float(exponent)) if numeric else None
    if element.type == "contact_pair":  # two spheres, no plane
        return
    yield from _vector(f"{where}.plane_origin", element.plane_origin, LENGTH)
    yield from _vector(f"{where}.plane_normal", element.plane_normal, DIRECTION)


def _powers(base) -> dict[str, float]:
    """Exponents of the base units other than the radian (dimensionless in SI), zeros dropped."""
    return {n: round(e, 9) for n, e in base if n != "radian" and round(e, 9) != 0}


def _format(base) -> str:
    symbols = {"meter": "m", "kilogram": "kg", "second": "s", "radian": "rad"}
    parts = [symbols.get(n, n) + ("" if e == 1 else f"^{e:g}") for n, e in base if e != 0]
    return " ".join(parts) or "1"


def describe(base) -> str:
    """'a length', or the base units of a dimension no place uses ('kg m^3')."""
    known = next((d.name for d in DIMENSIONS if _powers(d.base) == _powers(base)), None)
    return known or f"of dimension {_format(tuple(base))}"


def check_unit(value: Quantity, dimension: Dimension | None, where: str) -> None:
    """A number's unit against what its place needs."""
    if dimension is None:
        return
    if dimension.base is None:
        raise ModelError(where, f"is {dimension.name}, which takes no unit", value.text(), "plain numbers")
    base = conversion(value.unit, where).base
    if _powers(base) != _powers(dimension.base):
        raise ModelError(
            where, f"is {describe(base)}, where {dimension.name} is expected", value.text(), dimension.examples
        )
    if dimension.angle and dict(base).get("radian", 0) != 1:
        problem = f"needs an angle in its unit to be {dimension.name} (Hz or 1/s are not taken for rad/s)"
        raise ModelError(where, problem, value.text(), dimension.examples)


# ---------------------------------------------------------------- expressions


FREE = "free"  # numbers, or a product with a number: may carry any unit (SI implied), so never checked


def expression_dimension(value: object, parameters: Mapping[str, tuple | None], where: str):
    """The dimension an expression has from the units of the parameters it uses: a base-unit tuple, FREE
    (a number, or a product with one: the number may carry the place's SI unit) or None (a parameter without
    a unit decides it). ModelError for a sum of different dimensions or a function of a dimensioned
    argument. `L + 0.05`, `sqrt(L1**2 + L2**2)`, `m1*L1` are checked; `2*L` is not."""
    if not isinstance(value, str):
        return FREE
    try:
        tree = parse(value)
    except ModelError as exc:
        raise ModelError(where, exc.problem, exc.value, exc.expected) from None
    return _infer(tree, value, parameters, where)


def _infer(node, text, parameters, where):
    if isinstance(node, ast.Constant):
        return FREE
    if isinstance(node, ast.Name):
        return FREE if node.id == "pi" else parameters.get(node.id)
    if isinstance(node, ast.UnaryOp):
        return _infer(node.operand, text, parameters, where)
    if isinstance(node, ast.Call):
        args = [_infer(a, text, parameters, where) for a in node.args]
        return _function(node.func.id, args, text, where)
    a, b = (_infer(n, text, parameters, where) for n in (node.left, node.right))
    if isinstance(node.op, ast.Add | ast.Sub):
        return _sum(a, b, text, where)
    if isinstance(node.op, ast.Pow):
        return _power(a, b, node.right, text, where)
    return _product(a, b, -1 if isinstance(node.op, ast.Div) else 1)


def _sum(a, b, text, where):
    known = [x for x in (a, b) if x not in (FREE, None)]
    if len(known) == 2 and _powers(a) != _powers(b):
        raise ModelError(where, f"adds {describe(a)} and {describe(b)}", text, "terms of one dimension")
    if known:
        return known[0]
    return None if None in (a, b) else FREE


def _product(a, b, sign):
    """a * b (sign 1) or a / b (sign -1). A number in a product may carry a unit of its own (in a file
    without units, `2*l1` is a first mass moment of 2 kg), so such a product is FREE: not checked."""
    if a is None or b is None:
        return None
    if FREE in (a, b):
        return FREE
    combined = dict(a)
    for name, e in b:
        combined[name] = combined.get(name, 0.0) + sign * e
    return tuple(sorted((n, e) for n, e in combined.items() if round(e, 9) != 0))


def _scale(base, factor):
    return tuple((n, e * factor) for n, e in base)


def _power(a, b, exponent_node, text, where):
    if b not in (FREE, None) and _powers(b):
        raise ModelError(where, f"raises to a power that is {describe(b)}", text, "a dimensionless exponent")
    if a in (FREE, None) or not _powers(a):
        return a
    number = _constant(exponent_node)
    return None if number is None else _scale(a, number)


def _constant(node) -> float | None:
    if isinstance(node, ast.UnaryOp):
        inner = _constant(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.Constant):
        return float(node.value)
    return None


def _function(name, args, text, where):
    """sqrt halves a dimension; the others take angles or ratios and give ratios (atan2 of a y and an x of
    one dimension), or nothing known of an unknown argument (`D12*sin(t)`: its amplitude may carry a unit)."""
    if name == "sqrt":
        return _power(args[0], FREE, ast.Constant(0.5), text, where)
    if name == "atan2" and len(args) == 2:
        _sum(*args, text, where)
    elif len(args) == 1 and args[0] not in (FREE, None) and _powers(args[0]):
        raise ModelError(where, f"takes {name} of {describe(args[0])}", text, "an angle or a ratio inside it")
    if None in args:
        return None
    return FREE if all(a == FREE for a in args) else ()


# ---------------------------------------------------------------- the places of a model


def check_units(model: Model) -> None:
    """Every number written with a unit against the dimension its place needs, and every parameter's unit
    (ModelError with the place): run before any other check, since a wrong unit is the mistake to name."""
    for p in model.parameters:
        if p.unit:
            conversion(p.unit, f"parameter '{p.name}'.unit")
    for where, value, dimension in places(model):
        if isinstance(value, Quantity):
            check_unit(value, dimension, where)


def check_expressions(model: Model) -> None:
    """Every expression's dimension, from its parameters' units, against what its place needs (ModelError with
    the place); nothing to check in a model whose parameters have no units. Run after the expressions have
    been checked as arithmetic. The time `t` of a formula counts as a parameter without a unit: `sin(t)` is
    written for sin(1 rad/s · t). A mass moment may leave out a unit mass (`"mx": "L"`, `"Iyy": "L**2"`: 1 kg
    at L), as files without units do."""
    units = {p.name: p.unit for p in model.parameters if p.unit}
    if not units:
        return
    parameters = {name: conversion(unit).base for name, unit in units.items()}
    for where, value, dimension in places(model):
        if not isinstance(value, str):
            continue
        found = expression_dimension(value, parameters, where)
        if dimension is None or dimension.base is None or found in (FREE, None):
            continue
        if _powers(found) not in (_powers(dimension.base), _per_unit_mass(dimension)):
            used = ", ".join(f"{n} in {u}" for n, u in units.items() if n in _names(value))
            raise ModelError(
                where,
                f"is {describe(found)} ({used}), where {dimension.name} is expected",
                value,
                f"{dimension.name} ({dimension.si}): parameters whose units make one",
            )


def _per_unit_mass(dimension: Dimension) -> dict[str, float] | None:
    """A mass moment's dimension without its mass (length, area); None for other places."""
    if dimension not in (MASS_LENGTH, INERTIA):
        return None
    return {n: e for n, e in _powers(dimension.base).items() if n != "kilogram"}


def _names(value: str) -> set[str]:
    return {n.id for n in ast.walk(parse(value)) if isinstance(n, ast.Name)}


def places(model: Model) -> Iterator[tuple[str, object, Dimension | None]]:
    """(where, value, dimension) for every number of the model that a unit fits or that must not
    have one; `where` as the file format's messages say it."""
    motion = _motions(model)
    yield from _vector("gravity", model.gravity, ACCELERATION)
    for body in [model.ground, *model.bodies]:
        yield from _body(body)
    for joint in model.joints:
        for side in ("parent", "child"):
            frame = getattr(joint, f"{side}_frame")
            if isinstance(frame, Frame):
                yield from _frame(frame, f"joint '{joint.name}'.{side}_frame")
        for c in joint.coordinates:
            dimension = _OF_MOTION["value"].get(motion.get(c.name))
            for key in ("initial", "min", "max"):
                yield f"coordinate '{c.name}'.{key}", getattr(c, key), dimension
    for t in model.trajectories:
        yield from _trajectory(t, f"trajectory '{t.name}'", {n: _OF_MOTION["value"].get(m) for n, m in motion.items()})
    if model.platform is not None:
        for t in model.platform.paths:
            yield from _trajectory(t, f"platform.paths '{t.name}'", dict.fromkeys(("x", "y", "z"), LENGTH))
    for element in [*model.forces, *model.measures]:
        yield from _element(element, motion)


def _motions(model: Model) -> dict[str, str]:
    """Each coordinate's motion: "R" (a rotation) or "T" (a translation)."""
    out = {}
    for joint in model.joints:
        motions = JOINT_MOTIONS.get(joint.type, ())
        if len(motions) == len(joint.coordinates):
            out |= {c.name: m[0] for c, m in zip(joint.coordinates, motions, strict=True)}
    return out


def _vector(where: str, values, dimension: Dimension | None):
    if isinstance(values, list):
        for i, v in enumerate(values):
            yield f"{where}[{i}]", v, dimension


def _body(body: Body):
    owner = "ground" if body.label == GROUND else f"body '{body.label}'"
    for name, value in body.inertia.items():
        yield f"{owner}.inertia.{name}", value, INERTIA_DIMENSIONS.get(name)
    for name, point in body.points.items():
        yield from _vector(f"{owner} point '{name}'", point, LENGTH)
    for name, frame in body.frames.items():
        yield from _frame(frame, f"{owner} frame '{name}'")
    shape = body.shape if isinstance(body.shape, dict) else {}
    for key, value in shape.items():
        dimension = LENGTH if key in ("size", "origin", "radius", "length") else DIRECTION
        if key in ("size", "origin", "axis", "scale", "z", "x"):
            yield from _vector(f"{owner}.shape.{key}", value, dimension)
        elif key in ("radius", "length"):
            yield f"{owner}.shape.{key}", value, dimension


def _frame(frame: Frame, where: str):
    if not isinstance(frame.origin, str):
        yield from _vector(f"{where}.origin", frame.origin, LENGTH)
    yield from _vector(f"{where}.z", frame.z, DIRECTION)
    yield from _vector(f"{where}.x", frame.x, DIRECTION)


def _trajectory(t: Trajectory, where: str, dimensions: dict[str, Dimension | None]):
    yield f"{where}.duration", t.duration, TIME
    for name, terms in t.coordinates.items():
        for k, h in enumerate(terms if isinstance(terms, list) else []):
            if isinstance(h, Harmonic):
                term = f"{where} coordinate '{name}' term {k}"
                yield f"{term}.amplitude", h.amplitude, dimensions.get(name)
                yield f"{term}.frequency", h.frequency, ANGULAR_VELOCITY
                yield f"{term}.phase", h.phase, ANGLE


def _element(element, motion: dict[str, str]):
    where = f"{'force' if element.type in FORCE_ELEMENTS else 'measure'} '{element.name}'"
    on = motion.get(getattr(element, "coordinate", None))
    for name, dimension in _ELEMENT_FIELDS.get(element.type, {}).items():
        if isinstance(dimension, str):
            dimension = _OF_MOTION[dimension].get(on)
        yield f"{where}.{name}", getattr(element, name), dimension
    if element.type == "point_force":
        yield from _vector(f"{where}.force", element.force, FORCE)
    if element.type == "bushing":
        yield from _bushing(element, where)
    if element.type in ("contact", "contact_pair"):
        yield from _contact(element, where)
    for axis in ("axis1", "axis2", "spin_axis"):
        yield from _vector(f"{where}.{axis}", getattr(element, axis, None), DIRECTION)
    for i, row in enumerate(getattr(element, "table", None) or []):
        if isinstance(row, list) and len(row) == 2:
            yield f"{where}.table[{i}][0]", row[0], TIME
            yield f"{where}.table[{i}][1]", row[1], _OF_MOTION["effort"].get(on)
