"""The structure of a parallel kinematic machine (Müller 2021, sec. 2 and 3.1): its platform, its limbs (the parts
of the joint graph between the ground and the platform, Def. 1) and their fundamental cycles, and whether
each limb is hybrid (its cycles arranged in series, any two sharing at most one body, Def. 2).

Everything here is graph work on the document; the counts that need a configuration (ranks, degrees of
freedom) come from `limb.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.document import GROUND, Joint, Model, body_key
from ...model.errors import ModelError


@dataclass(frozen=True)
class Cycle:
    """A fundamental cycle of a limb: the joint whose cut opens it, and its bodies and joints (the cut one
    included) in the order the cycle passes them."""

    cut: str
    bodies: tuple[str, ...]
    joints: tuple[str, ...]


@dataclass(frozen=True)
class Limb:
    """A limb: its moving bodies (neither ground nor platform) and every joint touching them, or the one joint
    that links the ground to the platform directly; joints in document order."""

    name: str
    bodies: tuple[str, ...]
    joints: tuple[Joint, ...]

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def coordinates(self) -> tuple[str, ...]:
        return tuple(c.name for j in self.joints for c in j.coordinates)

    def cycle_rank(self) -> int:
        """γ_l: edges − vertices + 1 over the limb's bodies, the ground and the platform (connected)."""
        return len(self.joints) - (len(self.bodies) + 2) + 1


@dataclass(frozen=True)
class Structure:
    """The platform, how it was found ("declared" in the file or "detected"), and the limbs."""

    platform: str
    found: str
    limbs: tuple[Limb, ...]


def _neighbours(model: Model) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {b: set() for b in model.body_labels()}
    for j in model.joints:
        p, c = body_key(j.parent), body_key(j.child)
        out[p].add(c)
        out[c].add(p)
    return out


def _components(bodies: set[str], neighbours: dict[str, set[str]]) -> list[list[str]]:
    """Connected components of `bodies` (without passing through any other body)."""
    left, out = set(bodies), []
    for seed in sorted(bodies):
        if seed not in left:
            continue
        stack, part = [seed], []
        left.discard(seed)
        while stack:
            body = stack.pop()
            part.append(body)
            for other in neighbours[body] & left:
                left.discard(other)
                stack.append(other)
        out.append(part)
    return out


def _limb_parts(model: Model, platform: str) -> list[list[str]] | None:
    """The limbs' body sets when `platform` is the platform: every part left once the ground and the platform
    are taken out touches both. None when some part hangs from one of them only (not a PKM with this
    platform)."""
    neighbours = _neighbours(model)
    rest = {b.label for b in model.bodies} - {platform}
    parts = _components(rest, neighbours)
    for part in parts:
        touches = set().union(*(neighbours[b] for b in part))
        if GROUND not in touches or platform not in touches:
            return None
    return parts + [[]] * _direct_joints(model).get(platform, 0)


def _direct_joints(model: Model) -> dict[str, int]:
    """For each body, how many joints link it to the ground directly."""
    out: dict[str, int] = {}
    for j in model.joints:
        ends = {body_key(j.parent), body_key(j.child)}
        if GROUND in ends and len(ends) == 2:
            body = (ends - {GROUND}).pop()
            out[body] = out.get(body, 0) + 1
    return out


def find_platform(model: Model) -> tuple[str, str] | None:
    """(platform label, "declared" or "detected"), or None when the model is no parallel machine.

    A declared platform (the file's `platform.body`) is taken as it is. Otherwise every body is a candidate:
    its limbs must be at least two, each touching both the ground and it; among the candidates the one whose
    smallest limb is largest wins (the Delta's cross-link also splits the mechanism into two "limbs", one of
    them the lone upper arm), then the one with more limbs, then the first in document order."""
    if model.platform is not None:
        return model.platform.body, "declared"
    best, best_key = None, None
    for body, sizes in _limb_sizes(model):
        key = (min(sizes), len(sizes))
        if best_key is None or key > best_key:
            best, best_key = body, key
    return None if best is None else (best, "detected")


def _limb_sizes(model: Model):
    """(body, the sizes of its limbs) for every body that two or more limbs would carry as a platform.

    Taking a body v out of the bodies' graph (the ground apart) leaves the parts that would be v's limbs: each
    must touch the ground, and each touches v when the bodies' graph is connected (else no body qualifies).
    One depth-first search finds every body's parts at once (Hopcroft and Tarjan, "Efficient algorithms for
    graph manipulation", 1973): a child c of v whose subtree reaches no higher than v (low[c] >= order[v])
    is a part of its own; the rest of the graph, v's ancestors' side, is one more part. Linear in bodies and
    joints, where taking each body out in turn was quadratic (5 000 bodies took 42 s)."""
    labels = [b.label for b in model.bodies]
    index = {label: i for i, label in enumerate(labels)}
    adjacent: list[set[int]] = [set() for _ in labels]
    for j in model.joints:
        p, c = index.get(body_key(j.parent)), index.get(body_key(j.child))
        if p is not None and c is not None and p != c:
            adjacent[p].add(c)
            adjacent[c].add(p)
    direct = _direct_joints(model)
    grounded = [1 if direct.get(label) else 0 for label in labels]
    search = _DepthFirst([sorted(a) for a in adjacent], grounded) if labels else None
    if search is None or len(search.preorder) < len(labels):
        return  # no bodies, or bodies not all linked without the ground: some part would miss the platform
    total = sum(grounded)
    for v, label in enumerate(labels):
        parts = [c for c in search.children[v] if v == 0 or search.low[c] >= search.order[v]]
        sizes = [search.size[c] for c in parts]
        reach = [search.grounded[c] for c in parts]
        if v != 0:  # the ancestors' side, the parent's part: never empty
            sizes.append(len(labels) - 1 - sum(sizes))
            reach.append(total - grounded[v] - sum(reach))
        sizes += [0] * direct.get(label, 0)
        if all(r > 0 for r in reach) and len(sizes) >= 2:
            yield label, sizes


class _DepthFirst:
    """An iterative depth-first search from vertex 0 (no recursion limit on a 100 000-body chain): each
    vertex's preorder number, its lowest reachable preorder number, its children, its subtree's size and how
    many of its subtree's vertices are `marked`."""

    def __init__(self, adjacent: list[list[int]], marked: list[int]) -> None:
        n = len(adjacent)
        self.order, self.low = [-1] * n, [0] * n
        self.children: list[list[int]] = [[] for _ in range(n)]
        self.size, self.grounded = [1] * n, list(marked)
        self.preorder: list[int] = []
        self._visit(0)
        stack = [(0, iter(adjacent[0]))]
        while stack:
            v, pending = stack[-1]
            w = next(pending, None)
            if w is None:
                stack.pop()
                if stack:
                    self._finish(stack[-1][0], v)
            elif self.order[w] < 0:
                self._visit(w)
                self.children[v].append(w)
                stack.append((w, iter(adjacent[w])))
            else:
                self.low[v] = min(self.low[v], self.order[w])

    def _visit(self, v: int) -> None:
        self.order[v] = self.low[v] = len(self.preorder)
        self.preorder.append(v)

    def _finish(self, parent: int, child: int) -> None:
        self.low[parent] = min(self.low[parent], self.low[child])
        self.size[parent] += self.size[child]
        self.grounded[parent] += self.grounded[child]


def is_linkage(model: Model, dof: int) -> bool:
    """A mechanism of one degree of freedom without a declared platform is a linkage: a body two chains carry (a
    four-bar's coupler, a slider-crank's connecting rod) is driven through its loop, not a parallel machine's
    platform with freedoms of its own. A platform the file declares is taken at its word."""
    return model.platform is None and dof == 1


def structure(model: Model) -> Structure | None:
    """The platform and the limbs, or None when the model is no parallel machine. A declared platform that
    does not split the mechanism into limbs is a ModelError naming it."""
    found = find_platform(model)
    if found is None:
        return None
    platform, how = found
    parts = _limb_parts(model, platform)
    if parts is None or len(parts) < 2:
        raise ModelError(
            "platform.body",
            "does not split the mechanism into limbs, each linking the ground to it",
            platform,
            "the body that at least two chains of bodies connect to the ground",
        )
    part_of = {body: k for k, part in enumerate(parts) for body in part}
    limb_joints: list[list[Joint]] = [[] for _ in parts]
    for j in model.joints:  # in document order; a joint touches the bodies of one limb at most
        ends = {part_of.get(body_key(j.parent)), part_of.get(body_key(j.child))} - {None}
        if ends:
            limb_joints[ends.pop()].append(j)
    limb_bodies: list[list[str]] = [[] for _ in parts]
    for body in model.bodies:
        if body.label in part_of:
            limb_bodies[part_of[body.label]].append(body.label)
    direct = iter(j for j in model.joints if {body_key(j.parent), body_key(j.child)} == {GROUND, platform})
    limbs = [
        (tuple(limb_joints[k]), tuple(limb_bodies[k])) if part else ((next(direct),), ())
        for k, part in enumerate(parts)
    ]
    position = {id(j): k for k, j in enumerate(model.joints)}
    limbs.sort(key=lambda item: position[id(item[0][0])])  # document order of their first joints
    return Structure(
        platform, how, tuple(Limb(_limb_name(i, joints), bodies, joints) for i, (joints, bodies) in enumerate(limbs))
    )


def _limb_name(index: int, joints: tuple[Joint, ...]) -> str:
    """'limb 1 (J1a…)': numbered in document order, named by its first joint so that a person finds it."""
    return f"limb {index + 1} ({joints[0].name}…)"


def fundamental_cycles(limb: Limb, platform: str, cut: list[str]) -> list[Cycle]:
    """The limb's cycle through each cut joint: the cut joint plus the tree path between its two bodies.
    `cut` names the cut joints of the limb's spanning tree (one per cycle)."""
    tree = [j for j in limb.joints if j.name not in cut]
    adjacent: dict[str, list[tuple[str, str]]] = {}
    for j in tree:
        p, c = body_key(j.parent), body_key(j.child)
        adjacent.setdefault(p, []).append((c, j.name))
        adjacent.setdefault(c, []).append((p, j.name))
    cycles = []
    for name in cut:
        joint = next(j for j in limb.joints if j.name == name)
        bodies, joints = _tree_path(adjacent, body_key(joint.child), body_key(joint.parent))
        cycles.append(Cycle(name, tuple(bodies), (*joints, name)))
    return cycles


def _tree_path(adjacent: dict[str, list[tuple[str, str]]], start: str, goal: str) -> tuple[list[str], list[str]]:
    """Bodies and joints on the tree path from start to goal (depth-first: a tree has one path)."""
    stack = [(start, [start], [])]
    seen = {start}
    while stack:
        body, bodies, joints = stack.pop()
        if body == goal:
            return bodies, joints
        for other, joint in adjacent.get(body, []):
            if other not in seen:
                seen.add(other)
                stack.append((other, [*bodies, other], [*joints, joint]))
    raise ModelError("limb", "a cut joint's two bodies are not linked by the limb's tree", (start, goal))


def is_hybrid(cycles: list[Cycle]) -> bool:
    """Hybrid limb (Def. 2): any two fundamental cycles share at most one body, so no joint either."""
    return all(len(set(a.bodies) & set(b.bodies)) <= 1 for i, a in enumerate(cycles) for b in cycles[i + 1 :])
