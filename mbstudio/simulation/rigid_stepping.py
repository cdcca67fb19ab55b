"""Time stepping with rigid contacts: Moreau's midpoint scheme at the velocity level (Moreau 1988; Jean 1999),
each step's contact impulses solved on the exact Coulomb cone by the proximal solver of dynamics/rigid_contact.py
(docs/contact.md).

One step of length h from (t, q, v), v = q̇ (a tree: every coordinate independent):

    q_m = q + h/2 v                                  the midpoint, where the contacts are found and the forces taken
    v_f = v + h M⁻¹ (Q − b)                          the free velocity (every force element but the contacts)
    v⁺ = v_f + M⁻¹ Jᵀ Λ                              Λ: the impulses of the contacts active at q_m
    q⁺ = q_m + h/2 v⁺

A contact is a point with a normal between two bodies (dynamics/rigid_contact.py: a sphere, or each vertex of a
box or a convex mesh, on a plane or on the road, a pair of spheres or a sphere and a capsule), J the Jacobian of
body 2's point there relative to body 1's.
It is active when it would be pressed in at the step's end without it, δ(q_m) − h/2 n·J v_f ≥ 0; one still apart at
the midpoint and asked no rebound may close its gap by the step's end (u⁺_n ≥ −2 gap / h, not 0, which left a ball
hanging above the plane with energy it never had), and the step's end is lifted out of the surfaces by what it would
sink below the start's penetration (`_lifted`: a plastic landing otherwise stays up to h |v| / 2 deep).
The contact points' velocities after the step are u⁺ = G Λ + J v_f with the Delassus matrix G = J M⁻¹ Jᵀ; Newton's
impact law with restitution e asks u⁺_n ≥ −e u⁻_n of the approach velocity u⁻_n = min(0, n·J v), and Coulomb's law
on the exact cone holds between Λ and u⁺ + e u⁻_n n (De Saxcé's correction; Acary and Brogliato 2008). Flight under
constant forces is exact (the midpoint rule integrates q̈ = const without error), an impact with e ≤ 1 never
raises the energy and friction only takes it out: what the contacts take shows as the fall of the energy balance
(E + what the other elements dissipated; tests/test_rigid_stepping.py). Samples fall on the step grid: each output
interval is cut into the fewest equal steps no longer than `step`.

Where the normal turns with the state (the road's, a pair's), a point following the curved surface crosses the
midpoint's normal at the step's start at a separating velocity u⁻_n > 0 of order κ |v|² h (κ the curvature); the
target u⁺_n ≥ −u⁻_n lets it end the step approaching as fast, so that the impulse does no work, Λ_n (u⁺_n + u⁻_n) = 0
(with u⁺_n ≥ 0 a ball rolling down a bump gained energy by O(h); tests/test_rigid_pairs_road.py). The shift is
projected on the range of G, the velocities impulses can give (a point of a one-degree-of-freedom loop moves along
one direction only).
So is a rebound e u⁻_n asked of redundant contacts (G singular: a face's four corners, whose normal speeds a rigid
motion ties together, asked to rebound each at its own approach speed after a tilted landing, a target off G's
range that the cone solver could not reach); with a full-rank G the rebound is added as it is.

On closed loops the step is the same midpoint rule on the independent coordinates (dynamics/rigid_step_terms.py):
v_ind,f = v_ind + h q̈_ind from the projected equations, M⁻¹ becomes R (Rᵀ M R)⁻¹ Rᵀ, and the velocities are mapped
by R at the midpoint, so that the contacts see only velocities a motion on the loops gives; at the step's end Newton
closes the loops at the independent coordinates of q⁺ and q̇⁺ = R(q⁺) q̇⁺_ind. Flight is first-order accurate
there (the loops' velocity-product forces are taken at the step's start): the energy drifts by O(h)
(tests/test_rigid_loops.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..dynamics.contact_shapes import combined
from ..dynamics.force_laws.contact_law import ContactLaw, along_normal
from ..dynamics.rigid_contact import RANK, fixed_normal, solve_in_frames, split_forces
from ..dynamics.rigid_step_terms import loop_assembly, rigid_step_terms
from ..kinematics import Mechanism
from ..model.document import ForceMeasure
from ..model.errors import AssemblyError
from .contact_watch import point_pass_depth

TOLERANCE = 1e-10  # the impulses' relative residual on the cone complementarity at each step
ITERATIONS = 20000
# the clock (progress, cancel, the functions of time's bounds: evaluated in Python, 1 ms for the trot's twelve) is
# told the time every CLOCK_STEPS steps and at the end
CLOCK_STEPS = 50


@dataclass
class RigidRun:
    """The states at the output times (K, n each), the mean accelerations and contact forces (K, m, 3, world axes)
    over the interval that ends at each sample (the first sample: the interval that starts there; an impact's
    impulse shows as its mean force over its interval), the forces' normal (K, m) and friction (K, m, 3) parts
    split along each step's normal (0 for a contact on a plane, whose normal does not turn: split at the sample),
    and the number of steps."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    forces: np.ndarray
    normal: np.ndarray
    friction: np.ndarray
    steps: int


class RigidStepper:
    """Steps a mechanism's motion (a tree, or closed loops in their independent coordinates) with rigid contacts
    (the document's contact elements: their geometry, friction and restitution; their stiffness and damping do not
    enter). The terms of a step (the free velocity, M⁻¹ Jᵀ, the Delassus matrix, the points' velocities and
    penetrations ahead) are one compiled function of the model (dynamics/rigid_step_terms.py), so that a step is
    one native call and, for the contacts that touch, the cone complementarity of their impulses; closed loops add
    the Newton steps that close them and one call of R."""

    def __init__(self, mech: Mechanism, tolerance: float = TOLERANCE) -> None:
        self.mech, self.tolerance = mech, tolerance
        self.others, self.laws = split_forces(mech)
        self.friction = np.array([float(law.values()["friction"]) for law in self.laws])
        self.restitution = np.array([float(law.forces.value(law.element.restitution)) for law in self.laws])
        # a normal that turns with the state (the road's, a pair's) is crossed at the step's start by a point that
        # follows the curved surface, at a separating velocity that may turn into as much approach by the step's end
        # (so that the impulse does no work: docs/contact.md)
        self.turning = np.array([fixed_normal(law) is None for law in self.laws], float)
        self.turns = bool(self.turning.any())
        self.terms = rigid_step_terms(mech.model, mech.partition)
        self.loops = loop_assembly(mech) if mech.partition.dependent else None
        self._warm: tuple[bytes, np.ndarray] | None = None  # the active contacts and their impulses
        self._ends: tuple[bytes, np.ndarray] | None = None  # a loop's last step end and its points' penetrations
        # each contact point's pass depth, a pair's (contact_watch.py; inf on a plane or the road, never passed)
        self.pairs = np.array([point_pass_depth(law) for law in self.laws])

    def step(self, t: float, q: np.ndarray, v: np.ndarray, h: float, terms: tuple | None = None) -> tuple:
        """(q⁺, v⁺, the impulses (m, 3) of every contact, 0 where inactive, and where normals turn their normal (m,)
        and friction (m, 3) parts, else None) after one step (`terms`: the step's, where already evaluated)."""
        q_m = q + 0.5 * h * v
        v_free, W, G, u_free, u_start, ahead, frames = terms or self.terms(t + 0.5 * h, q_m, v, h)
        impulses = np.zeros((len(self.laws), 3))
        active = np.flatnonzero(ahead >= 0)
        if not len(active):
            self._warm = None
            split = (np.zeros(len(self.laws)), impulses) if self.turns else None
            end = self._on_loops(q_m + 0.5 * h * v_free, v_free)
            return *self._on_surfaces(t + h, q, *end, self._near(ahead, u_free, h)), impulses, split
        every = len(active) == len(self.laws)  # standing: no rows to pick
        rows = slice(None) if every else (3 * active[:, None] + np.arange(3)).ravel()
        start = u_start[3 * active + 2]  # the normal velocities at the step's start, in the midpoint's frames
        approach = np.minimum(0.0, start)
        shifted = u_free[rows].copy()
        delassus = G if every else G[np.ix_(rows, rows)]
        depth = ahead[active] + 0.5 * h * u_free[3 * active + 2]  # the penetrations at the midpoint
        shifted += _normal_shift(delassus, self._targets(active, approach, depth, h))
        if self.turns and self.turning[active].any() and (start > 0).any():
            crossing = np.zeros(len(shifted))
            crossing[2::3] = self.turning[active] * np.maximum(0.0, start)
            shifted += _achievable(delassus, crossing)
        key = active.tobytes()
        warm = self._warm[1] if self._warm is not None and self._warm[0] == key else None
        lam, _, _ = solve_in_frames(delassus, shifted, self.friction[active],
                                    self.tolerance, ITERATIONS, warm)  # fmt: skip
        self._warm = (key, lam)
        v_next = v_free + W[:, rows] @ lam
        # the penetrations the step's end would have, beyond those at its start (a start's own is kept)
        deeper = ahead[active] - 0.5 * h * (delassus @ lam)[2::3] - np.maximum(0.0, depth + 0.5 * h * start)
        q_next = q_m + 0.5 * h * v_next + self._lifted(W[:, rows], delassus, deeper)
        axes = frames.reshape(-1, 3, 3)[active]  # each contact's rows (t1, t2, n) at the midpoint
        impulses[active] = np.einsum("mji,mj->mi", axes, lam.reshape(-1, 3))  # to world axes
        split = None
        if self.turns:  # the normal turns within a sample's interval: split each step's impulse along its own
            split = np.zeros(len(self.laws)), impulses.copy()
            split[0][active] = lam[2::3]
            split[1][active] -= lam[2::3, None] * axes[:, 2]
        return *self._on_surfaces(t + h, q, *self._on_loops(q_next, v_next), True), impulses, split

    @staticmethod
    def _near(ahead: np.ndarray, u_free: np.ndarray, h: float) -> bool:
        """Whether a contact point apart may end the step within a step's travel of its surface (a curved path
        sinks it by less than that)."""
        return bool((ahead + h * np.linalg.norm(u_free.reshape(-1, 3), axis=1) >= 0).any())

    def _on_surfaces(self, t: float, q_start: np.ndarray, q: np.ndarray, v: np.ndarray, near: bool) -> tuple:
        """A closed loop's step end (q, v) lifted out of the surfaces by what its contact points sank beyond their
        penetrations at the step's start (`q_start`), measured at q itself: the step's impulses and `_lifted` hold
        the depths a linear prediction from the midpoint gives, and a point on a loop follows a curved path (the
        dependent coordinates' closure bends it), so a landing ended up to κ (h |u|)² deep past what they saw
        (8.3e-5 m for the four-bar's coupler at h = 1 ms, docs/contact.md). One more evaluation of the step's
        terms at q (h = 0: their `ahead` is δ(q), W and G those at q), only where a point is active or `near` (it
        may end within a step's travel of its surface); a tree's step ends as it is."""
        if self.loops is None or not near:
            self._ends = None
            return q, v
        _, W, G, _, _, depth, _ = self.terms(t, q, v, 0.0)
        touching = np.flatnonzero(depth >= 0)
        if not len(touching):
            self._ends = (q.tobytes(), depth)
            return q, v
        kept = np.maximum(0.0, self._depths(t, q_start)[touching])  # a start's own penetration is kept
        excess = depth[touching] - kept
        if not (excess > 0).any():
            self._ends = (q.tobytes(), depth)
            return q, v
        q, v = self._on_loops(q + self._lifted(*_normal_rows(W, G, 3 * touching + 2), excess), v)
        self._ends = None
        return q, v

    def _depths(self, t: float, q: np.ndarray) -> np.ndarray:
        """The contact points' penetrations δ(q) (m,): the last step end's where q is it, else evaluated."""
        if self._ends is not None and self._ends[0] == q.tobytes():
            return self._ends[1]
        return self.terms(t, q, np.zeros_like(q), 0.0)[5]

    def _targets(self, active: np.ndarray, approach: np.ndarray, depth: np.ndarray, h: float) -> np.ndarray:
        """The active contacts' shifts of their normal velocities at the step's end: Newton's rebound e u⁻_n, and
        where none is asked, a contact still apart at the midpoint (depth < 0) may close its gap by the step's end
        (u⁺_n ≥ −2 gap / h), not stop short of the surface: stopped there, a ball whose bounces had died out hung
        above the plane with the weight's work of a step, m g h |v| / 2, as energy it never had. Not where normals
        turn (the road's, a pair's): their curvature's own rule applies."""
        rebound = self.restitution[active] * approach
        closing = 2.0 / h * np.maximum(0.0, -depth) * (1.0 - self.turning[active])
        return np.where(rebound != 0.0, rebound, closing)

    def _lifted(self, W: np.ndarray, G: np.ndarray, depth: np.ndarray) -> np.ndarray | float:
        """The least move of the coordinates (in the metric of M: along W = M⁻¹ Jᵀ's normal columns) that lifts the
        active contacts' predicted penetrations at the step's end beyond those at its start, `depth` (m,),
        velocities untouched: a plastic landing ends the step with the point where the midpoint had it, up to
        h |v| / 2 deep, and a point on a curved surface sinks by its curvature's share of g h² / 2 each step (a
        start's own penetration, the user's, is kept). The move's multipliers solve the same cone complementarity
        with no friction (the normal rows alone)."""
        if not (depth > 0).any():
            return 0.0
        # redundant contacts: the depths a move can lift (rounding leaves a face's corners unequal), as for the targets
        target = _normal_shift(G, -depth)
        lift, _, _ = solve_in_frames(G, target, np.zeros(len(depth)), self.tolerance, ITERATIONS)
        return W @ lift

    def _parts(self, t: float, q: np.ndarray, v: np.ndarray, h: float) -> tuple[int, tuple | None]:
        """Into how many equal steps a step of length h from (q, v) is cut, so that no contact point of a pair moves
        half its pass depth in one (simulation/contact_watch.py): Moreau's midpoints, a step's travel apart, find a
        contact within half a step's travel of its face or inside the solid, and would straddle a thin one. With
        the step's terms where it is not cut (they give the points' speeds at its start and after the free step)."""
        if np.isinf(self.pairs).all():
            return 1, None
        terms = self.terms(t + 0.5 * h, q + 0.5 * h * v, v, h)
        u_free, u_start = (np.linalg.norm(x.reshape(-1, 3), axis=1) for x in terms[3:5])
        parts = max(1, math.ceil(float(np.max(np.maximum(u_free, u_start) * h / (self.pairs / 2)))))
        return parts, terms if parts == 1 else None

    def _on_loops(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A step's end on closed loops: the dependent coordinates closed by Newton at the independent ones, the
        velocity R q̇_ind there (the step is the midpoint rule on the independent coordinates). A tree's step ends
        as it is."""
        if self.loops is None:
            return q, v
        try:
            closed = self.loops.assemble(q[self.loops.ind], q)
        except AssemblyError:  # Newton did not close them, or on another branch: the continuation says why
            closed = np.asarray(self.mech.assemble(q[self.loops.ind][None], guess=q[None]), float)[0]
        R = self.loops.r_matrix(closed)[0].reshape(len(q), len(self.loops.ind), order="F")
        return closed, R @ v[self.loops.ind]

    def run(self, times: np.ndarray, q0: np.ndarray, v0: np.ndarray, step: float, clock=None) -> RigidRun:
        """The motion from (q0, v0) at times[0] sampled at `times`."""
        if not step > 0:
            raise ValueError(f"the rigid contacts' time step must be > 0 s, got {step!r}")
        K, n, m = len(times), len(q0), len(self.laws)
        q, qd, qdd = np.zeros((K, n)), np.zeros((K, n)), np.zeros((K, n))
        forces, normal, friction = np.zeros((K, m, 3)), np.zeros((K, m)), np.zeros((K, m, 3))
        q[0], qd[0] = q0, v0
        state, steps = (np.array(q0, float), np.array(v0, float)), 0
        for k in range(1, K):
            t0, span = float(times[k - 1]), float(times[k] - times[k - 1])
            count = max(1, math.ceil(span / step * (1 - 1e-12)))
            h, total, pressing, rubbing = span / count, np.zeros((m, 3)), np.zeros(m), np.zeros((m, 3))
            for j in range(count):
                parts, terms = self._parts(t0 + j * h, *state, h)
                for i in range(parts):
                    *state, impulses, split = self.step(t0 + j * h + i * h / parts, *state, h / parts, terms)
                    total, steps = total + impulses, steps + 1
                    if split is not None:
                        pressing, rubbing = pressing + split[0], rubbing + split[1]
                if clock is not None and (steps % CLOCK_STEPS == 0 or (k + 1 == K and j + 1 == count)):
                    clock(t0 + (j + 1) * h)
            q[k], qd[k], qdd[k], forces[k] = *state, (state[1] - qd[k - 1]) / span, total / span
            normal[k], friction[k] = pressing / span, rubbing / span
        first = min(1, K - 1)
        qdd[0], forces[0], normal[0], friction[0] = qdd[first], forces[first], normal[first], friction[first]
        return RigidRun(q, qd, qdd, forces, normal, friction, steps)


def _normal_rows(W: np.ndarray, G: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W's normal columns and G's normal block at `rows`, as a frictionless problem's (n, 3m) and (3m, 3m): the
    tangential rows decoupled (their impulses are 0 on a cone of μ = 0). A move along the normals alone: on a loop
    of one degree of freedom G's range is the point's path, and its full rows would lift a normal depth by its
    share along the path only."""
    m = len(rows)
    normal = G[np.ix_(rows, rows)]
    wide, block = np.zeros((len(W), 3 * m)), np.zeros((3 * m, 3 * m))
    wide[:, 2::3], block[2::3, 2::3] = W[:, rows], normal
    tangent = (3 * np.arange(m)[:, None] + np.arange(2)).ravel()
    block[tangent, tangent] = np.trace(normal) / m
    return wide, block


def _normal_shift(G: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The active points' shift (3m,) of their velocities for the normal targets (m,): as they are with a
    full-rank Delassus matrix G (spheres on a plane step bit for bit as without), projected on its range where it is
    singular (redundant contacts, a face's corners: the targets impulses can give, docs/contact.md)."""
    shift = np.zeros(len(G))
    if not target.any():
        return shift
    shift[2::3] = target
    basis, singular = _range_basis(G)
    return basis @ (basis.T @ shift) if singular else shift


def _achievable(G: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """The part of a shift of the points' target velocities that impulses can give: its projection on the range
    of the Delassus matrix G (all of it for free bodies; a point of a one-degree-of-freedom loop moves along one
    direction only, and a target off it left the cone solver without a solution to converge to)."""
    basis, _ = _range_basis(G)
    return basis @ (basis.T @ shift)


def _range_basis(G: np.ndarray) -> tuple[np.ndarray, bool]:
    """An orthonormal basis of the range of the Delassus matrix G, and whether G is singular (redundant contacts:
    more contact rows than the motions they see, such as a face's four corners)."""
    eigen, vectors = np.linalg.eigh(G)
    kept = eigen > RANK * eigen[-1]
    return vectors[:, kept], not kept.all()


def contact_columns(mech: Mechanism, stepper: RigidStepper, run: RigidRun) -> dict[str, np.ndarray]:
    """The series of the document's contact force measures along the rigid run, named as the compliant model's
    (ContactLaw.columns): the forces are the impulses' mean over the interval ending at each sample, split into
    normal and friction parts along each step's normal (the sample's normal on a plane; the road's and a pair's
    turn within the interval)."""
    out: dict[str, np.ndarray] = {}
    st = mech.motion(run.q)
    for measure in mech.model.measures:
        if not isinstance(measure, ForceMeasure):
            continue
        indices = [i for i, law in enumerate(stepper.laws) if law.element.name == measure.element]
        if indices:  # a box's or a mesh's vertices: their sums, at their centre of pressure
            got = combined([_point_columns(stepper, index, st, run) for index in indices])
            out |= {name: values for name, _, values in ContactLaw.columns(measure.name, got)}
    return out


def _point_columns(stepper: RigidStepper, index: int, st, run: RigidRun) -> dict[str, np.ndarray]:
    """One contact point's quantities along the run (ContactLaw.columns reads them)."""
    law = stepper.laws[index]
    depth, point, J, normal = (np.asarray(x, float) for x in law.placed(st))  # normal (1, 3) on a plane
    velocity = np.einsum("kij,kj->ki", J, run.qd)  # body 2's point at c relative to body 1's
    slip = velocity - along_normal(velocity, normal)[:, None] * normal
    force = run.forces[:, index]  # on body 2 (the sphere's body on a ground)
    if fixed_normal(law) is None:
        f_n, friction = run.normal[:, index], run.friction[:, index]
    else:
        f_n = along_normal(force, normal)
        friction = force - f_n[:, None] * normal
    return {"depth": depth, "point": point, "slip": slip, "normal": f_n, "friction": friction, "force": force}


def rigid_run(mech: Mechanism, times: np.ndarray, q0: np.ndarray, v0: np.ndarray, step: float, clock=None):
    """A rigid-contact run sampled at `times`: the force elements but the contacts, the states, and the contacts'
    measures from the impulses (simulation/run.py builds the result from them, as from any other run)."""
    stepper = RigidStepper(mech)
    if mech.partition.dependent:  # the independent coordinates' rates given: every coordinate's, q̇ = R q̇_ind
        v0 = np.asarray(mech.r_matrix(q0), float)[0] @ v0
    run = stepper.run(times, q0, v0, step, clock)
    return stepper.others, run, contact_columns(mech, stepper, run)
