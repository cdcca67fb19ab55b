"""A suspension corner on a kinematics-and-compliance (K&C) rig, as a vehicle engineer measures one: each point a
static equilibrium of the compliant corner (bushings, spring, gravity) with the chassis (the ground) held.

    result = kc_analysis(model)                          # the first suspension measure set, KCOptions()
    result.travel.curves["toe"]                          # ("rad", (N,)) against wheel travel (m)
    result.loads["lateral"].curves["contact_y"]          # the contact patch's lateral shift against Fy (N)
    result.gradients["lateral"]["toe"]                   # ("rad/N", compliance steer at design)
    axle_roll(result, track, largest).stiffness          # the corner and its mirror rolled, the axle load kept

The rig holds the wheel centre at a height (the wheel travel, as the suspension report's curves have it; the force
holding it is the vertical load, whose rate along travel is the wheel rate) and the coordinates of what hangs on
the wheel carrier and holds nothing (the wheel on its bearing: the brakes are on). Loads are in world axes (ISO 8855
vehicle axes: x forward, y left, z up): a lateral force and a longitudinal force (braking) at the contact patch, a
longitudinal force at the wheel centre (traction, as a drive shaft's), and an aligning moment about the vertical.
The contact patch is the point of the wheel carrier at the design's contact point (the wheel plane's lowest point,
the measure set's tyre radius below the centre), so a load on it has a potential and the energy balances.

Each equilibrium solves, for the free independent coordinates x and the vertical load μ,

    Rᵀ (Q(q) + J_Pᵀ F + J_zᵀ μ) = 0,    z_centre(q) = z₀ + s,

(Q the force elements' and gravity's generalized forces, J_P the load point's Jacobian, R = ∂q/∂q_ind, the loops
closed at every q) by Newton from the previous point, with the exact Q and a Jacobian by central differences in x.
The gradients at design follow from the same linear system (the implicit function theorem): a load's rate
[dx; dμ] = −A⁻¹ ∂r/∂F, the travel's A⁻¹ e_h, so compliance steer, camber and stiffness are exact derivatives of
the equilibrium, and motion ratio, bump steer, roll centre and anti-dive come from the tangent's velocities.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.interpolate import CubicHermiteSpline

from .. import __version__
from ..dynamics.forces import AppliedForces
from ..dynamics.inverse_dynamics import gravity_forces
from ..kinematics import Mechanism
from ..model import AssemblyError, Model, ModelError
from ..model.document import body_key
from ..model.hashing import model_hash
from ..progress import Cancel, Progress, Stages
from .measures import measure_columns
from .suspension import ALIGNMENT, Sweep, suspension_measure

NEWTON_STEPS = 40
CONVERGED = 1e-11  # scaled Newton step (rad, or m over the length scale) below which a point is solved
FD_STEP = 1e-6  # central-difference step of the Jacobian, scaled as above: truncation (1e-6)² of the curvature
MAX_STEP = 0.05  # the largest scaled Newton step: the nearest equilibrium, not a far one
# load case -> (where it acts, what it is, world direction, SI unit of the load)
CASES = {
    "lateral": ("contact", "force", (0.0, 1.0, 0.0), "N"),
    "braking": ("contact", "force", (1.0, 0.0, 0.0), "N"),
    "traction": ("centre", "force", (1.0, 0.0, 0.0), "N"),
    "aligning": ("carrier", "moment", (0.0, 0.0, 1.0), "N m"),
}
AXLES = ("front", "rear")
TESTS = ("corner", "axle_roll")  # the corner's K&C; the axle of the corner and its mirror rolled (kc_axle_roll.py)


@dataclass(frozen=True)
class KCOptions:
    """What the rig does. Travel in m each way, forces in N and the moment in N m each way (swept from −max to
    +max through zero), points per sweep (odd, so the design is one); the vehicle data for anti-dive and
    anti-squat: wheelbase and centre-of-mass height in m, the front axle's share of braking, the driven share of
    this axle's traction; gravity on the corner's bodies or not. `test` "axle_roll" rolls the axle of the corner and
    its mirror instead (kc_axle_roll.py): the roll each way in rad, its points, the track in m (None: twice the wheel
    centre's distance from y = 0) and each tyre's stiffness in N/m (None: rigid tyres)."""

    measure: str | None = None
    travel: float = 0.08
    travel_points: int = 33
    lateral_force: float = 4000.0
    longitudinal_force: float = 4000.0
    aligning_moment: float = 200.0
    load_points: int = 21
    gravity: bool = True
    axle: str = "front"
    wheelbase: float = 2.7
    cg_height: float = 0.55
    brake_front_share: float = 0.65
    drive_share: float = 1.0
    test: str = "corner"
    roll: float = float(np.radians(3.0))  # rad each way: the axle roll test's
    roll_points: int = 61
    track: float | None = None  # m: the axle's; None is twice the wheel centre's distance from y = 0
    tyre_stiffness: float | None = None  # N/m, each tyre in series in the axle roll test; None: rigid

    # field -> (smallest, largest) for the numbers; every one finite
    LIMITS = {
        "travel": (1e-4, 0.5),
        "travel_points": (3, 2001),
        "lateral_force": (1e-3, 1e6),
        "longitudinal_force": (1e-3, 1e6),
        "aligning_moment": (1e-3, 1e5),
        "load_points": (3, 2001),
        "wheelbase": (0.1, 50.0),
        "cg_height": (0.01, 20.0),
        "brake_front_share": (0.0, 1.0),
        "drive_share": (0.0, 1.0),
        "roll": (1e-4, float(np.radians(20.0))),
        "roll_points": (3, 2001),
        "track": (0.1, 10.0),
        "tyre_stiffness": (1.0, 1e12),
    }
    OPTIONAL = ("track", "tyre_stiffness")  # None: from the corner, rigid

    def __post_init__(self) -> None:
        for name, (low, high) in self.LIMITS.items():
            value = getattr(self, name)
            if value is None and name in self.OPTIONAL:
                continue
            kind = int if name.endswith("points") else float
            if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
                raise ModelError(f"K&C option {name}", "is not a number", value, f"{low} to {high}")
            if not low <= value <= high or (kind is int and value != int(value)):
                raise ModelError(f"K&C option {name}", "is out of range", value,
                                 f"{'a whole number ' if kind is int else ''}from {low} to {high}")  # fmt: skip
        if self.axle not in AXLES:
            raise ModelError("K&C option axle", "is not an axle", self.axle, " or ".join(AXLES))
        if not isinstance(self.gravity, bool):
            raise ModelError("K&C option gravity", "is not true or false", self.gravity, "true or false")
        if self.test not in TESTS:
            raise ModelError("K&C option test", "is not a K&C test", self.test, " or ".join(TESTS))
        for name in ("travel_points", "load_points", "roll_points"):  # odd: the design position is one of the points
            object.__setattr__(self, name, int(getattr(self, name)) | 1)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> KCOptions:
        """Options from plain data (a job's, a file's), refusing names it does not know."""
        known = {f.name for f in dataclasses.fields(cls)}
        for name in data:
            if name not in known:
                raise ModelError("K&C options", "has no option of this name", name, ", ".join(sorted(known)))
        return cls(**data)

    def load(self, case: str) -> float:
        """The largest load of a case (N or N m)."""
        return {"lateral": self.lateral_force, "aligning": self.aligning_moment}.get(case, self.longitudinal_force)


@dataclass
class KCResult:
    """The corner's K&C: `travel` the kinematic curves against wheel travel (SI units per curve), `loads` one sweep
    per load case against its load, `gradients` each case's rates at design (SI per N or per N m), `design` the
    kinematic values at design, `summary` the headline figures; provenance says where it came from."""

    model: str
    measure: str
    options: KCOptions
    travel: Sweep
    loads: dict[str, Sweep]
    gradients: dict[str, dict[str, tuple[str, float]]]
    design: dict[str, tuple[str, float]]
    stops: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)

    @property
    def summary(self) -> dict[str, tuple[str, float]]:
        """Compliance steer and camber per load, and the contact patch's stiffness along each force, at design."""
        out = {}
        for case, rates in self.gradients.items():
            per = CASES[case][3]
            out[f"{case}_compliance_steer"] = (f"rad/{per}", rates["toe"][1])
            out[f"{case}_compliance_camber"] = (f"rad/{per}", rates["camber"][1])
        for case, (where, axis) in (("lateral", ("contact", "y")), ("braking", ("contact", "x")),
                                    ("traction", ("centre", "x"))):  # fmt: skip
            compliance = self.gradients[case][f"{where}_{axis}"][1]
            out[f"{case}_stiffness"] = ("N/m", 1.0 / compliance if compliance > 0 else np.inf)
        out["wheel_rate"] = self.design["wheel_rate"]
        return out


def kc_analysis(
    model: Model, options: KCOptions | None = None, progress: Progress | None = None, cancel: Cancel | None = None
) -> KCResult:
    """The K&C of the corner of `options.measure` (default the model's first suspension measure set)."""
    options = options or KCOptions()
    started = time.perf_counter()
    measure = suspension_measure(model, options.measure)
    rig = _Rig(Mechanism(model), measure, options)
    stages = Stages(progress, cancel, [options.travel_points] + [options.load_points] * len(CASES))
    stops: list[str] = []
    stages.start("wheel travel")
    travel = rig.travel_sweep(stops, stages)
    loads, gradients = {}, {}
    for case in CASES:
        stages.start(f"{case} load")
        loads[case] = rig.load_sweep(case, stops, stages)
        gradients[case] = rig.load_rates(case)
    stages.done()
    design = {name: (unit, float(values[len(values) // 2])) for name, (unit, values) in travel.curves.items()}
    provenance = {
        "model_hash": model_hash(model),
        "method": "K&C rig: static equilibria by Newton (exact forces, central-difference Jacobian), gradients "
        "by the implicit function theorem",
        "precision": "float64",
        "options": options.to_dict(),
        "held": rig.held,
        "seconds": time.perf_counter() - started,
        "version": __version__,
    }
    return KCResult(model.name, measure.name, options, travel, loads, gradients, design, stops, provenance)


@dataclass
class _Point:
    """One equilibrium: free coordinates x, vertical load mu, closed coordinates q, and the Jacobian of the
    residual in (x, mu) there."""

    x: np.ndarray
    mu: float
    q: np.ndarray
    jacobian: np.ndarray


class _Rig:
    """The corner of one measure set on the rig: its equilibria at a travel and a load, and their curves."""

    def __init__(self, mech: Mechanism, measure, options: KCOptions) -> None:
        self.mech, self.measure, self.options = mech, measure, options
        self.forces = AppliedForces(mech)
        self.q0 = np.asarray(mech.assemble(None), float)[0]
        geometry, model = mech.tree.geometry, mech.model
        self.carrier = measure.wheel
        self.centre = np.asarray(geometry.point(model.body(self.carrier), measure.centre), float)
        self.held = _loose_coordinates(mech, self.carrier)
        names = mech.independent
        self.free = [j for j, name in enumerate(names) if name not in self.held]
        self.ind = list(mech.partition.independent)
        kinds = [mech.tree.kinds[self.ind[j]] for j in self.free]
        self.scale = np.array([1.0 if kind == "R" else mech.length_scale for kind in kinds])
        R0, p0 = (np.asarray(x, float)[0] for x in mech.poses(self.q0[None])[self.carrier])
        centre = p0 + R0 @ self.centre
        self.z0, self.side = centre[2], 1.0 if centre[1] >= 0 else -1.0
        self.radius = float(geometry.value(measure.radius))
        self.contact = R0.T @ (_contact_point(centre, R0 @ self._spin_local(), self.radius) - p0)
        self.design = self._solve(0.0, "lateral", 0.0, _Point(self.q0[self.ind][self.free], 0.0, self.q0, None))

    def _spin_local(self) -> np.ndarray:
        local = np.asarray(self.mech.tree.geometry.vector(self.measure.spin_axis), float)
        return local / np.linalg.norm(local)

    # ------------------------------------------------------------------ equilibria
    def _closed(self, x: np.ndarray, guess: np.ndarray) -> np.ndarray:
        """Closed coordinates (N, n) for free independent values x (N, nx), the held ones as in the guess."""
        values = np.repeat(guess[self.ind][None], len(x), axis=0)
        values[:, self.free] = x
        return np.asarray(self.mech.assemble(values, guess=np.repeat(guess[None], len(x), axis=0)), float)

    def _residual(self, q: np.ndarray, mu: np.ndarray, travel: float, case: str, load: float) -> np.ndarray:
        """(N, nx + 1): the free independent coordinates' unbalanced generalized forces, then the height error."""
        mech = self.mech
        Q = np.asarray(self.forces.generalized(0.0, q, np.zeros_like(q)), float)
        if self.options.gravity:
            Q = Q - np.asarray(gravity_forces(mech, q), float)
        centre = np.asarray(mech.body_jacobian(q, self.carrier, self.centre), float)
        Q = Q + centre[:, 5] * mu[:, None] + self._load(q, case, load)
        R = np.asarray(mech.r_matrix(q), float)
        g = np.einsum("nik,ni->nk", R, Q)[:, self.free]
        height = self._centres(q)[:, 2] - self.z0 - travel
        return np.column_stack([g, height])

    def _load(self, q: np.ndarray, case: str, load: float) -> np.ndarray:
        """The generalized force (N, n) of `load` in case `case`."""
        where, what, direction, _ = CASES[case]
        point = {"contact": self.contact, "centre": self.centre, "carrier": None}[where]
        J = np.asarray(self.mech.body_jacobian(q, self.carrier, point), float)
        rows = J[:, :3] if what == "moment" else J[:, 3:]
        return load * np.einsum("nij,i->nj", rows, np.asarray(direction))

    def _centres(self, q: np.ndarray) -> np.ndarray:
        R, p = (np.asarray(x, float) for x in self.mech.poses(q)[self.carrier])
        return p + R @ self.centre

    def _jacobian(self, x: np.ndarray, mu: float, q: np.ndarray, travel: float, case: str, load: float):
        """∂residual/∂(x, μ) (nx + 1, nx + 1): central differences in x (one batch), exact in μ."""
        nx = len(x)
        steps = FD_STEP * self.scale
        shifted = np.repeat(x[None], 2 * nx, axis=0)
        shifted[np.arange(nx), np.arange(nx)] += steps
        shifted[nx + np.arange(nx), np.arange(nx)] -= steps
        r = self._residual(self._closed(shifted, q), np.full(2 * nx, mu), travel, case, load)
        out = np.zeros((nx + 1, nx + 1))
        out[:, :nx] = ((r[:nx] - r[nx:]) / (2 * steps[:, None])).T
        R = np.asarray(self.mech.r_matrix(q[None]), float)[0]
        lift = np.asarray(self.mech.body_jacobian(q[None], self.carrier, self.centre), float)[0, 5]
        out[:nx, nx] = (lift @ R)[self.free]
        return out

    def _solve(self, travel: float, case: str, load: float, start: _Point) -> _Point:
        """The equilibrium at this travel and load, by Newton from `start`."""
        x, mu, q = start.x.copy(), start.mu, start.q
        for _ in range(NEWTON_STEPS):
            r = self._residual(q[None], np.array([mu]), travel, case, load)[0]
            A = self._jacobian(x, mu, q, travel, case, load)
            try:
                step = _bordered_solve(A, -r)
            except np.linalg.LinAlgError:
                raise self._unresisted(A) from None
            reach = np.abs(step[:-1] / self.scale).max(initial=0.0)
            if reach > MAX_STEP:
                step = step * MAX_STEP / reach
            x, mu = x + step[:-1], mu + step[-1]
            q = self._closed(x[None], q)[0]
            if reach <= CONVERGED:
                return _Point(x, mu, q, self._jacobian(x, mu, q, travel, case, load))
        raise AssemblyError(
            f"no static equilibrium of the corner at {travel * 1e3:+.1f} mm of travel and {case} load {load:.4g} "
            f"{CASES[case][3]}: Newton's last step was {reach:.3g} (scaled), the forces left {np.abs(r).max():.3g}"
        )

    def _unresisted(self, A: np.ndarray) -> ModelError:
        """The error for an equilibrium whose system is singular, naming the free coordinates that move along the
        direction nothing resists (the last right singular vector)."""
        direction = np.abs(np.linalg.svd(A)[2][-1, :-1])
        moving = [self.mech.independent[self.free[k]] for k in np.argsort(-direction)[:4]
                  if direction[k] > 0.1 * direction.max()]  # fmt: skip
        return ModelError(f"suspension measure '{self.measure.name}'",
                          f"has no equilibrium on the K&C rig: nothing resists the motion of {', '.join(moving)}",
                          None, "a corner model whose chassis is the ground (a whole vehicle's free chassis and "
                          "other corners move without loading the rig)")  # fmt: skip

    # ------------------------------------------------------------------ sweeps
    def _walk(self, targets: np.ndarray, solve, stops: list[str], what: str, progress) -> tuple[list, list]:
        """Points along `targets` outwards from the design, each from the last; stops at the first it cannot solve.
        `progress(message)` is told of each point before it is solved."""
        done, points, last = [], [], self.design
        for target in targets:
            progress(f"{what} {target:+.4g}")
            try:
                last = solve(float(target), last)
            except (AssemblyError, np.linalg.LinAlgError) as exc:
                stops.append(f"{what} stops at {done[-1] if done else 0.0:+.4g} of the {target:+.4g} asked: {exc}")
                break
            done.append(float(target))
            points.append(last)
        return done, points

    def _sweep(self, targets: np.ndarray, solve, stops, what: str, stages: Stages):
        count = iter(range(len(targets)))

        def progress(message: str) -> None:
            stages.within(next(count) / len(targets), message)

        up = self._walk(targets[targets > 0], solve, stops, what, progress)
        down = self._walk(targets[targets < 0][::-1], solve, stops, what, progress)
        x = np.array(down[0][::-1] + [0.0] + up[0])
        return x, down[1][::-1] + [self.design] + up[1]

    def travel_sweep(self, stops: list[str], stages: Stages) -> Sweep:
        o = self.options
        targets = np.linspace(-o.travel, o.travel, o.travel_points)
        x, points = self._sweep(targets, lambda s, p: self._solve(s, "lateral", 0.0, p), stops, "travel", stages)
        q = np.array([p.q for p in points])
        tangents = [self._rate(p, _unit(len(p.x) + 1, -1)) for p in points]
        curves = self._kinematics(q, tangents)
        curves["vertical_load"] = ("N", np.array([p.mu for p in points]))
        return Sweep("wheel travel", "m", x, curves, q)

    def load_sweep(self, case: str, stops: list[str], stages: Stages) -> Sweep:
        o = self.options
        targets = np.linspace(-o.load(case), o.load(case), o.load_points)
        x, points = self._sweep(targets, lambda f, p: self._solve(0.0, case, f, p), stops, case, stages)
        q = np.array([p.q for p in points])
        return Sweep(f"{case} {'moment' if CASES[case][1] == 'moment' else 'force'}", CASES[case][3], x,
                     self._displacements(q), q)  # fmt: skip

    def load_rates(self, case: str) -> dict[str, tuple[str, float]]:
        """d(quantity)/d(load) at design, from the equilibrium's linear system."""
        p = self.design
        dr = (
            self._residual(p.q[None], np.array([p.mu]), 0.0, case, 1.0)[0]
            - self._residual(p.q[None], np.array([p.mu]), 0.0, case, 0.0)[0]
        )  # the residual is affine in the load
        dx, dmu = self._rate(p, -dr, split=True)
        qd = self._qdot(p.q, dx)
        per = CASES[case][3]
        out = {name: (f"{unit}/{per}", float(v)) for name, (unit, v) in self._measured(p.q, qd).items()}
        out["vertical_load"] = (f"N/{per}", float(dmu))
        return out

    def _rate(self, p: _Point, rhs: np.ndarray, split: bool = False):
        """The equilibrium's rate [dx; dμ] for a right-hand side of its linear system."""
        rate = _bordered_solve(p.jacobian, rhs)
        return (rate[:-1], rate[-1]) if split else rate

    def _qdot(self, q: np.ndarray, dx: np.ndarray) -> np.ndarray:
        rates = np.zeros(len(self.ind))
        rates[self.free] = dx
        return np.asarray(self.mech.velocities(q[None], rates[None]), float)[0]

    # ------------------------------------------------------------------ what is measured
    def _measured(self, q: np.ndarray, qd: np.ndarray) -> dict[str, tuple[str, float]]:
        """The rates along q̇ of toe and camber (central differences of the carrier's pose along q̇, to O(1e-12)
        relative) and of the contact patch's and wheel centre's positions (exact), as {name: (unit, rate)}."""
        size = float(np.abs(qd).max(initial=0.0))
        h = FD_STEP * self.mech.length_scale / size if size > 0 else 1.0
        ahead, behind = (self._columns((q + sign * h * qd)[None], np.zeros((1, len(q)))) for sign in (1, -1))
        out = {name: (ahead[name][0], (ahead[name][1][0] - behind[name][1][0]) / (2 * h)) for name in ("toe", "camber")}
        for where, local in (("contact", self.contact), ("centre", self.centre)):
            J = np.asarray(self.mech.body_jacobian(q[None], self.carrier, local), float)[0, 3:]
            for k, axis in enumerate("xyz"):
                out[f"{where}_{axis}"] = ("m", (J @ qd)[k])
        return out

    def _displacements(self, q: np.ndarray) -> dict[str, tuple[str, np.ndarray]]:
        """Toe, camber and the contact patch's and wheel centre's displacements from the design, at poses q (N, n)."""
        columns = self._columns(q, np.zeros_like(q))
        out = {name: columns[name] for name in ("toe", "camber")}
        R, p = (np.asarray(x, float) for x in self.mech.poses(q)[self.carrier])
        R0, p0 = (np.asarray(x, float)[0] for x in self.mech.poses(self.q0[None])[self.carrier])
        for where, local in (("contact", self.contact), ("centre", self.centre)):
            moved = p + R @ local - (p0 + R0 @ local)
            for k, axis in enumerate("xyz"):
                out[f"{where}_{axis}"] = ("m", moved[:, k])
        return out

    def _columns(self, q: np.ndarray, qd: np.ndarray) -> dict[str, tuple[str, np.ndarray]]:
        prefix = f"{self.measure.name}."
        columns = measure_columns(self.mech, np.zeros(len(q)), q, qd, np.zeros_like(q))
        return {name[len(prefix) :]: (unit, v) for name, unit, v in columns if name.startswith(prefix)}

    def _kinematics(self, q: np.ndarray, tangents: list[np.ndarray]) -> dict[str, tuple[str, np.ndarray]]:
        """The travel sweep's curves at poses q (N, n) with their tangents [dx/ds; dμ/ds] (wheel centre rising)."""
        qd = np.array([self._qdot(qi, t[:-1]) for qi, t in zip(q, tangents, strict=True)])
        columns = self._columns(q, qd)
        out = {name: columns[name] for name in ALIGNMENT if name in columns}
        R, p = (np.asarray(x, float) for x in self.mech.poses(q)[self.carrier])
        centres = p + R @ self.centre
        spins = R @ self._spin_local()
        contacts = np.array([_contact_point(c, s, self.radius) for c, s in zip(centres, spins, strict=True)])
        m = self.measure
        lower, upper = self._points(q, m.lower_body, m.lower_point), self._points(q, m.upper_body, m.upper_point)
        axis = upper - lower
        ground = lower + axis * ((contacts[:, 2] - lower[:, 2]) / axis[:, 2])[:, None]  # the kingpin meets the ground
        out["mechanical_trail"] = ("m", ground[:, 0] - contacts[:, 0])
        design_centre, design_contact = centres[len(q) // 2], contacts[len(q) // 2]
        out["wheel_centre_recession"] = ("m", -(centres[:, 0] - design_centre[0]))
        out["track_change"] = ("m", self.side * (contacts[:, 1] - design_contact[1]))
        velocities = self._material_velocities(q, qd, R, p, contacts)
        centre_velocity = np.array([self._material_velocities(q[i : i + 1], qd[i : i + 1], R[i : i + 1],
                                    p[i : i + 1], centres[i : i + 1])[0] for i in range(len(q))])  # fmt: skip
        # front view: the contact patch moves perpendicular to the line to the wheel's instant centre; that line
        # meets the vehicle's centre plane y = 0 at the roll centre (the corners mirrored)
        out["roll_centre_height"] = ("m", contacts[:, 1] * velocities[:, 1] / velocities[:, 2])
        o = self.options
        levers = o.wheelbase / o.cg_height
        if o.axle == "front":
            braking, traction = o.brake_front_share * levers, o.drive_share * levers
        else:
            braking, traction = -(1 - o.brake_front_share) * levers, -o.drive_share * levers
        out["anti_braking"] = ("%", 100 * braking * velocities[:, 0] / velocities[:, 2])
        out["anti_traction"] = ("%", 100 * traction * centre_velocity[:, 0] / centre_velocity[:, 2])
        out["wheel_rate"] = ("N/m", np.array([t[-1] for t in tangents]))
        return out

    def _points(self, q: np.ndarray, body: str, point: str) -> np.ndarray:
        R, p = (np.asarray(x, float) for x in self.mech.poses(q)[body])
        return p + R @ np.asarray(self.mech.tree.geometry.point(self.mech.model.body(body), point), float)

    def _material_velocities(self, q, qd, R, p, world) -> np.ndarray:
        """Velocities (N, 3) of the carrier's material points now at `world` (N, 3)."""
        out = []
        for i in range(len(q)):
            local = R[i].T @ (world[i] - p[i])
            J = np.asarray(self.mech.body_jacobian(q[i : i + 1], self.carrier, local), float)[0, 3:]
            out.append(J @ qd[i])
        return np.array(out)


def _bordered_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve the equilibrium's system [[H, c], [cᵀ, 0]] [dx; dμ] = b with the height row and the load's column
    scaled to the stiffness H's size: unscaled, a corner on stiff bushings (1e12) puts the travel's singular value
    near 1e-17 of the largest. A singular system (a direction nothing resists) raises LinAlgError."""
    scale = max(float(np.abs(A[:-1, :-1]).max(initial=0.0)), 1.0)
    S = np.ones(len(b))
    S[-1] = scale
    return S * np.linalg.solve(A * S[:, None] * S[None, :], b * S)  # A = S⁻¹ (S A S) S⁻¹


def _contact_point(centre: np.ndarray, spin: np.ndarray, radius: float) -> np.ndarray:
    """The wheel plane's lowest point: `radius` from the centre, down within the plane normal to the spin axis."""
    down = np.array([0.0, 0.0, -1.0]) + spin[2] * spin
    return centre + radius * down / np.linalg.norm(down)


def _unit(n: int, k: int) -> np.ndarray:
    out = np.zeros(n)
    out[k] = 1.0
    return out


def _loose_coordinates(mech: Mechanism, carrier: str) -> list[str]:
    """Independent coordinates of tree joints whose bodies hang from the corner and hold nothing: no force element,
    cut joint or other tree joint beyond them (the wheel on its bearing). The rig holds them."""
    model, topology = mech.model, mech.topology
    touched = {body_key(getattr(e, name)) for e in model.forces for name in ("body", "body1", "body2") if
               isinstance(getattr(e, name, None), str)}  # fmt: skip
    touched |= {body_key(end) for j in topology.cut for end in (j.parent, j.child)}
    touched.add(body_key(carrier))
    children: dict[str, list[str]] = {}
    for child, parent in topology.parent_of.items():
        children.setdefault(parent, []).append(child)

    def loose(body: str) -> bool:
        return body not in touched and all(loose(c) for c in children.get(body, []))

    held = []
    for joint in topology.tree:
        child = body_key(joint.parent if joint.name in topology.reversed else joint.child)
        if loose(child):
            held += [c.name for c in joint.coordinates if c.name in mech.independent]
    return held


def vehicle_corner(car: Model, corner: str) -> Model:
    """A full car's corner `corner` (the prefix of its bodies, e.g. "fl") as the K&C rig takes it, for the vehicle
    samples (tools/make_vehicle.py's names): the chassis (free joint `ride`) fixed to the ground, the other corners,
    the tyres and the wheel torques left out, the rack on its servo kept (the front's tie rods pull on it), the
    contact patch at the tyre's loaded radius (the wheel centre's height over the road at the document's pose)."""
    mech = Mechanism(car)
    tyre = next(f for f in car.forces if f.name == f"{corner}_tyre")
    loaded = float(mech.points(mech.assemble(None))[(tyre.body, tyre.point)][0, 2])
    model = copy.deepcopy(car)

    def kept(label: str) -> bool:
        return label in ("0", "chassis", "rack") or label.startswith(corner)

    model.bodies = [b for b in model.bodies if kept(b.label)]
    model.joints = [dataclasses.replace(j, type="fixed", coordinates=[]) if j.name == "ride" else j
                    for j in model.joints if kept(j.parent) and kept(j.child)]  # fmt: skip
    kept_coordinates = {c.name for j in model.joints for c in j.coordinates}
    model.forces = [f for f in model.forces if f.name in (f"{corner}_coilover", "steering_servo")]
    model.measures = [dataclasses.replace(m, radius=loaded) for m in model.measures if m.name == f"{corner}_alignment"]
    model.independent_coordinates = [c for c in car.independent_coordinates if c in kept_coordinates]
    return model


@dataclass
class AxleRoll:
    """An axle rolled on the rig at a constant axle load (the body free to heave, as a car's is): per body roll
    angle `roll` (rad, the suspension's alone; ISO 8855: positive right side down, the left wheel in rebound) the
    moment the two corners' vertical loads make against it (N m), the axle's roll stiffness dM/dφ there (N m/rad),
    the heave that keeps the axle load (m, the wheel centres' mean rise) and each wheel's travel (m); with a tyre
    stiffness, `total_roll` adds the tyres' deflection under that moment and `total_stiffness` is the axle's
    stiffness through them."""

    roll: np.ndarray
    moment: np.ndarray
    stiffness: np.ndarray
    heave: np.ndarray
    left_travel: np.ndarray
    right_travel: np.ndarray
    total_roll: np.ndarray
    total_stiffness: np.ndarray


def axle_roll(result: KCResult, track: float, largest: float, points: int = 81, tyre_stiffness: float = np.inf):
    """The roll test of the axle made of the K&C corner `result` and its mirror, `track` (m) apart, from its wheel
    travel sweep: for each suspension roll φ up to ±`largest` (rad) the left and right wheels travel h ∓ (t/2) φ,
    h the heave at which their vertical loads F(s) still add to the design's axle load; M = (t/2) (F_right −
    F_left) and, the heave free, dM/dφ = t² k_l k_r / (k_l + k_r) with k = dF/ds at the two travels (a stop engaged
    on one wheel stiffens the axle in roll by less than its own rate). F is the sweep's vertical load (springs,
    stops and geometry together) joined by cubics through the rig's exact wheel rates, so k is F's slope. The
    tyres, `tyre_stiffness` (N/m) each, carry ±M/t and add the roll 2 M / (k_t t²). Small angles: the travels are
    (t/2) φ along the design's vertical and the loads act at the design track."""
    s, load = result.travel.x, _vertical_load(result)
    design, half = float(load(0.0)), track / 2
    roll = np.linspace(-largest, largest, points | 1)
    heave = np.array([_axle_heave(load, s, design, half * phi) for phi in roll])
    left, right = heave - half * roll, heave + half * roll
    moment = half * (load(right) - load(left))
    stiffness = axle_roll_stiffness(result, track, left, right)
    total = roll + 2 * moment / (tyre_stiffness * track**2)
    return AxleRoll(roll, moment, stiffness, heave, left, right, total,
                    axle_roll_stiffness(result, track, left, right, tyre_stiffness))  # fmt: skip


def axle_roll_stiffness(result: KCResult, track: float, left, right, tyre_stiffness: float = np.inf) -> np.ndarray:
    """The roll stiffness (N m/rad) of the axle of the K&C corner `result` and its mirror, `track` (m) apart, its
    body free to heave, with its left and right wheels at the travels `left`, `right` (m, arrays alike):
    t² k_l k_r / (k_l + k_r), each k the wheel rate there (the sweep's) in series with the tyre."""
    rate = _vertical_load(result).derivative()
    k_left, k_right = (1 / (1 / rate(np.asarray(x, float)) + 1 / tyre_stiffness) for x in (left, right))
    return track**2 * k_left * k_right / (k_left + k_right)


def travel_at(result: KCResult, model: Model, coordinate: str, values) -> np.ndarray:
    """The wheel travel (m) at which the corner's `coordinate` (of `model`, the corner the rig ran on) takes
    `values`, read along the travel sweep, where it must change monotonically (a damper's length)."""
    along = result.travel.q[:, Mechanism(model).coordinates.index(coordinate)]
    order = np.argsort(along)
    if np.any(np.diff(along[order]) <= 0):
        raise ModelError(f"coordinate '{coordinate}'", "does not change monotonically over the K&C travel sweep",
                         None, "a coordinate that moves one way with the wheel (a damper's length)")  # fmt: skip
    return np.interp(values, along[order], result.travel.x[order])


def _vertical_load(result: KCResult) -> CubicHermiteSpline:
    """The corner's vertical load against wheel travel, joined by cubics through the rig's exact wheel rates."""
    curves = result.travel.curves
    return CubicHermiteSpline(result.travel.x, curves["vertical_load"][1], curves["wheel_rate"][1])


def _axle_heave(load: CubicHermiteSpline, s: np.ndarray, design: float, half_roll: float) -> float:
    """The heave h at which F(h + a) + F(h − a) = 2 F(0), a the half roll's travel, by bisection over the heaves
    that keep both wheels inside the sweep (F rises with travel, so the sum does)."""

    def excess(h: float) -> float:
        return float(load(h + half_roll) + load(h - half_roll) - 2 * design)

    low, high = s[0] + abs(half_roll), s[-1] - abs(half_roll)
    if not (low < high and excess(low) <= 0 <= excess(high)):
        raise ModelError("axle roll", "takes a wheel beyond the K&C sweep's travel", half_roll,
                         "a smaller roll, or a longer travel sweep")  # fmt: skip
    while high - low > 1e-12 * (s[-1] - s[0]):
        middle = (low + high) / 2
        low, high = (low, middle) if excess(middle) > 0 else (middle, high)
    return (low + high) / 2
