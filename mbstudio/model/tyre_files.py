"""Where a Magic Formula tyre's .tir file is: in the model's file, a path relative to the file's folder and inside
it (a model shared as a folder carries its tyres, and a document cannot make the program read files elsewhere); in
memory, once loaded, the checked absolute path, so that the document's text names one file wherever it is read
(the compiled engine and the job runner read the document from its text)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

from .document import MagicFormulaTyre, Model
from .errors import ModelError


def _tyres(model: Model) -> list[tuple[int, MagicFormulaTyre]]:
    return [(i, f) for i, f in enumerate(model.forces) if isinstance(f, MagicFormulaTyre)]


def resolve_tyre_files(model: Model, folder: Path) -> None:
    """Each tyre's `tir`, written relative to `folder` (the model file's), made absolute; a ModelError naming the
    tyre when the path is absolute, leaves the folder or names no file."""
    root = folder.resolve()
    for _, tyre in _tyres(model):
        where = f"force '{tyre.name}'.tir"
        given = Path(tyre.tir)
        expected = "a .tir file in the model's folder or below it, as a relative path"
        if given.is_absolute():
            raise ModelError(where, "is an absolute path", tyre.tir, expected)
        found = (root / given).resolve()
        if not found.is_relative_to(root):
            raise ModelError(where, "leaves the model's folder", tyre.tir, expected)
        if not found.is_file():
            raise ModelError(where, "names no file", tyre.tir, expected)
        tyre.tir = str(found)


def with_relative_tyre_files(model: Model, folder: Path) -> Model:
    """The model as its file in `folder` holds it: each tyre's absolute `tir` relative to that folder (a shallow copy
    when it has tyres; the model itself otherwise). A ModelError when a tyre's file is outside the folder."""
    tyres = _tyres(model)
    if not tyres:
        return model
    root = folder.resolve()
    out = copy.copy(model)
    out.forces = list(model.forces)
    for i, tyre in tyres:
        path = Path(tyre.tir)
        if not path.is_absolute():
            continue  # never resolved (a document read from text): written as it came
        if not path.is_relative_to(root):
            raise ModelError(f"force '{tyre.name}'.tir", "is outside the folder the model is saved to", tyre.tir,
                             f"a .tir file in {root} or below it (copy the tyre file next to the model)")  # fmt: skip
        out.forces[i] = dataclasses.replace(tyre, tir=path.relative_to(root).as_posix())
    return out
