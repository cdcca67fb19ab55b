"""The rank at three levels of precision, and the one a log decides (docs/architecture.md, principle 13;
docs/identification.md).

- Variable precision: Gautier's method on the model's exciting trajectory at `digits` digits sees every direction
  the model's numbers, as written, separate. A vendor's URDF writes π/2 as 1.57079632679 or 1.5708: the geometry
  is then a rounding away from one with fewer base parameters, and the directions that only the rounding separates
  sit in the spectrum at the rounding's size (kinova: σ37, σ38 ten decades under σ36, twenty above the 30-digit
  floor), where no ridge is evident by `gautier.find_ridge`'s rules.
- Double precision: the log's own observation matrix (every inertial parameter's column, filtered and decimated as
  the least squares see it) has what float64 resolves: singular values above 10³·max(m, p)·eps·s₁.
- Noise: the same matrix, each coordinate's rows divided by its noise floor (`adequacy`), s its singular values.
  A direction whose s_k / s₁ is below the log's noise-to-signal ratio ‖noise‖ / ‖forces‖ (after whitening:
  √rows / ‖ỹ‖) moves the forces by less than the noise when the parameters move along it by as much as the
  parameters that make the whole signal: the log sees it weakly, and its estimate carries a large standard
  deviation. This count is reported, not used as the rank: with the parameters in their SI units a light wrist's
  inertias sit there and are still identifiable from a long log.
The columns are not scaled to unit length here (they are for the excitation check): a column that only the
rounding of the geometry makes non-zero (cos 1.57079632679 = 4.9·10⁻¹²) would be blown up to a direction of its own.
Like Gautier's and Pinocchio's numerical ranks, the parameters' SI units set the scale.

When variable precision finds an evident ridge its rank stands (a log that does not excite some of its base
parameters is then refused or held, `identify.excitation_report`). When it does not, the rank is the log's own at
double precision, provided both the log's spectrum and the variable-precision one have a gap of at least
RIDGE_MIN_DEPTH decades there (else the run says so with the spectra): what float64 cannot resolve along a real log
no log can identify, and a gap of that depth in both spectra does not move when the inputs move by 1e-13. The base
parameters are then Gautier's at that rank on the variable-precision W, and the parameters that only the finer
level kept apart are named as grouped.
"""

from __future__ import annotations

import math

import numpy as np

from ..model import ModelError
from .gautier import NOISE_MARGIN, RIDGE_MIN_DEPTH, BaseParameterResult, gautier_vp


def data_spectrum(W: np.ndarray, y: np.ndarray, floor: np.ndarray) -> dict:
    """The log's spectrum: W (K, n, p) every inertial parameter's column, y (K, n) the right-hand side, `floor`
    (n,) each coordinate's noise floor. Columns without effect are left out (counted as zero singular values)."""
    K, n, p = W.shape
    weights = 1.0 / floor if np.all(np.isfinite(floor) & (floor > 0)) else np.ones(n)
    A = (W * weights[None, :, None]).reshape(K * n, p)
    live = np.any(A != 0, axis=0)
    s = np.linalg.svd(A[:, live], compute_uv=False)
    double = NOISE_MARGIN * max(A.shape) * np.finfo(float).eps
    whitened = np.linalg.norm(y * weights)
    noise = math.sqrt(K * n) / whitened if whitened > 0 else math.nan
    relative = s / s[0]
    double_rank = int((relative > double).sum())
    seen = int((relative > max(double, noise if math.isfinite(noise) else 0.0)).sum())
    return {
        "log10_singular_values": [float(math.log10(x)) if x > 0 else None for x in relative],
        "double": {"log10_tolerance": math.log10(double), "rank": double_rank, "gap": _gap(relative, double_rank)},
        "noise": {
            "log10_tolerance": math.log10(max(double, noise)) if math.isfinite(noise) else None,
            "noise_to_signal": float(noise),
            "rank": seen,
            "gap": _gap(relative, seen),
        },
        "zero_columns": int((~live).sum()),
    }


def _gap(relative: np.ndarray, rank: int) -> float | None:
    """log10(s_r / s_{r+1}): how far the decision is from flipping."""
    if rank == 0 or rank >= len(relative) or relative[rank] <= 0:
        return None
    return float(math.log10(relative[rank - 1] / relative[rank]))


def vp_level(base: BaseParameterResult) -> dict:
    sigma = [float(x) for x in base.sigma]
    top = sigma[0]
    return {
        "digits": base.digits,
        "rank": base.rank,
        "ridge": base.ridge.to_json(),
        "log10_singular_values": [math.log10(x / top) if x > 0 else None for x in sigma],
    }


def decide(
    base: BaseParameterResult, w_vp: np.ndarray | None, spectrum: dict, fixed: bool
) -> tuple[BaseParameterResult, dict]:
    """The base parameters the log is identified on and the report of the three levels (module docstring).
    `fixed`: the base parameters were given by the caller, and stand."""
    levels = {"variable_precision": vp_level(base), "log": spectrum, "decided_by": "variable precision", "grouped": []}
    if fixed or base.ridge.evident:
        levels["decided_by"] = "given" if fixed else "variable precision (evident ridge)"
        return base, levels
    rank, log_gap = spectrum["double"]["rank"], spectrum["double"]["gap"]
    vp_depth = _vp_depth(base, rank)
    if w_vp is None or min(vp_depth or 0.0, log_gap or 0.0) < RIDGE_MIN_DEPTH:
        raise ModelError(
            "base parameters",
            f"have no evident rank: variable precision at {base.digits} digits shows no evident ridge (deepest gap "
            f"{base.ridge.log10_depth:.1f} decades after σ{base.ridge.index}), and the log's double-precision rank "
            f"{rank} has a gap of {_decades(log_gap)} in its own spectrum and {_decades(vp_depth)} in the "
            f"variable-precision one, {RIDGE_MIN_DEPTH:g} needed",
            rank,
            "a longer or richer log (`mbstudio excite`), or the exact geometry (`mbstudio import --snap-angles`)",
        )
    decided = gautier_vp(w_vp, base.parameter_names, base.digits, rank=rank)
    kept_before = {base.parameter_names[k] for k in base.kept_indices}
    levels["decided_by"] = "data"
    levels["rank"] = rank
    levels["variable_precision"]["gap_at_data_rank"] = vp_depth
    levels["grouped"] = sorted(kept_before - {decided.parameter_names[k] for k in decided.kept_indices})
    return decided, levels


def _decades(depth: float | None) -> str:
    return "no decades" if depth is None else f"{depth:.1f} decades"


def _vp_depth(base: BaseParameterResult, rank: int) -> float | None:
    """log10(σ_r / σ_{r+1}) of the variable-precision spectrum (None outside it or at a zero)."""
    sigma = base.sigma
    if not 0 < rank < len(sigma) or sigma[rank] <= 0:
        return None
    return float(math.log10(float(sigma[rank - 1]) / float(sigma[rank])))
