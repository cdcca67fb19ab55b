"""A reader of TNO tyre property files (.tir), written from the format's public description.

A .tir file is plain text: `[SECTION]` headers, `KEY = value` lines, `$` (or `!`) starting a comment, strings in
single or double quotes, and in a few sections (`[SHAPE]`, the bottoming curve) a `{header}` line followed by rows of
numbers. The `[UNITS]` section names the units of the dimensional entries (LENGTH, FORCE, ANGLE, MASS, TIME,
PRESSURE); the reader converts those entries to SI. The Magic Formula coefficients themselves are dimensionless
(slip angles and shifts in radians) and are read as they are.

The reader only reads: it never evaluates an expression, reads line by line with a bounded line length and a
bounded number of entries, and refuses a bad file with a message naming the file, the line, the section and the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...model.errors import ModelError

MAX_LINE = 4096  # characters: a .tir line is a key, a number and a comment
MAX_ENTRIES = 100_000  # keys and table rows together; a real file has a few hundred

# FITTYP: which Magic Formula the coefficients were fitted for (MF-Tyre's numbering)
FITTYPES = {6: "MF 5.2", 21: "MF 5.2", 61: "MF 6.1", 62: "MF 6.2"}

SECTIONS = (
    "MDI_HEADER",
    "UNITS",
    "MODEL",
    "DIMENSION",
    "OPERATING_CONDITIONS",
    "INERTIA",
    "VERTICAL",
    "STRUCTURAL",
    "CONTACT_PATCH",
    "INFLATION_PRESSURE_RANGE",
    "VERTICAL_FORCE_RANGE",
    "LONG_SLIP_RANGE",
    "SLIP_ANGLE_RANGE",
    "INCLINATION_ANGLE_RANGE",
    "SCALING_COEFFICIENTS",
    "LONGITUDINAL_COEFFICIENTS",
    "OVERTURNING_COEFFICIENTS",
    "LATERAL_COEFFICIENTS",
    "ROLLING_COEFFICIENTS",
    "ALIGNING_COEFFICIENTS",
    "TURNSLIP_COEFFICIENTS",
    "SHAPE",
    "LOADED_RADIUS_COEFFICIENTS",
    "BOTTOMING_CURVE",
)

# SI value of one of each unit a [UNITS] entry may name (lower case; MF-Tyre writes 'meter', 'newton', 'radians')
UNITS = {
    "LENGTH": {
        "meter": 1.0,
        "meters": 1.0,
        "m": 1.0,
        "millimeter": 1e-3,
        "millimeters": 1e-3,
        "mm": 1e-3,
        "centimeter": 1e-2,
        "cm": 1e-2,
        "inch": 0.0254,
        "in": 0.0254,
        "foot": 0.3048,
        "ft": 0.3048,
    },
    "FORCE": {
        "newton": 1.0,
        "n": 1.0,
        "kilonewton": 1e3,
        "kn": 1e3,
        "pound_force": 4.4482216152605,
        "lbf": 4.4482216152605,
        "kgf": 9.80665,
        "kilogram_force": 9.80665,
    },
    "ANGLE": {
        "radian": 1.0,
        "radians": 1.0,
        "rad": 1.0,
        "degree": math.pi / 180,
        "degrees": math.pi / 180,
        "deg": math.pi / 180,
    },
    "MASS": {
        "kg": 1.0,
        "kilogram": 1.0,
        "kilograms": 1.0,
        "gram": 1e-3,
        "g": 1e-3,
        "tonne": 1e3,
        "pound_mass": 0.45359237,
        "lbm": 0.45359237,
    },
    "TIME": {
        "second": 1.0,
        "seconds": 1.0,
        "s": 1.0,
        "sec": 1.0,
        "millisecond": 1e-3,
        "ms": 1e-3,
        "minute": 60.0,
        "min": 60.0,
        "hour": 3600.0,
        "h": 3600.0,
    },
    "PRESSURE": {
        "pascal": 1.0,
        "pa": 1.0,
        "kpa": 1e3,
        "kpascal": 1e3,
        "kilopascal": 1e3,
        "mpa": 1e6,
        "megapascal": 1e6,
        "bar": 1e5,
        "psi": 6894.757293168361,
    },
}

# The dimensional entries, as powers of the [UNITS] quantities; every other entry is dimensionless
_LENGTH, _FORCE, _ANGLE, _MASS, _TIME, _PRESSURE = ({q: 1} for q in UNITS)
DIMENSIONS: dict[str, dict[str, int]] = {
    "UNLOADED_RADIUS": _LENGTH,
    "WIDTH": _LENGTH,
    "RIM_RADIUS": _LENGTH,
    "RIM_WIDTH": _LENGTH,
    "BOTTOM_OFFST": _LENGTH,
    "FNOMIN": _FORCE,
    "FZMIN": _FORCE,
    "FZMAX": _FORCE,
    "NOMPRES": _PRESSURE,
    "INFLPRES": _PRESSURE,
    "PRESMIN": _PRESSURE,
    "PRESMAX": _PRESSURE,
    "ALPMIN": _ANGLE,
    "ALPMAX": _ANGLE,
    "CAMMIN": _ANGLE,
    "CAMMAX": _ANGLE,
    "MASS": _MASS,
    "LONGVL": {"LENGTH": 1, "TIME": -1},
    "VXLOW": {"LENGTH": 1, "TIME": -1},
    "IXX": {"MASS": 1, "LENGTH": 2},
    "IYY": {"MASS": 1, "LENGTH": 2},
    "VERTICAL_STIFFNESS": {"FORCE": 1, "LENGTH": -1},
    "BOTTOM_STIFF": {"FORCE": 1, "LENGTH": -1},
    "LONGITUDINAL_STIFFNESS": {"FORCE": 1, "LENGTH": -1},
    "LATERAL_STIFFNESS": {"FORCE": 1, "LENGTH": -1},
    "VERTICAL_DAMPING": {"FORCE": 1, "TIME": 1, "LENGTH": -1},
}

_SECTION = re.compile(r"\[\s*([A-Za-z0-9_]+)\s*\]$")
_ENTRY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_FORTRAN_EXPONENT = re.compile(r"(?<=[0-9.])[dD](?=[+-]?[0-9])")


@dataclass(frozen=True)
class Entry:
    """One `KEY = value` line: the value (a float in SI, or a string) and where it was read."""

    value: float | str
    line: int


@dataclass
class TirFile:
    """A .tir file's contents: entries by section and key (numbers in SI), tables, the Magic Formula version that
    FITTYP names, and notes (entries the reader kept but no model reads, conversions made)."""

    source: str
    sections: dict[str, dict[str, Entry]] = field(default_factory=dict)
    tables: dict[str, list[list[float]]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def has(self, section: str, key: str) -> bool:
        return key in self.sections.get(section, {})

    def number(self, section: str, key: str, default: float | None = None) -> float:
        """The entry's value in SI; `default` where the file has none (a ModelError naming the key and section
        when there is no default); a ModelError when the entry is a string."""
        entry = self.sections.get(section, {}).get(key)
        if entry is None:
            if default is None:
                raise ModelError(f"{self.source} [{section}]", f"has no {key}, which the tyre model needs")
            return default
        if not isinstance(entry.value, float):
            raise ModelError(f"{self.source}:{entry.line} [{section}] {key}", "is not a number", entry.value)
        return entry.value

    @property
    def fittyp(self) -> int:
        """The [MODEL] FITTYP switch, checked to be one the reader knows."""
        value = self.number("MODEL", "FITTYP")
        if value not in FITTYPES:
            line = self.sections["MODEL"]["FITTYP"].line
            expected = ", ".join(f"{k} ({v})" for k, v in FITTYPES.items())
            raise ModelError(f"{self.source}:{line} [MODEL] FITTYP", "is not a Magic Formula version", value, expected)
        return int(value)

    @property
    def version(self) -> str:
        """'MF 5.2', 'MF 6.1' or 'MF 6.2', as FITTYP says."""
        return FITTYPES[self.fittyp]

    @property
    def use_mode(self) -> int:
        """The [MODEL] USE_MODE switch (4, combined slip, when the file has none), checked: its last digit chooses
        the forces (0 none, 1 longitudinal, 2 lateral, 3 both uncombined, 4 both combined), a tens digit the
        transient behaviour."""
        value = self.number("MODEL", "USE_MODE", 4.0)
        if value != int(value) or value < 0 or int(value) % 10 > 4:
            line = self.sections["MODEL"]["USE_MODE"].line
            raise ModelError(
                f"{self.source}:{line} [MODEL] USE_MODE",
                "is not a mode MF-Tyre defines",
                value,
                "a whole number >= 0 whose last digit is 0 to 4",
            )
        return int(value)


def read_tir(path: str | Path) -> TirFile:
    """Read a .tir file (see the module's description); a ModelError for a file it cannot read."""
    path = Path(path)
    try:
        with path.open("rb") as stream:
            return _parse(_lines(stream, str(path)), str(path))
    except OSError as error:
        raise ModelError(str(path), f"cannot be read: {error.strerror or error}") from None


def parse_tir(text: str, source: str = "<text>") -> TirFile:
    """Read .tir contents given as text (as `read_tir` reads a file)."""
    return _parse(_text_lines(text, source), source)


def _lines(stream, source: str):
    """The file's lines as text, numbered from 1, each at most MAX_LINE characters."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE + 2)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE + 1 or (len(raw) == MAX_LINE + 1 and not raw.endswith(b"\n")):
            raise ModelError(f"{source}:{number}", f"is longer than {MAX_LINE} characters: not a .tir file")
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError:
            yield number, raw.decode("latin-1")  # old files carry a degree sign or a name in Latin-1


def _text_lines(text: str, source: str):
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE:
            raise ModelError(f"{source}:{number}", f"is longer than {MAX_LINE} characters: not a .tir file")
        yield number, line


def _parse(lines, source: str) -> TirFile:
    tir = TirFile(source)
    section: str | None = None
    count = 0
    for number, raw in lines:
        line = _strip_comment(raw).strip()
        if not line:
            continue
        count += 1
        if count > MAX_ENTRIES:
            raise ModelError(f"{source}:{number}", f"has more than {MAX_ENTRIES} entries: not a .tir file")
        where = f"{source}:{number}"
        header = _SECTION.match(line)
        if header:
            section = header.group(1).upper()
            if section not in SECTIONS:
                raise ModelError(where, "names an unknown section", f"[{section}]", ", ".join(SECTIONS))
            if section in tir.sections:
                raise ModelError(where, f"repeats the section [{section}]")
            tir.sections[section] = {}
            continue
        if section is None:
            raise ModelError(where, "has an entry before the first [SECTION] header", line)
        if line.startswith("{"):
            tir.tables.setdefault(section, [])
            continue
        entry = _ENTRY.match(line)
        if entry is None:
            _table_row(tir, section, line, where)
            continue
        key, text = entry.group(1).upper(), entry.group(2).strip()
        if key in tir.sections[section]:
            first = tir.sections[section][key].line
            raise ModelError(f"{where} [{section}] {key}", f"is given twice (first on line {first})")
        tir.sections[section][key] = Entry(_value(text, f"{where} [{section}] {key}"), number)
    _convert_units(tir)
    return tir


def _strip_comment(line: str) -> str:
    """The line without its comment: from the first `$` or `!` outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "$!":
            return line[:i]
    return line


def _value(text: str, where: str) -> float | str:
    if len(text) >= 2 and text[0] in "'\"":
        if text[-1] != text[0]:
            raise ModelError(where, "has a string without its closing quote", text)
        return text[1:-1]
    if not text:
        raise ModelError(where, "has no value")
    try:
        number = float(_FORTRAN_EXPONENT.sub("e", text))
    except ValueError:
        return text  # a bare word (a few writers leave strings unquoted); a model asking for a number refuses it
    if not math.isfinite(number):
        raise ModelError(where, "is not a finite number", text)
    return number


def _table_row(tir: TirFile, section: str, line: str, where: str) -> None:
    if section not in tir.tables:
        raise ModelError(where, "is neither `KEY = value` nor a row of a table under a {header}", line)
    try:
        row = [float(_FORTRAN_EXPONENT.sub("e", cell)) for cell in line.split()]
    except ValueError:
        raise ModelError(where, "has a table row that is not numbers", line) from None
    if not all(math.isfinite(x) for x in row):
        raise ModelError(where, "has a table row with a non-finite number", line)
    tir.tables[section].append(row)


def _convert_units(tir: TirFile) -> None:
    """Every dimensional entry in SI, by the units [UNITS] names (SI where it names none)."""
    scale = {quantity: 1.0 for quantity in UNITS}
    named = tir.sections.get("UNITS", {})
    for quantity, entry in named.items():
        where = f"{tir.source}:{entry.line} [UNITS] {quantity}"
        if quantity not in UNITS:
            tir.notes.append(f"[UNITS] {quantity} is not a quantity the reader converts (ignored)")
            continue
        name = str(entry.value).strip().lower()
        if name not in UNITS[quantity]:
            raise ModelError(where, "names a unit the reader cannot convert", entry.value, ", ".join(UNITS[quantity]))
        scale[quantity] = UNITS[quantity][name]
        tir.units[quantity] = name
    if "PRESSURE" not in named:  # MF-Tyre derives it: force per length squared
        scale["PRESSURE"] = scale["FORCE"] / scale["LENGTH"] ** 2
    for entries in tir.sections.values():
        for key, entry in entries.items():
            if key in DIMENSIONS and isinstance(entry.value, float):
                factor = math.prod(scale[q] ** p for q, p in DIMENSIONS[key].items())
                if factor != 1.0:
                    entries[key] = Entry(entry.value * factor, entry.line)
