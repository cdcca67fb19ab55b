"""A suspension corner's kinematic curves, as a suspension engineer reads them from a parallel wheel travel
analysis: toe, camber, caster, kingpin inclination, scrub radius, bump steer, motion ratio and the wheel centre's
lateral and longitudinal shifts against wheel travel, from the document's suspension measure set; and, where the
model has a steering input, toe and camber against it at the design height.

    curves = suspension_curves(model)                        # its first measure set, ±100 mm of travel
    curves = suspension_curves(model, "alignment", travel=0.08, points=81)
    curves.travel, curves.curves["camber"]                    # (N,) m, ("rad", (N,))

Each pose is solved for its wheel travel exactly: Newton on the coordinate that lifts the wheel (the independent
coordinate with the largest vertical lever on the wheel centre), the loops closed at every step, the other
independent coordinates held at the document's values. Travel and rates come from the measures module (exact
rates, no differencing), so bump steer and motion ratio are the ratios of exact velocities. Where the loops stop
closing the curves stop, and `stops` says where and why. Everything is SI here; the page shows deg and mm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..kinematics import Mechanism
from ..model import AssemblyError, Model, ModelError
from ..model.document import SuspensionMeasure
from .measures import measure_columns

TRAVEL = 0.1  # m of bump and of rebound by default
POINTS = 41
STEER_SPAN = 0.3  # rad, or a tenth of it times the mechanism's length scale in m, each way, without limits
NEWTON_STEPS = 30
STILL = 1e-8  # rad per unit of a coordinate: a coordinate that changes toe less than this does not steer
# the measure set's columns, in the order of the page
ALIGNMENT = ("toe", "camber", "caster", "kingpin_inclination", "scrub_radius", "bump_steer", "motion_ratio")


@dataclass
class Sweep:
    """Curves against one swept quantity `x` (N,) in `unit`: name -> (SI unit, values (N,))."""

    name: str
    unit: str
    x: np.ndarray
    curves: dict[str, tuple[str, np.ndarray]]
    q: np.ndarray  # (N, n) the poses


@dataclass
class SuspensionCurves:
    model: str
    measure: str
    driver: str  # the coordinate that lifts the wheel
    travel: Sweep
    steer: Sweep | None
    stops: list[str] = field(default_factory=list)  # where a sweep ended short of the range asked, and why
    notes: list[str] = field(default_factory=list)  # what the model has no sweep for, and why

    @property
    def design(self) -> dict[str, tuple[str, float]]:
        """Each curve's value at zero wheel travel (the document's pose)."""
        k = int(np.abs(self.travel.x).argmin())
        return {name: (unit, float(values[k])) for name, (unit, values) in self.travel.curves.items()}


def suspension_measure(model: Model, name: str | None = None) -> SuspensionMeasure:
    """The model's suspension measure set called `name` (default: its first), or a ModelError saying what there is."""
    sets = [m for m in model.measures if isinstance(m, SuspensionMeasure)]
    if not sets:
        raise ModelError(
            "measures",
            "has no suspension measure set, so there is no wheel to report on",
            None,
            "a measure of type 'suspension' naming the wheel, its centre and spin axis and the ball joints "
            "(docs/file-format.md, section measure)",
        )
    if name is None:
        return sets[0]
    for m in sets:
        if m.name == name:
            return m
    raise ModelError("measure", "is not a suspension measure set of this model", name, ", ".join(m.name for m in sets))


def suspension_curves(
    model: Model, measure: str | None = None, travel: float = TRAVEL, points: int = POINTS
) -> SuspensionCurves:
    """The corner's curves over wheel travel from -travel to +travel (m, rebound to bump) at `points` poses."""
    m = suspension_measure(model, measure)
    if not (np.isfinite(travel) and travel > 0) or not 3 <= points <= 10_001:
        raise ModelError("travel", "must be positive and the points 3 to 10 001", (travel, points), "e.g. 0.1 m, 41")
    corner = _Corner(Mechanism(model), m)
    stops: list[str] = []
    sweep = corner.travel_sweep(np.linspace(-travel, travel, points), stops)
    steer, notes = corner.steer_sweep(points, stops)
    if sum(isinstance(x, SuspensionMeasure) for x in model.measures) < 2:
        notes.append("one wheel: no roll sweep (it needs the corners of both sides, each with its measure set)")
    return SuspensionCurves(model.name, m.name, corner.driver, sweep, steer, stops, notes)


class _Corner:
    """One measure set's wheel on one mechanism: poses at a wheel travel, and the curves there."""

    def __init__(self, mech: Mechanism, measure: SuspensionMeasure) -> None:
        self.mech, self.measure = mech, measure
        self.q0 = np.asarray(mech.assemble(None), float)[0]
        self.local = np.asarray(mech.tree.geometry.point(mech.model.body(measure.wheel), measure.centre), float)
        self.levers = self._levers(self.q0)
        if not self.levers.size or np.abs(self.levers).max() == 0:
            raise ModelError("measure", "names a wheel that no coordinate moves up or down", measure.name)
        self.column = int(np.abs(self.levers).argmax())  # among the independent coordinates
        self.driver = mech.independent[self.column]
        self.z0 = self._height(self.q0)
        self.tol = 1e-12 * mech.length_scale

    # ------------------------------------------------------------------ poses
    def _height(self, q: np.ndarray) -> float:
        rotation, origin = (x[0] for x in self.mech.poses(q[None])[self.measure.wheel])
        return float((origin + rotation @ self.local)[2])

    def _levers(self, q: np.ndarray) -> np.ndarray:
        """∂z/∂q_ind of the wheel centre (n_ind,): its vertical velocity per unit rate of each independent one."""
        J = self.mech.body_jacobian(q[None], self.measure.wheel, self.local)[0, 5]
        return np.asarray(J @ self.mech.r_matrix(q[None])[0], float)

    def _at_travel(self, q: np.ndarray, travel: float) -> np.ndarray:
        """The closed pose with the wheel centre `travel` above its design height, from the pose q nearby:
        Newton on the driver (its exact lever), the other independent coordinates as in q."""
        q = q.copy()
        for _ in range(NEWTON_STEPS):
            error = self._height(q) - self.z0 - travel
            if abs(error) <= self.tol:
                return q
            lever = self._levers(q)[self.column]
            if abs(lever) < 1e-9:  # the driver no longer lifts the wheel: a dead point of the linkage
                break
            values = q[list(self.mech.partition.independent)]
            values[self.column] -= error / lever
            q = np.asarray(self.mech.assemble(values[None], guess=q[None]), float)[0]
        raise AssemblyError(f"no pose with the wheel at {_mm(travel)}: {self.driver} no longer lifts it")

    def _walk(self, targets: np.ndarray, at, stops: list[str], what: str, shown) -> tuple[list, list]:
        """Poses along `targets` (from the design value outwards), each from the last; stops at the first that
        cannot be reached and says so (`shown` writes a value in the page's unit)."""
        done, poses, q = [], [], self.q0
        for target in targets:
            try:
                q = at(q, float(target))
            except (AssemblyError, np.linalg.LinAlgError) as exc:
                reached = shown(done[-1]) if done else "the design position"
                stops.append(f"{what} stops at {reached} of the {shown(target)} asked: {exc}")
                break
            done.append(float(target))
            poses.append(q)
        return done, poses

    # ------------------------------------------------------------------ curves
    def travel_sweep(self, targets: np.ndarray, stops: list[str]) -> Sweep:
        bump = targets[targets >= 0]
        rebound = targets[targets < 0][::-1]
        up = self._walk(bump, self._at_travel, stops, "bump", _mm)
        down = self._walk(rebound, self._at_travel, stops, "rebound", _mm)
        x = np.array(down[0][::-1] + up[0])
        q = np.array(down[1][::-1] + up[1])
        return Sweep("wheel travel", "m", x, self._curves(q, self.column), q)

    def _curves(self, q: np.ndarray, moving: int) -> dict[str, tuple[str, np.ndarray]]:
        """The measure set's columns at the poses q (N, n), its rates along independent coordinate `moving`,
        and the wheel centre's lateral (outboard) and longitudinal shifts from the design pose."""
        unit = np.zeros(len(self.mech.independent))
        unit[moving] = 1.0
        qd = np.asarray(self.mech.velocities(q, np.repeat(unit[None], len(q), axis=0)), float)
        t = np.zeros(len(q))
        columns = {name: (u, v) for name, u, v in measure_columns(self.mech, t, q, qd, np.zeros_like(q))}
        prefix = f"{self.measure.name}."
        out = {name: columns[prefix + name] for name in ALIGNMENT if prefix + name in columns}
        centre = self._centres(q)
        design = self._centres(self.q0[None])[0]
        side = 1.0 if design[1] >= 0 else -1.0
        out["lateral_shift"] = ("m", side * (centre[:, 1] - design[1]))
        out["longitudinal_shift"] = ("m", centre[:, 0] - design[0])
        return out

    def _centres(self, q: np.ndarray) -> np.ndarray:
        rotation, origin = self.mech.poses(q)[self.measure.wheel]
        return np.asarray(origin + rotation @ self.local, float)

    # ------------------------------------------------------------------ steering
    def steer_sweep(self, points: int, stops: list[str]) -> tuple[Sweep | None, list[str]]:
        """Toe and camber against the steering input at the design height, where an independent coordinate
        other than the driver turns the wheel about a vertical axis; a note where none does."""
        steering = self._steering()
        if steering is None:
            return None, ["no steering input: no coordinate but the wheel's own spin turns it at a fixed height"]
        name = self.mech.independent[steering]
        k = self.mech.partition.independent[steering]
        rotation = self.mech.tree.kinds[k] == "R"
        low, high = self._limits(name, STEER_SPAN if rotation else STEER_SPAN * 0.1 * self.mech.length_scale)

        def at(q: np.ndarray, value: float) -> np.ndarray:
            q = q.copy()
            q[k] = self.q0[k] + value
            values = q[list(self.mech.partition.independent)]
            return self._at_travel(np.asarray(self.mech.assemble(values[None], guess=q[None]), float)[0], 0.0)

        targets, shown = np.linspace(low, high, points), _degrees if rotation else _mm
        right = self._walk(targets[targets >= 0], at, stops, f"steering {name}", shown)
        left = self._walk(targets[targets < 0][::-1], at, stops, f"steering {name}", shown)
        x = np.array(left[0][::-1] + right[0])
        q = np.array(left[1][::-1] + right[1])
        curves = {n: v for n, v in self._curves(q, steering).items() if n in ("toe", "camber")}
        return Sweep(name, "rad" if rotation else "m", x, curves, q), []

    def _limits(self, name: str, span: float) -> tuple[float, float]:
        """The steering coordinate's travel from its document value: to its limits, else ±span."""
        coordinate = next(c for j in self.mech.model.joints for c in j.coordinates if c.name == name)
        value = self.q0[self.mech.coordinates.index(name)]
        low = -span if coordinate.min is None else float(coordinate.min) - value
        high = span if coordinate.max is None else float(coordinate.max) - value
        return min(low, 0.0), max(high, 0.0)

    def _steering(self) -> int | None:
        """The independent coordinate (not the driver) that changes toe the most at the design pose, if any."""
        toe_rates = []
        for j in range(len(self.mech.independent)):
            if j == self.column:
                toe_rates.append(0.0)
                continue
            unit = np.zeros(len(self.mech.independent))
            unit[j] = 1.0
            qd = np.asarray(self.mech.velocities(self.q0[None], unit[None]), float)
            (toe_rate,) = _toe_rate(self.mech, self.measure, self.q0, qd[0])
            toe_rates.append(abs(toe_rate))
        j = int(np.argmax(toe_rates)) if toe_rates else 0
        return j if toe_rates and toe_rates[j] > STILL else None


def _toe_rate(mech: Mechanism, measure: SuspensionMeasure, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """The toe's rate for the velocity qd at q, from the axis of the wheel (not its spin: a spin leaves it)."""
    i = mech.tree.body_index(measure.wheel)
    state = mech.motion(q[None], qd[None])
    local = np.asarray(mech.tree.geometry.vector(measure.spin_axis), float)
    s = state.R[i][0] @ (local / np.linalg.norm(local))
    s_rate = np.cross(state.w[i][0], s)
    heading, rate = np.cross(s, [0.0, 0.0, 1.0]), np.cross(s_rate, [0.0, 0.0, 1.0])
    return np.atleast_1d((heading[0] * rate[1] - heading[1] * rate[0]) / (heading[0] ** 2 + heading[1] ** 2))


def _mm(value: float) -> str:
    return f"{1e3 * value:+.1f} mm"


def _degrees(value: float) -> str:
    return f"{np.degrees(value):+.2f}°"
