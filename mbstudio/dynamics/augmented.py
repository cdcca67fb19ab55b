"""The equations of motion in all the tree coordinates with damped constraint forces, compiled: what a run
integrates through a singular configuration of its loop equations (simulation/crossing.py).

    functions = augmented_functions(text)              # built once per model text, then taken from the cache
    z_dot = functions.calls["augmented_rate"](t, z, p)   # z = (q, q̇) (2n), p = (ω, ε), and γ (below)
    phi, phi_q, M = functions.calls["loop_terms"](q)     # every loop equation, its Jacobian, the mass matrix

The rate is M q̈ = Q − C − Φ_qᵀ λ with the loop equations held by Baumgarte's stabilisation (Baumgarte 1972),
Φ_q q̈ = −(γ + 2ω Φ_q q̇ + ω² Φ), and the multipliers those of the damped least-squares problem on the
mass-weighted Jacobian B = Φ_q L⁻ᵀ (M = L Lᵀ) (Nakamura & Hanafusa 1986):

    q̈ = L⁻ᵀ (w − Bᵀ (B Bᵀ + ε² I)⁻¹ (B w + target)),   w = L⁻¹ (Q − C),

each singular direction of B damped as σ / (σ² + ε²). B Bᵀ is never formed (it would square the conditioning,
1e9 where ε is 1e-3 of the smallest σ at the start): with the QR factorisation of the stacked [Bᵀ; ε I] = Q R,
Q's first n rows Q₁, the update is Bᵀ x = Q₁ (Q₁ᵀ w + R⁻ᵀ target), the solution of the damped least-squares
problem as Golub and Van Loan (Matrix Computations, 2013, §6.1) compute it. The Cholesky factor, the triangular
solves and the Householder reflections are traced as straight-line arithmetic on scalar symbols after the
dynamics they take (mass matrix by the composite-rigid-body algorithm, Q − C by one inverse-dynamics pass, the
loop equations and their acceleration bias), so one native call gives the whole rate: no decision inside it.

Where the loop equations are redundant at the document's start (more rows than their rank: IRSBot-2, planar loops),
the state is also returned onto the loops at the rate γ, q̇ = v − γ P Φ and v̇ = q̈ − γ P Φ_q v with P = M⁻¹ Φ_qᵀ
(Φ_q M⁻¹ Φ_qᵀ + ε² I)⁻¹, the same damped solve (Ascher, Chin, Petzold & Reich 1995): their crossings converge on a
tight reference only so, and the Delta 3R[2US]'s independent ones give up under it (docs/accuracy.md).
"""

from __future__ import annotations

import functools
import os

import casadi
import numpy as np

from ..kinematics.mechanism import Mechanism
from ..model import loads
from ..numerics.compiled import Native, Traced, cached_functions, engine_key, symbols, to_sx
from .forces import AppliedForces
from .inverse_dynamics import inverse_dynamics
from .mass_matrix import mass_matrix

_MERGED = {"cse": True}  # the kinematics the pieces trace from q is computed once


def augmented_functions(text: str) -> Native:
    """The compiled rate and loop terms of the model text, filed under the text and the code version (the
    partition plays no part: every loop equation is held)."""
    return _functions(text, os.environ.get("MBSTUDIO_CACHE"))


@functools.lru_cache(maxsize=4)
def _functions(text: str, folder: str | None) -> Native:
    """`folder`: the cache's, so that a process that changes folders (as a test does) finds them in the new one."""
    return cached_functions(engine_key(text, "augmented"), "augmented", lambda: (_trace(text), {}))


def _trace(text: str) -> list[casadi.Function]:
    mech = Mechanism(loads(text), backend=Traced())
    n = mech.n
    t = casadi.SX.sym("t")
    redundant = bool(mech.partition.redundant_rows)  # the loop equations' rows are not independent: returned too
    (z_sx, z), (p_sx, p) = symbols("z", 2 * n), symbols("p", 3 if redundant else 2)
    q, qd = z[None, :n], z[None, n:]
    mass = mass_matrix(mech, q)[0]
    free = AppliedForces(mech).generalized(np.array([t], dtype=object), q, qd)[0]
    free = free - inverse_dynamics(mech, q, qd, np.zeros((1, n), dtype=object))[0]
    motion = mech.motion(q, qd)
    jac = mech.constraints.jacobian(motion)[0]
    phi = mech.constraints.residual(motion)[0]
    gamma = mech.constraints.acceleration_bias(motion)[0]
    omega, damping = p[0], p[1]
    velocity = jac @ qd[0]  # Φ̇
    target = [g + 2 * omega * v + omega**2 * f for g, v, f in zip(gamma, velocity, phi, strict=True)]  # stabilised
    z_dot = np.concatenate([z[n:], damped_accelerations(mass, free, jac, target, damping)])
    if redundant:  # q̇ = v − γ P Φ, v̇ = q̈ − γ P Φ_q v: P the multipliers' damped inverse (module docstring)
        rest, pulled = np.zeros(n, dtype=object), ([-p[2] * x for x in held] for held in (phi, velocity))
        z_dot = z_dot - np.concatenate([damped_accelerations(mass, rest, jac, f, damping) for f in pulled])
    rate = casadi.Function("augmented_rate", [t, z_sx, p_sx], [to_sx(z_dot)], ["t", "z", "p"], ["z_dot"], _MERGED)
    q_sx, q_only = symbols("q", n)
    at = q_only[None, :]
    outputs = [to_sx(mech.residual(at)[0]), to_sx(mech.constraint_jacobian(at)[0]), to_sx(mass_matrix(mech, at)[0])]
    terms = casadi.Function("loop_terms", [q_sx], outputs, ["q"], ["phi", "phi_q", "M"], _MERGED)
    return [rate, terms]


def damped_accelerations(mass: np.ndarray, free: np.ndarray, jac: np.ndarray, target: np.ndarray, damping):
    """q̈ (n,) of M q̈ = free − Φ_qᵀ λ, λ the damped least-squares multipliers that hold Φ_q q̈ = −target, each
    singular direction of Φ_q L⁻ᵀ damped by `damping` (ε > 0): straight-line arithmetic on the entries (object
    arrays of symbols and floats; structural zeros stay floats and cost nothing). Solved in the coordinates'
    reverse order: a tree's are numbered from its root, so the Cholesky factor of the reversed M, a factor
    M = Lᵀ L of the tree's own, takes no fill-in (Featherstone 2005), nor does Bᵀ: its rows of the leaves' coordinates
    keep only their own loops' entries (the Delta 3R[2US]'s rate 29 359 → 21 259 instructions with the pivoting of
    `_householder`). The same solution in any order, to its rounding."""
    order = slice(None, None, -1)
    mass, free, jac = mass[order, order], np.asarray(free)[order], np.asarray(jac)[:, order]
    n, m = len(free), len(target)
    lower = _cholesky(mass)
    w = _forward(lower, list(free))
    stacked = [_forward(lower, list(jac[r])) for r in range(m)]  # columns of Bᵀ = L⁻¹ Φ_qᵀ
    columns = [column + [damping if i == r else 0.0 for i in range(m)] for r, column in enumerate(stacked)]
    reflections, upper = _householder(columns)
    c = _reflected(reflections, w + [0.0] * m)
    known: list = []
    for i in range(m):  # Rᵀ y = target by forward substitution
        known.append((target[i] - _dot([upper[k][i] for k in range(i)], known)) / upper[i][i])
    d = [c[i] + known[i] for i in range(m)] + [0.0] * n
    update = _reflected(reflections[::-1], d, back=True)[:n]  # Q [d; 0]: the reflections in reverse order
    return np.array(_backward(lower, [w[i] - update[i] for i in range(n)]), dtype=object)[order]


def _zero(x) -> bool:
    return x.is_zero() if isinstance(x, casadi.SX) else x == 0


def _dot(a: list, b: list):
    terms = [x * y for x, y in zip(a, b, strict=True) if not (_zero(x) or _zero(y))]
    return sum(terms[1:], terms[0]) if terms else 0.0


def _cholesky(a: np.ndarray) -> list[list]:
    """L (lower, as rows) with L Lᵀ = a."""
    n = len(a)
    lower = [[0.0] * n for _ in range(n)]
    for j in range(n):
        lower[j][j] = casadi.sqrt(a[j, j] - _dot(lower[j][:j], lower[j][:j]))
        for i in range(j + 1, n):
            entry = a[i, j] - _dot(lower[i][:j], lower[j][:j])
            lower[i][j] = 0.0 if _zero(entry) else entry / lower[j][j]
    return lower


def _forward(lower: list[list], b: list) -> list:
    """L⁻¹ b."""
    x: list = []
    for i, row in enumerate(lower):
        entry = b[i] - _dot(row[:i], x)
        x.append(0.0 if _zero(entry) else entry / row[i])
    return x


def _backward(lower: list[list], b: list) -> list:
    """L⁻ᵀ b."""
    n = len(lower)
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (b[i] - _dot([lower[k][i] for k in range(i + 1, n)], x[i + 1 :])) / lower[i][i]
    return x


def _householder(columns: list[list]) -> tuple[list, list[list]]:
    """The Householder QR of the tall matrix given by its columns (Golub and Van Loan 2013, §5.2) with its rows
    exchanged for sparsity: each reflection's pivot row is, of the rows left with a structural nonzero in its
    column, the one with the fewest in the columns left (the others' zeros then stay zeros); a permutation of the
    rows changes neither R nor the solution, only which entries fill in. The reflections (k, p, β, v), H_k = I − β v vᵀ
    acting on rows k.. after rows k and p are exchanged, and R (rows) upper triangular."""
    columns = [list(c) for c in columns]
    m = len(columns)
    reflections, upper = [], [[0.0] * m for _ in range(m)]
    for k in range(m):
        rows = [i for i in range(k, len(columns[k])) if not _zero(columns[k][i])] or [k]
        p = min(rows, key=lambda i: sum(not _zero(c[i]) for c in columns[k:]))
        columns = [_exchanged(c, k, p) for c in columns]
        x = columns[k][k:]
        norm = casadi.sqrt(_dot(x, x))
        alpha = casadi.if_else(x[0] >= 0, -norm, norm)  # the sign that avoids cancellation in v₀
        v = [x[0] - alpha, *x[1:]]
        beta = 2 / _dot(v, v)
        reflections.append((k, p, beta, v))
        upper[k][k] = alpha
        for j in range(k + 1, m):
            columns[j] = _reflect(k, beta, v, columns[j])
            upper[k][j] = columns[j][k]
    return reflections, upper


def _exchanged(x: list, k: int, p: int) -> list:
    if k == p:
        return x
    x = list(x)
    x[k], x[p] = x[p], x[k]
    return x


def _reflect(k: int, beta, v: list, x: list) -> list:
    s = beta * _dot(v, x[k:])
    return x[:k] + [xi if _zero(vi) else xi - s * vi for xi, vi in zip(x[k:], v, strict=True)]


def _reflected(reflections: list, x: list, back: bool = False) -> list:
    """Qᵀ x, the reflections in their order (each after its exchange); `back`: Q x, given them in reverse order
    (each exchange after its reflection)."""
    for k, p, beta, v in reflections:
        x = _exchanged(_reflect(k, beta, v, x), k, p) if back else _reflect(k, beta, v, _exchanged(x, k, p))
    return x
