""" "Save as script": a Python script that rebuilds the document through the public API (no Qt).

The script builds the model from mbstudio.model's dataclasses, one statement per list entry (parameter,
body, joint, trajectory, ...), and saves it, so running it reproduces the saved file byte for byte. It walks
the Model's fields rather than naming them, so document fields added later are written too.
"""

from __future__ import annotations

import dataclasses
import pprint

from ..model import Model

HEADER = """{docstring}

import sys

from mbstudio.model import save
from mbstudio.model.document import {classes}

"""


def _literal(value: object) -> str:
    # the reprs of these plain dataclasses, lists, dicts, strings and floats are valid Python
    return pprint.pformat(value, width=110, sort_dicts=False)


def _classes(value: object) -> set[str]:
    """Names of the dataclasses a value is built from (for the script's import line)."""
    if dataclasses.is_dataclass(value):
        inner = [getattr(value, f.name) for f in dataclasses.fields(value)]
        return {type(value).__name__}.union(*(_classes(v) for v in inner))
    if isinstance(value, list | tuple):
        return set().union(*(_classes(v) for v in value))
    if isinstance(value, dict):
        return set().union(*(_classes(v) for v in value.values()))
    return set()


def model_script(model: Model, target: str) -> str:
    """Python source that rebuilds `model` and saves it to sys.argv[1] (default `target`)."""
    scalars, appends, classes = [], [], {"Model"}
    for f in dataclasses.fields(Model):
        value = getattr(model, f.name)
        if f.name == "ground":
            continue
        if isinstance(value, list) and value and all(dataclasses.is_dataclass(v) for v in value):
            appends += [f"model.{f.name}.append({_literal(v)})" for v in value]
            classes |= _classes(value)
        else:
            scalars.append(f"    {f.name}={value!r},")
            classes |= _classes(value)  # a section held as a dataclass (the platform)
    ground = [
        f"model.ground.{k} = {_literal(getattr(model.ground, k))}"
        for k in ("points", "frames")
        if getattr(model.ground, k)
    ]
    classes |= _classes(model.ground.frames)
    # the model's name and the target path enter the script only inside string literals
    docstring = (
        f"Rebuilds the MB Studio model {model.name!r}; run it to write {target!r} (or the file given as argument)."
    )
    header = HEADER.format(docstring=repr(docstring), classes=", ".join(sorted(classes)))
    lines = [
        header,
        "model = Model(",
        *scalars,
        ")",
        *appends,
        *ground,
        "",
        f"save(model, sys.argv[1] if len(sys.argv) > 1 else {target!r})",
        "",
    ]
    return "\n".join(lines)
