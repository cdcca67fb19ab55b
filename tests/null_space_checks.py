"""Checks of symbolic base-parameter directions against the observation matrix in variable precision, shared by
the tests of the symbolic route (test_symbolic_base.py, test_loop_motion.py)."""

from __future__ import annotations

import mpmath
import numpy as np
import sympy

from mbstudio.dynamics.regressor import regressor
from mbstudio.identification import vp_linalg
from mbstudio.identification.energy import random_states
from mbstudio.kinematics import Mechanism
from mbstudio.numerics import as_mpf


def S(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, real=True)


def vp_observation_matrix(model, digits: int, count: int, seed: int = 5, spread=0.3) -> np.ndarray:
    """W at `digits` digits (assembly, velocities, accelerations, regressor all at that precision) from random
    states (independent coordinates within ±`spread` of the document's, one value or one per coordinate): an
    independent route to the rank (the colleague's regressor, not the energies of the method)."""
    mech, vm = Mechanism(model), Mechanism(model, precision=digits)
    q, qd = random_states(mech, count, seed, np.asarray(spread))
    ind = list(mech.partition.independent)
    rng = np.random.default_rng(seed)
    with vm.backend.context():
        qv = vm.assemble(q[:, ind], guess=q)
        qdv = vm.velocities(qv, qd[:, ind])
        qddv = vm.accelerations(qv, qdv, rng.uniform(-1, 1, (len(q), len(ind))))
        W = regressor(vm, qv, qdv, qddv)
    return as_mpf(W.reshape(-1, W.shape[-1]))


def null_space_at(model, result, digits: int) -> np.ndarray:
    """The exact directions as an (10·nb, k) array of mpf at `digits` digits, the parameters read as decimals."""
    exact = {S(p.name): sympy.Rational(repr(p.value)) for p in model.parameters}
    with mpmath.workdps(digits):
        rows = result.null_space().tolist()
        return np.array(
            [
                [mpmath.mpf(sympy.N(e.subs(exact), digits + 10)) if e != 0 else mpmath.mpf(0) for e in row]
                for row in rows
            ],
            dtype=object,
        )


def assert_complete_at(model, result, digits: int, count: int, spread=0.3) -> np.ndarray:
    """docs/architecture.md, principle 3: the directions are null vectors of W at `digits` digits, and W's spectrum has
    an evident ridge right after σ_rank (deep, and what follows is rounding). Returns the singular values."""
    W = vp_observation_matrix(model, digits, count, spread=spread)
    with mpmath.workdps(digits):
        N = null_space_at(model, result, digits)
        residual = max(abs(x) for x in (W @ N).ravel()) / max(abs(x) for x in W.ravel())
        s = vp_linalg.svd(W, digits)[0]
    r = result.rank
    assert residual < mpmath.mpf(10) ** (8 - digits)
    assert s[r] < s[0] * mpmath.mpf(10) ** (5 - digits)  # σ_{r+1} is rounding, ...
    assert s[r - 1] > 1e5 * s[r]  # ... and σ_r stands 5 decades above it at least
    return s
