"""The properties panel's fields of a contact's shape (docs/contact.md): a choice of sphere, box or mesh, and the
chosen shape's own values, shown only for it: a box's half extents, a mesh's vertices (JSON rows, or a mesh file
whose convex hull's vertices are read), and the axes (roll, pitch, yaw) of either. No Qt."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ...io.collision_geometry import mesh_file_vertices
from ...model import Model, ModelError
from ...model.document import CONTACT_SHAPES
from ...model.fileformat import vertex_rows

SHAPE_FIELDS = ("shape", "half_extents", "vertices", "rpy")
SIZE = 0.05  # m: a new box's half extents, a new mesh's cube, when the sphere had no numeric radius
VERTICES_HINT = "[[x, y, z], ...] m, or a mesh file"


# A contact pair's sides' shape fields (shape1, ..., rpy2): each side edited as a contact's shape
PAIR_SHAPE_FIELDS = tuple(f"{key}{side}" for side in "12" for key in SHAPE_FIELDS)


class PairSideView:
    """Side `suffix` ("1" or "2") of a contact pair seen as a contact: its shape's fields and radius are the pair's
    with that suffix (shape2, half_extents2, radius2, ...), everything else the pair's own."""

    _KEYS = (*SHAPE_FIELDS, "radius")

    def __init__(self, element, suffix: str) -> None:
        object.__setattr__(self, "_element", element)
        object.__setattr__(self, "_suffix", suffix)

    def _key(self, key: str) -> str:
        return f"{key}{self._suffix}" if key in self._KEYS else key

    def __getattr__(self, key: str):
        return getattr(self._element, self._key(key))

    def __setattr__(self, key: str, value) -> None:
        setattr(self._element, self._key(key), value)


def shape_fields(element, key: str, element_of: Callable[[Model], object], field_type, suffix: str = "") -> list:
    """The Field(s) of one of SHAPE_FIELDS for the contact `element` (none where its shape has no such value);
    `element_of(model)` finds it in the model an edit writes, `field_type` is the panel's Field class. With
    `suffix` the element is a contact pair and the field its side's (PairSideView)."""
    if suffix:
        pair_of = element_of
        element, element_of = PairSideView(element, suffix), lambda m: PairSideView(pair_of(m), suffix)
    shape = element.shape or "sphere"
    value = getattr(element, key)

    def put(m: Model, v: object) -> None:
        setattr(element_of(m), key, v)

    if key == "shape":
        choose = lambda m, v: choose_shape(element_of(m), str(v))  # noqa: E731
        return [field_type(key + suffix, "choice", shape, choose, choices=CONTACT_SHAPES)]
    if key == "half_extents" and shape == "box":
        return [field_type(key + suffix, "vector", value, put, "m")]
    if key == "vertices" and shape == "mesh":
        text = json.dumps([[float(x) for x in row] for row in value or []])
        return [field_type(key + suffix, "text", text, lambda m, v: put(m, read_vertices(v)), VERTICES_HINT)]
    if key == "rpy" and shape != "sphere":
        return [field_type(key + suffix, "optional_vector", value, put, "rad")]
    return []


def choose_shape(element, shape: str) -> None:
    """Make the contact a sphere, a box or a mesh: a box or mesh gets sharp corners (radius 0) and, when it had
    none, a size from the sphere's radius (a box of that half extent, a mesh of that box's corners)."""
    if shape not in CONTACT_SHAPES:
        raise ModelError(f"force '{element.name}'.shape", "is not a contact shape", shape, "sphere, box or mesh")
    if shape == (element.shape or "sphere"):
        return
    size = element.radius if isinstance(element.radius, int | float) and element.radius > 0 else SIZE
    half = element.half_extents or [size, size, size]
    if shape == "sphere":
        element.shape, element.half_extents, element.vertices, element.rpy = None, None, None, None
        element.radius = size if element.radius == 0 else element.radius
        return
    if shape == "mesh" and element.vertices is None:
        element.vertices = [[sx * float(half[0]), sy * float(half[1]), sz * float(half[2])]
                            for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]  # fmt: skip
    element.half_extents = half if shape == "box" else None
    element.vertices = element.vertices if shape == "mesh" else None
    element.shape, element.radius = shape, 0.0


def read_vertices(text: object) -> list[list[float]]:
    """A mesh's vertices typed as JSON rows [[x, y, z], ...], or the path of a mesh file (STL, OBJ, PLY, ...)
    whose convex hull's vertices are taken."""
    text = str(text).strip()
    where = "vertices"
    if text.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ModelError(where, f"is not JSON ({error.msg})", text, VERTICES_HINT) from None
        return vertex_rows(data, where)
    path = Path(text).expanduser()
    if not path.is_file():
        raise ModelError(where, "is neither rows nor a mesh file that exists", text, VERTICES_HINT)
    return mesh_file_vertices(path)
