"""Equations of motion of the spanning tree, written once over the back-ends (float64 batched, mpmath, sympy).

All functions take a `Mechanism` and tree coordinates q, q̇, q̈ or τ as (N, n) arrays (or (n,) for one
sample) in the order of `mech.coordinates`; a closed loop's tree quantities are projected with R by the caller.
Also here: closed-loop projection (closed_loop.py), applied forces, the compiled engine (engine.py, kernels.py),
parallel machines (pkm/) and block models (titop/). What uses them to move in time is in mbstudio/simulation;
linear analysis about operating points in mbstudio/linear.
"""

from .forward_dynamics import forward_dynamics, forward_dynamics_dense
from .inverse_dynamics import bias_forces, coriolis_forces, gravity_forces, inverse_dynamics
from .mass_matrix import mass_matrix
from .udu import (
    Modules,
    ModuleUDU,
    find_modules,
    inverse_mass_matrix,
    module_forward_dynamics,
    udu,
    unit_upper_inverse,
)

__all__ = [
    "ModuleUDU",
    "Modules",
    "bias_forces",
    "coriolis_forces",
    "find_modules",
    "forward_dynamics",
    "forward_dynamics_dense",
    "gravity_forces",
    "inverse_dynamics",
    "inverse_mass_matrix",
    "mass_matrix",
    "module_forward_dynamics",
    "udu",
    "unit_upper_inverse",
]
