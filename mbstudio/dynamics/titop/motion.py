"""The operators of TITOP block models (Alazard et al. 2024, sections 2-3), over batched arrays.

Spatial vectors here are written **linear part first**, as in Alazard et al. (2024): a twist x' = [v_P; ω], a spatial
acceleration xdot' = [vdot_P; ωdot] (vdot the derivative of v_P taken in the body frame), a wrench
W = [F; T_P]. The rest of mbstudio writes them angular first (docs/architecture.md, conventions): the order is converted
only where the block model meets the general algorithms (interconnection.py, tests).

Arrays carry a leading batch axis of samples when they depend on the state: (N, 3), (N, 6), (N, 6, 6); the
constant data of a block (spatial mass matrix, joint axis, port vectors) carry none and broadcast. Entries are
floats, or objects of a back-end (MPFR, sympy, CasADi symbols): every function is plain arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...numerics.spatial import cross  # a × b for (..., 3) arrays, every back-end


def mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A x for A (..., i, j) and x (..., j)."""
    return (A @ np.asarray(x)[..., None])[..., 0]


def tmv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Aᵀ x for A (..., i, j) and x (..., i)."""
    return (np.asarray(x)[..., None, :] @ A)[..., 0, :]


def mm(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A B for A (..., i, k) and B (..., k, j)."""
    return np.asarray(A) @ np.asarray(B)


def transpose(A: np.ndarray) -> np.ndarray:
    return np.swapaxes(A, -1, -2)


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a·b over the last axis."""
    return (a * b).sum(axis=-1)


def skew(v: np.ndarray) -> np.ndarray:
    """(*v), the cross-product matrix: skew(a) b = a × b; (..., 3) -> (..., 3, 3)."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    zero = 0 * x
    return np.stack(
        [np.stack([zero, -z, y], axis=-1), np.stack([z, zero, -x], axis=-1), np.stack([-y, x, zero], axis=-1)],
        axis=-2,
    )


def blocks(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The 6x6 matrix [[a, b], [c, d]] of 3x3 blocks (broadcast to a common batch shape)."""
    a, b, c, d = np.broadcast_arrays(a, b, c, d)
    return np.concatenate([np.concatenate([a, b], axis=-1), np.concatenate([c, d], axis=-1)], axis=-2)


def identity(like: np.ndarray) -> np.ndarray:
    """The 3x3 identity, of object type (integer entries) when `like` holds a back-end's objects."""
    return np.eye(3, dtype=int).astype(object) if np.asarray(like).dtype == object else np.eye(3)


def tau(d: np.ndarray) -> np.ndarray:
    """τ_CP = [[1, (*CP)], [0, 1]] with d = CP, the vector from C to P: x'_C = τ_CP x'_P (eq. 32), and
    τ_CPᵀ moves a wrench at C to P (eq. 31)."""
    one = identity(d)
    return blocks(one, skew(d), 0 * one, one)


def rotation6(P: np.ndarray) -> np.ndarray:
    """P^{×2} = diag(P, P): the DCM for twists, accelerations and wrenches."""
    return blocks(P, 0 * P, 0 * P, P)


def spatial_mass(m, com: np.ndarray, inertia: np.ndarray, point: np.ndarray) -> np.ndarray:
    """D_P = τ_BPᵀ diag(m 1, I_B) τ_BP (eq. 13): the spatial mass matrix at P of a body of mass m, centre of mass
    B = com and inertia I_B about B (block axes); BP = point − com."""
    one = identity(inertia)
    D_B = blocks(m * one, 0 * one, 0 * one, inertia)
    T = tau(point - com)
    return mm(transpose(T), mm(D_B, T))


def coriolis(tw: np.ndarray) -> np.ndarray:
    """𝒞(x'_P) = [[(*ω), 0], [(*v_P), (*ω)]] (eq. 25) for the twist x'_P = [v_P; ω]: 𝒞 D_P x'_P holds every
    Coriolis, centrifugal and gyroscopic term."""
    W, V = skew(tw[..., 3:]), skew(tw[..., :3])
    return blocks(W, 0 * W, V, W)


def rodrigues(axis: np.ndarray, cos, sin) -> np.ndarray:
    """exp(θ (*r~)) = 1 + sin θ (*r~) + (1 − cos θ) (*r~)² for the unit axis r~ (eq. 34), from cos θ and sin θ
    (N,) computed by the caller's back-end."""
    K = skew(axis)
    K2 = mm(K, K)
    c, s = np.asarray(cos)[..., None, None], np.asarray(sin)[..., None, None]
    return identity(K) + s * K + (1 - c) * K2


@dataclass
class Motion:
    """The motion of a body at a point P, projected in the body frame, without its acceleration: the twist
    x'_P = [v_P; ω] (N, 6), the position [IP]_b (N, 3) of P from the inertial origin I and the attitude
    P_{b/i} (N, 3, 3) (columns: the body axes in inertial coordinates). The paper's motion vector m_P carries
    Euler angles; the DCM is carried instead, so no block meets a gimbal lock."""

    R: np.ndarray
    pos: np.ndarray
    tw: np.ndarray


def transport(m: Motion, d: np.ndarray) -> Motion:
    """υ_CP (eq. 32): the motion at C of the same rigid body, d = CP (body axes): x'_C = τ_CP x'_P,
    IC = IP − CP, attitude unchanged."""
    return Motion(m.R, m.pos - d, mv(tau(d), m.tw))


def to_child_frame(m: Motion, P: np.ndarray) -> Motion:
    """The same motion projected in a child frame R_a with [v]_b = P [v]_a: P_{a/b}ᵀ applied to the twist and the
    position, R_a = R_b P_{a/b} (Alazard et al. 2024, section 3.1)."""
    Pt = transpose(P)
    return Motion(mm(m.R, P), mv(Pt, m.pos), mv(rotation6(Pt), m.tw))


def world_point(m: Motion, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inertial position and velocity (inertial axes) of the body point at `offset` from P (body axes)."""
    position = mv(m.R, m.pos + offset)
    velocity = mv(m.R, m.tw[..., :3] + cross(m.tw[..., 3:], offset))
    return position, velocity


def wrench_at(force: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """The wrench at P [F; (PA) × F] of a force F applied at the body point A = P + offset (body axes): τ_APᵀ [F; 0]
    with AP = −offset (eq. 31)."""
    return np.concatenate([force, cross(offset, force)], axis=-1)
