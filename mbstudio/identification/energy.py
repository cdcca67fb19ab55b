"""Kinetic and potential energy of a mechanism as linear maps of the inertial parameters.

For body b with angular velocity ω, origin velocity v (body axes), origin position p and rotation R (world):
T_b = ½ m v·v + h·(v × ω) + ½ ωᵀ I ω and V_b = −m g·p − (Rᵀ g)·h, with h = (mx, my, mz). So T = T_φ φ and
V = V_φ φ with rows T_φ, V_φ per sample. A change δφ leaves the Lagrangian (hence every equation of motion)
unchanged exactly when T_φ δφ = 0 for every state and V_φ δφ is the same constant at every configuration:
an independent check of any claimed null-space direction of the observation matrix.
"""

from __future__ import annotations

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..numerics.spatial import cross, dot, matvec


def energy_coefficients(mech: Mechanism, q, qd) -> tuple[np.ndarray, np.ndarray]:
    """(T_φ, V_φ), each (N, 10·nb), columns as `model.inertial_parameter_names()`, in float64."""
    st = mech.motion(q, qd)
    g = np.asarray(mech.tree.geometry.gravity(), dtype=float)
    blocks = []
    for body in mech.model.bodies:
        i = mech.tree.body_index(body.label)
        R = np.asarray(st.R[i], dtype=float)
        Rt = np.swapaxes(R, 1, 2)
        w, v = (matvec(Rt, np.asarray(x[i], dtype=float)) for x in (st.w, st.v))
        blocks.append(energy_rows(R, np.asarray(st.p[i], dtype=float), w, v, g))
    return np.concatenate([t for t, _ in blocks], axis=1), np.concatenate([v for _, v in blocks], axis=1)


def energy_rows(R: np.ndarray, p: np.ndarray, w: np.ndarray, v: np.ndarray, g: np.ndarray):
    """One body's (T_φ, V_φ), each (N, 10), from its rotation R (N, 3, 3), origin p (N, 3, ground axes), ω and
    v (N, 3, body axes) and gravity g (3,), in the arithmetic of the arrays (float64 or MPFR)."""
    x, y, z = w[:, 0], w[:, 1], w[:, 2]
    T = np.column_stack([0.5 * dot(v, v), cross(v, w), 0.5 * x * x, x * y, x * z, 0.5 * y * y, y * z, 0.5 * z * z])
    Rt = np.swapaxes(R, 1, 2)
    V = np.column_stack([-(p @ g), -matvec(Rt, np.broadcast_to(g, p.shape)), np.zeros((len(p), 6))])
    return T, V


def random_states(mech: Mechanism, samples: int, seed: int = 0, spread: float = 0.3):
    """Assembled coordinates and velocities (float64) near the document's initial configuration; samples
    whose loops do not close are dropped."""
    rng = np.random.default_rng(seed)
    ind = list(mech.partition.independent)
    start = mech.tree.initial_coordinates()[ind]
    values = start + spread * rng.uniform(-1, 1, (samples, len(ind)))
    q = mech.assemble(values, strict=False)
    q = q[mech.last_report.converged] if mech.partition.dependent else q
    qd = mech.velocities(q, rng.uniform(-1, 1, (len(q), len(ind))))
    return q, qd


def lagrangian_change(mech: Mechanism, directions: np.ndarray, samples: int = 20, seed: int = 0) -> np.ndarray:
    """Per direction (columns of `directions`, (10·nb, k) floats): the largest change of the kinetic energy
    and of the potential energy's variation over the configurations, at random assembled states."""
    q, qd = random_states(mech, samples, seed)
    T, V = energy_coefficients(mech, q, qd)
    dT, dV = T @ directions, V @ directions
    return np.maximum(np.abs(dT).max(axis=0), np.abs(dV - dV[:1]).max(axis=0))
