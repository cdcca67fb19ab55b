"""The straight-line solves of numerics/small_solves.py against CasADi's own solvers and numpy."""

from __future__ import annotations

import casadi
import numpy as np
import pytest

from mbstudio.numerics.small_solves import ldl_solve


def _pattern_matrix(rng: np.random.Generator, n: int, density: float) -> np.ndarray:
    """A symmetric positive definite (n, n) matrix with structural zeros off the diagonal."""
    b = rng.normal(size=(n, n)) * (rng.random((n, n)) < density)
    a = b @ b.T + n * np.eye(n)
    return np.where(np.abs(a) > 0, a, 0.0)


@pytest.mark.parametrize(("n", "density"), [(1, 1.0), (4, 1.0), (11, 0.3), (11, 0.1), (20, 0.2)])
def test_ldl_solve_is_casadis_ldl_solver(n, density):
    rng = np.random.default_rng(n)
    a = _pattern_matrix(rng, n, density)
    b = rng.normal(size=n)
    pattern = casadi.DM(a).sparsity()
    symbol, rhs = casadi.SX.sym("a", pattern), casadi.SX.sym("b", n)
    ours = casadi.Function("ours", [symbol, rhs], [ldl_solve(symbol, rhs)])
    matrix, column = casadi.MX.sym("a", pattern), casadi.MX.sym("b", n)
    theirs = casadi.Function("theirs", [matrix, column], [casadi.solve(matrix, column, "ldl")])
    given = casadi.DM(pattern, casadi.DM(a).nonzeros())
    x, y = (np.asarray(f(given, b)).ravel() for f in (ours, theirs))
    exact = np.linalg.solve(a, b)
    # the same factorisation in the same order: equal to rounding (the bits, on CasADi 3.7), bounded here by the
    # conditioning so that another version's ordering of the same operations still passes
    bound = 64 * np.finfo(float).eps * np.linalg.cond(a) * np.abs(exact).max()
    assert np.abs(x - y).max() <= bound
    assert np.abs(x - exact).max() <= bound
