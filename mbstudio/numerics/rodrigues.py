"""The chart of the ball and free joints: rotation parameters ρ = 4 tan(φ/4) n, for a rotation by the angle φ
about the unit axis n (four times the modified Rodrigues parameters σ = ρ/4 of H. Schaub and J. L. Junkins,
"Stereographic orientation parameters for attitude dynamics: a generalization of the Rodrigues parameters",
Journal of the Astronautical Sciences, 1996).

Why this chart: every rotation has parameters with |ρ| ≤ 4 (φ ≤ π), where the map is far from singular (it is
singular only at φ = 2π), so a ball joint has no gimbal lock; the rotation matrix, the Jacobian and its rate are
rational functions of ρ, so one code runs exactly in float64, MPFR, sympy and CasADi with no branch and no
removable singularity (exponential coordinates need sin(a)/a and its kin); and the Jacobian is conformal,
J = Q/(1 + σ·σ) with Q a rotation, so it is perfectly conditioned wherever it is used. The factor 4 makes
ρ ≈ φ n for small rotations (ρ̇ is the angular velocity at ρ = 0), so linear models read in radians.

All functions take arrays (..., 3) in any back-end and use only arithmetic.
"""

from __future__ import annotations

import numpy as np

from .spatial import cross, dot

LIMIT = 4.0  # |ρ| at φ = π: beyond it the shadow parameters −16 ρ/|ρ|² describe the same rotation with |ρ| < 4


def rotation(rho: np.ndarray) -> np.ndarray:
    """R(ρ) (..., 3, 3): the child frame's axes in the parent frame (the active rotation by φ about n)."""
    w, v = quaternion(rho)
    out = np.empty(rho.shape + (3,), dtype=rho.dtype)
    diagonal = w * w - dot(v, v)
    for i in range(3):
        for j in range(3):
            out[..., i, j] = 2 * v[..., i] * v[..., j]
        out[..., i, i] = out[..., i, i] + diagonal
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):  # + 2 w [v]×
        out[..., i, j] = out[..., i, j] - 2 * w * v[..., k]
        out[..., j, i] = out[..., j, i] + 2 * w * v[..., k]
    return out


def quaternion(rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The unit quaternion (w (...), v (..., 3)) of R(ρ), with w ≥ 0 where |ρ| ≤ 4."""
    sigma = rho / 4
    s2 = dot(sigma, sigma)
    d = 1 + s2
    return (1 - s2) / d, sigma * (2 / d)[..., None]


def jacobian(rho: np.ndarray) -> np.ndarray:
    """J(ρ) (..., 3, 3) with ω = J ρ̇, the angular velocity of the child frame relative to the parent frame, in
    parent axes: J = ((1 − σ·σ) 1 + 2 [σ]× + 2 σ σᵀ)/(1 + σ·σ)² with σ = ρ/4."""
    sigma = rho / 4
    s2 = dot(sigma, sigma)
    inverse = 1 / (1 + s2)
    scale = inverse * inverse  # not 1 / (1 + s2)²: that overflows (with a warning) for |ρ| beyond 1e77
    out = np.empty(rho.shape + (3,), dtype=rho.dtype)
    for i in range(3):
        for j in range(3):
            out[..., i, j] = 2 * sigma[..., i] * sigma[..., j] * scale
        out[..., i, i] = out[..., i, i] + (1 - s2) * scale
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        out[..., i, j] = out[..., i, j] - 2 * sigma[..., k] * scale
        out[..., j, i] = out[..., j, i] + 2 * sigma[..., k] * scale
    return out


def jacobian_rate(rho: np.ndarray, rho_dot: np.ndarray) -> np.ndarray:
    """J̇ ρ̇ (..., 3): the part of the relative angular acceleration J ρ̈ + J̇ ρ̇ not proportional to ρ̈,
    8 σ (σ̇·σ̇)/(1 + σ·σ)² − 4 (σ·σ̇) ω/(1 + σ·σ)."""
    sigma, sigma_dot = rho / 4, rho_dot / 4
    d = 1 + dot(sigma, sigma)
    omega = (jacobian(rho) * rho_dot[..., None, :]).sum(axis=-1)
    along, across = 8 * dot(sigma_dot, sigma_dot) / (d * d), 4 * dot(sigma, sigma_dot) / d
    return sigma * along[..., None] - omega * across[..., None]


def from_quaternion(w: np.ndarray, v: np.ndarray, nonnegative) -> np.ndarray:
    """ρ (..., 3) of the rotation of a unit quaternion (w, v) (normalised here), |ρ| ≤ 4: the quaternion or its
    negative, whichever has w ≥ 0. `nonnegative(x, a, b)` picks a where x ≥ 0 and b elsewhere in the arrays'
    back-end (numpy.where for floats, casadi.if_else for traced symbols)."""
    norm = np.sqrt(w * w + dot(v, v)) if w.dtype != object else (w * w + dot(v, v)) ** 0.5
    sign = nonnegative(w, 1.0, -1.0)
    return v * (4 * sign / (norm + sign * w))[..., None]


def angular_velocity_to_rates(rho: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """ρ̇ (..., 3) for the relative angular velocity ω (parent axes): J⁻¹ = (1 + σ·σ)² Jᵀ, J being conformal."""
    sigma = rho / 4
    d = 1 + dot(sigma, sigma)
    return (jacobian(rho) * omega[..., :, None]).sum(axis=-2) * (d * d)[..., None]


def quaternion_rate(w: np.ndarray, v: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ẇ, v̇) of a quaternion turning at the angular velocity ω in the parent axes: q̇ = ½ (0, ω) ⊗ q. It
    keeps |q| constant, so an integrated quaternion drifts from unit length only by the integrator's error."""
    return -dot(omega, v) / 2, (omega * w[..., None] + cross(omega, v)) / 2


def from_rotation_matrix(R: np.ndarray) -> np.ndarray:
    """ρ (3,) of a float rotation matrix, |ρ| ≤ 4 (for importers and tests): by its quaternion."""
    R = np.asarray(R, dtype=float)
    trace = np.trace(R)
    candidates = [trace, R[0, 0], R[1, 1], R[2, 2]]
    k = int(np.argmax(candidates))  # the largest of 4w², 4x², 4y², 4z² (minus one): no cancellation
    if k == 0:
        s = 2 * np.sqrt(1 + trace)
        q = np.array([s / 4, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        s = 2 * np.sqrt(1 + R[i, i] - R[j, j] - R[m, m])
        q = np.empty(4)
        q[0] = (R[m, j] - R[j, m]) / s
        q[1 + i], q[1 + j], q[1 + m] = s / 4, (R[j, i] + R[i, j]) / s, (R[m, i] + R[i, m]) / s
    return from_quaternion(np.array(q[0]), q[1:], lambda x, a, b: np.where(x >= 0, a, b))


def axis_angle(axis, angle: float) -> np.ndarray:
    """ρ (3,) of the rotation by `angle` (rad) about `axis` (float; need not be unit): 4 tan(φ/4) n, taken
    with |ρ| ≤ 4 (an angle beyond π becomes the same rotation the other way round)."""
    n = np.asarray(axis, dtype=float)
    n = n / np.linalg.norm(n)
    wrapped = (float(angle) + np.pi) % (2 * np.pi) - np.pi
    return 4 * np.tan(wrapped / 4) * n
