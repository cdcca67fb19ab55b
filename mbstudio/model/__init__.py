"""The mechanism document, its file format and its validation."""

from .document import (
    GROUND,
    INERTIA_NAMES,
    JOINT_MOTIONS,
    JOINT_TYPES,
    Body,
    Coordinate,
    Coupling,
    Frame,
    Joint,
    Model,
    Parameter,
)
from .errors import AssemblyError, ModelError
from .fileformat import dumps, load, loads, save
from .files import check_outputs, write_all, write_atomic
from .validation import validate

__all__ = [
    "GROUND",
    "INERTIA_NAMES",
    "JOINT_MOTIONS",
    "JOINT_TYPES",
    "AssemblyError",
    "Body",
    "Coordinate",
    "Coupling",
    "Frame",
    "Joint",
    "Model",
    "ModelError",
    "Parameter",
    "check_outputs",
    "dumps",
    "load",
    "loads",
    "save",
    "validate",
    "write_all",
    "write_atomic",
]
