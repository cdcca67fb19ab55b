"""Contact pairs as located events (docs/contact.md, "Touch-downs located"): a run of a model with contact pairs is
cut into legs none of which can carry a pair's shapes through each other, and each touch-down is located.

A ground plane cannot be stepped over (everything below it is inside), but a pair's shape can: an adaptive step
of free flight, whose error test a polynomial motion passes at any length, may begin above a thin box and end
below it without one evaluation of the right-hand side inside it. So the run goes in legs (conservative
advancement: Mirtich 1996), each from the state at its start: every contact point of the pairs (a sphere's centre,
a box's or mesh's vertex against the other side's solid) has its penetration δ (< 0 apart), the speed u at which δ
can change (the point's velocity relative to the other body, and the spin's share over the contact spheres'
radii) and a bound a on that speed's rate (the point's relative acceleration, the other body's turning of its
frame, and the spin's); a point can pass through the other side's solid only by moving the solid's least width
plus both radii, its pass depth D. The leg ends before any point, moving at u growing by a, could have gone
−δ + D/2 (at least D/8 for a point already deeper than 3D/8): a touch-down within it ends inside the solid.

At the leg's end, a point that was apart at its start and is pressed in there touched down within it, maybe
unseen: the first time one does is located as a root of −max δ (regula_falsi.py, each trial integrated from the
leg's start) and the run restarts there, the contact's force growing from zero as the integrator meets it, so
that the energy the contact stores is the work the motion did on it (an impact found late would start with the
potential of a deep overlap, energy created). A leg whose points ended faster than twice their bound (a force the
bound did not foresee) is integrated again at half its length. Every length, end and root is a function of the
state alone, so the run computes the same in any process; a model without pairs is not cut at all.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from ..dynamics.contact_shapes import ShapePoint, mesh_planes, pair_side, shape_of
from ..dynamics.engine import Engine
from ..dynamics.forces import AppliedForces
from ..dynamics.rigid_contact import point_motion
from ..model.document import ContactPair
from .regula_falsi import illinois

DEEP = 1 / 8  # of a point's pass depth: the least a leg may move it (a point pressed in deeper than 3/8 of it)
SLACK = 2.0  # a leg is taken again, halved, where a point apart at its ends moved faster than this times its bound
HALVINGS = 8
ROOT_TIME = 1e-12  # of the run's span: where a touch-down is located to (as integrators.py's watch's fall)
SHORTEST = 1e-9  # of the run's span: the shortest leg (a point crossing its pass depth faster may pass unseen)


def pass_depth(law) -> float:
    """How far a contact point of a pair (its ContactPairLaw) moves through the other side at least to pass it: the
    other side's least width (a sphere's centre meets the other side's solid, a box's or mesh's vertex the other's:
    the thinner one's) plus both radii twice."""
    v = law.values()
    sides = [pair_side(law.element, k) for k in (1, 2)]
    cores = [_core_width(side, law.forces.value) for side in sides if shape_of(side) != "sphere"]
    return min(cores, default=0.0) + 2 * (float(v["radius1"]) + float(v["radius2"]))


def point_pass_depth(point) -> float:
    """A rigid contact point's pass depth (dynamics/rigid_contact.py: a law, or a ShapePoint of a box's or mesh's
    law): its pair's, inf for a contact on the ground (a plane or the road, never passed)."""
    if point.element.type != ContactPair.type:
        return math.inf
    return pass_depth(point.law if isinstance(point, ShapePoint) else point)


class PairWatch:
    """The contact points of a model's pairs, read at the states of a run of its engine."""

    def __init__(self, eng: Engine, laws: list) -> None:
        self.eng, self.laws, self.tree = eng, laws, eng.mech.tree
        self.passes = [pass_depth(law) for law in laws]
        self.arms = [float(law.values()["radius1"]) + float(law.values()["radius2"]) for law in laws]

    def points(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """At the engine's state y at time t, per contact point: the penetration δ (m), the speed bound u (m/s),
        the bound on its rate a (m/s²) and its pass depth D (m)."""
        q, qd, qdd, _ = self.eng.outputs(np.array([float(t)]), np.asarray(y, float)[None])
        st, qd = self.tree.motion(q, qd, qdd), qd[0]
        depth, speed, rate, passes = [], [], [], []
        for law, arm, pass_depth in zip(self.laws, self.arms, self.passes, strict=True):
            bodies = [self.tree.body_index(law.element.body1), self.tree.body_index(law.element.body2)]
            for got in law.placements(st):
                d, c, J, _ = (np.asarray(x, float)[0] for x in got)
                relative = np.linalg.norm(J @ qd)
                (w1, a1, al1), (w2, a2, al2) = (point_motion(st, i, c) for i in bodies)
                spin, turn = np.linalg.norm(w2 - w1), np.linalg.norm(al2 - al1)
                reach = arm + abs(d)
                depth.append(d)
                speed.append(relative + spin * reach)
                frame = 2 * max(np.linalg.norm(w1), np.linalg.norm(w2)) * relative
                rate.append(np.linalg.norm(a2 - a1) + frame + (turn + spin * spin) * reach)
                passes.append(pass_depth)
        return np.array(depth), np.array(speed), np.array(rate), np.array(passes)

    @staticmethod
    def leg(depth: np.ndarray, speed: np.ndarray, rate: np.ndarray, passes: np.ndarray) -> float:
        """The longest leg from a state (its points' `points`) in which no point can move its allowance."""
        allowance = np.maximum(passes / 2 - depth, DEEP * passes)
        root = np.sqrt(speed * speed + 2 * rate * allowance)
        with np.errstate(divide="ignore"):
            return float(np.min(2 * allowance / (speed + root)))

    def integrate(self, run: Callable, times: np.ndarray, y0: np.ndarray, t0: float, stopped: type) -> tuple:
        """The states at the output times (from t0, the time of y0), the evaluations and the work of the
        non-conservative forces from t0 (None where a leg's integrator gave none), as integrators.integrate gives
        them, the run cut into legs: `run(times, y, start, watched)` integrates one from the state y at `start` to
        times[-1] (the run's other watches only where `watched`). Where it raises `stopped` (integrators.py's
        IntegrationError), the error gets the outputs and evaluations of the legs before too."""
        leg = _Legs(run, times, y0, t0)
        try:
            while leg.t < times[-1]:
                self._leg(leg)
        except stopped as error:
            before = leg.out[: leg.done]
            error.outputs = np.concatenate([before, error.outputs[: len(times) - leg.done].reshape(-1, len(y0))])
            error.calls += leg.calls
            raise
        return leg.out, leg.calls, leg.work

    def _leg(self, leg: _Legs) -> None:
        """One leg from where `leg` stands, to its end or the first touch-down within it."""
        t, y, t_end = leg.t, leg.y, leg.times[-1]
        depth, speed, rate, passes = self.points(t, y)
        apart = depth <= 0
        h = self.leg(depth, speed, rate, passes)
        for halving in range(HALVINGS + 1):
            h = max(h, SHORTEST * t_end)
            end = t_end if h >= t_end - t - ROOT_TIME * t_end else t + h
            states, work = leg.run_to(end)
            at_end, moving, *_ = self.points(end, states[-1])
            if (apart & (at_end > 0)).any():
                return self._touch_down(leg, apart, (end, states[-1], at_end))
            bound = SLACK * (speed + rate * (end - t))
            if halving == HALVINGS or (moving[apart] <= bound[apart] * (1 + 1e-9)).all():
                return leg.reached(end, states, work)
            h /= 2

    def _touch_down(self, leg: _Legs, apart: np.ndarray, end: tuple) -> None:
        """The first touch-down of a point `apart` at the leg's start, within it (`end`: its end's time and state,
        the penetrations there): the run goes on from there, its outputs since the leg's start integrated again to
        there (the leg's own may have met the contact unresolved: DOP853's dense output bulged through the box)."""
        t, y = leg.t, leg.y
        t_b, state, at_end = end

        def margin(depth: np.ndarray) -> float:
            return -float(np.max(depth[apart]))

        def trial(c: float) -> tuple[float, np.ndarray, int]:
            reached = leg.trial(c)  # its evaluations are counted by `leg`
            return margin(self.points(c, reached)[0]), reached, 0

        before = (t, margin(self.points(t, y)[0]))
        root, _, _ = illinois(trial, before, (t_b, margin(at_end), state), ROOT_TIME * leg.times[-1])
        leg.reached(root, *leg.run_to(root))


class _Legs:
    """Where a run cut into legs stands: its time, state, outputs (filled up to `done`), work and evaluations."""

    def __init__(self, run: Callable, times: np.ndarray, y0: np.ndarray, t0: float) -> None:
        self.run, self.times, self.t, self.y, self.calls = run, times, t0, np.asarray(y0, float), 0
        self.out = np.empty((len(times), len(y0)))
        self.done = int(np.searchsorted(times, t0, side="right"))
        self.out[: self.done] = y0
        self.work: np.ndarray | None = np.zeros(len(times))
        self.carried = 0.0  # the work up to t

    def run_to(self, end: float) -> tuple[np.ndarray, np.ndarray | None]:
        """The states (and work from t) at the outputs in (t, end] and at end (last), integrated from t."""
        times, done = self.times, self.done
        upto = int(np.searchsorted(times, end, side="right"))
        marks = np.concatenate([times[done:upto], [] if upto > done and times[upto - 1] == end else [end]])
        states, calls, work = self.run(marks, self.y, self.t, True)
        self.calls += calls
        return np.asarray(states), work

    def trial(self, c: float) -> np.ndarray:
        """The state at c, integrated from t without the run's other watches."""
        states, calls, _ = self.run(np.array([c]), self.y, self.t, False)
        self.calls += calls
        return np.asarray(states)[-1]

    def reached(self, end: float, states: np.ndarray, work: np.ndarray | None) -> None:
        """The run stands at `end`, the last of a leg's `states` (and `work`, None where its integrator gave none),
        the outputs up to there from them."""
        upto = int(np.searchsorted(self.times, end, side="right"))
        rows = upto - self.done
        self.out[self.done : upto] = states[:rows]
        if work is None:
            self.work = None
        if self.work is not None:
            self.work[self.done : upto] = self.carried + work[:rows]
            self.carried += work[-1]
        self.t, self.done, self.y = end, upto, states[-1]


def _core_width(side, value) -> float:
    """A lower bound on a box's or mesh's least width before its radius rounds it: a box's least full extent, a
    mesh's twice its least face distance from its vertices' mean (the largest ball there fits inside)."""
    if shape_of(side) == "box":
        return 2 * min(float(value(x)) for x in side.half_extents)
    normals, offsets = mesh_planes(side.vertices)
    centre = np.asarray(side.vertices, float).mean(axis=0)
    return 2 * float(np.min(offsets - normals @ centre))


@functools.lru_cache(maxsize=16)
def pair_watch(eng: Engine) -> PairWatch | None:
    """The watch of the engine's contact pairs, None for a model without any (its runs are not cut) and for a
    state equation without a mechanism (integrators.integrate takes any with an engine's functions)."""
    mech = getattr(eng, "mech", None)
    if mech is None or not any(getattr(f, "type", None) == ContactPair.type for f in mech.model.forces):
        return None
    return PairWatch(eng, [law for law in AppliedForces(mech).laws if law.type == ContactPair.type])
