"""The compliant contact between spheres on two bodies (force_laws/contact_pair_law.py, docs/contact.md), each
check by a route of its own: the conservation laws of two free bodies under internal forces (linear and angular
momentum), the elastic collision's outgoing speeds from those laws and the energy, Hunt and Crossley's
restitution 1 − c_d v, the friction cone from the measure's own columns, the ground contact (contact_law.py) as
the limit of a fixed sphere of a very large radius, and the compiled engine against the numpy path."""

from __future__ import annotations

import csv
import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.gui.editing import edits
from mbstudio.io.urdf_export import urdf_text
from mbstudio.kinematics import Mechanism
from mbstudio.model import Body, Coordinate, Frame, Joint, Model, dumps, loads
from mbstudio.model.document import Contact, ContactPair, ForceMeasure
from mbstudio.model.errors import ModelError
from mbstudio.simulation.run import simulate

FREE = ("x", "y", "z", "rx", "ry", "rz")
RTOL, ATOL = 1e-10, 1e-12


def sphere(label: str, mass: float, radius: float) -> tuple[Body, float]:
    """A solid sphere's body (centre of mass at its origin, the point "c") and its moment of inertia."""
    inertia = 0.4 * mass * radius * radius
    values = dict.fromkeys(("mx", "my", "mz", "Ixy", "Ixz", "Iyz"), 0.0)
    values |= {"m": mass, "Ixx": inertia, "Iyy": inertia, "Izz": inertia}
    return Body(label, f"ball{label}", values, {"c": [0.0, 0.0, 0.0]}), inertia


def free_joint(label: str, start) -> Joint:
    coordinates = [Coordinate(f"{n}{label}") for n in FREE]
    for coordinate, value in zip(coordinates, start, strict=False):
        coordinate.initial = value
    return Joint(f"free{label}", "free", "0", label, Frame(), Frame(), coordinates)


# sphere 1: 1 kg, 0.1 m; sphere 2: 2 kg, 0.15 m; k for n = 1.5
M1, R1, M2, R2, K = 1.0, 0.1, 2.0, 0.15, 1e6


def two_balls(dissipation=0.0, friction=0.0, offset=0.0, exponent=1.5) -> Model:
    """Ball 1 at the origin, ball 2 at x = 0.5 (y = `offset`), no gravity; the pair measured as `f`."""
    model = Model(name="pair", gravity=[0.0, 0.0, 0.0])
    (b1, _), (b2, _) = sphere("1", M1, R1), sphere("2", M2, R2)
    model.bodies = [b1, b2]
    model.joints = [free_joint("1", (0.0, 0.0, 0.0)), free_joint("2", (0.5, offset, 0.0))]
    model.forces = [ContactPair("hit", "1", "c", "2", "c", R1, R2, K, exponent, dissipation, friction, 1e-3)]
    model.measures = [ForceMeasure("f", "hit")]
    return loads(dumps(model))


def column(result, name: str) -> np.ndarray:
    return next(values for label, _, values in result.measures if label == name)


def momenta(model: Model, result) -> tuple[np.ndarray, np.ndarray]:
    """Linear momentum (N, 3) and angular momentum about the world origin (N, 3) of the bodies at every sample,
    from their motion (centres of mass at the body origins, principal inertias along the body axes)."""
    mech = Mechanism(model)
    st = mech.tree.motion(np.asarray(result.q, float), np.asarray(result.qd, float))
    linear, angular = np.zeros((len(result.t), 3)), np.zeros((len(result.t), 3))
    for body in model.bodies:
        i, mass = mech.tree.body_index(body.label), body.inertia["m"]
        inertia = np.diag([body.inertia[k] for k in ("Ixx", "Iyy", "Izz")])
        spin = np.einsum("nij,jk,nlk,nl->ni", st.R[i], inertia, st.R[i], st.w[i])  # R I Rᵀ ω
        linear += mass * st.v[i]
        angular += mass * np.cross(st.p[i], st.v[i]) + spin
    return linear, angular


def run(model: Model, t_end: float, samples: int, velocities, **options):
    return simulate(model, t_end, samples=samples, rtol=RTOL, atol=ATOL, velocities=velocities, **options)


@pytest.mark.slow  # 3.4 s (the README's run is held under 5 minutes)
def test_an_elastic_head_on_collision_keeps_momentum_and_energy_and_leaves_at_newtons_speeds():
    """c_d = 0, μ = 0, ball 1 at 2 m/s onto ball 2 at rest: the momentum stays m1 v to the integrator's error at
    every sample (the forces are equal and opposite), the energy balance holds, and after the collision the balls
    leave at the elastic speeds (m1 − m2)/(m1 + m2) v and 2 m1/(m1 + m2) v, which those two laws alone give."""
    v = 2.0
    model = two_balls()
    result = run(model, 0.3, 301, [v, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    linear, _ = momenta(model, result)
    assert np.abs(linear - [M1 * v, 0.0, 0.0]).max() < 1e-8 * M1 * v
    assert column(result, "f.penetration").max() > 1e-4  # they did collide
    assert column(result, "f.penetration")[-1] == 0.0  # and parted
    assert result.energy_drift < 1e-7
    after = result.qd[-1]
    assert after[0] == pytest.approx((M1 - M2) / (M1 + M2) * v, abs=1e-6 * v)
    assert after[6] == pytest.approx(2 * M1 / (M1 + M2) * v, abs=1e-6 * v)


@pytest.mark.parametrize("dissipation", [pytest.param(0.005, marks=pytest.mark.slow), 0.02])  # 4 s each
def test_a_damped_collision_loses_energy_never_gains_any_and_restitutes_as_hunt_and_crossley_say(dissipation):
    """c_d > 0: the momentum still holds, the total energy never rises beyond the integrator's error, and the
    relative speed after is e v with e = 1 − c_d v to first order (the derivation of the ground contact's test,
    for the reduced mass: the damping's work over the elastic path is c_d m* v³ for any mass)."""
    v = 2.0
    model = two_balls(dissipation)
    result = run(model, 0.3, 301, [v, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    linear, _ = momenta(model, result)
    assert np.abs(linear - [M1 * v, 0.0, 0.0]).max() < 1e-8 * M1 * v
    total = result.total
    error = result.energy_drift * abs(total[0])
    assert np.diff(total).max() <= 10 * error + 1e-12 * abs(total[0])
    assert total[-1] < total[0] * (1 - dissipation * v)  # lost at least the first order's share
    restitution = (result.qd[-1, 6] - result.qd[-1, 0]) / v
    assert abs(restitution - (1 - dissipation * v)) < 1.5 * (dissipation * v) ** 2


@pytest.mark.slow  # 4 s (the README's run is held under 5 minutes)
def test_an_oblique_collision_with_friction_keeps_the_cone_and_both_momenta():
    """Ball 1 at 2 m/s with a spin about z, aimed off ball 2's centre by 0.1 m: friction acts (the spin and the
    tangential slip), stays within μ f_n at every sample, and the linear and angular momentum (about the world
    origin, spins included) hold: the two forces are equal, opposite, and act at the same point. The energy never
    rises."""
    v, mu = 2.0, 0.3
    model = two_balls(dissipation=0.01, friction=mu, offset=0.1)
    # BDF, docs/contact.md's integrator for stiff contacts: the sticking friction's time constant is microseconds
    result = run(model, 0.3, 601, [v, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], method="CVODES-BDF")
    normal, friction = column(result, "f.normal_force"), column(result, "f.friction_force")
    touching = normal > 0
    assert touching.sum() > 5
    assert friction[touching].max() > 0.05 * mu * normal.max()  # friction did act
    assert np.all(friction <= mu * normal * (1 + 1e-12))
    linear, angular = momenta(model, result)
    assert np.abs(linear - linear[0]).max() < 1e-8 * M1 * v
    assert np.abs(angular - angular[0]).max() < 1e-8 * M1 * v * 0.5
    assert result.energy_drift < 1e-7  # what friction and damping took is what the energy lost
    total = result.total
    assert np.diff(total).max() <= 10 * result.energy_drift * abs(total[0]) + 1e-12 * abs(total[0])
    assert total[-1] < 0.99 * total[0]


def ball_on_ground(pair: bool, big: float, friction: float) -> Model:
    """Ball 1 (1 kg, 0.1 m) under gravity, dropped from 0.12 m sliding at 1 m/s, on the ground plane z = 0 by a
    Contact, or by a pair with a fixed sphere of radius `big` centred at (0, 0, −big)."""
    model = Model(name="ground", gravity=[0.0, 0.0, -9.81])
    body, _ = sphere("1", M1, R1)
    model.bodies = [body]
    model.joints = [free_joint("1", (0.0, 0.0, 0.12))]
    law = (K, 1.5, 0.5, friction, 1e-3)
    if pair:
        model.ground.points["big"] = [0.0, 0.0, -big]
        model.forces = [ContactPair("foot", "0", "big", "1", "c", big, R1, *law)]
    else:
        model.forces = [Contact("foot", "1", "c", R1, *law)]
    model.measures = [ForceMeasure("f", "foot")]
    return loads(dumps(model))


@pytest.mark.parametrize("friction", [0.0, pytest.param(0.3, marks=pytest.mark.slow)])  # 3 s each
def test_a_ball_on_a_fixed_sphere_of_a_huge_radius_moves_as_on_the_ground_plane(friction):
    """The pair with a fixed sphere of radius R = 1e5 m against the ground contact on its tangent plane: the ball
    travels x ≤ 0.2 m, where the sphere sags x²/2R ≤ 2e-7 m below the plane and tilts x/R ≤ 2e-6; the heights and
    the normal forces agree to those orders (the forces to 1e-3 of their peak: a sag of 2e-7 m shifts k δ^1.5 at
    δ ≈ 1e-3 m by 1.5 · 2e-7 / 1e-3 of it). Without friction the whole motion does. With it the travel differs by
    where friction acts: the ground contact at the ball's point r below its centre, the pair midway through the
    overlap, r − δ/2, so the spin it gets differs by δ/2r: the travel differs by less than δ_max/r of itself."""
    start = [1.0, 0, 0, 0, 0, 0]
    ground = run(ball_on_ground(False, 0.0, friction), 0.2, 201, start)
    on_sphere = run(ball_on_ground(True, 1e5, friction), 0.2, 201, start)
    peak = column(ground, "f.normal_force").max()
    assert peak > 9.81  # it landed and bounced
    assert np.abs(on_sphere.q[:, 2] - ground.q[:, 2]).max() < 2e-6
    for part in ("normal_force", "fz"):
        assert np.abs(column(on_sphere, f"f.{part}") - column(ground, f"f.{part}")).max() < 2e-3 * peak
    travel = ground.q[-1, 0]
    deepest = column(ground, "f.penetration").max()
    bound = 2e-6 if friction == 0 else deepest / R1 * travel
    assert np.abs(on_sphere.q[:, 0] - ground.q[:, 0]).max() < bound
    if friction:
        assert travel < 0.2 - 0.01  # friction did slow it


@pytest.mark.slow  # the numpy path through the collision takes tens of seconds
def test_the_compiled_engine_and_the_numpy_path_agree():
    """Accelerations of the engine (the pair traced into C) against the numpy forces and articulated-body
    algorithm at overlapping, sliding and spinning states (to 1e-9 of their scale), and a short run of each."""
    model = two_balls(dissipation=0.3, friction=0.4, offset=0.05)
    eng = engine(model)
    mech, forces = eng.mech, AppliedForces(eng.mech)
    rng = np.random.default_rng(3)
    for _ in range(4):
        shift = rng.normal(0, [1e-3, 1e-3, 1e-3, 0.3, 0.3, 0.3] * 2)  # centres within mm, any orientation
        q = mech.tree.initial_coordinates()[None, :] + shift
        q[0, 6] = 0.24  # overlapping by about 5 mm
        v = rng.normal(0, 0.5, 12)
        ours = eng.accelerations(0.0, q[0], v)
        reference = forward_dynamics(mech, q, v[None], forces.generalized(0.0, q, v[None]))[0]
        assert np.abs(reference).max() > 100  # the contact acts
        assert np.abs(ours - reference).max() <= 1e-9 * np.abs(reference).max()
    start = [2.0, 0, 0, 0, 0, 5.0, 0, 0, 0, 0, 0, 0]
    compiled = run(model, 0.3, 31, start)
    numpy_path = run(model, 0.3, 31, start, method="DOP853", compiled=False)
    assert np.abs(compiled.q - numpy_path.q).max() < 1e-7
    assert column(numpy_path, "f.normal_force").max() > 100  # a sample falls inside the collision
    # a force column's scale is the contact force's, the peak normal force: near sticking the friction's slope in
    # the velocity is μ f_n / v_s, so it amplifies the paths' velocity difference by that factor
    peak = column(numpy_path, "f.normal_force").max()
    for a, b in zip(compiled.measures, numpy_path.measures, strict=True):
        scale = peak if a[1] == "N" else max(1.0, np.abs(b[2]).max())
        assert np.abs(a[2] - b[2]).max() <= 1e-6 * scale


# the rod: 2 kg, 1 m long along its body y axis, a capsule of radius 0.05 m; its middle at x = 0.5
ROD_MASS, ROD_LENGTH, ROD_RADIUS = 2.0, 1.0, 0.05


def ball_and_rod(aim: float, dissipation=0.0, friction=0.0) -> Model:
    """Ball 1 at the origin and a free rod (body 2) along y, its middle at (0.5, 0, 0), a capsule from
    y = −0.5 to 0.5; the ball aimed at y = `aim` along x. No gravity; the pair measured as `f`."""
    model = two_balls(dissipation, friction)
    rod_inertia = ROD_MASS * ROD_LENGTH**2 / 12  # a thin rod about its middle, across it
    model.bodies[1].inertia |= {"m": ROD_MASS, "Ixx": rod_inertia, "Iyy": 1e-3, "Izz": rod_inertia}
    model.bodies[1].points = {"a": [0.0, -ROD_LENGTH / 2, 0.0], "b": [0.0, ROD_LENGTH / 2, 0.0]}
    model.joints[1].coordinates[1].initial = -aim
    pair = model.forces[0]
    pair.point2, pair.end2, pair.radius2 = "a", "b", ROD_RADIUS
    return loads(dumps(model))


@pytest.mark.slow  # 6 s: a capsule pair's engine
def test_a_ball_striking_a_free_capsule_rod_off_centre_sets_it_turning_as_the_impact_law_says():
    """The ball at 2 m/s strikes the rod 0.3 m from its middle, c_d = 0, μ = 0: momentum and angular momentum
    (the rod's spin included) hold to 1e-8, the energy to the integrator's error, and the ball leaves at
    (m1 − m*)/(m1 + m*) v with m* = 1 / (1/M + a²/I), the rod's mass at the struck point (Newton's elastic impact
    of a particle on a free rod, instantaneous). The rod turns during the contact, by ω t_c, which that law
    leaves out: the difference falls with the contact time t_c ∝ k^(−2/5) (Hertz), by 100^(2/5) ≈ 6.3 when k
    grows a hundredfold."""
    v, aim = 2.0, 0.3
    struck = 1 / (1 / ROD_MASS + aim * aim / (ROD_MASS * ROD_LENGTH**2 / 12))
    newton = (M1 - struck) / (M1 + struck) * v
    errors = []
    for stiffness in (K, 100 * K):
        model = ball_and_rod(aim)
        model.forces[0].stiffness = stiffness
        result = run(model, 0.25, 251, [v, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        linear, angular = momenta(model, result)
        assert column(result, "f.penetration").max() > 0 and column(result, "f.penetration")[-1] == 0.0
        assert np.abs(linear - [M1 * v, 0.0, 0.0]).max() < 1e-8 * M1 * v
        assert np.abs(angular - angular[0]).max() < 1e-8 * M1 * v * aim
        assert result.energy_drift < 1e-7
        assert abs(result.qd[-1, 11]) > 1.0  # the rod spins about z
        errors.append(abs(result.qd[-1, 0] - newton))
    assert errors[0] < 2e-3 * v
    assert 0.7 * 100**0.4 < errors[0] / errors[1] < 1.3 * 100**0.4


@pytest.mark.slow  # 6 s: two pairs' engines
def test_a_capsule_of_zero_length_is_the_sphere():
    """end2 at point2's place: the capsule is the sphere, and the run is the sphere pair's to rounding."""
    start = [2.0, 0, 0, 0, 0, 3.0, 0, 0, 0, 0, 0, 0]
    sphere_run = run(two_balls(0.2, 0.4, offset=0.1), 0.3, 31, start)
    model = two_balls(0.2, 0.4, offset=0.1)
    model.bodies[1].points["c_again"] = [0.0, 0.0, 0.0]
    model.forces[0].end2 = "c_again"
    capsule_run = run(loads(dumps(model)), 0.3, 31, start)
    assert np.abs(capsule_run.q - sphere_run.q).max() < 1e-12


@pytest.mark.parametrize(  # 2-4 s each: the slow run takes the points along the capsule
    "along", [0.0, pytest.param(0.35, marks=pytest.mark.slow), pytest.param(0.5, marks=pytest.mark.slow)]
)
def test_a_ball_rests_on_a_fixed_capsule_at_the_static_penetration_anywhere_along_it(along):
    """A ball under gravity dropped onto a fixed horizontal capsule of the ground (its axis from x = −0.5 to
    0.5 m, radius 0.05 m) above x = `along` (0.5: the top of its rounded end): well damped, it settles where
    k δ^n = m g (the static balance), wherever it rests along the axis, without drifting along it."""
    model = Model(name="rest", gravity=[0.0, 0.0, -9.81])
    body, _ = sphere("1", M1, R1)
    model.bodies = [body]
    static = (M1 * 9.81 / K) ** (1 / 1.5)
    model.joints = [free_joint("1", (along, 0.0, ROD_RADIUS + R1 - static + 1e-3))]
    model.ground.points |= {"a": [-0.5, 0.0, 0.0], "b": [0.5, 0.0, 0.0]}
    model.forces = [ContactPair("rest", "1", "c", "0", "a", R1, ROD_RADIUS, K, 1.5, 20.0, 0.5, 1e-4, end2="b")]
    model.measures = [ForceMeasure("f", "rest")]
    result = run(loads(dumps(model)), 1.0, 11, None)
    assert column(result, "f.penetration")[-1] == pytest.approx(static, rel=1e-4)
    assert column(result, "f.fz")[-1] == pytest.approx(-M1 * 9.81, rel=1e-4)  # on body2, the ground: down
    assert result.q[-1, 0] == pytest.approx(along, abs=1e-6)


@pytest.mark.parametrize("aim", [0.2, 0.53])
def test_the_compiled_engine_and_the_numpy_path_agree_on_a_capsule(aim):
    """The capsule's nearest point traced into C (its clamp too): accelerations of the engine against the numpy
    path to 1e-9 of their scale, struck along the rod (0.2 m from its middle) and on its rounded end (0.53)."""
    model = ball_and_rod(aim, dissipation=0.3, friction=0.4)
    eng = engine(model)
    mech, forces = eng.mech, AppliedForces(eng.mech)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = mech.tree.initial_coordinates()[None, :] + rng.normal(0, [1e-3, 1e-3, 1e-3, 0.01, 0.01, 0.01] * 2)
        q[0, 6] = 0.13  # the rod's axis 20 mm inside the ball's reach
        v = rng.normal(0, 0.5, 12)
        ours = eng.accelerations(0.0, q[0], v)
        reference = forward_dynamics(mech, q, v[None], forces.generalized(0.0, q, v[None]))[0]
        assert np.abs(reference).max() > 10  # the contact acts
        assert np.abs(ours - reference).max() <= 1e-9 * np.abs(reference).max()


def test_the_pair_is_written_read_with_units_and_left_out_of_exports_with_a_note():
    model = two_balls(dissipation=0.2, friction=0.5)
    assert loads(dumps(model)).forces == model.forces
    assert "end2" not in json.loads(dumps(model))["forces"][0]  # a sphere's file names no capsule end
    capsule = ball_and_rod(0.2)
    assert loads(dumps(capsule)).forces[0].end2 == "b"
    text = dumps(model).replace('"radius1": 0.1', '"radius1": "100 mm"')
    assert loads(text).forces[0].radius1 == 0.1
    with pytest.raises(ModelError, match=r"force 'hit'.stiffness.*N/m\^1.5"):
        loads(dumps(model).replace('"stiffness": 1000000.0', '"stiffness": "100 N/mm"'))
    assert any("contact pair 'hit' has no URDF form" in note for note in urdf_text(model)[1])


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("body2", "1", r"force 'hit'.body2.*same body as body1.*two different bodies"),
        ("body1", "9", r"force 'hit'.body1.*9"),
        ("point2", "heel", r"force 'hit'.point2.*unknown point"),
        ("radius1", -0.1, r"force 'hit'.radius1.*out of range.*radius > 0"),
        ("radius2", 0.0, r"force 'hit'.radius2.*out of range"),
        ("exponent", 0.5, r"force 'hit'.exponent.*out of range.*>= 1"),
        ("friction", -0.1, r"force 'hit'.friction.*out of range"),
        ("stiction_velocity", 0.0, r"force 'hit'.stiction_velocity.*not positive"),
        ("stiffness", -1.0, r"force 'hit'.stiffness.*out of range"),
        ("end2", "heel", r"force 'hit'.end2.*unknown point of body '2'"),
        ("end2", "c", r"force 'hit'.end2.*is point2 itself.*capsule's other end"),
    ],
)
def test_a_pair_out_of_range_is_named_with_its_field(field, value, words):
    data = json.loads(dumps(two_balls()))
    data["forces"][0][field] = value
    with pytest.raises(ModelError, match=words):
        loads(json.dumps(data))


def test_the_window_adds_a_pair_between_two_bodies_and_shows_its_units():
    """The model tree's "Add force element…", type contact_pair (edits.add_force), places it on two bodies'
    points, valid as added; the properties give k in N/m^n and the radii in m, and a capsule's end a choice."""
    from mbstudio.gui.editing.fields import fields_for

    model = two_balls()
    model.forces, model.measures = [], []
    name = edits.add_force(model, "contact_pair")
    element = edits.force_of(model, name)
    assert element.body1 != element.body2
    loads(dumps(model))  # valid as added
    units = {f.name: f.unit for f in fields_for(model, ("force", name))[1]}
    assert (units["stiffness"], units["radius1"], units["radius2"]) == ("N/m^1.5", "m", "m")
    assert (units["dissipation"], units["stiction_velocity"]) == ("s/m", "m/s")
    capsule = ball_and_rod(0.2)
    end = {f.name: f for f in fields_for(capsule, ("force", "hit"))[1]}["end2"]
    assert (end.kind, end.value, end.choices) == ("choice", "b", ("", "a", "b"))  # "" a sphere
    end.apply(capsule, "")
    assert capsule.forces[0].end2 is None


def test_the_cli_simulates_a_pair_from_the_file_and_writes_its_series(tmp_path):
    """`mbstudio simulate` of the head-on collision: the pair's series in the CSV, and the balls leaving at
    Newton's elastic speeds (as the Python run)."""
    path, out = tmp_path / "balls.mbs", tmp_path / "out.csv"
    path.write_text(dumps(two_balls()))
    cmd = [sys.executable, "-m", "mbstudio.cli", "simulate", str(path), "--t-end", "0.3", "--velocity", "x1=2",
           "--out", str(out), "--quiet"]  # fmt: skip
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    with out.open() as f:
        rows = list(csv.reader(f))
    last = dict(zip(rows[0], map(float, rows[-1]), strict=True))
    deepest = max(float(row[rows[0].index("f.penetration [m]")]) for row in rows[1:])
    assert {"f.normal_force [N]", "f.friction_force [N]", "f.x [m]", "f.fx [N]"} <= set(rows[0])
    assert deepest > 1e-4
    assert last["d_x1 [m/s]"] == pytest.approx((M1 - M2) / (M1 + M2) * 2, abs=1e-6)
    assert last["d_x2 [m/s]"] == pytest.approx(2 * M1 / (M1 + M2) * 2, abs=1e-6)


def test_an_evaluation_evaluates_the_pairs_values_once_and_a_changed_field_again(monkeypatch):
    """The pair's fields (radii, stiffness, ...) are evaluated once, not where each step of an evaluation asks for
    them (the capsule's nearest point, the line of centres, the law): counted through the evaluator's `value` over
    ten numpy evaluations of the generalized forces, on a capsule; a stiffness changed on the element is evaluated
    again, and the elastic force, at the same overlap and no velocity, scales with it."""
    model = two_balls()
    model.forces = [dataclasses.replace(model.forces[0], end2="e", point2="c")]
    model.bodies[1].points["e"] = [0.0, 0.2, 0.0]
    mech = Mechanism(loads(dumps(model)))
    forces = AppliedForces(mech)
    law = next(law for law in forces.laws if law.type == ContactPair.type)
    calls = []
    evaluate = forces.value
    monkeypatch.setattr(forces, "value", lambda expr, t=None: calls.append(expr) or evaluate(expr, t))
    q = mech.assemble(None)
    q[:, mech.coordinates.index("x2")] = R1 + R2 - 1e-3  # overlapping by 1 mm
    qd = np.zeros_like(q)
    before = [np.asarray(forces.of_law(law, 0.0, q, qd), float) for _ in range(10)]
    assert len(calls) == 7  # radius1, radius2, stiffness, exponent, dissipation, friction, stiction_velocity
    law.element.stiffness = 2 * K
    after = np.asarray(forces.of_law(law, 0.0, q, qd), float)
    assert len(calls) == 14
    assert np.abs(before[0]).max() > 0 and np.allclose(after, 2 * before[-1], rtol=1e-12, atol=0)
