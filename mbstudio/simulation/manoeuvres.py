"""Handling manoeuvres on a vehicle with Magic Formula tyres (docs/vehicle.md): each a set of simulations with the
steering servo following a handwheel input, read as the figures of its standard. Axes and signs: ISO 8855 (x
forward, y left, z up; yaw rate positive turning left; roll positive right side down).

- `steady_state`: steady-state circular driving (ISO 4138) by its constant steering-wheel angle method: the
  handwheel held at one angle, one run per forward speed, each until the car settles. Per speed: lateral acceleration
  a_y = V r, yaw rate r, the axles' road-wheel steer angles δ_f, δ_r (each the mean of its wheels' headings less the
  car's yaw), sideslip, roll. Gradients (least squares over the steps, in deg/g): understeer
  K = d(δ_f − δ_r − L r / V)/d a_y, roll d φ/d a_y, sideslip d β/d a_y. (Every run of a manoeuvre is the same
  document started at another speed, so the compiled engine is built once for them all.)
- `constant_radius`: steady-state circular driving (ISO 4138) by its constant-radius method: a circle driver
  (force_laws/driver_law.py) holds the car on a circle of `radius` turning left while the speed controller raises the
  speed slowly from the first to the last speed over the run; read after ENTRY_TIME (the driver takes the car onto
  the circle) while the circle is held (held_readings). Gradients against a_y by least squares over the held
  readings up to LINEAR_RANGE: understeer K from the road-wheel angles as above, the steering-wheel angle gradient
  dδ_H/d a_y and the understeer gradient from it, (dδ_H/d a_y) / i_s − L d(1/R)/d a_y (i_s the overall steering
  ratio at straight ahead, R = V / r the radius driven), roll and sideslip; the lateral acceleration at the limit
  (the largest while held) and, when the circle was lost, the speed and time where, with a note.
- `step_steer`: the handwheel steps (a ramp of `rise` s) at `step_at` s (ISO 7401) at the given speed. Figures:
  the steady yaw-rate gain r_ss/δ_H and r_ss/(δ_f − δ_r), the yaw-rate response time (from 50 % of the input to
  90 % of r_ss), its peak response time and overshoot, the steady lateral acceleration.
- `sine_with_dwell`: the stability test of FMVSS 126 and UN R140: the handwheel follows 0.75 of a sine period at
  `frequency` from `step_at`, holds its extreme for `dwell`, then the period's last quarter; the yaw rate 1.0 s
  and 1.75 s after the steering ends as percentages of its peak after the reversal, and the lateral displacement
  1.07 s after the steering starts.
- `double_lane_change`: ISO 3888-1's course (lanes of 15, 25 and 30 m, the middle one 3.5 m to the left), driven by
  a path driver (force_laws/driver_law.py: a single-point preview of `preview` metres, pure pursuit's gain) in place
  of the steering servo, at the first speed: the largest distance from the course's centre line in each
  lane, the peak yaw rate, lateral acceleration and handwheel angle.

The model is the handling vehicle's: a steering servo whose rest position is the parameter `rack_input`, a
parameter `rack_ratio` (m of rack per rad of handwheel), Magic Formula tyres and a free chassis joint with the
coordinates x, y, yaw, roll (samples/vehicle_handling.mbs). A speed controller (force_laws/speed_controller_law.py)
on the front wheels holds each run's speed (`speed_gain` N s/m; 0 lets the car coast, slowing by about 1 % per
second at 20 m/s); every figure uses the speed at the time it is read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .. import __version__
from ..dynamics.engine import canonical_text
from ..dynamics.forces import AppliedForces
from ..dynamics.spatial_tree import body_inertia
from ..kinematics.mechanism import Mechanism
from ..model import Model
from ..model.document import (
    TYRE_RELAXATIONS,
    CircleDriver,
    JointSpringDamper,
    MagicFormulaTyre,
    PathDriver,
    SpeedController,
)
from ..model.errors import ModelError
from .run import SimulationResult, simulate

KINDS = ("steady_state", "step_steer", "sine_with_dwell", "double_lane_change", "constant_radius")
G = 9.81
DEG_PER_G = G * 180 / math.pi  # rad per (m/s²) in deg/g
RAMP_SMOOTHING = 1e-3  # s: the ramp's corners rounded over about this time (a smooth input steps smoothly)
LATE_YAW_RATE = 1.75  # s after the sine with dwell's end: its last yaw-rate reading
LATERAL_DISPLACEMENT_AT = 1.07  # s after its start: where its lateral displacement is read
ENTRY_TIME = 4.0  # s: the constant-radius run's readings start once the driver has taken the car onto the circle
# the circle counts as held while |radius error| <= the larger of these: 2 % of the radius (the run's own steady
# error on the sample is 1.3 % at 40 m) or 0.5 m (a small circle's settling); past it the car is leaving the circle
HOLD_FRACTION, HOLD_MARGIN = 0.02, 0.5  # 1, m
LINEAR_RANGE = 0.4  # g: the gradients are fitted up to this a_y (ISO 4138's linear range of a passenger car)


@dataclass(frozen=True)
class ManoeuvreOptions:
    """What a manoeuvre runs: its kind (KINDS), the forward speeds [m/s] (steady state: each, in turn; the others: the
    first), the handwheel angle [deg, positive turning left], when and how fast the handwheel moves [s], how long
    each run lasts [s], the sine with dwell's frequency [Hz] and dwell [s], the driver's preview [m] (double lane
    change), the circle's radius [m] (constant radius), the speed controller's gain [N s/m: force at the road per
    m/s of speed error; 0 coasts], the tyres' relaxation ("none" or "first_order" for all four; "" as the model has
    it) and the tolerances."""

    kind: str = "step_steer"
    speeds: tuple[float, ...] = (20.0,)
    handwheel: float = 20.0
    step_at: float = 0.3
    rise: float = 0.1
    duration: float = 3.0
    frequency: float = 0.7
    dwell: float = 0.5
    preview: float = 10.0
    radius: float = 40.0
    speed_gain: float = 20000.0
    relaxation: str = ""
    rtol: float = 1e-6
    atol: float = 1e-8
    samples: int = 301

    def __post_init__(self) -> None:
        checks = (
            ("kind", self.kind in KINDS, ", ".join(KINDS)),
            (
                "speeds",
                0 < len(self.speeds) <= 20 and all(1 <= v <= 100 for v in self.speeds),
                "1 to 20 speeds within 1 to 100 m/s",
            ),
            ("handwheel", -720 <= self.handwheel <= 720, "±720 deg"),
            ("rise", 0 < self.rise < self.duration, "0 < rise < duration"),
            ("step_at", 0 <= self.step_at < self.duration - self.rise, "0 <= step_at < duration - rise"),
            ("duration", 0 < self.duration <= 600, "0 < duration <= 600 s"),
            ("samples", 10 <= self.samples <= 100_000, "10 to 100 000"),
            ("frequency", 0.1 <= self.frequency <= 5, "0.1 to 5 Hz"),
            ("dwell", 0 <= self.dwell <= 5, "0 to 5 s"),
            ("preview", 1 <= self.preview <= 100, "1 to 100 m"),
            ("radius", 5 <= self.radius <= 1000, "5 to 1000 m"),
            ("speed_gain", 0 <= self.speed_gain <= 1e6, "0 (coasting) to 1e6 N s/m"),
            ("relaxation", self.relaxation in ("", *TYRE_RELAXATIONS), "'' (the model's), none or first_order"),
        )
        if self.kind == "sine_with_dwell" and not self.duration >= sine_completion(self) + LATE_YAW_RATE:
            raise ModelError("manoeuvre option 'duration'", "ends before the sine with dwell's last yaw-rate reading",
                             self.duration, f">= {sine_completion(self) + LATE_YAW_RATE:.4g} s")  # fmt: skip
        for name, ok, valid in checks:
            if not ok:
                raise ModelError(f"manoeuvre option '{name}'", "is out of range", getattr(self, name), valid)
        if self.kind == "constant_radius" and not (len(self.speeds) >= 2 and self.duration > 2 * ENTRY_TIME):
            raise ModelError("manoeuvre options 'speeds' and 'duration'", "do not make a constant-radius run",
                             (self.speeds, self.duration), f"a first and a last speed (raised from one to the other) "
                             f"and a duration over {2 * ENTRY_TIME:g} s")  # fmt: skip


@dataclass
class ManoeuvreResult:
    """The figures (name -> (value, unit)), the table of the runs (steady state: one row per step; step steer:
    the time history) as (name, unit, values) columns, and the runs themselves."""

    options: ManoeuvreOptions
    figures: dict[str, tuple[float, str]]
    columns: list[tuple[str, str, np.ndarray]]
    runs: list[SimulationResult] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what a reader of the figures must know (the circle lost)


def steering_model(model: Model, handwheel_deg: float, options: ManoeuvreOptions) -> Model:
    """The model with its steering servo following the handwheel ramp from 0 to `handwheel_deg` (positive turning
    left, which moves the vehicle sample's rack to the right: its steering arms trail the wheel centres)."""
    servo = steering_servo(model)
    out = dataclasses.replace(model)
    rest = f"-rack_ratio*{math.radians(handwheel_deg)!r}*({handwheel_shape(options)})"
    out.forces = [dataclasses.replace(f, rest=rest) if f is servo else f for f in model.forces]
    return out


def steering_servo(model: Model) -> JointSpringDamper:
    """The servo whose rest position is the steering input `rack_input`."""
    servo = [f for f in model.forces if isinstance(f, JointSpringDamper) and str(f.rest).strip() == "rack_input"]
    if len(servo) != 1 or "rack_ratio" not in model.parameter_values():
        raise ModelError(
            f"model '{model.name}'",
            "has no steering input for a manoeuvre",
            None,
            "one joint spring-damper with rest 'rack_input' and a parameter 'rack_ratio' "
            "(samples/vehicle_handling.mbs)",
        )
    return servo[0]


def _step(at: float) -> str:
    """A unit step at `at` (s) rounded over RAMP_SMOOTHING: (1 + x / sqrt(x² + ε²)) / 2, x = t − at."""
    return f"(1 + (t-{at!r})/sqrt((t-{at!r})**2+{RAMP_SMOOTHING!r}**2))/2"


def sine_completion(options: ManoeuvreOptions) -> float:
    """The end of the sine with dwell's steering (COS): its start, one period and the dwell."""
    return options.step_at + 1 / options.frequency + options.dwell


def handwheel_shape(options: ManoeuvreOptions) -> str:
    """The handwheel angle over its amplitude, an expression in t: a ramp from 0 to 1 over `rise` from `step_at`
    (step steer, steady state), or the sine with dwell (0.75 of a sine period at `frequency` from `step_at`, held at
    its extreme for `dwell`, then the period's last quarter)."""
    t0 = options.step_at
    if options.kind != "sine_with_dwell":
        t1, e = t0 + options.rise, RAMP_SMOOTHING
        return f"(sqrt((t-{t0!r})**2+{e!r}**2) - sqrt((t-{t1!r})**2+{e!r}**2) + {t1 - t0!r})/(2*{t1 - t0!r})"
    w = 2 * math.pi * options.frequency
    t1 = t0 + 0.75 / options.frequency
    t2, t3 = t1 + options.dwell, sine_completion(options)
    return (f"sin({w!r}*(t-{t0!r}))*({_step(t0)} - {_step(t1)}) - ({_step(t1)} - {_step(t2)})"
            f" + sin({w!r}*(t-{t0 + options.dwell!r}))*({_step(t2)} - {_step(t3)})")  # fmt: skip


def starting_velocities(mech: Mechanism, speed: float) -> np.ndarray:
    """Independent velocities of the car rolling straight at `speed`: the chassis's x rate and each wheel's spin
    rate speed / ρ (ρ its centre's height over the flat road, the loaded radius)."""
    v = np.zeros(len(mech.independent))
    v[_index(mech.independent, "x")] = speed
    for spin, radius in wheel_spins(mech, _tyres(mech.model)).items():
        v[_index(mech.independent, spin)] = speed / radius
    return v


def wheel_spins(mech: Mechanism, tyres: list[MagicFormulaTyre]) -> dict[str, float]:
    """Each tyre's wheel spin coordinate (its wheel's revolute joint) and loaded radius: its centre's height over
    the flat road at the document's pose."""
    points = mech.points(mech.assemble(None))
    spins = {}
    for tyre in tyres:
        spin = next(j for j in mech.model.joints if j.child == tyre.body and j.type == "revolute")
        spins[spin.coordinates[0].name] = float(points[(tyre.body, tyre.point)][0, 2])
    return spins


def speed_held(model: Model, speed: float | str, options: ManoeuvreOptions) -> Model:
    """The model with a speed controller holding `speed` (m/s, or an expression in t) through the front wheels (the
    sample's driven axle), its torque per unit force their mean loaded radius; the model itself when `speed_gain` is
    0 (coasting)."""
    if options.speed_gain == 0:
        return model
    mech = Mechanism(model)
    spins = wheel_spins(mech, axles(mech)[0])
    controller = SpeedController("speed_controller", "chassis", list(spins), speed, options.speed_gain,
                                 float(np.mean(list(spins.values()))))  # fmt: skip
    return dataclasses.replace(model, forces=[*model.forces, controller])


def with_relaxation(model: Model, relaxation: str) -> Model:
    """The model with every Magic Formula tyre's relaxation set ("" leaves the model's)."""
    if not relaxation:
        return model
    forces = [dataclasses.replace(f, relaxation=relaxation) if isinstance(f, MagicFormulaTyre) else f
              for f in model.forces]  # fmt: skip
    return dataclasses.replace(model, forces=forces)


def _index(names: list[str], name: str) -> int:
    if name not in names:
        raise ModelError("manoeuvre", f"needs '{name}' among the independent coordinates", None, ", ".join(names))
    return names.index(name)


def _tyres(model: Model) -> list[MagicFormulaTyre]:
    tyres = [f for f in model.forces if isinstance(f, MagicFormulaTyre)]
    if len(tyres) != 4:
        raise ModelError(f"model '{model.name}'", "needs four Magic Formula tyres for a manoeuvre", len(tyres))
    return tyres


def axles(mech: Mechanism) -> tuple[list[MagicFormulaTyre], list[MagicFormulaTyre], float]:
    """The front tyres (the two of largest x at the document's pose), the rear ones, and the wheelbase: front to
    rear wheel centres along x."""
    points = mech.points(mech.assemble(None))
    ordered = sorted(_tyres(mech.model), key=lambda t: -points[(t.body, t.point)][0, 0])
    x = [points[(t.body, t.point)][0, 0] for t in ordered]
    return ordered[:2], ordered[2:], float((x[0] + x[1] - x[2] - x[3]) / 2)


def sprung_mass(mech: Mechanism, labels: tuple[str, ...] = ("chassis", "rack")) -> tuple[float, np.ndarray]:
    """The sprung mass (kg: the bodies `labels`, the chassis and what rides on it without a suspension) and its
    centre of mass (3,) in world axes at the document's pose."""
    q = mech.assemble(None)
    st = mech.motion(q, np.zeros_like(q))
    bodies = [body_inertia(mech, st, mech.tree.body_index(label)) for label in labels]
    mass = sum(float(np.asarray(b.m).ravel()[0]) for b in bodies)
    return mass, sum(np.asarray(b.c, float).ravel() for b in bodies) / mass


def wheel_axis(result: SimulationResult, tyre: MagicFormulaTyre) -> np.ndarray:
    """The wheel's spin axis (K, 3) in world axes along a run."""
    local = np.asarray([float(x) for x in tyre.spin_axis])
    return result.poses[tyre.body][0] @ (local / np.linalg.norm(local))


def vehicle_series(mech: Mechanism, result: SimulationResult) -> dict[str, np.ndarray]:
    """Along a run: speed V, yaw rate r, lateral acceleration a_y = V r, the axles' road-wheel steer angles (the
    mean heading of the axle's wheels, their spin axis a = (−sin ψ, cos ψ, ·) turned −90° about z, less the yaw)
    and inclinations (the mean of asin(a_z), the tyres' γ on the flat road), sideslip β at the chassis frame's
    origin and roll, each (K,)."""
    column = {name: values for name, _, values in result.columns()}
    vx, vy, r, yaw = column["d_x"], column["d_y"], column["d_yaw"], column["yaw"]
    front, rear, _ = axles(mech)
    out = {"t": result.t, "speed": np.hypot(vx, vy), "yaw_rate": r, "lateral_acceleration": np.hypot(vx, vy) * r}
    for name, axle in (("front", front), ("rear", rear)):
        axes = [wheel_axis(result, t) for t in axle]
        out[f"{name}_steer"] = np.mean([np.unwrap(np.arctan2(-a[:, 0], a[:, 1])) for a in axes], axis=0) - yaw
        out[f"{name}_camber"] = np.mean([np.arcsin(a[:, 2]) for a in axes], axis=0)
    return out | {"sideslip": _wrapped(np.arctan2(vy, vx) - yaw), "roll": column["roll"]}


def _wrapped(angle: np.ndarray) -> np.ndarray:
    """The angle in [−π, π): a car going round a circle turns its yaw past ±π."""
    return np.remainder(angle + np.pi, 2 * np.pi) - np.pi


def run_once(model: Model, speed: float, options: ManoeuvreOptions, cancel=None) -> tuple:
    """One run from `speed` with the handwheel ramped to its angle: (mechanism, result, series)."""
    return drive(steering_model(model, options.handwheel, options), speed, options, cancel)


def drive(steered: Model, speed: float, options: ManoeuvreOptions, cancel=None, set_speed: str | None = None) -> tuple:
    """The car with its steering set, run from rolling straight at `speed` and held there by the speed controller
    (unless `speed_gain` is 0), or at `set_speed` (an expression in t): (mechanism, result, series)."""
    held = speed if set_speed is None else set_speed
    steered = speed_held(with_relaxation(steered, options.relaxation), held, options)
    mech = Mechanism(steered)
    result = simulate(
        steered,
        options.duration,
        rtol=options.rtol,
        atol=options.atol,
        samples=options.samples,
        velocities=starting_velocities(mech, speed),
        cancel=cancel,
        error_estimate=False,  # the manoeuvre's figures do not show it: a run at ten times the tolerances saved
    )
    return mech, result, vehicle_series(mech, result)


def _settled(series: dict, seconds: float = 0.5) -> dict[str, float]:
    """Each quantity's mean over the run's last `seconds`."""
    last = series["t"] >= series["t"][-1] - seconds
    return {k: float(np.mean(v[last])) for k, v in series.items()}


def steady_state(model: Model, options: ManoeuvreOptions, progress=None, cancel=None) -> ManoeuvreResult:
    """ISO 4138 at a constant handwheel angle: one settled run per speed; the gradients by least squares."""
    rows, runs = [], []
    for k, speed in enumerate(options.speeds):
        mech, result, series = run_once(model, speed, options, cancel)
        rows.append(_settled(series))
        runs.append(result)
        if progress is not None:
            progress((k + 1) / len(options.speeds))
    length = axles(mech)[2]
    table = {key: np.array([row[key] for row in rows]) for key in rows[0]}
    ay = table["lateral_acceleration"]
    ackermann = length * table["yaw_rate"] / table["speed"]
    table["understeer_angle"] = table["front_steer"] - table["rear_steer"] - ackermann
    figures = {}
    if len(rows) >= 2:
        for name, key in (
            ("understeer_gradient", "understeer_angle"),
            ("roll_gradient", "roll"),
            ("sideslip_gradient", "sideslip"),
        ):
            figures[name] = (float(np.polyfit(ay, table[key], 1)[0]) * DEG_PER_G, "deg/g")
    figures["wheelbase"] = (length, "m")
    figures["largest_lateral_acceleration"] = (float(np.max(np.abs(ay))) / G, "g")
    units = {"speed": "m/s", "yaw_rate": "rad/s", "lateral_acceleration": "m/s^2", "t": "s"}
    columns = [(k, units.get(k, "rad"), v) for k, v in table.items() if k != "t"]
    return ManoeuvreResult(options, figures, columns, runs)


def step_steer(model: Model, options: ManoeuvreOptions, progress=None, cancel=None) -> ManoeuvreResult:
    """ISO 7401 step steer: the first handwheel angle, ramped in `rise` s at `step_at` s."""
    angle = options.handwheel
    mech, result, series = run_once(model, options.speeds[0], options, cancel)
    settled = _settled(series)
    r, t = series["yaw_rate"], series["t"]
    before = float(np.mean(r[t <= options.step_at])) if np.any(t <= options.step_at) else 0.0
    change = settled["yaw_rate"] - before
    half_input = options.step_at + options.rise / 2
    reached = t[(t > half_input) & (np.abs(r - before) >= 0.9 * abs(change))]
    peak = int(np.argmax(np.abs(r - before)))
    wheel = settled["front_steer"] - settled["rear_steer"]
    figures = {
        "yaw_rate_gain": (change / math.radians(angle), "1/s"),
        "yaw_rate_gain_road_wheel": (change / wheel, "1/s"),
        "response_time": (float(reached[0] - half_input) if len(reached) else math.nan, "s"),
        "peak_response_time": (float(t[peak] - half_input), "s"),
        "overshoot": (float(abs(r[peak] - before) / abs(change) - 1) * 100, "%"),
        "lateral_acceleration": (settled["lateral_acceleration"] / G, "g"),
        "steady_yaw_rate": (math.degrees(settled["yaw_rate"]), "deg/s"),
        "speed": (settled["speed"], "m/s"),
        "front_steer": (math.degrees(settled["front_steer"]), "deg"),
        "rear_steer": (math.degrees(settled["rear_steer"]), "deg"),
        "wheelbase": (axles(mech)[2], "m"),
    }
    if progress is not None:
        progress(1.0)
    return ManoeuvreResult(options, figures, _columns(series), [result])


def sine_with_dwell(model: Model, options: ManoeuvreOptions, progress=None, cancel=None) -> ManoeuvreResult:
    """The sine with dwell (the stability test of FMVSS 126 and UN R140): the yaw rate 1.0 s and 1.75 s after the
    steering's end (COS) as percentages of its peak after the steering reversal, and the lateral displacement of the
    chassis frame's origin 1.07 s after the steering's start (BOS), with the peak lateral acceleration (across the
    car's heading; the series' a_y = V r is the steady-state one)."""
    mech, result, series = run_once(model, options.speeds[0], options, cancel)
    t, r = series["t"], series["yaw_rate"]
    column = {name: values for name, _, values in result.columns()}
    reversal = options.step_at + 0.5 / options.frequency
    after = t >= reversal
    peak = float(r[after][np.argmax(np.abs(r[after]))])
    end = sine_completion(options)
    at = {k: float(np.interp(end + k, t, r)) for k in (1.0, LATE_YAW_RATE)}
    start = options.step_at + LATERAL_DISPLACEMENT_AT
    lateral = float(np.interp(start, t, column["y"]) - np.interp(options.step_at, t, column["y"]))
    figures = {
        "yaw_rate_peak": (math.degrees(peak), "deg/s"),
        "yaw_rate_ratio_1s": (100 * at[1.0] / peak, "%"),
        "yaw_rate_ratio_1_75s": (100 * at[LATE_YAW_RATE] / peak, "%"),
        "lateral_displacement": (lateral, "m"),
        "lateral_acceleration_peak": (float(np.max(np.abs(_lateral_acceleration(column)))) / G, "g"),
        "speed": (float(series["speed"][-1]), "m/s"),
    }
    if progress is not None:
        progress(1.0)
    series = series | {"lateral_position": column["y"], "handwheel": _handwheel(mech, column)}
    return ManoeuvreResult(options, figures, _columns(series), [result])


def _lateral_acceleration(column: dict) -> np.ndarray:
    """The chassis frame origin's acceleration across the car's heading (m/s²): −sin ψ ẍ + cos ψ ÿ."""
    yaw = column["yaw"]
    return -np.sin(yaw) * column["dd_x"] + np.cos(yaw) * column["dd_y"]


def _handwheel(mech: Mechanism, column: dict) -> np.ndarray:
    """The handwheel angle the rack's travel corresponds to (rad, positive turning left)."""
    return -column["rack"] / float(mech.model.parameter_values()["rack_ratio"])


def _columns(series: dict) -> list[tuple[str, str, np.ndarray]]:
    units = {"t": "s", "speed": "m/s", "yaw_rate": "rad/s", "lateral_acceleration": "m/s^2", "lateral_position": "m",
             "x": "m", "path_error": "m", "radius_error": "m"}  # fmt: skip
    return [(k, units.get(k, "rad"), v) for k, v in series.items()]


# ISO 3888-1's course, its centre line: lanes of 15, 25 and 30 m, the middle one 3.5 m to the left, joined over 30
# and 25 m (here by half cosines, so that the path has no corner); the course starts COURSE_START m ahead
COURSE_START = 20.0
COURSE = ((0.0, 15.0, 0.0), (45.0, 70.0, 3.5), (95.0, 125.0, 0.0))  # (from, to, lateral offset) of each lane


def lane_change_path(step: float = 0.5) -> list[list[float]]:
    """The course's centre line as [x, y] rows from 50 m before it to 50 m after it."""
    rows = []
    for x in np.arange(-50.0, COURSE[-1][1] + 50.0 + step / 2, step):
        u = x - COURSE_START
        y = 0.0
        for (_, end, y0), (start, _, y1) in zip(COURSE, COURSE[1:], strict=False):
            if end <= u <= start:
                y = y0 + (y1 - y0) * (1 - math.cos(math.pi * (u - end) / (start - end))) / 2
                break
            if start < u:
                y = y1
        rows.append([round(float(x), 6), round(y, 9)])
    return rows


def steering_per_road_wheel(mech: Mechanism, coordinate: str, step: float = 1e-4) -> float:
    """d(front road-wheel angle)/d(steering coordinate) at the document's pose (central difference)."""
    front, q0 = axles(mech)[0], mech.assemble(None)[0]
    pose = {name: float(q0[mech.coordinates.index(name)]) for name in mech.independent}
    angles = []
    for h in (step, -step):
        st = mech.tree.motion(mech.assemble(pose | {coordinate: pose[coordinate] + h}))
        axes = [np.asarray(st.R[mech.tree.body_index(t.body)], float)[0] @ np.asarray(t.spin_axis, float)
                for t in front]  # fmt: skip
        angles.append(np.mean([math.atan2(-a[0], a[1]) for a in axes]))
    return (angles[0] - angles[1]) / (2 * step)


def driven_model(model: Model, options: ManoeuvreOptions) -> Model:
    """The model with its steering servo replaced by a driver of the same stiffness and damping, whose gain turns the
    road wheels by 2 L e / L_p² (pure pursuit's curvature 2 e / L_p² times the wheelbase) for a lateral error e at the
    preview distance L_p: along ISO 3888-1's course, or (constant radius) round the circle of `radius` through the
    chassis frame's origin, turning left."""
    servo, mech = steering_servo(model), Mechanism(model)
    length = axles(mech)[2]
    gain = 2 * length / options.preview**2 / steering_per_road_wheel(mech, servo.coordinate)
    if options.kind == "constant_radius":
        driver = CircleDriver("driver", servo.coordinate, "chassis", 0.0, options.radius, options.radius,
                              options.preview, gain, servo.stiffness, servo.damping)  # fmt: skip
    else:
        driver = PathDriver("driver", servo.coordinate, "chassis", lane_change_path(), options.preview, gain,
                            servo.stiffness, servo.damping)  # fmt: skip
    out = dataclasses.replace(model)
    out.forces = [driver if f is servo else f for f in model.forces]
    return out


def double_lane_change(model: Model, options: ManoeuvreOptions, progress=None, cancel=None) -> ManoeuvreResult:
    """ISO 3888-1's double lane change with the path driver at the first speed: the largest distance
    of the chassis frame's origin (the front axle's centre) from the course's centre line in each lane, the peak
    yaw rate, lateral acceleration and handwheel angle."""
    mech, result, series = drive(driven_model(model, options), options.speeds[0], options, cancel)
    column = {name: values for name, _, values in result.columns()}
    path = np.asarray(lane_change_path())
    error = column["y"] - np.interp(column["x"], path[:, 0], path[:, 1])
    reached = column["x"][-1] - COURSE_START
    if reached < COURSE[-1][1]:
        raise ModelError("manoeuvre option 'duration'", f"ends {COURSE[-1][1] - reached:.3g} m before the course's end",
                         options.duration, "a longer run")  # fmt: skip
    figures = {}
    for k, (start, end, _) in enumerate(COURSE, 1):
        inside = (column["x"] >= COURSE_START + start) & (column["x"] <= COURSE_START + end)
        figures[f"lane_{k}_largest_error"] = (float(np.max(np.abs(error[inside]))), "m")
    figures |= {
        "yaw_rate_peak": (math.degrees(float(np.max(np.abs(series["yaw_rate"])))), "deg/s"),
        "lateral_acceleration_peak": (float(np.max(np.abs(_lateral_acceleration(column)))) / G, "g"),
        "handwheel_peak": (math.degrees(float(np.max(np.abs(_handwheel(mech, column))))), "deg"),
        "speed": (float(series["speed"][-1]), "m/s"),
    }
    if progress is not None:
        progress(1.0)
    series = series | {"x": column["x"], "lateral_position": column["y"], "path_error": error,
                       "handwheel": _handwheel(mech, column)}  # fmt: skip
    return ManoeuvreResult(options, figures, _columns(series), [result])


def held_readings(t: np.ndarray, radius_error: np.ndarray, radius: float) -> np.ndarray:
    """The constant-radius run's readings taken while the circle was held: after ENTRY_TIME and before the first
    reading whose |radius error| exceeds max(HOLD_FRACTION × radius, HOLD_MARGIN) (once lost, the circle counts as
    lost: a car sliding wide may cross it again)."""
    read = t >= ENTRY_TIME
    lost = read & (np.abs(radius_error) > max(HOLD_FRACTION * radius, HOLD_MARGIN))
    return read & (np.cumsum(lost) == 0)


def constant_radius(model: Model, options: ManoeuvreOptions, progress=None, cancel=None) -> ManoeuvreResult:
    """ISO 4138 by its constant-radius method: the circle driver on a circle of `radius`, the speed raised linearly
    from the first to the last speed over the run; the gradients against a_y by least squares over the readings
    while the circle was held (held_readings) up to LINEAR_RANGE; the lateral acceleration at the limit the largest
    while it was held, the limit reached if the circle was lost before the run's end."""
    first, last, duration = options.speeds[0], options.speeds[-1], options.duration
    ramp = f"{first!r} + {last - first!r}*t/{duration!r}"
    mech, result, series = drive(driven_model(model, options), first, options, cancel, set_speed=ramp)
    column = {name: values for name, _, values in result.columns()}
    length = axles(mech)[2]
    rack_ratio = float(mech.model.parameter_values()["rack_ratio"])
    driver = next(law for law in AppliedForces(mech).laws if law.type == CircleDriver.type)
    q = np.array([column[name] for name in mech.coordinates]).T
    handwheel = -np.asarray(driver.target(mech.tree.motion(q)), float) / rack_ratio  # what the driver asks
    ratio = -1 / (rack_ratio * steering_per_road_wheel(mech, steering_servo(model).coordinate))
    curvature = series["yaw_rate"] / series["speed"]  # 1/R of the path driven
    series |= {
        "handwheel": handwheel,
        "understeer_angle": series["front_steer"] - series["rear_steer"] - length * curvature,
        "radius_error": np.hypot(column["x"], column["y"] - options.radius) - options.radius,
    }
    ay = series["lateral_acceleration"]
    read = series["t"] >= ENTRY_TIME
    held = held_readings(series["t"], series["radius_error"], options.radius)
    fit = held & (np.abs(ay) <= LINEAR_RANGE * G)
    if np.count_nonzero(fit) < 2:
        raise RuntimeError(
            f"constant radius: the circle of {options.radius:g} m was held for {np.count_nonzero(fit)} reading(s) "
            f"under {LINEAR_RANGE:g} g after the driver's entry ({ENTRY_TIME:g} s); the gradients need two or more: "
            "start slower or raise the duration"
        )

    def gradient(values: np.ndarray) -> float:
        return float(np.polyfit(ay[fit], values[fit], 1)[0]) * DEG_PER_G

    steering = gradient(handwheel)
    lost = np.flatnonzero(read & ~held)
    figures = {
        "understeer_gradient": (gradient(series["understeer_angle"]), "deg/g"),
        "steering_wheel_angle_gradient": (steering, "deg/g"),
        "understeer_gradient_from_handwheel": (steering / ratio - length * gradient(curvature), "deg/g"),
        "overall_steering_ratio": (ratio, "1"),
        "roll_gradient": (gradient(series["roll"]), "deg/g"),
        "sideslip_gradient": (gradient(series["sideslip"]), "deg/g"),
        "fitted_up_to": (float(np.max(np.abs(ay[fit]))) / G, "g"),
        "lateral_acceleration_at_limit": (float(np.max(np.abs(ay[held]))) / G, "g"),
        "limit_reached": (float(lost.size > 0), "1"),
        "largest_lateral_acceleration": (float(np.max(np.abs(ay[read]))) / G, "g"),
        "largest_radius_error": (float(np.max(np.abs(series["radius_error"][read]))), "m"),
        "wheelbase": (length, "m"),
        "speed": (float(series["speed"][-1]), "m/s"),
    }
    notes = []
    if lost.size:
        at = lost[0]
        figures |= {"circle_lost_at_speed": (float(series["speed"][at]), "m/s"),
                    "circle_lost_at_time": (float(series["t"][at]), "s")}  # fmt: skip
        notes.append(
            f"the car left the {options.radius:g} m circle at {series['speed'][at]:.4g} m/s ({series['t'][at]:.4g} s, "
            f"|radius error| over {max(HOLD_FRACTION * options.radius, HOLD_MARGIN):.3g} m): the gradients and the "
            "lateral acceleration at the limit are from the readings before; the largest lateral acceleration and "
            "radius error are over the whole run"
        )
    if progress is not None:
        progress(1.0)
    return ManoeuvreResult(options, figures, _columns(series), [result], notes=notes)


def manoeuvre(model: Model, options: ManoeuvreOptions, progress=None, cancel=None) -> ManoeuvreResult:
    """Run the manoeuvre `options.kind` on the handling vehicle `model`; its provenance: the model's hash, the
    options, the simulated, wall-clock and CPU seconds (their ratio the real-time factor) and the version."""
    run = {"steady_state": steady_state, "step_steer": step_steer, "sine_with_dwell": sine_with_dwell,
           "double_lane_change": double_lane_change, "constant_radius": constant_radius}[options.kind]  # fmt: skip
    start, cpu = time.perf_counter(), time.process_time()
    result = run(model, options, progress, cancel)
    simulated = options.duration * len(result.runs)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    result.provenance = {
        "model_hash": hashlib.sha256(canonical_text(model).encode()).hexdigest(),
        "analysis": f"manoeuvre {options.kind}",
        "options": dataclasses.asdict(options),
        "simulated_seconds": simulated,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "real_time_factor": simulated / seconds,
        "version": __version__,
    }
    return result
