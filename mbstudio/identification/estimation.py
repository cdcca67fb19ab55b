"""Estimation of the base inertial parameters from measured or simulated generalized forces
(Iriarte et al. 2017, eq. 9).

W_b φ_b = χ + ρ, with W_b (M, b) the observation matrix restricted to the kept columns (W φ = W_b φ_b, see
`gautier`), χ (M,) the stacked generalized forces and ρ the error. Rows come sample by sample, n_c of
them (one per independent coordinate) per sample, as `observation_matrix` stacks them.

Ordinary least squares: φ̂_b minimises |W_b φ_b − χ|, solved through W_b = Q R (the normal equations would
square the condition number); σ̂² = |ρ|² / (M − b) and cov(φ̂_b) = σ̂² (W_bᵀ W_b)⁻¹ = σ̂² R⁻¹ R⁻ᵀ.

Weighted least squares (Gautier's scheme): the rows of coordinate j are divided by σ_j, the standard deviation
of that coordinate's error, given by the user or estimated from the rows of coordinate j fitted alone:
σ̂_j² = |χ_j − W_b,j x̂_j|² / (M_j − rank W_b,j). Fitting each coordinate alone keeps a noisy coordinate's
errors out of a quiet one's residual (one global fit would spread them), and the estimate is unbiased. The
weighted system is then solved as above; its σ̂² (≈ 1 with good weights) scales the covariance, which also
absorbs a common factor in user-given σ_j.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .. import __version__
from .gautier import BaseParameterResult


@dataclass
class Estimate:
    names: list[str]  # one label per base parameter: the kept parameter φ1,i it is built on
    values: np.ndarray  # φ̂_b (b,)
    covariance: np.ndarray  # (b, b)
    residual_norm: float  # |χ − W_b φ̂_b|, unweighted
    sigma: float  # σ̂ of the solved (weighted for WLS) system: the scale of the covariance
    condition: float  # cond₂(W_b)
    weighted_condition: float | None  # cond₂ of the row-weighted W_b (WLS only)
    coordinate_std: np.ndarray | None  # σ_j used as weights, per coordinate (WLS only)
    method: str  # "LS", "WLS (estimated weights)" or "WLS (given weights)"
    rows: int  # M
    samples: int  # M / n_c
    seconds: float
    version: str = __version__

    @property
    def std(self) -> np.ndarray:
        """Standard deviations σ̂(φ̂_b,i)."""
        return np.sqrt(np.diag(self.covariance))

    @property
    def relative_std(self) -> np.ndarray:
        """100 σ̂(φ̂_b,i) / |φ̂_b,i| in %: large values flag parameters the data hardly determine."""
        with np.errstate(divide="ignore"):
            return 100.0 * self.std / np.abs(self.values)


def condition_number(A: np.ndarray) -> float:
    """cond₂(A) = σ_max / σ_min (inf when A is rank deficient), for a tall A from its R factor (A = Q R has the
    singular values of R, and a QR of a tall matrix is cheaper than its SVD)."""
    s = np.linalg.svd(np.linalg.qr(A, mode="r"), compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def _qr_least_squares(
    A: np.ndarray, y: np.ndarray, names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """x minimising |A x − y|, the R factor of A = Q R, cond₂(A) and the residual norm |A x − y|.

    One QR of [A y] gives R, Qᵀy and the residual norm in its last diagonal entry, without forming Q."""
    count = A.shape[1]
    Rz = np.linalg.qr(np.column_stack([A, y]), mode="r")
    R = Rz[:count, :count]
    condition = _condition_of_r(R, names)
    return scipy.linalg.solve_triangular(R, Rz[:count, count]), R, condition, float(abs(Rz[count, count]))


def _condition_of_r(R: np.ndarray, names: Sequence[str]) -> float:
    """cond₂(A) from the R factor of A = Q R, after checking that the columns are numerically independent."""
    s = np.linalg.svd(R, compute_uv=False)
    if s[-1] <= len(R) * np.finfo(float).eps * s[0]:
        raise ValueError(
            f"the columns {list(names)} of W_b are linearly dependent (smallest singular value "
            f"{s[-1]:.3g}, largest {s[0]:.3g}): the trajectory does not excite them all, or they "
            "are not base parameters"
        )
    return float(s[0] / s[-1])


def _coordinate_of_rows(rows: int, n_coordinates: int) -> np.ndarray:
    if n_coordinates < 1 or rows % n_coordinates:
        raise ValueError(f"W_b has {rows} rows, which is not a whole number of samples of {n_coordinates} coordinates")
    return np.arange(rows) % n_coordinates


def coordinate_residual_std(Wb: np.ndarray, chi: np.ndarray, n_coordinates: int) -> np.ndarray:
    """σ̂_j (n_c,): each coordinate's error standard deviation from the residual of its own rows fitted alone,
    σ̂_j² = |ρ_j|² / (M_j − rank W_b,j) (Gautier's scheme, module docstring)."""
    Wb, chi = np.asarray(Wb, dtype=float), np.asarray(chi, dtype=float)
    coordinate = _coordinate_of_rows(len(Wb), n_coordinates)
    out = np.empty(n_coordinates)
    for j in range(n_coordinates):
        A, y = Wb[coordinate == j], chi[coordinate == j]
        x, _, rank, _ = np.linalg.lstsq(A, y, rcond=max(A.shape) * np.finfo(float).eps)
        if rank >= len(A):
            raise ValueError(
                f"coordinate {j} has {len(A)} rows for {rank} parameters it excites: more samples are "
                "needed to estimate its error"
            )
        out[j] = np.linalg.norm(y - A @ x) / np.sqrt(len(A) - rank)
    return out


def _labels(names: Sequence[str] | None, count: int) -> list[str]:
    """The given names of the b columns, or phi_b1, phi_b2, ... as `gautier` numbers them."""
    if names is None:
        return [f"phi_b{i + 1}" for i in range(count)]
    if len(names) != count:
        raise ValueError(f"W_b has {count} columns but {len(names)} names were given")
    return list(names)


def _solve(A: np.ndarray, y: np.ndarray, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Estimate, covariance, σ̂ and cond₂(A) of the system A x ≈ y."""
    rows, count = A.shape
    if rows <= count:
        raise ValueError(
            f"{rows} equations cannot estimate {count} parameters with an error variance: more samples are needed"
        )
    x, R, condition, residual = _qr_least_squares(A, y, names)
    sigma2 = residual**2 / (rows - count)
    return x, _covariance(R, sigma2), float(np.sqrt(sigma2)), condition


def _covariance(R: np.ndarray, sigma2: float) -> np.ndarray:
    R_inv = scipy.linalg.solve_triangular(R, np.eye(len(R)))
    return sigma2 * R_inv @ R_inv.T


def correlated_covariance(
    A: np.ndarray, residual: np.ndarray, n_coordinates: int, rho: np.ndarray
) -> tuple[np.ndarray, float, np.ndarray]:
    """The covariance of the least-squares solution of A x ≈ y (rows sample by sample, n_c per sample) when each
    coordinate's noise is correlated between samples d apart by ρ_d (ρ_0 = 1, the same for every coordinate, none
    between coordinates). With Σ = σ² C̃, C̃ = C ⊗ I, C_kl = ρ_|k−l|, and A = Q R: cov(x̂) = σ² R⁻¹ T R⁻ᵀ,
    T = Qᵀ C̃ Q (formed from Q, not as (AᵀA)⁻¹ AᵀC̃A (AᵀA)⁻¹, which squares the condition), and σ̂² =
    |ρ̂|² / (M − tr T), unbiased since E|ρ̂|² = σ² tr((I − Q Qᵀ) C̃). With ρ = [1]: σ̂² (AᵀA)⁻¹ over M − b.
    Also L with Lᵀ L = cov⁻¹. Returns (covariance, σ̂, L)."""
    rows, count = A.shape
    Q, R = np.linalg.qr(A)
    stacked = Q.reshape(rows // n_coordinates, n_coordinates, count)
    T = rho[0] * np.eye(count)
    for d, r in enumerate(rho[1:], start=1):
        cross = stacked[:-d].reshape(-1, count).T @ stacked[d:].reshape(-1, count)
        T += r * (cross + cross.T)
    sigma2 = float(residual @ residual) / (rows - np.trace(T))
    R_inv = scipy.linalg.solve_triangular(R, np.eye(count))
    covariance = sigma2 * R_inv @ T @ R_inv.T
    return covariance, float(np.sqrt(sigma2)), _information_factor(R, T, sigma2)


def _information_factor(R: np.ndarray, T: np.ndarray, sigma2: float) -> np.ndarray:
    """L with Lᵀ L = Rᵀ T⁻¹ R / σ², through the eigenvalues of T: a log sampled far above its cut-off has
    directions whose filtered noise all but vanishes; an eigenvalue under the double-precision tolerance of the
    largest is raised to it."""
    eigenvalues, vectors = np.linalg.eigh(T)
    floor = len(T) * np.finfo(float).eps * eigenvalues[-1]
    return (vectors / np.sqrt(np.maximum(eigenvalues, floor))).T @ R / np.sqrt(sigma2)


def least_squares(
    Wb: np.ndarray, chi: np.ndarray, names: Sequence[str] | None = None, n_coordinates: int = 1
) -> Estimate:
    """Ordinary least-squares estimate of the base parameters from W_b φ_b = χ."""
    start = time.perf_counter()
    Wb, chi = np.asarray(Wb, dtype=float), np.asarray(chi, dtype=float)
    names = _labels(names, Wb.shape[1])
    _coordinate_of_rows(len(Wb), n_coordinates)
    return _estimate(Wb, chi, n_coordinates, _solve(Wb, chi, names), names, "LS", start)


def weighted_least_squares(
    Wb: np.ndarray,
    chi: np.ndarray,
    n_coordinates: int,
    coordinate_std: Sequence[float] | None = None,
    names: Sequence[str] | None = None,
) -> Estimate:
    """Weighted least-squares estimate: rows of coordinate j weighted by 1/σ_j, with σ_j given
    (`coordinate_std`, only their ratios matter) or estimated by `coordinate_residual_std` (Gautier)."""
    start = time.perf_counter()
    Wb, chi = np.asarray(Wb, dtype=float), np.asarray(chi, dtype=float)
    names = _labels(names, Wb.shape[1])
    coordinate = _coordinate_of_rows(len(Wb), n_coordinates)
    if coordinate_std is None:
        std, method = coordinate_residual_std(Wb, chi, n_coordinates), "WLS (estimated weights)"
    else:
        std, method = np.asarray(coordinate_std, dtype=float), "WLS (given weights)"
    if std.shape != (n_coordinates,) or not (std > 0).all():
        raise ValueError(
            f"the coordinates' error standard deviations must be {n_coordinates} positive numbers; got {std}"
        )
    weight = 1.0 / std[coordinate]
    A, y = Wb * weight[:, None], chi * weight
    return _estimate(Wb, chi, n_coordinates, _solve(A, y, names), names, method, start, std)


def _estimate(
    Wb,
    chi,
    n_coordinates: int,
    solved: tuple,
    names: list[str],
    method: str,
    start: float,
    coordinate_std: np.ndarray | None = None,
) -> Estimate:
    """The Estimate of a solved (for WLS: row-weighted) system; the residual and cond₂(W_b) are unweighted."""
    x, cov, sigma, solved_condition = solved
    weighted = coordinate_std is not None
    return Estimate(
        names=names,
        values=x,
        covariance=cov,
        residual_norm=float(np.linalg.norm(chi - Wb @ x)),
        sigma=sigma,
        condition=condition_number(Wb) if weighted else solved_condition,
        weighted_condition=solved_condition if weighted else None,
        coordinate_std=coordinate_std,
        method=method,
        rows=len(Wb),
        samples=len(Wb) // n_coordinates,
        seconds=time.perf_counter() - start,
    )


def estimate(
    W: np.ndarray,
    base: BaseParameterResult,
    chi: np.ndarray,
    n_coordinates: int = 1,
    weighted: bool = False,
    coordinate_std: Sequence[float] | None = None,
) -> Estimate:
    """The base parameters of `base` (from `gautier_dp` or `gautier_vp`) estimated from the full observation
    matrix W and χ: W_b = W[:, kept]; weighted least squares when `weighted` or when `coordinate_std` is given."""
    Wb = np.asarray(base.base_observation_matrix(W), dtype=float)
    names = [base.parameter_names[k] for k in base.kept_indices]
    if weighted or coordinate_std is not None:
        return weighted_least_squares(Wb, chi, n_coordinates, coordinate_std, names)
    return least_squares(Wb, chi, names, n_coordinates)
