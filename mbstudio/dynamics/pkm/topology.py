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
    while left:
        stack, part = [min(left)], []
        left.discard(stack[0])
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
    direct = sum(1 for j in model.joints if {body_key(j.parent), body_key(j.child)} == {GROUND, platform})
    return parts + [[]] * direct


def find_platform(model: Model) -> tuple[str, str] | None:
    """(platform label, "declared" or "detected"), or None when the model is no parallel machine.

    A declared platform (the file's `platform.body`) is taken as it is. Otherwise every body is tried: its
    limbs must be at least two, each touching both the ground and it; among the candidates the one whose
    smallest limb is largest wins (the Delta's cross-link also splits the mechanism into two "limbs", one of
    them the lone upper arm), then the one with more limbs."""
    if model.platform is not None:
        return model.platform.body, "declared"
    best, best_key = None, None
    for body in model.bodies:
        parts = _limb_parts(model, body.label)
        if parts is None or len(parts) < 2:
            continue
        key = (min(len(p) for p in parts), len(parts))
        if best_key is None or key > best_key:
            best, best_key = body.label, key
    return None if best is None else (best, "detected")


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
    limbs = []
    direct = iter(j for j in model.joints if {body_key(j.parent), body_key(j.child)} == {GROUND, platform})
    for part in parts:
        members = set(part)
        if members:
            joints = tuple(j for j in model.joints if {body_key(j.parent), body_key(j.child)} & members)
            order = [b.label for b in model.bodies if b.label in members]
        else:
            joints, order = (next(direct),), []
        limbs.append((joints, tuple(order)))
    limbs.sort(key=lambda item: model.joints.index(item[0][0]))  # document order of their first joints
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
