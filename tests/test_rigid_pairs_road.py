"""Rigid contacts between bodies (contact pairs: sphere–sphere, sphere–capsule) and against the road surface
z(x, y) (simulation/rigid_stepping.py, docs/contact.md), against what mechanics says of their simple cases, each by
a route of its own: momentum and the plastic impact's energy loss ½ μ v² (μ the reduced mass), the weights a stack
carries, Coulomb's law on a grid incline, the energy of a ball rolling down a bump, and the compiled step terms
against the same terms in numpy."""

from __future__ import annotations

import csv
import math
import subprocess
import sys

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.inverse_dynamics import bias_forces
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.dynamics.rigid_contact import contact_frames, rigid_contact_dynamics, split_forces
from mbstudio.dynamics.rigid_step_terms import OUTPUTS, rigid_step_terms
from mbstudio.kinematics import Mechanism
from mbstudio.kinematics.fast_assembly import ROUNDING_FLOOR
from mbstudio.model import Model, dumps, loads, save
from mbstudio.model.document import Contact, ContactPair, ForceMeasure, Road
from mbstudio.model.errors import ModelError
from mbstudio.simulation.run import simulate

from .test_contact_pair import (
    M1,
    M2,
    R1,
    R2,
    ROD_LENGTH,
    ROD_MASS,
    K,
    ball_and_rod,
    free_joint,
    momenta,
    sphere,
    two_balls,
)
from .test_road_surface import MASS, ball_on_bump, block_on_incline, bump

G = 9.81
ROUNDING = 64 * np.finfo(float).eps  # a few ulps of a quantity's scale, summed over a step's operations


def column(result, name: str) -> np.ndarray:
    return next(values for label, _, values in result.measures if label == name)


def impulse(result, name: str) -> np.ndarray:
    """The impulse (3,) a contact gave over the run: its mean forces times the intervals they are the means of
    (the first sample repeats the second's)."""
    forces = np.column_stack([column(result, f"{name}.f{a}") for a in "xyz"])
    return np.diff(result.t) @ forces[1:]


def kinetic_energy(result) -> np.ndarray:
    return np.asarray(result.kinetic, float)


# ---------------------------------------------------------------------------------------------- pairs of bodies
def test_two_balls_meeting_head_on_stop_relative_to_each_other_keeping_their_momentum():
    """e = 0 (plastic): ball 1 (1 kg) at 1 m/s on ball 2 (2 kg) at rest, no gravity. After the impact both move
    at m1 v / (m1 + m2), the momentum kept to rounding, the kinetic energy down by exactly ½ μ v² with
    μ = m1 m2 / (m1 + m2), and the pair's impulse on ball 2 is μ v along the line of centres."""
    v = 1.0
    model = two_balls()
    start = np.zeros(12)
    start[0] = v
    result = simulate(model, 0.5, samples=51, contact="rigid", velocities=start)
    linear, angular = momenta(model, result)
    assert np.abs(linear - linear[0]).max() <= ROUNDING * M1 * v
    assert np.abs(angular - angular[0]).max() <= ROUNDING * M1 * v * 0.5
    after = result.qd[-1, 6] - result.qd[-1, 0]  # ball 2's x speed relative to ball 1's: the normal velocity
    assert abs(after) <= ROUNDING * v
    assert result.qd[-1, 0] == pytest.approx(M1 * v / (M1 + M2), rel=ROUNDING)
    reduced = M1 * M2 / (M1 + M2)
    lost = kinetic_energy(result)[0] - kinetic_energy(result)[-1]
    assert lost == pytest.approx(0.5 * reduced * v * v, rel=ROUNDING)
    assert impulse(result, "f") == pytest.approx([reduced * v, 0.0, 0.0], rel=ROUNDING, abs=ROUNDING * reduced * v)
    assert np.all(np.diff(kinetic_energy(result)) <= ROUNDING * kinetic_energy(result)[0])


def cradle(gap: float, restitution: float = 0.0) -> Model:
    """Three equal balls (1 kg, 0.1 m) in a row along x, `gap` apart, no gravity; pairs 1–2 and 2–3."""
    model = Model(name="cradle", gravity=[0.0, 0.0, 0.0])
    model.bodies = [sphere(str(i), 1.0, 0.1)[0] for i in (1, 2, 3)]
    model.joints = [free_joint(str(i), ((i - 1) * (0.2 + gap), 0.0, 0.0)) for i in (1, 2, 3)]
    law = (0.1, 0.1, K, 1.5, 0.0, 0.0, 1e-3)
    model.forces = [ContactPair(f"p{i}", str(i), "c", str(i + 1), "c", *law, restitution=restitution) for i in (1, 2)]
    model.measures = [ForceMeasure(f"f{i}", f"p{i}") for i in (1, 2)]
    return loads(dumps(model))


@pytest.mark.parametrize("gap", [pytest.param(0.0, marks=pytest.mark.slow), 0.01])  # 3 s each
def test_a_chain_of_three_balls_struck_plastically_moves_on_together_with_the_momentum(gap):
    """Ball 1 at 1 m/s on balls 2 and 3 (touching each other, or 1 cm apart): e = 0 leaves all three at v/3,
    the momentum m v kept to rounding at every sample, the kinetic energy down to a third; the pairs' impulses
    on balls 2 and 3 are 2/3 m v and 1/3 m v (ball 3 takes its third of the momentum from ball 2)."""
    model = cradle(gap)
    start = np.zeros(18)
    start[0] = 1.0
    result = simulate(model, 0.5, samples=51, contact="rigid", velocities=start)
    linear, _ = momenta(model, result)
    assert np.abs(linear - [1.0, 0.0, 0.0]).max() <= ROUNDING
    assert result.qd[-1, [0, 6, 12]] == pytest.approx(np.full(3, 1 / 3), rel=ROUNDING)
    assert kinetic_energy(result)[-1] == pytest.approx(kinetic_energy(result)[0] / 3, rel=ROUNDING)
    assert impulse(result, "f1")[0] == pytest.approx(2 / 3, rel=ROUNDING)
    assert impulse(result, "f2")[0] == pytest.approx(1 / 3, rel=ROUNDING)
    assert np.all(np.diff(kinetic_energy(result)) <= ROUNDING)


def test_an_elastic_chain_of_three_balls_passes_the_motion_on_to_the_last():
    """e = 1, the balls 1 cm apart (Newton's cradle, one impact at a time): ball 1 stops, ball 2 takes v and
    stops on ball 3, which leaves at v; momentum and kinetic energy kept to rounding."""
    model = cradle(0.01, restitution=1.0)
    start = np.zeros(18)
    start[0] = 1.0
    result = simulate(model, 0.5, samples=51, contact="rigid", velocities=start)
    linear, _ = momenta(model, result)
    assert np.abs(linear - [1.0, 0.0, 0.0]).max() <= ROUNDING
    assert result.qd[-1, [0, 6, 12]] == pytest.approx([0.0, 0.0, 1.0], abs=ROUNDING)
    assert kinetic_energy(result) == pytest.approx(np.full(len(result.t), 0.5), rel=ROUNDING)


def test_two_balls_meeting_elastically_leave_at_newtons_speeds():
    """e = 1: m1 v = 1 kg m/s on ball 2 (2 kg) at rest: they leave at (m1 − m2)/(m1 + m2) v and
    2 m1/(m1 + m2) v, the kinetic energy kept to rounding."""
    model = two_balls()
    model.forces[0].restitution = 1.0
    start = np.zeros(12)
    start[0] = 1.0
    result = simulate(loads(dumps(model)), 0.5, samples=51, contact="rigid", velocities=start)
    expected = [(M1 - M2) / (M1 + M2), 2 * M1 / (M1 + M2)]
    assert result.qd[-1, [0, 6]] == pytest.approx(expected, rel=ROUNDING)
    assert kinetic_energy(result) == pytest.approx(np.full(len(result.t), 0.5), rel=ROUNDING)


def test_a_pairs_restitution_is_from_zero_to_one():
    model = two_balls()
    model.forces[0].restitution = 1.5
    with pytest.raises(ModelError, match=r"'hit'\.restitution: is out of range \(got 1\.5\)"):
        loads(dumps(model))


def stack(overlap: float = 0.0) -> Model:
    """Ball 1 (M1, R1) resting on the plane z = 0, ball 2 (M2, R2) resting on top of it (pressed in by
    `overlap`), friction 0.5; the ground contact measured as `g`, the pair as `p`."""
    model = Model(name="stack", gravity=[0.0, 0.0, -G])
    model.bodies = [sphere("1", M1, R1)[0], sphere("2", M2, R2)[0]]
    model.joints = [free_joint("1", (0.0, 0.0, R1)), free_joint("2", (0.0, 0.0, 2 * R1 + R2 - overlap))]
    model.forces = [Contact("floor", "1", "c", R1, K, 1.5, 0.0, 0.5, 1e-3),
                    ContactPair("on", "1", "c", "2", "c", R1, R2, K, 1.5, 0.0, 0.5, 1e-3)]  # fmt: skip
    model.measures = [ForceMeasure("g", "floor"), ForceMeasure("p", "on")]
    return loads(dumps(model))


def test_a_ball_resting_on_a_ball_resting_on_the_plane_carries_the_weights():
    """The pair carries ball 2's weight m2 g and the plane both, (m1 + m2) g (to 1e-6; measured to rounding), in
    time steps (after the first steps, where ball 2 settles on ball 1 from the touching pose) and at one state."""
    result = simulate(stack(), 0.2, samples=21, contact="rigid")
    assert column(result, "p.fz")[-10:] == pytest.approx(np.full(10, M2 * G), rel=1e-6)
    assert column(result, "g.fz")[-10:] == pytest.approx(np.full(10, (M1 + M2) * G), rel=1e-6)
    assert np.abs(result.q[-1, [0, 1, 6, 7]]).max() <= ROUNDING  # nothing pushes them sideways
    mech = Mechanism(stack(overlap=1e-9))
    at_rest = rigid_contact_dynamics(mech, 0.0, mech.tree.initial_coordinates(), np.zeros(mech.n))
    assert at_rest.names == ["floor", "on"]
    assert at_rest.forces[:, 2] == pytest.approx([(M1 + M2) * G, M2 * G], rel=1e-9)
    assert np.abs(at_rest.qdd).max() <= 1e-9 * G


def test_a_ball_striking_a_free_capsule_rod_off_centre_loses_the_plastic_impacts_energy():
    """The rod of tests/test_contact_pair.py (2 kg, 1 m, a capsule) struck by the ball at 1 m/s 0.3 m off its
    middle, e = 0, μ = 0: the momentum kept to rounding, the angular momentum to the midpoint rule's (h ω)² of its
    parts (measured: 1.2e-8 of them at h = 1 ms, ω = 0.88 rad/s), and the kinetic energy down by Newton's plastic impact
    on the rod's effective mass at the struck point, 1 / m_e = 1 / m + d² / I: ½ μ v² with
    μ = 1 / (1 / m1 + 1 / m_e) (to 1e-6: the struck point moves within the impact's step)."""
    aim, v = 0.3, 1.0
    model = ball_and_rod(aim)
    start = np.zeros(12)
    start[0] = v
    step = 1e-3
    result = simulate(model, 0.4, samples=41, contact="rigid", velocities=start, step=step)
    linear, angular = momenta(model, result)
    assert np.abs(linear - linear[0]).max() <= ROUNDING * M1 * v
    spin = np.abs(result.qd[:, 11]).max()
    parts = ROD_MASS * aim * np.abs(result.qd[:, 6]).max()  # the rod's m d v, balanced by its spin I ω
    assert np.abs(angular - angular[0]).max() <= (step * spin) ** 2 * parts
    effective = 1 / (1 / ROD_MASS + aim * aim / (ROD_MASS * ROD_LENGTH**2 / 12))
    reduced = 1 / (1 / M1 + 1 / effective)
    energy = kinetic_energy(result)
    assert energy[0] - energy[-1] == pytest.approx(0.5 * reduced * v * v, rel=1e-6)
    assert np.diff(energy).max() <= ROUNDING * energy[0]


# ------------------------------------------------------------------------------------------------- the road
@pytest.mark.parametrize(("angle", "mu"), [pytest.param(10.0, 0.5, marks=pytest.mark.slow), (30.0, 0.3)])  # 4 s
def test_a_block_on_a_grid_incline_sticks_or_slides_as_coulomb_says(tmp_path, angle, mu):
    """The four-cornered block of tests/test_road_surface.py on z = −x tan θ given as a grid: its normal forces
    sum to m g cos θ (to 1e-6); with tan θ < μ it does not move at all and friction holds m g sin θ, with
    tan θ > μ it slides at g (sin θ − μ cos θ) (to 1e-6) with every corner's friction on the cone's edge."""
    theta = math.radians(angle)
    result = simulate(block_on_incline(tmp_path, theta, mu), 0.5, samples=51, contact="rigid")
    normal = sum(column(result, f"mk{i}.normal_force") for i in range(4))
    assert normal == pytest.approx(np.full(len(result.t), MASS * G * math.cos(theta)), rel=1e-6)
    down = np.array([math.cos(theta), 0.0, -math.sin(theta)])
    if math.tan(theta) < mu:
        assert np.abs(result.q - result.q[0]).max() <= 1e-12
        friction = sum(np.column_stack([column(result, f"mk{i}.friction_{a}") for a in "xyz"]) for i in range(4))
        assert friction @ down == pytest.approx(np.full(len(result.t), -MASS * G * math.sin(theta)), rel=1e-6)
    else:
        expected = G * (math.sin(theta) - mu * math.cos(theta))
        assert result.qdd[:, :3] @ down == pytest.approx(np.full(len(result.t), expected), rel=1e-6)
        for i in range(4):
            f_n, f_t = column(result, f"mk{i}.normal_force"), column(result, f"mk{i}.friction_force")
            assert f_t == pytest.approx(mu * f_n, rel=1e-6)


def ball_on_the_flank(folder, friction: float):
    """The ball (0.1 m) of tests/test_road_surface.py on the bump's flank near x = 0.15 m, touching the grid's
    interpolated surface (not the Gaussian it samples: started on that, the ball fell 1e-4 m onto the grid's
    surface, a plastic landing): moved along the contact's normal by its penetration until it is below 1e-12 m."""
    x0, radius = 0.15, 0.1
    height = bump(x0, 0.0)
    slope = -2 * x0 / 0.25 * height
    normal = np.array([-slope, 0.0, 1.0]) / math.hypot(slope, 1.0)
    centre = np.array([x0, 0.0, height]) + radius * normal
    for _ in range(20):
        model = ball_on_bump(folder, at=(centre[0], centre[1]), height=centre[2], friction=friction)
        mech = Mechanism(model)
        q = mech.tree.initial_coordinates()
        (law,) = split_forces(mech)[1]
        depth, _, _, normal = (np.asarray(x, float) for x in law.placed(mech.motion(q[None], np.zeros((1, mech.n)))))
        if abs(depth[0]) < 1e-12:
            return model
        centre = centre + depth[0] * normal[0]
    raise AssertionError(f"the ball does not settle on the grid's surface: penetration {depth[0]:.1e} m")


@pytest.mark.parametrize("friction", [0.0, 0.5])
def test_a_ball_rolling_down_a_curved_bump_never_gains_energy(tmp_path, friction):
    """Down the bump's flank (convex, then concave beyond x = 0.35 m), sliding (μ = 0) or rolling (μ = 0.5): the
    ball stays on the road (pressed at every sample, the penetration below the step's reach) and its energy never
    rises (to rounding), the normal turning under it at each step (the midpoint's normal is crossed at the start
    by as much as it is at the end)."""
    step = 1e-3
    result = simulate(ball_on_the_flank(tmp_path, friction), 1.0, samples=101, contact="rigid", step=step)
    energy = kinetic_energy(result) + result.potential
    assert np.diff(energy).max() <= ROUNDING * energy[0]
    assert energy[-1] < energy[0]
    assert result.q[-1, 0] > 0.35  # past the inflection
    assert np.all(column(result, "f.normal_force") > 0)
    speed = np.abs(result.qd[:, :3]).max()
    assert column(result, "f.penetration").max() <= speed * step * step / 0.1  # the curvature's reach in a step


def test_on_a_formula_bump_a_sliding_ball_never_gains_energy_and_loses_little():
    """A frictionless ball sliding down the bump z = 0.05 / (1 + (x² + y²) / 0.25) given as a formula (an exact
    gradient) never gains energy. What it loses over 1 s (1.44e-5 J of 1.43 at 1 ms, 9.6e-6 at 0.5 ms, 1.38e-5 at
    0.25 ms) does not shrink with the step: it is the work of the contact's normal on the road's tangent plane found
    from the centre's foot (road_surface.tangent_plane, whose distance errs by the curvature times the square of
    the first foot's offset), not the scheme's, whose sinking by the curvature each step is lifted back."""
    x0, radius = 0.15, 0.1
    height = 0.05 / (1 + x0 * x0 / 0.25)
    slope = -0.05 * (2 * x0 / 0.25) / (1 + x0 * x0 / 0.25) ** 2
    normal = np.array([-slope, 0.0, 1.0]) / math.hypot(slope, 1.0)
    centre = np.array([x0, 0.0, height]) + radius * normal
    model = Model(name="bump", gravity=[0.0, 0.0, -G])
    model.bodies = [sphere("1", 1.0, radius)[0]]
    model.joints = [free_joint("1", centre)]
    model.forces = [Contact("ball", "1", "c", radius, 1e5, 1.5, 0.0, 0.0, 1e-3, against="road")]
    model.road = Road(formula="0.05 / (1 + (x**2 + y**2) / 0.25)")
    model = loads(dumps(model))
    for step in (1e-3, 5e-4):
        result = simulate(model, 1.0, samples=101, contact="rigid", step=step)
        energy = result.kinetic + result.potential
        assert np.diff(energy).max() <= ROUNDING * energy[0]
        assert result.q[-1, 0] > 0.4
        assert 0.0 < energy[0] - energy[-1] <= 2e-5


def test_a_ball_dropped_on_the_grids_flank_does_not_stay_sunk_in_it(tmp_path):
    """Dropped 1 cm onto the grid bump's flank at h = 1 ms, the ball's plastic landing used to leave it 5.4e-5 m deep
    for the rest of the run; the step's end is now lifted back onto the road, to within what the road's curvature
    does to the midpoint's linearisation in one step."""
    at, radius, step = (0.3, 0.1), 0.1, 1e-3
    model = ball_on_bump(tmp_path, at=at, height=bump(*at) + radius + 0.01, friction=0.9)
    result = simulate(model, 1.0, samples=101, contact="rigid", step=step)
    speed = np.abs(result.qd[:, :3]).max()
    assert column(result, "f.penetration").max() <= speed * step * step / 0.1  # the curvature's reach in a step
    energy = result.kinetic + result.potential
    assert np.diff(energy).max() <= ROUNDING * energy[0]


# ---------------------------------------------------------------------------------------------- closed loops
def four_bar_against(force, floor_point=None) -> Model:
    model = samples.load("four_bar")
    if floor_point is not None:
        model.ground.points["big"] = floor_point
    model.forces = [force]
    model.measures.append(ForceMeasure("f", force.name))
    return model


def test_a_four_bar_lands_on_a_curved_road_and_on_a_fixed_sphere_keeping_its_loop():
    """The four-bar sample's coupler point P (a 30 mm sphere) falls onto the road z = 0.1 + 0.02 sin(5 x) (a
    formula road, e = 0.5) and onto a fixed sphere of 1 m under it (a pair with the ground, e = 0): the loop
    stays closed at every sample to the assembly's tolerance, the contact carries load at the end, the friction
    stays in the cone and the energy never rises beyond the scheme's flight drift on the loop (the same run with
    the ground out of reach)."""
    road = Contact("stop", "2", "P", 0.03, 1e5, 1.5, 0.0, 0.5, 1e-3, restitution=0.5, against="road")
    on_road = four_bar_against(road)
    on_road.road = Road(formula="0.1 + 0.02 * sin(5 * x)")
    pair = ContactPair("stop", "0", "big", "2", "P", 1.0, 0.03, 1e5, 1.5, 0.0, 0.5, 1e-3)
    on_sphere = four_bar_against(pair, [0.1, 0.0, -0.9])
    free = four_bar_against(Contact("stop", "2", "P", 0.03, 1e5, 1.5, 0.0, 0.5, 1e-3, plane_origin=[0, 0, -10]))
    drift = np.diff(simulate(loads(dumps(free)), 1.0, samples=1001, contact="rigid").potential).max()
    for model in (on_road, on_sphere):
        model = loads(dumps(model))
        result = simulate(model, 1.0, samples=1001, contact="rigid")
        assert np.abs(result.residual).max() <= ROUNDING_FLOOR * 1e-12 * Mechanism(model).length_scale
        normal, friction = column(result, "f.normal_force"), column(result, "f.friction_force")
        assert np.all(normal[-100:] > 0)
        assert np.all(friction <= 0.5 * normal * (1 + ROUNDING) + ROUNDING * normal.max())
        energy = result.kinetic + result.potential
        assert np.diff(energy).max() <= max(drift, 0.0) + ROUNDING * np.abs(energy).max()
        assert energy[-1] < energy[0]


# ------------------------------------------------------------------------------------ compiled and numpy terms
def numpy_step_terms(model: Model, t: float, q: np.ndarray, v: np.ndarray, h: float) -> dict[str, np.ndarray]:
    """The step's terms of a tree (rigid_step_terms.py) in numpy from the library's float64 routes: the mass
    matrix, the bias forces, the other elements' forces and each contact's `placed` point, Jacobian and normal,
    its frame from `contact_frames`."""
    mech = Mechanism(model)
    others, contacts = split_forces(mech)
    st = mech.motion(q[None], v[None])
    force = others.generalized(np.array([t]), q[None], v[None])[0] - bias_forces(mech, q[None], v[None])[0]
    M = mass_matrix(mech, q[None])[0]
    rows, depths, frames = [], [], []
    for law in contacts:
        depth, _, J, normal = (np.asarray(x, float) for x in law.placed(st))
        frame = contact_frames(normal[:1])[0]
        rows.append(frame @ J[0])
        depths.append(depth[0])
        frames.append(frame)
    J = np.concatenate(rows)
    v_free = v + h * np.linalg.solve(M, force)
    W = np.linalg.solve(M, J.T)
    u_free = J @ v_free
    out = [v_free, W, J @ W, u_free, J @ v, np.array(depths) - h / 2 * u_free[2::3], np.concatenate(frames)]
    return dict(zip(OUTPUTS, out, strict=True))


def test_the_compiled_step_terms_are_the_numpy_terms_on_pairs_capsules_and_the_road(tmp_path):
    """On the stack (a plane and a pair), the ball on the capsule rod and the ball on the bump's flank, moving,
    every output of the compiled step's terms equals the numpy route's to 1e-12 of its scale."""
    rng = np.random.default_rng(3)
    for model in (stack(overlap=1e-4), ball_and_rod(0.3), ball_on_the_flank(tmp_path, 0.5)):
        mech = Mechanism(model)
        q = mech.tree.initial_coordinates()
        v = rng.normal(size=mech.n)
        got = rigid_step_terms(model)(0.1, q, v, 1e-3)
        expected = numpy_step_terms(model, 0.1, q, v, 1e-3)
        for name, value in zip(OUTPUTS, got, strict=True):
            want = expected[name]
            scale = max(np.abs(want).max(), 1e-300)
            assert np.asarray(value).reshape(want.shape) == pytest.approx(want, abs=1e-12 * scale), name


def test_the_pair_and_plane_contacts_are_not_applied_as_compliant_forces_on_the_rigid_model():
    """The elements the rigid model holds are left out of the other forces (their stiffness would otherwise
    push the stack apart as well)."""
    mech = Mechanism(stack())
    others, contacts = split_forces(mech)
    assert [law.element.name for law in contacts] == ["floor", "on"]
    assert others.elements == []
    assert len(AppliedForces(mech, mech.model.forces).laws) == 2


# ---------------------------------------------------------------------------------------------- end to end
def test_the_cli_steps_a_pair_rigidly_and_writes_its_series(tmp_path):
    """`mbstudio simulate F.mbs --contact rigid` on the stack: the CSV has the pair's and the plane's forces."""
    path = tmp_path / "stack.mbs"
    save(stack(), path)
    out = tmp_path / "stack.csv"
    done = subprocess.run([sys.executable, "-m", "mbstudio.cli", "simulate", str(path), "--t-end", "0.2", "--contact",
                           "rigid", "--out", str(out)], capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    assert float(rows[-1]["p.fz [N]"]) == pytest.approx(M2 * G, rel=1e-6)
    assert float(rows[-1]["g.fz [N]"]) == pytest.approx((M1 + M2) * G, rel=1e-6)


def test_the_window_draws_the_pairs_recorded_forces_on_both_balls():
    """Analysis › Simulate with "contacts: rigid" (the window's simulation job) gives the stack's pair and plane
    series; View › Force Arrows at a sample draws the run's recorded forces (contact_results.recorded_arrows):
    m2 g up on ball 2 and down on ball 1 at their contact point, (m1 + m2) g up on ball 1 from the plane."""
    from mbstudio.jobs import DONE, Runner
    from mbstudio.simulation.contact_results import recorded_arrows, recorded_contacts
    from mbstudio.simulation.measures import applied_forces

    model = stack()
    runner = Runner()
    try:
        job = runner.submit("simulation", model, {"t_end": 0.2, "samples": 21, "contact": "rigid"})
        assert job.wait(300)
    finally:
        runner.cancel_all()
    assert job.state == DONE, job.error + job.details
    data = job.result.data
    recorded = recorded_contacts(model, data.series, 20)
    q = np.asarray(data.q[20], float)
    arrows = recorded_arrows(applied_forces(Mechanism(model), float(data.t[20]), q, np.zeros(len(q))), recorded)
    forces = {}
    for name, point, force in arrows:
        forces.setdefault(name, []).append((point, force))
    (on_ball2, up), (on_ball1, down) = forces["on"]
    assert up == pytest.approx([0.0, 0.0, M2 * G], rel=1e-6, abs=1e-9)
    assert down == pytest.approx(-up, abs=0.0)
    assert on_ball1 == pytest.approx(on_ball2, abs=0.0)
    assert on_ball2[2] == pytest.approx(q[2] + R1, abs=1e-5)  # the balls' contact point, sunk in by < 10 µm
    assert forces["floor"][0][1] == pytest.approx([0.0, 0.0, (M1 + M2) * G], rel=1e-6, abs=1e-9)
