"""Rotation and vector helpers over batched arrays (float or object), for every back-end."""

from __future__ import annotations

import numpy as np


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product of (..., 3) arrays."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (..., 3) arrays (broadcasting), written into one preallocated array: cheaper
    than stacking the components, both for one sample and for many."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    x = np.asarray(a1 * b2 - a2 * b1)  # numpy unwraps a 0-d object result into the bare mpf or expression
    out = np.empty(x.shape + (3,), dtype=x.dtype)
    out[..., 0] = x
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def matvec(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """r (..., 3, 3) times v (..., 3)."""
    return (r * v[..., None, :]).sum(axis=-1)


def times_constant(R: np.ndarray, c: np.ndarray) -> np.ndarray:
    """R (N, 3, 3) times one constant 3x3 matrix or 3-vector c, as a single (3N x 3) product: much faster
    than numpy's loop over a stack of small matrices."""
    flat = np.ascontiguousarray(R).reshape(-1, 3) @ c
    return flat.reshape(R.shape if c.ndim == 2 else R.shape[:-1])


def rotate_about_own_axis(R: np.ndarray, axis: int, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """R · (elementary rotation about R's own x, y or z axis), by mixing two columns: cheaper than a batched
    3x3 product and exact in every back-end."""
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    out = R.copy()
    ci, cj = R[..., :, i], R[..., :, j]
    out[..., :, i] = ci * c[..., None] + cj * s[..., None]
    out[..., :, j] = cj * c[..., None] - ci * s[..., None]
    return out


def default_x_axis(z: np.ndarray) -> int:
    """Index of the unit axis least aligned with z (float values), the reference x when none is given."""
    return int(np.argmin(np.abs(np.asarray(z, dtype=float))))


def frame_rotation(z: np.ndarray, x: np.ndarray, backend) -> np.ndarray:
    """Rotation whose columns are the unit x, y, z axes of a frame given by z and a reference x."""
    z = z / backend.sqrt(dot(z, z))
    x = x - dot(x, z) * z
    x = x / backend.sqrt(dot(x, x))
    y = cross(z, x)
    return np.stack([x, y, z], axis=-1)
