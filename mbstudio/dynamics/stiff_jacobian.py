"""The state equation with its exact Jacobian ∂ẏ/∂y compiled beside it, for BDF's Newton iterations.

CVODES-BDF forms ∂ẏ/∂y every few steps; differentiating the engine's graph on CasADi's virtual machine cost solo12
1.8 ms a Jacobian, which made the Jacobians most of a stiff run's time (a trot's foot contacts ask for one every
few steps). Here the state equation is expanded to scalar operations, differentiated once, and both are compiled
into one library filed in the engine cache: `rhs(t, y) -> (ẏ, P_nc)` and `jac_rhs`, which CasADi finds by its
name and uses for every derivative of `rhs` (0.12 ms for solo12, exact to rounding: tests/test_stiff_jacobian.py).
The generalized forces τ of the engine's own state equation are zero here (the integrators pass none).

Models whose state is larger than STATES, or whose graph cannot be expanded to scalars, keep the traced
Jacobian: the expanded Jacobian's C grows with the state times the right-hand side, and its compile time with it.
"""

from __future__ import annotations

import functools
import hashlib

import casadi

from ..numerics.compiled import cached_functions, engine_key, filed_functions

STATES = 64  # solo12's floating base and twelve joints: 37 states, a 172 000-operation Jacobian
OPERATIONS = 400_000  # beyond this the Jacobian's compile takes minutes on a loaded machine: the traced one serves
STEM = "stiff"


@functools.lru_cache(maxsize=8)  # as many as the engines kept (dynamics/engine.py): an edited model's go
def stiff_rhs(eng) -> casadi.Function | None:
    """(t, y) -> (ẏ, P_nc) of the engine at τ = 0, its Jacobian compiled with it; None where the traced Jacobian
    serves (a large state, a graph with operations that have no scalar form, or no compiled library)."""
    if eng.state_size > STATES:
        return None
    key = hashlib.sha256(f"{STEM}\n{engine_key(eng.text, eng.mech.partition)}".encode()).hexdigest()
    found = filed_functions(key, STEM)
    if found is None:
        functions = _traced(eng)
        if functions is None:
            return None
        found = cached_functions(key, STEM, lambda: (functions, {}))
    return found.functions["rhs"] if found.compiled else None


def _traced(eng) -> list[casadi.Function] | None:
    """rhs and jac_rhs on scalar symbols, in the signature CasADi asks of a Jacobian (the inputs, then the
    outputs as empty placeholders; one block per output and input)."""
    t, y = casadi.SX.sym("t"), casadi.SX.sym("y", eng.state_size)
    try:
        outputs = eng.work_rate(t, y, casadi.DM.zeros(eng.n))
    except (RuntimeError, NotImplementedError):  # a node without a scalar form (a sparse factorisation)
        return None
    rhs = casadi.Function("rhs", [t, y], outputs, ["t", "y"], ["y_dot", "power"], {"cse": True})
    pairs = zip(rhs.name_out(), outputs, strict=True)
    placeholders = [casadi.SX.sym(f"out_{name}", casadi.Sparsity(*o.shape)) for name, o in pairs]
    blocks = [casadi.jacobian(o, x) for o in outputs for x in (t, y)]
    jac = casadi.Function("jac_rhs", [t, y, *placeholders], blocks, {"cse": True})
    if jac.n_instructions() > OPERATIONS:
        return None
    return [rhs, jac]
