"""Small dense linear systems as straight-line compiled code: a Householder QR factorisation (Golub and Van Loan,
Matrix Computations, 2013, §5.2) traced once per size on scalar symbols, and the solve with its factors.

A closed loop's block of the constraint Jacobian is a few rows (six for a short-long-arm suspension); CasADi's
sparse QR node spends most of its time there walking index arrays. Traced as plain arithmetic, the same
factorisation has no index arithmetic, and its factors serve every solve with the same matrix (the velocity map
and the acceleration bias of a closed configuration share one). No pivoting: Householder QR is backward stable
without it, so the factors are those of the matrix as given.

    factor = householder_factor(6)            # A (6, 6) -> (V, β, R)
    x = householder_solve(6, 2)(*factor(a), b)  # A⁻¹ b for b (6, 2)

A larger block (a Delta robot's 18 rows) is sparse, and a dense factorisation does more work than CasADi's sparse
one: there `sparse_qr_factor` and `sparse_qr_solve` trace the operations of CasADi's "qr" linear solver itself (its
fill-reducing column order, casadi_qr and casadi_qr_solve) on scalar symbols, so that its results are that solver's
to the bit, without the index arithmetic, and one factorisation serves every solve with the same matrix.
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


def sparse_qr_factor(pattern: casadi.Sparsity) -> casadi.Function:
    """A with `pattern` (square) -> (V, R, β): the nonzeros of CasADi's sparse QR factors of A (Sparsity.qr_sparse's
    patterns and orders), made by the operations of its runtime's casadi_qr in their order."""
    return _sparse_qr_factor(_key(pattern))


def sparse_qr_solve(pattern: casadi.Sparsity, columns: int) -> casadi.Function:
    """(V, R, β of sparse_qr_factor(pattern), B (n, columns)) -> A⁻¹ B, by the operations of casadi_qr_solve."""
    return _sparse_qr_solve(_key(pattern), columns)


def _key(pattern: casadi.Sparsity) -> tuple:
    return pattern.size1(), pattern.size2(), tuple(pattern.colind()), tuple(pattern.row())


def _qr_patterns(key: tuple) -> tuple:
    """(the pattern, V's, R's, the row order, the column order) of CasADi's sparse QR of the pattern `key`."""
    pattern = casadi.Sparsity(*key)
    return (pattern, *pattern.qr_sparse(True))


def _house(v: list) -> tuple:
    """casadi_house: the Householder vector in place of v (its first entry replaced), its β and the norm."""
    v0, zero = v[0], casadi.SX(0)
    sigma = sum((v[i] * v[i] for i in range(1, len(v))), zero)
    s = casadi.sqrt(v0 * v0 + sigma)
    flat, nonpositive = sigma == 0, v0 <= 0
    v[0] = casadi.if_else(flat, 1, casadi.if_else(nonpositive, v0 - s, -sigma / (v0 + s)))
    beta = casadi.if_else(flat, 2 * nonpositive, -1 / (s * v[0]))
    return beta, s


def _reflect(x: list, v, v_rows: list, entries: range, beta) -> None:
    """x ← (I − β v vᵀ) x in place, v's nonzeros `entries` at rows v_rows[entries]: casadi_qr's update of a column
    and casadi_qr_mv's of a right-hand side, the same operations in the same order."""
    alpha = sum((v[k] * x[v_rows[k]] for k in entries), casadi.SX(0)) * beta
    for k in entries:
        x[v_rows[k]] = x[v_rows[k]] - alpha * v[k]


@functools.lru_cache(maxsize=32)
def _sparse_qr_factor(key: tuple) -> casadi.Function:
    pattern, sp_v, sp_r, prinv, pc = _qr_patterns(key)
    a = casadi.SX.sym("a", pattern)
    entries, zero = a.nonzeros(), casadi.SX(0)
    starts, rows = pattern.colind(), pattern.row()
    v_starts, v_rows, r_starts, r_rows = sp_v.colind(), sp_v.row(), sp_r.colind(), sp_r.row()
    x, v, r, beta = [zero] * sp_v.size1(), [zero] * sp_v.nnz(), [], [zero] * pattern.size2()
    for c in range(pattern.size2()):
        for k in range(starts[pc[c]], starts[pc[c] + 1]):
            x[prinv[rows[k]]] = entries[k]
        for k in range(r_starts[c], r_starts[c + 1]):
            row = r_rows[k]
            if row >= c:
                break
            _reflect(x, v, v_rows, range(v_starts[row], v_starts[row + 1]), beta[row])
            r.append(x[row])
            x[row] = zero
        column = [x[v_rows[k]] for k in range(v_starts[c], v_starts[c + 1])]
        for k in range(v_starts[c], v_starts[c + 1]):
            x[v_rows[k]] = zero
        beta[c], norm = _house(column)
        v[v_starts[c] : v_starts[c + 1]] = column
        r.append(norm)
    out = [casadi.vertcat(*v), casadi.vertcat(*r), casadi.vertcat(*beta)]
    name = f"sparse_qr_factor_{pattern.size1()}_{pattern.nnz()}"  # for reading only: calls are by the object
    return casadi.Function(name, [a], out, ["a"], ["v", "r", "beta"])


@functools.lru_cache(maxsize=64)
def _sparse_qr_solve(key: tuple, columns: int) -> casadi.Function:
    pattern, sp_v, sp_r, prinv, pc = _qr_patterns(key)
    n = pattern.size2()
    v, r = casadi.SX.sym("v", sp_v.nnz()), casadi.SX.sym("r", sp_r.nnz())
    beta, b = casadi.SX.sym("beta", n), casadi.SX.sym("b", n, columns)
    v_starts, v_rows, r_starts, r_rows = sp_v.colind(), sp_v.row(), sp_r.colind(), sp_r.row()
    zero, solved = casadi.SX(0), []
    for j in range(columns):
        w = [zero] * sp_v.size1()
        for c in range(n):
            w[prinv[c]] = b[c, j]
        for c in range(n):  # Qᵀ b, the reflections in order
            _reflect(w, v, v_rows, range(v_starts[c], v_starts[c + 1]), beta[c])
        for c in reversed(range(n)):  # R⁻¹, column by column from the last, its diagonal first
            for k in reversed(range(r_starts[c], r_starts[c + 1])):
                row = r_rows[k]
                w[row] = w[row] / r[k] if row == c else w[row] - r[k] * w[c]
        x = [zero] * n
        for c in range(n):
            x[pc[c]] = w[c]
        solved.append(casadi.vertcat(*x))
    name = f"sparse_qr_solve_{n}_{pattern.nnz()}_{columns}"
    return casadi.Function(name, [v, r, beta, b], [casadi.horzcat(*solved)], ["v", "r", "beta", "b"], ["x"])


def ldl_solve(a: casadi.SX, b: casadi.SX) -> casadi.SX:
    """A⁻¹ b (a column) for a symmetric positive definite A given with both triangles, by the LDLᵀ factorisation
    CasADi's "ldl" linear solver makes of it: its fill-reducing order and the operations of its runtime's
    casadi_ldl and casadi_ldl_solve in their order, traced on scalar symbols, so that the result is that
    solver's to the bit without its index arithmetic (tests/test_small_solves.py)."""
    pattern = a.sparsity()
    factor, order = pattern.ldl(True)
    n, starts, rows = pattern.size2(), pattern.colind(), pattern.row()
    column_starts, factor_rows = factor.colind(), factor.row()
    entries, zero = a.nonzeros(), casadi.SX(0)
    lower, diagonal = [zero] * factor.nnz(), [zero] * n
    for c in range(n):  # A permuted into the factor's pattern
        given = {rows[k]: entries[k] for k in range(starts[order[c]], starts[order[c] + 1])}
        for k in range(column_starts[c], column_starts[c + 1]):
            lower[k] = given.get(order[factor_rows[k]], zero)
        diagonal[c] = given.get(order[c], zero)
    work = [zero] * n
    for c in range(n):  # the up-looking factorisation, column by column
        for k in range(column_starts[c], column_starts[c + 1]):
            r = factor_rows[k]
            for k2 in range(column_starts[r], column_starts[r + 1]):
                lower[k] = lower[k] - lower[k2] * work[factor_rows[k2]]
            work[r] = lower[k]
            lower[k] = lower[k] / diagonal[r]
            diagonal[c] = diagonal[c] - work[r] * lower[k]
        for k in range(column_starts[c], column_starts[c + 1]):
            work[factor_rows[k]] = zero
    x = b.nonzeros() if b.is_dense() else casadi.densify(b).nonzeros()
    work = [x[order[i]] for i in range(n)]
    for c in range(n):  # L⁻¹, D⁻¹, then L⁻ᵀ
        for k in range(column_starts[c], column_starts[c + 1]):
            work[c] = work[c] - lower[k] * work[factor_rows[k]]
    work = [w / d for w, d in zip(work, diagonal, strict=True)]
    for c in reversed(range(n)):
        for k in reversed(range(column_starts[c], column_starts[c + 1])):
            work[factor_rows[k]] = work[factor_rows[k]] - lower[k] * work[c]
    solved = [zero] * n
    for i in range(n):
        solved[order[i]] = work[i]
    return casadi.vertcat(*solved)
