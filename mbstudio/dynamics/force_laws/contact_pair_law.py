"""A compliant contact between a sphere on one body and a sphere on another (docs/contact.md, "Contacts between
bodies"): the law of the sphere–plane contact (contact_law.py) along the line of the two centres.

With P1, P2 the centres and d = P2 − P1, the spheres overlap by δ = r1 + r2 − ρ, where ρ = sqrt(|d|² + ε²) is
their distance regularised by ε = 1e-9 (r1 + r2): it differs from |d| by less than a rounding error at any
distance the spheres can touch from, and keeps n = d / ρ and the force finite (zero) when the centres meet. The
normal force f_n = max(0, k δ^n (1 + 3/2 c_d δ̇)) pushes body2 along n and body1 back; friction
f_t = −μ f_n v_t / sqrt(|v_t|² + v_s²) resists v_t, the tangential part of the velocity of body2's point at c
relative to body1's point there, with c = P1 + (r1 − δ/2) n midway through the overlap. Both bodies take the
contact force F = f_n n + f_t at c, body2 +F and body1 −F: Q = (J2(c) − J1(c))ᵀ F.

Energy: (J2(c) − J1(c)) q̇ · n = ḋ · n = −δ̇ at any point c on the line of centres (the spins' parts there are
normal to n), so the elastic part's power is exactly −d/dt of V = k δ^(n+1) / (n+1), as ρ is the smooth function
whose gradient n is; damping and friction only ever take energy out, as for the ground contact.

A capsule on body2 (the segment from A = point2 to B = end2, swept by r2) meets sphere 1 at the segment's point
nearest P1, P2 = A + s (B − A) with s = clamp((P1 − A)·(B − A) / |B − A|², 0, 1): the same law with that P2. The
distance to it is the least over s, so its rate is ḋ · n with P2 taken as a point of body2 at fixed s (inside the
segment ∂ρ/∂s = 0; at an end s stays put): the energy argument above holds unchanged.

A box or a convex mesh on either side (contact_shapes.py) meets the other side through contact points, each a
sphere (a vertex with the side's radius, or a sphere side's centre) against the other side's solid: its signed
distance s from that solid (contact_shapes.polytope_distance: the deepest face, a box's exact distance outside)
gives the overlap δ = r_v + r_o − s (the other side's radius rounding its faces) along the face's outward normal;
outside a mesh s is its exact distance too (contact_shapes.mesh_outside). A sphere meets a box or mesh at its
centre; two boxes or meshes meet by vertex–face contacts, each vertex of one against the other's faces, both ways,
and by edge–edge contacts where their edges cross (contact_shapes.edge_crossing: two blocks lying crossed like a
plus sign, no vertex inside the other solid), along the edges' common normal from body1 to body2. Every contact
point is oriented as the spheres' are: its normal n from body1 towards body2, its Jacobian body2's point at c
relative to body1's, c = V − (r_v − δ/2) n midway through the overlap from the vertex V's surface (n's sign turned
when the vertex is body1's). Within one face's region s is that face's plane distance, whose rate is the relative
velocity along n at V (and at any c on the line through V along n): the force is the gradient of the same
potential, and the energy argument holds where the deepest face does not change.
"""

from __future__ import annotations

import numpy as np

from ...model.document import ContactPair
from ...numerics.spatial import cross, dot
from ..contact_shapes import (
    ShapePoint,
    combined,
    edge_crossing,
    facing_edge,
    larger,
    mesh_outside,
    pair_side,
    pair_vertices,
    polytope_distance,
    shape_centre,
    shape_edges,
    shape_faces,
    shape_of,
    shape_rotation,
    solid_gaps,
    vertex_count,
)
from .base import FORMATS, Evaluator, positive, register
from .contact_law import CompliantContact, ContactLaw

_REGULAR = 1e-9  # ε of the centres' distance, per unit of r1 + r2
_FLOOR = 1e-30  # m, ε's least: two sharp shapes' (r1 + r2 = 0) box distance keeps a finite normal
_VALUES = ("radius1", "radius2", "stiffness", "exponent", "dissipation", "friction", "stiction_velocity")


@register
class ContactPairLaw(CompliantContact):
    """Two spheres (radii r1, r2 at body points P1, P2) overlapping by δ = r1 + r2 − |P2 − P1|: the Hunt–Crossley
    normal force and regularised Coulomb friction at c, equal and opposite on the two bodies;
    V = k δ^(n+1) / (n+1)."""

    type = ContactPair.type

    def __init__(self, element: ContactPair, forces: Evaluator) -> None:
        super().__init__(element, forces)
        self._fields: tuple | None = None  # the fields `values` last evaluated, and what it made of them
        self._values: dict = {}
        self.shapes = (shape_of(pair_side(element, 1)), shape_of(pair_side(element, 2)))

    def values(self) -> dict:
        """The element's values in the back-end (floats, or the compiled engine's parameters), evaluated once for
        the fields as they are: an evaluation asks for them where it places the capsule's point, the line of centres
        and the law, and the parameters they name do not change (a changed field is evaluated again)."""
        fields = tuple(getattr(self.element, key) for key in _VALUES)
        if self._fields != fields:
            self._fields = fields
            self._values = {key: self.forces.value(x) for key, x in zip(_VALUES, fields, strict=True)}
        return self._values

    def nearest(self, centre1, start, end):
        """The point of the segment from `start` to `end` (N, 3) nearest `centre1` (N, 3) (a capsule's axis); the
        segment's length regularised as the distance is, so that a capsule of zero length is a sphere."""
        v = self.values()
        reach = v["radius1"] + v["radius2"]
        axis = end - start
        s = dot(centre1 - start, axis) / (dot(axis, axis) + (_REGULAR * reach) ** 2)
        s = positive(s - positive(s - 1))  # clamp to [0, 1], in any back-end
        return start + s[:, None] * axis

    def centre2(self, point, st=None, motion=None):
        """Sphere 2's centre (N, 3): point2, or the capsule's point nearest sphere 1's centre `point`."""
        e = self.element
        if st is not None:
            centre = self.forces.point(st, e.body2, e.point2)[0]
            end = None if e.end2 is None else self.forces.point(st, e.body2, e.end2)[0]
        else:
            centre = motion.point(e.body2, e.point2)[0]
            end = None if e.end2 is None else motion.point(e.body2, e.end2)[0]
        return centre if end is None else self.nearest(point, centre, end)

    def line(self, centre1, centre2, sqrt) -> tuple:
        """Overlap δ (N,), unit normal n from sphere 1 to sphere 2 (N, 3) and contact point c (N, 3)."""
        v = self.values()
        reach = v["radius1"] + v["radius2"]
        d = centre2 - centre1
        distance = sqrt(dot(d, d) + (_REGULAR * reach) ** 2)
        normal = d / distance[:, None]
        depth = reach - distance
        point = centre1 + (v["radius1"] - depth / 2)[:, None] * normal
        return depth, normal, point

    def spheres(self) -> bool:
        """Whether both sides are spheres (or sphere 1 and a capsule): one contact point on the line of centres."""
        return self.shapes == ("sphere", "sphere")

    def points(self) -> list:
        """The contact points the rigid model holds: the pair itself for two spheres, else one ShapePoint each (the
        vertices' against the faces, then the edges' crossings)."""
        return [self] if self.spheres() else [ShapePoint(self, k) for k in range(len(self._keys()))]

    def pressing(self, st) -> list[tuple]:
        """`placed`'s four for every contact point the compliant law presses: the vertices' and the crossings'."""
        shared: dict = {}  # the sides' frames and the faces' overlap, once for all crossings
        return self.placements(st) + [self._shape_point(st, key, shared) for key in self._crossings()]

    def placements(self, st) -> list[tuple]:
        """`placed`'s four for each contact point: the line of centres's one, or each vertex's against a face."""
        if self.spheres():
            return [self.placed(st)]
        shared: dict = {}  # each side's overlap along the other's faces, once for all its vertices
        return [self._shape_point(st, side, shared) for side in self._sides()]

    def placed(self, st, index: int = 0) -> tuple:
        """δ (N,), c (N, 3), J2(c) − J1(c) (N, 3, n) and n (N, 3) at the poses `st`, of contact point `index`."""
        if not self.spheres():
            return self._shape_point(st, self._keys()[index])
        e, sqrt = self.element, self.forces.mech.backend.sqrt
        centre1 = self.forces.point(st, e.body1, e.point1)[0]
        depth, normal, point = self.line(centre1, self.centre2(centre1, st=st), sqrt)
        return depth, point, self._relative_jacobian(st, point), normal

    def _relative_jacobian(self, st, point):
        """J2(c) − J1(c) (N, 3, n): body2's point at c relative to body1's."""
        e, tree = self.element, self.forces.mech.tree
        return tree.point_jacobian(st, tree.body_index(e.body2), point) - tree.point_jacobian(
            st, tree.body_index(e.body1), point
        )

    # ------------------------------------------------------------------ shapes
    def _sides(self) -> list[tuple[int, int]]:
        """(mover, vertex) of each contact point: a vertex (or a sphere's centre) of side `mover` against the other
        side's solid; a sphere's centre only, against a box or mesh; both ways between two boxes or meshes."""
        movers = [k for k in (1, 2) if self.shapes[k - 1] == "sphere"] or [1, 2]
        return [(k, v) for k in movers for v in range(vertex_count(pair_side(self.element, k)))]

    def _crossings(self) -> list[tuple]:
        """The pairs of edges whose crossings are contact points, between two boxes or meshes (none with a sphere):
        between two boxes, for each of the nine pairs of their axes (i, j), the two edges along i of box 1's face
        facing box 2 against the two along j of box 2's face facing box 1 (36 of the 144 pairs, chosen on the state:
        contact_shapes.facing_edge); with a mesh, every edge of one against every edge of the other."""
        if "sphere" in self.shapes:
            return []
        if self.shapes == ("box", "box"):
            return [("facing", i, j, k, m) for i in range(3) for j in range(3) for k in (0, 1) for m in (0, 1)]
        counts = [len(shape_edges(pair_side(self.element, k), lambda x: 0.0)) for k in (1, 2)]
        return [("edges", a, b) for a in range(counts[0]) for b in range(counts[1])]

    def _keys(self) -> list[tuple]:
        """Every contact point's key: (mover, vertex) of each vertex, then each crossing's."""
        return self._sides() + self._crossings()

    def _located(self, poses, key: tuple, value, geometry, backend, shared: dict | None = None) -> tuple:
        """δ, n and c of the contact point `key`: a vertex's against a face, or an edges' crossing (`shared`: what
        the crossings at the same poses have in common, filled by the first)."""
        shared = {} if shared is None else shared
        if isinstance(key[0], str):
            return self._crossing(poses, key, value, geometry, backend, shared)
        return self._geometry(poses, *key, value, geometry, backend, shared)

    def _frame(self, poses, k: int, value, geometry, backend) -> tuple:
        """Side k's shape centre (N, 3) and axes (N, 3, 3, columns), world, and its inside point (N, 3)."""
        side = pair_side(self.element, k)
        p, R = poses(side.body)
        turn = shape_rotation(side, value, backend)
        axes = R if turn is None else (R[:, :, :, None] * turn[None, None, :, :]).sum(axis=2)
        centre = p + (R * geometry.point(self.forces.mech.model.body(side.body), side.point)[None, None, :]).sum(axis=2)
        inside = centre + (axes * np.asarray(shape_centre(side))[None, None, :]).sum(axis=2)
        return centre, axes, inside

    def _crossing(self, poses, key: tuple, value, geometry, backend, shared: dict) -> tuple:
        """δ, n (body1 to body2) and c of the crossing of an edge of side 1 with an edge of side 2."""
        v = self.values()
        radii = (v["radius1"], v["radius2"])
        if "frames" not in shared:
            shared["frames"] = [self._frame(poses, k, value, geometry, backend) for k in (1, 2)]
            shared["overlap"] = self._face_overlap(poses, value, geometry, backend) + radii[0] + radii[1]
        (centre1, axes1, inside1), (centre2, axes2, inside2) = shared["frames"]
        if key[0] == "facing":
            _, i, j, k, m = key
            axis = cross(axes1[:, :, i], axes2[:, :, j])  # the crossing's normal, turned towards box 2
            axis = larger(dot(axis, inside2 - inside1), axis, -axis)
            half1, half2 = ([value(x) for x in pair_side(self.element, n).half_extents] for n in (1, 2))
            ends1 = facing_edge(centre1, axes1, half1, i, axis, k)
            ends2 = facing_edge(centre2, axes2, half2, j, -axis, m)
        else:
            ends1, ends2 = (self._edge(centre, axes, n, key[n], value)
                            for centre, axes, n in ((centre1, axes1, 1), (centre2, axes2, 2)))  # fmt: skip
        return edge_crossing(ends1, ends2, inside1, inside2, radii, shared["overlap"], backend.sqrt)

    def _face_overlap(self, poses, value, geometry, backend):
        """The least overlap (N,) of the two solids along the faces' normals (the separating-axis test's face
        axes): over each face of either side, how far the other side's deepest vertex lies inside its plane."""
        model = self.forces.mech.model
        placed = []
        for k in (1, 2):
            side = pair_side(self.element, k)
            p, R = poses(side.body)
            centre = p + (R * geometry.point(model.body(side.body), side.point)[None, None, :]).sum(axis=2)
            corners = centre[:, None, :] + (R[:, None, :, :] * pair_vertices(side, value, backend)[None, :, None, :]
                                            ).sum(axis=3)  # fmt: skip
            normals, offsets = shape_faces(side, value, backend)
            placed.append((centre, corners, (R[:, None, :, :] * normals[None, :, None, :]).sum(axis=3), offsets))
        least = None
        for (centre, _, normals, offsets), (_, corners, _, _) in ((placed[0], placed[1]), (placed[1], placed[0])):
            for f in range(normals.shape[1]):
                heights = dot(corners - centre[:, None, :], normals[:, f, None, :])  # (N, V)
                lowest = heights[:, 0]
                for h in range(1, heights.shape[1]):
                    lowest = lowest - positive(lowest - heights[:, h])
                gap = offsets[f] - lowest
                least = gap if least is None else least - positive(least - gap)
        return least

    def _edge(self, centre, axes, k: int, index: int, value) -> tuple:
        """The world ends (N, 3) of edge `index` of side k's shape (contact_shapes.shape_edges)."""
        ends = shape_edges(pair_side(self.element, k), value)[index]
        return tuple(centre + (axes * np.asarray(end)[None, None, :]).sum(axis=2) for end in ends)

    def _geometry(self, poses, mover: int, vertex: int, value, geometry, backend, shared: dict) -> tuple:
        """Overlap δ (N,), normal n from body1 to body2 (N, 3) and point c (N, 3) of one contact point, with
        `poses(body)` giving a body's origin (N, 3) and axes (N, 3, 3); a box's or mesh's vertex inside the other
        solid pushed along its least-overlap face (contact_shapes.polytope_distance; `shared`: the mover's gaps)."""
        model, v = self.forces.mech.model, self.values()
        side, other = pair_side(self.element, mover), pair_side(self.element, 3 - mover)
        p, R = poses(side.body)
        local = geometry.point(model.body(side.body), side.point) + pair_vertices(side, value, backend)[vertex]
        corner = p + (R * local[None, None, :]).sum(axis=2)
        p_o, R_o = poses(other.body)
        centre = geometry.point(model.body(other.body), other.point)
        y = ((corner - p_o)[:, :, None] * R_o).sum(axis=1) - centre[None, :]  # in the other body's axes
        radii = v[f"radius{mover}"], v[f"radius{3 - mover}"]
        faces = shape_faces(other, value, backend)
        regular = _REGULAR * (radii[0] + radii[1]) + _FLOOR
        gaps = None if shape_of(side) == "sphere" else self._gaps(poses, mover, value, geometry, backend, shared)
        s, normal = polytope_distance(other, y, faces, backend.sqrt, regular, gaps)
        if shape_of(other) == "mesh":
            s, normal = mesh_outside(other, y, (s, normal), value, backend, regular)
        outward = (R_o * normal[:, None, :]).sum(axis=2)  # world axes, towards the mover
        depth = radii[0] + radii[1] - s
        point = corner - (radii[0] - depth / 2)[:, None] * outward
        return depth, (outward if mover == 2 else -outward), point

    def _gaps(self, poses, mover: int, value, geometry, backend, shared: dict):
        """How far side `mover`'s solid overlaps the other's along each of the other's faces (N, F), once per
        evaluation (contact_shapes.solid_gaps)."""
        if ("gaps", mover) not in shared:
            model = self.forces.mech.model
            side, other = pair_side(self.element, mover), pair_side(self.element, 3 - mover)
            p, R = poses(side.body)
            local = geometry.point(model.body(side.body), side.point)[None, :] + pair_vertices(side, value, backend)
            corners = p[:, None, :] + (R[:, None, :, :] * local[None, :, None, :]).sum(axis=3)  # (N, V, 3)
            p_o, R_o = poses(other.body)
            y = ((corners - p_o[:, None, :])[:, :, :, None] * R_o[:, None, :, :]).sum(axis=2)
            y = y - geometry.point(model.body(other.body), other.point)[None, None, :]
            shared["gaps", mover] = solid_gaps(y, shape_faces(other, value, backend))
        return shared["gaps", mover]

    def _shape_point(self, st, side: tuple, shared: dict | None = None) -> tuple:
        tree = self.forces.mech.tree

        def poses(body):
            i = tree.body_index(body)
            return st.p[i], st.R[i]

        backend = self.forces.mech.backend
        depth, normal, point = self._located(poses, side, self.forces.value, self.forces.geometry, backend, shared)
        return depth, point, self._relative_jacobian(st, point), normal

    def along_points(self, motion) -> list[dict[str, np.ndarray]]:
        """`along`'s quantities at each contact point of a box's or mesh's pair."""
        tree, state = motion.mech.tree, motion.state

        def poses(body):
            i = tree.body_index(body)
            return state.p[i], state.R[i]

        def velocity(body, point):
            i = tree.body_index(body)
            return state.v[i] + cross(state.w[i], point - state.p[i])

        got, shared = [], {}
        for key in self._keys():
            depth, normal, point = (np.asarray(x, float) for x in self._located(
                poses, key, motion.geometry.value, motion.geometry, motion.mech.backend, shared))  # fmt: skip
            relative = velocity(self.element.body2, point) - velocity(self.element.body1, point)
            got.append(self._forces_at(depth, normal, point, relative))
        return got

    def _forces_at(self, depth, normal, point, velocity) -> dict[str, np.ndarray]:
        f_n, f_t = (np.asarray(x, float) for x in self.contact(depth, velocity, normal, np.sqrt))
        slip = velocity - dot(velocity, normal)[:, None] * normal
        return {"depth": depth, "point": point, "slip": slip, "normal": f_n, "friction": f_t,
                "force": f_n[:, None] * normal + f_t}  # fmt: skip

    # ------------------------------------------------------------------ results
    def along(self, motion) -> dict[str, np.ndarray]:
        """Along a motion (float64): overlap, contact point, slip of body2 on body1 there, the forces on body2 (a
        box's or mesh's summed over its contact points at their centre of pressure: contact_shapes.combined)."""
        if not self.spheres():
            return combined(self.along_points(motion))
        e, tree = self.element, motion.mech.tree
        centre1, velocity1, _ = motion.point(e.body1, e.point1)
        centre2, velocity2, _ = motion.point(e.body2, e.point2)  # a point of body2, for its velocity field
        nearest = self.centre2(centre1, motion=motion)
        depth, normal, point = (np.asarray(x, float) for x in self.line(centre1, nearest, np.sqrt))
        spin1, spin2 = (motion.state.w[tree.body_index(label)] for label in (e.body1, e.body2))
        velocity = velocity2 + cross(spin2, point - centre2) - velocity1 - cross(spin1, point - centre1)
        return self._forces_at(depth, normal, point, velocity)

    def measure(self, motion, name: str) -> list:
        """The ground contact's columns (ContactLaw.measure), of the force on body2 and the slip of body2 on body1;
        the penetration is the overlap of the two spheres."""
        return ContactLaw.columns(name, self.along(motion))

    def arrows(self, motion, t: float) -> list:
        got = self.along(motion)
        point, force = got["point"][0], got["force"][0]
        return [(self.element.name, point, force), (self.element.name, point, -force)]

    @classmethod
    def export_note(cls, element, target: str, value) -> str | None:
        return (f"contact pair '{element.name}' has no {FORMATS[target]} form and is left out: bodies "
                f"'{element.body1}' and '{element.body2}' pass through each other there")  # fmt: skip
