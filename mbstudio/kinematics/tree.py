"""Kinematics of the spanning tree: body poses, velocities and accelerations, and their Jacobians.

Every joint is a short sequence of primitive motions (rotation about, or translation along, an axis of the
moving joint frame), so one recursion serves all joint types. A ball joint's rotation is one step of three
coordinates, its rotation parameters ρ (numerics/rodrigues.py), which turn the frame by R(ρ). For each tree
coordinate k we keep its world axis u_k and a point o_k on it; a point P of a body moves with column
u_k x (P - o_k) (rotation) or u_k (translation) of its Jacobian when k lies on the body's path to the ground.
For a ball joint's coordinates u_k are the columns of the frame's rotation times J(ρ): they depend on ρ and are
not unit vectors, and their rates add J̇ ρ̇ to the angular acceleration.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..model.document import JOINT_MOTIONS, Joint, Model, body_key
from ..numerics import rodrigues
from ..numerics.spatial import cross, matvec, rotate_about_own_axis, times_constant
from .geometry import FrameValue, Geometry
from .topology import Topology, spanning_tree


@dataclass(frozen=True, slots=True)  # slots: one per coordinate, 10⁵ of them in a big chain
class Primitive:
    coordinate: int  # index in q
    kind: str  # "R" rotation, "T" translation, "B" one component of a ball joint's rotation parameters
    axis: int  # 0, 1, 2 for the x, y, z axis of the moving joint frame (for "B": the component)
    sign: int  # -1 when the joint is traversed from its document child to its parent


@dataclass(frozen=True)
class Ball:
    """The rotation of a ball (or free) joint: R(sign·ρ) with ρ = q[coordinates] (x, y, z components)."""

    coordinates: tuple[int, int, int]
    sign: int


@dataclass(slots=True)
class Link:
    joint: Joint
    parent: int  # body index (tree order)
    child: int
    before: FrameValue  # joint frame on the tree-parent body
    after: FrameValue  # joint frame on the tree-child body
    primitives: tuple[Primitive, ...]
    steps: tuple[Primitive | Ball, ...]  # the primitives, a ball joint's three as one Ball


@dataclass
class BodyMotion:
    """Per body b (tree order, 0 = ground), in world axes: rotation R[b] (N,3,3), origin p[b], angular velocity
    w[b], origin velocity v[b], angular and linear accelerations al[b], a[b] (N,3). What the document's measures
    read; the compiled engine's series gives it for a run's samples (simulation/run.py)."""

    R: list
    p: list
    w: list
    v: list
    al: list
    a: list


@dataclass
class MotionState(BodyMotion):
    """The bodies' motion, and per coordinate: axis u, point o (N,n,3); the coordinates q, q̇, q̈ (N, n) it was
    computed from; per ball joint (tree.balls) the world rotation of the frame it turns (N,3,3)."""

    u: np.ndarray
    o: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    ball_frames: list
    moving: bool = True  # False: positions only, every velocity and acceleration is zero

    def take(self, rows) -> MotionState:
        """The state of the samples `rows` only."""
        lists = [[x[rows] for x in arrays] for arrays in (self.R, self.p, self.w, self.v, self.al, self.a)]
        arrays = [x[rows] for x in (self.u, self.o, self.q, self.qd, self.qdd)]
        return MotionState(*lists, *arrays, [f[rows] for f in self.ball_frames], self.moving)


def _shared(frame: FrameValue, frames: dict[bytes, FrameValue]) -> FrameValue:
    """One read-only object for equal float64 joint frames: most of a big model's frames are alike (a chain of
    10⁵ rods has two), and each held apart costs about 700 bytes. Other back-ends' frames are kept as they are."""
    if frame.rotation.dtype != np.float64 or frame.origin.dtype != np.float64:
        return frame
    key = frame.rotation.tobytes() + frame.origin.tobytes()
    if key not in frames:
        frame.rotation.flags.writeable = frame.origin.flags.writeable = False
        frames[key] = frame
    return frames[key]


class KinematicTree:
    def __init__(self, model: Model, backend, topology: Topology | None = None) -> None:
        self.model = model
        self.backend = backend
        self.topology = topology or spanning_tree(model)
        self.geometry = Geometry(model, backend)
        self.body_labels = list(self.topology.body_order)
        self.index = {label: i for i, label in enumerate(self.body_labels)}
        self.coordinates: list[str] = []
        self.kinds: list[str] = []  # per coordinate: "R" its Jacobian column turns (u_k through o_k), "T" shifts
        self.balls: list[Ball] = []
        frames: dict[bytes, FrameValue] = {}
        self.links = [self._link(j, frames) for j in self.topology.tree]
        self.n = len(self.coordinates)
        self.ball_coordinates = frozenset(k for ball in self.balls for k in ball.coordinates)
        # angles about an axis (2π-periodic): the turning coordinates but a ball joint's rotation parameters
        self.angles = tuple(k for k in range(self.n) if self.kinds[k] == "R" and k not in self.ball_coordinates)

    def _link(self, joint: Joint, frames: dict[bytes, FrameValue]) -> Link:
        reverse = joint.name in self.topology.reversed
        g, m = self.geometry, self.model
        fp = _shared(g.frame(m.body(joint.parent), joint.parent_frame), frames)
        fc = _shared(g.frame(m.body(joint.child), joint.child_frame), frames)
        start = len(self.coordinates)
        self.coordinates += [c.name for c in joint.coordinates]
        motions = list(enumerate(JOINT_MOTIONS[joint.type]))
        if reverse:
            motions.reverse()
        prims = tuple(Primitive(start + i, mot[0], "xyz".index(mot[1]), -1 if reverse else 1) for i, mot in motions)
        self.kinds += ["T" if mot[0] == "T" else "R" for mot in JOINT_MOTIONS[joint.type]]
        parent, child = body_key(joint.parent), body_key(joint.child)
        if reverse:
            parent, child, fp, fc = child, parent, fc, fp
        return Link(joint, self.index[parent], self.index[child], fp, fc, prims, self._steps(prims))

    def _steps(self, prims: tuple[Primitive, ...]) -> tuple[Primitive | Ball, ...]:
        """The primitives with a ball joint's three components (consecutive, in either order) as one Ball."""
        steps: list[Primitive | Ball] = [p for p in prims if p.kind != "B"]
        ball = sorted((p for p in prims if p.kind == "B"), key=lambda p: p.axis)
        if ball:
            self.balls.append(Ball(tuple(p.coordinate for p in ball), ball[0].sign))
            at = next(i for i, p in enumerate(prims) if p.kind == "B")
            steps.insert(at, self.balls[-1])
        return tuple(steps)

    @functools.cached_property
    def support(self) -> list[list[int]]:
        """Tree coordinates on the path from the ground to each body: quadratic in a long chain (1.6 GB for
        20 000 bodies), so built when a Jacobian first needs it, which checking a tree does not."""
        support: list[list[int]] = [[] for _ in self.body_labels]
        for link in self.links:
            support[link.child] = support[link.parent] + [p.coordinate for p in link.primitives]
        return support

    def initial_coordinates(self) -> np.ndarray:
        """The document's initial values (0 where none is given), shape (n,)."""
        values = {c.name: c.initial for j in self.model.joints for c in j.coordinates}
        return self.backend.asarray([values[name] or 0.0 for name in self.coordinates])

    def motion(self, q: np.ndarray, qd: np.ndarray | None = None, qdd: np.ndarray | None = None) -> MotionState:
        """Poses, velocities and accelerations of all bodies for q, qd, qdd of shape (N, n); without qd and
        qdd only the poses are computed (velocities and accelerations are then zero)."""
        b = self.backend
        N = q.shape[0]
        moving = qd is not None or qdd is not None
        qd = b.zeros(q.shape) if qd is None else qd
        qdd = b.zeros(q.shape) if qdd is None else qdd
        eye = b.zeros((N, 3, 3))
        for i in range(3):
            eye[:, i, i] = b.scalar(1)
        zero = b.zeros((N, 3))
        axes = (b.zeros((N, self.n, 3)), b.zeros((N, self.n, 3)))
        st = MotionState([eye], [zero], [zero], [zero], [zero], [zero], *axes, q, qd, qdd, [], moving)
        cos, sin = b.cos_sin(q)
        for link in self.links:
            Rf, of, wf, vf, alf, af = self._carry(st, link.parent, link.before)
            for prim in link.steps:
                if isinstance(prim, Ball):
                    Rf, wf, alf = self._turn(st, prim, Rf, of, wf, alf)
                    continue
                k = prim.coordinate
                u = Rf[:, :, prim.axis] * prim.sign
                st.u[:, k], st.o[:, k] = u, of
                if prim.kind == "R":
                    Rf = rotate_about_own_axis(Rf, prim.axis, cos[:, k], sin[:, k] * prim.sign)
                    if moving:
                        alf = alf + u * qdd[:, k, None] + cross(wf, u) * qd[:, k, None]
                        wf = wf + u * qd[:, k, None]
                else:
                    d = u * q[:, k, None]
                    of = of + d
                    if moving:
                        ud = u * qd[:, k, None]
                        af = af + u * qdd[:, k, None] + 2 * cross(wf, ud) + cross(alf, d) + cross(wf, cross(wf, d))
                        vf = vf + ud + cross(wf, d)
            Rc = times_constant(Rf, link.after.rotation.T)
            r = -times_constant(Rc, link.after.origin)
            st.R.append(Rc)
            st.p.append(of + r)
            st.w.append(wf)
            st.al.append(alf)
            st.v.append(vf + cross(wf, r) if moving else vf)
            st.a.append(af + cross(alf, r) + cross(wf, cross(wf, r)) if moving else af)
        return st

    @staticmethod
    def _turn(st: MotionState, ball: Ball, Rf, of, wf, alf):
        """A ball joint's step: the frame turned by R(φ), φ = ±ρ, about its origin; its axes are the columns of
        Rf J(φ) (times the sign), and the relative angular acceleration is Rf (J(φ) φ̈ + J̇ φ̇)."""
        cols = list(ball.coordinates)
        phi = st.q[:, cols] * ball.sign
        st.ball_frames.append(Rf)
        axes = Rf @ rodrigues.jacobian(phi)
        for c, k in enumerate(cols):
            st.u[:, k], st.o[:, k] = axes[:, :, c] * ball.sign, of
        if st.moving:
            phid = st.qd[:, cols] * ball.sign
            relative = matvec(axes, phid)
            drift = matvec(Rf, rodrigues.jacobian_rate(phi, phid))
            alf = alf + matvec(axes, st.qdd[:, cols] * ball.sign) + cross(wf, relative) + drift
            wf = wf + relative
        return Rf @ rodrigues.rotation(phi), wf, alf

    @staticmethod
    def _carry(st: MotionState, body: int, frame: FrameValue):
        """World pose, velocity and acceleration of a frame fixed on `body`."""
        R, w, al = st.R[body], st.w[body], st.al[body]
        r = times_constant(R, frame.origin)
        if not st.moving:
            return times_constant(R, frame.rotation), st.p[body] + r, w, st.v[body], al, st.a[body]
        return (
            times_constant(R, frame.rotation),
            st.p[body] + r,
            w,
            st.v[body] + cross(w, r),
            al,
            st.a[body] + cross(al, r) + cross(w, cross(w, r)),
        )

    def frame_state(self, st: MotionState, label: str, frame: FrameValue):
        """World (R, origin, w, v, al, a) of a frame fixed on the body with this label."""
        return self._carry(st, self.index[body_key(label)], frame)

    def point_jacobian(self, st: MotionState, body: int, point: np.ndarray) -> np.ndarray:
        """d(world point fixed on body)/dq, shape (N, 3, n)."""
        N = point.shape[0]
        J = self.backend.zeros((N, 3, self.n))
        for k in self.support[body]:
            col = cross(st.u[:, k], point - st.o[:, k]) if self.kinds[k] == "R" else st.u[:, k]
            J[:, :, k] = col
        return J

    def direction_jacobian(self, st: MotionState, body: int, direction: np.ndarray) -> np.ndarray:
        """d(world direction fixed on body)/dq, shape (N, 3, n)."""
        N = direction.shape[0]
        J = self.backend.zeros((N, 3, self.n))
        for k in self.support[body]:
            if self.kinds[k] == "R":
                J[:, :, k] = cross(st.u[:, k], direction)
        return J

    def body_index(self, label: str) -> int:
        return self.index[body_key(label)]
