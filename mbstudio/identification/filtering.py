"""The practitioner's signal chain before least squares (Gautier's scheme): zero-phase low-pass filtering of the
positions, central differences for velocities and accelerations, and decimation with parallel filtering.

Cut-off. Unless given, the positions' cut-off is CUTOFF_FACTOR times the motion's bandwidth, at most
MAX_CUTOFF_SHARE of the Nyquist frequency. The bandwidth is the larger of two, over the coordinates:
- the positions': the frequency below which BANDWIDTH_SHARE of the (detrended, Hann-windowed) positions' power lies;
- the velocities': the same share of the velocities' power once the noise is taken out of it. The velocities are
  the logged ones when the log has them, else the positions' first differences, which see a continuously turning
  joint (its unwrapped angle is a ramp whose fluctuations, where its dynamics live, the positions' spectrum hides
  under the ramp's low frequencies). The noise is where the signal ends: its level is read in the top quarter of
  the band (a log is sampled well above its motion), white for logged velocities, growing as sin²(π f Δt) for
  differenced positions (an encoder's white quantisation noise differentiated), and its expected power is taken
  out of every bin before the share is counted.
So the filter leaves the motion alone (a 4th-order Butterworth run forwards and backwards passes a fifth of its
cut-off with a gain of 1 − 1.3·10⁻⁶) and removes the encoders' quantisation and the noise that differentiation
would raise by ω and ω². Where the cap binds, the motion reaches too close to the log's Nyquist frequency for
accelerations to be rebuilt from positions alone: the settings say so (`capped`), and the report advises a faster
rate or logged velocities.

Where the accelerations rebuilt this way would weigh more than the forces' noise in the rows (a crank turning
almost freely), the positions are filtered at a higher cut-off than the rows (`derivative_cutoff_hz`,
`acceleration_band`): parallel filtering keeps the rows' equation true in any band, so the rows' band may be narrowed
to where the differentiated noise weighs little, while the positions' wider filter leaves the motion in it whole.

Differentiation. Fourth-order central differences (five points) of the filtered positions: their relative error at
frequency f is about (2π f Δt)⁴/30 for the velocity and /90 for the acceleration, 3·10⁻⁴ and 10⁻⁴ at a tenth of the
sampling rate. With logged velocities, the velocities are filtered and differentiated once: no second difference
raises the encoders' noise by ω².

Decimation with parallel filtering. The torques hold the noise of the whole band; the columns of the observation
matrix and the torques are low-pass filtered alike (the same zero-phase filter: W φ = τ stays true sample by sample,
since the filter is linear), then every r-th sample is kept, r the largest step whose Nyquist frequency is still
above the cut-off: what is kept is nearly white, as the least squares' standard deviations assume. The samples
within EDGE_PERIODS periods of the cut-off of either end, where the filters' transients live, are dropped. A short
or slow log would keep too few rows for its unknowns that way: the step is then shortened (`for_unknowns`) until
MIN_ROWS_PER_UNKNOWN rows per unknown are kept (and MIN_SAMPLES_PER_UNKNOWN samples, for each coordinate's own fit).

Correlation of the kept noise. A Butterworth filter is not a brick wall: even at the Nyquist step, and more so at
a shortened one, the kept samples of white noise filtered forwards and backwards are correlated. Their
autocorrelation is the inverse Fourier transform of |H|⁴ (`noise_autocorrelation`, exact away from the dropped
edges); the least squares' covariance takes it into account (`estimation.correlated_covariance`). `correlation`,
1 + 2 Σ_{d≥1} ρ_d, is how much it inflates the variance of a parameter whose column varies slowly.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
import scipy.signal

from ..model.errors import ModelError

ORDER = 4  # Butterworth order; run forwards and backwards it acts as order 8 with no phase
CUTOFF_FACTOR = 5.0
BANDWIDTH_SHARE = 0.99
MAX_CUTOFF_SHARE = 0.5  # of the Nyquist frequency
RAISE_STEP = 1.25  # the cut-offs tried above the rule's, each this factor above the last
NOISE_BAND = 0.75  # the velocities' noise level is read above this share of the Nyquist frequency
EDGE_PERIODS = 3.0
CONTINUATION_FIT = 8  # samples at least, fitted by the cubic that continues each end before filtering
MIN_ROWS_PER_UNKNOWN = 10
MIN_SAMPLES_PER_UNKNOWN = 2


@dataclass(frozen=True)
class FilterSettings:
    """What the chain did, for the result's provenance and for a second log to be treated alike."""

    cutoff_hz: float
    order: int
    rate_hz: float  # of the log
    decimation: int  # every r-th sample kept
    edge: int  # samples dropped at each end
    rule: str  # how the cut-off was chosen
    bandwidth_hz: float | None  # the motion's bandwidth found (None when the cut-off was given)
    nyquist_decimation: int = 0  # the step whose Nyquist frequency is the cut-off (0: the decimation)
    position_bandwidth_hz: float | None = None  # the positions' share of power (None when the cut-off was given)
    velocity_bandwidth_hz: float | None = None  # the velocities' share of power above their noise
    capped: bool = False  # the cut-off is the cap, not CUTOFF_FACTOR × the bandwidth
    velocities: str = "differenced positions"  # or "logged"
    derivative_cutoff_hz: float | None = None  # the positions' filter before differentiation, when above the rows'

    @property
    def before_differentiation(self) -> FilterSettings:
        """The filter the positions (or logged velocities) pass before they are differentiated: the rows' own
        unless the rows' band was narrowed below it (`acceleration_band`)."""
        return self if self.derivative_cutoff_hz is None else replace(self, cutoff_hz=self.derivative_cutoff_hz)

    @property
    def correlation(self) -> float:
        """1 + 2 Σ_{d≥1} ρ_d over the kept samples' lags: the variance inflation of a slowly varying column."""
        rho = noise_autocorrelation(self)
        return float(rho[0] + 2 * rho[1:].sum())

    def to_json(self) -> dict:
        return asdict(self) | {
            "filter": "Butterworth, zero phase (forwards and backwards)",
            "correlation": self.correlation,
            "min_rows_per_unknown": MIN_ROWS_PER_UNKNOWN,
        }

    def for_unknowns(self, unknowns: int, count: int, rows_per_sample: int) -> FilterSettings:
        """These settings with the decimation shortened, where needed, so that a log of `count` samples keeps
        MIN_ROWS_PER_UNKNOWN rows per unknown and MIN_SAMPLES_PER_UNKNOWN samples per unknown."""
        need = max(math.ceil(MIN_ROWS_PER_UNKNOWN * unknowns / rows_per_sample), MIN_SAMPLES_PER_UNKNOWN * unknowns)
        usable = count - 2 * self.edge
        step = max(1, min(self.decimation, usable // max(need, 1)))
        return replace(self, decimation=step, nyquist_decimation=self.nyquist_decimation or self.decimation)

    def at_rate(self, rate_hz: float) -> FilterSettings:
        """The same cut-off and order for a log sampled at another rate (a validation log)."""
        return self.recut(rate_hz, self.cutoff_hz, self.rule, self.derivative_cutoff_hz)

    def recut(self, rate_hz: float, cutoff_hz: float, rule: str, derivative_cutoff_hz: float | None) -> FilterSettings:
        """Settings at another rate or cut-off that keep what the log's spectrum told (bandwidths, cap, velocities)."""
        return replace(
            settings(rate_hz, cutoff_hz, rule, self.bandwidth_hz),
            position_bandwidth_hz=self.position_bandwidth_hz,
            velocity_bandwidth_hz=self.velocity_bandwidth_hz,
            capped=self.capped,
            velocities=self.velocities,
            derivative_cutoff_hz=derivative_cutoff_hz,
        )


def motion_bandwidth(positions: np.ndarray, rate_hz: float) -> float:
    """The frequency below which BANDWIDTH_SHARE of the positions' power lies (after removing each coordinate's
    straight-line trend, under a Hann window), the largest over the coordinates; at least one frequency bin."""
    x = scipy.signal.detrend(np.asarray(positions, float), axis=0)
    power = np.abs(np.fft.rfft(x * np.hanning(len(x))[:, None], axis=0)) ** 2
    power[0] = 0.0
    frequencies = np.fft.rfftfreq(len(x), 1.0 / rate_hz)
    found = frequencies[1]
    for column in power.T:
        total = column.sum()
        if total > 0:
            found = max(found, frequencies[np.searchsorted(np.cumsum(column), BANDWIDTH_SHARE * total)])
    return float(found)


@dataclass(frozen=True)
class VelocitySpectrum:
    """The velocities' periodogram (Hann window, detrended) split into the noise level read in the top of the band
    and the signal above it, per coordinate: what the cut-off rule and `acceleration_error` read."""

    frequencies: np.ndarray  # (F,) Hz
    power: np.ndarray  # (F, n)
    noise: np.ndarray  # (F, n) the noise's expected power in each bin

    @property
    def signal(self) -> np.ndarray:
        return np.maximum(self.power - self.noise, 0.0)


def velocity_spectrum(velocities: np.ndarray, rate_hz: float, differenced: bool) -> VelocitySpectrum:
    """The spectrum of the velocities (N, n), the logged ones or (`differenced`) the positions' first differences
    divided by the step: module docstring."""
    x = scipy.signal.detrend(np.asarray(velocities, float), axis=0)
    power = np.abs(np.fft.rfft(x * np.hanning(len(x))[:, None], axis=0)) ** 2
    power[0] = 0.0
    frequencies = np.fft.rfftfreq(len(x), 1.0 / rate_hz)
    shape = np.sin(np.pi * frequencies / rate_hz) ** 2 if differenced else np.ones_like(frequencies)
    top = (frequencies > NOISE_BAND * rate_hz / 2) & (frequencies < rate_hz / 2)
    # an exponential distribution's median is ln 2 times its mean: the noise's level from the band's median
    level = np.median(power[top] / shape[top, None], axis=0) / math.log(2) if top.any() else np.zeros(x.shape[1])
    return VelocitySpectrum(frequencies, power, shape[:, None] * level[None, :])


def velocity_bandwidth(velocities: np.ndarray, rate_hz: float, differenced: bool) -> float:
    """The frequency below which BANDWIDTH_SHARE of the velocities' power above their noise lies, the largest over
    the coordinates (module docstring); `differenced`: the velocities are the positions' first differences."""
    spectrum = velocity_spectrum(velocities, rate_hz, differenced)
    found = spectrum.frequencies[1]
    for column in np.cumsum(spectrum.power - spectrum.noise, axis=0).T:
        if column[-1] > 0:
            found = max(found, spectrum.frequencies[np.searchsorted(column, BANDWIDTH_SHARE * column[-1])])
    return float(found)


def acceleration_error(spectrum: VelocitySpectrum, s: FilterSettings, logged: bool) -> dict:
    """How far the accelerations the chain rebuilds are from the motion's, relative to their RMS, in the rows the
    least squares see, per coordinate, from the velocities' spectrum. G = |H|², the zero-phase filter's gain, acts
    twice: on the positions (or logged velocities) before differentiation, and on the rows (parallel filtering). So
    the motion the first removes and the second keeps weighs (1 − G)² G² of the acceleration's signal power, and
    the noise G⁴ of its power; an error far above the cut-off is gone from the rows. With the positions filtered
    at a higher cut-off than the rows (gain G_d before differentiation, G on the rows), (1 − G_d)² G² and
    G_d² G² instead."""
    f = spectrum.frequencies
    gain, before = (_gain(x, f) for x in (s, s.before_differentiation))
    derivative = (2 * np.pi * f) ** 2  # from the velocities' power to the accelerations'
    signal = (spectrum.signal * derivative[:, None]).sum(axis=0)
    removed = (spectrum.signal * (derivative * ((1 - before) * gain) ** 2)[:, None]).sum(axis=0)
    passed = (spectrum.noise * (derivative * (before * gain) ** 2)[:, None]).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "velocities": "logged" if logged else "differenced positions",
            "relative": np.sqrt((removed + passed) / signal),
            "from_filter": np.sqrt(removed / signal),
            "from_noise": np.sqrt(passed / signal),
        }


def _gain(s: FilterSettings, frequencies: np.ndarray) -> np.ndarray:
    """|H|² of the zero-phase filter of `s` at `frequencies`."""
    sos = scipy.signal.butter(s.order, s.cutoff_hz, fs=s.rate_hz, output="sos")
    return np.abs(scipy.signal.sosfreqz(sos, worN=frequencies, fs=s.rate_hz)[1]) ** 2


def choose_settings(
    positions: np.ndarray, rate_hz: float, cutoff_hz: float | None = None, velocities: np.ndarray | None = None
) -> FilterSettings:
    """The chain's settings for a log: the cut-off given, else by the rule of the module docstring (`velocities`:
    the logged ones, if any)."""
    nyquist = rate_hz / 2
    if cutoff_hz is not None:
        if not 0 < cutoff_hz < nyquist:
            raise ModelError(
                "cut-off", "is not below the log's Nyquist frequency", cutoff_hz, f"a frequency in (0, {nyquist:g}) Hz"
            )
        return settings(rate_hz, float(cutoff_hz), "given", None)
    by_positions = motion_bandwidth(positions, rate_hz)
    logged = velocities is not None
    rates = velocities if logged else np.diff(np.asarray(positions, float), axis=0) * rate_hz
    spectrum = velocity_spectrum(rates, rate_hz, differenced=not logged) if len(rates) > 8 else None
    by_velocities = velocity_bandwidth(rates, rate_hz, differenced=not logged) if spectrum is not None else 0.0
    bandwidth = max(by_positions, by_velocities)
    cap = MAX_CUTOFF_SHARE * nyquist
    cutoff = min(CUTOFF_FACTOR * bandwidth, cap)
    source = "velocities'" if by_velocities > by_positions else "positions'"
    rule = (
        f"{CUTOFF_FACTOR:g} × the motion's bandwidth {bandwidth:.3g} Hz (the {source}: {100 * BANDWIDTH_SHARE:g} % "
        f"of their power above the noise; positions {by_positions:.3g} Hz, "
        f"{'logged' if logged else 'differenced'} velocities {by_velocities:.3g} Hz), at most "
        f"{MAX_CUTOFF_SHARE:g} × the Nyquist frequency"
    )
    if CUTOFF_FACTOR * bandwidth > cap:
        rule += (
            f"; CAPPED at {cap:.3g} Hz: the motion reaches too close to the log's Nyquist frequency for accelerations "
            "to be rebuilt from positions alone: log faster, or log the joints' velocities (columns d_<name>)"
        )
    chosen = settings(rate_hz, cutoff, rule, bandwidth)
    if spectrum is not None and not CUTOFF_FACTOR * bandwidth > cap:
        chosen = _raised(chosen, spectrum, cap, logged)
    return replace(
        chosen,
        position_bandwidth_hz=by_positions,
        velocity_bandwidth_hz=by_velocities,
        capped=CUTOFF_FACTOR * bandwidth > cap,
        velocities="logged" if logged else "differenced positions",
    )


def _raised(chosen: FilterSettings, spectrum: VelocitySpectrum, cap: float, logged: bool) -> FilterSettings:
    """The cut-off raised (by steps of RAISE_STEP, up to `cap`) to where the rebuilt accelerations' error
    (`acceleration_error`, the worst coordinate's) is lowest, when that is under half its value at the rule's
    cut-off: a motion whose accelerations keep power up to several times its velocities' bandwidth (a crank
    turning freely) loses less there than the wider band lets in of noise."""

    def worst(cutoff: float) -> float:
        error = acceleration_error(spectrum, replace(chosen, cutoff_hz=cutoff), logged)["relative"]
        return float(np.nanmax(error)) if np.any(np.isfinite(error)) else math.inf

    candidates = chosen.cutoff_hz * RAISE_STEP ** np.arange(
        math.floor(math.log(cap / chosen.cutoff_hz, RAISE_STEP)) + 1
    )
    errors = [worst(c) for c in candidates]
    best = int(np.argmin(errors))
    if not errors[best] < 0.5 * errors[0]:
        return chosen
    rule = (
        f"{chosen.rule}; raised to {candidates[best]:.4g} Hz, where the rebuilt accelerations are "
        f"{100 * errors[best]:.2g} % off against {100 * errors[0]:.2g} % at {chosen.cutoff_hz:.4g} Hz"
    )
    return settings(chosen.rate_hz, float(candidates[best]), rule, chosen.bandwidth_hz)


def settings(rate_hz: float, cutoff_hz: float, rule: str, bandwidth_hz: float | None) -> FilterSettings:
    decimation = max(1, math.floor(rate_hz / (2 * cutoff_hz)))
    edge = math.ceil(EDGE_PERIODS * rate_hz / cutoff_hz)
    return FilterSettings(cutoff_hz, ORDER, rate_hz, decimation, edge, rule, bandwidth_hz, decimation)


def noise_autocorrelation(s: FilterSettings, kept: int | None = None) -> np.ndarray:
    """ρ_d, d = 0, 1, ...: the correlation of white noise filtered by `lowpass` between kept samples d steps of
    s.decimation apart (ρ_0 = 1), from the inverse FFT of |H|⁴ on a grid long enough for the filter's response to
    have died out (16 edges: 48 periods of the cut-off); lags past `kept` - 1 and a tail under 10⁻¹² are left out."""
    sos = scipy.signal.butter(s.order, s.cutoff_hz, fs=s.rate_hz, output="sos")
    length = 2 ** math.ceil(math.log2(max(16 * s.edge, 4 * s.decimation, 64)))
    _, response = scipy.signal.sosfreqz(sos, worN=np.fft.rfftfreq(length, 1.0 / s.rate_hz), fs=s.rate_hz)
    samples = np.fft.irfft(np.abs(response) ** 4, length)
    rho = samples[: length // 2 : s.decimation] / samples[0]
    if kept is not None:
        rho = rho[: max(kept, 1)]
    significant = np.nonzero(np.abs(rho) > 1e-12)[0]
    return rho[: significant[-1] + 1]


def lowpass(x: np.ndarray, s: FilterSettings) -> np.ndarray:
    """Zero-phase Butterworth low-pass of the columns of x (N, ...) along the first axis, each end continued first
    by the cubic that fits it (`continued`)."""
    sos = scipy.signal.butter(s.order, s.cutoff_hz, fs=s.rate_hz, output="sos")
    pad = min(len(x) - 1, s.edge)
    y = continued(np.asarray(x, float), pad)
    filtered = scipy.signal.sosfiltfilt(sos, y, axis=0, padtype="odd", padlen=min(len(y) - 1, pad))
    start = (len(y) - len(x)) // 2
    return filtered[start : start + len(x)]


def continued(x: np.ndarray, pad: int) -> np.ndarray:
    """x (N, ...) with `pad` samples before and after it: the least-squares cubic of its first and of its last
    max(pad, CONTINUATION_FIT) samples, continued. The filter's own odd extension keeps an end's value and slope
    but turns its curvature over, and the filter spreads that kink into the samples kept: on an exact log (a
    double pendulum's, 200 Hz, cut-off 44 Hz) it left accelerations 1.7e-3 rad/s² off at the first kept samples,
    a torque residual 80 times the log's rounding, where the cubic's leaves 8e-6. A fixed linear map of x: the
    regressor's columns and the forces continued alike keep W φ = τ sample by sample. Unchanged where x is too
    short to fit a cubic to."""
    fit = max(pad, CONTINUATION_FIT)
    if pad < 1 or len(x) < fit:
        return x
    flat = x.reshape(len(x), -1)
    ahead = np.arange(1, pad + 1, dtype=float)
    head = _cubic_beyond(flat[:fit][::-1], ahead)[::-1]
    tail = _cubic_beyond(flat[-fit:], ahead)
    return np.concatenate([head, flat, tail]).reshape((len(x) + 2 * pad, *x.shape[1:]))


def _cubic_beyond(x: np.ndarray, ahead: np.ndarray) -> np.ndarray:
    """The least-squares cubic through x (m, k), sampled at 1, 2, ... (`ahead`) steps past its last sample."""
    t = np.arange(1 - len(x), 1, dtype=float)
    coefficients = np.polynomial.polynomial.polyfit(t, x, 3)
    return np.polynomial.polynomial.polyval(ahead, coefficients).T


def derivatives(
    positions: np.ndarray, s: FilterSettings, velocities: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Filtered positions, velocities and accelerations (N, n) from raw positions sampled at s.rate_hz (and the
    logged velocities, when given: filtered alike and differentiated once), filtered by `s.before_differentiation`.
    A coordinate whose logged position never changes (a locked joint's encoder count) keeps it, at rest: exact zeros,
    where the filter's rounding divided by the step squared would leave a noise that no parameter's column should be
    mistaken for."""
    before = s.before_differentiation
    q = lowpass(positions, before)
    step = 1.0 / s.rate_hz
    if velocities is None:
        qd, qdd = central_difference(q, 1, step), central_difference(q, 2, step)
    else:
        qd = lowpass(velocities, before)
        qdd = central_difference(qd, 1, step)
    still = np.ptp(positions, axis=0) == 0
    q[:, still], qd[:, still], qdd[:, still] = positions[:, still], 0.0, 0.0
    return q, qd, qdd


# five-point central differences (fourth order), and the one-sided ones of the same order at the two first and last
# samples (inside the dropped edges, but kept finite and close)
_FIVE_POINT = {1: np.array([1, -8, 0, 8, -1]) / 12, 2: np.array([-1, 16, -30, 16, -1]) / 12}
_ONE_SIDED = {1: np.array([-25, 48, -36, 16, -3]) / 12, 2: np.array([35, -104, 114, -56, 11]) / 12}


def central_difference(x: np.ndarray, order: int, step: float) -> np.ndarray:
    """The `order`-th derivative (1 or 2) of the samples x (N, ...) along the first axis, fourth-order accurate."""
    if len(x) < 5:
        raise ModelError("log", "has too few samples to differentiate", len(x), "at least 5 samples")
    out = np.empty_like(x)
    w = _FIVE_POINT[order]
    out[2:-2] = sum(c * x[k : len(x) - 4 + k] for k, c in enumerate(w))
    ends = _ONE_SIDED[order]
    for k in range(2):
        out[k] = sum(c * x[k + j] for j, c in enumerate(ends))
        out[-1 - k] = sum(c * x[-1 - k - j] for j, c in enumerate(ends)) * (-1) ** order
    return out / step**order


def kept_samples(count: int, s: FilterSettings) -> np.ndarray:
    """Indices of the samples kept after decimation: every r-th, away from the edges."""
    return np.arange(s.edge, count - s.edge, s.decimation)


def parallel_decimate(x: np.ndarray, s: FilterSettings) -> np.ndarray:
    """x (N, ...) low-pass filtered along the first axis, at the kept samples."""
    return lowpass(x, s)[kept_samples(len(x), s)]
