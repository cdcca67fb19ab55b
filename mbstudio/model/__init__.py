"""The mechanism document, its file format and its validation.

Its names are imported from their modules when first used (mbstudio/lazy.py): the command line's error types
(`mbstudio.model.errors`) come without numpy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

__getattr__ = exports(
    __name__,
    {
        "document": (
            "GROUND",
            "INERTIA_NAMES",
            "JOINT_MOTIONS",
            "JOINT_TYPES",
            "Body",
            "Coordinate",
            "Coupling",
            "Frame",
            "Joint",
            "Model",
            "Parameter",
        ),
        "errors": ("AssemblyError", "ModelError"),
        "fileformat": ("dumps", "load", "loads", "save"),
        "files": ("check_outputs", "write_all", "write_atomic"),
        "validation": ("validate",),
    },
)

if TYPE_CHECKING:
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
