"""The blocks of a TITOP model (Alazard et al. 2024, sections 2-3): one per body, with the joint to its parent.

A block is a body (mass, centre of mass, inertia, its reference point P where the parent joint is) and its
joint: a floating base (free joint to the inertial frame, 3-2-1 Euler attitude), a weld, a revolute or a
prismatic joint with its one-dimensional effort channel. A body has as many ports as it has children (and
points where loads act): a multi-port body of a tree (§1.9).

`child_motion` is the kinematic half of a joint block: from the parent's motion at its own P it gives the
child's motion at its P (eq. 32 to the port, the frame change of §1.6, then eq. 35 or eq. 65), and the operator
X with which accelerations propagate, xdot'_child = X xdot'_parent + κ + e q̈, κ the velocity-product terms of
(35)/(65) and e the joint's axis as a spatial vector. Xᵀ carries the child's wrench back to the parent's P in
the parent's axes (eq. 31, 93 and P^{×2}): the power duality of check 3 makes it the same operator.
`needed_wrench` is the dynamic half, eq. (29): the wrench the body needs at P for its acceleration.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ...model.errors import ModelError
from .motion import (
    Motion,
    coriolis,
    cross,
    mm,
    mv,
    rodrigues,
    rotation6,
    spatial_mass,
    tau,
    tmv,
    to_child_frame,
    transport,
    transpose,
)

KINDS = ("floating", "weld", "revolute", "prismatic")
GROUND = -1  # the parent index of a block hanging from the inertial frame


@dataclass(frozen=True, eq=False)
class Body:
    """A rigid body in its block frame R_b: mass, centre of mass B, inertia I_B about B, and the reference
    point P (the parent joint's point; for a floating base, the point whose motion is the state)."""

    name: str
    mass: object
    com: np.ndarray
    inertia: np.ndarray
    point: np.ndarray

    def __post_init__(self) -> None:  # lists from a user's script as arrays; a back-end's arrays as they are
        for name in ("com", "inertia", "point"):
            object.__setattr__(self, name, _array(getattr(self, name)))

    @functools.cached_property
    def D(self) -> np.ndarray:
        """D_P, the spatial mass matrix at P (eq. 13), constant in the block frame."""
        return spatial_mass(self.mass, self.com, self.inertia, self.point)


@dataclass(frozen=True, eq=False)
class Joint:
    """The joint of a block to its parent block (GROUND: the inertial frame).

    `port` is the point C on the parent (parent block axes; inertial for GROUND) where the joint is: the
    child's P coincides with it (at q = 0 for a prismatic joint). `rotation` is P_{a0/b}, the child's block
    frame in the parent's at q = 0 (for a floating base: the inertial frame R_i in which its Euler angles are
    measured, and `port` R_i's origin). `axis` is r~ or t~, unit, in the child's axes. `coordinates` names the
    joint's coordinates (one; six for a floating base: x, y, z of P in R_i, then ψ, θ, φ)."""

    name: str
    kind: str
    parent: int
    port: np.ndarray
    rotation: np.ndarray
    axis: np.ndarray | None = None
    coordinates: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for name in ("port", "rotation", "axis"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _array(getattr(self, name)))
        where = f"joint '{self.name}'"
        if self.kind not in KINDS:
            raise ModelError(where, "is of no block kind", self.kind, " or ".join(KINDS))
        if len(self.coordinates) != self.dof:
            raise ModelError(where, f"a {self.kind} block has {self.dof} coordinate(s)", list(self.coordinates))
        if self.dof == 1 and self.axis is None:
            raise ModelError(where, f"a {self.kind} block needs its axis", None, "a 3-vector in the child's axes")
        if self.dof == 1 and self.axis.dtype == float:  # a script's axis, as long as it likes: its direction
            norm = float(np.linalg.norm(self.axis))
            if not norm > 0:
                raise ModelError(where, "its axis has no direction", self.axis.tolist(), "a non-zero 3-vector")
            object.__setattr__(self, "axis", self.axis / norm)

    @property
    def dof(self) -> int:
        return {"floating": 6, "weld": 0, "revolute": 1, "prismatic": 1}[self.kind]

    @property
    def e(self) -> np.ndarray:
        """The joint's axis as a spatial motion vector at P: [0; r~] (revolute), [t~; 0] (prismatic)."""
        zero = 0 * self.axis
        return np.concatenate([zero, self.axis] if self.kind == "revolute" else [self.axis, zero])


def _array(x) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(float) if x.dtype.kind in "iub" else x


@dataclass(frozen=True, eq=False)
class Block:
    body: Body
    joint: Joint


@dataclass
class Kinematics:
    """A block's motion at its P and how accelerations reach it: xdot' = X xdot'_parent + κ + e q̈ (X None for a
    floating base, whose xdot' is an unknown of its own); G = [g_b; 0], gravity in the block's axes."""

    motion: Motion
    X: np.ndarray | None
    kappa: np.ndarray
    G: np.ndarray


def child_motion(block: Block, parent_point: np.ndarray, parent: Motion, q, qd, gravity, backend) -> Kinematics:
    """The kinematics of a weld, revolute or prismatic block from its parent's motion at the parent's P
    (`parent_point`, parent axes), at joint values q, q̇ (N,)."""
    joint = block.joint
    d = parent_point - joint.port  # CP: from the port C to the parent's P
    at_port = transport(parent, d)
    P = joint.rotation
    if joint.kind == "revolute":
        P = mm(P, rodrigues(joint.axis, backend.cos(q), backend.sin(q)))  # eq. (34)
    m0 = to_child_frame(at_port, P)
    X = mm(rotation6(transpose(P)), tau(d))
    qd = np.asarray(qd)[..., None]
    zero = 0 * m0.tw[..., :3]
    if joint.kind == "revolute":  # eq. (35)
        v, w = m0.tw[..., :3], m0.tw[..., 3:]
        r = joint.axis
        motion = Motion(m0.R, m0.pos, m0.tw + joint.e * qd)
        kappa = np.concatenate([-qd * cross(r, v), -qd * cross(r, w)], axis=-1)
    elif joint.kind == "prismatic":  # eq. (65): P sits at x t~ from the port P0
        t = joint.axis
        T = tau(-np.asarray(q)[..., None] * t)
        motion = Motion(m0.R, m0.pos + np.asarray(q)[..., None] * t, mv(T, m0.tw) + joint.e * qd)
        kappa = np.concatenate([-qd * cross(t, m0.tw[..., 3:]), zero], axis=-1)
        X = mm(T, X)
    else:  # a weld: the child's frame is fixed in the parent's (eq. 33)
        motion, kappa = m0, np.concatenate([zero, zero], axis=-1)
    return Kinematics(motion, X, kappa, gravity_term(motion, gravity))


def gravity_term(motion: Motion, gravity: np.ndarray) -> np.ndarray:
    """G = [g_b; 0] with g_b = P_{b/i}ᵀ [g]_i (eq. 29)."""
    g_b = tmv(motion.R, np.broadcast_to(gravity, motion.pos.shape))
    return np.concatenate([g_b, 0 * g_b], axis=-1)


def needed_wrench(body: Body, kin: Kinematics, acc: np.ndarray) -> np.ndarray:
    """D_P (xdot'_P − [g; 0]) + 𝒞(x'_P) D_P x'_P (eq. 29): the wrench the body needs at P, body axes."""
    return mv(body.D, acc) + velocity_wrench(body, kin)


def velocity_wrench(body: Body, kin: Kinematics) -> np.ndarray:
    """−D_P [g; 0] + 𝒞(x'_P) D_P x'_P: eq. (29) at zero acceleration."""
    tw = kin.motion.tw
    return mv(coriolis(tw), mv(body.D, tw)) - mv(body.D, kin.G)
