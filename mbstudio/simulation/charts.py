"""The coordinates a closed-loop run integrates in, and when to choose them anew.

A run integrates the independent coordinates chosen at its start, with the dependent ones solved from the
loop equations' rows chosen with them (kinematics/coordinates.py). Along the motion that choice can turn
singular while the mechanism does not (the Delta's three actuated angles at a parallel singularity, where its
redundant loop equations still determine the motion). Waiting for the integrator to stall there would decide
the switch where the steps have already lost accuracy, and on how long the integrator happened to try.

Instead the choice is part of the run's state, decided from the state alone, with hysteresis: `ChartWatch`
follows σ, the smallest singular value of the chosen block Φ_q[rows, dep] at the integrated q, at fixed points
of the run (integrators.py); once σ has fallen to FALL of its value at the last decision, a new decision is
taken there (`decided`): the best-conditioned choice at that state (pivoted QR improved by local search, the
mechanism's rank kept, as decided at the start from a closed configuration), taken only when its σ is BETTER
times the one in use; else the choice in use stays and is watched again from that state. A decision is thus
made far from the rounding floor, on margins of factors, so that it does not depend on the last digits, on
what the engine cache holds or on how the run is started.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..dynamics.engine import Engine, engine
from ..kinematics.coordinates import Partition, improved, partition
from ..kinematics.mechanism import Mechanism


class LoopTerms(Protocol):
    """The compiled loop terms a run has once it has crossed a singular configuration (crossing.py's LoopTerms,
    which imports this module): (Φ (m,), Φ_q (m, n), M (n, n)) at q (n,)."""

    def __call__(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


FALL = 0.5  # σ of the choice in use, as a part of its value at the last decision: time to decide again
STEADY = 10  # check intervals over which the margin's fall is extrapolated (a CVODES piece spans CHECKS / CHUNKS)
BETTER = 1.5  # another choice is taken only when its σ is this many times the one in use (hysteresis)
SLACK = 1e-12  # of Φ_q's norm: beyond the rounding of its singular values (surely_kept)


def block_smallest(eng: Engine, y: np.ndarray) -> float:
    """σ_min(Φ_q[rows, dep]) at the q of state y as integrated (within the tolerance of closed: the decisions
    are on factors, far above that); inf for a tree."""
    dep = eng.mech.partition.dependent
    if not dep:
        return np.inf
    q = eng.unpack(np.asarray(y)[None, :])[0][0]
    return eng.smallest_singular_value(q)


class ChartWatch:
    """σ of the engine's chosen loop block at a state, against its value at the last decision."""

    fell = "chart"  # what `first_fall` found (crossing.py's watch also finds the loop equations' loss of rank)
    crossings = False  # whether crossings of singular configurations are near (crossing.py's watch)
    crossed = False  # ... or the run has crossed one

    def __init__(self, eng: Engine, y: np.ndarray) -> None:
        self.eng = eng
        self.reference = block_smallest(eng, y)
        # (t, margin) at the last two check points; a margin not computed yet as the coordinates there (`_recent`)
        self.checked: list[tuple[float, float | np.ndarray]] = []

    def margin(self, t: float, y: np.ndarray) -> float:
        """Positive while the choice keeps FALL of its conditioning; crosses zero where a decision is due (an
        event function of scipy's solve_ivp, also checked at fixed points of a CVODES run)."""
        if not self.eng.mech.partition.dependent:
            return 1.0
        return block_smallest(self.eng, y) / self.reference - FALL

    def margins(self, states: np.ndarray) -> np.ndarray:
        """`margin` at each of the states (K, size), their σ in one batched call."""
        if not self.eng.mech.partition.dependent:
            return np.ones(len(states))
        return self._values(self.eng.unpack(states)[0])

    def first_fall(self, at: np.ndarray, states: np.ndarray) -> int | None:
        """Among check points of a CVODES run (times `at`, states (K, size)), the first where the margin is below
        zero, or None; the margins up to there are remembered for `steady`. The K states' σ in one batched call,
        each equal to `margin`'s at that state alone."""
        if not self.eng.mech.partition.dependent or not len(at):
            return None
        q = self.eng.unpack(states)[0]
        margins = self._margins(q)
        below = np.flatnonzero(margins < 0)
        fall = int(below[0]) if len(below) else None
        seen = len(at) if fall is None else fall + 1
        self.checked = remembered(self.checked, at, margins, q, seen, 2)
        return fall

    def _margins(self, q: np.ndarray) -> np.ndarray:
        """The margins at the coordinates q (K, n), each `margin`'s value at that state, or inf at every one where
        the screen (Engine.surely_conditioned, a few times cheaper than the SVD) finds them all surely positive:
        the first fall is then the same, and the last two margins, which `steady` reads, are computed where it
        reads them (`_recent`): a long piece's watch hands its points over in batches (integrators._Early), and only
        the last batch's are read."""
        if self.eng.surely_conditioned(q, FALL * self.reference):
            return np.full(len(q), np.inf)
        return self._values(q)

    def _values(self, q: np.ndarray) -> np.ndarray:
        """`margin` at the coordinates q (K, n), their σ in one batched call, each that state's own."""
        return self.eng.smallest_singular_values(q) / self.reference - FALL

    def _recent(self) -> list[tuple[float, float]]:
        """The last two check points' (t, margin), those not computed yet computed now (`resolved`)."""
        return resolved(self.checked, self._values)

    def until(self, start: float, end: float, t_end: float, checks: np.ndarray) -> tuple[float, np.ndarray]:
        """Where a piece of the run from `start` to `end` ends, and the points it is watched at: there, and at the
        run's check points in it, `checks` (t_end: the run's end; crossing.py's watch may ask for less)."""
        return end, checks

    def crossing_at(self, y: np.ndarray) -> bool:
        """Whether a crossing of a singular configuration begins at the state y: never for this watch alone."""
        return False

    def kept(self, t: float, y: np.ndarray) -> bool:
        """Whether the run goes on past this watch's fall at the state y (time t) without a decision's restart:
        never for this watch alone (crossing.py's keeps near crossings)."""
        return False

    def steady(self, intervals: int = STEADY) -> bool:
        """Whether the margin, extrapolated from the last two check points over the next `intervals` of their
        intervals, stays positive: the run may then go on in pieces that long (integrators.py); not before two
        checks (after a decision)."""
        if not self.eng.mech.partition.dependent:
            return True
        if len(self.checked) < 2:
            return False
        (_, before), (_, last) = self._recent()
        return last + intervals * (last - before) > 0


def remembered(checked: list, at: np.ndarray, values: np.ndarray, sources, seen: int, keep: int) -> list:
    """A watch's last `keep` points: `checked` and the first `seen` of the points just watched (times `at`), each
    (t, its value), or where the screen left the value out (inf), (t, what it is computed from: that point's row of
    `sources`), computed where it is read (`resolved`): a long piece's watch hands its points over in batches
    (integrators._Early), and only the last batch's are read."""
    points = range(max(seen - keep, 0), seen)
    recent = [(float(at[k]), float(values[k]) if np.isfinite(values[k]) else sources[k]) for k in points]
    return [*checked, *recent][-keep:]


def resolved(checked: list, compute) -> list[tuple[float, float]]:
    """`checked` (`remembered`) with the values left out computed now, in place and in one batch: `compute` maps
    their sources, stacked, to their values, each that point's own whatever the batch."""
    pending = [k for k, (_, value) in enumerate(checked) if not isinstance(value, float)]
    if pending:
        values = compute(np.array([checked[k][1] for k in pending]))
        for k, value in zip(pending, values.tolist(), strict=True):
            checked[k] = (checked[k][0], value)
    return checked


@dataclass(frozen=True)
class Decision:
    """A decision on the coordinates at time `time`: the engine of the choice then in use (changed or kept) and
    the state in its layout."""

    time: float
    engine: Engine
    state: np.ndarray
    changed: bool


def decided(
    eng: Engine,
    t: float,
    state: np.ndarray,
    text: str,
    document: Partition,
    terms: LoopTerms | None = None,
    whole: Engine | None = None,
) -> Decision:
    """The decision at `state` (time t): the engine of the best-conditioned choice there if its σ is BETTER
    times the one in use, else `eng` itself. The document's own choice is the engine filed for the document
    (`document`: its partition), so that a run returning to it builds nothing more. `terms`: as closed_jacobian's.
    `whole`: the engine whose library holds the Jacobian of every loop equation (the run's first), with which a
    decision that can only keep the choice in use is taken without searching (`surely_kept`)."""
    if whole is not None and surely_kept(eng, state, whole):
        return Decision(t, eng, state, False)
    mech, old = eng.mech, eng.mech.partition
    q, phi_q = closed_jacobian(eng, state, terms)
    followers = tuple(c.follower for c in mech.constraints.couplings)
    chosen = improved(phi_q, partition(phi_q, mech.coordinates, rank=old.rank, followers=followers))
    same = (chosen.rows, chosen.independent) == (old.rows, old.independent)
    if same or _block_smallest(phi_q, chosen) < BETTER * _block_smallest(phi_q, old):
        return Decision(t, eng, state, False)
    if _same_choice(chosen, document):
        anew = engine(mech.model, text)
    else:
        anew = engine(mech.model, text, chosen, _mechanism(mech, text, chosen))
    qd = np.asarray(mech.r_matrix(q[None])[0], float) @ eng.unpack(state)[1][0]
    return Decision(t, anew, anew.pack(q, qd[list(anew.mech.partition.independent)]), True)


def surely_kept(eng: Engine, state: np.ndarray, whole: Engine) -> bool:
    """Whether no choice of rows and independent coordinates can be BETTER times the one in use at `state`: the
    smallest singular value of any rank × rank block of Φ_q is at most Φ_q's rank-th (interlacing: removing rows or
    columns lowers no singular value, Horn & Johnson 1991, Topics in Matrix Analysis, Corollary 3.1.3), so where
    that is below BETTER times the block in use's, the search (`decided`) keeps it; by a margin beyond the SVD's
    rounding (SLACK of Φ_q's norm), so that where this says so the search says so too. Near a singular
    configuration of the whole set (crossing.py) the block's fall is the mechanism's, and this settles the
    decisions there: the Delta 3R[2US]'s ten keeps have Φ_q's rank-th singular value within 1.06 of the block's.
    Φ_q from `whole`'s compiled loop Jacobian at the closed q (one native call, not the search's numpy)."""
    partition = eng.mech.partition
    if not partition.dependent:
        return False
    q = eng.closed(np.asarray(state, dtype=float)[None])[0]
    phi_q = whole.loop_jacobians(q)[0]
    sigma = np.linalg.svd(phi_q, compute_uv=False)
    rounding = SLACK * sigma[0]
    return bool(sigma[partition.rank - 1] + rounding < BETTER * (_block_smallest(phi_q, partition) - rounding))


def _mechanism(mech: Mechanism, text: str, chosen: Partition) -> Mechanism:
    """The mechanism in use (`text`: its model's canonical text) with the coordinates `chosen`, for the engine of a
    switch: its tree and loops shared, not built again from the model (reading the text again cost the linear
    Delta's switches 20 ms each), and remembered for the last few choices, as the engines are (a run returning to a
    choice builds nothing)."""
    key = (text, chosen)
    if key not in _MECHANISMS:
        if len(_MECHANISMS) >= _KEPT:
            _MECHANISMS.pop(next(iter(_MECHANISMS)))
        _MECHANISMS[key] = mech.with_partition(chosen)
    return _MECHANISMS[key]


_MECHANISMS: dict[tuple[str, Partition], Mechanism] = {}
_KEPT = 16


def closed_jacobian(eng: Engine, state: np.ndarray, terms: LoopTerms | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(q, Φ_q): the coordinates of `state` (the engine's layout) closed, and the Jacobian of every loop equation
    there (m, n), read-only; from the compiled `terms` once a run has them (crossing.py: once it has crossed a
    singular configuration), which differ from numpy's in rounding only, far below the decisions' margins. The
    last few are remembered: where the watch stops a run, the crossing's test and the decision ask for them at the
    same state, and the crossing's test at the run's start."""
    return _closed_jacobian(eng, np.ascontiguousarray(state, dtype=float).tobytes(), terms)


@functools.lru_cache(maxsize=4)
def _closed_jacobian(eng: Engine, state: bytes, terms: LoopTerms | None) -> tuple[np.ndarray, np.ndarray]:
    q = eng.closed(np.frombuffer(state)[None])[0][0]
    phi_q = terms(q)[1] if terms else np.asarray(eng.mech.constraint_jacobian(q[None])[0], float)
    q.flags.writeable = phi_q.flags.writeable = False
    return q, phi_q


def _same_choice(a: Partition, b: Partition) -> bool:
    return (a.rows, a.independent) == (b.rows, b.independent)


def _block_smallest(phi_q: np.ndarray, choice: Partition) -> float:
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
