"""Coupled coordinates from other formats: MJCF's equality `joint` and URDF's `mimic`, q_f = ratio · q_l + offset.

Both importers hand each coupling here; it becomes a coupling of the document (model/document.py: one constraint
row beside the loops', so the follower is driven by its leader and the mechanism has its real degrees of freedom),
named after its follower, and the notes say so with the relation.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Model, document
from ..model.names import MAX_LENGTH


@dataclass
class Coupling:
    """q_follower = ratio · q_leader + offset, from an equality `joint` (MJCF) or a mimic joint (URDF)."""

    follower: str
    leader: str
    ratio: float
    offset: float
    source: str


def add_coupling(model: Model, coupling: Coupling, notes: list[str]) -> None:
    """Add `coupling` to `model` as a document coupling `<follower>_coupling` (made unique), and note it."""
    taken = {c.name for c in model.couplings} | {j.name for j in model.joints}
    stem = f"{coupling.follower[: MAX_LENGTH - 12]}_coupling"
    name, k = stem, 1
    while name in taken:
        k += 1
        name = f"{stem}_{k}"
    model.couplings.append(document.Coupling(name, coupling.follower, coupling.leader, coupling.ratio, coupling.offset))
    notes.append(
        f"{coupling.source}: coupling '{name}', {coupling.follower} = {coupling.ratio:.12g} · {coupling.leader} "
        f"+ {coupling.offset:.12g} (the follower is driven by its leader)"
    )
