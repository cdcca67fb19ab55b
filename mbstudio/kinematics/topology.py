"""Spanning tree, cut joints and loop count of a mechanism's joint graph."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ..model.document import GROUND, JOINT_MOTIONS, Joint, Model, body_key
from ..model.errors import ModelError

# Equations a cut joint of each type adds to the loop constraints.
CUT_EQUATIONS = {
    "revolute": 5,
    "prismatic": 5,
    "cylindrical": 4,
    "universal": 4,
    "ball": 3,
    "spherical": 3,
    "planar": 3,
    "fixed": 6,
    "free": 0,
    "free_euler": 0,
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
    new body (document order breaks ties), so loops are closed across the joints with most freedom.

    The joints touching the placed bodies wait in a heap keyed (coordinates, document position), so each
    joint is pushed and popped at most twice: a 20 000-body chain takes a fraction of a second (the scan of
    every candidate at every step took minutes)."""
    touching: dict[str, list[tuple[int, Joint]]] = {}
    for index, j in enumerate(model.joints):
        if not j.cut:
            for end in {body_key(j.parent), body_key(j.child)}:
                touching.setdefault(end, []).append((index, j))
    placed, parent_of, tree, reversed_ = [GROUND], {}, [], set()
    placed_set: set[str] = {GROUND}
    waiting: list[tuple[int, int, Joint]] = []

    def arrive(body: str) -> None:
        placed_set.add(body)
        for index, j in touching.get(body, []):
            heapq.heappush(waiting, (len(JOINT_MOTIONS[j.type]), index, j))

    arrive(GROUND)
    while waiting:
        _, _, joint = heapq.heappop(waiting)
        p, c = body_key(joint.parent), body_key(joint.child)
        if (p in placed_set) == (c in placed_set):
            continue  # both ends placed since it was pushed: it closes a loop
        if c in placed_set:
            p, c = c, p
            reversed_.add(joint.name)
        parent_of[c] = p
        tree.append(joint)
        placed.append(c)
        arrive(c)
    for body in model.bodies:
        if body.label not in placed_set:
            raise ModelError(
                f"body '{body.label}'",
                "cannot be reached from the ground through joints not marked as cut",
                body.name,
                "a chain of joints to the ground without cut: true",
            )
    in_tree = {id(j) for j in tree}
    cut = tuple(j for j in model.joints if id(j) not in in_tree)
    return Topology(tuple(tree), cut, tuple(placed), parent_of, frozenset(reversed_))


def grubler_dof(model: Model) -> int:
    """Spatial Grübler-Kutzbach mobility: 6 per moving body minus the constraints of every joint and one per
    coupling."""
    return 6 * len(model.bodies) - sum(6 - len(JOINT_MOTIONS[j.type]) for j in model.joints) - len(model.couplings)
