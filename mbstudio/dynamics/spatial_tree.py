"""The kinematic tree as the dynamics algorithms see it: one node per tree coordinate, world-frame spatial axes
and rigid-body inertias.

Every primitive motion of a joint is a node with one degree of freedom; a joint with several primitives is a
short chain of massless nodes, and each body's inertia sits on the last node of its path to the ground (bodies
welded to the ground by fixed joints sit on no node and drop out). A node's axis is fixed in the frame moved by
its `carrier`: its parent node, except for a ball joint's three nodes, whose axes are all set in the frame the
ball turns (the node above the joint) and also change with ρ (`axis_drifts`). All spatial vectors are in world axes and
taken at the world origin, angular part first (docs/architecture.md, conventions), so a body's velocity is the plain sum
of its nodes' axes times their rates and no transforms between bodies are needed.

Inside the dynamics, arrays hold components first and samples last: a spatial vector is (6, N), a matrix
(6, 6, N). Every elementwise operation then runs over contiguous rows of N samples, which is several times
faster in float64 than the (N, 6) layout of the public interface, and object arrays (mpmath, sympy) behave
the same. `components` and `samples_first` convert at the boundary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..kinematics.tree import KinematicTree, MotionState
from ..numerics import rodrigues
from ..numerics.spatial import cross as cross_rows
from ..numerics.spatial import matvec as matvec_rows


@dataclass(frozen=True)
class Nodes:
    """Tree coordinates as nodes: `parent[k]` (-1 for the ground), `order` (parents before children),
    `path[k]` (the nodes from the ground to k, k included), `bodies[k]` (body indices carried by k) and
    `carrier[k]` (the node whose velocity moves k's axis, -1 for the ground)."""

    parent: tuple[int, ...]
    order: tuple[int, ...]
    path: tuple[tuple[int, ...], ...]
    bodies: tuple[tuple[int, ...], ...]
    carrier: tuple[int, ...]

    def children(self, k: int) -> list[int]:
        return [c for c in self.order if self.parent[c] == k]


def nodes(tree: KinematicTree) -> Nodes:
    """The node structure of the tree: primitives chained in joint order (reversed joints included, as the
    tree lists them), each link's first primitive hanging from the last node above its parent body."""
    parent, order, carrier = [-1] * tree.n, [], [-1] * tree.n
    for link in tree.links:
        previous = tree.support[link.parent][-1] if tree.support[link.parent] else -1
        above = None  # the node above a ball joint's first component: its three axes move with that frame
        for prim in link.primitives:
            k = prim.coordinate
            above = previous if prim.kind == "B" and above is None else above
            parent[k], carrier[k], previous = previous, above if prim.kind == "B" else previous, k
            order.append(k)
    path = [()] * tree.n
    for k in order:
        path[k] = (path[parent[k]] if parent[k] >= 0 else ()) + (k,)
    bodies: list[list[int]] = [[] for _ in range(tree.n)]
    for body in range(1, len(tree.body_labels)):
        if tree.support[body]:
            bodies[tree.support[body][-1]].append(body)
    return Nodes(tuple(parent), tuple(order), tuple(path), tuple(tuple(b) for b in bodies), tuple(carrier))


def components(x: np.ndarray) -> np.ndarray:
    """(N, ...) -> (..., N), contiguous."""
    return np.ascontiguousarray(np.moveaxis(x, 0, -1))


def samples_first(x: np.ndarray) -> np.ndarray:
    """(..., N) -> (N, ...), contiguous."""
    return np.ascontiguousarray(np.moveaxis(x, -1, 0))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b for (3, ...) arrays."""
    return np.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def matvec(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """m (i, j, N) times v (j, N)."""
    return np.einsum("ijn,jn->in", m, v)


def axes(tree: KinematicTree, st: MotionState) -> np.ndarray:
    """Spatial axes S (n, 6, N): [u; o × u] for a rotation about the line (u, o), [0; u] for a translation."""
    u, o = components(st.u), components(st.o)  # (n, 3, N)
    S = tree.backend.zeros((tree.n, 6, u.shape[-1]))
    for k, kind in enumerate(tree.kinds):
        if kind == "R":
            S[k, :3], S[k, 3:] = u[k], cross(o[k], u[k])
        else:
            S[k, 3:] = u[k]
    return S


def cross_motion(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """v ×m for spatial motion vectors (6, N): [w × m_w; w × m_v + v × m_w]."""
    w, lin = v[:3], v[3:]
    return np.concatenate([cross(w, m[:3]), cross(w, m[3:]) + cross(lin, m[:3])])


def cross_force(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """v ×f for a spatial force f = [n; f] (6, N): [w × n + v × f; w × f]."""
    w, lin = v[:3], v[3:]
    return np.concatenate([cross(w, f[:3]) + cross(lin, f[3:]), cross(w, f[3:])])


def spatial_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=0)


@dataclass
class RigidInertia:
    """A rigid body's spatial inertia at the world origin, world axes: mass m, first moment c = m·(centre of
    mass) (3, N) and rotational inertia J about the origin (3, 3, N). Kept in this form because applying it
    costs far less than a 6x6 product, and sums of rigid inertias (composite bodies) stay rigid."""

    m: object
    c: np.ndarray
    J: np.ndarray

    def __add__(self, other: RigidInertia) -> RigidInertia:
        return RigidInertia(self.m + other.m, self.c + other.c, self.J + other.J)

    def apply(self, v: np.ndarray) -> np.ndarray:
        """The momentum of the motion v (6, N): [J w + c × v_O; m v_O − c × w]."""
        w, lin = v[:3], v[3:]
        return np.concatenate([matvec(self.J, w) + cross(self.c, lin), self.m * lin - cross(self.c, w)])

    def matrix(self, backend) -> np.ndarray:
        """The (6, 6, N) matrix [[J, c̃], [−c̃, m 1]] with c̃ x = c × x."""
        out = backend.zeros((6, 6) + self.c.shape[1:])
        out[:3, :3] = self.J
        for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
            out[i, 3 + j], out[j, 3 + i] = -self.c[k], self.c[k]
            out[3 + i, j], out[3 + j, i] = self.c[k], -self.c[k]
            out[3 + i, 3 + i] = self.m
        return out


def body_inertia(mech: Mechanism, st: MotionState, body: int) -> RigidInertia:
    """The document's (m, mx, ..., Izz) about the body origin in body axes, moved to world axes and origin."""
    b, tree = mech.backend, mech.tree
    m, mx, my, mz, xx, xy, xz, yy, yz, zz = tree.geometry.inertia(mech.model.body(tree.body_labels[body]))
    local = b.asarray([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    R, p = components(st.R[body]), components(st.p[body])
    J = np.einsum("ikn,lkn->iln", np.einsum("ijn,jk->ikn", R, local), R)
    h = np.einsum("ijn,j->in", R, b.asarray([mx, my, mz]))
    # parallel axis to the world origin: J0 = J + (m p·p + 2 p·h) 1 − (m p + h) pᵀ − p hᵀ
    J = J - (m * p + h)[:, None] * p[None] - p[:, None] * h[None]
    trace = (m * p * p + 2 * p * h).sum(axis=0)
    for i in range(3):
        J[i, i] = J[i, i] + trace
    return RigidInertia(m, h + m * p, J)


def node_inertias(mech: Mechanism, st: MotionState, tree_nodes: Nodes) -> list[RigidInertia | None]:
    """The inertia each node carries (None for the massless nodes inside multi-primitive joints)."""
    out: list[RigidInertia | None] = []
    for bodies in tree_nodes.bodies:
        total = None
        for body in bodies:
            inertia = body_inertia(mech, st, body)
            total = inertia if total is None else total + inertia
        out.append(total)
    return out


def velocity_products(tree: KinematicTree, st: MotionState, tn: Nodes, S: np.ndarray, V: list, qd) -> list:
    """The acceleration c_k = ṡ_k q̇_k (6, N) each node adds at q̈ = 0 (None where it is zero), from the node
    velocities V (None: at rest) and q̇ (n, N): the carrier's velocity crossed with the axis, and on a ball joint's
    first node the rate of its axes' dependence on ρ, [ψ; o × ψ] with ψ = R_f J̇ ρ̇ (R_f the frame it turns)."""
    c: list = [None] * tree.n
    for k in tn.order:
        moving = V[tn.carrier[k]] if tn.carrier[k] >= 0 else None
        if moving is not None:
            c[k] = cross_motion(moving, S[k]) * qd[k]
    for ball, frame in zip(tree.balls, st.ball_frames, strict=True):
        cols = list(ball.coordinates)
        phi, phid = st.q[:, cols] * ball.sign, samples_first(qd[cols]) * ball.sign
        psi = matvec_rows(frame, rodrigues.jacobian_rate(phi, phid))
        drift = components(np.concatenate([psi, cross_rows(st.o[:, cols[0]], psi)], axis=1))
        first = next(k for k in tn.order if k in cols)
        c[first] = drift if c[first] is None else c[first] + drift
    return c


def gravity_acceleration(mech: Mechanism, N: int) -> np.ndarray:
    """The ground's spatial acceleration [0; −g] (6, N) that makes gravity act on every body."""
    out = mech.backend.zeros((6, N))
    out[3:] = -mech.tree.geometry.gravity()[:, None]
    return out
