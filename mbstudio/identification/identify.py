"""Identification of a real mechanism from a measured log: base inertial parameters (and joint friction) with their
standard deviations, from encoder positions and actuator forces (Gautier's practice; docs/identification.md).

    result = identify(model, "run1.csv", validate="run2.csv", friction=("viscous", "coulomb"))
    result.rank, result.rows(), result.to_json()

The steps:
1. The base parameters of the model by Gautier's method in variable precision along its exciting trajectory, as
   `mbstudio basepar` finds them (`pipeline.base_parameters`): the rank is decided where rounding cannot blur it;
   where its ridge is not evident (a URDF's rounded angles), on the log (`precision_levels`).
2. The log (`logs.read_log`): positions low-pass filtered without phase, differentiated; the dependent
   coordinates of a closed loop assembled from the independent ones on the document's branch (`filtering`). Where
   the rebuilt accelerations would weigh more than the noise in the rows, the rows' band is narrowed below the
   positions' filter (`acceleration_band`) and the observations built again.
3. The observations: with R = ∂q/∂q_ind and R_a its rows of the actuated coordinates, virtual power gives
       Rᵀ K_tree(q, q̇, q̈) φ + Σ_j R_a,jᵀ (F_v,j q̇_j + F_c,j sign q̇_j) = R_aᵀ u + Rᵀ Q_known,
   u the logged actuator forces, Q_known the document's force elements (springs, dampers, point forces: known;
   actuator elements are what the log measures and are left out), F_v and F_c the optional friction of each
   actuated joint. For a tree with its own coordinates actuated, R_a = R = I and the rows are the joint torques.
   Both sides are low-pass filtered alike and decimated (parallel filtering).
4. W_b: the columns of the base parameters; a log that leaves some base parameter unexcited (a direction of
   W_b, its columns scaled to unit length, with a singular value under the double-precision rank tolerance) is
   refused with the parameters named, unless `hold_unexcited`, which holds them at the model's values.
5. Weighted least squares (`estimation.weighted_least_squares`: each coordinate's rows weighted by the inverse
   of its error's standard deviation); optionally the physically consistent estimate (`physical`).
6. Validation on a second log treated alike (same cut-off): the actuator forces the estimate predicts against
   the filtered measured ones, relative RMS error per actuated coordinate and overall, beside the noise floor.
7. Whether the model explains the log (`adequacy`): each coordinate's training residual against the noise floor
   estimated from the log; where it does not, each known force element's share of the log (`known_force_check`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.linalg

from .. import __version__
from ..dynamics.closed_loop import actuated_indices, reduced_mass_matrix
from ..dynamics.force_laws import law_class
from ..dynamics.forces import AppliedForces
from ..dynamics.regressor import tree_regressor
from ..kinematics.mechanism import Mechanism
from ..model import Model, ModelError
from ..model.document import JointFriction
from ..model.hashing import model_hash
from ..progress import Cancel, Progress
from ..progress import Stages as _Monitor
from . import acceleration_band, adequacy, filtering, precision_levels
from .estimation import Estimate, coordinate_residual_std, correlated_covariance, weighted_least_squares
from .gautier import BaseParameterResult
from .logs import MeasuredLog, read_log
from .observation import branch_guide, sample_states
from .pipeline import base_parameters

FRICTION = ("viscous", "coulomb")
FRICTION_PREFIX = {"viscous": "Fv_", "coulomb": "Fc_"}
CHUNK = 500  # samples per batch of the observation matrix: progress and cancel are checked between batches
DEFAULT_DIGITS = 30
STAGE_WEIGHTS = [0.4, 0.45, 0.1, 0.05]  # base parameters, observations, estimation, validation


@dataclass
class Observations:
    """A log turned into equations W φ + F f = y at the kept samples (decimated), with what the window plots."""

    settings: filtering.FilterSettings
    log: MeasuredLog
    filtered: np.ndarray  # (N, n_ind) the filtered positions at every logged sample
    kept: np.ndarray  # (K,) indices of the kept samples
    W: np.ndarray  # (K, n_ind, p) the regressor in the independent coordinates, filtered
    F: np.ndarray  # (K, n_ind, n_f) the friction columns, filtered
    y: np.ndarray  # (K, n_ind) R_aᵀ u + Rᵀ Q_known, filtered
    forces: np.ndarray  # (K, n_act) the logged actuator forces, filtered
    known: np.ndarray  # (K, n_ind) Rᵀ Q_known, filtered
    actuation: np.ndarray  # (K, n_act, n_ind) R_a at the kept samples
    known_parts: np.ndarray  # (K, n_ind, E) each known force element's Rᵀ Q_e, filtered
    known_names: list[str]  # the known force elements, E
    replaced: list[str]  # the document's joint friction elements the identified friction replaces
    noise_floor: np.ndarray  # (n_ind,) the noise left in each coordinate's rows (`adequacy`)
    accelerations: dict = field(default_factory=dict)  # how well the log's accelerations are rebuilt (`adequacy`)

    @property
    def t(self) -> np.ndarray:
        return self.log.t[self.kept]


@dataclass
class Validation:
    source: str
    t: np.ndarray
    measured: np.ndarray  # (K, n_act) filtered logged forces
    predicted: np.ndarray  # (K, n_act)
    relative_rms: dict[str, float]  # per actuated coordinate
    overall: float
    noise_floor: dict[str, float | None] = field(default_factory=dict)  # the same, of the noise left (`adequacy`)
    overall_floor: float | None = None

    def to_json(self) -> dict:
        return {
            "file": self.source,
            "relative_rms": self.relative_rms,
            "overall": self.overall,
            "noise_floor": self.noise_floor,
            "overall_noise_floor": self.overall_floor,
        }


@dataclass
class Identification:
    model_name: str
    model_hash: str
    base: BaseParameterResult  # the base parameters of the model (variable precision)
    names: list[str]  # per base parameter: the parameter it keeps (φ_b = φ_kept + β φ_eliminated)
    expressions: list[str]
    model_values: np.ndarray  # the base parameters at the document's inertial values
    values: np.ndarray  # estimated (held ones: the model's value)
    std: np.ndarray  # NaN for held ones
    held: list[str]  # base parameters the log did not excite, held at the model's values
    friction: list[dict]  # {"coordinate", "kind", "name", "value", "std", "relative_std"}
    estimate: Estimate
    excitation: dict  # the log's spectrum: log10 singular values of the scaled W_b, tolerance, condition
    observations: Observations
    validation: Validation | None
    physical: dict | None
    settings: filtering.FilterSettings
    provenance: dict = field(default_factory=dict)
    adequacy: dict = field(default_factory=dict)  # training residual per coordinate against its noise floor
    notes: list[str] = field(default_factory=list)  # what was done with the log's and the model's extras
    precision_levels: dict = field(default_factory=dict)  # the rank at each level and what decided it
    information_factor: np.ndarray | None = field(default=None, repr=False)  # L: covariance = (Lᵀ L)⁻¹

    @property
    def rank(self) -> int:
        return self.base.rank

    @property
    def relative_std(self) -> np.ndarray:
        """100 σ / |value| in %."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return 100.0 * self.std / np.abs(self.values)

    def rows(self) -> list[dict]:
        """One row per base parameter, then one per friction parameter: what the tables and the CSV show."""
        out = [
            {
                "name": f"phi_b{i + 1}",
                "kept": kept,
                "expression": expression,
                "value": float(value),
                "std": None if np.isnan(std) else float(std),
                "relative_std": None if np.isnan(std) else float(rel),
                "model_value": float(prior),
                "held": kept in self.held,
            }
            for i, (kept, expression, value, std, rel, prior) in enumerate(
                zip(
                    self.names,
                    self.expressions,
                    self.values,
                    self.std,
                    self.relative_std,
                    self.model_values,
                    strict=True,
                )
            )
        ]
        if self.physical is not None:
            for row, value in zip(out, self.physical["base_values"], strict=True):
                row["physical_value"] = value
        for row, partner in zip(out, self.strongest_correlations(), strict=True):
            row["most_correlated"], row["correlation"] = partner
        return out

    def strongest_correlations(self) -> list[tuple[str | None, float | None]]:
        """Per base parameter, the estimated parameter (base or friction) its estimate is most correlated with and
        the correlation coefficient, from the covariance (None for a held parameter, or alone): what the log
        cannot tell apart."""
        labels = self.estimate.names
        cov = np.asarray(self.estimate.covariance, float)
        std = np.sqrt(np.diag(cov))
        with np.errstate(divide="ignore", invalid="ignore"):
            correlation = cov / np.outer(std, std)
        np.fill_diagonal(correlation, 0.0)
        out: list[tuple[str | None, float | None]] = []
        for name in self.names:
            if name not in labels or len(labels) < 2:
                out.append((None, None))
                continue
            row = np.nan_to_num(correlation[labels.index(name)])
            k = int(np.argmax(np.abs(row)))
            out.append((labels[k], float(row[k])))
        return out

    def to_json(self) -> dict:
        return {
            "model": self.model_name,
            "model_hash": self.model_hash,
            "rank": self.rank,
            "base_parameters": self.rows(),
            "held": self.held,
            "friction": self.friction,
            "validation_relative_rms": None
            if self.validation is None
            else {**self.validation.relative_rms, "overall": self.validation.overall},
            "validation": None if self.validation is None else self.validation.to_json(),
            "physical": self.physical,
            "filter": self.settings.to_json(),
            "estimation": self._estimation_json(),
            "excitation": self.excitation,
            "adequacy": self.adequacy,
            "precision_levels": self.precision_levels,
            "notes": self.notes,
            "provenance": self.provenance,
        }

    def _estimation_json(self) -> dict:
        est = self.estimate
        coordinates = self.observations.log.coordinates
        return {
            "method": est.method,
            "rows": est.rows,
            "samples": est.samples,
            "sigma": est.sigma,
            "coordinate_std": dict(zip(coordinates, map(float, est.coordinate_std), strict=True)),
            "condition_scaled": est.condition,
            "weighted_condition_scaled": est.weighted_condition,
        }


# ---------------------------------------------------------------------------------------- the whole run
def identify(
    model: Model,
    data: str | Path | MeasuredLog,
    validate: str | Path | MeasuredLog | None = None,
    friction: Sequence[str] = (),
    digits: int = DEFAULT_DIGITS,
    cutoff_hz: float | None = None,
    physical: bool = False,
    hold_unexcited: bool = False,
    base: BaseParameterResult | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> Identification:
    """Identify `model`'s base parameters from the log `data` (a path or a MeasuredLog), see the module docstring.

    `friction`: any of "viscous", "coulomb", per actuated coordinate. `digits`: the precision deciding the
    base parameters (at least 16), unless `base` gives them (a `gautier_vp` or `gautier_dp` result on this
    model). `cutoff_hz`: the positions' cut-off (default: the rule of `filtering`). `physical`: also the
    physically consistent estimate. `hold_unexcited`: hold base parameters the log does not excite at the
    model's values instead of refusing. `progress(fraction, message)`; `cancel` raises Cancelled."""
    start = time.perf_counter()
    unknown = [f for f in friction if f not in FRICTION]
    if unknown:
        raise ModelError("friction", "is not a friction model", unknown, " and/or ".join(FRICTION))
    friction = [f for f in FRICTION if f in friction]  # the columns' order
    mech = Mechanism(model)
    monitor = _Monitor(progress, cancel, STAGE_WEIGHTS)
    log = data if isinstance(data, MeasuredLog) else read_log(data, mech)
    check = validate if validate is None or isinstance(validate, MeasuredLog) else read_log(validate, mech)
    monitor.start("base parameters")
    fixed, w_vp = base is not None, None
    if base is None:
        base, w_vp = _base_parameters(model, digits, monitor)
    monitor.start("filtering the log and building the observation matrix")
    unknowns = base.rank + len(friction) * len(log.actuated)
    settings = filtering.choose_settings(log.positions, log.rate, cutoff_hz, log.velocities)
    settings = settings.for_unknowns(unknowns, len(log.t), len(log.coordinates))
    obs = observations(mech, log, settings, friction, monitor)
    narrower = (
        None if cutoff_hz is not None else acceleration_band.narrowed(settings, log, obs.accelerations, obs.noise_floor)
    )
    if narrower is not None:  # the rebuilt accelerations would limit the fit: the rows' band below the positions'
        settings = narrower.for_unknowns(unknowns, len(log.t), len(log.coordinates))
        obs = observations(mech, log, settings, friction, monitor, span=(0.85, 1.0))
    _check_sample_count(obs, unknowns)
    spectrum = precision_levels.data_spectrum(obs.W, obs.y, obs.noise_floor)
    base, levels = precision_levels.decide(base, w_vp, spectrum, fixed)
    monitor.start("weighted least squares")
    result = estimate_base(mech, base, obs, friction, hold_unexcited)
    result.precision_levels = levels
    if physical:
        from .physical import physical_estimate

        monitor.within(0.5, "physically consistent estimate")
        result.physical = physical_estimate(mech, result)
    monitor.start("validation")
    if check is not None:
        result.validation = validation(mech, result, check, monitor)
    result.provenance = {
        "method": "weighted least squares (Gautier), base parameters by variable precision",
        "digits": base.digits,
        "log": log.provenance(),
        "validation_log": None if check is None else check.provenance(),
        "options": {
            "friction": friction,
            "cutoff_hz": cutoff_hz,
            "physical": physical,
            "hold_unexcited": hold_unexcited,
        },
        "seconds": time.perf_counter() - start,
        "version": __version__,
    }
    monitor.done()
    return result


def _base_parameters(model: Model, digits: int, monitor: _Monitor) -> tuple[BaseParameterResult, np.ndarray]:
    """Gautier's method at `digits` digits along the model's exciting trajectory (as `mbstudio basepar`), and W
    there; whether its rank stands is for `precision_levels.decide`."""
    if digits < 16:
        raise ModelError("digits", "is below the 16 digits variable precision starts from", digits, "16 or more")

    def report(fraction: float, message: str) -> None:
        monitor.within(fraction, f"base parameters: {message}")

    run = base_parameters(model, "vp", [digits], progress=report, cancel=monitor.stopped)
    return run.vp.final, run.vp_observation


# ---------------------------------------------------------------------------------------- observations
def observations(
    mech: Mechanism,
    log: MeasuredLog,
    settings: filtering.FilterSettings,
    friction: list[str],
    monitor: _Monitor | None = None,
    span: tuple[float, float] = (0.0, 1.0),
) -> Observations:
    """The log as equations at the kept samples: see the module docstring, step 3. The document's joint friction
    on a coordinate whose friction is identified is not known: the identified friction takes its place. Progress
    is reported within `span` of the monitor's stage (a second pass goes on where the first stopped)."""
    stage = monitor or _Monitor(None, None, [1.0])

    def report(fraction: float, message: str) -> None:
        stage.within(span[0] + (span[1] - span[0]) * fraction, message)

    q_ind, qd_ind, qdd_ind = filtering.derivatives(log.positions, settings, log.velocities)
    guide = _assembled(mech, q_ind)
    known, replaced = known_elements(mech, log.actuated if friction else [])
    applied = AppliedForces(mech, known)
    actuated = actuated_indices(mech, log.actuated)
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("W", "F", "known", "R_a", "q")}
    count = len(log.t)
    for first in range(0, count, CHUNK):
        report(0.8 * first / count, f"observation matrix: sample {first + 1} of {count}")
        part = slice(first, first + CHUNK)
        path = _tabulated(q_ind[part], qd_ind[part], qdd_ind[part])
        q, qd, qdd = sample_states(mech, log.t[part], path, None if guide is None else guide[part])
        R = mech.r_matrix(q)
        Rt = np.swapaxes(R, 1, 2)
        parts["W"].append(Rt @ tree_regressor(mech, q, qd, qdd))
        parts["known"].append(_known_columns(applied, log.t[part], q, qd, Rt))
        parts["R_a"].append(R[:, actuated, :])
        parts["q"].append(q)
        parts["F"].append(_friction_columns(R[:, actuated, :], qd[:, actuated], friction))
    report(0.85, "parallel filtering and decimation")
    W, F, known_parts, R_a = (np.concatenate(parts[k]) for k in ("W", "F", "known", "R_a"))
    known_sum = known_parts.sum(axis=2)
    measured = np.einsum("naj,na->nj", R_a, log.forces)
    y = measured + known_sum
    kept = filtering.kept_samples(count, settings)
    floor = adequacy.noise_std(measured) * adequacy.filter_gain(settings)
    rebuilt = acceleration_check(mech, log, settings, np.concatenate(parts["q"])[kept], qdd_ind[kept], y[kept], floor)
    filtered = {
        name: filtering.parallel_decimate(x, settings)
        for name, x in (("W", W), ("F", F), ("y", y), ("forces", log.forces), ("known", known_sum))
    }
    return Observations(
        settings,
        log,
        filtering.lowpass(log.positions, settings),
        kept,
        filtered["W"],
        filtered["F"],
        filtered["y"],
        filtered["forces"],
        filtered["known"],
        R_a[kept],
        filtering.parallel_decimate(known_parts, settings),
        [e.name for e in known],
        replaced,
        floor,
        rebuilt,
    )


def acceleration_check(
    mech: Mechanism,
    log: MeasuredLog,
    settings: filtering.FilterSettings,
    q: np.ndarray,
    qdd: np.ndarray,
    y: np.ndarray,
    floor: np.ndarray,
) -> dict:
    """How much the rebuilt accelerations' error (`filtering.acceleration_error`) weighs in each coordinate's
    equation: through the model's reduced mass matrix at the kept samples, against the noise floor and beside the
    inertial forces and the logged ones. A machine whose logged forces are a small difference of large inertial
    forces (a crank turning freely) needs accelerations far more accurate than its forces' noise. Nothing for a
    log too short to keep a sample (refused later, with its reason)."""
    if not len(q):
        return {}
    logged = log.velocities is not None
    rates = log.velocities if logged else np.diff(log.positions, axis=0) * log.rate
    error = filtering.acceleration_error(filtering.velocity_spectrum(rates, log.rate, not logged), settings, logged)
    M = reduced_mass_matrix(mech, q)
    inertial = np.sqrt(np.mean(np.einsum("kji,ki->kj", M, qdd) ** 2, axis=0))
    relative = np.nan_to_num(error["relative"])
    weights = np.mean(M**2 * qdd[:, None, :] ** 2, axis=0)  # (n, n): coordinate j's squared force per accelerations'
    # squared relative error in coordinate i
    torque_error = np.sqrt(weights @ relative**2)
    logged_rms = np.sqrt(np.mean(y**2, axis=0))
    return {
        "velocities": error["velocities"],
        "force_weights": weights.tolist(),
        "coordinates": {
            name: {
                "relative_error": _finite(error["relative"][j]),
                "from_filter": _finite(error["from_filter"][j]),
                "from_noise": _finite(error["from_noise"][j]),
                "inertial_rms": float(inertial[j]),
                "logged_rms": float(logged_rms[j]),
                "force_error": float(torque_error[j]),
                "ratio_to_floor": _finite(torque_error[j] / floor[j]) if floor[j] > 0 else None,
            }
            for j, name in enumerate(log.coordinates)
        },
    }


def _source(velocities: str) -> str:
    return "logged velocities" if velocities == "logged" else velocities


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def known_elements(mech: Mechanism, identified: list[str]) -> tuple[list, list[str]]:
    """The document's force elements taken as known (actuators are what the log measures), and the names of the
    joint friction elements left out because the friction of their coordinate (in `identified`) is estimated."""
    known, replaced = [], []
    for element in mech.model.forces:
        if law_class(element).actuated:
            continue
        if isinstance(element, JointFriction) and element.coordinate in identified:
            replaced.append(element.name)
        else:
            known.append(element)
    return known, replaced


def _known_columns(applied: AppliedForces, t: np.ndarray, q: np.ndarray, qd: np.ndarray, Rt: np.ndarray) -> np.ndarray:
    """(N, n_ind, E): each known element's generalized force in the independent coordinates, Rᵀ Q_e."""
    if not applied.elements:
        return np.zeros(Rt.shape[:2] + (0,))
    st = applied.placed(q)
    columns = [np.einsum("nij,nj->ni", Rt, applied.of_law(law, t, q, qd, st)) for law in applied.laws]
    return np.stack(columns, axis=2)


def _assembled(mech: Mechanism, positions: np.ndarray) -> np.ndarray | None:
    """All coordinates along the logged path on the document's assembly branch (None for a tree); a sample
    where the loops cannot close is named."""
    try:
        return branch_guide(mech, positions)
    except Exception as exc:  # AssemblyError or a singular Jacobian: the log left the mechanism's workspace
        raise ModelError(
            "log",
            f"the logged positions cannot be closed by the loops of the model: {exc}",
            None,
            "positions of a motion this model can make, in the units the header says",
        ) from None


def _tabulated(*arrays: np.ndarray) -> Callable[[np.ndarray, int], np.ndarray]:
    """A path for `sample_states` that returns the given positions, velocities and accelerations."""
    return lambda times, order: arrays[order]


def _friction_columns(R_a: np.ndarray, rates: np.ndarray, friction: list[str]) -> np.ndarray:
    """(N, n_ind, n_f): per friction model and actuated coordinate j, R_a,jᵀ q̇_j or R_a,jᵀ sign q̇_j."""
    columns = []
    for kind in friction:
        signal = rates if kind == "viscous" else np.sign(rates)
        columns += [R_a[:, j, :] * signal[:, j : j + 1] for j in range(rates.shape[1])]
    return np.stack(columns, axis=2) if columns else np.zeros(R_a.shape[:1] + R_a.shape[2:] + (0,))


def friction_names(actuated: list[str], friction: Sequence[str]) -> list[str]:
    return [FRICTION_PREFIX[kind] + name for kind in friction for name in actuated]


# ---------------------------------------------------------------------------------------- estimation
def estimate_base(
    mech: Mechanism, base: BaseParameterResult, obs: Observations, friction: list[str], hold_unexcited: bool
) -> Identification:
    """Weighted least squares on the base-parameter and friction columns; see the module docstring, steps 4-5."""
    n = len(obs.log.coordinates)
    names = [base.parameter_names[k] for k in base.kept_indices]
    f_names = friction_names(obs.log.actuated, friction)
    A = np.concatenate([obs.W[:, :, base.kept_indices], obs.F], axis=2).reshape(-1, len(names) + len(f_names))
    y = obs.y.reshape(-1)
    prior = _model_base_values(mech, base)
    _check_sample_count(obs, len(names) + len(f_names))
    coordinate_std = _coordinate_std(A, y, n, obs.log.coordinates)
    excitation, unexcited = excitation_report(A, coordinate_std, names + f_names)
    held = [names[k] for k in unexcited if k < len(names)]
    if unexcited and (not hold_unexcited or len(held) < len(unexcited)):
        raise ModelError("log", _unexcited_message(unexcited, names, f_names, base, excitation), None, None)
    free = [k for k in range(A.shape[1]) if k not in unexcited]
    rhs = y - A[:, unexcited] @ prior[unexcited] if unexcited else y
    labels = [(names + f_names)[k] for k in free]
    rho = filtering.noise_autocorrelation(obs.settings, len(obs.kept))
    est, information = _scaled_least_squares(A[:, free], rhs, coordinate_std, labels, rho)
    values, std = prior.copy(), np.full(len(names), np.nan)
    full = np.concatenate([values, np.zeros(len(f_names))])
    full_std = np.concatenate([std, np.full(len(f_names), np.nan)])
    full[free], full_std[free] = est.values, est.std
    fit = adequacy_of_fit(obs, A, y, full, len(free))
    return Identification(
        mech.model.name,
        model_hash(mech.model),
        base,
        names,
        [b["expression"] for b in base.base_parameters],
        prior,
        full[: len(names)],
        full_std[: len(names)],
        held,
        _friction_rows(obs.log.actuated, friction, full[len(names) :], full_std[len(names) :]),
        est,
        excitation,
        obs,
        None,
        None,
        obs.settings,
        information_factor=information,
        adequacy=fit,
        notes=list(obs.log.notes) + _replaced_note(obs.replaced) + acceleration_notes(obs),
    )


def _replaced_note(replaced: list[str]) -> list[str]:
    if not replaced:
        return []
    return [
        f"the document's joint friction {', '.join(replaced)} is not taken as known: the friction identified "
        "at these coordinates takes its place"
    ]


def adequacy_of_fit(obs: Observations, A: np.ndarray, y: np.ndarray, values: np.ndarray, unknowns: int) -> dict:
    """The training residual per coordinate against its noise floor (`adequacy`); where the model does not explain
    some coordinate and it has known force elements, whether the log supports them (`known_force_check`)."""
    n = len(obs.log.coordinates)
    residual = adequacy.coordinate_rms(y - A @ values, n)
    report = adequacy.adequacy_report(obs.log.coordinates, residual, obs.noise_floor, unknowns, len(y))
    if report["unexplained"] and obs.known_names:
        report["known_forces"] = known_force_check(obs, A, y)
    report["accelerations"] = obs.accelerations
    return report


def acceleration_notes(obs: Observations) -> list[str]:
    """A note per coordinate whose rebuilt accelerations weigh more than its noise floor, with the way out."""
    checks = obs.accelerations.get("coordinates", {})
    notes = []
    for name, c in checks.items():
        ratio = c["ratio_to_floor"]
        if ratio is None or ratio <= 1 or c["relative_error"] is None:
            continue
        notes.append(
            f"'{name}': the accelerations rebuilt from the {_source(obs.accelerations['velocities'])} are "
            f"{100 * c['relative_error']:.2g} % off ({100 * c['from_filter']:.2g} % of the motion cut by the filter, "
            f"{100 * c['from_noise']:.2g} % noise let through); its inertial forces ({c['inertial_rms']:.3g} RMS, "
            f"{c['inertial_rms'] / c['logged_rms']:.3g} times its logged forces) turn that into "
            f"{c['force_error']:.3g}, "
            f"{ratio:.3g} times its noise floor: the fit is limited by the accelerations, not by the forces"
            + (
                ". Log the joints' velocities (columns d_<name>), or log faster"
                if obs.accelerations["velocities"] != "logged"
                else ". Log faster, or with less velocity noise"
            )
        )
    return notes


def known_force_check(obs: Observations, A: np.ndarray, y: np.ndarray) -> dict:
    """Each known force element's share s_e of the log, fitted with the parameters (the model takes s_e = 1):
    W φ + F f − Σ_e s_e Rᵀ Q_e = R_aᵀ u. An element whose share is more than 3σ from 1 is one the log
    contradicts; `explained` says whether the fit with free shares leaves every coordinate at its noise floor."""
    n, names = len(obs.log.coordinates), obs.known_names
    parts = obs.known_parts.reshape(-1, len(names))
    B = np.concatenate([A, -parts], axis=1)
    target = y - obs.known.reshape(-1)
    labels = [f"c{k}" for k in range(A.shape[1])] + names
    try:  # the weights of this fit's own residuals: the misfit's inflated those of the parameters alone
        weights = _coordinate_std(B, target, n, obs.log.coordinates)
        est, _ = _scaled_least_squares(
            B, target, weights, labels, filtering.noise_autocorrelation(obs.settings, len(obs.kept))
        )
    except ModelError as exc:
        return {"separable": False, "why": str(exc)}
    share, std = est.values[A.shape[1] :], est.std[A.shape[1] :]
    residual = adequacy.coordinate_rms(target - B @ est.values, n)
    ratios = residual / obs.noise_floor
    return {
        "separable": True,
        "elements": {
            name: {"share": float(x), "std": float(e), "contradicted": bool(abs(x - 1) > 3 * e)}
            for name, x, e in zip(names, share, std, strict=True)
        },
        "contradicted": [name for name, x, e in zip(names, share, std, strict=True) if abs(x - 1) > 3 * e],
        "ratios_with_free_shares": dict(zip(obs.log.coordinates, map(float, ratios), strict=True)),
        "explained": bool(np.all(ratios * np.sqrt(len(y) / (len(y) - B.shape[1])) <= adequacy.MISFIT_RATIO)),
    }


def _coordinate_std(A: np.ndarray, y: np.ndarray, n: int, coordinates: list[str]) -> np.ndarray:
    """Each coordinate's error standard deviation, from its own rows fitted alone (Gautier's weights)."""
    try:
        return coordinate_residual_std(A / _column_norms(A), y, n)
    except ValueError as exc:
        raise ModelError("log", f"has too few samples to weigh its coordinates {coordinates}: {exc}") from None


def _column_norms(A: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(A, axis=0)
    return np.where(norms > 0, norms, 1.0)


def _scaled_least_squares(
    A: np.ndarray, y: np.ndarray, coordinate_std: np.ndarray, names: list[str], rho: np.ndarray
) -> tuple[Estimate, np.ndarray]:
    """Weighted least squares on A, rows of coordinate j weighted by 1/σ_j, then columns scaled to unit length as
    in `excitation_report` (the parameters' units span orders of magnitude; scaling changes no estimate but keeps
    the QR's rank check about directions), the estimate and covariance scaled back; its conditions are those of
    the weighted, scaled matrix. With it L, the factor of the inverse covariance (covariance = (Lᵀ L)⁻¹).
    `rho`: the kept rows' noise correlation between samples d apart (`filtering.noise_autocorrelation`), which
    the covariance and σ̂ take into account (`correlated_covariance`)."""
    n = len(coordinate_std)
    weight = np.tile(1.0 / coordinate_std, len(A) // n)
    B = A * weight[:, None]
    norms = _column_norms(B)
    scaled = B / norms
    try:
        est = weighted_least_squares(scaled, y * weight, n, np.ones(n), names)
    except ValueError as exc:
        raise ModelError("log", f"cannot be fitted: {exc}", None, "a longer or richer log") from None
    covariance, est.sigma, information = correlated_covariance(scaled, y * weight - scaled @ est.values, n, rho)
    est.values = est.values / norms
    est.covariance = covariance / np.outer(norms, norms)
    est.coordinate_std = coordinate_std
    est.residual_norm = float(np.linalg.norm(y - A @ est.values))
    est.method = "WLS (weights estimated per coordinate)"
    return est, information * norms


def _model_base_values(mech: Mechanism, base: BaseParameterResult) -> np.ndarray:
    """φ_b at the document's inertial values; a value within the rounding noise of β times the eliminated
    parameters of zero (a first moment zero by symmetry, plus β's zeros at 10⁻³⁰) is zero."""
    phi = np.concatenate([np.asarray(mech.tree.geometry.inertia(b), float) for b in mech.model.bodies])
    values = np.asarray(base.base_map(), dtype=float) @ phi
    noise = float(base.beta_noise) * np.abs(phi[base.eliminated_indices]).sum()
    return np.where(np.abs(values) <= noise, 0.0, values)


def _friction_rows(actuated: list[str], friction: list[str], values: np.ndarray, std: np.ndarray) -> list[dict]:
    units = {"viscous": "N·m·s/rad or N·s/m", "coulomb": "N·m or N"}
    rows = []
    for k, (kind, coordinate) in enumerate((kind, c) for kind in friction for c in actuated):
        rows.append(
            {
                "coordinate": coordinate,
                "kind": kind,
                "name": FRICTION_PREFIX[kind] + coordinate,
                "value": float(values[k]),
                "std": float(std[k]),
                "relative_std": float(100 * std[k] / abs(values[k])) if values[k] else None,
                "unit": units[kind],
            }
        )
    return rows


def _check_sample_count(obs: Observations, columns: int) -> None:
    """Enough kept samples for the unknowns and, per coordinate, for its error's standard deviation."""
    kept = len(obs.kept)
    if kept > columns:
        return
    s = obs.settings
    raise ModelError(
        "log",
        f"has too few samples for {columns} unknowns: {len(obs.log.t)} samples at {s.rate_hz:.6g} Hz leave {kept} "
        f"after dropping {s.edge} at each end and keeping every {s.decimation}{_nth(s.decimation)} (cut-off "
        f"{s.cutoff_hz:.4g} Hz)",
        None,
        f"more than {columns} kept samples: a log about {(columns + 1) / max(kept, 1):.2g} times as long or longer",
    )


def _nth(k: int) -> str:
    return {1: "st", 2: "nd", 3: "rd"}.get(k if k < 20 else k % 10, "th")


def excitation_report(A: np.ndarray, coordinate_std: np.ndarray, names: list[str]) -> tuple[dict, list[int]]:
    """The log's spectrum and the columns it does not excite. Rows are weighted as the least squares weigh them
    (1/σ_j) and columns scaled to unit length, so that the singular values compare directions whatever the
    parameters' units; a singular value under max(rows, columns)·eps·σ1 is a direction the log does not see.
    Its parameters are the last columns of a column-pivoted QR (the least independent of the others), as many
    as such directions."""
    B = A * np.tile(1.0 / coordinate_std, len(A) // len(coordinate_std))[:, None]
    B = B / _column_norms(B)
    sigma = np.linalg.svd(B, compute_uv=False)
    tolerance = max(B.shape) * np.finfo(float).eps * sigma[0]
    missing = B.shape[1] - int((sigma > tolerance).sum())
    _, _, order = scipy.linalg.qr(B, mode="economic", pivoting=True)
    unexcited = sorted(int(k) for k in order[len(order) - missing :]) if missing else []
    report = {
        "log10_singular_values": [float(np.log10(s)) if s > 0 else None for s in sigma],
        "log10_tolerance": float(np.log10(tolerance)),
        "condition": float(sigma[0] / sigma[-1]) if sigma[-1] > 0 else None,
        "unexcited": [names[k] for k in unexcited],
    }
    return report, unexcited


def _unexcited_message(unexcited, names, f_names, base, excitation) -> str:
    all_names = names + f_names
    expressions = {n: b["expression"] for n, b in zip(names, base.base_parameters, strict=True)}
    listed = "; ".join(
        f"{all_names[k]} ({expressions[all_names[k]]})" if all_names[k] in expressions else all_names[k]
        for k in unexcited
    )
    spectrum = excitation["log10_singular_values"]
    shown = ", ".join("-inf" if s is None else f"{s:.1f}" for s in spectrum[-len(unexcited) - 3 :])
    return (
        f"does not excite {len(unexcited)} of the {len(all_names)} parameters: {listed}. The singular values of "
        f"its base observation matrix (columns scaled to unit length) end with log10 σ = {shown}: "
        f"{len(unexcited)} under the rank tolerance {excitation['log10_tolerance']:.1f}. Move the joints these "
        "parameters need "
        "(`mbstudio excite` designs such a motion), or hold them at the model's values (--hold-unexcited)"
    )


# ---------------------------------------------------------------------------------------- validation
def predicted_forces(result: Identification, obs: Observations) -> np.ndarray:
    """The actuator forces (K, n_act) the estimate predicts at the kept samples of `obs`: from
    R_aᵀ u = W_b φ_b + F f − Rᵀ Q_known, solved per sample (least norm with redundant actuators)."""
    base = result.base
    phi = np.concatenate([result.values, [row["value"] for row in result.friction]])
    A = np.concatenate([obs.W[:, :, base.kept_indices], obs.F], axis=2)
    rhs = A @ phi - obs.known
    return np.stack([np.linalg.lstsq(Ra.T, r, rcond=None)[0] for Ra, r in zip(obs.actuation, rhs, strict=True)])


def validation(mech: Mechanism, result: Identification, log: MeasuredLog, monitor: _Monitor) -> Validation:
    """The second log with the first one's cut-off: relative RMS errors of the predicted actuator forces."""
    settings = result.settings.at_rate(log.rate)
    friction = sorted({row["kind"] for row in result.friction}, key=FRICTION.index)
    obs = observations(mech, log, settings, friction, monitor)
    predicted = predicted_forces(result, obs)
    error = np.sqrt(np.mean((obs.forces - predicted) ** 2, axis=0))
    scale = np.sqrt(np.mean(obs.forces**2, axis=0))
    relative = {name: float(e / s) if s > 0 else None for name, e, s in zip(log.actuated, error, scale, strict=True)}
    overall = float(np.linalg.norm(obs.forces - predicted) / np.linalg.norm(obs.forces))
    floor = adequacy.noise_std(log.forces) * adequacy.filter_gain(settings)
    relative_floor = {
        name: float(f / x) if x > 0 and np.isfinite(f) else None
        for name, f, x in zip(log.actuated, floor, scale, strict=True)
    }
    overall_floor = float(np.sqrt(len(obs.forces) * np.sum(floor**2)) / np.linalg.norm(obs.forces))
    finite = bool(np.isfinite(overall_floor))
    return Validation(
        log.source, obs.t, obs.forces, predicted, relative, overall, relative_floor, overall_floor if finite else None
    )
