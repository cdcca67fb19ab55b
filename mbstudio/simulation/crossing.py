"""Crossing a singular configuration, where the mechanism's whole set of loop equations loses rank.

There no choice of independent coordinates can carry the motion (charts.py): every square block of Φ_q is
singular, the Newton steps that close the loops and the velocity map R = ∂q/∂q_ind blow up, and the integrator
stalls. The configuration itself is not where the motion ends: a motion on one branch of the configuration space
passes transversally through the point where another branch meets it (the loop equations' rank falls by one
there and recovers after), its velocity and inertia carry it across.

So the run crosses it in all the tree coordinates, where nothing has to be inverted but the mass matrix: from the
first fixed check point (or the stall) where the rank-th singular value of the whole Φ_q is below ENTER of its value at
the start, the motion is integrated in z = (q, q̇) as an index-one DAE with Baumgarte's stabilisation (Baumgarte
1972), its multipliers damped where the constraints turn redundant (the singularity-robust inverse of Nakamura &
Hanafusa 1986: a regularisation of the constraint that turns redundant):

    M q̈ = Q − C − Φ_qᵀ λ,   Φ_q q̈ = −(γ + 2 ω Φ̇ + ω² Φ)   solved on the singular values of Φ_q L⁻ᵀ (M = L Lᵀ),
    each σ replaced by σ / (σ² + ε²) in the inverse

so that the right-hand side is a smooth function of the state with no decision inside it: the constraints are held
exactly where σ ≫ ε, and the one whose multiplier is undetermined at the point itself is released over the few
microseconds where its σ is below ε. The rate is one native call (dynamics/augmented.py, which computes the same
inverse by a QR factorisation, never squaring the conditioning), integrated by CVODES between the run's check
points. Once the singular value has risen past LEAVE of its start value (hysteresis:
LEAVE > ENTER) at a check point, q is projected onto Φ = 0 by least-squares Newton steps (the nearest closed
configuration: the branch the motion took) and q̇ onto Φ_q q̇ = 0 in the metric of M (the least change of kinetic
energy), and the run goes on in independent coordinates from there. What the crossing did, with the size of the
projection, is reported (`Crossing.note`): the run's energy balance checks it."""

from __future__ import annotations

import functools
import math
import weakref
from dataclasses import dataclass
from pathlib import Path

import casadi
import numpy as np

from ..dynamics.augmented import augmented_functions
from ..dynamics.engine import Engine
from ..kinematics.mechanism import Mechanism
from ..numerics.compiled import Native
from .charts import STEADY, remembered, resolved, surely_kept
from .integrators import CHECKS, FINE, MAX_STEPS, IntegrationError, distinct, evaluations_lost
from .serial_integrator import SerialIntegrator

ENTER = 0.02  # the rank-th singular value of Φ_q as a part of its value at the start: the crossing begins below it
LEAVE = 0.04  # ... and ends above it, at a check point past the singular configuration
NEAR = 0.2  # ... and is watched more closely from a check point where it is below this (CrossingWatch), at points
# at least 1 / FINE of a check interval apart
SCREEN = 1e-10  # of Φ_q's norm: beyond the rounding of its singular values (CrossingWatch._screened)
SEPARATE = 1e-14  # of Φ_q's largest entry: the entries between its blocks are rounding below it (LoopBlocks)
DAMPING = 1e-3  # the multipliers' damping: below this part of the start's rank-th singular value of Φ_q L⁻ᵀ
STABILITY = 1.0  # Baumgarte's ω, in units of 1 / (the run's check interval): Φ decays within a few intervals
FASTEST_STABILITY = 100.0  # /s, ω at most (a 2-s run's): a run of 0.35-0.5 s had ω = 400-571/s, and the Delta
# 3R[2US]'s first crossing, stiffer by ω², made CVODES' Adams steps give up at 0.275 s (docs/accuracy.md)
PROJECTIONS = 8  # least-squares Newton steps at most, back onto the loops after the crossing
RETURN = 3e4  # /s: the state returned onto Φ = 0 and Φ_q q̇ = 0 at this rate inside a crossing of redundant loop
# equations (dynamics/augmented.py; docs/accuracy.md: IRSBot-2's crossings converge under it, not under ω alone)
SPAN = 8  # check intervals a crossing's CVODES piece spans at most: one up to SHORT check points, then twice the last
# while it goes on (each restart of Adams' formula at order one cost the Delta 3R[2US]'s last crossing, 0.14 s long,
# half its evaluations; its others end at the first or second check point past the entry, where a longer piece
# integrated in vain what followed)
SHORT = 2


@dataclass
class Crossing:
    """A crossing from `start` to `end`: the tree coordinates (q, q̇, q̈) at the output times in (start, end], the
    state to go on from at `end` (q closed, q̇ on the velocity constraints), the evaluations made, a note, and the
    compiled loop terms, which the run's later decisions use (charts.closed_jacobian)."""

    start: float
    end: float
    states: tuple[np.ndarray, np.ndarray, np.ndarray]
    q: np.ndarray
    qd: np.ndarray
    calls: int
    note: str
    terms: LoopTerms


class LoopBlocks:
    """The singular values of the whole Φ_q (m, n), from its loops' blocks: the rows joined by the coordinates they
    share (a vehicle's corners: blocks of 18 × 21, 9 × 10 and 9 × 10 in its 36 × 47), permuted to a block-diagonal
    matrix whose singular values are the union of its blocks' (Golub & Van Loan 2013, 8.6), each shape's blocks in
    one batched SVD. The blocks are read from Φ_q at two fixed generic coordinates (`probe`), its entries beyond
    SEPARATE of its largest: the others are the rounding of terms that cancel (the vehicle's 1e-17 between its
    corners). A state's values then differ from the whole Φ_q's by at most the Frobenius norm of its entries outside
    the blocks (Weyl's inequality), held within SEPARATE of its largest singular value, below the SVD's own rounding
    (m ε ‖Φ_q‖); a state beyond that, or a Φ_q of one block, has the whole matrix's SVD."""

    def __init__(self, probe: np.ndarray) -> None:
        """From Φ_q (2, m, n) at the coordinates `probe` gives."""
        pattern = (np.abs(probe) > SEPARATE * np.abs(probe).max(axis=(1, 2), keepdims=True)).any(axis=0)
        (m, n), parts = pattern.shape, _row_parts(pattern)
        blocks = [(rows, np.flatnonzero(pattern[rows].any(axis=0))) for rows in parts]
        blocks = [rows[:, None] + columns[None, :] * m for rows, columns in blocks if len(columns)]  # by columns
        shapes: dict[tuple[int, int], list[np.ndarray]] = {}
        for entries in blocks:
            shapes.setdefault(entries.shape, []).append(entries)
        self.shapes = [np.stack(same) for same in shapes.values()]  # each (blocks, rows, columns): flat entries
        outside = np.ones(m * n, dtype=bool)
        for entries in blocks:
            outside[entries.ravel()] = False
        self.outside = np.flatnonzero(outside)  # not np.setdiff1d, which imports numpy.ma (20 ms of a run)
        self.pad = min(m, n) - sum(min(entries.shape) for entries in blocks)
        self.apart = len(blocks) > 1

    @staticmethod
    def probe(n: int) -> np.ndarray:
        """The two fixed generic coordinates (2, n) whose Φ_q give the blocks' pattern: sines of incommensurate
        multiples, in (-1, 1), no two alike (without numpy.random, which a run would otherwise import: 10 ms)."""
        k = np.arange(1, n + 1)
        return np.sin(np.outer([math.sqrt(2.0), math.sqrt(3.0)], k) + [[0.3], [1.1]])

    def values(self, jacobians: np.ndarray) -> np.ndarray:
        """The singular values (K, min(m, n)), descending, of each of the Φ_q (K, m, n): each state's the same bits
        whatever the batch it is in."""
        if not self.apart:
            return np.linalg.svd(jacobians, compute_uv=False)
        flat = jacobians.transpose(0, 2, 1).reshape(len(jacobians), -1)  # by columns: loop_jacobians' own layout
        parts = [np.linalg.svd(flat[:, entries], compute_uv=False).reshape(len(flat), -1) for entries in self.shapes]
        zeros = [np.zeros((len(flat), self.pad))] if self.pad else []
        values = np.sort(np.concatenate([*parts, *zeros], axis=1), axis=1)[:, ::-1]
        outside = flat[:, self.outside]
        whole = np.einsum("ij,ij->i", outside, outside) > (SEPARATE * values[:, 0]) ** 2
        if whole.any():
            values[whole] = np.linalg.svd(jacobians[whole], compute_uv=False)
        return values


def _row_parts(pattern: np.ndarray) -> list[np.ndarray]:
    """The rows of the nonzero pattern (m, n) joined by the columns they share: the connected parts, in order."""
    parent = list(range(pattern.shape[0]))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for column in pattern.T:
        rows = np.flatnonzero(column)
        for r in rows[1:]:
            parent[root(int(r))] = root(int(rows[0]))
    parts: dict[int, list[int]] = {}
    for r in range(pattern.shape[0]):
        parts.setdefault(root(r), []).append(r)
    return [np.array(rows) for rows in parts.values()]


_BLOCKS: weakref.WeakKeyDictionary[Engine, LoopBlocks] = weakref.WeakKeyDictionary()


def loop_blocks(eng: Engine) -> LoopBlocks:
    """The blocks of the engine's loop Jacobian (`Engine.loop_jacobians`), found once per engine."""
    if eng not in _BLOCKS:
        _BLOCKS[eng] = LoopBlocks(eng.loop_jacobians(LoopBlocks.probe(eng.n)))
    return _BLOCKS[eng]


def crossing_due(eng: Engine, y: np.ndarray, start: float | None, first: Engine) -> bool:
    """Whether the state y (the engine's layout) is near a singular configuration of the whole set of loop
    equations: its rank-th singular value at the closed q below ENTER of the start's (`start_rank`; None: never
    crossed). `first`: the run's first engine, whose library holds the loop Jacobian (`rank_values`)."""
    if start is None:
        return False
    return bool(rank_values(first, eng.closed(np.asarray(y, dtype=float)[None])[0])[0] < ENTER * start)


def start_rank(eng: Engine, y_start: np.ndarray) -> float | None:
    """The rank-th singular value of Φ_q at the run's start (y_start: the state in the layout of `eng`, its first
    engine: another engine's closing would solve other coordinates, and only the document's coordinates' engine
    holds the loop Jacobian), against which the crossings are decided; None
    where the run is never crossed: a tree, or a model whose orientations are carried as quaternions (ball joints:
    their rates are not the coordinates' derivatives)."""
    if not eng.mech.partition.rows or eng.states.quaternions:
        return None
    return float(rank_values(eng, eng.closed(np.asarray(y_start)[None])[0])[0])


def rank_values(eng: Engine, q: np.ndarray) -> np.ndarray:
    """The rank-th singular value of the whole Φ_q (zero where the loop equations lose the rank the mechanism has,
    decided at its start: kinematics/coordinates.py) at each of the coordinates q (K, n), Φ_q from the engine's
    compiled loop Jacobian in one native call: the same bits as the crossing's loop terms (dynamics/engine.py,
    loop_jacobian), without building them."""
    return loop_blocks(eng).values(eng.loop_jacobians(q))[:, eng.mech.partition.rank - 1]


class CrossingWatch:
    """The chart watch of charts.py, and the whole Φ_q's rank-th singular value against ENTER of the start's: the
    crossing begins where that value falls to ENTER, located as a root of `margin` (integrators.py), so that where
    it begins is decided by the state alone, never by where the integrator happened to stall. On a near pass the
    value falls to ENTER and rises again within a few milliseconds (the Delta's: 3 ms), between the run's check
    points; so once it is below NEAR of the start's at a check point (`near`), the run is watched at points set by
    the value's own fall (`until`): where the line through its last two values says it reaches ENTER / 2. The value
    is a convex function of time about its minimum (a hyperbola on a transversal pass), so the secant falls faster
    than the value: each point is reached before the minimum, or near it, and a fall below ENTER is not passed
    unseen. A tree, or a model carried in quaternions, is never crossed (crossing_due): its watch is the chart's."""

    def __init__(
        self, chart, eng: Engine, t: float, y: np.ndarray, start: float | None, crossed: bool, first: Engine
    ) -> None:
        """The watch of a run with the engine `eng` from the state y at time t; `start`: the run's `start_rank`;
        `crossed`: whether the run has crossed already; `first`: the run's first engine (the document's coordinates),
        whose library holds the loop Jacobian (every loop equation's: the same whatever the coordinates in use)."""
        self.chart, self.eng, self.fell, self.crossed, self.start = chart, eng, "chart", crossed, start
        self.first = first
        # (t, the rank value over the start's) at the last three points watched
        # (t, value) at the last three points watched; a value not computed yet as Φ_q there (`_recent`)
        self.checked: list[tuple[float, float | np.ndarray]] = []
        if start is not None:
            self.checked = [(t, float(self._ratios(np.asarray(y)[None])[0]))]
        self.near = bool(self.checked) and self.checked[-1][1] < NEAR

    @property
    def crossings(self) -> bool:
        """Whether crossings are near: the run has crossed, or is near one (where CVODES gives up, the run then
        goes on in its parts, watched at their ends: integrators.py)."""
        return self.near or self.crossed

    def _ratios(self, states: np.ndarray) -> np.ndarray:
        """The rank-th singular value of Φ_q at the states' q (as integrated), over the start's."""
        return rank_values(self.first, self.eng.unpack(np.asarray(states))[0]) / self.start

    def _jacobians(self, states: np.ndarray) -> np.ndarray:
        """Φ_q (K, m, n) at the states' q (as integrated), from the first engine's compiled loop Jacobian."""
        return self.first.loop_jacobians(self.eng.unpack(np.asarray(states))[0])

    def _values(self, jacobians: np.ndarray) -> np.ndarray:
        """`_ratios` from the states' Φ_q (K, m, n): each the same bits as a state's own (an SVD each)."""
        return loop_blocks(self.first).values(jacobians)[:, self.eng.mech.partition.rank - 1] / self.start

    def _screened(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`_ratios` at the states (K of them), and their Φ_q, except inf where the value is surely at least NEAR,
        or ENTER while the watch is near (`first_fall` then decides only on a fall below ENTER there): where the
        loop equations have full row rank, by a Cholesky factor of J Jᵀ less the floor's square (`_surely_above`, as
        Engine.surely_conditioned screens the chart's), else by Weyl's inequality σ_r(J) ≥ σ_r(J_K) − ‖J − J_K‖_F from
        the last state's, by a margin beyond the SVD's rounding (SCREEN of J_K's norm). What `first_fall` decides
        on these is then the same, at a fraction of the SVDs; the values it remembers are computed where they are
        read (`_recent`): a long piece's watch hands its points over in batches (integrators._Early), and only the
        last batch's are read."""
        jacobians = self._jacobians(states)
        rank, floor = self.eng.mech.partition.rank, (ENTER if self.near else NEAR) * self.start
        ratios = np.full(len(jacobians), np.inf)
        if rank == jacobians.shape[1]:
            unsure = np.flatnonzero(~_surely_above(jacobians, floor))
        else:
            last = loop_blocks(self.first).values(jacobians[-1:])[0]
            flat = jacobians.transpose(0, 2, 1).reshape(len(jacobians), -1)  # by columns: loop_jacobians' layout
            bound = last[rank - 1] - np.linalg.norm(flat - flat[-1], axis=1) - SCREEN * last[0]
            ratios[-1] = last[rank - 1] / self.start
            unsure = np.flatnonzero(bound[:-1] < floor)
        if len(unsure):
            ratios[unsure] = self._values(jacobians[unsure])
        return ratios, jacobians

    def _recent(self) -> list[tuple[float, float]]:
        """The last three points watched, (t, value), those not computed yet computed now (charts.resolved)."""
        return resolved(self.checked, self._values)

    def kept(self, t: float, y: np.ndarray) -> bool:
        """Whether the run goes on past the chart's fall at the state y (time t) without a restart: near crossings
        (`crossings`), where the run's decision there can only keep the coordinates (no crossing due, and
        charts.surely_kept: the decision run.py would take, without its search). The chart is then watched from
        there, as a run resumed there would be, and the rank value's history is kept: a restart lost it and began
        with a cautious piece (`until`), four times on the Delta 3R[2US]. Not for a model with force laws' states
        (run.py refuses a decision on them)."""
        if self.start is None or not self.crossings or self.eng.law_states:
            return False
        if crossing_due(self.eng, y, self.start, self.first) or not surely_kept(self.eng, y, self.first):
            return False
        self.chart = type(self.chart)(self.eng, y)
        self.checked = [(at, ratio) for at, ratio in self.checked if at <= t][-3:]
        self.near = self._recent()[-1][1] < NEAR
        return True

    def crossing_at(self, y: np.ndarray) -> bool:
        """Whether the state y is past a crossing's entry (where `margin` crossed zero on the rank's fall)."""
        return self.start is not None and bool(self._ratios(y[None])[0] < ENTER)

    def margin(self, t: float, y: np.ndarray) -> float:
        """The chart watch's margin, or the rank's where lower (both cross zero where a decision is due)."""
        chart = self.chart.margin(t, y)
        return chart if self.start is None else min(chart, float(self.rank_margins(y[None])[0]))

    def margins(self, states: np.ndarray) -> np.ndarray:
        """`margin` at each of the states (K, size), in one batch."""
        chart = self.chart.margins(states)
        return chart if self.start is None else np.minimum(chart, self.rank_margins(states))

    def rank_margins(self, states: np.ndarray) -> np.ndarray:
        """The rank's margin alone at each of the states (K, size): below zero past a crossing's entry (where it
        falls there, the entry is placed, not the chart's: integrators._Parts.root). Only its sign is read: where
        the value is surely above ENTER (`_surely_above`, loops of full row rank), 1 stands for it, without an
        SVD (the entry's search on the Delta 3R[2US]: most of its grid's points). Never 0 there: scipy's methods
        watch `margin` as an event, and a zero is a root (every sprung SLA run by DOP853 stopped at t = 0)."""
        jacobians = self._jacobians(states)
        margins = np.ones(len(jacobians))
        unsure = np.arange(len(jacobians))
        if self.eng.mech.partition.rank == jacobians.shape[1]:
            unsure = unsure[~_surely_above(jacobians, ENTER * self.start)]
        margins[unsure] = self._values(jacobians[unsure]) / ENTER - 1
        return margins

    def first_fall(self, at: np.ndarray, states: np.ndarray) -> int | None:
        """The first point watched (times `at`, states) where a decision is due: the chart's or the rank's margin
        below zero (`fell`: "chart" or "rank"), or where the rank value first falls below NEAR ("near": the run
        goes on from there watched more closely); None if none."""
        self.fell = "chart"
        if self.start is None or not len(at):
            return self.chart.first_fall(at, states)
        ratios, jacobians = self._screened(states)
        entered = np.flatnonzero(ratios < NEAR)
        seen = len(at) if self.near or not len(entered) else int(entered[0]) + 1
        # the last three points seen are remembered (`until`, `steady`): their values, or their Φ_q (`_recent`)
        self.checked = remembered(self.checked, at, ratios, jacobians, seen, 3)
        chart = self.chart.first_fall(at[:seen], states[:seen])
        below = np.flatnonzero(ratios[:seen] < ENTER)
        if len(below) and (chart is None or below[0] <= chart):
            self.fell = "rank"
            return int(below[0])
        if chart is not None:
            return chart
        if seen < len(at):
            self.near, self.fell = True, "near"
            return seen - 1
        # a screened value is at least NEAR while not near, but while near only at least ENTER: read it then
        last = ratios[-1] if np.isfinite(ratios[-1]) or not self.near else self._recent()[-1][1]
        self.near = bool(last < NEAR)
        return None

    def steady(self, intervals: int = STEADY) -> bool:
        """The chart watch's; never while near a crossing (the run then goes on to the next check point); and once
        the run has crossed, the rank value extrapolated from the last three check points (a parabola: between
        crossings it rises to a plateau and falls again) staying above NEAR over the next `intervals` of their
        intervals, so that CVODES does not stall on the way to the next crossing inside a long piece; and never
        over more than STEADY intervals: the value stays on a plateau between crossings and falls from it without
        warning (the Delta 3R[2US]'s at 0.51 of the start's for 0.2 s, then to the next crossing within 0.13 s)."""
        if self.start is None or not (self.near or self.crossed):
            return self.chart.steady(intervals)
        if self.near or len(self.checked) < 3 or intervals > STEADY or not self.chart.steady(intervals):
            return False
        first, before, last = (ratio for _, ratio in self._recent())
        slope, curvature = (last - first) / 2, last - 2 * before + first
        k = np.arange(1, intervals + 1)
        return bool((last + k * slope + k * (k + 1) / 2 * curvature > NEAR).all())

    def until(self, start: float, end: float, t_end: float, checks: np.ndarray) -> tuple[float, np.ndarray]:
        """Where a piece of the run from `start` (the last point watched) to `end` ends, and the points it is
        watched at (`checks`, the run's check points in it): while near a crossing and the rank value falling, at
        the time where the secant through its last two values reaches ENTER / 2, at least 1 / FINE of a check
        interval after `start` (without a secant yet: there)."""
        if not self.near:
            return end, checks
        until = start + t_end / (CHECKS * FINE)
        if len(self.checked) >= 2:
            (t0, before), (t1, last) = self._recent()[-2:]
            if before <= last or t1 <= t0:  # rising: to the next check point
                return end, checks
            until = max(until, t1 + (last - ENTER / 2) * (t1 - t0) / (before - last))
        if until >= end - 1e-12 * t_end:
            return end, checks
        return until, np.append(checks[checks < until], until)


@functools.lru_cache(maxsize=8)
def _terms_blocks(terms, n: int) -> LoopBlocks:
    """The blocks of the loop terms' Φ_q (`LoopTerms`), found once per library (a run's crossings share them)."""
    return LoopBlocks(np.array([terms(q)[1].reshape(-1, n, order="F") for q in LoopBlocks.probe(n)]))


def _surely_above(jacobians: np.ndarray, floor: float) -> np.ndarray:
    """Whether the smallest singular value of each Φ_q (K, m, n), m ≤ n, is surely at least `floor`: J Jᵀ less
    floor² and a margin (1e-10 of ‖J‖_F²) has a Cholesky factor. The margin is beyond the rounding of J Jᵀ and of
    its factorisation (n ε ‖J‖_F² and a few m ε of it), and puts σ beyond the floor by more than the SVD's rounding
    (m ε ‖J‖), so that the SVD's value is at least the floor too. One batch, else state by state."""
    gram = jacobians @ jacobians.transpose(0, 2, 1)
    shift = floor**2 + 1e-10 * np.trace(gram, axis1=1, axis2=2)
    shifted = gram - shift[:, None, None] * np.eye(gram.shape[1])
    return _factorable(shifted)


def _factorable(matrices: np.ndarray) -> np.ndarray:
    """Whether each of a stack of symmetric matrices has a Cholesky factor: LAPACK's factorisation of each, as
    np.linalg.cholesky makes it, in one call. numpy's wrapper raises where any of them has none; its own gufunc
    leaves those as NaN (numpy 2.2 to 2.4), else each is factorised alone (a third of the Delta 3R[2US]'s
    screening went to the ~200 single calls a run made after its batch failed)."""
    gufunc = getattr(getattr(np.linalg, "_umath_linalg", None), "cholesky_lo", None)
    if gufunc is not None:
        with np.errstate(invalid="ignore"):
            factors = gufunc(matrices, signature="d->d")
        return ~np.isnan(factors).any(axis=(1, 2))
    return np.array([_one_factorable(matrix) for matrix in matrices], dtype=bool)


def _one_factorable(matrix: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


class LoopTerms:
    """The compiled loop equations, their Jacobian and the mass matrix at one q (dynamics/augmented.py), and what
    the crossing computes from them."""

    def __init__(self, mech: Mechanism, functions: Native) -> None:
        self.mech, self._terms = mech, functions.calls["loop_terms"]
        self.blocks = _terms_blocks(self._terms, mech.n)

    def __call__(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Φ (m,), Φ_q (m, n), M (n, n)) at q (n,)."""
        phi, jac, mass = self._terms(np.ascontiguousarray(q, dtype=float))
        n = self.mech.n
        return phi, jac.reshape(len(phi), n, order="F"), mass.reshape(n, n, order="F")

    def rank_value(self, q: np.ndarray) -> float:
        """The rank-th singular value of Φ_q at q (n,), from the compiled Jacobian, as `rank_values` computes it."""
        return float(self.rank_values(np.asarray(q)[None])[0])

    def rank_values(self, q: np.ndarray) -> np.ndarray:
        """`rank_value` at each of the coordinates q (K, n), in one batched SVD."""
        jacobians = np.array([self(at)[1] for at in q])
        return self.blocks.values(jacobians)[:, self.mech.partition.rank - 1]

    def weighted_rank_value(self, q: np.ndarray) -> float:
        """The rank-th singular value of Φ_q L⁻ᵀ (M = L Lᵀ) at q (n,): the scale the multipliers' damping is set on."""
        _, jac, mass = self(q)
        weighted = np.linalg.solve(np.linalg.cholesky(mass), jac.T).T
        return float(np.linalg.svd(weighted, compute_uv=False)[self.mech.partition.rank - 1])

    def closed(self, q: np.ndarray) -> tuple[np.ndarray, float]:
        """q moved onto Φ = 0 by least-squares Newton steps (the nearest closed configuration), and how far."""
        start, tol = q.copy(), 1e-13 * self.mech.length_scale
        for _ in range(PROJECTIONS):
            phi, jac, _ = self(q)
            if np.abs(phi).max(initial=0.0) <= tol:
                break
            q = q - np.linalg.lstsq(jac, phi, rcond=None)[0]
        return q, float(np.abs(q - start).max())

    def on_constraints(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """q̇ projected onto Φ_q q̇ = 0 in the metric of M: the nearest admissible rates in kinetic energy."""
        _, jac, mass = self(q)
        jac = jac[list(self.mech.partition.rows)]
        Minv_jt = np.linalg.solve(mass, jac.T)
        return qd - Minv_jt @ np.linalg.solve(jac @ Minv_jt, jac @ qd)


def cross(eng: Engine, t0: float, y0: np.ndarray, times: np.ndarray, tolerances, clock, q_start) -> Crossing:
    """The crossing from the state y0 (engine layout) at t0, with the run's output times `times` (from t0 on) and
    tolerances (rtol, atol): integrated by CVODES between the run's fixed check points, on the compiled rate of
    dynamics/augmented.py, until the rank-th singular value of Φ_q exceeds LEAVE of its start value (at q_start, the
    run's start closed), or the run ends."""
    mech, n = eng.mech, eng.mech.n
    functions = augmented_functions(eng.text)
    terms = LoopTerms(mech, functions)
    t_end = times[-1]
    q, _ = eng.closed(np.asarray(y0)[None])
    qd = eng.velocities(q[0], eng.unpack(np.asarray(y0)[None])[1][0])
    parameters = [min(STABILITY * CHECKS / t_end, FASTEST_STABILITY), DAMPING * terms.weighted_rank_value(q_start)]
    returned = functions.functions["augmented_rate"].nnz_in(2) == 3  # redundant loop equations (augmented.py)
    parameters += [RETURN] if returned else []
    z, start, t = np.concatenate([q[0], qd]), terms.rank_value(q_start), t0
    lowest, calls, outputs = terms.rank_value(q[0]), 0, []
    problem = _driver_problem(functions, parameters)
    if problem is not None:
        interval = functools.partial(_driven, problem, tolerances=tolerances)
    else:
        interval = functools.partial(
            _integrator, functions.functions["augmented_rate"], rtol=tolerances[0], atol=tolerances[1]
        )
    checks = t_end * np.arange(1, CHECKS + 1) / CHECKS
    remaining, span, passed = checks[checks > t0 + 1e-12 * t_end], 1, 0
    while len(remaining):
        if clock is not None:
            clock(t)
        ends, end = remaining[:span], remaining[:span][-1]
        inside = times[(times > t) & (times <= end)]
        normalised, at = (np.round((x - t) / (end - t), 12) for x in (inside, ends))  # equal spans share one
        # CVODES' first step is guessed from its first return: one a fine step in (FINE a check interval) keeps it
        # within what the rate's fast change at a crossing's entry allows (guessed from the whole interval, the
        # Delta 3R[2US]'s third crossing took 936 steps and ended 1.8e-7 rad from where it took 273-349 with any
        # first return from 1e-6 to 1e-2 of its interval)
        first = np.round(min(t_end / (CHECKS * FINE), end - t) / (end - t), 12)
        marks = tuple(distinct(np.concatenate([normalised, at, [first, 1.0]])).tolist())  # not np.unique (numpy.ma)
        solver, p = interval(marks), [t, end - t] if problem else [t, end - t, *parameters]
        try:
            reached = np.asarray(solver(x0=z, p=p)["xf"]).T
        except RuntimeError as failure:
            message = "the crossing of a singular configuration failed (CVODES gave up)"
            made = int(solver.stats().get("nfevals", 0)) + evaluations_lost(failure, MAX_STEPS)
            raise IntegrationError(t, message, calls=calls + made) from None
        calls += int(solver.stats().get("nfevals", 0))
        states = reached[np.searchsorted(marks, at)]
        values = terms.rank_values(states[:, :n])
        above = np.flatnonzero(values > LEAVE * start)
        last = int(above[0]) if len(above) else len(ends) - 1  # the first check point past the crossing
        kept = inside <= ends[last] + 1e-12 * t_end
        outputs += list(zip(inside[kept], reached[np.searchsorted(marks, normalised[kept])], strict=True))
        z, t, lowest = np.ascontiguousarray(states[last]), float(ends[last]), min(lowest, values[: last + 1].min())
        if len(above):
            break
        remaining, passed = remaining[len(ends) :], passed + len(ends)
        span = 1 if passed < SHORT else min(2 * span, SPAN)
    q_end, moved = terms.closed(z[:n])
    qd_end = terms.on_constraints(q_end, z[n:])
    states = _outputs(terms, functions, outputs, parameters)
    held = f"the state returned onto the loops at {RETURN:g}/s (Ascher et al. 1995), " if returned else ""
    note = (
        f"the motion crossed a singular configuration between t = {t0:.6g} s and {t:.6g} s: the loop equations lost "
        f"rank there (their {mech.partition.rank}th singular value fell to {lowest / start:.2g} of its start value); "
        "it was integrated in all the coordinates, the multipliers damped where the constraints turned redundant "
        f"(Nakamura & Hanafusa 1986), {held}and projected back onto the loops at {t:.6g} s (coordinates moved by "
        f"{moved:.2g} m|rad, rates by {np.abs(qd_end - z[n:]).max():.2g} /s)"
    )
    return Crossing(t0, t, states, q_end, qd_end, calls, note, terms)


def _driver_problem(functions: Native, parameters: list[float]):
    """The crossing's rate for our CVODES driver (simulation/cvodes_driver.py: the same steps and states as CasADi's
    integrator, bit for bit, without its cost per evaluation), its parameters (ω, ε) held as its third input; None
    where the driver or the compiled library cannot be had (CasADi's integrator then serves)."""
    from . import cvodes_driver, integrators  # ctypes: for the runs that cross

    if functions.library is None or not integrators.driving() or cvodes_driver.driver() is None:
        return None
    return _problem(functions.library, functions.functions["augmented_rate"], tuple(parameters))


@functools.lru_cache(maxsize=8)
def _problem(library: Path, rate: casadi.Function, parameters: tuple[float, ...]):
    """The driver's problem of `_driver_problem`, once per library and parameters (a run's crossings share it: its
    inputs are only read)."""
    from . import cvodes_driver

    try:
        problem = cvodes_driver.Problem(library, rate)
    except (OSError, AttributeError):
        return None
    problem.held[2][:] = parameters
    return problem


def _driven(problem, grid: tuple[float, ...], tolerances: tuple[float, float]):
    """The driver's integrator of the crossing's rate on the normalised grid, p = (t₀, h), with the limits of
    `_integrator`'s."""
    from .cvodes_driver import Piece

    return Piece(problem, grid, "adams", *tolerances, MAX_STEPS, 0.0)


@functools.lru_cache(maxsize=16)
def _integrator(rate: casadi.Function, grid: tuple[float, ...], rtol: float, atol: float) -> SerialIntegrator:
    """dz/dτ = h ż(t₀ + h τ, z) on the normalised grid, p = (t₀, h, ω, ε[, γ]): Adams–Moulton with fixed-point
    iteration, as the run's CVODES pieces (simulation/integrators.py), with their limits."""
    tau, p = casadi.MX.sym("tau"), casadi.MX.sym("p", 2 + rate.nnz_in(2))
    z = casadi.MX.sym("z", rate.nnz_in(1))
    ode = p[1] * rate(p[0] + p[1] * tau, z, p[2:])
    options = {
        "reltol": rtol,
        "abstol": atol,
        "linear_multistep_method": "adams",
        "nonlinear_solver_iteration": "functional",
        "max_num_steps": MAX_STEPS,
        "show_eval_warnings": False,
        "disable_internal_warnings": True,
    }
    return SerialIntegrator(
        casadi.integrator("crossing", "cvodes", {"t": tau, "x": z, "p": p, "ode": ode}, 0.0, list(grid), options)
    )


def _outputs(terms: LoopTerms, functions: Native, outputs: list, parameters: list) -> tuple:
    """(q, q̇, q̈) at the outputs inside the crossing, q and q̇ projected onto the constraints as every other sample
    is closed (the integrated state, held by the stabilisation alone, goes on unchanged), q̈ the crossing's own."""
    n = terms.mech.n
    if not outputs:
        return np.empty((0, n)), np.empty((0, n)), np.empty((0, n))
    q = np.array([terms.closed(z[:n])[0] for _, z in outputs])
    qd = np.array([terms.on_constraints(x, z[n:]) for x, (_, z) in zip(q, outputs, strict=True)])
    rate = functions.calls["augmented_rate"]
    qdd = np.array([rate(float(s), np.ascontiguousarray(z), np.asarray(parameters, float))[n:] for s, z in outputs])
    return q, qd, qdd
