"""Inverse dynamics by the recursive Newton-Euler algorithm, and the bias forces it yields.

τ(q, q̇, q̈) for the tree coordinates (`mech.coordinates`); for a closed loop these are the tree's forces,
which a caller projects with R. Outward pass: node velocity V_k = V_λ + s_k q̇_k and acceleration
A_k = A_λ + ṡ_k q̇_k + s_k q̈_k, the ground accelerating at −g so that gravity acts on every body (s_k is fixed
in the frame moving with its carrier, V_λ but for a ball joint's axes, so ṡ_k = V_carrier ×m s_k, plus a ball's
own J̇ ρ̇: spatial_tree.velocity_products). Inward pass: each node's wrench
F_k = I_k A_k + V_k ×f I_k V_k summed over its subtree, τ_k = s_kᵀ F_k.
"""

from __future__ import annotations

import numpy as np

from ..kinematics.mechanism import Mechanism
from .spatial_tree import (
    axes,
    components,
    cross_force,
    gravity_acceleration,
    node_inertias,
    nodes,
    samples_first,
    spatial_dot,
    velocity_products,
)


def inverse_dynamics(mech: Mechanism, q, qd, qdd, gravity=None) -> np.ndarray:
    """Generalized forces τ (N, n) for q, q̇, q̈ (N, n) or (n,), with the document's gravity, or with `gravity`
    (N, 3) or (3,) in world axes (a limb placed by a mount frame feels the ground's gravity rotated)."""
    return _rnea(mech, q, qd, qdd, gravity=True if gravity is None else gravity)


def bias_forces(mech: Mechanism, q, qd) -> np.ndarray:
    """h(q, q̇) = C(q, q̇) q̇ + g(q) (N, n): the forces needed to hold q̈ = 0."""
    return _rnea(mech, q, qd, None, gravity=True)


def gravity_forces(mech: Mechanism, q) -> np.ndarray:
    """g(q) (N, n): the forces that hold the mechanism at rest against gravity."""
    return _rnea(mech, q, None, None, gravity=True)


def coriolis_forces(mech: Mechanism, q, qd) -> np.ndarray:
    """C(q, q̇) q̇ (N, n): Coriolis and centrifugal forces, without gravity."""
    return _rnea(mech, q, qd, None, gravity=False)


def _rnea(mech: Mechanism, q, qd, qdd, gravity) -> np.ndarray:
    """`gravity`: True (the document's), False (none) or a vector (N, 3) or (3,)."""
    b, tree = mech.backend, mech.tree
    with b.context():
        q = mech.as_batch(q)
        N = q.shape[0]
        qd, qdd = (None if x is None else components(mech.as_batch(x)) for x in (qd, qdd))
        st = tree.motion(q)
        S, tn = axes(tree, st), nodes(tree)
        inertia = node_inertias(mech, st, tn)
        if gravity is True or gravity is False:
            ground = gravity_acceleration(mech, N) if gravity else b.zeros((6, N))
        else:
            ground = b.zeros((6, N))
            ground[3:] = -components(np.broadcast_to(gravity, (N, 3)))
        V, A, F = [None] * mech.n, [None] * mech.n, [None] * mech.n  # V None: at rest
        if qd is not None:
            for k in tn.order:
                p = tn.parent[k]
                V[k] = S[k] * qd[k] if p < 0 or V[p] is None else V[p] + S[k] * qd[k]
        c = velocity_products(tree, st, tn, S, V, qd) if qd is not None else [None] * mech.n
        for k in tn.order:
            p = tn.parent[k]
            A[k] = ground if p < 0 else A[p]
            if c[k] is not None:
                A[k] = A[k] + c[k]
            if qdd is not None:
                A[k] = A[k] + S[k] * qdd[k]
            F[k] = b.zeros((6, N)) if inertia[k] is None else inertia[k].apply(A[k])
            if inertia[k] is not None and V[k] is not None:
                F[k] = F[k] + cross_force(V[k], inertia[k].apply(V[k]))
        tau = b.zeros((mech.n, N))
        for k in reversed(tn.order):
            tau[k] = spatial_dot(S[k], F[k])
            if tn.parent[k] >= 0:
                F[tn.parent[k]] += F[k]
        return samples_first(tau)
