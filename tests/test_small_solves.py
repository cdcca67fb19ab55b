"""The straight-line solves of numerics/small_solves.py against CasADi's own solvers and numpy."""

from __future__ import annotations

import casadi
import numpy as np
import pytest

from mbstudio.numerics.small_solves import ldl_solve, sparse_qr_factor, sparse_qr_solve


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


def _sparse_matrix(rng: np.random.Generator, n: int, density: float) -> np.ndarray:
    """A nonsymmetric (n, n) matrix with structural zeros, its diagonal kept away from zero."""
    a = rng.normal(size=(n, n)) * (rng.random((n, n)) < density)
    return a + np.diag(np.sign(rng.normal(size=n)) * (2 + rng.random(n)))


@pytest.mark.parametrize(("n", "density"), [(1, 1.0), (3, 1.0), (13, 0.4), (18, 0.35), (18, 0.12), (30, 0.2)])
def test_the_sparse_qr_solve_is_casadis_qr_solver(n, density):
    """A Delta robot's 18-row loop block is solved by the traced operations of CasADi's "qr" linear solver: its
    results are that solver's (the bits, on CasADi 3.7-3.8), with one factorisation for several solves."""
    rng = np.random.default_rng(100 + n)
    a = _sparse_matrix(rng, n, density)
    b = rng.normal(size=(n, 3))
    pattern = casadi.DM(a).sparsity()
    matrix, columns = casadi.MX.sym("a", pattern), casadi.MX.sym("b", n, 3)
    factors = sparse_qr_factor(pattern)(matrix)
    ours = casadi.Function("ours", [matrix, columns], [sparse_qr_solve(pattern, 3)(*factors, columns)])
    theirs = casadi.Function("theirs", [matrix, columns], [casadi.solve(matrix, columns, "qr")])
    given = casadi.DM(pattern, casadi.DM(a).nonzeros())
    x, y = (np.asarray(f(given, b)) for f in (ours, theirs))
    exact = np.linalg.solve(a, b)
    bound = 64 * np.finfo(float).eps * np.linalg.cond(a) * np.abs(exact).max()
    assert np.abs(x - y).max() <= bound
    assert np.abs(x - exact).max() <= bound
    one = casadi.Function("one", [matrix, columns], [sparse_qr_solve(pattern, 1)(*factors, columns[:, 1])])
    assert np.abs(np.asarray(one(given, b)).ravel() - x[:, 1]).max() <= bound  # the same factors, another solve
