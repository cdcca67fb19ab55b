"""The coordinates a closed-loop run integrates in, and when to choose them anew.

A run integrates the independent coordinates chosen at its start, with the dependent ones solved from the
loop equations' rows chosen with them (kinematics/coordinates.py). Along the motion that choice can turn
singular while the mechanism does not (the Delta's three actuated angles at a parallel singularity, where its
redundant loop equations still determine the motion). Waiting for the integrator to stall there would decide
the switch where the steps have already lost accuracy, on a Jacobian whose rank the rounding of the stalled
state decides. Instead `ChartWatch` follows the smallest singular value of the chosen block Φ_q[rows, dep]
and asks for a new choice once it has fallen to DROP of its value when the choice was made: far from the
rounding floor, so the decision and the new choice do not depend on the last digits. The new choice keeps the
mechanism's rank (decided once, at the start, from a closed configuration): rank is not re-decided where the
closure is inexact.
"""

from __future__ import annotations

import numpy as np

from ..dynamics.engine import Engine, engine
from ..kinematics.coordinates import improved, partition

DROP = 0.05  # the chosen block's smallest singular value, as a part of its value when chosen: time to re-choose
BETTER = 1.5  # a new choice is taken only when its smallest singular value is this many times the old one's


class ChartWatch:
    """σ_min of the engine's chosen loop block at a state, against its value when the choice was made."""

    def __init__(self, eng: Engine, y: np.ndarray) -> None:
        self.eng = eng
        self.reference = self.smallest(y)

    def smallest(self, y: np.ndarray) -> float:
        """σ_min(Φ_q[rows, dep]) at the closed configuration of state y; inf for a tree."""
        if not self.eng.mech.partition.dependent:
            return np.inf
        q = self.eng.closed(np.asarray(y)[None, :])[0][0]
        block = np.asarray(self.eng.closure(q)[1], dtype=float)
        return float(np.linalg.svd(block, compute_uv=False)[-1])

    def margin(self, t: float, y: np.ndarray) -> float:
        """Positive while the choice is well conditioned; crosses zero where it should be made anew (an event
        function of scipy's solve_ivp, also checked between CVODES chunks)."""
        if not self.eng.mech.partition.dependent:
            return 1.0
        return self.smallest(y) / self.reference - DROP


def chosen_anew(eng: Engine, state: np.ndarray | None, text: str) -> tuple[Engine, np.ndarray] | None:
    """The engine of the rows and independent coordinates chosen at `state` (pivoted QR improved by local
    search, the mechanism's own rank kept), and the state in them; None when no choice is better conditioned
    there by BETTER (the mechanism itself is singular there, or the choice would not change)."""
    if state is None or not eng.mech.partition.dependent:
        return None
    mech, old = eng.mech, eng.mech.partition
    q = eng.closed(state[None])[0][0]
    phi_q = np.asarray(mech.constraint_jacobian(q[None])[0], float)
    followers = tuple(c.follower for c in mech.constraints.couplings)
    chosen = improved(phi_q, partition(phi_q, mech.coordinates, rank=old.rank, followers=followers))
    if (chosen.rows, chosen.independent) == (old.rows, old.independent):
        return None
    if _block_smallest(phi_q, chosen) < BETTER * _block_smallest(phi_q, old):
        return None
    qd = np.asarray(mech.r_matrix(q[None])[0], float) @ eng.unpack(state)[1][0]
    anew = engine(mech.model, text, chosen)
    return anew, anew.pack(q, qd[list(chosen.independent)])


def _block_smallest(phi_q: np.ndarray, choice) -> float:
    block = phi_q[np.ix_(list(choice.rows), list(choice.dependent))]
    return float(np.linalg.svd(block, compute_uv=False)[-1])


def singularity(eng: Engine, state: np.ndarray | None, y0: np.ndarray) -> str:
    """Why the steps shrank, where the constraint Jacobian says: the loop equations and coordinates in use
    lost rank there (smallest singular value there and at the start) and no other choice does better, or the
    mechanism's whole set of equations lost rank: a singular configuration."""
    if state is None or not eng.mech.partition.rows:
        return ""
    mech, rows, rank = eng.mech, list(eng.mech.partition.rows), eng.mech.partition.rank
    jacobians = [mech.constraint_jacobian(eng.closed(y[None])[0])[0] for y in (state, y0)]
    chosen = [np.linalg.svd(J[rows], compute_uv=False).min() for J in jacobians]
    whole = [np.linalg.svd(J, compute_uv=False)[rank - 1] for J in jacobians]
    if chosen[0] > 1e-2 * chosen[1]:
        return ""
    numbers = f"smallest singular value {chosen[0]:.2g}, {chosen[1]:.2g} at the start"
    if whole[0] > 1e-2 * whole[1]:
        return (
            f". The loop equations and independent coordinates in use become singular there ({numbers}), though "
            f"the mechanism's full set of equations keeps its rank ({whole[0]:.2g}), and no other choice of them "
            "is better conditioned there; choose other independent_coordinates, or end the run before"
        )
    return (
        f". The mechanism reaches a singular configuration there: its loop constraints lose rank ({numbers}), "
        "where the rigid model does not determine the motion; a joint limit, damping or an actuator keeps it away"
    )
