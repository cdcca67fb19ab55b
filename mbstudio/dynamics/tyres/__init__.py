"""Tyres: Pacejka's Magic Formula 6.1 and 5.2 (steady state) and a reader of the TNO .tir files that carry its
coefficients (docs/tyres.md). Pure computation on numpy arrays or CasADi symbols; nothing here knows about bodies
or joints."""

from pathlib import Path

from .coefficients import Coefficients, coefficients
from .magic_formula import TyreForces, magic_formula, ops_for
from .tir_file import TirFile, parse_tir, read_tir


def load_tyre(path: str | Path) -> Coefficients:
    """The Magic Formula coefficients of a .tir file, read and checked."""
    return coefficients(read_tir(path))


__all__ = [
    "Coefficients",
    "TirFile",
    "TyreForces",
    "coefficients",
    "load_tyre",
    "magic_formula",
    "ops_for",
    "parse_tir",
    "read_tir",
]
