"""Base inertial parameters by Gautier's numerical method in double precision (seed 000, section 2).

W = U S Vᵀ; the numerical rank r counts the singular values above a tolerance; V2 (the last p − r columns of
V) spans the null space of W. Splitting φ = (φ1, φ2) with V2 = [V21; V22] and V22 invertible, the base
parameters are φ_b = φ1 + β φ2 with β = −V21 V22⁻¹, and W φ = W_b φ_b with W_b the columns of φ1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg


@dataclass
class BaseParameters:
    names: list[str]  # all inertial parameter names (columns of W)
    singular_values: np.ndarray
    tolerance: float  # singular values above it count towards the rank
    rank: int
    kept: list[int]  # indices of φ1, in column order
    eliminated: list[int]  # indices of φ2
    beta: np.ndarray  # (rank, p − rank)

    @property
    def ridge_depth(self) -> float:
        """log10(σ_r / σ_{r+1}): the depth of the gap at the rank (inf when the next value is exactly 0)."""
        s = self.singular_values
        if self.rank == 0 or self.rank >= len(s):
            return float("inf")
        return float(np.log10(s[self.rank - 1] / s[self.rank])) if s[self.rank] > 0 else float("inf")

    def matrix(self) -> np.ndarray:
        """B (rank, p) with φ_b = B φ."""
        B = np.zeros((self.rank, len(self.names)))
        B[:, self.kept] = np.eye(self.rank)
        B[:, self.eliminated] = self.beta
        return B

    def expressions(self, threshold: float = 0.0, digits: int = 12) -> list[str]:
        """Each base parameter as text, e.g. 'Izz1 + 1*m2', leaving out coefficients below `threshold`; the
        coefficients are printed to `digits` significant digits (double precision cannot back more)."""
        out = []
        for i, k in enumerate(self.kept):
            terms = [self.names[k]] + [f"{c:+.{digits}g}*{self.names[e]}" for c, e in zip(self.beta[i], self.eliminated,
                                                                                  strict=True) if abs(c) > threshold]
            out.append(" ".join(terms).replace(" +", " + ").replace(" -", " - "))
        return out


def gautier(W: np.ndarray, names: Sequence[str], tolerance: float | None = None,
            eliminate: Sequence[str] | None = None) -> BaseParameters:
    """Base parameters of the observation matrix W (M, p) in double precision.

    `tolerance`: rank threshold on the singular values, default max(M, p)·eps·σ_max (numpy's matrix_rank).
    `eliminate`: names of the p − r parameters to eliminate (φ2); by default φ1 is the first r columns chosen
    by QR with column pivoting, i.e. a well-conditioned set of kept columns W_b."""
    W = np.asarray(W, dtype=float)
    M, p = W.shape
    _, s, Vt = np.linalg.svd(W, full_matrices=p > M)  # V must be square
    tol = max(M, p) * np.finfo(float).eps * s[0] if tolerance is None else tolerance
    r = int((s > tol).sum())
    if eliminate is None:
        pivots = scipy.linalg.qr(W, mode="r", pivoting=True)[1]
        kept = sorted(int(i) for i in pivots[:r])
    else:
        if len(eliminate) != p - r:
            raise ValueError(f"the rank is {r}, so exactly {p - r} of the {p} parameters must be eliminated; "
                             f"{len(eliminate)} were given")
        unknown = set(eliminate) - set(names)
        if unknown:
            raise ValueError(f"{sorted(unknown)} are not inertial parameter names")
        kept = [i for i, n in enumerate(names) if n not in set(eliminate)]
    eliminated = [i for i in range(p) if i not in kept]
    V2 = Vt[r:].T
    V21, V22 = V2[kept], V2[eliminated]
    if np.linalg.matrix_rank(V22) < p - r:
        raise ValueError(f"the parameters {[names[i] for i in eliminated]} cannot all be eliminated: the kept "
                         "columns of W are linearly dependent")
    beta = -np.linalg.solve(V22.T, V21.T).T
    return BaseParameters(list(names), s, float(tol), r, kept, eliminated, beta)
