"""A physically consistent estimate: standard inertial parameters of every body that a real body could have, whose
base parameters are as close as possible to the least-squares estimate in its own metric.

Consistency is the linear matrix inequality of Wensing, Kim and Slotine, "Linear Matrix Inequalities for
Physically Consistent Inertial Parameter Identification: A Statistical Perspective on the Mass Distribution"
(2018): the pseudo-inertia
    J(φ_i) = [[Σ, h], [hᵀ, m]],   Σ = ½ tr(I) 1 − I   (the second moment of the mass about the origin),
is positive semi-definite, which holds exactly when some non-negative mass distribution has these moments; it
gives m ≥ 0, a positive semi-definite inertia about the centre of mass and its triangle inequalities. The problem
    minimise  |L (z − ẑ)|² + μ |(φ − φ₀) / s|²   over φ, friction f,
    with      z = (P φ for the estimated base parameters, f),  J(φ_i) ⪰ 0 for every body,  f ≥ 0,
is convex (a semi-definite program, solved by cvxpy with Clarabel). L is the factor of the estimate's inverse
covariance (|L (z − ẑ)| counts standard deviations), P the base-parameter map. The base parameters leave the
directions of the null space of W free; the small pull μ towards the document's values φ₀ (each parameter
scaled by s, its size in the document) picks one φ among those that fit equally well and fills in the
parameters held at the model's values. The estimate is then as far from the least-squares one as consistency
requires: `distance_sigma` says how far, in standard deviations (a few at most when the truth is consistent).
"""

from __future__ import annotations

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..model.errors import ModelError

PRIOR_WEIGHT = 1e-6  # μ: a parameter off by its own size in the document costs a thousandth of a standard deviation
PSD_TOLERANCE = 1e-7  # an eigenvalue of J above −tolerance · (its largest) counts as non-negative: solver rounding
KINDS = (slice(0, 1), slice(1, 4), slice(4, 10))  # mass, first moments, second moments of each body's ten


def pseudo_inertia_basis() -> np.ndarray:
    """E (10, 4, 4) with J(φ_i) = Σ_k φ_i,k E_k for φ_i = (m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz)."""
    E = np.zeros((10, 4, 4))
    E[0, 3, 3] = 1.0
    for k in range(3):
        E[1 + k, k, 3] = E[1 + k, 3, k] = 1.0
    for k, axis in ((4, 0), (7, 1), (9, 2)):  # Σ = ½ tr(I) 1 − I: a diagonal moment adds ½ to the others
        E[k, :3, :3] = 0.5 * np.eye(3)
        E[k, axis, axis] = -0.5
    for k, (a, b) in ((5, (0, 1)), (6, (0, 2)), (8, (1, 2))):
        E[k, a, b] = E[k, b, a] = -1.0
    return E


def pseudo_inertia(phi: np.ndarray) -> np.ndarray:
    """J (nb, 4, 4) of the bodies' parameters φ (10·nb,)."""
    return np.einsum("bk,kij->bij", np.asarray(phi, float).reshape(-1, 10), pseudo_inertia_basis())


def parameter_scale(phi0: np.ndarray) -> np.ndarray:
    """s: each parameter's size in the document, at least a thousandth of the largest of its kind (mass, first or
    second moment) over the bodies, so that a massless body or a zero product of inertia still has a scale."""
    bodies = np.abs(np.asarray(phi0, float).reshape(-1, 10))
    scale = bodies.copy()
    for kind in KINDS:
        floor = 1e-3 * bodies[:, kind].max() if bodies[:, kind].max() > 0 else 1.0
        scale[:, kind] = np.maximum(bodies[:, kind], floor)
    return scale.ravel()


def physical_estimate(mech: Mechanism, result) -> dict:
    """The consistent estimate of an `Identification` (see the module docstring) as plain data."""
    try:
        import cvxpy as cp
    except ImportError:
        install = 'pip install "mbstudio[identify]"'
        raise ModelError("physical", "needs cvxpy, which is not installed", None, install) from None
    P = np.asarray(result.base.base_map(), float)
    phi0 = np.concatenate([np.asarray(mech.tree.geometry.inertia(b), float) for b in mech.model.bodies])
    estimated = [k for k, name in enumerate(result.names) if name not in result.held]
    z_hat = np.concatenate([result.values[estimated], [f["value"] for f in result.friction]])
    L = result.information_factor
    s = parameter_scale(phi0)
    nb, nf = len(mech.model.bodies), len(result.friction)
    delta, f = cp.Variable(len(phi0)), cp.Variable(nf) if nf else None  # cvxpy 1.6 refuses an empty Variable
    phi = phi0 + cp.multiply(s, delta)
    z = cp.hstack([P[estimated] @ phi, f]) if nf else P[estimated] @ phi
    J = [cp.Variable((4, 4), PSD=True) for _ in range(nb)]
    E = pseudo_inertia_basis()
    constraints = [J[i] == sum(phi[10 * i + k] * E[k] for k in range(10)) for i in range(nb)]
    constraints += [f >= 0] if nf else []
    objective = cp.sum_squares(L @ (z - z_hat)) + PRIOR_WEIGHT * cp.sum_squares(delta)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    solver = "CLARABEL" if "CLARABEL" in cp.installed_solvers() else "SCS"
    try:
        problem.solve(solver=solver)
    except cp.error.SolverError as exc:
        raise ModelError("physical", f"the consistent estimate failed: {exc}", None, "a richer log") from None
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise ModelError("physical", f"the consistent estimate found no solution ({problem.status})")
    return _report(
        mech, P, phi0 + s * delta.value, z_hat, L, estimated, result, solver, problem.status, f.value if nf else None
    )


def _report(mech, P, phi, z_hat, L, estimated, result, solver, status, friction) -> dict:
    base_values = P @ phi
    z = np.concatenate([base_values[estimated], friction if friction is not None else []])
    eigenvalues = np.linalg.eigvalsh(pseudo_inertia(phi))
    smallest = eigenvalues[:, 0] / np.maximum(eigenvalues[:, -1], np.finfo(float).tiny)
    names = mech.model.inertial_parameter_names()
    return {
        "solver": f"cvxpy {solver}",
        "status": status,
        "consistent": bool((smallest >= -PSD_TOLERANCE).all()),
        "distance_sigma": float(np.linalg.norm(L @ (z - z_hat))),
        "base_values": [float(v) for v in base_values],
        "friction": {row["name"]: float(v) for row, v in zip(result.friction, z[len(estimated) :], strict=True)},
        "bodies": [
            {"label": body.label, "mass": float(phi[10 * i]), "pseudo_inertia_smallest_relative": float(smallest[i])}
            for i, body in enumerate(mech.model.bodies)
        ],
        "standard_parameters": dict(zip(names, map(float, phi), strict=True)),
        "prior_weight": PRIOR_WEIGHT,
    }
