"""Equilibria and linear models (a first part of issue 10): about an operating point of any mechanism, open or
closed, the state-space model in its independent coordinates from the compiled engine's exact derivatives.

    point = equilibrium(model)                     # q̈ = 0 at rest under gravity, springs and constant forces
    lin = linearize(model, point)                  # A, B, C, D; inputs: forces on the independent coordinates
    lin.eigenvalues, lin.frequencies_hz, lin.damping_ratios

x = (δq_ind, δq̇_ind), u = generalized forces on the chosen coordinates, y = δq_ind: ẋ = A x + B u, y = C x + D u.
The loop closure is inside the derivatives: ∂q̈_ind/∂q_ind is taken along the closed configurations (through R).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Model
from ..model.errors import ModelError
from .engine import engine

EQUILIBRIUM_STEPS = 50


@dataclass
class LinearModel:
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: list[str]
    inputs: list[str]
    outputs: list[str]
    q: np.ndarray  # the operating point's coordinates (n,)

    @property
    def eigenvalues(self) -> np.ndarray:
        return np.linalg.eigvals(self.A)

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Natural frequencies |λ| / 2π of the eigenvalues, in the order of `eigenvalues`."""
        return np.abs(self.eigenvalues) / (2 * np.pi)

    @property
    def damping_ratios(self) -> np.ndarray:
        """−Re λ / |λ| (1 for a real negative eigenvalue, 0 for an undamped oscillation, < 0 unstable)."""
        values = self.eigenvalues
        size = np.abs(values)
        return np.divide(-values.real, size, out=np.ones_like(size), where=size > 0)


def equilibrium(model: Model, q: np.ndarray | None = None, tol: float = 1e-10) -> np.ndarray:
    """The closed configuration (n,) near `q` (default: the document's) where q̈ = 0 at rest, by Newton on the
    independent coordinates with the exact ∂q̈/∂q_ind; a ModelError when there is none nearby."""
    eng = engine(model)
    ind = eng.independent
    q = eng.close_loops(eng.mech.assemble(None)[0] if q is None else np.asarray(q, float))[0]
    rest = np.zeros(len(ind))
    for _ in range(EQUILIBRIUM_STEPS):
        qdd = eng.accelerations(0.0, q, rest)
        if np.abs(qdd).max() <= tol:
            return q
        jac = eng.jacobians(0.0, q, rest)["qdd_q_ind"]
        try:
            step = np.linalg.solve(jac, -qdd)
        except np.linalg.LinAlgError:
            break  # no stiffness in some direction (a free coordinate): no isolated equilibrium
        moved = q.copy()
        moved[ind] += step
        q = eng.close_loops(moved)[0]
    raise ModelError(
        "equilibrium",
        f"none found near the starting configuration (largest acceleration left {np.abs(qdd).max():.3g})",
        None,
        "a spring, gravity or constant force holding every independent coordinate (a free coordinate has no "
        "equilibrium), or a start closer to one",
    )


def linearize(model: Model, q: np.ndarray | None = None, inputs: list[str] | None = None) -> LinearModel:
    """The linear model about the closed configuration q at rest (default: the document's configuration).
    `inputs`: coordinates whose generalized force is an input (default: the independent coordinates)."""
    eng = engine(model)
    mech = eng.mech
    q = eng.close_loops(mech.assemble(None)[0] if q is None else np.asarray(q, float))[0]
    names = mech.independent
    inputs = list(names) if inputs is None else list(inputs)
    unknown = [c for c in inputs if c not in mech.coordinates]
    if unknown:
        raise ModelError("inputs", "names no coordinate of the tree", unknown[0], ", ".join(mech.coordinates))
    k = len(names)
    J = eng.jacobians(0.0, q, np.zeros(k))
    A = np.block([[np.zeros((k, k)), np.eye(k)], [J["qdd_q_ind"], J["qdd_qd_ind"]]])
    B = np.vstack([np.zeros((k, len(inputs))), J["qdd_tau"][:, [mech.coordinates.index(c) for c in inputs]]])
    C = np.hstack([np.eye(k), np.zeros((k, k))])
    states = [*names, *(f"d_{c}" for c in names)]
    return LinearModel(A, B, C, np.zeros((k, len(inputs))), states, inputs, list(names), q)
