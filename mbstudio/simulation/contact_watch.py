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
plus both radii, its pass depth D. Between two boxes or meshes every pair of their edges is a point too
(EdgePairs: two blocks crossed like a plus sign touch at their edges only). The leg ends before any point, moving
at u growing by a, could have gone −δ + D/2 (at least D/8 for a point already deeper than 3D/8): a touch-down
within it ends inside the solid.

At the leg's end, or at one of its probes (its states at equal intervals), a point that was apart at its start
and is pressed in there touched down within it, maybe unseen: the first time one does, after the probe before
the first that finds one, is located as a root of −max δ (regula_falsi.py, each trial integrated from the leg's
start) and the run restarts there, the contact's force growing from zero as the integrator meets it, so
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

from ..dynamics.contact_shapes import (
    ShapePoint,
    edge_crossing,
    mesh_planes,
    pair_side,
    pair_vertices,
    shape_centre,
    shape_edges,
    shape_faces,
    shape_of,
    shape_rotation,
)
from ..dynamics.engine import Engine
from ..dynamics.forces import AppliedForces
from ..dynamics.rigid_contact import point_motion
from ..model.document import ContactPair
from .regula_falsi import illinois

DEEP = 1 / 8  # of a point's pass depth: the least a leg may move it (a point pressed in deeper than 3/8 of it)
SLACK = 2.0  # a leg is taken again, halved, where a point apart at its ends moved faster than this times its bound
HALVINGS = 8
PROBES = 32  # a leg's states looked at, equally spaced: a touch-down is searched for from the last before the first
NO_PROBES = np.empty(0)
ROOT_TIME = 1e-12  # of the run's span: where a touch-down is located to
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
        self.edges = edge_pairs(laws, self.passes)
        self.groups: list[slice] = []  # each pair's points, then each pair of edges', as `points` found them
        self._last: tuple = (None, None)  # the last state `points` was asked for, and its points

    def points(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """At the engine's state y at time t, per contact point: the penetration δ (m), the speed bound u (m/s),
        the bound on its rate a (m/s²) and its pass depth D (m). The last state's are kept: a leg's end is the
        next one's start."""
        key, last = (float(t), np.asarray(y, float).tobytes()), self._last  # runs in threads share the watch
        if last[0] != key:
            last = self._last = key, self._points(key[0], np.asarray(y, float))
        return last[1]

    def _points(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        st, found = self._placed(np.array([t]), y[None])
        speed, rate = (np.concatenate(x) for x in zip(*(_bounds(st, bodies, c[0], reach[0])
                                                          for _, c, reach, bodies in found), strict=True))  # fmt: skip
        counts = [d.shape[1] for d, _, _, _ in found]
        passes = np.repeat(self.passes + [pairs.pass_depth for pairs in self.edges], counts)
        return np.concatenate([d[0] for d, _, _, _ in found]), speed, rate, passes

    def depths(self, times: np.ndarray, states: np.ndarray, chosen: np.ndarray | None = None) -> np.ndarray:
        """The penetrations δ (K, points) at the engine's states (K, size) at `times`, in one evaluation of the
        pairs (and pairs of edges) that hold a `chosen` point (all without; -inf for the others' points)."""
        if chosen is None:
            return np.concatenate([d for d, _, _, _ in self._placed(times, states)[1]], axis=1)
        st = self._motion(times, states)
        depth = np.full((len(times), len(chosen)), -np.inf)
        for group, place in zip(self.groups, self._placings(), strict=True):
            if chosen[group].any():
                depth[:, group] = place(st)[0]
        return depth

    def _placed(self, times: np.ndarray, states: np.ndarray) -> tuple:
        """The motion state at the engine's states and, per pair and per pair of edges, `_vertices`' four."""
        st = self._motion(times, states)
        found = [place(st) for place in self._placings()]
        self.groups = _slices([d.shape[1] for d, _, _, _ in found])
        return st, found

    def _motion(self, times: np.ndarray, states: np.ndarray):
        """The bodies' motion (kinematics/tree.py's state) at the engine's states (K, size) at `times`."""
        return self.tree.motion(*self.eng.outputs(np.asarray(times, float), np.asarray(states, float))[:3])

    def _placings(self) -> list[Callable]:
        """Per pair and per pair of edges, its `_vertices`' four at a motion state."""
        vertices = [
            functools.partial(self._vertices, law=law, arm=arm) for law, arm in zip(self.laws, self.arms, strict=True)
        ]
        return vertices + [pairs.placed for pairs in self.edges]

    def _vertices(self, st, *, law, arm: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """A pair's contact points (a sphere's centre, a box's or mesh's vertices) at the N poses of `st`: their
        depths δ (N, V), points c (N, V, 3), their reach (how far the points of their contact spheres lie from c:
        both radii and δ) and the pair's bodies."""
        placed = law.placements(st)
        depth = np.stack([np.asarray(d, float) for d, _, _, _ in placed], axis=1)
        point = np.stack([np.asarray(c, float) for _, c, _, _ in placed], axis=1)
        bodies = [self.tree.body_index(law.element.body1), self.tree.body_index(law.element.body2)]
        return depth, point, arm + np.abs(depth), bodies

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
        apart = depth < -speed * ROOT_TIME * t_end  # else touching within the width a touch-down is located to
        h = self.leg(depth, speed, rate, passes)
        for halving in range(HALVINGS + 1):
            h = max(h, SHORTEST * t_end)
            end = t_end if h >= t_end - t - ROOT_TIME * t_end else t + h
            # the points that could touch down within the leg, at up to SLACK times their bounds (as it is accepted)
            near = apart & (-depth <= SLACK * (speed + rate * (end - t) / 2) * (end - t))
            probes = t + (end - t) * np.arange(1, PROBES) / PROBES if near.any() else NO_PROBES
            marks, states, work = leg.run_to(end, probes)
            at_end, moving, *_ = self.points(end, states[-1])
            pressed = np.zeros((0, len(depth)), bool)
            if near.any():
                pressed = near & (self.depths(probes, states[np.searchsorted(marks, probes)], near) > 0)
            pressed = np.vstack([pressed, apart & (at_end > 0)])
            if pressed.any():
                first = int(np.argmax(pressed.any(axis=1)))
                at = np.append(probes, end)[max(first - 1, 0) : first + 1]
                return self._touch_down(leg, pressed[first], at, states[np.searchsorted(marks, at)])
            bound = SLACK * (speed + rate * (end - t))
            if halving == HALVINGS or (moving[apart] <= bound[apart] * (1 + 1e-9)).all():
                return leg.reached(end, marks, states, work)
            h /= 2

    def _touch_down(self, leg: _Legs, pressed: np.ndarray, at: np.ndarray, states: np.ndarray) -> None:
        """The first touch-down of a point `pressed` (apart at the leg's start, pressed at the last of the times
        `at`, the states there from the leg) within the leg, between the probe before (the first of `at`, or the
        leg's start) and that one: a point that touches and leaves between two probes goes unseen. The run goes on
        from there, its outputs since the leg's start integrated again to there (the leg's own may have met the
        contact unresolved: DOP853's dense output bulged through the box), as each trial is."""

        def margin(t: float, state: np.ndarray) -> float:
            return -float(np.max(self.depths(np.array([t]), state[None], pressed)[0][pressed]))

        def trial(c: float) -> tuple[float, np.ndarray, int]:
            reached = leg.trial(c)  # its evaluations are counted by `leg`
            return margin(c, reached), reached, 0

        before = (leg.t, leg.y) if len(at) == 1 else (at[0], states[0])
        after = (at[-1], margin(at[-1], states[-1]), states[-1])
        root, _, _ = illinois(trial, (before[0], margin(*before)), after, ROOT_TIME * leg.times[-1])
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

    def run_to(self, end: float, probes: np.ndarray = NO_PROBES) -> tuple:
        """The marks in (t, end] (the outputs there, the `probes` and end), the states and the work from t there
        (None where the integrator gave none), integrated from t."""
        times, done = self.times, self.done
        marks = np.union1d(np.append(times[done : int(np.searchsorted(times, end, side="right"))], end), probes)
        states, calls, work = self.run(marks, self.y, self.t, True)
        self.calls += calls
        return marks, np.asarray(states), work

    def trial(self, c: float) -> np.ndarray:
        """The state at c, integrated from t without the run's other watches."""
        states, calls, _ = self.run(np.array([c]), self.y, self.t, False)
        self.calls += calls
        return np.asarray(states)[-1]

    def reached(self, end: float, marks: np.ndarray, states: np.ndarray, work: np.ndarray | None) -> None:
        """The run stands at `end`, one of a leg's `marks` (their states and `work`, None where its integrator
        gave none), the outputs up to there from them."""
        upto = int(np.searchsorted(self.times, end, side="right"))
        rows = np.searchsorted(marks, self.times[self.done : upto])
        at = int(np.searchsorted(marks, end))
        self.out[self.done : upto] = states[rows]
        if work is None:
            self.work = None
        if self.work is not None:
            self.work[self.done : upto] = self.carried + work[rows]
            self.carried += work[at]
        self.t, self.done, self.y = end, upto, states[at]


def edge_pairs(laws: list, passes: list[float]) -> list[EdgePairs]:
    """The pairs of edges of the pairs (their ContactPairLaws, with their pass depths) between two boxes or
    meshes."""
    return [EdgePairs(law, depth) for law, depth in zip(laws, passes, strict=True) if "sphere" not in law.shapes]


class EdgePairs:
    """Every edge of one side of a pair of boxes or meshes against every edge of the other, as contact points of
    the watch: where two edges cross with no vertex of either inside the other solid (blocks crossed like a plus
    sign), only their crossing is pressed, and a fast edge could pass through a thin solid's edge between legs.

    Each pair of edges has the law's crossing overlap δ (contact_shapes.edge_crossing, with the solids' overlap
    along their faces' normals as the law's cap), so that it touches down where the law's crossing does: the law's
    crossings are some of these pairs (a box's facing edges) or all of them (a mesh's). Apart (δ ≤ 0) its depth is
    minus the gap between the two segments (their distance less both radii), which no relative motion of the edges'
    points can close faster than its speed: δ itself, capped where the crossing leaves an edge, can rise faster
    (near parallel edges' crossing runs along them). The speed bound is that of any point of either edge relative
    to the other body: the relative velocity at the segments' nearest points plus the relative spin times the
    farthest end's distance from there (and the radii); its rate bound is the vertices' formula at that point."""

    def __init__(self, law, pass_depth: float) -> None:
        value, geometry, model = law.forces.value, law.forces.geometry, law.forces.mech.model
        tree, backend = law.forces.mech.tree, law.forces.mech.backend
        v = law.values()
        self.radii = (float(v["radius1"]), float(v["radius2"]))
        self.pass_depth = pass_depth
        sides = [pair_side(law.element, k) for k in (1, 2)]
        self.bodies = [tree.body_index(side.body) for side in sides]
        self.local = []  # per side, in its body's axes: edges' starts and ends (E, 3), inside point, corners, faces
        for side in sides:
            point = np.asarray(geometry.point(model.body(side.body), side.point), float)
            turn = shape_rotation(side, value, backend)
            turn = np.eye(3) if turn is None else np.asarray(turn, float)
            ends = np.asarray(shape_edges(side, value), float) @ turn.T + point  # (E, 2, 3)
            normals, offsets = (np.asarray(x, float) for x in shape_faces(side, value, backend))
            corners = np.asarray(pair_vertices(side, value, backend), float) + point
            inside = point + turn @ np.asarray(shape_centre(side), float)
            self.local.append((ends[:, 0], ends[:, 1], inside, corners, normals, offsets + normals @ point))
        count = (len(self.local[0][0]), len(self.local[1][0]))
        self.index = np.repeat(np.arange(count[0]), count[1]), np.tile(np.arange(count[1]), count[0])

    def placed(self, st) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """`PairWatch._vertices`' four for every pair of edges at the motion state `st` of N poses: the depths
        (N, E), the midpoints of the segments' nearest points (N, E, 3), the farthest end's distance from there
        (and the radii) (N, E), and the bodies."""
        placed = [self._placed(st, body, local) for body, local in zip(self.bodies, self.local, strict=True)]
        (a0, a1, inner_a, _, _, _), (b0, b1, inner_b, _, _, _) = placed
        (a0, a1), (b0, b1) = (a0[:, self.index[0]], a1[:, self.index[0]]), (b0[:, self.index[1]], b1[:, self.index[1]])
        shape, flat = a0.shape[:2], (lambda x: x.reshape(-1, 3))  # noqa: E731
        overlap = np.repeat(_face_overlap(*placed) + sum(self.radii), shape[1])
        inner = (np.repeat(inner_a, shape[1], axis=0), np.repeat(inner_b, shape[1], axis=0))
        ends = (flat(a0), flat(a1)), (flat(b0), flat(b1))
        crossing = edge_crossing(*ends, *inner, self.radii, overlap, np.sqrt)[0].reshape(shape)
        (a0, a1), (b0, b1) = ends
        p, q = _nearest_points(a0, a1 - a0, b0, b1 - b0)
        gap = (np.linalg.norm(q - p, axis=1) - sum(self.radii)).reshape(shape)
        middle = (p + q) / 2
        reach = np.max([np.linalg.norm(x - middle, axis=1) for x in (a0, a1, b0, b1)], axis=0) + sum(self.radii)
        depth = np.where(crossing > 0, crossing, -np.maximum(gap, 0.0))
        return depth, middle.reshape(*shape, 3), reach.reshape(shape), self.bodies

    @staticmethod
    def _placed(st, body: int, local: tuple) -> tuple:
        """A side's edges' ends (N, E, 3), inside point (N, 3), corners (N, V, 3), faces' normals (N, F, 3) and
        offsets (N, F), in world axes, at N poses."""
        p, R = np.asarray(st.p[body], float), np.asarray(st.R[body], float)
        starts, ends, inside, corners, normals, offsets = local
        moved = [np.einsum("nij,...j->n...i", R, x) + (p[:, None, :] if x.ndim == 2 else p)
                 for x in (starts, ends, inside, corners)]  # fmt: skip
        turned = np.einsum("nij,fj->nfi", R, normals)
        return (*moved, turned, offsets + np.einsum("nfi,ni->nf", turned, p))


def _slices(counts: list[int]) -> list[slice]:
    """The slices of consecutive groups of `counts` items."""
    ends = np.cumsum(counts)
    return [slice(int(end - count), int(end)) for count, end in zip(counts, ends, strict=True)]


def _bounds(st, bodies: list[int], point: np.ndarray, reach: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The speed bound u and its rate's bound a (M,) of contact points at `point` (M, 3) whose contact spheres or
    edges reach `reach` (M,) from there, between `bodies` (body1, body2) at the motion state `st` of one pose: the
    velocity of body2's point relative to body1's, plus the relative spin times the reach; its rate the relative
    acceleration, the turning of the frame it is seen in and the spins' share."""
    (w1, a1, al1), (w2, a2, al2) = (point_motion(st, i, point) for i in bodies)
    v1, v2 = (np.asarray(st.v[i], float)[0] + np.cross(w, point - np.asarray(st.p[i], float)[0])
              for i, w in zip(bodies, (w1, w2), strict=True))  # fmt: skip
    relative = np.linalg.norm(v2 - v1, axis=1)
    spin, turn = np.linalg.norm(w2 - w1), np.linalg.norm(al2 - al1)
    frame = 2 * max(np.linalg.norm(w1), np.linalg.norm(w2)) * relative
    return relative + spin * reach, np.linalg.norm(a2 - a1, axis=1) + frame + (turn + spin * spin) * reach


def _face_overlap(side1: tuple, side2: tuple) -> np.ndarray:
    """The least overlap (N,) of two placed solids along their faces' normals (the law's cap of a crossing): over
    each face of either side, how far the other side's deepest corner lies inside its plane."""
    return np.min(
        [
            np.min(offsets - np.min(np.einsum("nvi,nfi->nfv", corners, normals), axis=2), axis=1)
            for (*_, normals, offsets), (*_, corners, _, _) in ((side1, side2), (side2, side1))
        ],
        axis=0,
    )


def _nearest_points(a0: np.ndarray, u: np.ndarray, b0: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nearest points (N, 3) of segments a0 + s u and b0 + t v (s, t in [0, 1]): the lines' nearest points
    clamped to the segments, each clamp followed by the other segment's nearest point to it (Ericson 2005, 5.1.9);
    parallel segments (and edges have a length) from s = 0."""
    w = a0 - b0
    uu, uv, vv = (np.einsum("ij,ij->i", x, y) for x, y in ((u, u), (u, v), (v, v)))
    uw, vw = np.einsum("ij,ij->i", u, w), np.einsum("ij,ij->i", v, w)
    square = uu * vv - uv * uv
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(square > 1e-12 * uu * vv, np.clip((uv * vw - vv * uw) / square, 0.0, 1.0), 0.0)
    t = (uv * s + vw) / vv
    s = np.where(t < 0, np.clip(-uw / uu, 0.0, 1.0), np.where(t > 1, np.clip((uv - uw) / uu, 0.0, 1.0), s))
    t = np.clip(t, 0.0, 1.0)
    return a0 + s[:, None] * u, b0 + t[:, None] * v


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
