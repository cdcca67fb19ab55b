"""Force laws as objects: what each kind of force element does to the model (base.py: the protocol and the
registry from the document's element type to its law). Each module below holds a family of laws and registers
them on import; a new kind of element is one more module here (docs/force-laws.md)."""

from . import bushing_law, contact_law, coordinate_laws, driver_law, magic_formula_tyre_law, point_laws, tyre_law
from .base import FORMATS, LAWS, ForceLaw, JointTerms, contact_force, law_class, register
from .coordinate_laws import CoordinateLaw, CoordinateStop

__all__ = [
    "FORMATS",
    "LAWS",
    "CoordinateLaw",
    "CoordinateStop",
    "ForceLaw",
    "JointTerms",
    "bushing_law",
    "contact_force",
    "contact_law",
    "coordinate_laws",
    "driver_law",
    "law_class",
    "magic_formula_tyre_law",
    "point_laws",
    "register",
    "tyre_law",
]
