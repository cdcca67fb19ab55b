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
    expected = "a .tir file in the model's folder or below it, as a relative path"
    for _, tyre in _tyres(model):
        tyre.tir = str(resolved_inside(tyre.tir, folder, f"force '{tyre.name}'.tir", expected))


def resolved_inside(given: str, folder: Path, where: str, expected: str) -> Path:
    """The file `given` relative to `folder`, absolute; a ModelError naming `where` when the path is absolute,
    leaves the folder or names no file."""
    root = folder.resolve()
    if Path(given).is_absolute():
        raise ModelError(where, "is an absolute path", given, expected)
    found = (root / given).resolve()
    if not found.is_relative_to(root):
        raise ModelError(where, "leaves the model's folder", given, expected)
    if not found.is_file():
        raise ModelError(where, "names no file", given, expected)
    return found


def with_relative_tyre_files(model: Model, folder: Path) -> tuple[Model, dict[Path, bytes]]:
    """The model as its file in `folder` holds it, each tyre's absolute `tir` relative to that folder (a shallow
    copy when it has tyres; the model itself otherwise), and the tyre files to copy into `folder` for those outside
    it (Save As to another folder: the saved model carries its tyres, as a model shared as a folder must). A
    ModelError when a copy would replace a different file of the same name there."""
    tyres = _tyres(model)
    if not tyres:
        return model, {}
    root = folder.resolve()
    out = copy.copy(model)
    out.forces = list(model.forces)
    copies: dict[Path, bytes] = {}
    for i, tyre in tyres:
        path = Path(tyre.tir)
        if not path.is_absolute():
            continue  # never resolved (a document read from text): written as it came
        if not path.is_relative_to(root):
            path = copied_beside(f"force '{tyre.name}'.tir", path, root, copies)
        out.forces[i] = dataclasses.replace(tyre, tir=path.relative_to(root).as_posix())
    return out, copies


def copied_beside(where: str, source: Path, root: Path, copies: dict[Path, bytes]) -> Path:
    """Where `source`, a file the model names (`where`), goes in `root` (its own name), its bytes added to `copies`
    unless the same file is there already; a ModelError when it cannot be read or a different file of that name is
    there (or about to be copied there). Shared by every file a model carries (tyres, road grids)."""
    try:
        content = source.read_bytes()
    except OSError as exc:
        raise ModelError(
            where, "cannot be read to copy it beside the saved model", str(exc), f"a readable {source.suffix} file"
        ) from None
    target = root / source.name
    present = copies.get(target)
    if present is None and target.is_file():
        present = target.read_bytes()
    if present is not None and present != content:
        raise ModelError(where, f"would replace a different {source.name} in the folder the model is saved to",
                         str(source), f"a folder without another {source.name}, or that file copied there")  # fmt: skip
    if not target.is_file():
        copies[target] = content
    return target
