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
"""

from __future__ import annotations

import numpy as np

from ...model.document import ContactPair
from ...numerics.spatial import cross, dot
from .base import FORMATS, Evaluator, positive, register
from .contact_law import CompliantContact, ContactLaw

_REGULAR = 1e-9  # ε of the centres' distance, per unit of r1 + r2
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

    def placed(self, st) -> tuple:
        """δ (N,), c (N, 3), J2(c) − J1(c) (N, 3, n) and n (N, 3) at the poses `st`."""
        e, tree, sqrt = self.element, self.forces.mech.tree, self.forces.mech.backend.sqrt
        centre1 = self.forces.point(st, e.body1, e.point1)[0]
        depth, normal, point = self.line(centre1, self.centre2(centre1, st=st), sqrt)
        relative = tree.point_jacobian(st, tree.body_index(e.body2), point) - tree.point_jacobian(
            st, tree.body_index(e.body1), point
        )
        return depth, point, relative, normal

    # ------------------------------------------------------------------ results
    def along(self, motion) -> dict[str, np.ndarray]:
        """Along a motion (float64): overlap, contact point, slip of body2 on body1 there, the forces on body2."""
        e, tree = self.element, motion.mech.tree
        centre1, velocity1, _ = motion.point(e.body1, e.point1)
        centre2, velocity2, _ = motion.point(e.body2, e.point2)  # a point of body2, for its velocity field
        nearest = self.centre2(centre1, motion=motion)
        depth, normal, point = (np.asarray(x, float) for x in self.line(centre1, nearest, np.sqrt))
        spin1, spin2 = (motion.state.w[tree.body_index(label)] for label in (e.body1, e.body2))
        velocity = velocity2 + cross(spin2, point - centre2) - velocity1 - cross(spin1, point - centre1)
        f_n, f_t = (np.asarray(x, float) for x in self.contact(depth, velocity, normal, np.sqrt))
        slip = velocity - dot(velocity, normal)[:, None] * normal
        return {"depth": depth, "point": point, "slip": slip, "normal": f_n, "friction": f_t,
                "force": f_n[:, None] * normal + f_t}  # fmt: skip

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
