"""Force laws as objects: what each kind of force element does to the model (base.py: the protocol and the
registry from the document's element type to its law). Each module below holds a family of laws and registers
them when it is imported, which `law_class` does the first time a document has one of its elements (base.py's
LAW_MODULES); a new kind of element is one more module here, named there (docs/force-laws.md)."""

from .base import FORMATS, LAWS, ForceLaw, JointTerms, all_laws, contact_force, law_class, register
from .coordinate_laws import CoordinateLaw, CoordinateStop

__all__ = [
    "FORMATS",
    "LAWS",
    "CoordinateLaw",
    "CoordinateStop",
    "ForceLaw",
    "JointTerms",
    "contact_force",
    "all_laws",
    "law_class",
    "register",
]
