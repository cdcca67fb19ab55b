"""The model hash: the sha256 of a model's .mbs text, under which results are filed and which every provenance
names (docs/architecture.md, principles 4 and 6). One definition, so that a simulation, a linear model, the base
parameters and a job's result of the same model carry the same hash."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .document import Model


def text_hash(model_text: str) -> str:
    """The sha256 (hex) of a model's .mbs text."""
    return hashlib.sha256(model_text.encode("utf-8")).hexdigest()


def model_hash(model: Model) -> str:
    """The sha256 (hex) of the model's .mbs text (`dumps`)."""
    from .fileformat import dumps

    return text_hash(dumps(model))
