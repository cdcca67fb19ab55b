"""Loop-closure constraints Φ(q) = 0 of the cut joints, their analytic Jacobian Φ_q and the acceleration
term Φ̈ at q̈ = 0.

With the cut joint's frames A (on its parent body: axes a_x, a_y, a_z, origin o_A) and B (on its child:
b_x, b_y, b_z, o_B) and d = o_B - o_A, each joint type allows exactly the motions of its definition, and
forbids the rest with equations of two kinds: a_i·d = 0 (no displacement along a_i) and a_i·b_j = 0
(keeps two axes perpendicular).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.document import Joint
from ..numerics.spatial import cross, dot
from .tree import KinematicTree, MotionState

# ("d", i): a_i·d = 0;  ("e", i, j): a_i·b_j = 0.
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


class LoopConstraints:
    def __init__(self, tree: KinematicTree, cut: tuple[Joint, ...]) -> None:
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
        self.rows = [(ji, eq) for ji, j in enumerate(cut) for eq in EQUATIONS[j.type]]
        self.labels = [equation_label(cut[ji], eq) for ji, eq in self.rows]
        self.row_joint = [cut[ji].name for ji, _ in self.rows]
        self.m = len(self.rows)

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
        return J

    def acceleration_bias(self, st: MotionState) -> np.ndarray:
        """Φ̈ evaluated with the state's accelerations (pass q̈ = 0 to get the velocity-product term)."""
        N = st.p[0].shape[0]
        out = self.tree.backend.zeros((N, self.m))
        frames = self._frames(st)
        for r, (ji, eq) in enumerate(self.rows):
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


def _direction_rates(e, w, al):
    """First and second time derivatives of a unit vector fixed on a body."""
    ed = cross(w, e)
    return ed, cross(al, e) + cross(w, ed)
