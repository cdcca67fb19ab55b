"""Coupled coordinates from other formats: MJCF's equality `joint` and URDF's `mimic`, q_f = ratio · q_l + offset.

Both importers hand each coupling here. MB Studio's documents have no coupling constraint yet, so it is left out
and said in the notes, with the relation, so that nothing changes silently: the follower moves freely.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Model


@dataclass
class Coupling:
    """q_follower = ratio · q_leader + offset, from an equality `joint` (MJCF) or a mimic joint (URDF)."""

    follower: str
    leader: str
    ratio: float
    offset: float
    source: str


def add_coupling(model: Model, coupling: Coupling, notes: list[str]) -> None:
    """Record `coupling` for `model`: today a note naming the relation (the follower keeps its own freedom)."""
    notes.append(
        f"{coupling.source}: {coupling.follower} = {coupling.ratio:.12g} · {coupling.leader} + {coupling.offset:.12g} "
        f"is a coupling MB Studio's documents cannot hold yet: {coupling.follower} is left free"
    )
