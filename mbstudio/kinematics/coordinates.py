"""Choice of independent coordinates and of the non-redundant constraint rows, from Φ_q."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..model.errors import ModelError


@dataclass(frozen=True)
class Partition:
    independent: tuple[int, ...]  # column indices of q
    dependent: tuple[int, ...]
    rows: tuple[int, ...]  # a maximal set of independent constraint rows
    rank: int
    redundant_rows: tuple[int, ...]


def numerical_rank(singular_values: np.ndarray, shape: tuple[int, int]) -> int:
    """Rank with the usual tolerance max(m, n)·eps·σ_max (reported with the result)."""
    if singular_values.size == 0:
        return 0
    tol = max(shape) * np.finfo(float).eps * singular_values[0] * 10
    return int((singular_values > tol).sum())


# How much more a coupling's follower weighs when the dependent coordinates are picked: it is taken first (the
# leader drives it, as a URDF mimic joint's leader is the actuated one), and never by a rounding-thin margin.
FOLLOWER_WEIGHT = 1e3


def partition(
    phi_q: np.ndarray, names: list[str], chosen: list[str] | None = None, followers: tuple[int, ...] = ()
) -> Partition:
    """Pick the constraint rows by pivoted QR of Φ_qᵀ and the dependent coordinates by pivoted QR of those
    rows (the best-conditioned columns, the couplings' `followers` first); `chosen` fixes the independent
    coordinates instead."""
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
    rank = numerical_rank(np.linalg.svd(phi_q, compute_uv=False), phi_q.shape)
    _, _, row_perm = scipy.linalg.qr(phi_q.T, pivoting=True, mode="economic")
    rows = tuple(sorted(row_perm[:rank]))
    redundant = tuple(sorted(row_perm[rank:]))
    sub = phi_q[list(rows)]
    if chosen is None:
        weights = np.ones(n)
        weights[list(followers)] = FOLLOWER_WEIGHT
        _, _, col_perm = scipy.linalg.qr(sub * weights, pivoting=True, mode="economic")
        dependent = tuple(sorted(col_perm[:rank]))
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
            or numerical_rank(np.linalg.svd(sub[:, list(dependent)], compute_uv=False), (rank, len(dependent))) < rank
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
