"""What a name in a model may be (docs/architecture.md, principle 7: text from a model is data, never code).

Names of parameters, coordinates, joints, force elements and trajectories reach Python and C identifiers,
sympy symbols, LaTeX and CSV column headers as they are, so each is an identifier of ASCII letters, digits and
`_` starting with a letter; those that become symbols and variables (parameters, coordinates) are not a word
those languages or the generated code reserve. Body labels
may start with a digit (Iriarte et al. (2017) numbers its bodies 1..7); they enter names only inside the inertial
symbols `m<label>`, `mx<label>`, ... Every name that becomes a symbol of the equations (parameters,
coordinates and their velocities `d_<coordinate>`, the inertial symbols) and every force element, whose
name heads a column beside them, is unique across all of them.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable

from .errors import ModelError
from .expressions import FUNCTIONS

IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*")
MAX_LENGTH = 64
IDENTIFIER_RULE = f"ASCII letters, digits and _, starting with a letter, at most {MAX_LENGTH} characters"

_C_WORDS = [
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "NULL",
    "main",
    "exp",
    "log",
    "pow",
    "fabs",
]
# what the generated Python module, the sympy symbols and the time functions use themselves
_GENERATED = ["numpy", "np", "math", "q", "qd", "params", "PARAMETERS", "COORDINATES", "t", "pi"]
RESERVED = (
    frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(_C_WORDS + _GENERATED + list(FUNCTIONS))
)


def check_name(name: object, where: str, symbol: bool = True) -> None:
    """A ModelError naming `where` unless `name` is an identifier and, for a name that becomes a symbol or a
    variable of generated code (`symbol`), not a reserved word."""
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name) or len(name) > MAX_LENGTH:
        raise ModelError(where, "has an invalid name", name, IDENTIFIER_RULE)
    if symbol and name in RESERVED:
        raise ModelError(
            where,
            "has an invalid name: a reserved word of Python, C, the functions or the generated code",
            name,
            "a name that is not reserved (the list is in docs/file-format.md), e.g. " + f"{name}_1",
        )


INERTIAL_KINDS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")
UNIQUE_RULE = (
    "names unique across parameters, coordinates (and d_<coordinate>), force elements and the bodies' inertial "
    "symbols m<label>, mx<label>, ..., Izz<label>"
)


def inertial_names(label: str) -> list[str]:
    """The ten inertial symbols of a body, in the order of Iriarte et al. (2017), eq. (2)."""
    return [f"{kind}{label}" for kind in INERTIAL_KINDS]


def check_unique(owners: Iterable[tuple[str, str]], seen: dict[str, str] | None = None) -> dict[str, str]:
    """(name, what owns it) pairs: a ModelError naming both owners of the first name owned twice (or owned
    already in `seen`); the names seen, with their owners."""
    seen = {} if seen is None else seen
    for name, owner in owners:
        if name in seen:
            raise ModelError(owner, f"uses the name '{name}', which {seen[name]} already uses", name, UNIQUE_RULE)
        seen[name] = owner
    return seen


def check_inertial_symbols(labels: list[str], before: dict[str, str], after: Iterable[tuple[str, str]]) -> None:
    """check_unique over the names `before` (with their owners), then each body's inertial symbols in the order of
    `labels`, then the pairs `after`, without listing the symbols (ten per body: a 100 000-body chain's took
    300 MB). Two bodies' symbols meet only as m<x...> and mx<...> (a label 'x1' and a label '1'): every other
    kind is no beginning of another."""
    order = {label: k for k, label in enumerate(labels)}
    for k, label in enumerate(labels):
        for kind in INERTIAL_KINDS:
            name = kind + label
            first = before.get(name) or _earlier_symbol(name, kind, order, k)
            if first:
                raise ModelError(
                    f"body '{label}' (inertial symbol {name})",
                    f"uses the name '{name}', which {first} already uses",
                    name,
                    UNIQUE_RULE,
                )
    for name, owner in after:
        first = before.get(name) or _earlier_symbol(name, None, order, len(labels))
        if first:
            raise ModelError(owner, f"uses the name '{name}', which {first} already uses", name, UNIQUE_RULE)
        before[name] = owner


def _earlier_symbol(name: str, kind: str | None, order: dict[str, int], before: int) -> str | None:
    """Who owns `name` as the inertial symbol of another kind than `kind` of a body before position `before`."""
    for other in INERTIAL_KINDS:
        label = name[len(other) :]
        if other != kind and name.startswith(other) and order.get(label, before) < before:
            return f"body '{label}' (inertial symbol {name})"
    return None
