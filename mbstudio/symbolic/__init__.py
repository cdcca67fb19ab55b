"""Equations of motion as sympy expressions, common-subexpression elimination, LaTeX and Python export."""

from .eom import Cancelled, EquationsOfMotion, Monitor, equations_of_motion
from .export import CommonSubexpressions, common_subexpressions, latex_fragment, python_module

__all__ = [
    "Cancelled",
    "CommonSubexpressions",
    "EquationsOfMotion",
    "Monitor",
    "common_subexpressions",
    "equations_of_motion",
    "latex_fragment",
    "python_module",
]
