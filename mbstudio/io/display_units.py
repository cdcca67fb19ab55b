"""The units a person reads results in (docs/architecture.md, principle 10: SI inside, the user's units at the edges).

Results carry SI units in their column names, 'theta1 [rad]', 'coupler_point.vx [m/s]', 'actuator:theta1 [N m]';
`DisplayUnits` says how to show each: angles in rad or deg, lengths in m or mm, and every derived unit made of
them (rad/s -> deg/s, m/s^2 -> mm/s^2, N m -> N mm, N/m -> N/mm, rad/m -> deg/mm). The suspension measures
(camber, toe, caster, kingpin inclination, scrub radius, wheel travel, bump steer) have their own pair, which
the window's preferences set to deg and mm by default, as suspension engineers read them. The window (sliders,
tree, properties, plots, tables, cursors, exports) and the commands' `--units` use this one module; files are
SI unless units are asked for, and every header names its unit, so a file reads back unambiguously.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from ..model import ModelError
from ..model.typed_numbers import plain_in_si
from ..model.units import Quantity, read

ANGLES = {"rad": 1.0, "deg": math.pi / 180}  # the SI size of one unit
LENGTHS = {"m": 1.0, "mm": 1e-3}
SUSPENSION_PARTS = ("toe", "camber", "caster", "kingpin_inclination", "scrub_radius", "wheel_travel", "bump_steer")
_HEADER = re.compile(r"(?P<name>.*\S)\s*\[(?P<unit>[^\[\]]+)\]\s*")
_FACTOR = re.compile(r"(?P<symbol>[A-Za-z]+)(?:\^(?P<power>-?\d+))?")


@dataclass(frozen=True)
class DisplayUnits:
    """How to show angles and lengths: in general, and in the suspension measures' columns."""

    angle: str = "rad"
    length: str = "m"
    suspension_angle: str = "deg"
    suspension_length: str = "mm"

    def unit(self, si: str, name: str = "") -> tuple[str, float]:
        """The unit to show a quantity of SI unit `si` in (in the column `name`), and the SI size of one of it:
        shown value = SI value / size. Units that are not products and one quotient of symbols and powers
        ('m|1', '(m/s²)/(N m) per axis') are shown as they are."""
        angle, length = self._pair(name)
        numerator, _, denominator = si.partition("/")
        if "/" in denominator or not all(_simple(side) for side in (numerator, denominator)):
            return si, 1.0
        top, top_size = _rewrite(numerator, angle, length)
        bottom, bottom_size = _rewrite(denominator, angle, length) if denominator else ("", 1.0)
        return (f"{top}/{bottom}" if bottom else top), top_size / bottom_size

    def _pair(self, name: str) -> tuple[str, str]:
        part = name.rsplit(".", 1)[-1]
        if part in SUSPENSION_PARTS:
            return self.suspension_angle, self.suspension_length
        return self.angle, self.length

    def header(self, header: str) -> tuple[str, float]:
        """'theta1 [rad]' -> ('theta1 [deg]', pi/180); a header without a unit stays as it is."""
        match = _HEADER.fullmatch(header)
        if not match:
            return header, 1.0
        unit, size = self.unit(match["unit"], match["name"])
        return f"{match['name']} [{unit}]", size

    def column(self, header: str, values) -> tuple[str, np.ndarray]:
        """A column in display units: its new header and its values."""
        shown, size = self.header(header)
        values = np.asarray(values, float)
        return shown, values if size == 1.0 else values / size

    def spec(self) -> str:
        """What `--units` would say for these units ('deg,mm'), the suspension pair after a ';' when it differs
        from the general one."""
        general = f"{self.angle},{self.length}"
        suspension = f"{self.suspension_angle},{self.suspension_length}"
        return general if general == suspension else f"{general}; suspension {suspension}"

    @property
    def is_si(self) -> bool:
        return {self.angle, self.suspension_angle} == {"rad"} and {self.length, self.suspension_length} == {"m"}


SI = DisplayUnits("rad", "m", "rad", "m")


def parse_units(text: str | None) -> DisplayUnits:
    """`--units`: comma-separated 'rad' or 'deg', 'm' or 'mm', or 'si', for every column (the suspension
    measures' too); what is not named stays SI, and so do files written without `--units` (None)."""
    units = SI
    if text is None:
        return units
    for word in (w.strip() for w in text.split(",")):
        if word == "si":
            units = SI
        elif word in ANGLES:
            units = replace(units, angle=word, suspension_angle=word)
        elif word in LENGTHS:
            units = replace(units, length=word, suspension_length=word)
        else:
            raise ModelError(
                "--units", "names an unknown display unit", word, "rad or deg, m or mm, or si: e.g. deg,mm"
            )
    return units


def value_text(value: object, si_unit: str, units: DisplayUnits) -> str:
    """A document value as the window shows it for editing: a number written with its unit as written ('100
    mm'), an expression as written (SI), a plain number (SI) in the display unit of `si_unit`, to 15 digits
    (0.1 m shows as 100 in mm, not 100.00000000000001)."""
    if value is None:
        return ""
    if isinstance(value, Quantity | str):
        return value.text() if isinstance(value, Quantity) else value
    _, size = units.unit(si_unit)
    return str(value) if size == 1.0 else f"{float(value) / size:.15g}"


def typed_value(text: str, si_unit: str, units: DisplayUnits, where: str = "value") -> float | str:
    """What a person typed where a value of SI unit `si_unit` goes: a number with its unit ('25 mm', kept as
    written), a plain number in the display unit (25 with lengths in mm: 0.025), or an expression (in SI)."""
    text = text.strip()
    quantity = read(text, where)
    if quantity is not None:
        return quantity
    try:
        return plain_in_si(text, units.unit(si_unit)[1])
    except ValueError:
        return text


def _simple(side: str) -> bool:
    return all(_FACTOR.fullmatch(token) for token in side.split()) if side else True


def _rewrite(side: str, angle: str, length: str) -> tuple[str, float]:
    """A product of symbols with powers ('N m', 'm^2', 'rad s') in the chosen angle and length units."""
    tokens, size = [], 1.0
    for token in side.split():
        match = _FACTOR.fullmatch(token)
        symbol, power = match["symbol"], int(match["power"] or 1)
        if symbol == "rad":
            symbol, size = angle, size * ANGLES[angle] ** power
        elif symbol == "m":
            symbol, size = length, size * LENGTHS[length] ** power
        tokens.append(symbol if match["power"] is None else f"{symbol}^{match['power']}")
    return " ".join(tokens), size


UNITS_HELP = (
    "write angles and lengths in these units, every header naming its own: deg or rad, mm or m (deg,mm); default SI"
)
