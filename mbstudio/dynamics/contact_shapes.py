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

from dataclasses import dataclass
from typing import Any

import numpy as np

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
    """One contact point of a ground contact (a sphere's one, a box's or a mesh's vertex), as the rigid model
    takes its contacts (dynamics/rigid_contact.py): a point, its normal and two bodies, each its own point in the
    cone problem, with its law's plane or road, friction and restitution."""

    law: Any  # a ContactLaw (force_laws/contact_law.py)
    vertex: int

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
