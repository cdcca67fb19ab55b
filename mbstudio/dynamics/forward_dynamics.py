"""Forward dynamics q̈(q, q̇, τ) by the articulated-body algorithm, and the dense reference route M⁻¹(τ − h).

Each node is a one-degree-of-freedom joint, so the articulated inertia I^A_k, its projection U_k = I^A_k s_k
and D_k = s_kᵀ U_k are a 6x6 matrix, a 6-vector and a scalar: no per-sample solves, which keeps the same code
fast on float64 batches and exact on mpmath and sympy. World axes at the world origin make the hand-over of
I^A and of the bias force p^A to the parent node a plain sum.
"""

from __future__ import annotations

import numpy as np

from ..kinematics.mechanism import Mechanism
from .inverse_dynamics import bias_forces
from .mass_matrix import mass_matrix
from .spatial_tree import (
    axes,
    components,
    cross_force,
    gravity_acceleration,
    matvec,
    node_inertias,
    nodes,
    samples_first,
    spatial_dot,
    velocity_products,
)


def forward_dynamics(mech: Mechanism, q, qd, tau) -> np.ndarray:
    """q̈ (N, n) for q, q̇, τ (N, n) or (n,), with the document's gravity (articulated-body algorithm)."""
    b, tree = mech.backend, mech.tree
    with b.context():
        q = mech.as_batch(q)
        qd, tau = components(mech.as_batch(qd)), components(mech.as_batch(tau))
        N = q.shape[0]
        st = tree.motion(q)
        S, tn = axes(tree, st), nodes(tree)
        inertia = node_inertias(mech, st, tn)
        # outward: velocities, velocity-product accelerations c_k, and each node's own I^A and p^A
        V, IA, pA = [None] * mech.n, [None] * mech.n, [None] * mech.n
        for k in tn.order:
            p = tn.parent[k]
            V[k] = S[k] * qd[k] if p < 0 else V[p] + S[k] * qd[k]
            if inertia[k] is None:
                IA[k], pA[k] = b.zeros((6, 6, N)), b.zeros((6, N))
            else:
                IA[k], pA[k] = inertia[k].matrix(b), cross_force(V[k], inertia[k].apply(V[k]))
        c = [b.zeros((6, N)) if x is None else x for x in velocity_products(tree, st, tn, S, V, qd)]
        # inward: articulated inertias and bias forces, handed to the parent by plain sums
        U, D, u = [None] * mech.n, [None] * mech.n, [None] * mech.n
        for k in reversed(tn.order):
            U[k] = matvec(IA[k], S[k])
            D[k] = spatial_dot(S[k], U[k])
            u[k] = tau[k] - spatial_dot(S[k], pA[k])
            p = tn.parent[k]
            if p >= 0:  # in place: I^A_k is not needed after U_k, and the arrays are large
                Ia = IA[k]
                Ia -= (U[k] / D[k])[:, None] * U[k][None]
                IA[p] += Ia
                pA[p] += pA[k] + matvec(Ia, c[k]) + U[k] * (u[k] / D[k])
        # outward: accelerations, the ground accelerating at −g
        qdd, A = b.zeros((mech.n, N)), [None] * mech.n
        ground = gravity_acceleration(mech, N)
        for k in tn.order:
            p = tn.parent[k]
            Ak = (ground if p < 0 else A[p]) + c[k]
            qdd[k] = (u[k] - spatial_dot(U[k], Ak)) / D[k]
            A[k] = Ak + S[k] * qdd[k]
        return samples_first(qdd)


def forward_dynamics_dense(mech: Mechanism, q, qd, tau) -> np.ndarray:
    """q̈ = M⁻¹(τ − h) (N, n) by forming and solving the mass matrix: the reference for `forward_dynamics`."""
    b = mech.backend
    with b.context():
        rhs = mech.as_batch(tau) - bias_forces(mech, q, qd)
        return b.solve(mass_matrix(mech, q), rhs)
