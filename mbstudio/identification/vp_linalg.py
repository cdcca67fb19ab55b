"""Variable-precision linear algebra for Gautier's method (Iriarte et al. 2017, section 3).

Every operation runs in binary floating point of the working precision, through MPFR (gmpy2, which mpmath
already relies on): numpy object arrays of `gmpy2.mpfr` let numpy's elementwise loops call MPFR directly, an
order of magnitude faster than mpmath's pure-Python `mpf` arithmetic, while the rounding stays that of a
`digits`-digit float. Values come in and go out as mpmath `mpf`, exactly.

The SVD of a tall W (m x p) is computed without forming WᵀW, so that singular values far below σ1 (the tail
after the ridge) keep their meaning: Householder QR with column pivoting reduces W to the p x p triangle R in
m·p² operations, then one-sided Jacobi (Hestenes) orthogonalises the columns of Rᵀ. Jacobi decides each
rotation from the two columns alone, so tiny columns are rotated with full relative accuracy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import gmpy2
import mpmath
import numpy as np

from ..numerics.backends import mpf_to_mpfr, mpfr_to_mpf, times_power_of_two

# Downdated norms (QR's pivot norms, Jacobi's column norms) are recomputed once they fall below this fraction
# of the value they were updated from: the subtraction has cancelled that many digits.
_NORM_RECOMPUTE_FRACTION = 1e-8
_MAX_SWEEPS = 60
# Jacobi sweeps work group by group (see _sweep). A group holds columns within _GROUP_SPAN of its largest
# norm, so that LAPACK's SVD of its float64 copy (accurate to 1e-16 of the largest) still gets the direction
# of the smallest to 1e-10; it is preconditioned only while its float64 copy is further than _DP_ORTHOGONAL
# from orthogonal, which that accuracy guarantees after one preconditioning.
_GROUP_SPAN = 1e6
_DP_ORTHOGONAL = 1e-8


def working_bits(digits: int) -> int:
    """Binary precision for `digits` significant decimal digits (mpmath's rule, so both agree)."""
    return mpmath.libmp.dps_to_prec(digits)


@contextlib.contextmanager
def precision(digits: int) -> Iterator[None]:
    """MPFR (and mpmath) arithmetic at `digits` significant digits inside the block."""
    with gmpy2.context(precision=working_bits(digits)), mpmath.workdps(digits):
        yield


def machine_epsilon(digits: int) -> mpmath.mpf:
    """2^(1 − bits), the spacing of floats at 1, exactly (a Python float underflows beyond about 300 digits)."""
    return mpmath.ldexp(mpmath.mpf(1), 1 - working_bits(digits))


def to_mpfr(a) -> np.ndarray:
    """Object array of mpfr rounded to the current precision, from mpf / mpfr / int / float / str entries."""
    a = np.asarray(a, dtype=object)
    return np.array([_mpfr(x) for x in a.ravel()], dtype=object).reshape(a.shape)


def _mpfr(x):
    try:
        return mpf_to_mpfr(x) if isinstance(x, mpmath.mpf) else gmpy2.mpfr(x)
    except ValueError:
        raise ValueError(f"the matrix holds {x}; only finite numbers can be used") from None


def to_mpf(a) -> np.ndarray:
    """Object array of mpmath mpf, exact copies of mpfr entries."""
    a = np.asarray(a, dtype=object)
    return np.array([mpfr_to_mpf(x) for x in a.ravel()], dtype=object).reshape(a.shape)


def _sqrt(a: np.ndarray) -> np.ndarray:
    return np.array([gmpy2.sqrt(x) for x in a], dtype=object)


def _column_norms2(a: np.ndarray) -> np.ndarray:
    return (a * a).sum(axis=0) if a.shape[0] else np.array([gmpy2.mpfr(0)] * a.shape[1], dtype=object)


def householder_qr(a: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """R (p x p, upper triangular) and the column order `perm` with A[:, perm] = Q R, for A (m x p) of mpfr.

    Column pivoting (largest remaining norm first) makes |R_kk| decrease, which shortens the Jacobi sweeps.
    When m < p, A is padded with zero rows: that changes neither singular values nor right vectors."""
    m, p = a.shape
    a = np.vstack([a, to_mpfr(np.zeros((p - m, p), dtype=int))]) if m < p else a.copy()
    perm = list(range(p))
    norms2 = _column_norms2(a)
    exact2 = norms2.copy()
    for k in range(p):
        j = k + max(range(p - k), key=lambda i: norms2[k + i])
        if j != k:
            a[:, [k, j]] = a[:, [j, k]]
            for v in (norms2, exact2):
                v[[k, j]] = v[[j, k]]
            perm[k], perm[j] = perm[j], perm[k]
        x = a[k:, k]
        norm = gmpy2.sqrt((x * x).sum())
        if norm == 0:  # column k is already zero below the diagonal
            continue
        alpha = -norm if x[0] >= 0 else norm  # opposite sign to x0 avoids cancellation in v0
        v = x.copy()
        v[0] = x[0] - alpha
        tau = 1 / (norm * (norm + abs(x[0])))  # 2 / vᵀv
        trailing = a[k:, k + 1 :]
        trailing -= np.multiply.outer(v, (v @ trailing) * tau)
        a[k, k] = alpha
        a[k + 1 :, k] = 0
        norms2[k + 1 :] -= trailing[0] * trailing[0]
        _refresh_lost_norms(a[k + 1 :, k + 1 :], norms2[k + 1 :], exact2[k + 1 :])
    return np.triu(a[:p]), perm


def _refresh_lost_norms(rest: np.ndarray, norms2: np.ndarray, exact2: np.ndarray) -> None:
    lost = [i for i in range(len(norms2)) if norms2[i] <= _NORM_RECOMPUTE_FRACTION * exact2[i]]
    if lost:
        fresh = _column_norms2(rest[:, lost])
        norms2[lost] = fresh
        exact2[lost] = fresh


def _round_robin(members: list[int]) -> list[tuple[list[int], list[int]]]:
    """Rounds of disjoint pairs covering every pair of `members` once (the circle method): the rotations of a
    round touch distinct columns, so a whole round is one vectorised update."""
    players = list(members) + [-1] * (len(members) % 2)
    rounds = []
    for _ in range(len(players) - 1):
        pairs = [(players[k], players[-1 - k]) for k in range(len(players) // 2)]
        pairs = [(i, j) for i, j in pairs if i >= 0 and j >= 0]
        rounds.append(([i for i, _ in pairs], [j for _, j in pairs]))
        players = [players[0], players[-1]] + players[1:-1]
    return rounds


def _bipartite_rounds(big: list[int], small: list[int]) -> list[tuple[list[int], list[int]]]:
    """Rounds of disjoint pairs covering every (big, small) pair once."""
    if len(big) < len(small):
        return [(i, j) for j, i in _bipartite_rounds(small, big)]
    n = len(big)
    return [([big[(k + s) % n] for s in range(len(small))], list(small)) for k in range(n)]


def jacobi_orthogonalise(x: np.ndarray, digits: int) -> tuple[np.ndarray, int]:
    """One-sided Jacobi: X J with mutually orthogonal columns (J orthogonal, not formed); and the sweeps used.

    The iteration stops after a sweep over all pairs of nonzero columns that rotates nothing (zero columns are
    orthogonal to everything). Sweep order and preconditioning only change the speed: see _sweep."""
    x = x.copy()
    # rows that are exactly zero stay zero under any rotation of columns: leave them out of the arithmetic
    # (the zero columns of W give as many zero rows of Rᵀ, 15 of the SLA's 70)
    rows = [i for i in range(x.shape[0]) if any(x[i])]
    work = x[rows]
    # converged pairs have |x_i·x_j| <= n·eps·|x_i||x_j| (n rows): a computed dot product of length n is only
    # that accurate, so a stricter test could keep rotating on rounding noise
    tol = len(rows) * times_power_of_two(gmpy2.mpfr(1), 1 - working_bits(digits))
    for sweep in range(1, _MAX_SWEEPS + 1):
        if not _sweep(work, _column_norms2(work), tol):  # norms exact at each sweep's start
            x[rows] = work
            return x, sweep
    raise ArithmeticError(f"one-sided Jacobi did not converge in {_MAX_SWEEPS} sweeps at {digits} digits")


def _sweep(x: np.ndarray, norms2: np.ndarray, tol: gmpy2.mpfr) -> bool:
    """One sweep, group by group in decreasing norm (_norm_groups); whether anything was rotated. `norms2`,
    the columns' squared norms, is kept up to date.

    For each group: first, if double precision still sees it far from orthogonal, rotate it by its right
    singular vectors from LAPACK (made orthogonal in VP) — an orthogonal change of columns like any Jacobi
    rotation, which starts the group's quadratic convergence from about 1e-16; then its own pairs; then its
    pairs with every smaller group. Rotating a small column against a large one takes out its component along
    it, so once a group is orthogonal the smaller columns are cleaned of it in one pass, and their own
    rotations, which come later, cannot bring it back (mixing clean columns leaves them clean). Interleaving
    the kinds of pairs instead keeps re-mixing uncleaned columns and costs several extra sweeps."""
    groups = _norm_groups(norms2)
    rotated = False
    for k, group in enumerate(groups):
        if _precondition(x, group):
            norms2[group] = _column_norms2(x[:, group])
            rotated = True
        for i, j in _round_robin(group) + [r for smaller in groups[k + 1 :] for r in _bipartite_rounds(group, smaller)]:
            rotated |= _rotate_pairs(x, norms2, i, j, tol)
    return rotated


def _precondition(x: np.ndarray, group: list[int]) -> bool:
    """Rotate the group's columns by their float64 right singular vectors unless already orthogonal to
    _DP_ORTHOGONAL in float64; whether it did."""
    if len(group) < 2:
        return False
    block = _scaled_float64(x[:, group])
    unit = block / np.linalg.norm(block, axis=0)  # no column underflows: see _GROUP_SPAN
    if np.max(np.abs(unit.T @ unit - np.eye(len(group)))) <= _DP_ORTHOGONAL:
        return False
    x[:, group] = x[:, group] @ orthonormalise(to_mpfr(np.linalg.svd(block)[2].T))
    return True


def _norm_groups(norms2: np.ndarray) -> list[list[int]]:
    """Nonzero columns by decreasing norm, cut into groups each within _GROUP_SPAN of its largest."""
    order = sorted((k for k in range(len(norms2)) if norms2[k]), key=lambda k: -norms2[k])
    groups: list[list[int]] = []
    for k in order:
        if not groups or norms2[k] * _GROUP_SPAN**2 < norms2[groups[-1][0]]:
            groups.append([])
        groups[-1].append(k)
    return groups


def _scaled_float64(a: np.ndarray) -> np.ndarray:
    """float64 copy of A scaled by a power of 2 so that its largest entry is about 1 (no overflow)."""
    top = max(abs(v) for v in a.ravel())
    shift = gmpy2.get_exp(top) if top else 0
    return np.array([[float(times_power_of_two(v, -shift)) for v in row] for row in a])


def _rotate_pairs(x: np.ndarray, norms2: np.ndarray, i: list[int], j: list[int], tol: gmpy2.mpfr) -> bool:
    """Jacobi rotations of the column pairs (i[k], j[k]) that are not yet orthogonal; whether there were any.

    The squared norms a, b of a pair are not recomputed: a rotation by t = tan θ makes them a − t c and b + t c
    exactly (c the pair's dot product, which is). Where that subtraction cancels (a small column cleaned of
    its component along a large one), the norm is recomputed: the update would lose the digits it cancels."""
    xi, xj = x[:, i], x[:, j]
    a, b, c = norms2[i], norms2[j], (xi * xj).sum(axis=0)
    active = [k for k in range(len(i)) if c[k] != 0 and abs(c[k]) > tol * gmpy2.sqrt(a[k] * b[k])]
    if not active:
        return False
    a, b, c = a[active], b[active], c[active]
    zeta = (b - a) / (2 * c)
    # t = tan θ, the smaller root of t² + 2ζt − 1 = 0, so that the rotation is at most π/4
    t = np.array([(1 if z >= 0 else -1) / (abs(z) + gmpy2.sqrt(1 + z * z)) for z in zeta], dtype=object)
    cs = 1 / _sqrt(1 + t * t)
    sn = cs * t
    ia, ja = [i[k] for k in active], [j[k] for k in active]
    xi, xj = x[:, ia], x[:, ja]
    x[:, ia] = cs * xi - sn * xj
    x[:, ja] = sn * xi + cs * xj
    for columns, old, new in ((ia, a, a - t * c), (ja, b, b + t * c)):
        lost = [k for k in range(len(columns)) if new[k] <= _NORM_RECOMPUTE_FRACTION * old[k]]
        if lost:
            new[lost] = _column_norms2(x[:, [columns[k] for k in lost]])
        norms2[columns] = new
    return True


def svd(w, digits: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Singular values (descending, mpf) and right singular vectors V (p x p, mpf columns) of W (m x p) at
    `digits` digits; and the number of Jacobi sweeps.

    W P = Q R; Jacobi on Rᵀ gives Rᵀ J = Y with orthogonal columns, so R = J Σ Uᵀ with Σ the column norms of
    Y and U its normalised columns: the right singular vectors of W are V = P U."""
    with precision(digits):
        r, perm = householder_qr(to_mpfr(w))
        y, sweeps = jacobi_orthogonalise(r.T.copy(), digits)
        sigma = _sqrt(_column_norms2(y))
        order = sorted(range(len(sigma)), key=lambda k: -sigma[k])
        u = _orthonormal_columns(y[:, order], sigma[order])
        v = np.empty_like(u)
        v[perm] = u
        return to_mpf(sigma[order]), to_mpf(v), sweeps


def orthonormalise(a: np.ndarray) -> np.ndarray:
    """Columns of A (full column rank, mpfr) made orthonormal by classical Gram-Schmidt applied twice
    ("twice is enough": the second pass restores orthogonality to the working precision)."""
    q = a.copy()
    for k in range(q.shape[1]):
        x = q[:, k]
        for _ in range(2):
            x = x - q[:, :k] @ (q[:, :k].T @ x)
        q[:, k] = x / gmpy2.sqrt((x * x).sum())
    return q


def _orthonormal_columns(y: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """The columns of Y normalised; exactly zero columns (zero rows of R, from zero columns of W) carry no
    direction, so they are replaced by unit vectors completing the orthonormal basis."""
    u = y.copy()
    nonzero = [k for k in range(len(norms)) if norms[k]]
    zero = [k for k in range(len(norms)) if not norms[k]]
    u[:, nonzero] = y[:, nonzero] / norms[nonzero]
    if zero:
        u[:, zero] = _completing_vectors(u[:, nonzero], len(zero))
    return u


def _completing_vectors(basis: np.ndarray, count: int) -> np.ndarray:
    """`count` orthonormal vectors orthogonal to the orthonormal columns of `basis`: first the coordinate axes
    on which every basis vector is exactly zero (exactly orthogonal to them all, no arithmetic: the zero
    columns of W give such axes), then projected axes for the rest."""
    n = basis.shape[0]
    free = [i for i in range(n) if not any(basis[i])][:count]
    chosen = to_mpfr(np.eye(n, dtype=int)[:, free])
    if len(free) == count:
        return chosen
    basis = np.column_stack([basis, chosen])
    return np.column_stack([chosen, _projected_axes(basis, count - len(free))])


def _projected_axes(basis: np.ndarray, count: int) -> np.ndarray:
    """`count` completing vectors, each the coordinate axis with the largest residual off the orthonormal
    basis and the vectors already chosen (1 minus its row's sum of squares: no projection of the identity
    needed to choose it), projected off them twice (Gram-Schmidt needs the second pass) and normalised."""
    n = basis.shape[0]
    residual2 = 1 - _column_norms2(basis.T)
    chosen = np.empty((n, count), dtype=object)
    for c in range(count):
        x = to_mpfr(np.eye(n, dtype=int)[:, max(range(n), key=lambda i: residual2[i])])
        done = np.column_stack([basis, chosen[:, :c]])
        for _ in range(2):
            x = x - done @ (done.T @ x)
        x = x / gmpy2.sqrt((x * x).sum())
        chosen[:, c] = x
        residual2 = residual2 - x * x
    return chosen


def solve(a, b, digits: int) -> np.ndarray:
    """X with A X = B (A n x n, B n x k), by Gaussian elimination with partial pivoting at `digits` digits."""
    with precision(digits):
        a, b = to_mpfr(a), to_mpfr(b)
        n = a.shape[0]
        for k in range(n):
            piv = k + max(range(n - k), key=lambda i: abs(a[k + i, k]))
            if a[piv, k] == 0:
                raise ZeroDivisionError("singular matrix")
            a[[k, piv]], b[[k, piv]] = a[[piv, k]], b[[piv, k]]
            f = a[k + 1 :, k] / a[k, k]
            a[k + 1 :, k:] -= np.multiply.outer(f, a[k, k:])
            b[k + 1 :] -= np.multiply.outer(f, b[k])
        x = np.empty_like(b)
        for k in range(n - 1, -1, -1):
            x[k] = (b[k] - a[k, k + 1 :] @ x[k + 1 :]) / a[k, k]
        return to_mpf(x)
