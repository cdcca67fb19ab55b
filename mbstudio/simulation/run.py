"""Time simulation in the independent coordinates, with the dependent ones re-assembled at every step.

By default the compiled engine integrates y = (q, q̇_ind): every evaluation closes the loops by Newton steps
from the integrated q inside one native call (dynamics/engine.py), and CVODES steps natively
(simulation/integrators.py). The numpy path (`compiled=False`) is the reference: its state is y = (q_ind,
q̇_ind), and at each call the loops are closed by Newton in Python from the previous solution moved along R.
Either way the constraint residual stays below 1e-12 per length scale, q̇ = R q̇_ind satisfies the velocity
constraints exactly, and q̈_ind comes from the projected equations of `closed_loop`. Results are recomputed
at the output times from the integrated states, in float64.

    result = simulate(model, t_end=2.0, method="CVODES", rtol=1e-10, atol=1e-12)
    result.columns()   # [(name, unit, values), ...]
    mbstudio.io.time_series.save_simulation(result, "run.csv")   # or .npz
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from .. import __version__, progress
from ..dynamics.closed_loop import (
    JointReactions,
    closed_loop_forward_dynamics,
    joint_reactions,
    named_reactions,
)
from ..dynamics.engine import Engine, canonical_text, engine, fits_engine
from ..dynamics.forces import AppliedForces, gravity_potential, kinetic_energy
from ..kinematics.assembly import newton
from ..kinematics.ball_states import StateMap, float_where
from ..kinematics.mechanism import Mechanism
from ..kinematics.tree import BodyMotion
from ..model import Model
from ..model.document import GROUND
from ..model.errors import AssemblyError, ModelError
from ..model.hashing import text_hash
from ..model.typed_numbers import coordinate_dimensions, read_pairs
from ..model.validation import MAGNITUDE_MAX, check_dynamics
from .charts import ChartWatch, decided, singularity
from .contact_depth import too_deep
from .crossing import CrossingWatch, cross, crossing_due, start_rank
from .integrators import CHART_REASON, CHUNKS, CROSSING_REASON, CVODES, SCIPY, IntegrationError, StepLimit, integrate
from .law_state_runs import refuse_law_states, with_law_states
from .measures import measure_columns
from .method_choice import AUTO, chosen_method
from .monitors import dissipated_energy, energy_scale, monitor_columns, motion_monitors, nonconservative_power
from .starts import clear_starts as clear_starts
from .starts import document_start, own_start, started
from .stops import Contact, annotate, has_impact_stops, run_impacts

METHODS = (*CVODES, *SCIPY)
CONTACT_MODELS = ("compliant", "rigid")  # docs/contact.md
RIGID_STEP = 1e-3  # s: the rigid contacts' default step (simulation/rigid_stepping.py)
MAX_REPARTITIONS = 20  # decisions on the coordinates in a row without the run advancing
ROUNDING_FLOOR = 1e3  # x the tolerance: a Newton stalled this close is at float64's rounding, not lost
# Default tolerances: a conservative model's energy drifts at most 1e-7 of its scale over 2 s (measured with CVODES,
# relative to max(|E(0)|, max kinetic energy): four-bar 4.6e-9, slider-crank, gripper 4.8e-9, PUMA 9.5e-10,
# balloon 1.3e-9; at 1e-8 / 1e-10 the four-bar drifted 2.6e-7, and 1.3e-6 on another machine)
RTOL, ATOL = 1e-10, 1e-12
SENSITIVE = 1e4  # x rtol: a checked accuracy beyond it is noted as a sensitive motion (smooth ones: 1e1-1e3)
RIGID_COMPANION = 2.0  # the rigid contacts' companion run: twice the step (first order: the difference is the error)
RIGID_SENSITIVE = 1e-2  # of the state's scale: a rigid run's estimate beyond it is noted as a sensitive motion
# every run's error estimate: a companion run at LOOSER times both tolerances (the rigid contacts' step: twice); the
# error falls about in proportion to the tolerances, so their difference over LOOSER - 1 estimates the run's error
# (docs/accuracy.md: 0.32x to 16x the true error on the samples and spatial chains of 24 to 100 links, 48x where
# the Delta 3R[2US] crosses singular configurations)
LOOSER = 10.0
CLOSURE_LIMIT = 1e-9  # per length scale: above it the Newton steps inside the state equation lost the loops


class Cancelled(progress.Cancelled):
    """The simulation was cancelled; `time` is the simulated time reached."""

    def __init__(self, reached: float) -> None:
        self.time = reached
        super().__init__(f"simulation cancelled at t = {reached:.6g} s")


@dataclass
class Provenance:
    model_hash: str  # sha256 of the canonical model text
    method: str
    rtol: float
    atol: float
    seconds: float  # wall-clock time of the integration and post-processing
    version: str
    rhs_evaluations: int  # every one, those of the steps that failed included
    precision: str = "float64"
    # the independent coordinates integrated, from the times given: decided from the state alone (charts.py)
    charts: list[tuple[float, tuple[str, ...]]] = field(default_factory=list)
    # with check_accuracy: the largest difference of the coordinates and rates from a run at a tenth of rtol and
    # atol, each relative to the scale of its kind over the run (`state_difference`): an estimate of the global
    # error reached (the tighter run's own is about ten times smaller)
    accuracy: float | None = None
    # on every run (unless error_estimate=False): the largest difference of the coordinates and rates from a companion
    # run at LOOSER times the tolerances, over LOOSER - 1, relative to the scale of their kind (`state_difference`):
    # an estimate of the global error reached, an order of magnitude; None where the companion run stopped
    error_estimate: float | None = None
    error_estimate_cpu_seconds: float | None = None  # the companion run's CPU time, apart from cpu_seconds (the run's)
    cpu_seconds: float | None = None  # this process's CPU time over the same span (a shared machine's wall time varies)
    # the estimated local errors of CVODES' steps summed over the run, relative to the scale of their kind
    # (`local_error_sum`): the global error where errors do not grow along the motion; None where not every step
    # was our own driver's (cvodes_driver.py)
    local_error_sum: float | None = None
    crossings: list[str] = field(default_factory=list)  # singular configurations crossed, and how (crossing.py)
    law_states: list[str] = field(default_factory=list)  # the force laws' own states integrated with the motion
    # why the model chose the method where the caller left it to it (method_choice.py: CVODES-BDF for compliant
    # contacts); empty where the caller chose it, or CVODES applies
    method_reason: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class SimulationResult:
    """Time series at the output times `t` (K,). Arrays are (K, ...) float64."""

    t: np.ndarray
    coordinates: list[str]
    units: list[str]  # per coordinate: "rad" or "m"
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    poses: dict[str, tuple[np.ndarray, np.ndarray]]  # body label -> (R (K, 3, 3), origin (K, 3))
    kinetic: np.ndarray
    potential: np.ndarray
    residual: np.ndarray  # max |Φ| over the loop equations
    actuators: dict[str, tuple[str, np.ndarray]]  # actuator name -> (its coordinate, force (K,))
    reactions: JointReactions
    provenance: Provenance | None = None  # set once the run is complete
    measures: list[tuple[str, str, np.ndarray]] = field(default_factory=list)  # the document's (measures.py)
    monitors: list[tuple[str, str, np.ndarray]] = field(default_factory=list)  # centre of mass, momenta, energy balance
    stops: list[tuple[str, str, np.ndarray]] = field(default_factory=list)  # stop:<coordinate> forces (stops.py)
    contacts: list[Contact] = field(default_factory=list)  # the stops' impacts and contacts, in time order
    notes: list[str] = field(default_factory=list)  # what a person should know about the run (limits passed, ...)
    law_states: list[tuple[str, str, np.ndarray]] = field(default_factory=list)  # the force laws' own states

    @property
    def total(self) -> np.ndarray:
        return self.kinetic + self.potential

    @property
    def energy_drift(self) -> float:
        """The largest change of the energy balance E + dissipated (E where the run has no monitors) over the run,
        relative to max(|E(0)|, the largest kinetic energy): what the integration's error does to a quantity the
        mechanics keeps constant (RTOL, ATOL keep it below 1e-7 over 2 s on the conservative samples)."""
        balance = next((v for name, _, v in self.monitors if name == "energy_balance"), self.total)
        scale = max(abs(float(self.total[0])), float(np.abs(self.kinetic).max(initial=0.0)), 1e-300)
        return float(np.abs(balance - balance[0]).max(initial=0.0)) / scale

    def columns(self) -> list[tuple[str, str, np.ndarray]]:
        """Every series as (name, unit, values (K,)), in a fixed order: time, coordinates, velocities,
        accelerations, energies, residual, actuator forces, joint reactions, the document's measures, the invariant
        monitors (monitors.py), body poses."""
        out = motion_columns(
            self.t, self.coordinates, self.units, (self.q, self.qd, self.qdd), self.kinetic, self.potential
        )
        out += [("constraint_residual", "m|1", self.residual)]
        force_unit = dict(zip(self.coordinates, ("N m" if u == "rad" else "N" for u in self.units), strict=True))
        out += [
            (f"actuator:{name}", force_unit[coordinate], values)
            for name, (coordinate, values) in self.actuators.items()
        ]
        out += self.stops
        out += [
            (f"reaction:{name}", unit, self.reactions.values[:, r])
            for r, (name, unit) in enumerate(zip(self.reactions.names, self.reactions.units, strict=True))
        ]
        out += self.measures + self.monitors + self.law_states
        for label, (R, p) in self.poses.items():
            out += [(f"body{label}.{axis}", "m", p[:, i]) for i, axis in enumerate("xyz")]
            out += [(f"body{label}.R{i + 1}{j + 1}", "1", R[:, i, j]) for i in range(3) for j in range(3)]
        return out


# a coordinate's value, rate and acceleration are named NAME, d_NAME and dd_NAME in every table and on the command
# line (--at, ensembles, linear models, FMUs), as the model file reserves them (docs/file-format.md)
RATE_PREFIXES = ("", "d_", "dd_")


def motion_columns(t, coordinates: list[str], units: list[str], states: tuple, kinetic, potential) -> list:
    """Time, the coordinates, their rates and accelerations (`states` = (q, q̇, q̈), (K, n) each) and the
    energies, as (name, unit, values) columns: the first columns of every motion, whichever route computed it."""
    out = [("t", "s", t)]
    for prefix, per_second, values in zip(RATE_PREFIXES, ("", "/s", "/s^2"), states, strict=True):
        out += [
            (f"{prefix}{name}", unit + per_second, values[:, k])
            for k, (name, unit) in enumerate(zip(coordinates, units, strict=True))
        ]
    return out + [
        ("kinetic_energy", "J", kinetic),
        ("potential_energy", "J", potential),
        ("total_energy", "J", kinetic + potential),
    ]


def _should_stop(cancel) -> Callable[[], bool]:
    if cancel is None:
        return lambda: False
    return cancel.is_set if isinstance(cancel, threading.Event) else cancel


class _Dynamics:
    """The right-hand side: closes the loops from the last solution, then solves for q̈_ind."""

    def __init__(self, mech: Mechanism, forces: AppliedForces, clock: Clock | None) -> None:
        self.mech, self.forces, self.clock = mech, forces, clock
        self.ind = list(mech.partition.independent)
        self.states = StateMap(mech.tree, self.ind, self.ind)  # y = (q_ind, q̇_ind), balls as quaternions
        self.q = mech.assemble(None)
        self.R = mech.r_matrix(self.q)
        self.history: list[tuple[float, np.ndarray, np.ndarray]] = []  # (t, q, R) of every call

    @property
    def calls(self) -> int:
        return len(self.history)

    def predict(self, q: np.ndarray, R: np.ndarray, q_ind: np.ndarray) -> np.ndarray:
        """First-order guesses q + R Δq_ind (N, n) for the independent values q_ind (N, n_ind)."""
        return q + (R * (q_ind - q[:, self.ind])[:, None, :]).sum(axis=2)

    def close_loops(self, q_ind: np.ndarray, guess: np.ndarray) -> np.ndarray:
        """Newton to a residual of 1e-12 per length scale (a decade above the assembly's default, which far
        from the starting configuration can lie below the rounding floor); `assemble` when that fails, for its
        continuation and its message naming the loop."""
        guess = guess.copy()
        guess[:, self.ind] = q_ind
        tol = 1e-12 * self.mech.length_scale
        q, report = newton(self.mech, guess, tol=tol)
        if (report.residual <= ROUNDING_FLOOR * tol).all():  # converged, or stalled at float64's rounding
            return q
        return self.mech.assemble(q_ind, guess=guess)

    def assemble_at(self, t: np.ndarray, q_ind: np.ndarray) -> np.ndarray:
        """Close the loops at the output times at once (one batched Newton), each from the prediction of the
        right-hand-side call nearest in time."""
        nearest = nearest_calls(np.array([h[0] for h in self.history]), t)
        q = np.concatenate([self.history[i][1] for i in nearest])
        R = np.concatenate([self.history[i][2] for i in nearest])
        return self.close_loops(q_ind, self.predict(q, R, q_ind))

    def __call__(self, t: float, y: np.ndarray) -> np.ndarray:
        """ẏ at y = (q_ind, q̇_ind, then the force laws' own states z)."""
        if self.clock is not None:
            self.clock(t)
        y, z = y[None, : self.states.size], y[None, self.states.size :]
        q_ind, v = self.states.unpack(y, float_where)
        self.q = self.close_loops(q_ind, self.predict(self.q, self.R, q_ind))
        self.R = self.mech.r_matrix(self.q)
        self.history.append((t, self.q, self.R))
        qd = (self.R * v[:, None, :]).sum(axis=2)
        Q = self.forces.generalized(t, self.q, qd, z)
        qdd = closed_loop_forward_dynamics(self.mech, self.q, qd, Q, self.R)
        rates = self.states.rate(y, q_ind, v, v, qdd)[0]
        return np.concatenate([rates, self.forces.state_rates(t, self.q, qd, z)[0]]) if z.size else rates


def nearest_calls(calls: np.ndarray, t: np.ndarray) -> np.ndarray:
    """For each output time, the index of the call nearest in time: by sorting, so memory grows with calls +
    outputs, not with their product."""
    order = np.argsort(calls, kind="stable")
    right = np.clip(np.searchsorted(calls[order], t), 0, len(order) - 1)
    left = np.maximum(right - 1, 0)
    closer_left = np.abs(calls[order][left] - t) <= np.abs(calls[order][right] - t)
    return order[np.where(closer_left, left, right)]


def _report(rhs, t: float) -> None:
    """Progress in steps of 1 % (the integrator also evaluates slightly ahead; never beyond 1)."""
    fraction = min(t / rhs.t_end, 1.0) if rhs.t_end > 0 else 1.0
    if rhs.progress is not None and fraction >= rhs.reported + 0.01:
        rhs.reported = fraction
        rhs.progress(fraction)


def parse_velocities(pairs: Iterable[str], kinds: Mapping[str, str], plain_sizes=None) -> dict[str, float]:
    """'NAME=VALUE' texts (the command line's --velocity, the Simulate dialog's field) as rates at t = 0 of the
    independent coordinates, whose joint motions `kinds` gives: '6.28' in SI (or in the unit of SI size
    plain_sizes[NAME]), '60 rpm' converted; a ModelError names a coordinate that is not independent or a value
    that is not a finite rate."""
    dimensions = coordinate_dimensions(kinds, kinds, "rate")
    return read_pairs("velocities", pairs, dimensions, plain_sizes)


def initial_velocities(given: Mapping[str, float], kinds: Mapping[str, str]) -> np.ndarray:
    """The rates at t = 0 of the independent coordinates (kinds' names, in order), 0 where none is given."""
    parse_velocities([f"{name}={value}" for name, value in given.items()], kinds)  # the same checks
    return np.array([float(given.get(name, 0.0)) for name in kinds])


def _velocities(given, mech: Mechanism) -> np.ndarray:
    """The independent velocities a caller gave, as an array of one finite value per independent coordinate; a
    ValueError naming the count and the coordinates otherwise (never numpy's broadcast error from deep inside)."""
    names = list(mech.independent)  # their names
    try:
        values = np.asarray(given, dtype=float)
    except (TypeError, ValueError):
        values = np.full(0, np.nan)
    if values.shape != (len(names),) or not np.isfinite(values).all():
        raise ValueError(
            f"velocities: {given!r} is not one finite value (rad/s or m/s) for each of the {len(names)} independent "
            f"coordinates ({', '.join(names)})"
        )
    return values


def simulate(
    model: Model | Mechanism,
    t_end: float,
    method: str | None = AUTO,
    rtol: float = RTOL,
    atol: float = ATOL,
    samples: int = 201,
    t_eval: np.ndarray | None = None,
    velocities: np.ndarray | None = None,
    progress: Callable[[float], None] | None = None,
    cancel: threading.Event | Callable[[], bool] | None = None,
    compiled: bool = True,
    check_accuracy: bool = False,
    budget: float | None = None,
    contact: str = "compliant",
    step: float | None = None,
    error_estimate: bool = True,
    finished: Callable[[SimulationResult], None] | None = None,
) -> SimulationResult:
    """Integrate the document's motion from its initial coordinates (and the given independent velocities,
    default rest) over [0, t_end] with CVODES (Adams; "CVODES-BDF" for stiff motions) or scipy's solve_ivp
    (RK45, DOP853, Radau, BDF); "auto" (or None, the default) chooses from the model: CVODES-BDF where it has
    compliant contacts, else CVODES (method_choice.py; Provenance.method_reason says why). Results at `samples`
    equally spaced times or at `t_eval` (from t = 0).
    `progress(fraction)` is called as time advances; `cancel` (an Event or a callable returning
    True) stops the run with `Cancelled`. Raises ValueError for an unknown method, RuntimeError when the
    integrator stops early. `compiled` evaluates the right-hand side on the compiled engine
    (dynamics/engine.py); False keeps the numpy path, the reference (scipy methods only). `check_accuracy` runs
    the motion again at a tenth of rtol and atol and reports the difference (Provenance.accuracy): what the
    tolerances gave, which they alone do not say (they bound each step's local error, not the global one).
    `error_estimate` (on unless False) runs it again at ten times rtol and atol, at about 0.8 times the evaluations,
    and files a ninth of the difference as Provenance.error_estimate, an order of magnitude (docs/accuracy.md).
    `budget` (s, wall clock) stops a run that takes longer with a RuntimeError; a function of time (an actuator's
    formula, say) that leaves ±1e12 within the run (checked at fixed times before it starts) refuses it with one
    naming the element, the time and the value.
    `contact="rigid"` steps the contact elements as rigid contacts with restitution (simulation/rigid_stepping.py,
    steps of at most `step` s, default 1 ms) instead of integrating their compliant forces; trees and closed loops.
    `finished(result)` receives the run once it is complete, before the companion runs of the error estimate and of
    `check_accuracy`: a caller cancelled during them keeps the run (their figures are then missing)."""
    if contact not in CONTACT_MODELS:
        raise ValueError(f"unknown contact model {contact!r}; choose one of {', '.join(CONTACT_MODELS)}")
    document = model.model if isinstance(model, Mechanism) else model
    choice = chosen_method(document, method, contact)  # the companion runs below take the method chosen
    method = choice.method
    if method not in METHODS:
        raise ValueError(f"unknown integration method {method!r}; choose one of {', '.join((AUTO, *METHODS))}")
    if method in CVODES and not compiled:
        raise ValueError(f"{method} steps natively on the compiled engine: use compiled=True or a scipy method")
    start, cpu = time.perf_counter(), time.process_time()
    text = canonical_text(document)
    if not started(text):  # else checked when this text was started, here or where its start was filed (0.3 ms)
        check_dynamics(document)  # a massless subtree: refused by name, not NaN
    mech, forces, q0 = own_start(model) if isinstance(model, Mechanism) else document_start(text)
    times = np.linspace(0.0, t_end, samples) if t_eval is None else np.asarray(t_eval, dtype=float)
    k = len(mech.independent)
    v0 = np.zeros(k) if velocities is None else _velocities(velocities, mech)
    if compiled and not fits_engine(document):  # a very large model: the numpy path, with a scipy method
        compiled, method = False, "DOP853" if method in CVODES else method
    own = None if isinstance(model, Mechanism) else mech  # the document's partition: the engine's own
    y0 = np.concatenate([q0[0], v0])
    impacts, charts, crossings = None, [], []
    check_time_functions(forces, times[-1])
    run_progress, companion_progress = _phases(progress, error_estimate)
    clock = Clock(times[-1], run_progress, cancel, budget) if progress or cancel or budget else None
    if forces.state_names and (contact == "rigid" or has_impact_stops(mech.model)):
        refuse_law_states(forces, "rigid contacts or impact stops")
    if contact == "rigid":
        result, calls = _rigid_result(mech, times, q0[0], v0, step or RIGID_STEP, clock)
    elif has_impact_stops(mech.model):  # events: simulation/stops.py
        impacts = _run_impacts(mech, times, y0, method, rtol, atol, clock, text, compiled)
        (q, qd, qdd), method, calls = impacts.states, impacts.method, impacts.calls
        result = full_series(mech, forces, times, q, qd, qdd, forces.generalized(times, q, qd) + impacts.holding)
    elif compiled:
        scale = energy_scale(mech) if forces.elements else 0.0  # without force elements no work is done
        from .cvodes_driver import kept  # ctypes: for the compiled runs

        with kept() as pieces:  # the local errors of CVODES' steps (Provenance.local_error_sum)
            run = _run_compiled(mech, times, y0, method, rtol, atol, clock, text, own, scale)
        calls, charts, crossings = run.calls, run.charts, run.crossings
        if run.law_states is None:
            result = compiled_series(run.engine, mech, forces, times, *run.states, work=run.work)
        else:
            result = law_state_result(mech, forces, times, *run.states, run.law_states, run.work)
    else:
        states, calls = _run_numpy(mech, forces, times, v0, method, rtol, atol, clock)
        result = series(mech, forces, times, *states[:2], z=states[2])
    annotate(result, mech, forces, impacts)
    result.notes += too_deep(forces, result.t, result.q)
    if run_progress is not None:
        run_progress(1.0)
    seconds = time.perf_counter() - start
    charts = [(float(t), names) for t, names in charts]
    result.provenance = Provenance(text_hash(text), method, rtol, atol, seconds, __version__, calls, charts=charts)
    result.provenance.crossings = crossings
    result.provenance.method_reason = choice.reason
    result.provenance.law_states = [name for name, _, _ in result.law_states]
    result.notes += crossings
    result.provenance.cpu_seconds = time.process_time() - cpu
    if compiled and impacts is None and contact != "rigid":
        result.provenance.local_error_sum = local_error_sum(pieces, result, calls, mech.length_scale)
    if contact == "rigid":
        result.provenance.method = f"Moreau-Jean (rigid contacts, steps <= {step or RIGID_STEP:g} s)"
    if finished is not None:
        finished(result)
    options = {"samples": samples, "t_eval": t_eval, "velocities": velocities, "compiled": compiled}
    options |= {"cancel": cancel, "contact": contact, "error_estimate": False}
    if error_estimate:
        looser = {**options, "step": 2 * (step or RIGID_STEP) if contact == "rigid" else step}
        left = None if budget is None else budget - (time.perf_counter() - start)
        if contact == "rigid" or impacts is not None or not compiled:
            companion = functools.partial(simulate, model, t_end, method, rtol * LOOSER, atol * LOOSER, budget=left)
            companion = functools.partial(companion, progress=companion_progress, **looser)
        else:  # the motion alone: (q, q̇) at the outputs, without the series of a result
            clock = Clock(times[-1], companion_progress, cancel, left) if progress or cancel or budget else None
            companion = functools.partial(
                _motion, mech, times, y0, method, rtol * LOOSER, atol * LOOSER, clock, text, own
            )
        _estimate_error(result, companion, contact == "rigid", mech.length_scale, left)
    if progress is not None:
        progress(1.0)
    if check_accuracy:
        options["budget"] = budget
        options["step"] = (step or RIGID_STEP) / 10 if contact == "rigid" else step
        _check_accuracy(
            result, lambda: simulate(model, t_end, method, rtol / 10, atol / 10, **options), mech.length_scale
        )
    return result


# the companion run's share of a run's progress bar: at ten times the tolerances it takes 0.6-1.3 times the run's
# CPU (docs/accuracy.md), so the bar gives it somewhat less than half
COMPANION_SHARE = 0.45


def _phases(progress: Callable[[float], None] | None, estimate: bool) -> tuple:
    """The progress callbacks of the run and of its error estimate's companion, one bar for both: the run fills
    the first part, the companion the rest (None, None without a progress callback)."""
    if progress is None or not estimate:
        return progress, None
    share = 1.0 - COMPANION_SHARE
    return (lambda f: progress(share * f)), (lambda f: progress(share + COMPANION_SHARE * f))


@dataclass
class Motion:
    """The coordinates and rates of a run at its outputs, (K, n) each: what `state_difference` compares."""

    q: np.ndarray
    qd: np.ndarray


def _motion(mech, times, y0, method, rtol, atol, clock, text, own) -> Motion:
    """The motion alone of a run on the compiled engine (the companion of the error estimate)."""
    run = _run_compiled(mech, times, y0, method, rtol, atol, clock, text, own)
    return Motion(run.states[0], run.states[1])


def _estimate_error(
    result: SimulationResult, companion: Callable[[], Motion], rigid: bool, length: float, left: float | None
) -> None:
    """Sets result.provenance.error_estimate from the `companion()` run at LOOSER times the tolerances (`rigid`:
    at RIGID_COMPANION times the rigid contacts' step): their difference over that factor - 1, the run's error where
    it falls in proportion to them; a note where the companion stops, or where the estimate says the motion is
    sensitive."""
    factor = RIGID_COMPANION if rigid else LOOSER
    if left is not None and left <= 0:
        result.notes.append("error not estimated: the time budget was spent by the run")
        return
    cpu = time.process_time()
    try:
        other = companion()
    except (RuntimeError, ModelError) as error:
        result.notes.append(f"error not estimated: the run at {factor:g} times the tolerances stopped ({error})")
        return
    estimate = state_difference(other, result, length) / (factor - 1.0)
    result.provenance.error_estimate = estimate
    result.provenance.error_estimate_cpu_seconds = time.process_time() - cpu
    if rigid:  # Moreau's steps: the tolerances do not apply, a percent of the scale is large
        if estimate > RIGID_SENSITIVE:
            result.notes.append(
                f"error estimate {estimate:.1g} of the state's scale: the motion is sensitive to the step (contacts "
                "that begin or end at other steps, say); a run at a tenth of the step (--check-accuracy) checks it"
            )
    elif estimate > SENSITIVE * result.provenance.rtol:
        result.notes.append(
            f"error estimate {estimate:.1g} of the state's scale: far more than the tolerances, the motion is "
            "sensitive (near a singular configuration, say); a run at a tenth of them (--check-accuracy) checks it"
        )


def local_error_sum(pieces: list, result: SimulationResult, calls: int, length: float) -> float | None:
    """The sum over CVODES' steps of each coordinate's and independent rate's estimated local error (pieces: the
    driver's `Kept`), relative to the scale of its kind as `state_difference` measures it: a bound on the global
    error where errors do not grow along the motion (docs/accuracy.md: 0.6-2.8 times the true error on the smooth
    samples and chains), far below it where they do (a chaotic chain: 1e-5 of it). None unless every evaluation of
    the run was the driver's, in pieces that reached their ends, on states (q, q̇_ind) as they are."""
    if not pieces or sum(p.evaluations for p in pieces) != calls or any(p.flag or p.layout is None for p in pieces):
        return None
    eq, eqd = np.zeros(result.q.shape[1]), np.zeros(result.qd.shape[1])
    for piece in pieces:
        n, independent = piece.layout
        eq[:n] += piece.local_errors[:n]
        eqd[list(independent)] += piece.local_errors[n : n + len(independent)]
    return state_difference(Motion(result.q + eq, result.qd + eqd), result, length)


def _check_accuracy(result: SimulationResult, tighter: Callable[[], SimulationResult], length: float) -> None:
    """Sets result.provenance.accuracy from the run `tighter()` at a tenth of the tolerances, with a note; a note
    where that run stops, or chose other coordinates (then the motion is sensitive and the difference shows it)."""
    try:
        other = tighter()
    except RuntimeError as error:
        result.notes.append(f"accuracy not checked: the run at a tenth of the tolerances stopped ({error})")
        return
    accuracy = state_difference(result, other, length)
    result.provenance.accuracy = accuracy
    sensitive = (
        ": far more than the tolerances, the motion is sensitive (near a singular configuration, say); a shorter "
        "run, or tighter tolerances, reach further"
        if accuracy > SENSITIVE * result.provenance.rtol
        else ""
    )
    result.notes.append(
        f"accuracy: the coordinates and rates differ by {accuracy:.2g} of their scale from a run at a tenth of "
        f"the tolerances{sensitive}"
    )
    if [names for _, names in other.provenance.charts] != [names for _, names in result.provenance.charts]:
        result.notes.append(
            "the run at a tenth of the tolerances chose other independent coordinates on the way: the motion is "
            "sensitive there (near a singular configuration)"
        )


def state_difference(a: SimulationResult | Motion, b: SimulationResult, length: float | None = None) -> float:
    """The largest difference between two runs' coordinates and rates at their samples, each relative to the
    scale of its kind (angles, lengths; their rates) over run b: the largest magnitude of that kind, at least
    1e-300. The scale of the state, not of each coordinate: a coordinate that stays near zero is measured
    against the motion's size. With `length` (m, the mechanism's length scale) a kind is measured against the
    motion's size in its unit: the largest of its own magnitude and the other kind's converted by `length` (the
    suspension's damper slides at 2e-6 m/s while its arms swing at 0.2 rad/s, 0.1 m/s at its length scale)."""
    units = np.array(b.units)
    worst = 0.0
    for x, y in ((a.q, b.q), (a.qd, b.qd)):
        magnitude = {unit: float(np.abs(y[:, units == unit]).max(initial=0.0)) for unit in ("rad", "m")}
        if length is not None:
            magnitude = {
                "rad": max(magnitude["rad"], magnitude["m"] / length),
                "m": max(magnitude["m"], magnitude["rad"] * length),
            }
        for unit in set(b.units):
            columns = units == unit
            scale = max(magnitude[unit], 1e-300)
            worst = max(worst, float(np.abs(x[:, columns] - y[:, columns]).max(initial=0.0)) / scale)
    return worst


def _rigid_result(mech, times, q0, v0, step, clock) -> tuple[SimulationResult, int]:
    """A rigid-contact run's result and its number of steps: every run's series, the contacts' measures from the
    impulses, the energies without the contacts' compliant potential (simulation/rigid_stepping.py)."""
    from .rigid_stepping import rigid_run

    others, run, rigid = rigid_run(mech, times, q0, v0, step, clock)
    result = full_series(mech, others, times, run.q, run.qd, run.qdd)
    result.measures = [(name, unit, rigid.get(name, values)) for name, unit, values in result.measures]
    result.notes.append(f"rigid contacts: Moreau's midpoint time stepping, {run.steps} steps of at most {step:g} s "
                        "(the integration method and tolerances do not apply)")  # fmt: skip
    return result, run.steps


def _run_impacts(mech, times, y0, method, rtol, atol, clock, text, compiled):
    """A run through the impacts of impact stops, on the compiled engine only."""
    if not compiled:
        raise ModelError(
            "stops",
            "impact stops are simulated on the compiled engine only",
            f"{mech.n} coordinates" if not fits_engine(mech.model) else "compiled=False",
            "compliant stops (a force element on either path), or the compiled engine",
        )
    return run_impacts(mech, text, times, y0, method, rtol, atol, clock)


@dataclass
class CompiledRun:
    """A run on the compiled engine: (q closed, q̇, q̈) at the outputs, the evaluations, the first engine, the work
    of the non-conservative forces W (K,) or None, and the coordinates chosen along the way as (time, independent
    coordinates) from the start."""

    states: tuple[np.ndarray, np.ndarray, np.ndarray]
    calls: int
    engine: Engine
    work: np.ndarray | None
    charts: list[tuple[float, tuple[str, ...]]]
    crossings: list[str] = field(default_factory=list)  # what each crossing of a singular configuration did
    law_states: np.ndarray | None = None  # the force laws' own states at the outputs (K, count), where they have any


def _run_compiled(mech, times, y0, method, rtol, atol, clock, text, own=None, work_scale=0.0) -> CompiledRun:
    """The run from y0 = (q, q̇_ind) on the compiled engine (simulation/integrators.py). Where the loop equations
    and independent coordinates in use lose conditioning (charts.py: a mechanism with redundant constraints, like
    the Delta, where its full set keeps its rank), a decision is taken from the state there, and the run goes on
    with the engine of the choice made. W is integrated with the motion by CVODES, in units of `work_scale` (> 0;
    integrators.py), over a run in one piece; else the caller integrates the power over the outputs."""
    eng = first = engine(mech.model, text, mech=own)
    y0 = start_state = eng.pack(y0[: mech.n], y0[mech.n :])  # (q, q̇_ind) in the engine's layout
    pieces, calls, done, t0, stuck, crossings = [], 0, 0, 0.0, 0, []
    charts = [(0.0, tuple(eng.mech.independent))]
    # one step limit over the run's pieces, where coordinates can turn singular between check points (closed loops);
    # a tree's CVODES never stalls so, and a stiff impact after a long free flight needs many times its steps so far
    limit = StepLimit() if eng.mech.partition.dependent else None
    terms = None  # the compiled loop terms, once the run has crossed a singular configuration
    rank = start_rank(eng, start_state)  # the loop equations' rank-th singular value at the start
    while True:
        try:
            watch = CrossingWatch(ChartWatch(eng, y0), eng, t0, y0, rank, terms is not None, first)
            y, more, work = integrate(eng, times[done:], y0, method, rtol, atol, clock, t0, watch, work_scale, limit)
        except IntegrationError as error:
            calls += error.calls
            if error.state is None:
                raise RuntimeError(str(error)) from None
            if eng.law_states:
                refuse_law_states(AppliedForces(eng.mech), "a change of independent coordinates during the run")
            if error.reason == CROSSING_REASON or crossing_due(eng, error.state, rank, first):
                # no coordinates can carry the motion there
                if len(error.outputs):
                    pieces.append(full_states(eng, times[done : done + len(error.outputs)], error.outputs))
                done += len(error.outputs)
                q_start = first.closed(start_state[None])[0][0]
                crossing = cross(eng, error.time, error.state, times[done:], (rtol, atol), clock, q_start)
                pieces.append(crossing.states)
                done, calls = done + len(crossing.states[0]), calls + crossing.calls
                crossings.append(crossing.note)
                terms = crossing.terms
                if done == len(times):
                    return _joined(pieces, calls, first, None, charts, crossings)
                state = eng.pack(crossing.q, crossing.qd[eng.independent])
                error = IntegrationError(crossing.end, CHART_REASON, state)
            decision = decided(
                eng, error.time, error.state, text, first.mech.partition, terms, None if rank is None else first
            )
            stuck = stuck + 1 if error.time <= t0 + 1e-9 * times[-1] else 0
            watched = error.reason in (CHART_REASON, CROSSING_REASON)
            if stuck > MAX_REPARTITIONS or (not watched and not decision.changed):
                raise RuntimeError(str(error) + singularity(eng, error.state, start_state)) from None
            if len(error.outputs):
                pieces.append(full_states(eng, times[done : done + len(error.outputs)], error.outputs))
            done += len(error.outputs)
            eng, y0, t0 = decision.engine, decision.state, decision.time
            if decision.changed:
                charts.append((t0, tuple(eng.mech.independent)))
            continue
        pieces.append(full_states(eng, times[done:], y))
        run = _joined(pieces, calls + more, first, work if len(pieces) == 1 else None, charts, crossings)
        run.law_states = eng.laws_states(y) if eng.law_states else None
        return run


def _joined(pieces: list, calls: int, first: Engine, work, charts: list, crossings: list[str]) -> CompiledRun:
    """The run of the pieces' states (q, q̇, q̈), one after the other."""
    states = tuple(np.concatenate(parts) for parts in zip(*pieces, strict=True))
    return CompiledRun(states, calls, first, work, charts, crossings)


def full_states(eng: Engine, times: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, q̇, q̈) of every tree coordinate, closed, from states y (K, n + n_ind) in the engine's own independent
    coordinates, in one native call; an AssemblyError where the loops opened."""
    q, qd, qdd, residual = eng.outputs(times, y)
    if residual.max(initial=0.0) > CLOSURE_LIMIT * eng.mech.length_scale:
        at = times[int(residual.argmax())]
        raise AssemblyError(f"the loops opened during the motion: residual {residual.max():.3g} at t = {at:.6g} s")
    return q, qd, qdd


def _run_numpy(mech, forces, times, v0, method, rtol, atol, clock):
    """The reference path: numpy right-hand side with Newton in Python."""
    from scipy.integrate import solve_ivp  # 0.3 s to import: for the runs that use it

    rhs = _Dynamics(mech, forces, clock)
    rest = np.zeros(len(forces.state_names))  # the force laws' own states start at rest
    solution = solve_ivp(
        rhs,
        (0.0, times[-1]),
        np.concatenate([rhs.states.pack(rhs.q[:, rhs.ind], v0[None, :])[0], rest]),
        method=method,
        rtol=rtol,
        atol=atol,
        t_eval=times,
    )
    if not solution.success:
        reached = solution.t[-1] if solution.t.size else 0.0
        raise RuntimeError(f"the integration stopped at t = {reached:.6g} s: {solution.message}")
    q_ind, v = rhs.states.unpack(solution.y.T[:, : rhs.states.size], float_where)
    return (rhs.assemble_at(solution.t, q_ind), v, solution.y.T[:, rhs.states.size :]), rhs.calls


class Clock:
    """Progress in steps of 1 % and cancel, called with the simulated time as the integrator advances; with a
    `budget` (s, wall clock) the run stops once it is spent. It changes nothing the run computes, only whether it
    goes on."""

    def __init__(self, t_end: float, progress, cancel, budget: float | None = None) -> None:
        self.t_end, self.progress, self.stop, self.reported = t_end, progress, _should_stop(cancel), 0.0
        self.budget = budget
        self.deadline = None if budget is None else time.perf_counter() + budget

    def __call__(self, t: float) -> None:
        if self.stop():
            raise Cancelled(t)
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise RuntimeError(
                f"the simulation used its time budget of {self.budget:g} s (wall clock) and was stopped at "
                f"t = {t:.6g} s; give a larger budget, or end the run sooner"
            )
        _report(self, t)


def check_time_functions(forces: AppliedForces, t_end: float) -> None:
    """The model's functions of time (actuator formulas and tables, the time-varying rests of joint springs, point
    forces) checked before the run at the fixed times k t_end / CHUNKS (k = 0 .. CHUNKS), each function over them
    in one call: a RuntimeError naming the element, the earliest such time and the value where one leaves
    ±MAGNITUDE_MAX or is not finite (checked at load only at t = 0, so that (1 + t)**1024 ran on for minutes).
    A run of the same document's forces over the same time passed it already: not checked again."""
    passed = _TIMES_CHECKED.setdefault(forces, set())
    if t_end in passed:
        return
    times = t_end * np.arange(CHUNKS + 1) / CHUNKS
    beyond = [
        (found, law.name)
        for law in forces.laws
        for function in law.time_functions()
        if (found := _first_beyond(function, times)) is not None
    ]
    if beyond:
        (t, value), name = min(beyond, key=lambda b: b[0][0])
        raise RuntimeError(
            f"the force element '{name}' reaches {value:.3g} at t = {t:.6g} s, outside ±{MAGNITUDE_MAX:g} (SI "
            "units): its function of time runs away; bound it, or end the run before"
        )
    passed.add(t_end)


_TIMES_CHECKED: weakref.WeakKeyDictionary[AppliedForces, set[float]] = weakref.WeakKeyDictionary()


def _first_beyond(value_at: Callable, times: np.ndarray) -> tuple[float, float] | None:
    """The first of the times (increasing) where the function's value leaves ±MAGNITUDE_MAX, and the value; None
    where it stays within. One time after another where evaluating them at once fails (a value out of float64's
    range: the evaluator's message then names it, unless the bound is passed before)."""
    try:
        with np.errstate(all="ignore"):
            values = np.asarray(value_at(times), dtype=float).ravel()
    except ModelError:
        values = np.full(len(times), np.nan)
        for k, t in enumerate(times):
            with np.errstate(all="ignore"):
                values[k] = float(np.asarray(value_at(np.array([t])), dtype=float).ravel()[0])
            if not abs(values[k]) <= MAGNITUDE_MAX:
                break
    outside = np.flatnonzero(~(np.abs(values) <= MAGNITUDE_MAX))
    return (float(times[outside[0]]), float(values[outside[0]])) if len(outside) else None


def series(
    mech: Mechanism,
    forces: AppliedForces,
    t: np.ndarray,
    q: np.ndarray,
    qd_ind: np.ndarray,
    qdd_ind: np.ndarray | None = None,
    z: np.ndarray | None = None,
) -> SimulationResult:
    """Every output quantity at the times t from the assembled coordinates and the independent velocities
    (and accelerations, when the engine gave them already); z the force laws' own states, where they have any."""
    R = mech.r_matrix(q)
    qd = (R * qd_ind[:, None, :]).sum(axis=2)
    Q = forces.generalized(t, q, qd, z)
    if qdd_ind is None:
        qdd_ind = closed_loop_forward_dynamics(mech, q, qd, Q, R)
    if z is not None and z.shape[1]:
        return law_state_result(mech, forces, t, q, qd, mech.accelerations(q, qd, qdd_ind, R), z)
    return full_series(mech, forces, t, q, qd, mech.accelerations(q, qd, qdd_ind, R), Q)


def law_state_result(mech, forces: AppliedForces, t, q, qd, qdd, z: np.ndarray, work=None) -> SimulationResult:
    """The result of a motion whose force laws own states, z (K, count) at the times t: its series at the forces
    they give (simulation/law_state_runs.py)."""
    Q = forces.generalized(t, q, qd, z)
    return with_law_states(motion_result(mech, forces, t, q, qd, qdd, Q, _actuators(forces, t)), mech, forces, z, work)


def compiled_series(
    eng: Engine,
    mech: Mechanism,
    forces: AppliedForces,
    t: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    work: np.ndarray | None = None,
) -> SimulationResult:
    """As `full_series`, the energies, poses, residuals, joint reactions and generalized forces of every sample
    from the engine's compiled series (one native call a sample, where numpy's batch pays its overhead per
    operation and body); the document's measures and the monitors in numpy. `work`: the non-conservative forces'
    work at the samples as integrated with the motion, else their power is integrated over the samples."""
    if eng.mech.partition != mech.partition:  # a mechanism given its own partition: numpy names its reactions
        return full_series(mech, forces, t, q, qd, qdd)
    values = eng.series(t, q, qd, qdd)
    reactions = np.zeros((len(t), mech.constraints.m))
    reactions[:, list(mech.partition.rows)] = values["reactions"]
    poses = values["poses"]
    R = np.swapaxes(poses[:, :, :9].reshape(len(t), -1, 3, 3), 2, 3)  # stored by columns
    kinetic, potential, Q = values["kinetic"], values["potential"], values["Q"]
    state = _body_motion(R, poses, values["rates"]) if mech.model.measures else None  # the measures read it
    dissipated = -work if work is not None else dissipated_energy(t, nonconservative_power(forces, t, q, qd, Q))
    return _result(
        mech,
        (t, q, qd, qdd),
        state,
        poses={label: (R[:, b], poses[:, b, 9:]) for b, label in enumerate(mech.tree.body_labels) if label != GROUND},
        kinetic=kinetic,
        potential=potential,
        residual=np.abs(values["phi"]).max(axis=1) if values["phi"].shape[1] else np.zeros(len(t)),
        actuators=_actuators(forces, t),
        reactions=named_reactions(mech, reactions),
        monitors=monitor_columns(
            values["com"], values["momentum"], values["angular_momentum"], kinetic + potential, dissipated
        ),
    )


def _body_motion(R: np.ndarray, poses: np.ndarray, rates: np.ndarray) -> BodyMotion:
    """The bodies' motion from R (K, bodies, 3, 3) and Engine.series' "poses" and "rates" (K, bodies, 12): computing
    it in numpy instead cost a 2-sample run of the SLA 0.5 ms of its 1.7."""
    bodies = range(R.shape[1])
    per_body = [[rates[:, b, 3 * k : 3 * k + 3] for b in bodies] for k in range(4)]
    return BodyMotion([R[:, b] for b in bodies], [poses[:, b, 9:] for b in bodies], *per_body)


def _actuators(forces: AppliedForces, t: np.ndarray) -> dict[str, tuple[str, np.ndarray]]:
    return {law.name: (law.coordinate, law.prescribed(t)) for law in forces.laws if law.actuated}


def _result(mech: Mechanism, motion: tuple, state=None, **series) -> SimulationResult:
    """A result of the motion (t, q, q̇, q̈) with the series given, the document's measures added (`state`: the
    motion's, mech.motion(q, q̇, q̈), when the caller has it)."""
    t, q, qd, qdd = motion
    units = ["rad" if k == "R" else "m" for k in mech.tree.kinds]
    measures = measure_columns(mech, t, q, qd, qdd, state)
    return SimulationResult(t=t, coordinates=list(mech.coordinates), units=units, q=q, qd=qd, qdd=qdd, **series,
                            measures=measures)  # fmt: skip


def full_series(
    mech: Mechanism,
    forces: AppliedForces,
    t: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    Q: np.ndarray | None = None,
) -> SimulationResult:
    """Every output quantity at the times t from the coordinates and their full rates."""
    Q = forces.generalized(t, q, qd) if Q is None else Q
    return motion_result(mech, forces, t, q, qd, qdd, Q, _actuators(forces, t))


def motion_result(
    mech: Mechanism,
    forces: AppliedForces,
    t: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    Q: np.ndarray,
    actuators: dict[str, tuple[str, np.ndarray]],
) -> SimulationResult:
    """The series of a motion whose state (q, q̇, q̈) is known at the times t, under the tree generalized
    forces Q (actuators included), for the simulation and for a prescribed path alike."""
    phi = np.abs(mech.residual(q))
    kinetic, potential = kinetic_energy(mech, q, qd), gravity_potential(mech, q) + forces.potential(q)
    return _result(
        mech,
        (t, q, qd, qdd),
        poses={k: v for k, v in mech.poses(q).items() if k != GROUND},
        kinetic=kinetic,
        potential=potential,
        residual=phi.max(axis=1) if phi.shape[1] else np.zeros(len(t)),
        actuators=actuators,
        reactions=joint_reactions(mech, q, qd, qdd, Q),
        monitors=motion_monitors(mech, forces, t, q, qd, Q, kinetic + potential),
    )
