"""The mechanism document: plain data, as the user wrote it (numbers or expressions), no derived state."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import ClassVar

from .expressions import Expr

GROUND = "0"
GROUND_ALIASES = ("0", "ground")
INERTIA_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")
# Each joint type: the primitive motions, in order, that carry the child joint frame from the parent joint frame
# ("Rz" rotation about z, "Tx" translation along x, ...), one per coordinate. "Bx", "By", "Bz" are the three
# components of a ball joint's rotation parameters ρ = 4 tan(φ/4) n (numerics/rodrigues.py), which turn the frame
# by the angle φ about the unit axis n of the parent joint frame together, without gimbal lock. "spherical" and
# "free_euler" turn by Euler angles instead (singular at the middle angle ±π/2); "free_euler" is what schema
# version 1 called "free" (docs/file-format.md).
JOINT_MOTIONS: dict[str, tuple[str, ...]] = {
    "revolute": ("Rz",),
    "prismatic": ("Tz",),
    "cylindrical": ("Tz", "Rz"),
    "universal": ("Rz", "Rx"),
    "ball": ("Bx", "By", "Bz"),
    "spherical": ("Rz", "Ry", "Rx"),
    "planar": ("Tx", "Ty", "Rz"),
    "fixed": (),
    "free": ("Tx", "Ty", "Tz", "Bx", "By", "Bz"),
    "free_euler": ("Tx", "Ty", "Tz", "Rz", "Ry", "Rx"),
}
JOINT_TYPES = tuple(JOINT_MOTIONS)
EULER_JOINTS = {"spherical": 1, "free_euler": 4}  # Euler-angle joints: the index of the middle angle β


def turns(motion: str) -> bool:
    """Whether a motion of JOINT_MOTIONS turns (its coordinate is an angle or a rotation parameter, in rad)."""
    return motion[0] in "RB"


Vector = list[Expr]


@dataclass
class Parameter:
    name: str
    value: float
    unit: str | None = None
    description: str | None = None


@dataclass
class Frame:
    """A frame on a body: origin (vector or point name), z axis, and x reference direction."""

    origin: Vector | str = field(default_factory=lambda: [0.0, 0.0, 0.0])
    z: Vector | None = None
    x: Vector | None = None


@dataclass
class ImpactStop:
    """The coordinate's `min` and `max` enforced by impacts: where the coordinate reaches a limit, the rate into it
    is reversed times the coefficient of restitution e (an impulse through the closed-loop projection), and a
    stop whose rebounds die out holds as a one-sided constraint until its force would pull
    (simulation/stops.py)."""

    restitution: Expr = 0.5
    type: ClassVar[str] = "impact"


@dataclass
class CompliantStop:
    """The coordinate's `min` and `max` enforced by a spring-damper that engages at each limit: beyond it by δ, the
    force pushing back is k δ + c s(δ) δ̇, never pulling, the damping rising smoothly from 0 at contact to c at the
    engagement distance (dynamics/forces.py)."""

    stiffness: Expr
    damping: Expr = 0.0
    engagement: Expr = 1e-3
    type: ClassVar[str] = "compliant"


STOPS = {cls.type: cls for cls in (ImpactStop, CompliantStop)}
Stop = ImpactStop | CompliantStop


@dataclass
class Coordinate:
    name: str
    initial: float | None = None
    min: float | None = None
    max: float | None = None
    stop: Stop | None = None  # how min and max are enforced in simulations; None: they are not (ranges only)


@dataclass
class Body:
    label: str
    name: str
    inertia: dict[str, Expr] = field(default_factory=lambda: dict.fromkeys(INERTIA_NAMES, 0.0))
    points: dict[str, Vector] = field(default_factory=dict)
    frames: dict[str, Frame] = field(default_factory=dict)
    shape: dict | None = None
    source_name: str | None = None  # the link's or body's name in the file it was imported from, written back

    def parameter_names(self) -> list[str]:
        """Names of the ten inertial parameters, e.g. ['m1', 'mx1', ...]."""
        return [f"{n}{self.label}" for n in INERTIA_NAMES]


@dataclass
class Joint:
    name: str
    type: str
    parent: str
    child: str
    parent_frame: Frame | str
    child_frame: Frame | str
    coordinates: list[Coordinate] = field(default_factory=list)
    cut: bool | None = None
    source_name: str | None = None  # the joint's name in the file it was imported from, written back


@dataclass
class Harmonic:
    """One term A·sin(ω t + φ) of a finite Fourier series (ω in rad/s; each may be an expression)."""

    amplitude: Expr
    frequency: Expr
    phase: Expr | None = None


@dataclass
class Trajectory:
    """A motion of the independent coordinates: each named coordinate is its initial value plus a sum of
    harmonics, sampled `samples` times over [0, duration] (Iriarte et al. 2017, eq. 16, for the SLA)."""

    name: str
    coordinates: dict[str, list[Harmonic]]
    duration: float
    samples: int
    description: str | None = None


TASK_COORDINATES = ("x", "y", "z")  # the platform's position components in the ground frame


@dataclass
class Platform:
    """The moving platform of a parallel kinematic machine (Müller 2021): its body, the task coordinates (the
    platform's position components it moves along; None: found from the mechanism's mobility) and paths of the
    platform, each a Trajectory over task coordinates that moves them from the document's pose by harmonics."""

    body: str
    task: list[str] | None = None
    paths: list[Trajectory] = field(default_factory=list)


@dataclass
class Model:
    name: str = "untitled"
    description: str = ""
    gravity: Vector = field(default_factory=lambda: [0.0, 0.0, -9.81])
    parameters: list[Parameter] = field(default_factory=list)
    bodies: list[Body] = field(default_factory=list)
    joints: list[Joint] = field(default_factory=list)
    independent_coordinates: list[str] | str = "auto"
    trajectories: list[Trajectory] = field(default_factory=list)
    ground: Body = field(default_factory=lambda: Body(GROUND, "ground", dict.fromkeys(INERTIA_NAMES, 0.0)))
    forces: list[ForceElement] = field(default_factory=list)
    actuated: list[str] = field(default_factory=list)  # coordinates driven by actuators (inverse dynamics)
    measures: list[Measure] = field(default_factory=list)  # columns of every time history (kinematics/measures)
    platform: Platform | None = None  # a parallel machine's platform, task space and platform paths (Müller 2021)
    couplings: list[Coupling] = field(default_factory=list)  # coordinates driven by others (mimic joints, gears)
    road: Road | None = None  # the ground under the tyres (None: flat, at height 0)

    def body(self, label: str) -> Body:
        """The body with this label; "0" or "ground" is the ground. An index of positions makes this constant
        time; it is checked at every use (labels are unique) and rebuilt when edits have moved a body."""
        if label in GROUND_ALIASES:
            return self.ground
        for attempt in range(2):
            index = self.__dict__.get("_positions") if attempt == 0 else self._index_bodies()
            at = index.get(label) if index else None
            if at is not None and at < len(self.bodies) and self.bodies[at].label == label:
                return self.bodies[at]
        raise KeyError(label)

    def _index_bodies(self) -> dict[str, int]:
        self.__dict__["_positions"] = {b.label: i for i, b in enumerate(self.bodies)}
        return self.__dict__["_positions"]

    def joint(self, name: str) -> Joint:
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(name)

    def parameter_values(self) -> dict[str, float]:
        return {p.name: p.value for p in self.parameters}

    def body_labels(self) -> list[str]:
        """The ground's label, then every body's: what a joint or force element can attach to."""
        return [GROUND] + [b.label for b in self.bodies]

    def coordinate_names(self) -> list[str]:
        return [c.name for j in self.joints for c in j.coordinates]

    def axial_coordinates(self) -> list[str]:
        """The coordinates that turn about or slide along an axis (all but ball joints' rotation parameters):
        those a coupling may drive or follow."""
        motions = [(c.name, m) for j in self.joints for c, m in zip(j.coordinates, JOINT_MOTIONS[j.type], strict=False)]
        return [name for name, motion in motions if motion[0] != "B"]

    def inertial_parameter_names(self) -> list[str]:
        """All bodies' inertial parameter names in document order (docs/architecture.md, conventions)."""
        return [n for b in self.bodies for n in b.parameter_names()]

    def copy(self) -> Model:
        return copy.deepcopy(self)


@dataclass
class Coupling:
    """A coordinate driven by another, follower = offset + ratio · leader, or with `polynomial` = [c0, c1, c2, ...]
    follower = c0 + c1 leader + c2 leader² + ... (MJCF's equality joint); without a leader the follower is held
    at the offset (or c0). A constraint row next to the loops' (kinematics/constraints.py): a URDF mimic joint
    (multiplier, offset), a gear pair (ratio −z1/z2), a rack and pinion (ratio r in m/rad). Values are numbers or
    expressions in the parameters; ratio and offset default to 1 and 0, and are not given with a polynomial."""

    name: str
    follower: str
    leader: str | None = None
    ratio: Expr | None = None
    offset: Expr | None = None
    polynomial: list[Expr] | None = None

    def coefficients(self) -> list[Expr]:
        """[c0, c1, ...]: follower = Σ c_k leader^k."""
        if self.polynomial is not None:
            return list(self.polynomial)
        offset = 0.0 if self.offset is None else self.offset
        return [offset] if self.leader is None else [offset, 1.0 if self.ratio is None else self.ratio]

    def formula(self) -> str:
        """'q2 = -z1/z2 · q1 + 0.1': the relation as written (terms that are zero left out)."""
        powers = ["", f"{self.leader}"] + [f"{self.leader}^{k}" for k in range(2, len(self.coefficients()))]
        terms = [
            f"({c}) · {x}" if x and isinstance(c, str) else (f"{c} · {x}" if x else f"{c}")
            for c, x in zip(self.coefficients(), powers, strict=False)
            if c != 0
        ]
        return f"{self.follower} = " + (" + ".join(reversed(terms)) or "0")


def body_key(label: str) -> str:
    """Canonical body label: ground aliases map to "0"."""
    return GROUND if label in GROUND_ALIASES else label


# Force elements ("forces" in the file). Values are expressions in the parameters; an actuator's formula and a
# point force's components may also use the time `t`. Every element has a unique name.
@dataclass
class SpringDamper:
    """A linear spring-damper between point1 of body1 and point2 of body2: its tension k (L − length) + c L̇
    pulls the points together (L their distance)."""

    name: str
    body1: str
    point1: str
    body2: str
    point2: str
    stiffness: Expr = 0.0
    damping: Expr = 0.0
    length: Expr = 0.0
    type: ClassVar[str] = "spring_damper"


@dataclass
class JointSpringDamper:
    """A spring and damper on one coordinate: force −k (q − rest) − c q̇."""

    name: str
    coordinate: str
    stiffness: Expr = 0.0
    damping: Expr = 0.0
    rest: Expr = 0.0
    type: ClassVar[str] = "joint_spring_damper"


@dataclass
class JointFriction:
    """Friction on one coordinate: −b q̇ − F_c tanh(q̇ / v_eps) (viscous, smoothed Coulomb)."""

    name: str
    coordinate: str
    viscous: Expr = 0.0
    coulomb: Expr = 0.0
    velocity_scale: Expr = 1e-3
    type: ClassVar[str] = "joint_friction"


@dataclass
class Actuator:
    """A prescribed force (torque) on one coordinate, a function of time: a formula in `t` or a table of
    [t, value] rows interpolated linearly (and held beyond its ends). Exactly one of the two."""

    name: str
    coordinate: str
    formula: Expr | None = None
    table: list[list[float]] | None = None
    type: ClassVar[str] = "actuator"


@dataclass
class PointForce:
    """A force at a named point of a body, its components in world axes (expressions, may use `t`)."""

    name: str
    body: str
    point: str
    force: Vector = field(default_factory=lambda: [0.0, 0.0, 0.0])
    type: ClassVar[str] = "point_force"


@dataclass
class Tyre:
    """A tyre as a vertical spring-damper between a wheel-centre point and the road: compressed by
    δ = radius − (z_centre − road height), it pushes the wheel up (world +z) by k δ + c s(δ) δ̇ and lets go when it
    leaves the road (the contact law of compliant stops, the damping rising over `engagement`)."""

    name: str
    body: str
    point: str
    stiffness: Expr = 0.0
    damping: Expr = 0.0
    radius: Expr = 0.3
    engagement: Expr = 1e-3
    type: ClassVar[str] = "tyre"


TYRE_RELAXATIONS = ("none", "first_order")  # a Magic Formula tyre's relaxation models


@dataclass
class MagicFormulaTyre:
    """A tyre on a wheel body that spins on its hub (docs/vehicle.md): its normal load from the vertical spring-damper
    of the tyre pressed into the road (as `Tyre`), its longitudinal and lateral forces and its moments from Pacejka's
    Magic Formula with the coefficients of the .tir file `tir` (a path relative to the model's file, inside its
    folder), at the slip ratio and slip angle of the wheel's point on the road. `spin_axis` (wheel axes) points to
    the wheel's left when it rolls forward; `low_speed` [m/s] keeps the slips finite at standstill (the forward speed
    in their denominators is sqrt(Vx² + low_speed²)). `side` ("left" or "right") is the side of the car it is
    mounted on: a tyre on the other side from the file's TYRESIDE is its mirror image (its lateral force, overturning
    and aligning moments at the slip angle and camber mirrored, as MF-Tyre does). `relaxation`: "none" (the forces
    follow the slips at once) or "first_order" (through the .tir's relaxation lengths: dynamics/tyres/relaxation.py)."""

    name: str
    body: str
    point: str
    tir: str
    side: str = "left"
    spin_axis: Vector = field(default_factory=lambda: [0.0, 1.0, 0.0])
    stiffness: Expr = 0.0
    damping: Expr = 0.0
    radius: Expr = 0.3
    engagement: Expr = 1e-3
    low_speed: Expr = 0.5
    relaxation: str = "none"
    type: ClassVar[str] = "magic_formula_tyre"


@dataclass
class PathDriver:
    """A driver steering a car along a path: a position servo on the steering `coordinate` (−k (x − x*) − c ẋ)
    whose target x* = gain × e follows the lateral error e = y_path(x_P) − y_P of the point P `preview` metres ahead
    of `body`'s origin along its heading (the body's x axis in the road plane); `path` is [x, y] rows in world
    axes, joined by straight lines and held level beyond its ends (docs/vehicle.md, the double lane change)."""

    name: str
    coordinate: str
    body: str
    path: list[list[float]]
    preview: Expr = 10.0
    gain: Expr = 0.0
    stiffness: Expr = 0.0
    damping: Expr = 0.0
    type: ClassVar[str] = "path_driver"


@dataclass
class CircleDriver:
    """A driver steering a car round a circle (ISO 4138's constant radius): the path driver's servo on the steering
    `coordinate`, whose target x* = gain × e follows the distance e = |P − C| − radius of the point P `preview` metres
    ahead of `body`'s origin (along its heading) outside the circle of centre C = (centre_x, centre_y), world axes;
    the car goes round it turning left (docs/vehicle.md, the constant-radius manoeuvre)."""

    name: str
    coordinate: str
    body: str
    centre_x: Expr = 0.0
    centre_y: Expr = 0.0
    radius: Expr = 40.0
    preview: Expr = 10.0
    gain: Expr = 0.0
    stiffness: Expr = 0.0
    damping: Expr = 0.0
    type: ClassVar[str] = "circle_driver"


@dataclass
class SpeedController:
    """A driver holding a car's forward speed: the torque gain × (speed − V) × radius, V the forward speed of `body`'s
    origin along its heading (the body's x axis in the road plane), split equally to the `coordinates` (the driven
    wheels' spin coordinates); positive drives, negative brakes. Units: speed in m/s, gain in N s/m (force at the
    road per m/s of error), radius in m (docs/vehicle.md, the manoeuvres); the speed may be a function of the time t
    (the constant-radius manoeuvre raises it slowly)."""

    name: str
    body: str
    coordinates: list[str]
    speed: Expr = 0.0
    gain: Expr = 0.0
    radius: Expr = 0.3
    type: ClassVar[str] = "speed_controller"


@dataclass
class Contact:
    """A sphere of `radius` centred at a body point against a plane fixed in the ground (through `plane_origin`,
    normal `plane_normal` pointing out of the ground, world axes; z = 0 by default), compliant (docs/contact.md):
    pressed in by δ = radius − (p − o)·n, it pushes the sphere out along n by the Hunt–Crossley force
    f_n = max(0, k δ^n (1 + 3/2 c_d δ̇)) and resists the slip v_t of its point nearest the plane by the regularised
    Coulomb friction f_t = −μ f_n v_t / sqrt(|v_t|² + v_s²). Units: k in N/m^n, c_d in s/m, v_s in m/s. The rigid
    model (simulate(..., contact="rigid")) reads its radius, plane, μ and the restitution e of Newton's impact law.
    With `shape` a box or a convex mesh instead presses through its vertices, each a sphere of `radius`."""

    name: str
    body: str
    point: str
    radius: Expr = 0.01
    stiffness: Expr = 0.0
    exponent: Expr = 1.5
    dissipation: Expr = 0.0
    friction: Expr = 0.0
    stiction_velocity: Expr = 1e-3
    plane_origin: Vector = field(default_factory=lambda: [0.0, 0.0, 0.0])
    plane_normal: Vector = field(default_factory=lambda: [0.0, 0.0, 1.0])
    restitution: Expr = 0.0  # Newton's coefficient e, for the rigid model only (simulation/rigid_stepping.py)
    against: str | None = None  # None: the plane; "road": the model's (still) road surface, compliant model only
    # The contact shape (dynamics/contact_shapes.py): None a sphere; "box" of `half_extents` or "mesh" of convex
    # `vertices` (rows [x, y, z]), centred at the point with axes turned by `rpy` (roll, pitch, yaw in rad, URDF's
    # Rz Ry Rx) from the body's; their vertices are spheres of `radius` (0: sharp corners)
    shape: str | None = None
    half_extents: Vector | None = None
    vertices: list[list[float]] | None = None
    rpy: Vector | None = None
    type: ClassVar[str] = "contact"


CONTACT_SHAPES = ("sphere", "box", "mesh")  # a Contact's shape; no value is a sphere


@dataclass
class ContactPair:
    """An opt-in contact between a sphere of `radius1` centred at point1 of body1 and one of `radius2` centred at
    point2 of body2, compliant as a Contact (docs/contact.md): pressed in by δ = r1 + r2 − |P2 − P1|, they push
    apart along n = (P2 − P1)/|P2 − P1| by f_n = max(0, k δ^n (1 + 3/2 c_d δ̇)), and friction
    f_t = −μ f_n v_t / sqrt(|v_t|² + v_s²) resists the slip v_t of body2 on body1 at the contact point, equal and
    opposite on the two bodies. With `end2` (another point of body2) body2's shape is a capsule instead: the
    segment from point2 to end2 swept by radius2, met at its point nearest P1. Units as a Contact's
    (force_laws/contact_pair_law.py). The rigid model reads its radii, μ and the restitution e of Newton's impact
    law."""

    name: str
    body1: str
    point1: str
    body2: str
    point2: str
    radius1: Expr = 0.01
    radius2: Expr = 0.01
    stiffness: Expr = 0.0
    exponent: Expr = 1.5
    dissipation: Expr = 0.0
    friction: Expr = 0.0
    stiction_velocity: Expr = 1e-3
    end2: str | None = None  # a capsule's other end on body2 (None: a sphere)
    restitution: Expr = 0.0  # Newton's coefficient e, for the rigid model only (simulation/rigid_stepping.py)
    # Each side's shape, as a Contact's (dynamics/contact_shapes.py): None a sphere, "box" of half extents or
    # "mesh" of convex vertices, centred at its point with axes turned by rpy; its radius rounds a box's or mesh's
    # vertices (0: sharp). A box or mesh meets the other side through its vertices (docs/contact.md)
    shape1: str | None = None
    half_extents1: Vector | None = None
    vertices1: list[list[float]] | None = None
    rpy1: Vector | None = None
    shape2: str | None = None
    half_extents2: Vector | None = None
    vertices2: list[list[float]] | None = None
    rpy2: Vector | None = None
    type: ClassVar[str] = "contact_pair"


BUSHING_DIRECTIONS = ("x", "y", "z", "rx", "ry", "rz")  # a bushing's deflections: translations, then rotations


@dataclass
class Bushing:
    """A rubber bushing between frame1 (A, a named frame of body1) and frame2 (B, of body2): six deflections δ,
    frame B's origin in A's axes and the rotation parameters ρ = 4 tan(φ/4) n of B's axes relative to A's
    (ρ ≈ φ n for small angles), resist by K δ + C δ̇ − preload (the force on B, in A's axes; on A its opposite).
    `stiffness` and `damping` are six diagonal entries or six rows of six (symmetric), in the order of
    BUSHING_DIRECTIONS; `tables` maps a direction to [deflection, force] rows whose piecewise linear force (straight
    on beyond the ends) adds to that direction's (force_laws/bushing_law.py)."""

    name: str
    body1: str
    frame1: str
    body2: str
    frame2: str
    stiffness: list = field(default_factory=lambda: [0.0] * 6)
    damping: list = field(default_factory=lambda: [0.0] * 6)
    preload: Vector = field(default_factory=lambda: [0.0] * 6)
    tables: dict[str, list[list[float]]] = field(default_factory=dict)
    type: ClassVar[str] = "bushing"


ROAD_INTERPOLATIONS = ("linear", "smooth")


@dataclass
class Road:
    """The ground under the tyres: heights `profile` [[s, z], ...] at distances s along the world x axis,
    joined by straight lines ("linear") or by a monotone cubic with a continuous slope ("smooth",
    dynamics/road_profile.py), held level beyond its ends, passing rearward under the model at `speed` (a rolling
    road): under a wheel centre at world x the road's height at time t is z(x + speed t), so each wheel meets a
    bump at its own time. Or, instead of the profile, a `surface` z(x, y): a CSV grid of heights (its path relative
    to the model's folder in the file, absolute once loaded), joined with a continuous gradient
    (dynamics/road_surface.py), or a `formula` z(x, y) (dynamics/road_formula.py); under a point at world (x, y)
    its height is z(x + speed t, y)."""

    profile: list[list[float]] = field(default_factory=list)
    speed: Expr = 0.0
    interpolation: str = "linear"  # ROAD_INTERPOLATIONS
    surface: str | None = None
    surface_sha256: str | None = None  # the grid's content when loaded: in the text an engine is filed under
    formula: Expr | None = None  # instead of the profile or the grid: z(x, y) in the expression language


FORCE_ELEMENTS = {
    cls.type: cls
    for cls in (
        *(SpringDamper, JointSpringDamper, JointFriction, Actuator, PointForce, Tyre, Contact, Bushing),
        ContactPair,
        MagicFormulaTyre,
        PathDriver,
        CircleDriver,
        SpeedController,
    )
}
ForceElement = (
    SpringDamper
    | JointSpringDamper
    | JointFriction
    | Actuator
    | PointForce
    | Tyre
    | Contact
    | ContactPair
    | Bushing
    | MagicFormulaTyre
)


# Measures ("measures" in the file): quantities computed along every motion and added to its columns, named
# "<name>" or "<name>.<part>". Points and axes are those of the bodies; vectors are in body axes.
@dataclass
class PointMeasure:
    """A body point's position, velocity and acceleration in world axes: <name>.x, .y, .z [m], <name>.vx ...
    [m/s], <name>.ax ... [m/s^2] (a coupler curve, a wheel centre's path)."""

    name: str
    body: str
    point: str
    type: ClassVar[str] = "point"


@dataclass
class DistanceMeasure:
    """The distance between two body points and its rate: <name> [m], <name>.rate [m/s]."""

    name: str
    body1: str
    point1: str
    body2: str
    point2: str
    type: ClassVar[str] = "distance"


@dataclass
class AngleMeasure:
    """The angle between an axis fixed in body1 and one fixed in body2 (vectors in their body axes), from 0 to
    pi: <name> [rad]."""

    name: str
    body1: str
    axis1: Vector
    body2: str
    axis2: Vector
    type: ClassVar[str] = "angle"


@dataclass
class ForceMeasure:
    """What a force element does along the motion: a spring-damper's length [m] and tension [N] (positive
    pulling its points together), a coordinate element's generalized force [N or N m]: <name>.length,
    <name>.force."""

    name: str
    element: str
    type: ClassVar[str] = "force"


@dataclass
class SuspensionMeasure:
    """The wheel-alignment set of a suspension corner (ISO 8855 / SAE J670 senses; world x forward, y left,
    z up, the vehicle's centre plane y = 0): <name>.toe (toe-in positive), .camber (top outboard positive),
    .caster (kingpin top rearward positive), .kingpin_inclination (top inboard positive) [rad]; .scrub_radius
    [m] (kingpin's ground point inboard of the contact point positive); .wheel_travel [m] (wheel centre height
    above its height at the document's pose; bump positive); .motion_ratio [1] (the damper's compression rate
    over the wheel travel rate) and .bump_steer [rad/m] (toe rate over wheel travel rate), where the wheel
    centre moves vertically. The wheel body carries the centre point and the spin axis; the kingpin axis runs
    from the lower to the upper ball joint (body points); the tyre radius places the contact point; `damper`
    names a spring-damper (optional)."""

    name: str
    wheel: str
    centre: str
    spin_axis: Vector
    lower_body: str
    lower_point: str
    upper_body: str
    upper_point: str
    radius: Expr
    damper: str | None = None
    type: ClassVar[str] = "suspension"


# The (body field, point field) pairs of force elements and measures: where they act or measure.
PLACES = (
    ("body", "point"),
    ("body1", "point1"),
    ("body2", "point2"),
    ("wheel", "centre"),
    ("lower_body", "lower_point"),
    ("upper_body", "upper_point"),
)
MEASURES = {cls.type: cls for cls in (PointMeasure, DistanceMeasure, AngleMeasure, ForceMeasure, SuspensionMeasure)}
Measure = PointMeasure | DistanceMeasure | AngleMeasure | ForceMeasure | SuspensionMeasure
