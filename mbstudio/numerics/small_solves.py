"""Small dense linear systems as straight-line compiled code: a Householder QR factorisation (Golub and Van Loan,
Matrix Computations, 2013, §5.2) traced once per size on scalar symbols, and the solve with its factors.

A closed loop's block of the constraint Jacobian is a few rows (six for a short-long-arm suspension); CasADi's
sparse QR node spends most of its time there walking index arrays. Traced as plain arithmetic, the same
factorisation has no index arithmetic, and its factors serve every solve with the same matrix (the velocity map
and the acceleration bias of a closed configuration share one). No pivoting: Householder QR is backward stable
without it, so the factors are those of the matrix as given.

    factor = householder_factor(6)            # A (6, 6) -> (V, β, R)
    x = householder_solve(6, 2)(*factor(a), b)  # A⁻¹ b for b (6, 2)
"""

from __future__ import annotations

import functools

import casadi


@functools.cache
def householder_factor(size: int) -> casadi.Function:
    """A (size, size) -> (V (size, size - 1), β (size - 1), R (size, size)): A = H₀ … H_{size-2} R with
    H_k = I − β_k v_k v_kᵀ, v_k column k of V (zero above row k), R upper triangular."""
    a = casadi.SX.sym("a", size, size)
    r = [[a[i, j] for j in range(size)] for i in range(size)]
    vectors = casadi.SX.zeros(size, max(size - 1, 0))
    betas = casadi.SX.zeros(max(size - 1, 0), 1)
    for k in range(size - 1):
        column = [r[i][k] for i in range(k, size)]
        norm = casadi.sqrt(sum(x * x for x in column))
        alpha = casadi.if_else(column[0] >= 0, -norm, norm)  # the sign that avoids cancellation in v₀
        v = [column[0] - alpha, *column[1:]]
        beta = 2 / sum(x * x for x in v)
        for j in range(k, size):
            s = beta * sum(v[i - k] * r[i][j] for i in range(k, size))
            for i in range(k, size):
                r[i][j] = r[i][j] - s * v[i - k]
        for i in range(k, size):
            vectors[i, k] = v[i - k]
        betas[k] = beta
    upper = casadi.SX.zeros(size, size)
    for i in range(size):
        for j in range(i, size):
            upper[i, j] = r[i][j]
    return casadi.Function(f"householder_factor_{size}", [a], [vectors, betas, upper], ["a"], ["v", "beta", "r"])


@functools.cache
def householder_solve(size: int, columns: int) -> casadi.Function:
    """(V, β, R of householder_factor(size), B (size, columns)) -> A⁻¹ B: Qᵀ B by the reflections, then back
    substitution on R."""
    vectors = casadi.SX.sym("v", size, max(size - 1, 0))
    betas = casadi.SX.sym("beta", max(size - 1, 0))
    upper = casadi.SX.sym("r", size, size)
    b = casadi.SX.sym("b", size, columns)
    x = [[b[i, j] for j in range(columns)] for i in range(size)]
    for k in range(size - 1):
        for j in range(columns):
            s = betas[k] * sum(vectors[i, k] * x[i][j] for i in range(k, size))
            for i in range(k, size):
                x[i][j] = x[i][j] - s * vectors[i, k]
    for j in range(columns):
        for i in reversed(range(size)):
            known = sum(upper[i, m] * x[m][j] for m in range(i + 1, size))
            x[i][j] = (x[i][j] - known) / upper[i, i]
    out = casadi.SX.zeros(size, columns)
    for i in range(size):
        for j in range(columns):
            out[i, j] = x[i][j]
    return casadi.Function(
        f"householder_solve_{size}_{columns}", [vectors, betas, upper, b], [out], ["v", "beta", "r", "b"], ["x"]
    )
