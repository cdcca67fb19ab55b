"""The rows' band narrowed when the accelerations rebuilt from positions limit the fit.

A machine whose logged forces are a small difference of large inertial forces (a crank turning almost freely)
needs accelerations far more accurate than its forces' noise. With one cut-off for the positions and the rows,
the chain's error is the motion the positions' filter removes and the rows' keeps, plus the differentiated
encoder noise the rows keep (`filtering.acceleration_error`). The two filters need not be the same: the rows'
equation W(q, q̇, q̈) φ = τ holds sample by sample whatever the band, so any linear filter applied to both of its
sides alike keeps it true (parallel filtering), and the rows' band may lie below the motion's. Positions filtered
at the widest cut-off the rule allows (`filtering.MAX_CUTOFF_SHARE` of the Nyquist frequency) keep the motion in
the rows' band whole, and a narrower rows' band lets through less of the noise that differentiation raised by ω²:
the noise in the rows falls as the rows' cut-off to the power 2.5 and their force noise floor only as its square
root.

So where the first pass predicts an error above the noise floor (`identify.acceleration_check`), the rows'
cut-off is lowered, by steps of `filtering.RAISE_STEP`, to the highest one at which the predicted error is at
most TARGET noise floors (in quadrature it then adds at most 12 % to the floor), else to where it is least; never
below the positions' bandwidth, where the rows would lose the motion itself.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from . import adequacy, filtering
from .logs import MeasuredLog

TARGET = 0.5  # the predicted acceleration error the rows' band is narrowed to, in noise floors
LIMIT = 1.0  # above this, in noise floors, the band is narrowed (and the report says so)


def narrowed(
    s: filtering.FilterSettings, log: MeasuredLog, accelerations: dict, floor: np.ndarray
) -> filtering.FilterSettings | None:
    """Settings with the positions filtered at the widest cut-off and the rows' cut-off lowered (module docstring),
    or None when no coordinate's predicted acceleration error (`accelerations`, the first pass's check at the
    settings `s`, beside its noise floors `floor`) is above LIMIT floors."""
    first = max((c["ratio_to_floor"] or 0.0 for c in accelerations.get("coordinates", {}).values()), default=0.0)
    if not first > LIMIT:
        return None
    logged = log.velocities is not None
    rates = log.velocities if logged else np.diff(log.positions, axis=0) * log.rate
    spectrum = filtering.velocity_spectrum(rates, log.rate, not logged)
    weights = np.asarray(accelerations["force_weights"], float)
    noise = floor / adequacy.filter_gain(s)
    widest = max(s.cutoff_hz, filtering.MAX_CUTOFF_SHARE * log.rate / 2)

    def predicted(cutoff: float) -> float:
        trial = replace(s, cutoff_hz=cutoff, derivative_cutoff_hz=widest)
        relative = np.nan_to_num(filtering.acceleration_error(spectrum, trial, logged)["relative"])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.sqrt(weights @ relative**2) / (noise * adequacy.filter_gain(trial))
        return float(np.nanmax(ratio)) if np.any(np.isfinite(ratio)) else math.inf

    lowest = max(s.position_bandwidth_hz or 0.0, spectrum.frequencies[1])
    steps = math.floor(math.log(s.cutoff_hz / lowest, filtering.RAISE_STEP)) + 1 if s.cutoff_hz > lowest else 1
    candidates = s.cutoff_hz / filtering.RAISE_STEP ** np.arange(steps)
    ratios = [predicted(c) for c in candidates]
    within = [k for k, r in enumerate(ratios) if r <= TARGET]
    best = within[0] if within else int(np.argmin(ratios))
    rule = (
        f"{s.rule}; the rebuilt accelerations would weigh {first:.3g} noise floors in the rows at {s.cutoff_hz:.4g} "
        f"Hz: positions filtered at {widest:.4g} Hz before differentiation and the rows (both sides alike) at "
        f"{candidates[best]:.4g} Hz, where they weigh {ratios[best]:.2g}"
    )
    return s.recut(log.rate, float(candidates[best]), rule, widest)
