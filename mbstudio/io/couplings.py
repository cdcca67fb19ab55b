"""Coupled coordinates from other formats as couplings of the document: URDF's `mimic` (q = multiplier · q_leader +
offset) and MJCF's equality `joint` (a polynomial in the leader, or a value held), each one constraint row beside
the loops' (docs/file-format.md, coupling), so a mimic gripper has its real number of degrees of freedom.

Coupling names share the joints' name space (a coupling may not be named as a joint): importers add every joint
first, then ask `SymbolNames.joint` for each coupling's name.
"""

from __future__ import annotations

from ..model import Coupling, Model
from .import_names import SymbolNames


def add_coupling(
    model: Model, names: SymbolNames, name: str, follower: str, leader: str | None, coefficients: list[float]
) -> Coupling:
    """follower = Σ c_k leader^k (`coefficients` [c0, c1, ...]; without a leader, the follower held at c0) as a
    coupling of `model`, in its simplest form: ratio and offset when it is linear."""
    coefficients = [float(c) for c in coefficients]
    while len(coefficients) > 2 and coefficients[-1] == 0:
        coefficients.pop()
    name = names.joint(name)
    if leader is None:
        coupling = Coupling(name, follower, offset=coefficients[0])
    elif len(coefficients) == 2:
        coupling = Coupling(name, follower, leader, ratio=coefficients[1], offset=coefficients[0])
    else:
        coupling = Coupling(name, follower, leader, polynomial=coefficients)
    model.couplings.append(coupling)
    return coupling
