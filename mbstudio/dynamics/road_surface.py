"""A road surface z(x, y) given as heights on a regular grid (a CSV file beside the model, docs/vehicle.md): its
height and gradient anywhere, joined with a continuous gradient so that the road's normal never jumps.

Along each grid direction the heights are joined by cubic Hermite pieces whose knot slopes are the three-point
estimates (h₊ s₋ + h₋ s₊) / (h₋ + h₊) from the neighbouring secants s₋, s₊ over the intervals h₋, h₊ (exact for a
quadratic), 0 at the grid's edges; the surface is the tensor product of the two (a bicubic Hermite patch per cell,
the knots' cross slopes from the same rule). It passes through every height, reproduces a plane inside the grid,
is level at its edges and held level beyond them, as the x-profile of road_profile.py is.

The interpolation is linear in the heights: z(x, y) = w(x)ᵀ Z v(y), with w and v the cardinal weights of the 1-D
rule, so the compiled engine traces it as sums of each cell's cubic where the point lies in it, and its gradient
as the same sums with the weights' derivatives.
"""

from __future__ import annotations

import numpy as np

from ..model.surface_files import Grid
from ..numerics.spatial import dot


def knot_slope_matrix(xs: np.ndarray) -> np.ndarray:
    """D (n, n): the knot slopes d = D z of the heights z at xs, three-point estimates inside, 0 at the ends."""
    n = len(xs)
    d = np.zeros((n, n))
    h = np.diff(xs)
    for i in range(1, n - 1):
        left, right = h[i - 1], h[i]
        total = left + right
        d[i, i - 1] = -right / (left * total)
        d[i, i] = (right / left - left / right) / total
        d[i, i + 1] = left / (right * total)
    return d


def _hermite(u, h):
    """The four cubic Hermite basis values and their derivatives along x (not u) at u in [0, 1], interval h:
    for the start height, the end height, the start slope and the end slope."""
    u2, u3 = u * u, u * u * u
    values = (2 * u3 - 3 * u2 + 1, 3 * u2 - 2 * u3, h * (u3 - 2 * u2 + u), h * (u3 - u2))
    slopes = ((6 * u2 - 6 * u) / h, (6 * u - 6 * u2) / h, 3 * u2 - 4 * u + 1, 3 * u2 - 2 * u)
    return values, slopes


def cardinal_weights(xs: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """w (N, n) and w' (N, n): f(at) = w f and f'(at) = w' f for heights f at xs (float64 positions at)."""
    d = knot_slope_matrix(xs)
    at = np.clip(at, xs[0], xs[-1])
    k = np.clip(np.searchsorted(xs, at, side="right") - 1, 0, len(xs) - 2)
    h = xs[k + 1] - xs[k]
    values, slopes = _hermite((at - xs[k]) / h, h)
    eye = np.eye(len(xs))
    rows = (eye[k], eye[k + 1], d[k], d[k + 1])
    weights = sum(b[:, None] * r for b, r in zip(values, rows, strict=True))
    return weights, sum(b[:, None] * r for b, r in zip(slopes, rows, strict=True))


def traced_weights(xs: np.ndarray, at) -> tuple[list, list]:
    """The cardinal weights and their derivatives (n each) at one traced position: each cell's cubic where `at`
    lies in it (the last cell closed), held at the ends."""
    import casadi

    d = knot_slope_matrix(xs)
    at = casadi.fmin(casadi.fmax(at, xs[0]), xs[-1])
    n = len(xs)
    weights, slopes = [0.0] * n, [0.0] * n
    for k in range(n - 1):
        inside = (at >= xs[k]) * (at < xs[k + 1] if k < n - 2 else at <= xs[k + 1])
        h = xs[k + 1] - xs[k]
        values, derivatives = _hermite((at - xs[k]) / h, h)
        eye = np.eye(n)
        for b, db, row in zip(values, derivatives, (eye[k], eye[k + 1], d[k], d[k + 1]), strict=True):
            for i in np.flatnonzero(row):
                weights[i] = weights[i] + inside * (row[i] * b)
                slopes[i] = slopes[i] + inside * (row[i] * db)
    return weights, slopes


def height_and_gradient(grid: Grid, x, y, backend) -> tuple:
    """Height, ∂z/∂x and ∂z/∂y (N,) of the surface at positions x, y (N,): floats, or traced on the compiled
    engine's backend."""
    if backend.name == "casadi":
        out = [_traced_point(grid, xi, yi) for xi, yi in zip(x, y, strict=True)]
        return tuple(backend.asarray([o[k] for o in out]) for k in range(3))
    from .road_profile import float_distances

    wx, dwx = cardinal_weights(grid.x, float_distances(x))
    wy, dwy = cardinal_weights(grid.y, float_distances(y))
    along_y, slope_y = wy @ grid.z.T, dwy @ grid.z.T  # (N, nx): Z v(y) and Z v'(y) per point
    height = (wx * along_y).sum(axis=1)
    return tuple(backend.asarray(a) for a in (height, (dwx * along_y).sum(axis=1), (wx * slope_y).sum(axis=1)))


def _traced_point(grid: Grid, x, y) -> tuple:
    wx, dwx = traced_weights(grid.x, x)
    wy, dwy = traced_weights(grid.y, y)
    along_y = [sum(grid.z[i, j] * wy[j] for j in range(len(wy))) for i in range(len(wx))]
    slope_y = [sum(grid.z[i, j] * dwy[j] for j in range(len(wy))) for i in range(len(wx))]
    height = sum(w * a for w, a in zip(wx, along_y, strict=True))
    return (
        height,
        sum(w * a for w, a in zip(dwx, along_y, strict=True)),
        sum(w * s for w, s in zip(wx, slope_y, strict=True)),
    )


def tangent_plane(forces, centre) -> tuple[np.ndarray, np.ndarray]:
    """The road's tangent plane nearest the points `centre` (N, 3) of a still road: a point o on it and its unit
    normal n (N, 3). The road's point below each centre gives a first plane; the centre's foot on that plane, a
    second point of the road whose tangent plane is the answer (exact on a plane; on a curved road the distance
    to it errs by the curvature times the square of the first foot's offset, docs/contact.md)."""
    origin, normal = _tangent(forces, centre[:, 0], centre[:, 1])
    foot = centre - dot(centre - origin, normal)[:, None] * normal
    return _tangent(forces, foot[:, 0], foot[:, 1])


def _tangent(forces, x, y) -> tuple[np.ndarray, np.ndarray]:
    b = forces.mech.backend
    height, slope_x, slope_y, _ = forces.road_surface(None, x, y)
    slope_y = b.zeros(len(x)) if slope_y is None else slope_y
    rows = [[-sx, -sy, 1.0] for sx, sy in zip(slope_x, slope_y, strict=True)]
    normal = b.asarray(rows) if len(rows) else b.zeros((0, 3))
    normal = normal / b.sqrt(dot(normal, normal))[:, None]
    origin = b.asarray([[xi, yi, h] for xi, yi, h in zip(x, y, height, strict=True)]) if len(rows) else b.zeros((0, 3))
    return origin, normal
