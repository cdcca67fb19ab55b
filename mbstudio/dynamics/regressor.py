"""The inertial-parameter regressor: generalized forces linear in the bodies' inertial parameters.

For body b with parameters φ_b = (m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz) about its frame origin O in
its own axes (docs/architecture.md, conventions), the Newton-Euler wrench the body needs for its motion is
[n_O; f] = Y_b φ_b (moment about O first, then force, world axes). Virtual power gives the tree's
generalized forces τ = Σ_b J_bᵀ Y_b φ_b with J_b = [ω; v_O] the body's Jacobian, and a closed loop's
forces in the independent coordinates are Rᵀ τ (docs/architecture.md, principle 2).

Only elementwise arithmetic and matmul are used, so the same code runs on float arrays batched over
samples, mpmath object arrays and sympy object arrays.
"""

from __future__ import annotations

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..kinematics.tree import KinematicTree, MotionState
from ..numerics.spatial import cross, matvec


def _skew(v: np.ndarray, backend) -> np.ndarray:
    """(N, 3) -> (N, 3, 3) with skew(v) x = v × x."""
    out = backend.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2], out[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    out[..., 1, 0], out[..., 2, 0], out[..., 2, 1] = v[..., 2], -v[..., 1], v[..., 0]
    return out


def _inertia_map(v: np.ndarray, backend) -> np.ndarray:
    """(N, 3) -> (N, 3, 6) with I v = L(v) (Ixx, Ixy, Ixz, Iyy, Iyz, Izz) for a symmetric tensor I."""
    out = backend.zeros(v.shape[:-1] + (3, 6))
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    out[..., 0, 0], out[..., 0, 1], out[..., 0, 2] = x, y, z
    out[..., 1, 1], out[..., 1, 3], out[..., 1, 4] = x, y, z
    out[..., 2, 2], out[..., 2, 4], out[..., 2, 5] = x, y, z
    return out


def body_regressor(R: np.ndarray, w: np.ndarray, al: np.ndarray, a: np.ndarray, backend) -> np.ndarray:
    """Y (N, 6, 10) with [n_O; f] = Y φ, from the body's world rotation R (N, 3, 3), angular velocity w and
    acceleration al (N, 3), and a = a_O − g (N, 3), the origin's acceleration minus gravity (world)."""
    return _rotate_blocks(R, _body_axes_from_world(R, w, al, a, backend))


def body_axes_regressor(w: np.ndarray, al: np.ndarray, a: np.ndarray, backend) -> np.ndarray:
    """The same wrench in body axes, where φ is constant: w, al, a (N, 3) are ω, α and a_O − g in body axes.

    f = m a + (skew(α) + skew(ω)²) h  and  n_O = h × a + I α + ω × I ω,  with h = (mx, my, mz)."""
    W = _skew(w, backend)
    Y = backend.zeros(w.shape[:-1] + (6, 10))
    Y[..., 3:, 0] = a
    Y[..., 3:, 1:4] = _skew(al, backend) + W @ W
    Y[..., :3, 1:4] = -_skew(a, backend)
    Y[..., :3, 4:] = _inertia_map(al, backend) + W @ _inertia_map(w, backend)
    return Y


def _body_axes_from_world(R, w, al, a, backend) -> np.ndarray:
    Rt = np.swapaxes(R, -1, -2)
    return body_axes_regressor(matvec(Rt, w), matvec(Rt, al), matvec(Rt, a), backend)


def _rotate_blocks(R: np.ndarray, X: np.ndarray) -> np.ndarray:
    """R applied to both 3-row blocks of X (N, 6, m)."""
    return np.concatenate([R @ X[..., :3, :], R @ X[..., 3:, :]], axis=-2)


def support_jacobian(tree: KinematicTree, st: MotionState, body: int) -> np.ndarray:
    """The columns of the body's world Jacobian [ω; v_O] (O its origin) for the coordinates that move it,
    `tree.support[body]`, shape (N, 6, len(support)): [u_k; u_k × (O − o_k)] for a rotation, [0; u_k] for a
    translation. The other columns are zero."""
    J = tree.backend.zeros((st.p[body].shape[0], 6, len(tree.support[body])))
    for c, k in enumerate(tree.support[body]):
        u = st.u[:, k]
        if tree.kinds[k] == "R":
            J[:, :3, c], J[:, 3:, c] = u, cross(u, st.p[body] - st.o[:, k])
        else:
            J[:, 3:, c] = u
    return J


def tree_regressor(mech: Mechanism, q, qd, qdd) -> np.ndarray:
    """K_tree (N, n, 10·nb) with K_tree φ = τ, the tree's inverse dynamics in all coordinates (tree order,
    `mech.coordinates`); columns in the order of `model.inertial_parameter_names()`."""
    b, tree = mech.backend, mech.tree
    with b.context():
        st = mech.motion(q, qd, qdd)
        g = tree.geometry.gravity()[None, :]
        K = b.zeros((st.p[0].shape[0], mech.n, 10 * len(mech.model.bodies)))
        for col, body in enumerate(mech.model.bodies):
            i = tree.body_index(body.label)
            # virtual power: τ = Jᵀ [n_O; f] = (Rᵀ J)ᵀ Y_body. Rotating J's few non-zero (support) columns into
            # body axes costs less than rotating Y, which matters in mpmath and sympy.
            Y = _body_axes_from_world(st.R[i], st.w[i], st.al[i], st.a[i] - g, b)
            J = _rotate_blocks(np.swapaxes(st.R[i], 1, 2), support_jacobian(tree, st, i))
            K[:, tree.support[i], 10 * col : 10 * col + 10] = np.swapaxes(J, 1, 2) @ Y
        return K


def regressor(mech: Mechanism, q, qd, qdd) -> np.ndarray:
    """K (N, n_ind, 10·nb) with K φ the generalized forces of the independent coordinates, K = Rᵀ K_tree.

    q, qd, qdd (N, n) are full coordinates consistent with the loop constraints (see `Mechanism.assemble`,
    `velocities`, `accelerations`). For a tree (no dependent coordinates) K = K_tree."""
    K = tree_regressor(mech, q, qd, qdd)
    if not mech.partition.dependent:
        return K[:, list(mech.partition.independent)]
    with mech.backend.context():
        return mech.backend.matmul(np.swapaxes(mech.r_matrix(q), 1, 2), K)
