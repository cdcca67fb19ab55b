"""Choice of independent coordinates and of the non-redundant constraint rows, from Φ_q."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.errors import ModelError


@dataclass(frozen=True)
class Partition:
    independent: tuple[int, ...]  # column indices of q
    dependent: tuple[int, ...]
    rows: tuple[int, ...]  # a maximal set of independent constraint rows
    rank: int
    redundant_rows: tuple[int, ...]


def numerical_rank(singular_values: np.ndarray, shape: tuple[int, int], floor: float = 0.0) -> int:
    """The number of singular values above √f · σ_max, where f = max(floor, 10 max(m, n) ε) is the relative
    accuracy of the matrix: what rounding leaves, or `floor` when the matrix was evaluated where an equation
    holds only to a residual (a constraint Jacobian at a configuration closed to residual r: floor = r / length
    scale), whose exact-zero singular values then come out near f σ_max. The threshold sits in the middle of the
    band (on a log scale) between that and σ_max, so that moving the entries by 1e-13 changes the rank only at a
    configuration within about √f of a singular one, never by rounding alone."""
    if singular_values.size == 0:
        return 0
    accuracy = max(floor, 10 * max(shape) * np.finfo(float).eps)
    return int((singular_values > np.sqrt(accuracy) * singular_values[0]).sum())


TIE = 1e-9  # relative: pivots whose norms differ by less are a tie, broken towards the lower index
# How much more a coupling's follower weighs when the dependent coordinates are picked: it is taken first (the
# leader drives it, as a URDF mimic joint's leader is the actuated one), and never by a rounding-thin margin.
FOLLOWER_WEIGHT = 1e3


def pivots(a: np.ndarray, count: int) -> list[int]:
    """The `count` columns of a that pivoted QR takes (each time the column of largest norm once the columns
    taken are projected out), in increasing order. Columns of equal norm are common (a Delta's three limbs, a
    parallelogram's two links) and pivoted QR breaks such ties by rounding, so that 1e-13 decides which rows
    are redundant; here norms within TIE of the largest are a tie, taken by the lowest index."""
    residual = np.array(a, dtype=float)
    taken: list[int] = []
    for _ in range(count):
        norms = np.linalg.norm(residual, axis=0)
        norms[taken] = -1.0
        best = int(np.nonzero(norms >= (1 - TIE) * norms.max())[0][0])
        taken.append(best)
        unit = residual[:, best] / norms[best]
        residual -= np.outer(unit, unit @ residual)
    return sorted(taken)


def partition(
    phi_q: np.ndarray,
    names: list[str],
    chosen: list[str] | None = None,
    rank: int | None = None,
    floor: float = 0.0,
    followers: tuple[int, ...] = (),
) -> Partition:
    """Pick the constraint rows by pivoted QR of Φ_qᵀ and the dependent coordinates by pivoted QR of those
    rows (the best-conditioned columns, the couplings' `followers` first); `chosen` fixes the independent
    coordinates instead. The rank is `rank` when the caller knows it (a running simulation: the mechanism's,
    decided at its start), else numerical_rank's with `floor` the relative accuracy of Φ_q (the closure residual
    over the length scale)."""
    m, n = phi_q.shape
    if m == 0:
        if chosen is not None and sorted(chosen) != sorted(names):  # a tree: every coordinate is independent
            raise ModelError(
                "independent_coordinates",
                f"lists {len(chosen)} of the {n} coordinates of a mechanism without loops, where every coordinate "
                "is independent",
                list(chosen),
                f'"auto", or all of {", ".join(names)}',
            )
        return Partition(tuple(range(n)), (), (), 0, ())
    singular = np.linalg.svd(phi_q, compute_uv=False)
    rank = numerical_rank(singular, phi_q.shape, floor) if rank is None else rank
    rows = tuple(pivots(phi_q.T, rank))
    redundant = tuple(r for r in range(m) if r not in rows)
    sub = phi_q[list(rows)]
    if chosen is None:
        weights = np.ones(n)
        weights[list(followers)] = FOLLOWER_WEIGHT
        dependent = tuple(pivots(sub * weights, rank))
    else:
        unknown = [c for c in chosen if c not in names]
        if unknown:
            raise ModelError(
                "independent_coordinates",
                "names a coordinate that is not a tree coordinate",
                unknown[0],
                "one of " + ", ".join(names) + " (coordinates of cut joints are derived)",
            )
        dependent = tuple(i for i, name in enumerate(names) if name not in chosen)
        if (
            len(dependent) != rank
            or numerical_rank(np.linalg.svd(sub[:, list(dependent)], compute_uv=False), (rank, rank), floor) < rank
        ):
            raise ModelError(
                "independent_coordinates",
                f"these {len(chosen)} coordinates cannot drive the "
                f"mechanism: it has {n - rank} degree(s) of freedom and the remaining coordinates "
                "must be solvable from the loop equations",
                list(chosen),
                f"{n - rank} coordinates whose removal leaves a non-singular loop Jacobian",
            )
    independent = tuple(i for i in range(n) if i not in dependent)
    return Partition(independent, dependent, rows, rank, redundant)


def improved(phi_q: np.ndarray, start: Partition, gain: float = 1.01) -> Partition:
    """A partition at least as well conditioned as `start`, by local search: swap a dependent coordinate for an
    independent one, or a chosen row for a left-out one, while the smallest singular value of the square block
    Φ_q[rows, dependent] grows by the factor `gain` (pivoted QR picks the rows and the columns one after the
    other, and can leave that block far worse conditioned than the matrix it came from). Swaps within TIE of
    the best are a tie, taken in a fixed order."""
    n, m = phi_q.shape[1], phi_q.shape[0]
    dep, rows = set(start.dependent), set(start.rows)
    best = _smallest(phi_q, [(rows, dep)])[0]
    while True:
        swaps = [(rows, dep - {j} | {i}) for j in sorted(dep) for i in range(n) if i not in dep]
        swaps += [(rows - {r} | {s}, dep) for r in sorted(rows) for s in range(m) if s not in rows]
        values = _smallest(phi_q, swaps)
        if not len(values) or values.max() <= gain * best:
            break
        k = int(np.nonzero(values >= (1 - TIE) * values.max())[0][0])
        best, (rows, dep) = values[k], swaps[k]
    rows_t, dep_t = tuple(sorted(rows)), tuple(sorted(dep))
    independent = tuple(i for i in range(n) if i not in dep)
    return Partition(independent, dep_t, rows_t, start.rank, tuple(r for r in range(m) if r not in rows))


def _smallest(phi_q: np.ndarray, choices: list[tuple[set[int], set[int]]]) -> np.ndarray:
    """σ_min of the square blocks Φ_q[rows, dep] of the choices, in one batched SVD (each the value of its own)."""
    if not choices:
        return np.empty(0)
    rows, dep = (np.array([sorted(choice[k]) for choice in choices], dtype=np.intp) for k in (0, 1))
    return np.linalg.svd(phi_q[rows[:, :, None], dep[:, None, :]], compute_uv=False)[:, -1]
