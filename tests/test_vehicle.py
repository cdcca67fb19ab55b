"""Tyres, the road and the full-vehicle sample (samples/vehicle.mbs, written by tools/make_vehicle.py): a wheel on its
tyre against its hand deflection and the road's timing, the compiled engine against the numpy path; the vehicle
standing on the corner loads of its weight distribution, its heave on the tyre and spring in series, its modes by
their shapes, a corner against the Pinocchio constrained reference, and its loops over a drive over the bump."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.closed_loop import closed_loop_forward_dynamics, reduced_mass_matrix
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.kinematics import Mechanism
from mbstudio.model import loads
from mbstudio.model.document import Model, Tyre
from mbstudio.simulation.monitors import centre_of_mass_and_momenta
from mbstudio.simulation.run import simulate

G = 9.81
ROOT = Path(__file__).resolve().parents[1]
CORNERS = ("fl", "fr", "rl", "rr")


def wheel_on_a_tyre(road: dict | None = None, stiffness: float = 2e5, damping: float = 300.0, start=None) -> dict:
    """A 40 kg wheel on a vertical slider (its height h, the wheel centre's), on a tyre of radius 0.32 m, starting
    at `start` (default: standing, the tyre pressed in by the weight)."""
    inertia = {"m": 40.0, "mx": 0, "my": 0, "mz": 0, "Ixx": 1.0, "Ixy": 0, "Ixz": 0, "Iyy": 1.0, "Iyz": 0, "Izz": 1.0}
    data = {
        "format": "mbstudio",
        "schema_version": 1,
        "name": "wheel",
        "bodies": [{"label": "w", "name": "wheel", "inertia": inertia, "points": {"centre": [0, 0, 0]}}],
        "joints": [
            {
                "name": "slider",
                "type": "prismatic",
                "parent": "0",
                "child": "w",
                "parent_frame": {"origin": [1.5, 0, 0]},
                "child_frame": {"origin": [0, 0, 0]},
                "coordinates": [{"name": "h", "initial": 0.32 - 40 * G / stiffness if start is None else start}],
            }
        ],
        "forces": [
            {
                "type": "tyre",
                "name": "tyre",
                "body": "w",
                "point": "centre",
                "stiffness": stiffness,
                "damping": damping,
                "radius": 0.32,
            }
        ],  # fmt: skip
        "measures": [{"type": "force", "name": "load", "element": "tyre"}],
    }
    return data | ({"road": road} if road else {})


def column(result, name: str) -> np.ndarray:
    return next(v for n, _, v in result.columns() if n == name)


# ---------------------------------------------------------------------------------------------- tyres and road
def test_a_wheel_settles_on_its_tyre_by_its_weight_over_the_stiffness():
    result = simulate(loads(json.dumps(wheel_on_a_tyre(damping=2000.0, start=0.3))), 3.0, samples=31)
    assert 0.32 - result.q[-1, 0] == pytest.approx(40.0 * G / 2e5, rel=1e-6)
    assert column(result, "load.force")[-1] == pytest.approx(40.0 * G, rel=1e-6)
    assert column(result, "load.deflection")[-1] == pytest.approx(40.0 * G / 2e5, rel=1e-6)


def test_the_road_passes_under_the_wheel_at_its_speed_and_the_tyre_lets_go():
    """A 5 cm step ramp at s = 10 m passing at 4 m/s under a wheel centre at x = 1.5 m reaches it at t = 2.125 s;
    the road's height and slope are the profile's at s = x + v t; thrown up by the ramp, the wheel leaves the
    road (the tyre never pulls) and lands again."""
    road = {"speed": 4.0, "profile": [[0.0, 0.0], [10.0, 0.0], [10.1, 0.05], [20.0, 0.05]]}
    model = loads(json.dumps(wheel_on_a_tyre(road, stiffness=1e5, damping=1500.0)))
    mech = Mechanism(model)
    forces = AppliedForces(mech)
    t, x = np.array([0.0, 2.1, 2.14, 2.2, 3.0]), np.full(5, 1.5)
    height, slope, speed = forces.road(t, x)
    assert speed == 4.0
    assert np.asarray(height, float) == pytest.approx([0.0, 0.0, 0.03, 0.05, 0.05], abs=1e-12)
    assert np.asarray(slope, float) == pytest.approx([0.0, 0.0, 0.5, 0.0, 0.0], abs=1e-12)
    result = simulate(model, 4.0, samples=4001)
    load = column(result, "load.force")
    rising = result.t[np.argmax(result.q[:, 0] > result.q[0, 0] + 1e-6)]
    assert 2.125 <= rising < 2.127
    assert load.min() == 0.0 and np.all(load >= 0) and load[-1] == pytest.approx(40.0 * G, rel=1e-6)
    airborne = result.t[load == 0]
    assert airborne.min() > 2.125 and airborne.max() < 3.0
    numpy = simulate(model, 2.3, method="DOP853", compiled=False, samples=47)
    compiled = simulate(model, 2.3, method="DOP853", samples=47)
    assert np.abs(numpy.q - compiled.q).max() < 1e-7


def test_a_servo_spring_follows_a_rest_position_of_time():
    """A joint spring-damper whose rest moves with t: a stiff servo keeps its slider within the lag of a first-order
    follower c/k behind the input; its force does work, so it has no potential and its power counts."""
    data = wheel_on_a_tyre()
    data["forces"] = [{"type": "joint_spring_damper", "name": "servo", "coordinate": "h", "stiffness": 4e5,
                       "damping": 8e3, "rest": "0.3 + 0.01*sin(2*pi*t)"}]  # fmt: skip
    data["gravity"] = [0, 0, 0]
    data["measures"] = []
    model = loads(json.dumps(data))
    result = simulate(model, 2.0, samples=201)
    late = result.t > 1.0
    lag = 8e3 / 4e5
    expected = 0.3 + 0.01 * np.sin(2 * math.pi * (result.t[late] - lag))
    assert np.abs(result.q[late, 0] - expected).max() < 1e-4
    forces = AppliedForces(Mechanism(model))
    assert forces.laws[0].time_dependent and not forces.laws[0].has_potential


# ---------------------------------------------------------------------------------------------- the vehicle
@pytest.fixture(scope="module")
def vehicle() -> Mechanism:
    return Mechanism(samples.load("vehicle"))


def standing_loads(mech: Mechanism) -> dict[str, float]:
    """Each tyre's load at the document's pose, from its force element."""
    forces, q = AppliedForces(mech), mech.assemble(None)
    points = mech.points(q)
    out = {}
    for law in (law for law in forces.laws if isinstance(law.element, Tyre)):
        centre = points[(law.element.body, law.element.point)]
        out[law.name[:2]] = float(np.asarray(law.load(0.0, centre, np.zeros((1, 3))), float)[0])
    return out


def test_the_vehicle_stands_on_the_corner_loads_of_its_weight_distribution(vehicle):
    """By hand, a rigid car on four supports, left and right alike: the front axle carries the weight W times the
    distance from the rear axle to the centre of mass over the wheelbase, half on each tyre. The document's pose is
    the static equilibrium: no acceleration there."""
    mech = vehicle
    q = mech.assemble(None)
    weight = G * sum(float(b.inertia["m"]) for b in mech.model.bodies)
    x_cg = centre_of_mass_and_momenta(mech, q, np.zeros_like(q))[0][0, 0]
    x_front, x_rear = (mech.points(q)[(f"{c}3", "K")][0, 0] for c in ("fl", "rl"))
    front = weight * (x_cg - x_rear) / (x_front - x_rear) / 2
    loads_ = standing_loads(mech)
    assert loads_["fl"] == pytest.approx(front, rel=1e-9) and loads_["fr"] == pytest.approx(front, rel=1e-9)
    assert loads_["rl"] == pytest.approx(weight / 2 - front, rel=1e-9)
    assert loads_["rr"] == pytest.approx(weight / 2 - front, rel=1e-9)
    assert 0.54 < 2 * front / weight < 0.55  # the sample's 54.5 % on the front axle
    Q = AppliedForces(mech).generalized(0.0, q, np.zeros_like(q))
    assert np.abs(closed_loop_forward_dynamics(mech, q, np.zeros_like(q), Q)).max() < 1e-9


def stiffness_and_mass(mech: Mechanism, h: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """The reduced stiffness K = −M_r ∂q̈_ind/∂q_ind at rest (central differences of the numpy path's closed-loop
    forward dynamics, the loops closed at each displaced pose) and the reduced mass matrix M_r."""
    forces, q0 = AppliedForces(mech), mech.assemble(None)
    ind = list(mech.partition.independent)

    def accelerations(x: np.ndarray) -> np.ndarray:
        q = mech.assemble(x[None], guess=q0)
        Q = forces.generalized(0.0, q, np.zeros_like(q))
        return np.asarray(closed_loop_forward_dynamics(mech, q, np.zeros_like(q), Q), float)[0]

    x0 = q0[0, ind]
    steps = np.eye(len(ind)) * h
    jacobian = np.column_stack([(accelerations(x0 + step) - accelerations(x0 - step)) / (2 * h) for step in steps])
    M = np.asarray(reduced_mass_matrix(mech, q0)[0], float)
    return -M @ jacobian, M


def sla_motion_ratio() -> float:
    """The coil-over's compression per wheel travel at the SLA's design position, from its suspension measure."""
    from mbstudio.simulation.measures import measure_columns

    mech = Mechanism(samples.load("sla_suspension"))
    q = mech.assemble(None)
    v = np.zeros((1, len(mech.independent)))
    v[0, mech.independent.index("theta1")] = 1.0
    qd = mech.velocities(q, v)
    columns = measure_columns(mech, np.zeros(1), q, qd, np.zeros_like(q))
    return float(next(values for name, _, values in columns if name == "alignment.motion_ratio")[0])


@pytest.fixture(scope="module")
def vehicle_modes(vehicle) -> tuple[np.ndarray, np.ndarray]:
    """The undamped modes about the standing pose: frequencies (Hz, ascending) and shapes (columns, in the
    independent coordinates), from K φ = ω² M φ."""
    K, M = stiffness_and_mass(vehicle)
    values, vectors = np.linalg.eig(np.linalg.solve(M, K))
    order = np.argsort(values.real)
    return np.sqrt(np.maximum(values.real[order], 0)) / (2 * math.pi), vectors.real[:, order]


def mode_name(independent: list[str], shape: np.ndarray) -> str:
    """What a mode of the vehicle is, from its shape: the rack alone steers; where the chassis moves with the wheels
    the car heaves (every wheel alike), pitches (front against rear) or rolls (left against right); where it stays
    put a wheel pair hops (in phase) or tramps (against each other) on its tyres, front or rear. Signs of the arms'
    angles compare directly: both sides' are positive in bump."""
    x = dict(zip(independent, shape / np.abs(shape).max(), strict=True))
    wheels = np.array([x[f"{c}_theta1"] for c in CORNERS])
    if abs(x["rack"]) == 1.0:
        return "steering"
    front, rear = wheels[:2], wheels[2:]
    if max(abs(x["z"]), abs(x["pitch"]), abs(x["roll"])) > 0.1 * np.abs(wheels).max():
        if np.all(np.sign(wheels) == np.sign(wheels[0])):
            return "heave"
        return "pitch" if front[0] * front[1] > 0 and front[0] * rear[0] < 0 else "roll"
    axle, pair = ("front", front) if np.abs(front).max() > np.abs(rear).max() else ("rear", rear)
    return f"{axle} {'hop' if pair[0] * pair[1] > 0 else 'tramp'}"


def test_the_standing_vehicle_heaves_pitches_rolls_steers_and_hops_each_wheel_pair(vehicle, vehicle_modes):
    """Linearised about its standing pose (numpy path, central differences): three rigid motions on the road (the
    tyres push only vertically: x, y and yaw are free), then one mode of each kind, in the order of a car's: body
    modes near 1.2-1.6 Hz, the steering on its servo, the wheel pairs near 15 Hz."""
    frequencies, shapes = vehicle_modes
    assert np.all(frequencies[:3] < 1e-3)
    names = [mode_name(vehicle.independent, shapes[:, k]) for k in range(3, len(frequencies))]
    assert names[:4] == ["heave", "pitch", "roll", "steering"]
    assert sorted(names[4:]) == ["front hop", "front tramp", "rear hop", "rear tramp"]
    assert 1.1 < frequencies[3] < frequencies[4] < frequencies[5] < 2.0 and 13 < frequencies[7] < 17


def test_the_heave_frequency_is_that_of_the_tyre_and_spring_in_series_with_the_motion_ratio(vehicle, vehicle_modes):
    """Hand formula: each corner's spring k acts at the wheel as k MR² (MR the coil-over's motion ratio, its
    compression per wheel travel), in series with the tyre k_t: the ride rate K = k MR² k_t / (k MR² + k_t). The
    sample gives each axle the same K / m_s (m_s the sprung mass a corner carries, its standing load over g less the
    corner's own bodies), so the sprung mass heaves at f = √(K / m_s) / 2π without pitching (its pitch below 1 % of
    its largest motion). The undamped heave mode
    is within 3 % of that: what the hand formula leaves out is the spring's preload turning with the linkage, the
    arms that are partly sprung, and the wheels' own motion."""
    frequencies, shapes = vehicle_modes
    corner_mass = sum(float(b.inertia["m"]) for b in vehicle.model.bodies if b.label.startswith("fl"))
    ratio = sla_motion_ratio()
    loads_ = standing_loads(vehicle)
    hand = []
    for corner in CORNERS:
        spring = next(e for e in vehicle.model.forces if e.name == f"{corner}_coilover").stiffness
        tyre = next(e for e in vehicle.model.forces if e.name == f"{corner}_tyre").stiffness
        wheel_rate = spring * ratio**2
        ride = wheel_rate * tyre / (wheel_rate + tyre)
        hand.append(math.sqrt(ride / (loads_[corner] / G - corner_mass)) / (2 * math.pi))
    assert max(hand) == pytest.approx(min(hand), rel=1e-3)  # one body frequency: the sample's flat ride
    heave = next(k for k in range(3, len(frequencies)) if mode_name(vehicle.independent, shapes[:, k]) == "heave")
    assert abs(shapes[vehicle.independent.index("pitch"), heave]) < 1e-2 * np.abs(shapes[:, heave]).max()
    assert frequencies[heave] == pytest.approx(hand[0], rel=0.03)


def corner(model: Model, name: str) -> Model:
    """One corner of the vehicle with the chassis and the (centred) rack held as the ground: its bodies, joints and
    coil-over (no tyre, no stop: the reference models spring-dampers only)."""
    out = Model(f"corner {name}", parameters=copy.deepcopy(model.parameters))
    out.bodies = [copy.deepcopy(b) for b in model.bodies if b.label.startswith(name)]
    for holder in (model.body("chassis"), model.body("rack")):
        out.ground.points |= {k: v for k, v in holder.points.items() if k.startswith(name)}
        out.ground.frames |= {k: v for k, v in holder.frames.items() if k.startswith(name)}
    out.joints = [copy.deepcopy(j) for j in model.joints if j.name.startswith(name)]
    for j in out.joints:
        j.parent = "0" if j.parent in ("chassis", "rack") else j.parent
        for c in j.coordinates:
            c.stop = None
    out.forces = [copy.deepcopy(e) for e in model.forces if e.name == f"{name}_coilover"]
    out.independent_coordinates = [f"{name}_theta1"]
    return loads(json.dumps(json.loads(_dumps(out))))


def _dumps(model: Model) -> str:
    from mbstudio.model import dumps

    return dumps(model)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_corner_of_the_vehicle_accelerates_as_the_pinocchio_constrained_reference(seed):
    """The right-front corner (mirrored, its tie rod on the rack): at random poses and rates, the accelerations of the
    compiled engine equal those of io/pinocchio_reference.py, a Pinocchio model built by hand with rigid point
    contacts for the cut joints."""
    pytest.importorskip("pinocchio")
    from mbstudio.dynamics.engine import engine
    from mbstudio.io.pinocchio_reference import ClosedLoopReference

    model = corner(samples.load("vehicle"), "fr")
    eng = engine(model)
    mech, ref = eng.mech, ClosedLoopReference.of(eng.mech)
    rng = np.random.default_rng(seed)
    q = mech.assemble({"fr_theta1": rng.uniform(-0.25, 0.25)})[0]
    v_ind = rng.standard_normal(len(eng.independent))
    qd = eng.velocities(q, v_ind)
    ours = mech.accelerations(q[None], qd[None], eng.accelerations(0.0, q, v_ind)[None])[0]
    y = ref.state(q, qd)
    theirs = ref.coordinates(np.concatenate([ref.accelerations(0.0, *np.split(y, 2))] * 2)[None])[0]
    assert np.abs(ours).max() > 1.0  # it moves
    assert np.abs(theirs - ours).max() < 1e-10 * np.abs(ours).max()


def test_the_sample_is_what_its_script_writes(tmp_path):
    """samples/vehicle.mbs is tools/make_vehicle.py's output (the script solves the springs' free lengths and the
    tyre radius for the standing pose: numbers no one should type), compared by value: every name, text and integer
    alike, every float within 1e-10 relative. The solved numbers come from a least-squares solve (condition number
    about 850) on finite differences of the accelerations, whose last digits follow the libraries' summation
    orders: numpy 2.4 moves them by up to 2e-14 relative from the file's; 1e-10 of a 0.6-m free length is 60 pm, far
    below any change to the car. The script itself refuses a pose whose accelerations are not below 1e-8."""
    spec = importlib.util.spec_from_file_location("make_vehicle", ROOT / "tools" / "make_vehicle.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(tmp_path / "vehicle.mbs")
    written = json.loads((tmp_path / "vehicle.mbs").read_text(encoding="utf-8"))
    assert_same_document(written, json.loads(samples.path("vehicle").read_text(encoding="utf-8")), rtol=1e-10)


def assert_same_document(a, b, rtol: float, where: str = "") -> None:
    """Two JSON trees equal in structure, strings, integers and booleans, and in floats to rtol."""
    assert type(a) is type(b) or {type(a), type(b)} <= {int, float}, f"{where}: {a!r} against {b!r}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} against {list(b)}"
        for key in a:
            assert_same_document(a[key], b[key], rtol, f"{where}/{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{where}: {len(a)} items against {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same_document(x, y, rtol, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=rtol, abs=0), f"{where}: {a!r} against {b!r}"
    else:
        assert a == b, f"{where}: {a!r} against {b!r}"


def needs_the_engine(model: Model) -> None:
    """Skip, saying why, while the compiled engine cannot take the vehicle (83 joint coordinates):
    these runs would take hours on the numpy path."""
    from mbstudio.dynamics.engine import fits_engine

    if not fits_engine(model):
        pytest.skip("the compiled engine does not take the vehicle's 83 joint coordinates yet")


@pytest.mark.slow
def test_linearised_about_its_equilibrium_the_vehicle_has_the_same_modes(vehicle, vehicle_modes):
    """`linearize` (the compiled engine's exact derivatives) about the equilibrium it finds from the standing pose:
    the same pose, and the undamped modes of its A matrix equal those of the numpy path's central differences."""
    from mbstudio.linear import equilibrium, linearize

    model = samples.load("vehicle")
    needs_the_engine(model)
    point = equilibrium(model)
    assert np.abs(point.q - vehicle.assemble(None)[0]).max() < 1e-9
    assert len(point.neutral_directions()) == 3  # x, y and yaw: the tyres push only vertically
    lin = linearize(model, point)
    k = len(point.independent)  # the states: the independent coordinates, then their rates
    stiffness = -lin.A[k:, :k]
    frequencies = np.sqrt(np.maximum(np.sort(np.linalg.eigvals(stiffness).real), 0)) / (2 * math.pi)
    expected = vehicle_modes[0]
    assert frequencies[3:] == pytest.approx(expected[3:], rel=1e-5)


@pytest.mark.slow
def test_the_drive_at_the_default_samples_is_integrated_by_cvodes_throughout():
    """The sample's drive as `mbstudio simulate` runs it (10 s, 201 samples) gives no piece up to DOP853: every step is
    CVODES' (the run files the sum of their local errors, None otherwise). With a step limit of 8 times the most
    steps per return, at least 512, a piece near the bump was given up, and the drive cost 0.72 s of CPU, not 0.15."""
    model = samples.load("vehicle")
    needs_the_engine(model)
    assert simulate(model, 10.0, error_estimate=False).provenance.local_error_sum is not None


@pytest.mark.slow
def test_the_vehicle_drives_over_the_bump_with_its_loops_closed_and_presses_its_stops():
    """The sample's drive: 10 s, default method and tolerances. The loops stay closed; each tyre's largest load comes
    while the bump (0.6 m, 0.06 s at 10 m/s) passes under its wheel, the road having carried it there (20 m less the
    wheel's x, at 10 m/s: the rear ones a wheelbase after the front ones); every coil-over presses its bump stop and
    then its rebound stop; the car stands on its standing loads again."""
    model = samples.load("vehicle")
    needs_the_engine(model)
    mech = Mechanism(model)
    result = simulate(mech, 10.0, samples=2001)
    assert result.residual.max() < 1e-10 * mech.length_scale
    x = {c: mech.points(mech.assemble(None))[(f"{c}3", "K")][0, 0] for c in CORNERS}
    standing = standing_loads(mech)
    for corner in CORNERS:
        load = column(result, f"{corner}_load.force")
        meets = (20.0 - x[corner]) / 10.0
        assert meets < result.t[load.argmax()] < meets + 0.06 and load.max() > 2.5 * standing[corner]
        assert load[-1] == pytest.approx(standing[corner], rel=1e-3)
        pressed = {c.limit for c in result.contacts if c.coordinate == f"{corner}_damper_s"}
        assert pressed == {"min", "max"}
    assert len(result.notes) == 0
