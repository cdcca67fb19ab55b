"""The compliant sphere–plane contact (force_laws/contact_law.py, docs/contact.md) against what mechanics says of
its simple cases, each by a route of its own: a ball's apex height from its flight state z + ż² / 2g (energy), a
block's acceleration on an incline from Newton's law with Coulomb friction, its creep speed from the regularised
law's balance, its stopping distance from the work of friction, the static penetration from k δ^n = m g, and the
compiled engine against the numpy path."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.io.mjcf_export import mjcf_text
from mbstudio.io.urdf_export import urdf_text
from mbstudio.kinematics import Mechanism
from mbstudio.model import Body, Coordinate, Frame, Joint, Model, dumps, loads
from mbstudio.model.document import Contact, ForceMeasure, PointForce
from mbstudio.model.errors import ModelError
from mbstudio.simulation.measures import applied_forces
from mbstudio.simulation.run import simulate

G = 9.81
FREE = ("x", "y", "z", "rx", "ry", "rz")
RTOL, ATOL = 1e-10, 1e-12


def free_body(mass: float, inertia: tuple[float, float, float], points: dict, gravity=(0.0, 0.0, -G)) -> Model:
    """One body on a free joint from the world origin, its centre of mass at its origin."""
    model = Model(name="contact", gravity=list(gravity))
    values = dict.fromkeys(("mx", "my", "mz", "Ixy", "Ixz", "Iyz"), 0.0)
    values |= {"m": mass, "Ixx": inertia[0], "Iyy": inertia[1], "Izz": inertia[2]}
    model.bodies = [Body("1", "body", values, points)]
    model.joints = [Joint("float", "free", "0", "1", Frame(), Frame(), [Coordinate(n) for n in FREE])]
    return model


def ball(height: float, dissipation: float, radius=0.1, stiffness=1e5, exponent=1.5, **plane) -> Model:
    """A 1 kg ball of `radius` whose centre starts at `height`, its contact measured as `f`."""
    model = free_body(1.0, (0.004, 0.004, 0.004), {"c": [0.0, 0.0, 0.0]}, plane.pop("gravity", (0.0, 0.0, -G)))
    model.joints[0].coordinates[2].initial = height
    model.forces = [Contact("foot", "1", "c", radius, stiffness, exponent, dissipation, 0.5, 1e-3, **plane)]
    model.measures = [ForceMeasure("f", "foot")]
    return loads(dumps(model))


# the block: 1 kg, 0.2 × 0.1 × 0.05 m, a sphere of 5 mm at each bottom corner, stiff and well damped
MASS, HALF, CORNER = 1.0, (0.1, 0.05, 0.025), 0.005
K, N_EXP, C_D, V_S = 1e6, 1.5, 20.0, 1e-3


def corner_depth(load: float) -> float:
    """The static penetration (load / k)^(1/n) of one corner under `load`."""
    return (load / K) ** (1 / N_EXP)


def block(friction: float, gravity=(0.0, 0.0, -G), push=None) -> Model:
    """The block resting on z = 0 at its static penetration (each corner taking a quarter of the weight's
    normal part); `push` a constant world force at its centre of mass."""
    a, b, c = HALF
    corners = {f"k{i}": [sx * a, sy * b, -c] for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1)))}
    inertia = tuple(MASS * (u * u + v * v) / 3 for u, v in ((b, c), (a, c), (a, b)))
    model = free_body(MASS, inertia, corners | {"c": [0.0, 0.0, 0.0]}, gravity)
    down = -gravity[2]
    model.joints[0].coordinates[2].initial = c + CORNER - corner_depth(MASS * down / 4)
    model.forces = [Contact(f"{p}", "1", p, CORNER, K, N_EXP, C_D, friction, V_S) for p in corners]
    model.measures = [ForceMeasure(f"m{p}", p) for p in corners]
    if push is not None:
        model.forces.append(PointForce("push", "1", "c", list(push)))
    return loads(dumps(model))


def run(model: Model, t_end: float, samples: int, velocities=None, **options):
    return simulate(model, t_end, samples=samples, rtol=RTOL, atol=ATOL, velocities=velocities, **options)


def column(result, name: str) -> np.ndarray:
    return next(values for label, _, values in result.measures if label == name)


def monitor(result, name: str) -> np.ndarray:
    return next(values for label, _, values in result.monitors if label == name)


def flight_apexes(result, radius: float) -> np.ndarray:
    """z + ż² / 2g at every sample where the ball is off the plane: the apex of the flight it is on."""
    z, vz = result.q[:, 2], result.qd[:, 2]
    off = z > radius
    return (z + vz * vz / (2 * G))[off], np.cumsum(np.diff(off.astype(int), prepend=1) == 1)[off]


def test_an_elastic_ball_bounces_back_to_its_height():
    """c_d = 0: every flight's apex (from its state, z + ż²/2g) is the drop height, to the integrator's error
    (rtol 1e-10 per step; 1e-7 of the height leaves room for its growth over the run's steps), and the energy
    balance holds to the same; the deepest penetration stores the whole fall: m g (h + δ) = k δ^(n+1) / (n+1)."""
    model = ball(0.5, 0.0)
    result = run(model, 2.0, 4001)
    apexes, flight = flight_apexes(result, 0.1)
    assert flight.max() >= 3  # three bounces at least (flights numbered from 0)
    assert np.abs(apexes - 0.5).max() < 1e-7 * 0.5
    assert result.energy_drift < 1e-7
    deepest = 0.0
    for _ in range(50):  # m g (0.4 + δ) = k δ^2.5 / 2.5 at the bottom (1 kg, 0.4 m to touch-down): a contraction
        deepest = (G * (0.4 + deepest) * 2.5 / 1e5) ** (1 / 2.5)
    sampled = column(result, "f.penetration").max()  # the samples 0.5 ms apart pass within 1 % of the bottom
    assert deepest * 0.99 < sampled <= deepest * (1 + 1e-9)


def test_a_damped_ball_loses_energy_and_never_gains_any():
    """c_d > 0: the total energy (kinetic, gravity's and the contact's elastic potential) never rises beyond the
    integrator's error (the balance E + dissipated measures it), each apex is lower than the one before, and
    what the balance books as dissipated is what the energy lost."""
    result = run(ball(0.5, 0.3), 2.0, 4001)
    total = result.total
    error = result.energy_drift * abs(total[0])
    assert np.diff(total).max() <= 10 * error + 1e-12 * abs(total[0])
    assert total[-1] < 0.8 * total[0]
    apexes, flight = flight_apexes(result, 0.1)
    per_flight = [apexes[flight == k].mean() for k in np.unique(flight)]
    assert np.all(np.diff(per_flight) < 0)
    assert monitor(result, "dissipated_energy")[-1] == pytest.approx(total[0] - total[-1], rel=1e-6)


@pytest.mark.parametrize(("exponent", "plane"), [(1.5, {}), (1.0, {}), (2.0, {"plane_origin": [0.0, 0.0, 0.3]})])
def test_static_penetration_under_the_weight(exponent, plane):
    """After settling, k δ^n = m g: δ = (m g / k)^(1/n) (to 1e-4: the settled run's remaining motion decays
    far below it), whatever the exponent and where the plane lies."""
    height = 0.1 + plane.get("plane_origin", [0, 0, 0])[2]
    result = run(ball(height, 2.0, stiffness=1e5, exponent=exponent, **plane), 2.0, 201)
    expected = (G / 1e5) ** (1 / exponent)
    assert column(result, "f.penetration")[-1] == pytest.approx(expected, rel=1e-4)
    assert column(result, "f.normal_force")[-1] == pytest.approx(G, rel=1e-4)


def test_a_tilted_plane_under_tilted_gravity_holds_the_ball_as_the_level_one():
    """The plane through o with normal n and gravity along −n: the same static penetration along n."""
    n = np.array([0.0, math.sin(0.4), math.cos(0.4)])
    result = run(ball(0.1, 2.0, plane_normal=list(n), gravity=tuple(-G * n)), 1.0, 101)
    assert column(result, "f.penetration")[-1] == pytest.approx((G / 1e5) ** (1 / 1.5), rel=1e-4)
    force = np.array([column(result, f"f.f{a}")[-1] for a in "xyz"])
    assert force == pytest.approx(G * n, abs=1e-4 * G)


def incline(angle: float) -> tuple[float, ...]:
    """Gravity on a plane tilted by `angle` about y, in the plane's axes (x down the slope, z its normal)."""
    return (G * math.sin(angle), 0.0, -G * math.cos(angle))


def test_a_block_slides_down_a_steep_incline_at_coulombs_acceleration():
    """tan θ > μ: once sliding at v ≫ v_s the block accelerates at g (sin θ − μ cos θ), Newton's law with the
    Coulomb force μ m g cos θ: the regularisation's share μ g cos θ v_s² / 2v² (at v > 0.5 m/s, 1e-6 of it) and
    the settled normal motion leave it within 1e-4."""
    angle, mu = math.radians(30), 0.3
    result = run(block(mu, incline(angle)), 0.8, 161)
    sliding = result.qd[:, 0] > 0.5
    assert sliding.sum() > 50
    expected = G * (math.sin(angle) - mu * math.cos(angle))
    assert result.qdd[sliding, 0] == pytest.approx(np.full(sliding.sum(), expected), rel=1e-4)
    slips = np.array([column(result, f"mk{i}.slip_speed") for i in range(4)])
    assert np.abs(slips[:, sliding] - result.qd[sliding, 0]).max() < 1e-3 * result.qd[sliding, 0].max()


def test_a_block_on_a_gentle_incline_creeps_no_faster_than_the_stiction_law_allows():
    """tan θ < μ: friction must hold m g sin θ, which the regularised law gives only at the slip v with
    μ m g cos θ v / sqrt(v² + v_s²) = m g sin θ, v = v_s tan θ / sqrt(μ² − tan² θ): the creep speed bound
    (the block's corners share one slip, so their loads' split does not matter). Reached once the start's
    transient (friction building up tilts the block onto its lower corners) has settled, within 0.1 s."""
    angle, mu = math.radians(10), 0.5
    result = run(block(mu, incline(angle)), 0.5, 101)
    bound = V_S * math.tan(angle) / math.sqrt(mu * mu - math.tan(angle) ** 2)
    settled = result.t > 0.1
    assert np.abs(result.qd[settled, 1:]).max() < 1e-3 * bound  # no sideways or normal drift
    assert result.qd[settled, 0] == pytest.approx(np.full(settled.sum(), bound), rel=1e-3)


def stopping_distance(v0: float, mu: float) -> float:
    """∫ sqrt(v² + v_s²) dv / (μ g) from 0 to v0: the distance the regularised friction takes to stop a block
    from v0 (m v dv/dx = −μ m g v / sqrt(v² + v_s²)), v0² / 2μg plus a share of order v_s² ln(v0 / v_s)."""
    root = math.sqrt(v0 * v0 + V_S * V_S)
    return (v0 * root + V_S * V_S * math.log((v0 + root) / V_S)) / (2 * mu * G)


def test_a_block_launched_on_the_flat_stops_after_coulombs_distance():
    """From v0 the block stops after v0² / 2μg, plus the regularisation's share (stopping_distance) and the
    normal compliance's: friction μ Σ f_n = μ m (g + z̈) moves the stop by μ Δz, Δz within the corners'
    penetrations, below 2 δ_static (δ_static the corners' static penetration)."""
    v0, mu = 1.0, 0.5
    result = run(block(mu), 0.5, 101, velocities=[v0, 0, 0, 0, 0, 0])
    coulomb = v0 * v0 / (2 * mu * G)
    compliance = 2 * mu * corner_depth(MASS * G / 4)
    assert abs(result.q[-1, 0] - stopping_distance(v0, mu)) < compliance
    assert abs(result.q[-1, 0] - coulomb) < compliance + stopping_distance(v0, mu) - coulomb
    assert abs(result.qd[-1, 0]) < 1e-6


def test_a_block_pushed_diagonally_keeps_its_friction_inside_the_cone():
    """A push of 1.5 μ m g along (3, 2, 0) at the centre of mass: every corner's friction stays within μ f_n at
    every sample (friction_force and normal_force, the measure's own columns), the block slides along the push
    at (|F| − μ m g) / m once v ≫ v_s (Newton's law, as on the incline), and the energy balance holds."""
    mu = 0.4
    direction = np.array([3.0, 2.0, 0.0]) / math.sqrt(13)
    push = 1.5 * mu * MASS * G * direction
    result = run(block(mu, push=tuple(push)), 0.6, 121)
    for i in range(4):
        normal, friction = column(result, f"mk{i}.normal_force"), column(result, f"mk{i}.friction_force")
        assert np.all(normal > 0)
        assert np.all(friction <= mu * normal * (1 + 1e-12))
    speed = result.qd[:, :2] @ direction[:2]
    sliding = speed > 0.5
    assert sliding.sum() > 20
    assert result.qdd[sliding, :2] @ direction[:2] == pytest.approx(np.full(sliding.sum(), 0.5 * mu * G), rel=1e-3)
    across = result.qd[:, :2] @ np.array([-direction[1], direction[0]])
    assert np.all(np.abs(across[sliding]) < 1e-5 * speed[sliding])  # the start's yaw transient has died out
    assert result.energy_drift < 1e-6


@pytest.mark.slow  # 7 s: the numpy path's run
def test_the_compiled_engine_and_the_numpy_path_agree():
    """Accelerations of the engine (contact traced into C) against the numpy forces and articulated-body
    algorithm, at states pressing, sliding and leaving the plane (to 1e-9 of their scale: both round the same
    sums in another order); and a short run of each path."""
    model = block(0.4, push=(3.0, 2.0, 0.0))
    eng = engine(model)
    mech, forces = eng.mech, AppliedForces(eng.mech)
    rng = np.random.default_rng(7)
    for _ in range(4):
        q = mech.tree.initial_coordinates()[None, :] + rng.normal(0, [1e-3, 1e-3, 3e-4, 0.02, 0.02, 0.02])
        v = rng.normal(0, [0.3, 0.3, 0.05, 0.5, 0.5, 0.5])
        ours = eng.accelerations(0.0, q[0], v)
        reference = forward_dynamics(mech, q, v[None], forces.generalized(0.0, q, v[None]))[0]
        assert np.abs(ours - reference).max() <= 1e-9 * max(1.0, np.abs(reference).max())
    compiled = run(model, 0.05, 11)
    numpy_path = run(model, 0.05, 11, method="DOP853", compiled=False)
    assert np.abs(compiled.q - numpy_path.q).max() < 1e-7
    measures = [
        np.abs(a[2] - b[2]).max() / max(1.0, np.abs(b[2]).max())
        for a, b in zip(compiled.measures, numpy_path.measures, strict=True)
    ]
    assert max(measures) < 1e-6


def test_the_contact_is_written_read_and_exported_with_notes():
    """The file keeps every field (the plane too); units convert (mm, N/mm^1.5 for n = 1.5); exporters say what
    they leave out."""
    model = ball(0.5, 0.3, plane_origin=[0.0, 0.0, 0.1], plane_normal=[0.0, 0.1, 1.0])
    again = loads(dumps(model))
    assert again.forces == model.forces
    text = (
        dumps(model)
        .replace('"radius": 0.1', '"radius": "100 mm"')
        .replace('"stiffness": 100000.0', '"stiffness": "100 N/mm^1.5"')
    )
    converted = loads(text).forces[0]
    assert converted.radius == 0.1
    assert converted.stiffness == pytest.approx(100 * 1000**1.5, rel=1e-12)  # 100 N per (1e-3 m)^1.5
    with pytest.raises(ModelError, match=r"force 'foot'.stiffness.*N/m\^1.5"):
        loads(dumps(model).replace('"stiffness": 100000.0', '"stiffness": "100 N/mm"'))
    assert any("contact 'foot' is left out" in note and "solref" in note for note in mjcf_text(model)[1])
    assert any("contact 'foot' has no URDF form" in note for note in urdf_text(model)[1])


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("exponent", 0.5, r"force 'foot'.exponent.*out of range.*>= 1"),
        ("dissipation", -1.0, r"force 'foot'.dissipation.*out of range.*>= 0"),
        ("friction", -0.1, r"force 'foot'.friction.*out of range"),
        ("stiction_velocity", 0.0, r"force 'foot'.stiction_velocity.*not positive"),
        ("stiffness", -1.0, r"force 'foot'.stiffness.*out of range"),
        ("radius", 0.0, r"force 'foot'.radius.*out of range"),
        ("plane_normal", [0.0, 0.0, 0.0], r"force 'foot'.plane_normal.*not a direction"),
        ("plane_origin", [0.0, 1.0], r"force 'foot'.plane_origin.*three numbers"),
        ("point", "heel", r"force 'foot'.point.*unknown point"),
    ],
)
def test_a_contact_out_of_range_is_named_with_its_field(field, value, words):
    data = json.loads(dumps(ball(0.5, 0.0)))
    data["forces"][0][field] = value
    with pytest.raises(ModelError, match=words):
        loads(json.dumps(data))


@pytest.mark.parametrize("dissipation", [0.005, 0.02])
def test_the_restitution_falls_with_the_impact_speed_as_hunt_and_crossley_say(dissipation):
    """Without gravity a ball meeting the plane at v leaves at e v. The damping's work over the elastic path,
    ∫ 3/2 c_d k δ^n δ̇ dδ over both phases = c_d m v³ (for any n: the path's δ^n sqrt(v² − 2kδ^(n+1)/((n+1) m))
    integrates to (2/3) m v² / 2k · v), gives 1 − e² = 2 c_d v, e = 1 − c_d v to first order (Hunt and Crossley
    1975); the second order is left, within 1.5 (c_d v)²."""
    v0 = 2.0
    result = run(ball(0.15, dissipation, gravity=(0.0, 0.0, 0.0)), 0.2, 21, velocities=[0, 0, -v0, 0, 0, 0])
    assert result.q[-1, 2] > 0.1  # it has left the plane
    restitution = result.qd[-1, 2] / v0
    assert abs(restitution - (1 - dissipation * v0)) < 1.5 * (dissipation * v0) ** 2


def test_units_of_the_contact_fields_are_checked_through_parameters_too():
    """A parameter in N/m^1.5 fits the stiffness of exponent 1.5 and not of exponent 1; a friction coefficient or
    an exponent takes no unit; a stiction velocity is a velocity."""
    data = json.loads(dumps(ball(0.5, 0.0)))
    data["parameters"] = [{"name": "kc", "value": 1e5, "unit": "N/m^1.5"}]
    data["forces"][0]["stiffness"] = "kc"
    assert loads(json.dumps(data)).forces[0].stiffness == "kc"
    data["forces"][0]["exponent"] = 1.0
    with pytest.raises(ModelError, match=r"force 'foot'.stiffness.*contact stiffness for exponent 1"):
        loads(json.dumps(data))
    for field, value, words in (
        ("friction", "0.5 m", r"force 'foot'.friction.*takes no unit"),
        ("stiction_velocity", "1 mm", r"force 'foot'.stiction_velocity.*velocity is expected"),
        ("dissipation", "0.2 s/mm", None),
    ):
        changed = json.loads(dumps(ball(0.5, 0.0)))
        changed["forces"][0][field] = value
        if words is None:
            assert loads(json.dumps(changed)).forces[0].dissipation == pytest.approx(200.0, rel=1e-12)
            continue
        with pytest.raises(ModelError, match=words):
            loads(json.dumps(changed))


def test_the_force_arrow_is_the_contact_force_at_the_sphere_point_nearest_the_plane():
    """`applied_forces` (the window's arrows) at a sliding state: the arrow starts at c = P − r n and carries
    f_n n + f_t, f_n = k δ^n (1 + 3/2 c_d δ̇) and f_t = −μ f_n v_t / sqrt(|v_t|² + v_s²) written out here, v_t
    including the spin's share ω × (c − P)."""
    model = ball(0.1, 0.3)
    mech = Mechanism(model)
    q = np.array([0.2, -0.1, 0.095, 0.0, 0.0, 0.0])  # 5 mm in
    qd = np.array([0.3, 0.1, -0.2, 0.0, 0.0, 2.0])  # sliding, sinking, spinning about z (no slip from it at c)
    ((name, point, force),) = applied_forces(mech, 0.0, q, qd)
    depth, rate = 0.005, 0.2
    normal = 1e5 * depth**1.5 * (1 + 1.5 * 0.3 * rate)
    slip = np.array([0.3, 0.1, 0.0])
    friction = -0.5 * normal * slip / math.sqrt(slip @ slip + 1e-6)
    assert name == "foot"
    assert point == pytest.approx([0.2, -0.1, -0.005], abs=1e-15)
    assert force == pytest.approx(np.r_[friction[:2], normal], rel=1e-12)
    qd[3:] = [1.0, 0.0, 0.0]  # turning about x at 1 rad/s: c moves by ω × (−r z) = (0, 0.1, 0) m/s more
    ((_, _, rolled),) = applied_forces(mech, 0.0, q, qd)
    slip = np.array([0.3, 0.1 + 0.1 * 1.0, 0.0])
    assert rolled[:2] == pytest.approx(-0.5 * normal * slip[:2] / math.sqrt(slip @ slip + 1e-6), rel=1e-9)


def test_a_double_pendulum_striking_a_tilted_plane_keeps_its_energy_balance():
    """The contact on a chain (a point of the second link, its Jacobian through both joints) against a tilted,
    raised plane, with damping and friction: E + dissipated stays constant to the integrator's tolerance (run.py's
    tolerances keep it below 1e-7 of the energy on the conservative samples), while the contact took energy."""
    model = samples.load("double_pendulum")
    model.forces = [Contact("strike", "2", "tip", 0.05, 1e5, 1.5, 0.5, 0.6, 1e-3, [0.0, 0.0, -1.2], [0.3, 0.0, 1.0])]
    model.measures = [ForceMeasure("f", "strike")]
    result = run(loads(dumps(model)), 2.0, 401)
    assert column(result, "f.normal_force").max() > 10.0
    assert column(result, "f.friction_force").max() > 1.0
    assert monitor(result, "dissipated_energy")[-1] > 0.1 * result.kinetic.max()  # E(0) = 0 here
    assert result.energy_drift < 1e-7


def test_a_four_bar_striking_a_wall_keeps_its_loop_closed_and_its_energy_balance():
    """A closed loop: the coupler point of the four-bar sample, launched at 3 rad/s, meets a wall (normal +y)
    and is stopped by its friction; the loop stays closed, E + dissipated stays constant (1e-7, as above), and
    the kinetic energy went into the dissipated energy."""
    model = samples.load("four_bar")
    model.forces = [Contact("wall", "2", "P", 0.02, 1e5, 1.5, 0.5, 0.5, 1e-3, [0.0, 0.0, 0.0], [0.0, 1.0, 0.0])]
    model.measures = [ForceMeasure("f", "wall")]
    result = run(loads(dumps(model)), 1.0, 201, velocities=[-3.0])
    assert column(result, "f.normal_force").max() > 10.0
    assert result.residual.max() < 1e-9
    assert result.energy_drift < 1e-7
    assert result.kinetic[-1] < 1e-6 * result.kinetic[0]
    assert monitor(result, "dissipated_energy")[-1] == pytest.approx(result.total[0] - result.total[-1], rel=1e-6)


@pytest.mark.parametrize(("exponent", "unit"), [(1.5, "N/m^1.5"), (1.0, "N/m^1"), ("n_c", "N/m^n (n the exponent)")])
def test_the_properties_panel_gives_the_contact_stiffness_its_exponents_unit(exponent, unit):
    """k of f_n = k δ^n is in N/m^n: the field editor shows that unit for the element's exponent, and the
    dissipation and stiction velocity in theirs (not a spring's N/m or a joint friction's rad/s)."""
    from mbstudio.gui.editing.fields import fields_for

    model = ball(0.1, 1.0)
    model.forces[0].exponent = exponent
    units = {f.name: f.unit for f in fields_for(model, ("force", "foot"))[1]}
    assert units["stiffness"] == unit
    assert (units["dissipation"], units["stiction_velocity"], units["radius"]) == ("s/m", "m/s", "m")


def test_the_contact_series_give_the_friction_and_slip_vectors_and_the_point():
    """The block sliding down the steep incline: its corners' friction forces along the slope sum to Coulomb's
    −μ m g cos θ (Newton's law normal to the slope; 1e-4 as above), their slips are the block's velocity along
    it, and each contact point lies at the depth of its penetration under the plane (the sphere's lowest
    point)."""
    angle, mu = math.radians(30), 0.3
    result = run(block(mu, incline(angle)), 0.8, 161)
    sliding = result.qd[:, 0] > 0.5
    friction = sum(column(result, f"mk{i}.friction_x") for i in range(4))
    assert friction[sliding] == pytest.approx(np.full(sliding.sum(), -mu * MASS * G * math.cos(angle)), rel=1e-4)
    for i in range(4):
        assert column(result, f"mk{i}.slip_x")[sliding] == pytest.approx(result.qd[sliding, 0], rel=1e-3)
        assert np.abs(column(result, f"mk{i}.slip_y")[sliding]).max() < 1e-6
        assert column(result, f"mk{i}.z") == pytest.approx(-column(result, f"mk{i}.penetration"), abs=1e-15)


def test_the_support_polygon_and_centre_of_pressure_of_a_resting_block():
    """On the flat, at its static penetration: the four loaded corners make the polygon (their points at the
    corners' x, y), and the centre of pressure is under the centre of mass (the block is symmetric); lifted
    clear of the plane, nothing supports it."""
    from mbstudio.simulation.contact_results import support

    mech = Mechanism(block(0.5))
    q = np.asarray(mech.tree.initial_coordinates(), float)
    stance = support(mech, 0.0, q, np.zeros(mech.n))
    a, b, _ = HALF
    assert sorted(map(tuple, np.round(stance.polygon[:, :2], 12))) == sorted((x, y) for x in (-a, a) for y in (-b, b))
    assert stance.pressure_centre[:2] == pytest.approx([0.0, 0.0], abs=1e-12)
    q[2] += 0.1
    assert support(mech, 0.0, q, np.zeros(mech.n)).pressure_centre is None
