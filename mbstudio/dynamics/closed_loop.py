"""Equations of motion of closed loops in the independent coordinates (docs/architecture.md, principle 2).

The spanning tree obeys M q̈ + h = Q + Φ_qᵀ λ, with λ the forces of the cut joints. On the constraint
manifold q̇ = R q̇_ind and q̈ = R q̈_ind + a (R = ∂q/∂q_ind and a from `Mechanism.acceleration_term`); since
Φ_q R = 0, projecting with Rᵀ removes λ:

    Rᵀ M R q̈_ind = Rᵀ (Q − h − M a) = Rᵀ Q − Rᵀ τ_tree(q, q̇, a),

where τ_tree(q, q̇, a) = M a + h is one inverse-dynamics pass. For a tree R is the identity and a = 0, so
every function here also serves open chains. All take assembled tree coordinates q and velocities q̇ (N, n)
or (n,) in the order of `mech.coordinates`, and run in every back-end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..model.errors import ModelError
from .inverse_dynamics import inverse_dynamics
from .mass_matrix import mass_matrix


def _transpose(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, 1, 2)


def _apply(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A (N, i, j) times x (N, j)."""
    return (A * x[:, None, :]).sum(axis=2)


def reduced_mass_matrix(mech: Mechanism, q, R: np.ndarray | None = None) -> np.ndarray:
    """Rᵀ M R (N, n_ind, n_ind); pass R when it is already known."""
    with mech.backend.context():
        R = mech.r_matrix(q) if R is None else R
        return _transpose(R) @ mass_matrix(mech, q) @ R


def reduced_bias_forces(mech: Mechanism, q, qd, R: np.ndarray | None = None) -> np.ndarray:
    """Rᵀ (M a + h) (N, n_ind): gravity, Coriolis and centrifugal forces, and the inertia of the
    velocity-product accelerations the loops impose, felt by the independent coordinates."""
    with mech.backend.context():
        R = mech.r_matrix(q) if R is None else R
        a = mech.acceleration_term(q, qd)
        return _apply(_transpose(R), inverse_dynamics(mech, q, qd, a))


def reduced_forces(mech: Mechanism, q, Q, R: np.ndarray | None = None) -> np.ndarray:
    """Rᵀ Q (N, n_ind): tree generalized forces Q (N, n) as forces on the independent coordinates."""
    with mech.backend.context():
        R = mech.r_matrix(q) if R is None else R
        return _apply(_transpose(R), mech.as_batch(Q))


def closed_loop_forward_dynamics(mech: Mechanism, q, qd, Q=None, R: np.ndarray | None = None) -> np.ndarray:
    """q̈_ind (N, n_ind) under the tree generalized forces Q (N, n; None: gravity only)."""
    b = mech.backend
    with b.context():
        R = mech.r_matrix(q) if R is None else R
        rhs = -reduced_bias_forces(mech, q, qd, R)
        if Q is not None:
            rhs = rhs + reduced_forces(mech, q, Q, R)
        return b.solve(reduced_mass_matrix(mech, q, R), rhs)


def closed_loop_inverse_dynamics(
    mech: Mechanism, q, qd, qdd_independent, Q=None, actuated: list[str] | None = None
) -> np.ndarray:
    """Actuator forces τ_act (N, n_act) that produce the independent accelerations q̈_ind (N, n_ind) at the
    state (q, q̇), besides the tree generalized forces Q (None: gravity only).

    `actuated` names the driven coordinates (default: the document's `actuated`, else the independent ones).
    They may differ from the independent coordinates: the actuators' virtual work must equal that of the
    tree forces on every admissible motion, R_actᵀ τ_act = Rᵀ (M q̈ + h − Q), with R_act the rows of R
    of the actuated coordinates; with more actuators than degrees of freedom, the least-norm τ_act."""
    b = mech.backend
    with b.context():
        R = mech.r_matrix(q)
        qdd = _apply(R, mech.as_batch(qdd_independent)) + mech.acceleration_term(q, qd)
        needed = inverse_dynamics(mech, q, qd, qdd)
        if Q is not None:
            needed = needed - mech.as_batch(Q)
        rhs = _apply(_transpose(R), needed)
        driven = actuated_indices(mech, actuated)
        A = _transpose(R[:, driven, :])  # (N, n_ind, n_act)
        try:
            if A.shape[2] == A.shape[1]:
                return b.solve(A, rhs)
            return _apply(_transpose(A), b.solve(A @ _transpose(A), rhs))
        except (np.linalg.LinAlgError, ZeroDivisionError) as exc:
            raise ModelError(
                "actuated",
                "these coordinates cannot drive the mechanism here (singular actuation)",
                [mech.coordinates[i] for i in driven],
                "coordinates whose rows of R = ∂q/∂q_ind have full rank",
            ) from exc


def actuated_indices(mech: Mechanism, actuated: list[str] | None = None) -> list[int]:
    """Tree-coordinate indices of the actuated coordinates; at least as many as degrees of freedom."""
    names = actuated or mech.model.actuated or mech.independent
    unknown = [n for n in names if n not in mech.coordinates]
    if unknown:
        raise ModelError(
            "actuated",
            "names a coordinate that is not a tree coordinate",
            unknown[0],
            "one of " + ", ".join(mech.coordinates),
        )
    if len(names) < len(mech.independent):
        raise ModelError(
            "actuated",
            f"{len(names)} actuated coordinate(s) cannot drive {len(mech.independent)} degrees of freedom",
            names,
            f"at least {len(mech.independent)} coordinates",
        )
    return [mech.coordinates.index(n) for n in names]


def actuator_forces_on_tree(mech: Mechanism, tau_act: np.ndarray, actuated: list[str] | None = None) -> np.ndarray:
    """The actuator forces τ_act (N, n_act) as tree generalized forces (N, n)."""
    b = mech.backend
    tau_act = mech.as_batch(tau_act)
    out = b.zeros((tau_act.shape[0], mech.n))
    out[:, actuated_indices(mech, actuated)] = tau_act
    return out


@dataclass
class JointReactions:
    """Lagrange multipliers of the loop equations: `values` (N, m), one column per constraint row, named
    `names` ('<joint>.force_<a>' for a_a·d = 0, a force in newtons along the axis a of the joint's parent
    frame; '<joint>.moment_<a><b>' for a_a·b_b = 0, a moment in newton metres; '<coupling>.force' for a
    coupling, the generalized force it applies to its follower, N or N m) and described by `labels`.
    The rows found redundant carry zero, since any share of the load between redundant rows is valid."""

    labels: list[str]
    joints: list[str]
    names: list[str]
    units: list[str]
    values: np.ndarray

    def of_joint(self, name: str) -> tuple[list[str], np.ndarray]:
        """Row labels and values (N, k) of one cut joint."""
        rows = [r for r, j in enumerate(self.joints) if j == name]
        if not rows:
            raise KeyError(f"'{name}' is not a cut joint; the cut joints are {sorted(set(self.joints))}")
        return [self.labels[r] for r in rows], self.values[:, rows]


def joint_reactions(mech: Mechanism, q, qd, qdd, Q=None) -> JointReactions:
    """λ from Φ_qᵀ λ = M q̈ + h − Q over the non-redundant rows (least squares: Φ_q,rows Φ_q,rowsᵀ λ =
    Φ_q,rows (M q̈ + h − Q)), for full tree accelerations q̈ (N, n) and all applied forces Q (actuators
    included; None: gravity only)."""
    b = mech.backend
    with b.context():
        needed = inverse_dynamics(mech, q, qd, qdd)
        if Q is not None:
            needed = needed - mech.as_batch(Q)
        rows = list(mech.partition.rows)
        values = b.zeros((needed.shape[0], mech.constraints.m))
        if rows:
            J = mech.constraint_jacobian(q)[:, rows]
            values[:, rows] = b.solve(J @ _transpose(J), _apply(J, needed))
        return named_reactions(mech, values)


def named_reactions(mech: Mechanism, values: np.ndarray) -> JointReactions:
    """The multipliers `values` (N, m) of the loop equations, each row named."""
    names, units = (
        zip(
            *(
                _row_name(mech, joint, eq)
                for joint, (_, eq) in zip(mech.constraints.row_joint, mech.constraints.rows, strict=True)
            ),
            strict=True,
        )
        if mech.constraints.m
        else ((), ())
    )
    return JointReactions(
        list(mech.constraints.labels), list(mech.constraints.row_joint), list(names), list(units), values
    )


def _row_name(mech: Mechanism, joint: str, equation: tuple) -> tuple[str, str]:
    axes = "xyz"
    if equation[0] == "c":
        follower = mech.constraints.couplings[equation[1]].follower
        return f"{joint}.force", "N m" if mech.tree.kinds[follower] == "R" else "N"
    if equation[0] == "d":
        return f"{joint}.force_{axes[equation[1]]}", "N"
    return f"{joint}.moment_{axes[equation[1]]}{axes[equation[2]]}", "N m"
