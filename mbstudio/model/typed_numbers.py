"""Numbers a person types for named places — `theta1 = 5 deg, d_theta1 = 2` on the command line (`--at`,
`--hold`, `--velocity`) or in the window's dialogs — read to SI.

A number may carry its own unit ('5 deg', '25 mm', '120 rpm'), checked against what its place holds (an angle
for a revolute coordinate, a velocity for a prismatic one's rate); a plain number is read in the unit whose SI
size the caller gives: 1 on the command line (SI), the display unit in the window (degrees there are 5, not
0.087). Decimal arithmetic makes '25' in mm the same float as '0.025' in m, as in model files.
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterable, Mapping
from decimal import Decimal

from .errors import ModelError
from .units import Dimension, check_unit, of_motion, read


def read_number(text: str, dimension: Dimension | None, where: str, plain_size: float = 1.0) -> float:
    """The SI value of a typed number: with a unit, checked against `dimension`; plain, in the unit of SI size
    `plain_size`."""
    text = text.strip()
    quantity = read(text, where)
    if quantity is not None:
        if dimension is None:  # a value whose dimension is not known here: a unit could not be checked
            raise ModelError(where, "takes a plain number, without a unit", text, "a number such as 0.5")
        check_unit(quantity, dimension, where)
        return float(quantity)
    example = (
        f"e.g. 0.5 or 0.5 {dimension.examples.split(',')[0]}"
        if dimension and dimension.base is not None
        else "e.g. 0.5"
    )
    try:
        number = _plain_float(text)
    except ValueError:
        expected = f"a number, with or without a unit: {example}"
        raise ModelError(where, f"{text!r} is not a number", None, expected) from None
    if not math.isfinite(number):
        raise ModelError(where, f"{text!r} is not a finite number", None, example)
    return plain_in_si(text, plain_size)


def plain_in_si(text: str, size: float) -> float:
    """A plain number typed in the unit of SI size `size`, in SI, by decimal arithmetic: '25' in mm is the float
    that '0.025' is. A ValueError for text that is not a number."""
    number = _plain_float(text)
    return number if size == 1.0 else float(Decimal(text.strip()) * Decimal(repr(size)))


def _plain_float(text: str) -> float:
    """float(text) for a number as people type it: Python's own spellings that no one means ('1_0' for 10, digits of
    other scripts) are refused with a ValueError, as the model files refuse them."""
    if "_" in text or not text.isascii():
        raise ValueError(f"{text!r} is not a number")
    return float(text)


def read_pairs(
    field: str,
    pairs: str | Iterable[str],
    dimensions: Mapping[str, Dimension | None],
    plain_sizes: Mapping[str, float] | None = None,
    names_are: str = "an independent coordinate",
) -> dict[str, float]:
    """'a = 1, b = 5 deg' (or the pairs one by one, as repeated options give them) as {name: SI value}: each
    name one of `dimensions`' (`names_are` says what they are) and given once, each value read by
    `read_number` (plain numbers in the unit of SI size `plain_sizes[name]`, SI where none is given)."""
    names = ", ".join(dimensions) or "(none)"
    expected = "NAME = VALUE pairs separated by commas"
    texts = pairs.split(",") if isinstance(pairs, str) else [p for pair in pairs for p in pair.split(",")]
    out: dict[str, float] = {}
    for pair in (p.strip() for p in texts if p.strip()):
        name, sep, value = (x.strip() for x in pair.partition("="))
        if not sep:
            raise ModelError(field, "is not NAME=VALUE", pair, f"{expected}, NAME one of {names}")
        if name not in dimensions:
            raise ModelError(field, f"{name!r} is not {names_are} ({names})", pair, expected)
        if name in out:  # the last would win, silently
            raise ModelError(field, f"{name} is given twice", pair, "each name once")
        size = (plain_sizes or {}).get(name, 1.0)
        out[name] = read_number(value, dimensions[name], f"{field}: {name}", size)
    return out


OTHER_RATE_SUFFIX = "_dot"  # other programs' spelling of a rate; mbstudio's one name for it is d_NAME


def rate_spelled_otherwise(name: str, coordinates: Container[str]) -> str | None:
    """The coordinate whose rate `name` spells as other programs do ('theta1_dot' -> 'theta1', to be read as
    d_theta1 with a note); None for any other name, a coordinate's own included."""
    base = name.removesuffix(OTHER_RATE_SUFFIX)
    return base if base != name and name not in coordinates and base in coordinates else None


def coordinate_dimensions(names: Iterable[str], kinds: Mapping[str, str], quantity: str = "value") -> dict:
    """{name: its Dimension} for coordinates of joint motion kinds[name]; a name 'd_NAME' is NAME's rate."""
    out = {}
    for name in names:
        rate = name not in kinds and name.startswith("d_")
        out[name] = of_motion("rate" if rate else quantity, kinds[name[2:] if rate else name])
    return out
