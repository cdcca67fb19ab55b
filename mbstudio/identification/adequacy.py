"""Does the model explain the log? The noise a log carries, estimated from the log alone, against what the fit
leaves.

Noise. A measured force is the model's force plus the sensor's and the drive's noise. The motion (hence the model's
force) lives far below the sampling rate, so the third differences Δ³x_k = x_{k+2} − 3x_{k+1} + 3x_k − x_{k−1} of a
logged force hold its noise (a white noise of standard deviation σ gives them 20σ²) and almost nothing of the motion
((2π f Δt)³ of it). The estimate is robust: σ = 1.4826·median|Δ³x − median| / √20, so the few samples where a
friction switches sign as the joint reverses (a step of 2 F_c, there in a real robot's log) do not count.
After the zero-phase filter (|H|² applied) a white noise of standard deviation σ keeps σ·g, with
g² = (2 / f_s) ∫₀^{f_s/2} |H(f)|⁴ df; decimation keeps that level. g·σ_j is coordinate j's noise floor: what no
estimate can predict, the level its training residual and its validation error reach when the model explains the
log (σ_j for a tree's own joints; for a closed loop the rows are R_aᵀ u, and the floor is that of the forces).

Adequacy. A coordinate whose training residual is more than MISFIT_RATIO times its floor is one the model does not
explain: an unmodelled force (friction the model lacks or claims wrongly, a cable, a payload), a wrong geometry or
a wrong log. The report names it rather than printing estimates whose standard deviations, scaled by that misfit,
say nothing about the machine.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.integrate
import scipy.signal

from .filtering import FilterSettings

MAD_TO_STD = 1.4826  # a normal distribution's standard deviation over its median absolute deviation
THIRD_DIFFERENCE_VARIANCE = 20.0  # C(6, 3): the variance of Δ³ of a unit white noise
MISFIT_RATIO = 3.0  # a training residual above this multiple of the noise floor: the model does not explain


def noise_std(forces: np.ndarray) -> np.ndarray:
    """Each column's white-noise standard deviation (n,), from the robust spread of its third differences (module
    docstring); NaN for fewer than 8 samples."""
    x = np.asarray(forces, float)
    if len(x) < 8:
        return np.full(x.shape[1], math.nan)
    d = np.diff(x, n=3, axis=0)
    spread = np.median(np.abs(d - np.median(d, axis=0)), axis=0)
    return MAD_TO_STD * spread / math.sqrt(THIRD_DIFFERENCE_VARIANCE)


def filter_gain(s: FilterSettings) -> float:
    """g: the standard deviation a unit white noise keeps through the zero-phase filter (module docstring)."""
    sos = scipy.signal.butter(s.order, s.cutoff_hz, fs=s.rate_hz, output="sos")
    nyquist = s.rate_hz / 2

    def power(f: float) -> float:
        return float(np.abs(scipy.signal.sosfreqz(sos, worN=[f], fs=s.rate_hz)[1][0]) ** 4)

    integral, _ = scipy.integrate.quad(power, 0.0, nyquist, points=[s.cutoff_hz], limit=200)
    return math.sqrt(2 * integral / s.rate_hz)


def coordinate_rms(rows: np.ndarray, n: int) -> np.ndarray:
    """The RMS of stacked rows (K·n,) per coordinate (n,)."""
    return np.sqrt(np.mean(np.reshape(rows, (-1, n)) ** 2, axis=0))


def adequacy_report(names: list[str], residual: np.ndarray, floor: np.ndarray, unknowns: int, rows: int) -> dict:
    """Per coordinate: the training residual (RMS, corrected for the unknowns fitted: × √(rows / (rows −
    unknowns))), the noise floor, their ratio and whether it exceeds MISFIT_RATIO; `unexplained` names those that
    do."""
    correction = math.sqrt(rows / max(rows - unknowns, 1))
    per = {}
    for name, r, f in zip(names, residual, floor, strict=True):
        ratio = float(r * correction / f) if f > 0 and math.isfinite(f) else None
        per[name] = {
            "residual_rms": float(r * correction),
            "noise_floor": None if not math.isfinite(f) else float(f),
            "ratio": ratio,
            "unexplained": ratio is not None and ratio > MISFIT_RATIO,
        }
    return {
        "coordinates": per,
        "misfit_ratio": MISFIT_RATIO,
        "unexplained": [n for n, x in per.items() if x["unexplained"]],
        "noise": "white, from the robust spread of the logged forces' third differences, through the filter",
    }
