"""A compliant contact between a sphere on a body and a plane fixed in the ground (docs/contact.md).

Normal force: Hunt and Crossley (1975), in the form Marhefka and Orin (1999) write for simulation,
f_n = max(0, k δ^n (1 + 3/2 c_d δ̇)) at penetrations δ > 0 (0 apart), with δ̇ the rate of penetration. Its elastic
part k δ^n has the potential k δ^(n+1) / (n+1); the damping part vanishes with δ, so that the force does not jump
at touch-down, and the max(0, ·) keeps it from pulling while the sphere leaves fast (δ̇ < −2 / (3 c_d)): the force
stays continuous in the state. Its power beyond the potential's, −k δ^n (3/2 c_d δ̇) δ̇ or k δ^n δ̇ where clamped, is
never positive.

Friction: regularised Coulomb, f_t = −μ f_n v_t / sqrt(|v_t|² + v_s²), with v_t the slip of the sphere's point
nearest the plane (its tangential velocity). |f_t| < μ f_n at every state, and its power −μ f_n |v_t|² / sqrt(...)
is never positive. Below the stiction velocity v_s it acts as a viscous damper of coefficient μ f_n / v_s, so that
a body held by friction creeps at speeds of order v_s (docs/contact.md derives the bound).

Both forces act at that nearest point c = P − r n, a point of the body: Q = J_cᵀ (f_n n + f_t).
"""

from __future__ import annotations

import numpy as np

from ...model.document import Contact
from ...model.errors import ModelError
from ...numerics.spatial import cross, dot
from ..contact_shapes import combined, shape_of, shape_vertices
from ..road_surface import tangent_plane
from .base import FORMATS, ForceLaw, positive, register


def normal_force(stiffness, exponent, dissipation, depth, rate):
    """Hunt–Crossley f_n = max(0, k δ^n (1 + 3/2 c_d δ̇)) for penetrations δ (0 where δ ≤ 0) and their rates."""
    elastic = stiffness * positive(depth) ** exponent
    return positive(elastic * (1 + 1.5 * dissipation * rate))


def elastic_energy(stiffness, exponent, depth):
    """V = k δ^(n+1) / (n+1) at penetrations δ (0 where δ ≤ 0): the potential of the normal force's elastic part."""
    return stiffness * positive(depth) ** (exponent + 1) / (exponent + 1)


def friction_force(friction, stiction_velocity, normal, slip, sqrt):
    """Regularised Coulomb f_t = −μ f_n v_t / sqrt(|v_t|² + v_s²) (N, 3) for normal forces (N,) and slips (N, 3)."""
    scale = friction * normal / sqrt(dot(slip, slip) + stiction_velocity * stiction_velocity)
    return -scale[:, None] * slip


def along_normal(vectors: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """v·n (N,) in float64 for vectors (N, 3) and one normal (1, 3) (summed as a plane's always was) or N."""
    return vectors @ normal[0] if len(normal) == 1 else dot(vectors, normal)


class CompliantContact(ForceLaw):
    """The compliant law at a contact point, for a subclass that gives `values()` (stiffness, exponent,
    dissipation, friction, stiction_velocity) and `placed(st)`: the penetration δ (N,), the point c (N, 3), the
    Jacobian (N, 3, n) of the velocity the friction resists (c's, or c's on one body relative to another's) and
    the normal n along which the force pushes; Q = Jᵀ (f_n n + f_t), V = k δ^(n+1) / (n+1)."""

    on_bodies = True

    def values(self) -> dict:
        raise NotImplementedError

    def placed(self, st) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def contact(self, depth, velocity, normal, sqrt) -> tuple[np.ndarray, np.ndarray]:
        """Normal force f_n (N,) and friction force f_t (N, 3) at penetrations δ with the contact point moving at
        `velocity` (N, 3)."""
        v = self.values()
        along = dot(velocity, normal)
        f_n = normal_force(v["stiffness"], v["exponent"], v["dissipation"], depth, -along)
        slip = velocity - along[:, None] * normal
        return f_n, friction_force(v["friction"], v["stiction_velocity"], f_n, slip, sqrt)

    def placements(self, st) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """`placed`'s four for each of its contact points: one here, a box's or a mesh's vertices in ContactLaw."""
        return [self.placed(st)]

    def pressing(self, st) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """`placed`'s four for every contact point the law presses through: its placements (a contact pair's edge
        crossings besides)."""
        return self.placements(st)

    def generalized(self, t, q, qd, st) -> np.ndarray:
        terms = []
        for depth, _, J, normal in self.pressing(st):
            velocity = (J * qd[:, None, :]).sum(axis=2)
            f_n, f_t = self.contact(depth, velocity, normal, self.forces.mech.backend.sqrt)
            force = f_n[:, None] * normal + f_t
            terms.append((J * force[:, :, None]).sum(axis=1))
        return _total(terms)

    def potential(self, q, st):
        v = self.values()
        return _total([elastic_energy(v["stiffness"], v["exponent"], got[0]) for got in self.pressing(st)])


def _total(terms: list):
    """The sum of one or more terms, a single one as it is (a sphere's force unchanged to the bit)."""
    out = terms[0]
    for term in terms[1:]:
        out = out + term
    return out


@register
class ContactLaw(CompliantContact):
    """A sphere (radius r, centre the body point P) pressed into the plane through o with unit normal n by
    δ = r − (P − o)·n: the Hunt–Crossley normal force and regularised Coulomb friction at c = P − r n;
    V = k δ^(n+1) / (n+1)."""

    type = Contact.type

    def values(self) -> dict:
        """The element's values in the back-end (floats, or the compiled engine's parameters)."""
        e, value = self.element, self.forces.value
        keys = ("radius", "stiffness", "exponent", "dissipation", "friction", "stiction_velocity")
        return {key: value(getattr(e, key)) for key in keys}

    def plane(self) -> tuple[np.ndarray, np.ndarray]:
        """The plane's origin o and unit normal n (3,) in world axes."""
        if self.element.against == "road":
            raise ModelError(f"contact '{self.name}'.against", "is the road, which has no one plane", "road",
                             "a contact against its plane")  # fmt: skip
        b, value = self.forces.mech.backend, self.forces.value
        origin = b.asarray([value(x) for x in self.element.plane_origin])
        normal = b.asarray([value(x) for x in self.element.plane_normal])
        return origin, normal / b.sqrt(dot(normal, normal))

    def ground(self, centre) -> tuple[np.ndarray, np.ndarray]:
        """A point o and the unit normal n, (1, 3) or (N, 3), of the plane the spheres centred at `centre` (N, 3)
        press into: the element's plane, or the road's tangent plane under each (road_surface.py)."""
        if self.element.against == "road":
            return tangent_plane(self.forces, centre)
        origin, normal = self.plane()
        return origin[None, :], normal[None, :]

    def place(self, st, vertex: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Penetration δ (N,), the contact point c (N, 3) and its Jacobian J_c (N, 3, n) at the poses `st`, of the
        sphere or of one vertex of a box or mesh (contact_shapes.py)."""
        return self.placed(st, vertex)[:3]

    def vertices(self) -> np.ndarray:
        """The centres (V, 3) of its contact spheres relative to its body point, body axes (one for a sphere)."""
        return shape_vertices(self.element, self.forces.value, self.forces.mech.backend)

    def placed(self, st, vertex: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`place`'s, and the normal n (1, 3) or (N, 3), of the sphere or of one vertex of a box or mesh."""
        return self._placed_at(st, self.vertices()[vertex])

    def placements(self, st) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """`placed`'s four for each contact point: the sphere's, or the vertices' of a box or mesh (their
        contact points, contact_shapes.py)."""
        return [self._placed_at(st, offset) for offset in self.vertices()]

    def _placed_at(self, st, offset) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        e, tree = self.element, self.forces.mech.tree
        radius = self.forces.value(e.radius)
        if shape_of(e) == "sphere":
            centre = self.forces.point(st, e.body, e.point)[0]
        else:
            i = tree.body_index(e.body)
            local = self.forces.geometry.point(self.forces.mech.model.body(e.body), e.point) + offset
            centre = st.p[i] + (st.R[i] * local[None, None, :]).sum(axis=2)
        origin, normal = self.ground(centre)
        depth = radius - dot(centre - origin, normal)
        point = centre - radius * normal
        return depth, point, tree.point_jacobian(st, tree.body_index(e.body), point), normal

    # ------------------------------------------------------------------ results
    def along(self, motion) -> dict[str, np.ndarray]:
        """Along a motion (float64): penetration, contact point and its velocity, normal and friction forces (a box's
        or a mesh's summed over its vertices, at their centre of pressure: contact_shapes.combined)."""
        return combined(self.along_points(motion))

    def along_points(self, motion) -> list[dict[str, np.ndarray]]:
        """`along`'s quantities at each contact point: the sphere's, or each vertex's of a box or mesh."""
        if shape_of(self.element) == "sphere":
            return [self._along_at(motion, *motion.point(self.element.body, self.element.point)[:2])]
        e, state = self.element, motion.state
        i = motion.mech.tree.body_index(e.body)
        local = np.asarray(motion.geometry.point(motion.mech.model.body(e.body), e.point), float)
        got = []
        for offset in np.asarray(shape_vertices(e, motion.geometry.value, motion.mech.backend), float):
            r = np.einsum("nij,j->ni", state.R[i], local + offset)
            got.append(self._along_at(motion, state.p[i] + r, state.v[i] + cross(state.w[i], r)))
        return got

    def _along_at(self, motion, centre: np.ndarray, velocity: np.ndarray) -> dict[str, np.ndarray]:
        e = self.element
        radius = float(self.forces.value(e.radius))
        origin, normal = (np.asarray(x, float) for x in self.ground(centre))
        depth = radius - along_normal(centre - origin, normal)
        arm = np.broadcast_to(-radius * normal, centre.shape)
        point_velocity = velocity + cross(motion.state.w[motion.mech.tree.body_index(e.body)], arm)
        f_n, f_t = (np.asarray(x, float) for x in self.contact(depth, point_velocity, normal, np.sqrt))
        slip = point_velocity - along_normal(point_velocity, normal)[:, None] * normal
        return {"depth": depth, "point": centre + arm, "slip": slip, "normal": f_n, "friction": f_t,
                "force": f_n[:, None] * normal + f_t}  # fmt: skip

    def measure(self, motion, name: str) -> list:
        """<name>.normal_force, .friction_force [N] (magnitudes), .penetration [m] (0 apart), .slip_speed [m/s],
        .fx, .fy, .fz [N] (the whole contact force on the body), .friction_x, ... [N], .slip_x, ... [m/s] (the
        friction force and the slip velocity) and .x, .y, .z [m] (the contact point), all in world axes."""
        return self.columns(name, self.along(motion))

    @staticmethod
    def columns(name: str, got: dict) -> list:
        """The measure's columns from `along`'s quantities (or the rigid model's, simulation/rigid_stepping.py)."""
        columns = [
            (f"{name}.normal_force", "N", got["normal"]),
            (f"{name}.friction_force", "N", np.linalg.norm(got["friction"], axis=1)),
            (f"{name}.penetration", "m", np.maximum(got["depth"], 0.0)),
            (f"{name}.slip_speed", "m/s", np.linalg.norm(got["slip"], axis=1)),
        ]
        vectors = (("f", "force", "N"), ("friction_", "friction", "N"), ("slip_", "slip", "m/s"), ("", "point", "m"))
        return columns + [(f"{name}.{prefix}{axis}", unit, got[key][:, k])
                          for prefix, key, unit in vectors for k, axis in enumerate("xyz")]  # fmt: skip

    def arrows(self, motion, t: float) -> list:
        got = self.along(motion)
        return [(self.element.name, got["point"][0], got["force"][0])]

    @classmethod
    def export_note(cls, element, target: str, value) -> str | None:
        if target == "mjcf":
            return (f"contact '{element.name}' is left out: MJCF's contacts are soft constraints set by solref and "
                    "solimp, not a force law in N/m^n; a sphere geom on the body against a plane geom would carry it "
                    "approximately (docs/contact.md)")  # fmt: skip
        return (f"contact '{element.name}' has no {FORMATS[target]} form and is left out: {FORMATS[target]} holds "
                "collision geometry but no contact law")  # fmt: skip
