"""A road profile's height and slope between its rows when they are joined smoothly ("interpolation": "smooth"
in the file): a monotone piecewise cubic through every [s, z] row (Fritsch and Carlson, "Monotone piecewise cubic
interpolation", SIAM Journal on Numerical Analysis, 1980), level at both ends and held level beyond them.

Straight lines between the rows (the default) leave a corner at every row: the tyre's damping force, which follows
the road's slope, jumps there, and a variable-step integrator retries its step at each corner (on the vehicle
sample's 25-row bump CVODES retried 1070 steps, and 541 on the smooth profile). The smooth profile
has a continuous slope, never overshoots its rows (a flat stretch stays flat, a step stays a monotone ramp) and
passes through every row.
"""

from __future__ import annotations

import numpy as np

from ..model.errors import ModelError


def knot_slopes(xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
    """The slope at each row: 0 at both ends (the profile is held level beyond them, so its slope stays
    continuous there) and where the neighbouring secants differ in sign or one is flat (no overshoot); elsewhere
    their weighted harmonic mean (Fritsch and Carlson's choice, as Fritsch and Butland weight it)."""
    d = np.zeros(len(xs))
    if len(xs) < 3:
        return d
    h = np.diff(xs)
    secant = np.diff(zs) / h
    left, right, h_left, h_right = secant[:-1], secant[1:], h[:-1], h[1:]
    rising_or_falling = left * right > 0
    w_left, w_right = 2 * h_right + h_left, h_right + 2 * h_left
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (w_left + w_right) / (w_left / left + w_right / right)
    d[1:-1] = np.where(rising_or_falling, mean, 0.0)
    return d


def smooth_height_and_slope(xs: np.ndarray, zs: np.ndarray, s, backend) -> tuple[np.ndarray, np.ndarray]:
    """Height and slope (N,) of the smooth profile at the distances s (N,): floats, or traced symbols on the
    compiled engine's backend (a sum over the segments, each its cubic where s lies in it)."""
    if len(xs) == 1:
        return backend.asarray([zs[0]] * len(s)), backend.zeros(len(s))
    d = knot_slopes(xs, zs)
    if backend.name == "casadi":
        return _traced(xs, zs, d, list(s), backend)
    at = np.clip(float_distances(s), xs[0], xs[-1])
    k = np.clip(np.searchsorted(xs, at, side="right") - 1, 0, len(xs) - 2)
    height, slope = _cubic(zs[k], zs[k + 1], d[k], d[k + 1], xs[k + 1] - xs[k], at - xs[k])
    return backend.asarray(height), backend.asarray(slope)


def float_distances(s) -> np.ndarray:
    """The distances along the road as floats; a ModelError for values of another number system (the road is
    evaluated in float64 and traced for the compiled engine, not in variable precision)."""
    try:
        return np.asarray(s, dtype=float)
    except TypeError:
        raise ModelError("road", "is evaluated in float64 and on the compiled engine only", None) from None


def _traced(xs, zs, d, s: list, backend) -> tuple[np.ndarray, np.ndarray]:
    """The cubic of the segment each distance lies in: the segment's rows, slopes, start and length picked by the
    segments' indicators (exactly one of them is 1, so a pick is that segment's number, exactly), then one cubic,
    the same operations as that segment's own: the vehicle's 25-row bump costs a tenth of its state equation where
    every segment's cubic was evaluated and summed."""
    import casadi

    last = len(xs) - 2
    lengths = np.diff(xs)
    heights, slopes = [], []
    for si in s:
        at = casadi.fmin(casadi.fmax(si, xs[0]), xs[-1])
        inside = [(at >= xs[k]) * (at < xs[k + 1] if k < last else at <= xs[k + 1]) for k in range(last + 1)]

        def pick(values: np.ndarray, inside: list = inside):
            return sum((w * float(v) for w, v in zip(inside, values, strict=True) if v != 0), casadi.SX(0))

        z0, z1, d0, d1 = pick(zs[:-1]), pick(zs[1:]), pick(d[:-1]), pick(d[1:])
        z, dz = _cubic(z0, z1, d0, d1, pick(lengths), at - pick(xs[:-1]))
        heights.append(z)
        slopes.append(dz)
    return backend.asarray(heights), backend.asarray(slopes)


def _cubic(z0, z1, d0, d1, h, r):
    """The Hermite cubic of a segment of length h from (z0, slope d0) to (z1, slope d1), and its slope, at the
    distance r from the segment's start."""
    u = r / h
    u2, u3 = u * u, u * u * u
    height = z0 * (2 * u3 - 3 * u2 + 1) + h * d0 * (u3 - 2 * u2 + u) + z1 * (3 * u2 - 2 * u3) + h * d1 * (u3 - u2)
    slope = (z0 - z1) * (6 * u2 - 6 * u) / h + d0 * (3 * u2 - 4 * u + 1) + d1 * (3 * u2 - 2 * u)
    return height, slope
