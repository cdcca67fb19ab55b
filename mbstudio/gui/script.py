""" "Save as script": a Python script that rebuilds the document through the public API (no Qt).

The script builds the model from mbstudio.model's dataclasses, one statement per list entry (parameter,
body, joint, trajectory, ...), and saves it, so running it reproduces the saved file byte for byte. It walks
the Model's fields rather than naming them, so document fields added later are written too. A number written
with a unit is rebuilt as it was written (`Quantity(100, 'mm', 'text')`).
"""

from __future__ import annotations

import dataclasses
import pprint

from ..model import Model
from ..model.units import Quantity

HEADER = """{docstring}

import sys

from mbstudio.model import save
from mbstudio.model.document import {classes}
{units}
"""


def _literal(value: object) -> str:
    # the reprs of these plain dataclasses, lists, dicts, strings and floats are valid Python
    return pprint.pformat(value, width=110, sort_dicts=False)


class _Written:
    """A number with its unit as the script spells it."""

    def __init__(self, value: Quantity) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Quantity({self.value.number!r}, {self.value.unit!r}, {self.value.form!r})"


def _scripted(value: object) -> object:
    """`value` with every Quantity in it (in dataclasses, lists, dicts) written as the script spells it."""
    if isinstance(value, Quantity):
        return _Written(value)
    if dataclasses.is_dataclass(value):
        return dataclasses.replace(
            value, **{f.name: _scripted(getattr(value, f.name)) for f in dataclasses.fields(value)}
        )
    if isinstance(value, list):
        return [_scripted(v) for v in value]
    if isinstance(value, dict):
        return {k: _scripted(v) for k, v in value.items()}
    return value


def _classes(value: object) -> set[str]:
    """Names of the dataclasses a value is built from (for the script's import line)."""
    if dataclasses.is_dataclass(value):
        inner = [getattr(value, f.name) for f in dataclasses.fields(value)]
        return {type(value).__name__}.union(*(_classes(v) for v in inner))
    if isinstance(value, list | tuple):
        return set().union(*(_classes(v) for v in value))
    if isinstance(value, dict):
        return set().union(*(_classes(v) for v in value.values()))
    return {"Quantity"} if isinstance(value, _Written) else set()


def model_script(model: Model, target: str) -> str:
    """Python source that rebuilds `model` and saves it to sys.argv[1] (default `target`)."""
    scalars, appends, classes = [], [], {"Model"}
    for f in dataclasses.fields(Model):
        value = _scripted(getattr(model, f.name))
        if f.name == "ground":
            continue
        if isinstance(value, list) and value and all(dataclasses.is_dataclass(v) for v in value):
            appends += [f"model.{f.name}.append({_literal(v)})" for v in value]
            classes |= _classes(value)
        else:
            scalars.append(f"    {f.name}={value!r},")
            classes |= _classes(value)  # a section held as a dataclass (the platform)
    ground = [
        f"model.ground.{k} = {_literal(_scripted(getattr(model.ground, k)))}"
        for k in ("points", "frames")
        if getattr(model.ground, k)
    ]
    classes |= _classes(_scripted(model.ground.points)) | _classes(_scripted(model.ground.frames))
    # the model's name and the target path enter the script only inside string literals
    docstring = (
        f"Rebuilds the MB Studio model {model.name!r}; run it to write {target!r} (or the file given as argument)."
    )
    units = "from mbstudio.model.units import Quantity\n" if "Quantity" in classes else ""
    header = HEADER.format(docstring=repr(docstring), classes=", ".join(sorted(classes - {"Quantity"})), units=units)
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
