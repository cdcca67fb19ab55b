"""Smooth test motions of the independent coordinates, with exact derivatives, in float64 or mpmath."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from mbstudio.kinematics import Mechanism
from mbstudio.model.expressions import FUNCTIONS, evaluate

# Iriarte et al. (2017), eq. (16): the SLA suspension's exciting trajectory, as (amplitude, angular frequency)
SLA_HARMONICS = {"theta1": [("0.5", "3"), ("0.1", "10")], "theta2": [("0.3", "sqrt(2)"), ("0.7", "sqrt(17)")]}


def harmonics(mech: Mechanism) -> list[list[tuple[str, str]]]:
    """Per independent coordinate, (amplitude, angular frequency) terms added to its initial value: 0.3 in all,
    or a quarter of the coordinate's range where that is less (the vehicle's steering rack: its tie rods reach
    only so far)."""
    if set(mech.independent) == set(SLA_HARMONICS):
        return [SLA_HARMONICS[name] for name in mech.independent]
    ranges = {c.name: (c.min, c.max) for j in mech.model.joints for c in j.coordinates}
    out = []
    for i, name in enumerate(mech.independent):
        low, high = ranges[name]
        scale = 1.0 if low is None or high is None else min(1.0, (high - low) / 4 / 0.3)
        out.append([(f"{0.25 * scale:.6g}", f"{1 + 0.5 * i}"), (f"{0.05 * scale:.6g}", f"{3.1 + i}")])
    return out


def independent_path(mech: Mechanism, times, order: int = 0, dps: int | None = None) -> np.ndarray:
    """Independent positions (order 0), velocities (1) or accelerations (2) at `times`, shape (N, n_ind).
    With `dps` every step is done in mpmath at that precision."""
    lib = mpmath if dps else math
    num = (lambda x: mpmath.mpf(repr(x)) if isinstance(x, float) else mpmath.mpf(x)) if dps else float
    fns = {name: getattr(lib, name) for name in FUNCTIONS}
    q0 = mech.tree.initial_coordinates()
    with mpmath.workdps(dps or 15):
        rows = []
        for t in times:
            t = num(t)
            row = []
            for j, i in enumerate(mech.partition.independent):
                value = num(float(q0[i])) if order == 0 else num(0)
                for amp, freq in harmonics(mech)[j]:
                    a, w = (evaluate(e, num, {}, fns) for e in (amp, freq))
                    value += a * w**order * [lib.sin, lib.cos, lambda x: -lib.sin(x)][order](w * t)
                row.append(value)
            rows.append(row)
        return np.array(rows, dtype=object if dps else float)


def four_bar_branch_side(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Which side of the line from the crank pin B to the rocker pivot O3 the coupler-rocker pin C lies on:
    the two assembly branches of a four-bar, from the bodies' poses and the rocker's length (L3 = 0.3 m),
    independently of the loop equations and of det Φ_q."""
    poses = mech.poses(q)
    b, o3 = poses["2"][1], poses["3"][1]
    c = o3 + 0.3 * poses["3"][0][:, :, 0]
    return np.sign(np.cross(o3 - b, c - b)[:, 1])
