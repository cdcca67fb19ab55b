"""The task-space quantities of a parallel machine by the general closed-loop method (the whole mechanism's
spanning tree, every loop closed together, q̇ = R q̇_ind): the independent route the modular model is checked
against, and the "general" column of `mbstudio bench --only pkm`.

With the platform's task Jacobian J_t = P_vᵀ J_p R (δ_p × n_ind, square for a machine whose platform carries
every degree of freedom): q̇_ind = J_t⁻¹ V_t, M_t = J_t⁻ᵀ Rᵀ M R J_t⁻¹, and the bias and efforts from one
inverse-dynamics pass of the tree projected with R (dynamics/closed_loop.py). Every function runs in every
back-end (batched float64, or traced for the compiled comparison)."""

from __future__ import annotations

import numpy as np

from ...kinematics.mechanism import Mechanism
from ...model.errors import AssemblyError
from ..closed_loop import actuated_indices, reduced_mass_matrix
from ..inverse_dynamics import inverse_dynamics


def _apply(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    return (A * x[:, None, :]).sum(axis=2)


def _t(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, 1, 2)


class GeneralRoute:
    """The task space of `mech`'s platform body along the ground axes `axes`, driven by `actuated`."""

    def __init__(self, mech: Mechanism, platform: str, axes: list[int], actuated: list[str]) -> None:
        self.mech, self.platform, self.axes = mech, platform, list(axes)
        self.driven = actuated_indices(mech, actuated)
        self.body = mech.tree.body_index(platform)

    def task_jacobian(self, q) -> tuple[np.ndarray, np.ndarray]:
        """J_t (N, δ_p, n_ind) and R (N, n, n_ind)."""
        R = self.mech.r_matrix(q)
        J = self.mech.body_jacobian(q, self.platform)[:, 3:][:, self.axes]
        return J @ R, R

    def position(self, q) -> np.ndarray:
        """The platform origin's task coordinates (N, δ_p)."""
        return self.mech.motion(q).p[self.body][:, self.axes]

    def inverse_kinematics(self, x, guess, substeps: int = 8, tol: float = 1e-13) -> np.ndarray:
        """Assembled coordinates (N, n) with the platform at task coordinates x (N, δ_p): Newton on the
        independent coordinates (each step re-assembled), walked from `guess` (N, n) in straight substeps
        (float64)."""
        mech, ind = self.mech, list(self.mech.partition.independent)
        q = mech.assemble(None, guess=guess)
        start = self.position(q)
        for s in np.linspace(0, 1, substeps + 1)[1:]:
            goal = start + s * (x - start)
            for _ in range(30):
                error = goal - self.position(q)
                if np.abs(error).max() < tol * mech.length_scale:
                    break
                J, R = self.task_jacobian(q)
                step = np.linalg.solve(J, error[:, :, None])[:, :, 0]
                q = mech.assemble(q[:, ind] + step, guess=q + _apply(R, step))
        if np.abs(x - self.position(q)).max() > 1e3 * tol * mech.length_scale:
            raise AssemblyError("the platform cannot reach these task coordinates on the general route")
        return q

    def motion(self, q, v, a) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(q̇ (N, n), q̈_ind (N, n_ind), J_t, R) for task velocities v and accelerations a (N, δ_p): the
        chain rule ṙ = J_t q̇_ind, r̈ = J_t q̈_ind + (the platform's acceleration at q̈_ind = 0)."""
        mech, b = self.mech, self.mech.backend
        J, R = self.task_jacobian(q)
        qd = _apply(R, b.solve(J, mech.as_batch(v)))
        drift = mech.motion(q, qd, mech.acceleration_term(q, qd)).a[self.body][:, self.axes]
        return qd, b.solve(J, mech.as_batch(a) - drift), J, R

    def inverse_dynamics(self, q, v, a) -> np.ndarray:
        """Actuator efforts (N, n_act): R_actᵀ u = Rᵀ τ_tree (dynamics/closed_loop.py), least-norm when
        redundant."""
        mech, b = self.mech, self.mech.backend
        qd, qdd_ind, _, R = self.motion(q, v, a)
        qdd = _apply(R, qdd_ind) + mech.acceleration_term(q, qd)
        rhs = _apply(_t(R), inverse_dynamics(mech, q, qd, qdd))
        A = _t(R[:, self.driven, :])
        if A.shape[1] == A.shape[2]:
            return b.solve(A, rhs)
        return _apply(_t(A), b.solve(A @ _t(A), rhs))

    def equations(self, q, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """M_t (N, δ, δ), C_t V_t + W_t^grav (N, δ) and J_IK (N, n_act, δ) at q with task velocities v."""
        mech, b = self.mech, self.mech.backend
        zero = b.zeros(np.shape(mech.as_batch(v)))
        qd, qdd_ind, J, R = self.motion(q, v, zero)
        qdd = _apply(R, qdd_ind) + mech.acceleration_term(q, qd)
        Jinv_t = _t(b.solve(J, _identity(b, J.shape[0], J.shape[1])))  # J_t⁻ᵀ
        M_t = Jinv_t @ reduced_mass_matrix(mech, q, R) @ _t(Jinv_t)
        bias = _apply(Jinv_t, _apply(_t(R), inverse_dynamics(mech, q, qd, qdd)))
        return M_t, bias, R[:, self.driven] @ _t(Jinv_t)


def _identity(b, count: int, size: int) -> np.ndarray:
    out = b.zeros((count, size, size))
    for i in range(size):
        out[:, i, i] = b.scalar(1)
    return out
