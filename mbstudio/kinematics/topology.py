"""Spanning tree, cut joints and loop count of a mechanism's joint graph."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.document import GROUND, JOINT_MOTIONS, Joint, Model, body_key
from ..model.errors import ModelError

# Equations a cut joint of each type adds to the loop constraints.
CUT_EQUATIONS = {
    "revolute": 5,
    "prismatic": 5,
    "cylindrical": 4,
    "universal": 4,
    "spherical": 3,
    "planar": 3,
    "fixed": 6,
    "free": 0,
}


@dataclass(frozen=True)
class Topology:
    """Tree joints in an order where each joint's parent body is already placed, and the cut joints.

    `reversed` names tree joints whose document parent is the tree child: their motion is inverted.
    """

    tree: tuple[Joint, ...]
    cut: tuple[Joint, ...]
    body_order: tuple[str, ...]
    parent_of: dict[str, str]
    reversed: frozenset[str]

    @property
    def loops(self) -> int:
        return len(self.cut)


def spanning_tree(model: Model) -> Topology:
    """Grow the tree from the ground, adding at each step the joint with fewest coordinates that reaches a
    new body (document order breaks ties), so loops are closed across the joints with most freedom."""
    placed = [GROUND]
    parent_of: dict[str, str] = {}
    tree: list[Joint] = []
    reversed_: set[str] = set()
    candidates = [j for j in model.joints if not j.cut]
    while True:
        best = None
        for j in candidates:
            p, c = body_key(j.parent), body_key(j.child)
            if (p in placed) != (c in placed):
                key = len(JOINT_MOTIONS[j.type])
                if best is None or key < best[0]:
                    best = (key, j)
        if best is None:
            break
        joint = best[1]
        candidates.remove(joint)
        p, c = body_key(joint.parent), body_key(joint.child)
        if c in placed:
            p, c = c, p
            reversed_.add(joint.name)
        placed.append(c)
        parent_of[c] = p
        tree.append(joint)
    for body in model.bodies:
        if body.label not in placed:
            raise ModelError(
                f"body '{body.label}'",
                "cannot be reached from the ground through joints not marked as cut",
                body.name,
                "a chain of joints to the ground without cut: true",
            )
    cut = tuple(j for j in model.joints if j not in tree)
    return Topology(tuple(tree), cut, tuple(placed), parent_of, frozenset(reversed_))


def grubler_dof(model: Model) -> int:
    """Spatial Grübler-Kutzbach mobility: 6 per moving body minus the constraints of every joint."""
    return 6 * len(model.bodies) - sum(6 - len(JOINT_MOTIONS[j.type]) for j in model.joints)
