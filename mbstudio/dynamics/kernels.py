"""One state at a time on the compiled engine: RNEA, CRBA, ABA and the inertial-parameter regressor of a tree,
traced once per model revision from the batched algorithms (principle 1: written once) into native functions.

    rnea = kernel(model, "inverse_dynamics")
    tau = rnea(q, qd, qdd)            # (n,) arrays in, (n,) out; mass_matrix(q) gives (n, n)

The batched numpy algorithms stay the choice for many states at once (at 10 000 states they match Pinocchio);
these are for the loops of a controller, an optimiser or a user's script that call them one state at a time.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import casadi
import numpy as np

from ..kinematics.mechanism import Mechanism
from ..model import Model, dumps, loads
from ..numerics.compiled import Native, Traced, cached_functions, engine_key, symbols, to_sx
from .forward_dynamics import forward_dynamics
from .inverse_dynamics import inverse_dynamics
from .mass_matrix import mass_matrix
from .regressor import regressor

KERNELS: dict[str, tuple[Callable, tuple[str, ...]]] = {
    "inverse_dynamics": (inverse_dynamics, ("q", "qd", "qdd")),
    "mass_matrix": (mass_matrix, ("q",)),
    "forward_dynamics": (forward_dynamics, ("q", "qd", "tau")),
    "regressor": (regressor, ("q", "qd", "qdd")),
}


def kernel(model: Model, name: str) -> Callable[..., np.ndarray]:
    """The named kernel of this model revision, compiled once (cached by the model's canonical text): a
    function of (n,) float64 arrays returning a new array ((n, n) for the mass matrix, (n, 10 bodies) for the
    regressor); `kernel(model, name + "_into")` writes into the caller's arrays instead."""
    base = name.removesuffix("_into")
    if base not in KERNELS:
        raise KeyError(f"unknown kernel {name!r}; the kernels are: {', '.join(KERNELS)}")
    return _kernels(dumps(model), _GROUPS.get(base, "dynamics"), os.environ.get("MBSTUDIO_CACHE")).calls[name]


# kernels compiled together; the regressor, whose output grows as the square of the bodies, on its own
_GROUPS = {"regressor": "regressor"}


@functools.lru_cache(maxsize=16)
def _kernels(text: str, group: str, folder: str | None) -> Native:
    """The kernels of a group for the model text in one library, filed under the text and the code version: a
    process that finds it loads it without tracing. `folder`: the cache's, for the key only."""
    names = [name for name in KERNELS if _GROUPS.get(name, "dynamics") == group]
    return cached_functions(engine_key(text, group), "kernels", lambda: ([_traced(text, n) for n in names], {}))


def kernel_function(model: Model, name: str) -> casadi.Function:
    """The traced CasADi function of a kernel (for code generation and derivatives)."""
    return _traced(dumps(model), name)


@functools.lru_cache(maxsize=32)
def _traced(text: str, name: str) -> casadi.Function:
    algorithm, arguments = KERNELS[name]
    mech = Mechanism(loads(text), backend=Traced())
    inputs = [symbols(a, mech.n) for a in arguments]
    out = algorithm(mech, *(values[None, :] for _, values in inputs))[0]
    return casadi.Function(name, [sx for sx, _ in inputs], [to_sx(out)], list(arguments), [_OUTPUTS[name]])


_OUTPUTS = {"inverse_dynamics": "tau", "mass_matrix": "M", "forward_dynamics": "qdd", "regressor": "Y"}
