"""Writes samples/vehicle.mbs: a full vehicle built from the SLA suspension sample's corner.

    python3 tools/make_vehicle.py [OUT.mbs]

Four copies of samples/sla_suspension.mbs's corner (its geometry, bodies and inertias; the wheel fixed to its hub),
mirrored to the right (y -> -y) and moved a wheelbase back for the rear; a chassis on a free joint; a steering rack
on a prismatic joint across the chassis, held by a position servo that follows a steering input, carrying the front
tie rods (the rear ones are toe links to the chassis); coil-overs with compliant bump and rebound stops on their
stroke; tyres as vertical spring-dampers on a road with one bump, passing under the car at 10 m/s.

The chassis, its weight distribution, the springs, tyres, stops, rack and road are ours. The springs' free lengths
and the tyre radius are solved here so that the document's pose (every corner at the SLA's design position, the
chassis level at z = 0) is the static equilibrium; each axle's springs give the same body frequency, so that heave
and pitch do not couple (a "flat ride": the front and rear ride rates in proportion to the sprung mass each axle
carries).
"""

from __future__ import annotations

import copy
import math
import sys
from pathlib import Path

import numpy as np

from mbstudio import samples
from mbstudio.dynamics.closed_loop import closed_loop_forward_dynamics
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.kinematics import Mechanism
from mbstudio.model import Body, Coordinate, Frame, Joint, Model, Parameter, save
from mbstudio.model.document import (
    CompliantStop,
    ForceMeasure,
    JointSpringDamper,
    Road,
    SpringDamper,
    SuspensionMeasure,
    Tyre,
)
from mbstudio.simulation.monitors import centre_of_mass_and_momenta

OUT = Path(__file__).resolve().parents[1] / "samples" / "vehicle.mbs"
CORNERS = {"fl": (1, 0), "fr": (-1, 0), "rl": (1, 1), "rr": (-1, 1)}  # corner: (side +1 left / -1 right, rear 0 / 1)
WHEELBASE = 2.7  # m, front to rear wheel centres
CHASSIS = {"m": 1250.0, "c": [-1.2, 0.0, 0.55], "I": [420.0, 1650.0, 1800.0]}  # kg; m from the front axle; kg m²
RACK_MASS = 3.0  # kg
BODY_FREQUENCY = 1.2  # Hz: each axle's sprung mass on its springs and tyres in series
TYRE = {"stiffness": 250e3, "damping": 150.0, "engagement": 0.002}  # N/m, N s/m, m
DAMPING = 3000.0  # N s/m, each coil-over
STOP = {"bump": 0.03, "rebound": 0.02, "stiffness": 2e5, "damping": 2e3, "engagement": 0.005}  # stroke (m), N/m ...
SERVO = {"stiffness": 2e5, "damping": 4e3, "steer": "0.012*sin(pi*t)"}  # the rack follows 12 mm at 0.5 Hz
ROAD_SPEED = 10.0  # m/s
BUMP = {"at": 20.0, "length": 0.6, "height": 0.06, "points": 25}  # a (1 - cos) bump across the road, m
G = 9.81


# ---------------------------------------------------------------------------------------------- one corner
def _negate(value):
    return -value if isinstance(value, int | float) else f"-({value})"


def mirrored(v, side: int):
    """A point or direction of the left corner on `side` (+1 left, -1 right: y negated)."""
    return v if side == 1 or v is None else [v[0], _negate(v[1]), v[2]]


def frame(f: Frame, side: int, flip: bool = False, origin=None) -> Frame:
    """A frame mirrored to `side`; `flip` turns a revolute joint's axis over on the right, so that its angle keeps
    the left's sense (the arms' angles are positive in bump on both sides)."""
    z = mirrored(f.z, side)
    if flip and side == -1:
        z = [_negate(c) for c in z]
    where = f.origin if isinstance(f.origin, str) else mirrored(f.origin, side)
    return Frame(where if origin is None else origin, z, mirrored(f.x, side))


def corner_body(b: Body, corner: str, side: int) -> Body:
    """The SLA's body for `corner`: labelled for it, mirrored to its side (the first moment and the products of
    inertia in y change sign with the body's y)."""
    out = copy.deepcopy(b)
    out.label, out.name = f"{corner}{b.label}", f"{b.name} {corner.upper()}"
    out.points = {k: mirrored(v, side) for k, v in b.points.items()}
    out.frames = {k: frame(f, side, flip=k == "pivot") for k, f in b.frames.items()}  # the arms' pivot frames
    if side == -1:
        for key in ("my", "Ixy", "Iyz"):
            out.inertia[key] = _negate(out.inertia[key])
        out.shape = {k: mirrored(v, side) if k in ("origin", "axis") else v for k, v in b.shape.items()}
    return out


# The coordinates of a joint that change sign when its corner is mirrored: an angle about a mirrored axis turns the
# other way, except a spherical joint's middle one, about the y axis, which the mirrored frame reverses as well.
MIRRORED_SIGNS = {"revolute": (-1,), "prismatic": (1,), "universal": (-1, -1), "spherical": (-1, 1, -1)}


def corner_joint(j: Joint, corner: str, side: int, rear: int) -> Joint:
    """The SLA's joint for `corner`: its bodies and coordinates renamed, the chassis's frames named per corner, the
    wheel fixed to its hub (no spin: the tyres push vertically and the road rolls), a front tie rod on the rack."""
    out = copy.deepcopy(j)
    out.name = f"{corner}_{j.name}"
    on_rack = j.name == "tie_rod_inner" and not rear
    ground = "rack" if on_rack else "chassis"
    out.parent, out.child = (ground if x == "0" else f"{corner}{x}" for x in (j.parent, j.child))
    if j.parent == "0":
        out.parent_frame = f"{corner}_{j.parent_frame}"
    if j.name == "wheel_bearing":
        out.type, out.coordinates = "fixed", []
        return out
    signs = MIRRORED_SIGNS[j.type] if side == -1 and j.type != "revolute" else (1,) * len(j.coordinates)
    out.coordinates = [
        Coordinate(f"{corner}_{c.name}", c.initial, *((c.min, c.max) if s == 1 else (-c.max, -c.min)))
        for c, s in zip(j.coordinates, signs, strict=True)
    ]
    return out


def chassis_points(sla: Model, corner: str, rise: float) -> tuple[dict, dict]:
    """The corner's attachment points and frames on the chassis (the front tie rods' on the rack instead)."""
    side, rear = CORNERS[corner]
    points = {}
    for name, point in sla.ground.points.items():
        x, y, z = mirrored(point, side)
        if rear or name != "J":
            points[f"{corner}_{name}"] = [f"{x} - wheelbase", y, z + rise] if rear else [x, y, z]
    frames = {
        f"{corner}_{name}": frame(f, side, flip=name.endswith("_axis"), origin=f"{corner}_{f.origin}")
        for name, f in sla.ground.frames.items()
        if rear or name != "J"
    }
    return points, frames


# ---------------------------------------------------------------------------------------------- the vehicle
def chassis_body() -> Body:
    """The sprung body; its frame at the front axle's centre, on the road when the car stands."""
    m, c = CHASSIS["m"], np.array(CHASSIS["c"])
    tensor = np.diag(CHASSIS["I"]) + m * (c @ c * np.eye(3) - np.outer(c, c))  # about the origin: parallel axes
    inertia = {"m": m, "mx": m * c[0], "my": m * c[1], "mz": m * c[2]}
    inertia |= {f"I{'xyz'[i]}{'xyz'[j]}": float(tensor[i, j]) for i in range(3) for j in range(i, 3)}
    shape = {"type": "box", "size": [3.8, 0.7, 0.3], "origin": [-1.35, 0.0, 0.82], "color": "#5a7fa8"}
    return Body("chassis", "chassis", inertia, {"centre_of_mass": list(c)}, {}, shape)


def rack(sla: Model) -> tuple[Body, Joint]:
    """The steering rack: a bar through the front tie rods' inner joints, sliding across the chassis. Its frame
    coincides with the chassis's when the rack is centred."""
    x, y, z = sla.ground.points["J"]
    m, length = RACK_MASS, 2 * y
    bar = m * length**2 / 12
    inertia = {"m": m, "mx": m * x, "my": 0.0, "mz": m * z, "Ixx": bar + m * z**2, "Ixy": 0.0, "Ixz": -m * x * z,
               "Iyy": m * (x**2 + z**2), "Iyz": 0.0, "Izz": bar + m * x**2}  # fmt: skip
    points = {"centre": [x, 0.0, z], "fl_J": [x, y, z], "fr_J": [x, -y, z]}
    frames = {"slide": Frame("centre", [0.0, 1.0, 0.0], [1.0, 0.0, 0.0])}
    frames |= {f"{c}_J": frame(sla.ground.frames["J"], CORNERS[c][0], origin=f"{c}_J") for c in ("fl", "fr")}
    shape = {"type": "cylinder", "radius": 0.02, "length": length, "axis": [0, 1, 0], "origin": [x, 0, z],
             "color": "#c0c0c0"}  # fmt: skip
    steering = Joint(
        "steering", "prismatic", "chassis", "rack", "rack_slide", "slide", [Coordinate("rack", 0.0, -0.08, 0.08)]
    )
    return Body("rack", "steering rack", inertia, points, frames, shape), steering


def bump_profile() -> list[list[float]]:
    """Flat, then a (1 - cos) bump of BUMP's height and length, then flat: heights at distances along x."""
    s = np.linspace(0.0, 1.0, BUMP["points"])
    bump = [[round(BUMP["at"] + BUMP["length"] * u, 6), round(BUMP["height"] * (1 - math.cos(2 * math.pi * u)) / 2, 7)]
            for u in s]  # fmt: skip
    return [[-100.0, 0.0], *bump, [200.0, 0.0]]


def vehicle(rise: float, springs: tuple[float, float], free_lengths: tuple[float, float], radius: float) -> Model:
    """The vehicle, its rear geometry `rise` above the front's, with the front and rear springs' stiffnesses and
    free lengths and the tyres' free radius."""
    sla = samples.load("sla_suspension")
    chassis = chassis_body()
    rack_body, steering = rack(sla)
    chassis.points["rack_slide"] = rack_body.points["centre"]
    chassis.frames["rack_slide"] = Frame("rack_slide", [0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    ride = Joint("ride", "free_euler", "0", "chassis", Frame(), Frame(),
                 [Coordinate(n, 0.0) for n in ("x", "y", "z", "yaw", "pitch", "roll")])  # fmt: skip
    model = Model("vehicle", DESCRIPTION, bodies=[chassis, rack_body], joints=[ride, steering])
    model.parameters = [*copy.deepcopy(sla.parameters), Parameter("wheelbase", WHEELBASE, "m", "front to rear axle")]
    for corner, (side, rear) in CORNERS.items():
        model.bodies += [corner_body(b, corner, side) for b in sla.bodies]
        model.joints += [corner_joint(j, corner, side, rear) for j in sla.joints]
        points, frames = chassis_points(sla, corner, rise if rear else 0.0)
        chassis.points |= points
        chassis.frames |= frames
        stroke = next(c for j in model.joints for c in j.coordinates if c.name == f"{corner}_damper_s")
        stroke.min, stroke.max = 0.5 - STOP["bump"], 0.5 + STOP["rebound"]
        stroke.stop = CompliantStop(STOP["stiffness"], STOP["damping"], STOP["engagement"])
        model.forces += [
            SpringDamper(
                f"{corner}_coilover",
                f"{corner}6",
                "C",
                f"{corner}7",
                "ball",
                springs[rear],
                DAMPING,
                free_lengths[rear],
            ),  # fmt: skip
            Tyre(
                f"{corner}_tyre",
                f"{corner}3",
                "K",
                TYRE["stiffness"],
                TYRE["damping"],
                radius,
                TYRE["engagement"],
            ),  # fmt: skip
        ]
        spin = mirrored([0, -1, 0], side)  # the SLA's measure: the spin axis in hub axes
        model.measures += [
            ForceMeasure(f"{corner}_load", f"{corner}_tyre"),
            SuspensionMeasure(
                f"{corner}_alignment",
                f"{corner}3",
                "K",
                spin,
                f"{corner}1",
                "G",
                f"{corner}2",
                "D",
                radius,
                f"{corner}_coilover",
            ),  # fmt: skip
        ]
    model.forces.append(
        JointSpringDamper("steering_servo", "rack", SERVO["stiffness"], SERVO["damping"], SERVO["steer"])
    )
    model.independent_coordinates = ["x", "y", "z", "yaw", "pitch", "roll", "rack", *(f"{c}_theta1" for c in CORNERS)]
    model.road = Road(bump_profile(), ROAD_SPEED, "smooth")  # no corner at each row: no retried steps
    return model


# ---------------------------------------------------------------------------------------------- statics
def axle_loads(model: Model) -> tuple[float, float, float, float]:
    """Each front and rear tyre's load when the car stands (a rigid body on four supports, left and right alike:
    the vertical forces and the moments about the rear axle balance the weight), and the wheel centres' x."""
    mech = Mechanism(model)
    q = mech.assemble(None)
    mass = sum(float(b.inertia["m"]) for b in model.bodies)
    centre = centre_of_mass_and_momenta(mech, q, np.zeros_like(q))[0][0]
    x_front, x_rear = (mech.points(q)[(f"{c}3", "K")][0, 0] for c in ("fl", "rl"))
    front = mass * G * (centre[0] - x_rear) / (x_front - x_rear) / 2
    return front, mass * G / 2 - front, x_front, x_rear


def corner_mass(sla: Model) -> float:
    return sum(float(b.inertia["m"]) for b in sla.bodies)


def motion_ratio(sla: Model) -> float:
    """The coil-over's compression per wheel travel at the design position (the SLA with its wheel fixed)."""
    mech = Mechanism(sla)
    q = mech.assemble(None)
    R = mech.r_matrix(q)[0][:, mech.independent.index("theta1")]
    centre = np.asarray(mech.tree.geometry.point(sla.body("3"), "K"), float)
    rise = mech.body_jacobian(q, "3", centre)[0, 5] @ R
    return float(-R[mech.coordinates.index("damper_s")] / rise)


def springs(front: float, rear: float, ratio: float, unsprung: float) -> tuple[float, float]:
    """Spring rates giving each axle's sprung mass BODY_FREQUENCY on its ride rate (wheel rate k ratio² and tyre in
    series)."""
    out = []
    for load in (front, rear):
        ride = (2 * math.pi * BODY_FREQUENCY) ** 2 * (load / G - unsprung)
        wheel = ride * TYRE["stiffness"] / (TYRE["stiffness"] - ride)
        out.append(wheel / ratio**2)
    return out[0], out[1]


def standing(rise: float, rates: tuple[float, float]) -> tuple[tuple[float, float], float, float]:
    """The springs' free lengths and the tyre radius that make the document's pose the static equilibrium: the
    accelerations there are affine in them, so one least-squares solve finds them; and what is left."""

    def accelerations(unknowns: np.ndarray) -> np.ndarray:
        mech = Mechanism(vehicle(rise, rates, tuple(unknowns[:2]), float(unknowns[2])))
        q, rest = mech.assemble(None), np.zeros((1, mech.n))
        Q = AppliedForces(mech).generalized(0.0, q, rest)
        return np.asarray(closed_loop_forward_dynamics(mech, q, rest, Q), float)[0]

    guess = np.array([0.5, 0.5, 0.35])
    base = accelerations(guess)
    columns = [accelerations(guess + step) - base for step in np.eye(3) * 1e-3]
    unknowns = guess - 1e-3 * np.linalg.lstsq(np.column_stack(columns), base, rcond=None)[0]
    left = accelerations(unknowns)
    return (float(unknowns[0]), float(unknowns[1])), float(unknowns[2]), float(np.abs(left).max())


DESCRIPTION = (
    "A full vehicle for vertical dynamics (ours: dimensions, masses, springs, tyres and road are our choices, not "
    "from a paper). Each corner is the short-long-arm suspension of samples/sla_suspension.mbs (X. Iriarte, J. Ros, "
    "J. Plaza, J. Aginaga, V. Mata, 'Drawbacks and alternatives to the numerical calculation of the base inertial "
    "parameters expressions for low mobility mechanisms', ASME Journal of Mechanical Design): its geometry, bodies "
    "and inertias, the wheel fixed to its hub (nothing turns the wheels: the tyres push vertically and the road "
    "moves), mirrored for the right side (y -> -y; the arms' angles keep their sense: positive in bump) and moved a "
    "wheelbase back, and {rise_mm:.2f} mm up, for the rear, where the tie rods become toe links to the chassis. "
    "Bodies fl1..fl7, fr1.., rl1.., rr1.. carry the SLA's labels (1 lower arm, 2 upper arm, 3 hub, 4 tie rod, 5 "
    "wheel, 6 damper body, 7 damper rod); coordinates and joints are the SLA's prefixed by the corner. Chassis: "
    "{mass:g} kg on a free joint in Euler angles ('ride', free_euler: x, y, z, yaw, pitch, roll, the angles a "
    "vehicle engineer reads), centre of mass {cx:g} m behind the front axle "
    "and {cz:g} m up, moments of inertia {Ixx:g}, {Iyy:g}, {Izz:g} kg m² about it; its frame at the front axle's "
    "centre, on the road when the car stands. The whole car weighs {total:.1f} kg, {front_pct:.1f} % on the front "
    "axle: each front tyre carries {front:.1f} N and each rear one {rear:.1f} N standing. Steering: a {rack:g} kg "
    "rack sliding across the chassis ('rack', m) carries the front tie rods' inner joints; a position servo "
    "('steering_servo', {servo_k:g} N/m, {servo_c:g} N s/m) makes it follow the steering input {steer} m. "
    "Coil-overs: the SLA's spring-damper, {k_front:.0f} N/m front and {k_rear:.0f} N/m rear with {damping:g} N s/m, "
    "their free lengths solved so that the document's pose is the static equilibrium; each axle's sprung mass has "
    "{frequency:g} Hz on its ride rate (the spring's wheel rate k MR², MR = {ratio:.4f} the coil-over's motion ratio "
    "at design, in series with the tyre), which decouples heave from pitch. Bump and rebound stops: compliant stops on "
    "each coil-over's stroke (damper_s) {bump:g} m shorter and {rebound:g} m longer than at design, {stop_k:g} N/m, "
    "{stop_c:g} N s/m, engaging over {engagement:g} m. Tyres: vertical spring-dampers from each wheel centre to the "
    "road, {tyre_k:g} N/m and {tyre_c:g} N s/m, free radius {radius:.4f} m. Road: flat with one (1 - cos) bump "
    "{height:g} m high and {length:g} m long at {at:g} m (its {points} rows joined smoothly), passing under the car "
    "at {speed:g} m/s: the front wheels meet it at about {t_front:.2f} s, the rear ones at {t_rear:.2f} s. Measures: "
    "each tyre's load and deflection, each corner's alignment set (tyre radius as above). tools/make_vehicle.py "
    "writes this file."
)


def main(out: Path = OUT) -> None:
    sla = samples.load("sla_suspension")
    first = vehicle(0.0, (3e4, 3e4), (0.5, 0.5), 0.35)
    front, rear, x_front, x_rear = axle_loads(first)
    rise = (front - rear) / TYRE["stiffness"]  # the rear wheel centres stand that much higher, on one tyre radius
    ratio = motion_ratio(sla)
    rates = tuple(round(k) for k in springs(front, rear, ratio, corner_mass(sla)))
    lengths, radius, left = standing(rise, rates)
    if left > 1e-8:
        raise SystemExit(f"the pose is not the static equilibrium: accelerations up to {left:.3g} remain")
    mass = sum(float(b.inertia["m"]) for b in first.bodies)
    model = vehicle(rise, rates, lengths, radius)
    model.description = DESCRIPTION.format(
        rise_mm=rise * 1e3, mass=CHASSIS["m"], cx=-CHASSIS["c"][0], cz=CHASSIS["c"][2], Ixx=CHASSIS["I"][0],
        Iyy=CHASSIS["I"][1], Izz=CHASSIS["I"][2], total=mass, front_pct=100 * front / (front + rear), front=front,
        rear=rear, rack=RACK_MASS, servo_k=SERVO["stiffness"], servo_c=SERVO["damping"], steer=SERVO["steer"],
        k_front=rates[0], k_rear=rates[1], damping=DAMPING, frequency=BODY_FREQUENCY, ratio=ratio, bump=STOP["bump"],
        rebound=STOP["rebound"], stop_k=STOP["stiffness"], stop_c=STOP["damping"], engagement=STOP["engagement"],
        tyre_k=TYRE["stiffness"], tyre_c=TYRE["damping"], radius=radius, height=BUMP["height"], length=BUMP["length"],
        at=BUMP["at"], points=BUMP["points"], speed=ROAD_SPEED, t_front=(BUMP["at"] - x_front) / ROAD_SPEED,
        t_rear=(BUMP["at"] - x_rear) / ROAD_SPEED,
    )  # fmt: skip
    save(model, out)
    print(f"wrote {out}: {len(model.bodies)} bodies, {sum(len(j.coordinates) for j in model.joints)} joint coordinates;"
          f" tyre loads {front:.1f} N front, {rear:.1f} N rear; accelerations left at the pose {left:.2g}")  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
