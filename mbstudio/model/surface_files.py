"""Where a road surface's CSV grid is, as tyre_files.py places the tyres' .tir files: in the model's file a path
relative to its folder and inside it, in memory the checked absolute path; saved elsewhere, the grid is copied
beside the model."""

from __future__ import annotations

import copy
import csv
import dataclasses
import functools
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .document import Model
from .errors import ModelError
from .tyre_files import copied_beside, resolved_inside

WHERE = "road.surface"
EXPECTED = "a CSV grid: a first row 'y \\ x, x1, x2, ...', then rows 'y, z(x1, y), z(x2, y), ...' (m)"
EXPECTED_PATH = "a CSV file in the model's folder or below it, as a relative path"


def resolve_surface_file(model: Model, folder: Path) -> None:
    """The road's `surface`, written relative to `folder`, made absolute; a ModelError when the path is absolute,
    leaves the folder or names no file."""
    road = model.road
    if road is None or road.surface is None:
        return
    found = resolved_inside(road.surface, folder, WHERE, EXPECTED_PATH)
    road.surface, road.surface_sha256 = str(found), file_sha256(found)


def with_relative_surface_file(model: Model, folder: Path) -> tuple[Model, dict[Path, bytes]]:
    """The model as its file in `folder` holds it (the surface relative to that folder) and the grid to copy there
    when it lies outside; a ModelError when that would replace a different file of the same name."""
    road = model.road
    if road is None or road.surface is None or not Path(road.surface).is_absolute():
        return model, {}
    root, path = folder.resolve(), Path(road.surface)
    copies: dict[Path, bytes] = {}
    if not path.is_relative_to(root):
        path = copied_beside(WHERE, path, root, copies)
    out = copy.copy(model)
    out.road = dataclasses.replace(road, surface=path.relative_to(root).as_posix(), surface_sha256=None)
    return out, copies


@dataclass(frozen=True)
class Grid:
    """Heights z[i, j] at x[i], y[j] (m), both strictly increasing, at least two of each."""

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray


def read_grid(path: str, sha256: str | None = None) -> Grid:
    """The grid of the CSV file at `path` (read once per file and modification); a ModelError naming the line and
    column of anything that is not a finite number, a row of another length, or coordinates that do not increase,
    and when the file's content is no longer the `sha256` it had when the model was loaded (an engine traced from
    it is filed under the model's text, which holds that hash)."""
    if not Path(path).is_absolute():
        raise ModelError(WHERE, "is relative to a folder this document does not know", path,
                         "a model loaded from its file (the grid's path is relative to its folder)")  # fmt: skip
    try:
        stat = Path(path).stat()
    except OSError as error:
        raise ModelError(WHERE, f"cannot be read ({error.strerror})", path, EXPECTED) from None
    grid, digest = _read(path, (stat.st_mtime_ns, stat.st_size))
    if sha256 is not None and digest != sha256:
        raise ModelError(WHERE, "has changed since the model was loaded", path, "the model loaded again")
    return grid


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@functools.lru_cache(maxsize=8)
def _read(path: str, stamp: tuple[int, int]) -> tuple[Grid, str]:
    try:
        content = Path(path).read_bytes()
        lines = content.decode("utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ModelError(WHERE, f"cannot be read ({error})", path, EXPECTED) from None
    try:
        rows = [(n, row) for n, row in enumerate(csv.reader(lines), 1) if row and not row[0].lstrip().startswith("#")]
    except csv.Error as error:
        raise ModelError(WHERE, f"cannot be read ({error})", path, EXPECTED) from None
    if len(rows) < 3 or len(rows[0][1]) < 3:
        raise ModelError(WHERE, "holds fewer than two x columns or two y rows", path, EXPECTED)
    width = len(rows[0][1])
    for n, row in rows:
        if len(row) != width:
            raise ModelError(WHERE, f"is not rectangular: line {n} has {len(row)} cells, the first row {width}",
                             path, EXPECTED)  # fmt: skip
    (first, header), body = rows[0], rows[1:]
    x = np.array([_number(v, path, first, c + 2) for c, v in enumerate(header[1:])])
    table = np.array([[_number(v, path, n, c + 1) for c, v in enumerate(row)] for n, row in body])
    y, z = table[:, 0], table[:, 1:].T
    for name, values in (("x", x), ("y", y)):
        if not np.all(np.diff(values) > 0):
            raise ModelError(WHERE, f"has {name} coordinates that do not increase", values.tolist(), EXPECTED)
    return Grid(x, y, z), hashlib.sha256(content).hexdigest()


def _number(text: str, path: str, row: int, column: int) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ModelError(WHERE, f"holds '{text.strip()}' at line {row}, column {column} of {path}",
                         expected="a finite number (m)")  # fmt: skip
    return value
