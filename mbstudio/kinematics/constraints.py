"""Constraints Φ(q) = 0 on the tree coordinates: the loop closures of the cut joints and the couplings, their
analytic Jacobian Φ_q and the acceleration term Φ̈ at q̈ = 0.

With the cut joint's frames A (on its parent body: axes a_x, a_y, a_z, origin o_A) and B (on its child:
b_x, b_y, b_z, o_B) and d = o_B - o_A, each joint type allows exactly the motions of its definition, and
forbids the rest with equations of two kinds: a_i·d = 0 (no displacement along a_i) and a_i·b_j = 0
(keeps two axes perpendicular). A coupling (model/document.py) is one row q_f − P(q_l) = 0, with P the
polynomial in the leader, whose Jacobian row is e_f − P'(q_l) e_l and whose Φ̈ is q̈_f − P' q̈_l − P'' q̇_l².
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.document import Coupling, Joint
from ..model.errors import ModelError
from ..numerics.spatial import cross, dot
from .tree import KinematicTree, MotionState

# ("d", i): a_i·d = 0;  ("e", i, j): a_i·b_j = 0;  ("c", k): the k-th coupling.
EQUATIONS = {
    "revolute": (("d", 0), ("d", 1), ("d", 2), ("e", 2, 0), ("e", 2, 1)),
    "prismatic": (("d", 0), ("d", 1), ("e", 2, 0), ("e", 2, 1), ("e", 0, 1)),
    "cylindrical": (("d", 0), ("d", 1), ("e", 2, 0), ("e", 2, 1)),
    "universal": (("d", 0), ("d", 1), ("d", 2), ("e", 2, 0)),
    "ball": (("d", 0), ("d", 1), ("d", 2)),
    "spherical": (("d", 0), ("d", 1), ("d", 2)),
    "planar": (("d", 2), ("e", 2, 0), ("e", 2, 1)),
    "fixed": (("d", 0), ("d", 1), ("d", 2), ("e", 2, 0), ("e", 2, 1), ("e", 0, 1)),
    "free": (),
    "free_euler": (),
}
_AXIS = "xyz"


@dataclass
class _Side:
    body: int
    frame: object


def equation_label(joint: Joint, eq: tuple) -> str:
    if eq[0] == "d":
        return f"{joint.name}: offset along {_AXIS[eq[1]]}"
    return f"{joint.name}: {_AXIS[eq[1]]}-axis not perpendicular to the child {_AXIS[eq[2]]}-axis"


@dataclass
class _Coupled:
    """A coupling in the tree's numbers: follower and leader indices in q, polynomial coefficients c_k."""

    coupling: Coupling
    follower: int
    leader: int | None
    coefficients: list

    def label(self) -> str:
        leader = self.coupling.leader or "constant"
        return f"{self.coupling.name}: {self.coupling.follower} not following {leader}"

    def polynomial(self, x, order: int = 0):
        """P, P' or P'' (order 0, 1, 2) at the leader's values x (N,), by Horner's rule."""
        terms = self.coefficients
        for _ in range(order):
            terms = [k * c for k, c in enumerate(terms)][1:]
        out = terms[-1] if terms else 0 * x
        for c in reversed(terms[:-1]):
            out = out * x + c
        return out + 0 * x


class LoopConstraints:
    def __init__(self, tree: KinematicTree, cut: tuple[Joint, ...], couplings: list[Coupling] = ()) -> None:
        self.tree = tree
        g, m = tree.geometry, tree.model
        self.joints = cut
        self.sides = [
            (
                _Side(tree.body_index(j.parent), g.frame(m.body(j.parent), j.parent_frame)),
                _Side(tree.body_index(j.child), g.frame(m.body(j.child), j.child_frame)),
            )
            for j in cut
        ]
        self.couplings = [_coupled(tree, c, cut) for c in couplings]
        self.rows = [(ji, eq) for ji, j in enumerate(cut) for eq in EQUATIONS[j.type]]
        self.rows += [(None, ("c", k)) for k in range(len(self.couplings))]
        self.labels = [equation_label(cut[ji], eq) if ji is not None else self._label(eq) for ji, eq in self.rows]
        self.row_joint = [cut[ji].name if ji is not None else self._coupling(eq).name for ji, eq in self.rows]
        self.m = len(self.rows)

    def _coupling(self, eq: tuple) -> Coupling:
        return self.couplings[eq[1]].coupling

    def _label(self, eq: tuple) -> str:
        return self.couplings[eq[1]].label()

    def is_coupling(self, row: int) -> bool:
        return self.rows[row][1][0] == "c"

    def _frames(self, st: MotionState):
        """World (axes, origin, w, v, al, a) of both frames of every cut joint."""
        out = []
        for A, B in self.sides:
            out.append(tuple(self.tree._carry(st, s.body, s.frame) for s in (A, B)))
        return out

    def residual(self, st: MotionState) -> np.ndarray:
        N = st.p[0].shape[0]
        phi = self.tree.backend.zeros((N, self.m))
        frames = self._frames(st)
        for r, (ji, eq) in enumerate(self.rows):
            if ji is None:
                c = self.couplings[eq[1]]
                phi[:, r] = st.q[:, c.follower] - c.polynomial(_leader(st.q, c))
                continue
            (RA, oA, *_), (RB, oB, *_) = frames[ji]
            a = RA[:, :, eq[1]]
            phi[:, r] = dot(a, oB - oA) if eq[0] == "d" else dot(a, RB[:, :, eq[2]])
        return phi

    def jacobian(self, st: MotionState) -> np.ndarray:
        """Φ_q, shape (N, m, n), from the tree's analytic point and direction Jacobians."""
        t = self.tree
        N = st.p[0].shape[0]
        J = t.backend.zeros((N, self.m, t.n))
        r = 0
        for (A, B), joint, ((RA, oA, *_), (RB, oB, *_)) in zip(self.sides, self.joints, self._frames(st), strict=True):
            equations = EQUATIONS[joint.type]
            if not equations:
                continue
            d = oB - oA
            dJ = t.point_jacobian(st, B.body, oB) - t.point_jacobian(st, A.body, oA)
            Ja = [t.direction_jacobian(st, A.body, RA[:, :, i]) for i in range(3)]
            Jb = [t.direction_jacobian(st, B.body, RB[:, :, j]) for j in range(3)]
            for eq in equations:
                a = RA[:, :, eq[1]]
                other, J_other = (d, dJ) if eq[0] == "d" else (RB[:, :, eq[2]], Jb[eq[2]])
                J[:, r] = (Ja[eq[1]] * other[:, :, None]).sum(axis=1) + (a[:, :, None] * J_other).sum(axis=1)
                r += 1
        for c in self.couplings:
            J[:, r, c.follower] = t.backend.scalar(1)
            if c.leader is not None:
                J[:, r, c.leader] = -c.polynomial(st.q[:, c.leader], 1)
            r += 1
        return J

    def acceleration_bias(self, st: MotionState) -> np.ndarray:
        """Φ̈ evaluated with the state's accelerations (pass q̈ = 0 to get the velocity-product term)."""
        N = st.p[0].shape[0]
        out = self.tree.backend.zeros((N, self.m))
        frames = self._frames(st)
        for r, (ji, eq) in enumerate(self.rows):
            if ji is None:
                out[:, r] = _coupling_acceleration(self.couplings[eq[1]], st)
                continue
            (RA, oA, wA, vA, alA, aA), (RB, oB, wB, vB, alB, aB) = frames[ji]
            a = RA[:, :, eq[1]]
            ad, add = _direction_rates(a, wA, alA)
            if eq[0] == "d":
                x, xd, xdd = oB - oA, vB - vA, aB - aA
            else:
                x = RB[:, :, eq[2]]
                xd, xdd = _direction_rates(x, wB, alB)
            out[:, r] = dot(add, x) + 2 * dot(ad, xd) + dot(a, xdd)
        return out


def _coupled(tree: KinematicTree, coupling: Coupling, cut: tuple[Joint, ...]) -> _Coupled:
    """The coupling's indices in q; a ModelError for a coordinate of a cut joint, which the loops derive."""
    index = {}
    for key in ("follower", "leader"):
        name = getattr(coupling, key)
        if name is not None and name not in tree.coordinates:
            joint = next((j.name for j in cut if name in [c.name for c in j.coordinates]), "?")
            raise ModelError(
                f"coupling '{coupling.name}'.{key}",
                f"names a coordinate of cut joint '{joint}', which the loops derive",
                name,
                "a coordinate of a tree joint: " + ", ".join(tree.coordinates),
            )
        index[key] = None if name is None else tree.coordinates.index(name)
    values = [tree.geometry.value(c) for c in coupling.coefficients()]
    return _Coupled(coupling, index["follower"], index["leader"], values)


def _leader(q: np.ndarray, c: _Coupled) -> np.ndarray:
    """The leader's values (N,), zeros for a coupling without one."""
    return q[:, c.leader] if c.leader is not None else 0 * q[:, c.follower]


def _coupling_acceleration(c: _Coupled, st: MotionState) -> np.ndarray:
    """Φ̈ of a coupling row: q̈_f − P'(q_l) q̈_l − P''(q_l) q̇_l²."""
    if c.leader is None:
        return st.qdd[:, c.follower]
    x, xd = st.q[:, c.leader], st.qd[:, c.leader]
    return st.qdd[:, c.follower] - c.polynomial(x, 1) * st.qdd[:, c.leader] - c.polynomial(x, 2) * xd * xd


def _direction_rates(e, w, al):
    """First and second time derivatives of a unit vector fixed on a body."""
    ed = cross(w, e)
    return ed, cross(al, e) + cross(w, ed)
