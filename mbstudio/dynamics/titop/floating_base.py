"""The floating-base block (Alazard et al. 2024, section 2): its state x'_P = [v_P; ω] and [IP]_b in its own axes with
the 3-2-1 Euler angles Θ, their rates (eq. 30), and the map to and from the coordinates of a document's free joint
(x, y, z: P in the joint's parent frame R_i; then ψ, θ, φ) with their rates, accelerations and forces.

`Joint.rotation` and `Joint.port` of a floating block are R_i's axes and origin in the inertial frame, so its
attitude is P_{b/i} = R_i P(Θ) and [IP]_b is measured from the inertial origin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .blocks import Joint
from .euler import dcm, inverse_rate_matrix, rate_matrix
from .motion import cross, mm, mv, tmv

EULER_ORDER = [2, 1, 0]  # the document's (ψ, θ, φ) from Θ = (φ, θ, ψ), and back


@dataclass
class BaseState:
    """A floating base's state: twist (N, 6) and [IP]_b (N, 3) in its axes, Θ = (φ, θ, ψ) (N, 3)."""

    tw: np.ndarray
    pos: np.ndarray
    euler: np.ndarray


def attitude(joint: Joint, euler: np.ndarray, backend) -> np.ndarray:
    """P_{b/i} (N, 3, 3) in inertial axes: R_i Rz(ψ) Ry(θ) Rx(φ)."""
    return mm(joint.rotation, dcm(euler, backend))


def state_rates(base: BaseState, backend) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (30): d[IP]_b/dt = v_P + (*IP) ω and Θdot = Γ(Θ) ω."""
    v, w = base.tw[..., :3], base.tw[..., 3:]
    return v + cross(base.pos, w), mv(rate_matrix(base.euler, backend), w)


def to_coordinates(joint: Joint, base: BaseState, backend) -> tuple[np.ndarray, np.ndarray]:
    """The free joint's coordinates (x, y, z, ψ, θ, φ) and their rates (N, 6)."""
    R = attitude(joint, base.euler, backend)
    xyz = tmv(joint.rotation, mv(R, base.pos) - joint.port)
    xyz_dot = tmv(joint.rotation, mv(R, base.tw[..., :3]))
    euler_dot = mv(rate_matrix(base.euler, backend), base.tw[..., 3:])
    q = np.concatenate([xyz, base.euler[..., EULER_ORDER]], axis=-1)
    return q, np.concatenate([xyz_dot, euler_dot[..., EULER_ORDER]], axis=-1)


def from_coordinates(joint: Joint, q: np.ndarray, qd: np.ndarray, backend) -> BaseState:
    """The block's state from the free joint's coordinates and rates (N, 6)."""
    euler = q[..., 3:][..., EULER_ORDER]
    R = attitude(joint, euler, backend)
    pos = tmv(R, joint.port + mv(joint.rotation, q[..., :3]))
    v = tmv(R, mv(joint.rotation, qd[..., :3]))
    w = mv(inverse_rate_matrix(euler, backend), qd[..., 3:][..., EULER_ORDER])
    return BaseState(np.concatenate([v, w], axis=-1), pos, euler)


def body_accelerations(joint: Joint, base: BaseState, qdd: np.ndarray, backend) -> np.ndarray:
    """xdot'_P = [vdot_P; ωdot] (N, 6) from the coordinates' accelerations (N, 6) at the state `base`:
    vdot = P_{b/i}ᵀ R_i (ẍ, ÿ, z̈) − ω × v (the body-frame derivative) and ωdot = Γ⁻¹ Θddot + (dΓ⁻¹/dt) Θdot."""
    R = attitude(joint, base.euler, backend)
    v, w = base.tw[..., :3], base.tw[..., 3:]
    vdot = tmv(R, mv(joint.rotation, qdd[..., :3])) - cross(w, v)
    wdot = mv(inverse_rate_matrix(base.euler, backend), qdd[..., 3:][..., EULER_ORDER]) + _rate_change(base, backend)
    return np.concatenate([vdot, wdot], axis=-1)


def coordinate_accelerations(joint: Joint, base: BaseState, acc: np.ndarray, backend) -> np.ndarray:
    """The coordinates' accelerations (N, 6) from xdot'_P (N, 6): the inverse of `body_accelerations`."""
    R = attitude(joint, base.euler, backend)
    v, w = base.tw[..., :3], base.tw[..., 3:]
    xyz = tmv(joint.rotation, mv(R, acc[..., :3] + cross(w, v)))
    euler = mv(rate_matrix(base.euler, backend), acc[..., 3:] - _rate_change(base, backend))
    return np.concatenate([xyz, euler[..., EULER_ORDER]], axis=-1)


def _rate_change(base: BaseState, backend) -> np.ndarray:
    """(dΓ⁻¹/dt) Θdot (N, 3), Γ⁻¹ = [[1, 0, −sθ], [0, cφ, sφ cθ], [0, −sφ, cφ cθ]] differentiated along Θdot."""
    fd, td, pd = (mv(rate_matrix(base.euler, backend), base.tw[..., 3:])[..., i] for i in range(3))
    c, s = backend.cos(base.euler[..., :2]), backend.sin(base.euler[..., :2])
    cf, sf, ct, st = c[..., 0], s[..., 0], c[..., 1], s[..., 1]
    return np.stack(
        [
            -ct * td * pd,
            -sf * fd * td + (cf * ct * fd - sf * st * td) * pd,
            -cf * fd * td - (sf * ct * fd + cf * st * td) * pd,
        ],
        axis=-1,
    )


def wrench_of_forces(joint: Joint, base: BaseState, Q: np.ndarray, backend) -> np.ndarray:
    """The wrench at P (body axes) that does the work of generalized forces Q (N, 6) on (x, y, z, ψ, θ, φ):
    F = P_{b/i}ᵀ R_i Q_xyz, T = Γᵀ Q_Θ (so that Q·q̇ = F·v + T·ω)."""
    R = attitude(joint, base.euler, backend)
    force = tmv(R, mv(joint.rotation, Q[..., :3]))
    torque = tmv(rate_matrix(base.euler, backend), Q[..., 3:][..., EULER_ORDER])
    return np.concatenate([force, torque], axis=-1)


def forces_of_wrench(joint: Joint, base: BaseState, W: np.ndarray, backend) -> np.ndarray:
    """The generalized forces (N, 6) on (x, y, z, ψ, θ, φ) of a wrench at P (body axes): the transpose of
    `wrench_of_forces`, Q_xyz = R_iᵀ P_{b/i} F and Q_Θ = Γ⁻ᵀ T."""
    R = attitude(joint, base.euler, backend)
    q_xyz = tmv(joint.rotation, mv(R, W[..., :3]))
    q_euler = tmv(inverse_rate_matrix(base.euler, backend), W[..., 3:])
    return np.concatenate([q_xyz, q_euler[..., EULER_ORDER]], axis=-1)
