"""Contact shapes on bodies, as the points the contact laws press on a ground (docs/contact.md).

A contact element's shape is a sphere (its point, swept by its radius), a box (half extents a, b, c) or a convex
mesh (the vertices of its convex hull), centred at the element's body point with axes turned by roll, pitch and yaw
(URDF's R = Rz(yaw) Ry(pitch) Rx(roll)) from the body's. A box or mesh presses on a ground through its vertices,
each a sphere of the element's radius (0: a sharp corner): its contact points.

Against a plane this is exact for a convex shape: the plane meets a convex polyhedron first at a vertex, and the
points of the shape below the plane are the convex hull of the vertices below it and of where the edges cross it,
so the deepest point is always a vertex. A face lying on the plane gives its corners as contacts (a box's four),
whose forces together are the face's pressure's resultant: for a rigid face on a plane the distribution over the
face is statically indeterminate, and any one with the same resultant and moment moves the body alike. Against a
curved road each vertex meets the road's tangent plane under it (road_surface.py): the road is sampled at the
vertices only, so a bump narrower than a face passes through the face unseen, and a face on a crest or in a hollow
touches at the vertices only; exact where the road is flat over the shape's footprint.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import casadi
import numpy as np

from ..numerics.backends import positive
from ..numerics.spatial import cross, dot

CORNER_SIGNS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


def shape_of(element) -> str:
    """The element's shape: "sphere" (no shape given), "box" or "mesh"."""
    return element.shape or "sphere"


def rpy_rotation(roll, pitch, yaw, backend) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll) (3, 3) in the back-end: the shape's axes in the body's."""
    (cr, sr), (cp, sp), (cy, sy) = (backend.cos_sin(a) for a in (roll, pitch, yaw))
    R = backend.zeros((3, 3))
    rows = (
        (cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr),
        (sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr),
        (-sp, cp * sr, cp * cr),
    )
    for i, row in enumerate(rows):
        for j, entry in enumerate(row):
            R[i, j] = entry
    return R


def shape_vertices(element, value, backend) -> np.ndarray:
    """(V, 3) the centres of the shape's contact spheres relative to its body point, in the body's axes, with
    `value` evaluating the element's expressions in the back-end: a sphere's one centre, a box's eight corners, a
    mesh's vertices."""
    shape = shape_of(element)
    if shape == "sphere":
        return backend.zeros((1, 3))
    rows = [[value(x) for x in row] for row in element.vertices] if shape == "mesh" else None
    if shape == "box":
        half = [value(x) for x in element.half_extents]
        rows = [[s * h for s, h in zip(signs, half, strict=True)] for signs in CORNER_SIGNS]
    local = backend.zeros((len(rows), 3))
    for k, row in enumerate(rows):
        for j in range(3):
            local[k, j] = row[j]
    if element.rpy is None:
        return local
    R = rpy_rotation(*(value(x) for x in element.rpy), backend)
    return (local[:, None, :] * R[None, :, :]).sum(axis=2)


def hull_vertices(points: np.ndarray) -> np.ndarray:
    """The vertices (V, 3) of the convex hull of points (N, 3), in the order they come (scipy's Qhull); a flat or
    degenerate cloud raises ValueError."""
    from scipy.spatial import ConvexHull, QhullError

    points = np.asarray(points, float)
    try:
        hull = ConvexHull(points)
    except (QhullError, ValueError) as error:
        raise ValueError(f"the mesh's points span no volume (a flat or too small mesh): {error}") from error
    return points[np.sort(hull.vertices)]


def reduced_hull(vertices: np.ndarray, most: int, first: np.ndarray | None = None) -> np.ndarray:
    """At most `most` of the vertices (V, 3) of a convex hull, in their order, whose hull is near the given one:
    the vertices indexed by `first` (a foot's sole), those farthest along twelve directions spread over the sphere
    (a Fibonacci lattice, none along an axis, so that a face square to an axis leaves no tie), then, one at a
    time, the vertex farthest outside the hull of those taken (a greedy fit: what stays outside is at most the
    last distance added). Every one lies on the given hull, so the reduced hull lies inside it."""
    from scipy.spatial import ConvexHull

    vertices = np.asarray(vertices, float)
    if len(vertices) <= most:
        return vertices
    k = np.arange(12) + 0.5
    z = 1 - k / 6
    turn = np.pi * (3 - np.sqrt(5)) * k
    directions = np.stack([np.sqrt(1 - z * z) * np.cos(turn), np.sqrt(1 - z * z) * np.sin(turn), z], axis=1)
    seeded = [] if first is None else [int(i) for i in first]
    taken = list(dict.fromkeys(seeded + [int(i) for i in np.argmax(vertices @ directions.T, axis=0)]))[:most]
    while len(taken) < most:
        facets = ConvexHull(vertices[taken]).equations  # outward n·x + d ≤ 0 inside
        outside = (vertices @ facets[:, :3].T + facets[:, 3]).max(axis=1)
        outside[taken] = -np.inf
        taken.append(int(np.argmax(outside)))
    return vertices[np.sort(taken)]


def hull_faces(vertices: np.ndarray) -> np.ndarray:
    """Triangles (F, 3) of indices into `vertices` covering their convex hull, outward (for drawing)."""
    from scipy.spatial import ConvexHull

    vertices = np.asarray(vertices, float)
    hull = ConvexHull(vertices)
    faces = hull.simplices.copy()
    centre = vertices.mean(axis=0)
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), a - centre) < 0
    faces[inward] = faces[inward][:, ::-1]
    return faces


def combined(per_vertex: list[dict]) -> dict:
    """One contact's results from its vertices' (each a dict of (N,) "depth", "normal" and (N, 3) "force",
    "friction", "point", "slip", as ContactLaw.columns reads them): the forces summed, the deepest penetration, and
    as its point the centre of pressure, the vertices' points weighted by their normal forces (the deepest vertex's
    where none is loaded), with the slip the same mean (a rigid body's slip there, its velocity being affine)."""
    if len(per_vertex) == 1:
        return per_vertex[0]
    depth = np.stack([v["depth"] for v in per_vertex])  # (V, N)
    loads = np.stack([v["normal"] for v in per_vertex])
    total = loads.sum(axis=0)
    deepest = np.argmax(depth, axis=0)
    weights = np.where(total > 0, loads / np.where(total > 0, total, 1.0), np.arange(len(depth))[:, None] == deepest)
    out = {"depth": depth.max(axis=0), "normal": total}
    for key in ("force", "friction"):
        out[key] = sum(v[key] for v in per_vertex)
    for key in ("point", "slip"):
        out[key] = np.einsum("vn,vni->ni", weights, np.stack([v[key] for v in per_vertex]))
    return out


@dataclass(frozen=True)
class ShapePoint:
    """One contact point of a ground contact (a sphere's one, a box's or a mesh's vertex) or of a contact pair with
    a box or a mesh (a vertex, or a sphere's centre, against the other side's solid), as the rigid model takes its
    contacts (dynamics/rigid_contact.py): a point, its normal and two bodies, each its own point in the cone
    problem, with its law's plane or road (a ground contact's), friction and restitution."""

    law: Any  # a ContactLaw or a ContactPairLaw (force_laws/contact_law.py, contact_pair_law.py)
    vertex: int  # the law's contact point: `law.placed(st, vertex)`

    @property
    def element(self):
        return self.law.element

    @property
    def forces(self):
        return self.law.forces

    def placed(self, st) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Penetration δ (N,), the point c (N, 3), its Jacobian (N, 3, n) and the normal (ContactLaw.placed)."""
        return self.law.placed(st, self.vertex)

    def plane(self) -> tuple[np.ndarray, np.ndarray]:
        return self.law.plane()

    def values(self) -> dict:
        return self.law.values()


def point_contacts(law) -> list[ShapePoint]:
    """The contact points of a ground contact's law (a ContactLaw): its shape's, one per vertex."""
    return [ShapePoint(law, k) for k in range(len(law.vertices()))]


# ---------------------------------------------------------------------------------------------- pairs of shapes
@dataclass(frozen=True)
class PairSide:
    """One side of a contact pair as a shape (a Contact's shape fields): its body and point, its radius (a
    sphere's, or the rounding of a box's or mesh's vertices and faces), the shape and its own fields."""

    body: str
    point: str
    radius: Any
    shape: str | None
    half_extents: Any
    vertices: Any
    rpy: Any


def pair_side(element, k: int) -> PairSide:
    """Side k (1 or 2) of a contact pair, from its fields with that suffix."""
    keys = ("body", "point", "radius", "shape", "half_extents", "vertices", "rpy")
    return PairSide(*(getattr(element, f"{key}{k}") for key in keys))


def mesh_planes(vertices) -> tuple[np.ndarray, np.ndarray]:
    """The face planes of the convex hull of `vertices` (V, 3): outward unit normals (F, 3) and offsets (F,), a
    point x inside where n·x ≤ d for every face; coplanar triangles of one face kept once."""
    planes = _hull_planes(_rows(vertices))
    return planes[:, :3], planes[:, 3]


@functools.cache
def _hull_planes(rows: tuple) -> np.ndarray:
    """(F, 4): each face's outward unit normal and offset d (n·x ≤ d inside), once per mesh (every evaluation of a
    pair's force asks for them)."""
    from scipy.spatial import ConvexHull

    equations = ConvexHull(np.asarray(rows, float)).equations  # n·x + e ≤ 0 inside
    planes = np.unique(np.round(equations, 12), axis=0)
    normals = planes[:, :3] / np.linalg.norm(planes[:, :3], axis=1)[:, None]
    return np.column_stack([normals, -planes[:, 3] / np.linalg.norm(planes[:, :3], axis=1)])


@functools.cache
def _hull_rows(rows: tuple) -> list[list[float]]:
    return hull_vertices(np.asarray(rows, float)).tolist()


def vertex_count(side) -> int:
    """How many contact spheres a shape has: a sphere 1, a box 8, a mesh its hull's corners."""
    shape = shape_of(side)
    return 1 if shape == "sphere" else 8 if shape == "box" else len(_hull_rows(_rows(side.vertices)))


def _rows(vertices) -> tuple:
    return tuple(tuple(float(x) for x in row) for row in vertices)


def shape_faces(side: PairSide, value, backend) -> tuple[np.ndarray, np.ndarray]:
    """A box's or mesh's face planes relative to its centre, in its body's axes: outward unit normals (F, 3) and
    offsets (F,) in the back-end; a box's first three normals are its own axes (`polytope_distance` reads them)."""
    if shape_of(side) == "box":
        half = [value(x) for x in side.half_extents]
        normals, offsets = np.vstack([np.eye(3), -np.eye(3)]), half + half
    else:
        normals, offsets = mesh_planes(side.vertices)
    local = backend.zeros((len(normals), 3))
    for k, row in enumerate(normals):
        for j in range(3):
            local[k, j] = float(row[j])
    if side.rpy is not None:
        R = rpy_rotation(*(value(x) for x in side.rpy), backend)
        local = (local[:, None, :] * R[None, :, :]).sum(axis=2)
    return local, backend.asarray(list(offsets))


def pair_vertices(side: PairSide, value, backend) -> np.ndarray:
    """The contact spheres' centres (V, 3) of a pair's side relative to its point, body axes: a sphere's centre, a
    box's corners, the corners of a mesh's convex hull (a point inside it never touches first)."""
    if shape_of(side) == "mesh":
        side = PairSide(*(_hull_rows(_rows(side.vertices)) if key == "vertices" else getattr(side, key)
                          for key in PairSide.__dataclass_fields__))  # fmt: skip
    return shape_vertices(side, value, backend)


def larger(x, a, b):
    """a where x > 0, b elsewhere, elementwise in any back-end (x (N,), a and b (N,) or (N, 3)): numpy's where,
    CasADi's if_else on traced symbols, a comparison on other numbers."""
    if isinstance(x, np.ndarray) and x.dtype.kind != "O":
        return np.where((x > 0).reshape(x.shape + (1,) * (np.ndim(a) - x.ndim)), a, b)
    a, b = np.broadcast_arrays(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
    out = np.empty(a.shape, dtype=object)
    for index in np.ndindex(a.shape):
        c = x[index[0]]
        out[index] = casadi.if_else(c > 0, a[index], b[index]) if isinstance(c, casadi.SX) else (
            a[index] if c > 0 else b[index])  # fmt: skip
    return out


def polytope_distance(side: PairSide, y, faces: tuple, sqrt, regular, gaps=None) -> tuple:
    """Signed distance s (N,) of points y (N, 3; the body's axes, relative to the shape's centre) from a box or a
    mesh, and the outward unit normal (N, 3, body axes) along which it grows.

    The deepest face: s = max_f (n_f·y − d_f) with its normal. Inside the solid this is exact (the distance to the
    nearest face, negative); outside it is exact where the nearest point of the surface lies inside a face, and
    beyond an edge or a corner it is less than the distance (the faces' planes reach out further than the solid).
    A box outside takes its exact distance instead: |y − clamp(y)| in its axes, along y − clamp(y), regularised by
    `regular` (m) so that the normal stays finite; a mesh keeps the deepest face's here (`mesh_outside` makes it
    exact).

    `gaps` (N, F): for a vertex of a box or mesh, its solid's overlap with this one along each face's normal
    (`solid_gaps`). Inside, the vertex is then pushed out along the face whose s_f − gap_f is the largest: the
    nearest face among those along which the solids overlap least (the separating-axis test's least-penetration
    face, Gottschalk, Lin and Manocha 1996), not the nearest alone. A block's corner that has just slid in over a
    box's side edge, 1 mm below its top and 0.1 mm inside the side face, is pushed up with the block's whole
    overlap, not sideways out of a block that the side face cannot separate (docs/contact.md, the hand-off)."""
    normals, offsets = faces
    s = (y[:, None, :] * normals[None, :, :]).sum(axis=2) - offsets[None, :]  # (N, F)
    best, normal = s[:, 0], np.broadcast_to(normals[0], y.shape)
    for f in range(1, normals.shape[0]):
        normal = larger(s[:, f] - best, np.broadcast_to(normals[f], y.shape), normal)
        best = best + positive(s[:, f] - best)
    if gaps is not None:
        best, normal = _least_overlap(s, gaps, normals, best, normal, y.shape)
    if shape_of(side) != "box":
        return best, normal
    u = s[:, :3] + offsets[None, :3]  # the box's own coordinates
    out = positive(u - offsets[None, :3]) - positive(-u - offsets[None, :3])  # y − clamp(y), box axes
    away = (out[:, :, None] * normals[None, :3, :]).sum(axis=1)
    distance = sqrt((out * out).sum(axis=1) + regular * regular)
    return larger(best, distance, best), larger(best, away / distance[:, None], normal)


def _least_overlap(s, gaps, normals, best, normal, shape) -> tuple:
    """Inside (the nearest face's s < 0): the plane distance and normal of the face with the largest s_f − gap_f;
    outside, `best` and `normal` as they are (polytope_distance)."""
    score, chosen, along = s[:, 0] - gaps[:, 0], s[:, 0], np.broadcast_to(normals[0], shape)
    for f in range(1, normals.shape[0]):
        gain = s[:, f] - gaps[:, f] - score
        chosen, along = larger(gain, s[:, f], chosen), larger(gain, np.broadcast_to(normals[f], shape), along)
        score = score + positive(gain)
    return larger(best, best, chosen), larger(best, normal, along)


def solid_gaps(corners, faces: tuple):
    """How far a solid with corners (N, V, 3) overlaps another along each of its faces' normals (N, F): the face's
    offset less the least height of the corners along its outward normal (faces: polytope_distance's, the corners in
    the same axes)."""
    normals, offsets = faces
    heights = (corners[:, :, None, :] * normals[None, None, :, :]).sum(axis=3)  # (N, V, F)
    lowest = heights[:, 0, :]
    for v in range(1, heights.shape[1]):
        lowest = least(lowest, heights[:, v, :])
    return offsets[None, :] - lowest


# ------------------------------------------------------------------------ edges, and a mesh's exact distance
def least(x, y):
    """min(x, y), elementwise, in any back-end."""
    return x - positive(x - y)


def _magnitude(x):
    return positive(x) + positive(-x)


def shape_rotation(side: PairSide, value, backend) -> np.ndarray | None:
    """The shape's axes in its body's (3, 3; rpy_rotation), None when it has no rpy."""
    return None if side.rpy is None else rpy_rotation(*(value(x) for x in side.rpy), backend)


@functools.cache
def _hull_triangles(rows: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The convex hull of a mesh's hull corners (`_hull_rows`, their order) as outward triangles (F, 3) of indices
    into them, and its edges (E, 2): the sides of those triangles but the diagonals of a face split into several
    (between two coplanar triangles: no edge of the solid)."""
    corners = np.asarray(_hull_rows(rows), float)
    triangles = hull_faces(corners)
    a, b, c = (corners[triangles[:, k]] for k in range(3))
    normals = np.cross(b - a, c - a)
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    sides: dict[tuple[int, int], list[int]] = {}
    for f, triangle in enumerate(triangles):
        for k in range(3):
            key = tuple(sorted((int(triangle[k]), int(triangle[(k + 1) % 3]))))
            sides.setdefault(key, []).append(f)
    size = np.abs(corners).max()
    edges = [key for key, (f, g) in sides.items() if np.linalg.norm(normals[f] - normals[g]) > 1e-9 * max(size, 1)]
    return triangles, np.array(sorted(edges), int).reshape(-1, 2)


def shape_edges(side: PairSide, value) -> list[tuple[list, list]]:
    """A box's twelve or a mesh's hull edges, each (start, end) relative to the shape's centre in the shape's own
    axes (before its rpy): a box's as values of its half extents, a mesh's as floats."""
    if shape_of(side) == "mesh":
        rows = _rows(side.vertices)
        corners = _hull_rows(rows)
        return [(corners[i], corners[j]) for i, j in _hull_triangles(rows)[1]]
    half = [value(x) for x in side.half_extents]
    edges = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        for sj in (-1, 1):
            for sk in (-1, 1):
                start, end = [0, 0, 0], [0, 0, 0]
                start[i], end[i] = -half[i], half[i]
                start[j] = end[j] = sj * half[j]
                start[k] = end[k] = sk * half[k]
                edges.append((start, end))
    return edges


def shape_centre(side: PairSide) -> list[float]:
    """A point inside the solid, relative to its centre in its own axes: the centre of a box, the mean of a mesh's
    hull corners (a mesh's point may lie outside its hull)."""
    if shape_of(side) != "mesh":
        return [0.0, 0.0, 0.0]
    return np.asarray(_hull_rows(_rows(side.vertices)), float).mean(axis=0).tolist()


def facing_edge(origin, axes, half, i: int, n, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ends (N, 3) of edge k (0 or 1) of a box's four edges along its axis i on its face that faces most along
    n (N, 3): that face's axis j ≠ i has the largest |n·a_j|, its side the sign of n·a_j, and its two edges along
    i lie at ± the third half extent. Two edges, not the one supporting edge: where the box lies flat on the other
    (n along a face's normal) the supporting edge is undecided between the face's two, and both touch. `axes`
    (N, 3, 3): the box's axes as columns, world; `half` its half extents."""
    j, l = (i + 1) % 3, (i + 2) % 3
    along_j, along_l = dot(n, axes[:, :, j]), dot(n, axes[:, :, l])
    on_j = _magnitude(along_j) - _magnitude(along_l)  # > 0: the face is square to axis j
    side = 1.0 if k else -1.0
    offset_j = larger(on_j, larger(along_j, half[j] + 0 * along_j, -half[j] + 0 * along_j), side * half[j] + 0 * on_j)
    offset_l = larger(on_j, side * half[l] + 0 * on_j, larger(along_l, half[l] + 0 * along_l, -half[l] + 0 * along_l))
    middle = origin + offset_j[:, None] * axes[:, :, j] + offset_l[:, None] * axes[:, :, l]
    reach = half[i] * axes[:, :, i]
    return middle - reach, middle + reach


def edge_crossing(ends_a: tuple, ends_b: tuple, inner_a, inner_b, radii: tuple, overlap, sqrt) -> tuple:
    """Overlap δ (N,), unit normal n (N, 3) from solid A towards solid B and contact point c (N, 3) of edge A (its
    ends (N, 3) each) against edge B, with inner_a, inner_b (N, 3) points inside A and B, radii the rounding of
    A's and B's edges and `overlap` (N,) the solids' least overlap D along their faces' normals.

    The closest points p_A = a0 + s u, p_B = b0 + t v of the edges' lines and n = ±u × v / |u × v| turned away
    from A (n·(p_A − inner_a) ≥ 0) give the lines' overlap n·(p_A − p_B) + r_A + r_B: the penetration of two
    crossing edges. It counts where the crossing lies within both edges and the edges face each other, and without
    a decision on the state the overlap is capped by how far the crossing lies inside each edge (|u| s, |u| (1 − s),
    |v| t, |v| (1 − t)) and how far each edge lies out along n from its solid's inside point: δ goes to 0 as the
    crossing reaches an edge's end (where the vertex's contact takes over) or n turns square to the line from a
    solid's inside point, and a pair of edges apart along n or crossing beyond an end has δ < 0 (no force). The cap
    2 D − δ keeps a crossing only where its axis penetrates no deeper than the faces' axes (the separating-axis
    test's least-penetration axis, Gottschalk, Lin and Manocha 1996): δ where δ ≤ D, 0 at δ = 2 D. Where
    the lines' overlap is the least, its rate is the relative velocity of p_B and p_A along −n (the closest points
    are stationary), so the force is the gradient of the law's potential there."""
    a0, a1 = ends_a
    b0, b1 = ends_b
    u, v, w = a1 - a0, b1 - b0, a0 - b0
    uu, uv, vv, uw, vw = dot(u, u), dot(u, v), dot(v, v), dot(u, w), dot(v, w)
    axis = cross(u, v)
    parallel = 1e-24 * uu * vv  # keeps |u × v|² from 0, and puts a parallel pair's crossing at s = t = −1: apart
    square = dot(axis, axis) + parallel
    s = (uv * vw - vv * uw - parallel) / square
    t = (uu * vw - uv * uw - parallel) / square
    p_a, p_b = a0 + s[:, None] * u, b0 + t[:, None] * v
    across = w - (uw / uu)[:, None] * u  # from b0 square to edge A: the normal parallel edges fall back on
    fallback = across / sqrt(dot(across, across) + 1e-300)[:, None]
    unit = axis / sqrt(square)[:, None]
    unit = unit + (1 - dot(unit, unit))[:, None] * fallback  # a unit normal for the rigid model's frames
    height_a = dot(unit, p_a - inner_a)
    normal = larger(height_a, unit, -unit)
    height_a = _magnitude(height_a)
    height_b = dot(normal, inner_b - p_b)
    depth = dot(normal, p_a - p_b) + radii[0] + radii[1]
    for cap in (2 * overlap - depth, height_a, height_b):
        depth = least(depth, cap)
    # within both edges the lines' overlap as it is: at an edge's end the end's vertex, inside the other solid by as
    # much along its least-overlap face, takes over (polytope_distance); at and beyond it, capped by minus the
    # distance past the end
    length_a, length_b = sqrt(uu), sqrt(vv)
    within = least(least(length_a * s, length_a * (1 - s)), least(length_b * t, length_b * (1 - t)))
    depth = larger(within, depth, least(depth, within))
    point = (p_a + p_b) / 2 + (radii[0] - radii[1]) / 2 * normal
    return depth, normal, point


def mesh_distance(y, corners, triangles: np.ndarray, edges: np.ndarray, sqrt, regular) -> tuple:
    """The exact distance (N,) of points y (N, 3) outside a convex mesh from it and the unit normal (N, 3) from the
    mesh's nearest point towards y, with `corners` (V, 3) the hull's corners in y's axes and triangles (F, 3), edges
    (E, 2) indices into them (every triangle side, so that a face split in several is covered).

    The nearest point of a convex solid to a point outside lies in a face (where y's projection on the face's
    plane falls inside the face, on the side of the plane facing y) or on an edge (its nearest point, clamped to
    the ends, which covers the corners): the least of those candidates, taken with smooth selections (no decision
    on y but which candidate is nearer, where both give the same distance). Regularised by `regular` (m) as the
    box's, so that the normal stays finite on the surface."""
    far = 1e300
    best, nearest = None, None
    for i, j in edges:
        a, b = corners[i], corners[j]
        span = b - a
        s = dot(y - a, span) / dot(span, span)
        s = positive(s - positive(s - 1))
        candidate = a + s[:, None] * span
        gap = y - candidate
        squared = dot(gap, gap)
        if best is None:
            best, nearest = squared, candidate
        else:
            nearest = larger(best - squared, candidate, nearest)
            best = least(best, squared)
    for triangle in triangles:
        a, b, c = (corners[k] for k in triangle)
        normal = cross(b - a, c - a)
        normal = normal / sqrt(dot(normal, normal))
        plane = dot(y - a, normal)
        outside = None  # how far y's projection lies outside the triangle: > 0 beyond one of its sides
        for p, q in ((a, b), (b, c), (c, a)):
            margin = dot(y - p, cross(q - p, normal))
            outside = margin if outside is None else outside + positive(margin - outside)
        squared = larger(outside, far + 0 * plane, larger(plane, plane * plane, far + 0 * plane))
        nearest = larger(best - squared, y - plane[:, None] * normal, nearest)
        best = least(best, squared)
    distance = sqrt(best + regular * regular)
    return distance, (y - nearest) / distance[:, None]


def mesh_outside(side: PairSide, y, inside: tuple, value, backend, regular) -> tuple:
    """polytope_distance's (s, normal) of a mesh made exact outside: where s > 0 the distance and normal of
    `mesh_distance`, inside the deepest face's as they are."""
    best, normal = inside
    rows = _rows(side.vertices)
    triangles, edges = _hull_triangles(rows)
    corners = pair_vertices(side, value, backend)
    distance, away = mesh_distance(y, corners, triangles, _all_sides(triangles), backend.sqrt, regular)
    return larger(best, distance, best), larger(best, away, normal)


def _all_sides(triangles: np.ndarray) -> np.ndarray:
    sides = {tuple(sorted((int(t[k]), int(t[(k + 1) % 3])))) for t in triangles for k in range(3)}
    return np.array(sorted(sides), int)
