"""TITOP block models in time (Alazard et al. 2024; our checks 10, 11, 14–17, 19–21), each against a route
of its own:
a torque-free body's constants, the equivalence principle, a stiff joint against a weld, the same chain rooted
elsewhere, the balloon against our general simulation and against Pinocchio's free-flyer ABA, the balloon's
invariants and the digest's regression trajectories, the efforts of a recorded run, and loop closures converging
on the closed-loop method. The runs of a second or more are marked slow (about 12 s together)."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.titop import (
    GROUND,
    Block,
    BlockModel,
    Body,
    Joint,
    JointLaw,
    block_model,
)
from mbstudio.dynamics.titop.euler import angles
from mbstudio.dynamics.titop.motion import transport
from mbstudio.model import ModelError
from mbstudio.model.document import JointSpringDamper
from mbstudio.simulation.block_runs import simulate_blocks
from mbstudio.simulation.cross_check import cross_check, recorded_efforts
from mbstudio.simulation.run import simulate

from .test_titop import BALLOON_Q0, table1_balloon

Z, I3 = np.zeros(3), np.eye(3)
EULER = ("x", "y", "z", "psi", "theta", "phi")


def damped_balloon(k: float = 50.0, d_s: float = 5.0, d_p: float = 0.5):
    """The sample with the digest's damped set in its parameters."""
    model = samples.load("balloon")
    for p in model.parameters:
        p.value = {"k": k, "d_s": d_s, "d_p1": d_p, "d_p2": d_p}.get(p.name, p.value)
    return model


def table1_run(t_end: float, t_eval=None, rtol: float = 1e-11, **data) -> object:
    blocks = table1_balloon(**data)
    times = np.linspace(0, t_end, 201) if t_eval is None else t_eval
    return simulate_blocks(blocks, t_end, rtol=rtol, atol=1e-12, t_eval=times, initial=(BALLOON_Q0, 0 * BALLOON_Q0))


# ---------------------------------------------------------------- single bodies and small systems
def test_a_torque_free_body_keeps_its_momentum_and_energy_and_tumbles_about_its_middle_axis():
    """Check 10: one floating block, no gravity: the inertial angular momentum P_{b/i} I_B ω and T stay put, the
    centre of mass drifts at its initial rate; a spin about the axis of the middle principal moment (here body
    x: moments 2, 1, 3) is unstable: it turns over within 12 s."""
    body = Block(Body("A", 2.0, Z, np.diag([2.0, 1.0, 3.0]), Z), Joint("free", "floating", GROUND, Z, I3, None, EULER))
    blocks = BlockModel([body], Z)
    velocity, omega = np.array([0.3, -0.2, 0.1]), np.array([2.0, 1e-3, 1e-3])
    start = (np.zeros((1, 6)), np.concatenate([velocity, omega[::-1]])[None])  # (ψ̇, θ̇, φ̇) = ω at Θ = 0
    run = simulate_blocks(blocks, 12.0, rtol=1e-11, atol=1e-12, initial=start)
    H = run.angular_momentum
    np.testing.assert_allclose(H, np.broadcast_to(H[0], H.shape), rtol=0, atol=1e-8 * np.abs(H[0]).max())
    np.testing.assert_allclose(run.kinetic, run.kinetic[0], rtol=1e-9)
    np.testing.assert_allclose(run.com, run.t[:, None] * velocity, rtol=0, atol=1e-9)
    spin = run.y[:, 3]  # ω_x in body axes
    assert spin.min() < -0.9 * spin[0]  # it turned over


def test_small_oscillation_periods_of_a_pendulum_and_a_spring_mass():
    """Checks 12 and 13 in the time domain: a point pendulum of 1.2 m and 1.6 m on a fixed base, 1 mrad from
    hanging, swings with the period 2π √(L/g) (2.19754 s, 2.53750 s), measured between zero crossings of the
    block simulation; a mass on a prismatic spring oscillates at √(k/m)."""
    for length, printed in ((1.2, 2.19754), (1.6, 2.53750)):
        bob = Body("bob", 1.5, [0, -length, 0], np.zeros((3, 3)), Z)
        blocks = BlockModel(
            [Block(bob, Joint("pivot", "revolute", GROUND, Z, I3, [0, 0, 1], ("theta",)))], [0, -9.81, 0]
        )
        run = simulate_blocks(blocks, 6.0, rtol=1e-11, atol=1e-14, samples=6001, initial=([[1e-3]], [[0.0]]))
        assert _period(run.t, run.q[:, 0]) == pytest.approx(printed, abs=5e-6)
    k, m = 80.0, 2.0
    mass = Block(Body("m", m, Z, np.zeros((3, 3)), Z), Joint("rail", "prismatic", GROUND, Z, I3, [1, 0, 0], ("x",)))
    spring = JointLaw("x", lambda t, x, v: -k * x, lambda x: k * x * x / 2)
    run = simulate_blocks(
        BlockModel([mass], [0, 0, -9.81], [spring]),
        3.0,
        rtol=1e-11,
        atol=1e-14,
        samples=3001,
        initial=([[0.01]], [[0.0]]),
    )
    assert _period(run.t, run.q[:, 0]) == pytest.approx(2 * np.pi * np.sqrt(m / k), rel=1e-6)


def _period(t: np.ndarray, x: np.ndarray) -> float:
    """The mean time between every other zero crossing (linear interpolation between samples)."""
    k = np.nonzero(np.sign(x[:-1]) != np.sign(x[1:]))[0]
    crossings = t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])
    return 2 * float(np.mean(np.diff(crossings)))


def test_the_floating_base_stops_at_its_gimbal_lock_with_the_time():
    """A body pitching at 1 rad/s reaches θ = 90° at t = π/2 s: the run stops there and says so."""
    body = Block(Body("A", 1.0, Z, np.eye(3), Z), Joint("free", "floating", GROUND, Z, I3, None, EULER))
    with pytest.raises(ModelError, match=r"joint 'free'.*theta = 90° at t = 1\.57.* s is at the gimbal lock"):
        simulate_blocks(BlockModel([body], Z), 3.0, initial=(np.zeros((1, 6)), [[0, 0, 0, 0, 1.0, 0]]), compiled=False)


@pytest.mark.slow
def test_gravity_only_shifts_the_motion_by_half_g_t_squared():
    """Check 11: without buoyancy, the Table 1 balloon under g and under g = 0: joint angles and attitude agree,
    positions differ by ½ g t² (digest: 4.5e-14 and 5.3e-15)."""
    times = np.linspace(0, 2.0, 41)
    falling, floating = (table1_run(2.0, times, buoyancy=False, gravity=g) for g in (-9.81, 0.0))
    np.testing.assert_allclose(falling.q[:, 3:], floating.q[:, 3:], rtol=0, atol=1e-11)
    shift = falling.q[:, :3] - floating.q[:, :3]
    np.testing.assert_allclose(shift, np.outer(-9.81 * times**2 / 2, [0, 1, 0]), rtol=0, atol=1e-11)


@pytest.mark.slow
def test_a_stiff_revolute_joint_moves_like_a_weld():
    """Check 14: the double pendulum's elbow as a weld, and as a revolute joint with a spring-damper of rising
    stiffness (critically damped): the shoulder's motion approaches the weld's as 1/k."""
    welded = samples.load("double_pendulum")
    elbow = welded.joints[1]
    rest = elbow.coordinates[0].initial or 0.0
    elbow.type, elbow.coordinates = "fixed", []
    welded.independent_coordinates = "auto"
    reference = simulate_blocks(welded, 1.0, rtol=1e-10, atol=1e-12, samples=21)
    errors = []
    for k in (1e3, 1e5):
        sprung = samples.load("double_pendulum")
        sprung.forces = [JointSpringDamper("lock", "theta2", stiffness=k, damping=2 * np.sqrt(k / 3), rest=rest)]
        run = simulate_blocks(sprung, 1.0, "Radau", rtol=1e-10, atol=1e-12, samples=21)
        errors.append(np.abs(run.q[:, 0] - reference.q[:, 0]).max())
    assert errors[1] < 1e-3 and errors[1] < errors[0] / 30


def test_rooting_the_chain_at_the_other_body_gives_the_same_inertial_motion():
    """Check 15: two bodies joined by a revolute joint, floating, rooted at A (B its child) and at B (A its
    child, the joint reversed): from the same initial motion, every body's centre of mass moves alike."""
    A = Body("A", 2.0, Z, np.diag([0.3, 0.5, 0.7]), Z)
    B = Body("B", 1.0, Z, np.array([[0.2, 0.01, 0], [0.01, 0.3, 0.02], [0, 0.02, 0.25]]), Z)
    axis = np.array([0.3, 0.4, 1.0]) / np.linalg.norm([0.3, 0.4, 1.0])
    at_A, at_B = np.array([0.5, 0.1, 0.0]), np.array([-0.4, 0.0, 0.1])  # the joint on each body
    g = [0, 0, -9.81]
    rooted_A = BlockModel(
        [
            Block(A, Joint("free", "floating", GROUND, Z, I3, None, EULER)),
            Block(Body("B", B.mass, B.com, B.inertia, at_B), Joint("hinge", "revolute", 0, at_A, I3, axis, ("q",))),
        ],
        g,
    )
    start = (np.array([[0.1, 0.2, 0.3, 0.4, -0.3, 0.2, 0.7]]), np.array([[0.5, 0.0, -0.2, 0.3, 1.0, -0.4, 2.0]]))
    first = simulate_blocks(rooted_A, 2.0, rtol=1e-11, atol=1e-12, samples=41, initial=start)
    # B's motion at its centre of mass from the first model's blocks, as the second model's floating state
    state = rooted_A.from_coordinates(*start)
    motion = transport(rooted_A.kinematics(state)[1].motion, at_B)
    R = motion.R[0]
    euler = angles(R)
    rooted_B = BlockModel(
        [
            Block(B, Joint("free", "floating", GROUND, Z, I3, None, EULER)),
            Block(Body("A", A.mass, A.com, A.inertia, at_A), Joint("hinge", "revolute", 0, at_B, I3, -axis, ("q",))),
        ],
        g,
    )
    from mbstudio.dynamics.titop.floating_base import BaseState
    from mbstudio.dynamics.titop.interconnection import BlockState

    base = BaseState(motion.tw, motion.pos, euler[None])
    q, qd = rooted_B.to_coordinates(BlockState(start[0][:, 6:], start[1][:, 6:], (base,)))
    second = simulate_blocks(rooted_B, 2.0, rtol=1e-11, atol=1e-12, samples=41, initial=(q, qd))
    for run, other in ((first, second),):
        np.testing.assert_allclose(run.com, other.com, rtol=0, atol=1e-9)
        np.testing.assert_allclose(run.q[:, 6], other.q[:, 6], rtol=0, atol=1e-9)  # the hinge angle
        np.testing.assert_allclose(run.angular_momentum, other.angular_momentum, rtol=0, atol=1e-9)


# ---------------------------------------------------------------- the balloon
def test_balloon_block_run_is_the_general_simulation_over_10_s():
    """Check 17 (the paper's cross-tool comparison): the damped sample by the block model and by our general
    simulation, both DOP853 at 1e-12, over 10 s: ≤ 1e-9 on every coordinate (digest: 3.7e-11 over 3 s). The
    undamped case is chaotic (errors grow from rounding: 4e-8 after 10 s), so it is compared over 2 s."""
    for model, t_end in ((damped_balloon(), 10.0), (samples.load("balloon"), 2.0)):
        result = simulate(model, t_end, "DOP853", rtol=1e-12, atol=1e-12, samples=101)
        check = cross_check(model, result)
        coordinates = {n: v for n, v in check.largest().items() if n[6:] in result.coordinates}
        assert len(coordinates) == 9 and max(coordinates.values()) < 1e-9, coordinates
        assert check.largest()["error:total_energy"] < 1e-8


@pytest.mark.slow
def test_balloon_against_pinocchio_free_flyer():
    """A short run of Table 1's balloon against an independent Pinocchio model: free-flyer root at B (its
    quaternion and local twist integrated here), a prismatic joint along t, two revolute joints, the buoyancy
    as an external force, Pinocchio's ABA."""
    pin = pytest.importorskip("pinocchio")
    model = pin.Model()
    model.gravity.linear = np.array([0, -9.81, 0])
    t = np.array([1.0, 0, -1.0]) / np.sqrt(2)
    balloon = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "balloon")
    model.appendBodyToJoint(
        balloon, pin.Inertia(10.0, Z, np.array([[5, 0, 0], [0, 10, -7], [0, -7, 10.0]])), pin.SE3.Identity()
    )
    slider = model.addJoint(balloon, pin.JointModelPrismaticUnaligned(t), pin.SE3(I3, np.array([0, -2.0, 0])), "slider")
    model.appendBodyToJoint(slider, pin.Inertia(1.0, Z, np.zeros((3, 3))), pin.SE3.Identity())
    p1 = model.addJoint(slider, pin.JointModelRZ(), pin.SE3.Identity(), "pendulum1")
    model.appendBodyToJoint(p1, pin.Inertia(2.0, np.array([0, -1.2, 0]), np.zeros((3, 3))), pin.SE3.Identity())
    p2 = model.addJoint(p1, pin.JointModelRZ(), pin.SE3(I3, np.array([0, -1.2, 0])), "pendulum2")
    model.appendBodyToJoint(p2, pin.Inertia(3.0, np.array([0, -1.6, 0]), np.zeros((3, 3))), pin.SE3.Identity())
    data = model.createData()

    def rhs(_, y):
        q, v = y[:10], y[10:]
        q = q.copy()
        q[3:7] /= np.linalg.norm(q[3:7])
        R = pin.Quaternion(q[3:7]).toRotationMatrix()
        fext = pin.StdVec_Force([pin.Force.Zero() for _ in range(model.njoints)])
        fext[balloon] = pin.Force(R.T @ np.array([0, 16 * 9.81, 0]), Z)
        a = pin.aba(model, data, q, v, np.zeros(model.nv), fext)
        w = v[3:6]
        x, y_, z, s = q[3:7]
        quat_dot = 0.5 * np.array(
            [
                s * w[0] + y_ * w[2] - z * w[1],
                s * w[1] + z * w[0] - x * w[2],
                s * w[2] + x * w[1] - y_ * w[0],
                -x * w[0] - y_ * w[1] - z * w[2],
            ]
        )
        return np.concatenate([R @ v[:3], quat_dot, v[6:], a])

    from scipy.integrate import solve_ivp

    times = np.linspace(0, 1.5, 16)
    q0 = np.concatenate([Z, [0, 0, 0, 1.0], [0.0, *np.radians([170, -170])]])
    ref = solve_ivp(rhs, (0, 1.5), np.concatenate([q0, np.zeros(9)]), "DOP853", times, rtol=1e-12, atol=1e-12)
    run = table1_run(1.5, times, rtol=1e-12)
    np.testing.assert_allclose(run.q[:, :3], ref.y[:3].T, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.q[:, 6:], ref.y[7:10].T, rtol=0, atol=1e-9)
    for k in range(len(times)):
        R_pin = pin.Quaternion(ref.y[3:7, k] / np.linalg.norm(ref.y[3:7, k])).toRotationMatrix()
        np.testing.assert_allclose(angles(R_pin)[[2, 1, 0]], run.q[k, 3:6], rtol=0, atol=1e-9)


def test_table1_balloon_follows_the_digest_s_regression_trajectories():
    """Check 20 (Alazard et al. 2024, section 4, reproduced by a TITOP and a Lagrange route): outputs
    [x, y, z, φ, θ, ψ, p, θ1, θ2] at t = 0.5, 1, 2 s, undamped and damped, to every printed digit."""
    printed = {
        (0.0, 0.0, 0.0): [
            [-0.0384193, 0.2207482, -0.0367159, 0.0840183, -0.053518, -0.0917499, -0.3815374, 2.0209584, -2.1852947],
            [0.0904035, 0.3865379, -0.0428373, 0.2429929, 0.2344267, 0.4676448, -0.5783479, -1.8912636, 1.9226934],
            [0.3083475, 2.0966931, -0.0676688, 0.921916, -0.2386599, 0.6376932, -7.4161444, -10.6044591, 10.0391422],
        ],
        (50.0, 5.0, 0.5): [
            [-0.0561609, 0.1845111, -0.013071, 0.0258131, -0.1128201, -0.1722834, -0.0162449, 2.1853942, -2.300623],
            [0.039762, 0.6017885, 0.031943, -0.1392997, -0.0332231, -0.014667, 0.7959973, -0.8762188, 1.2882022],
            [0.147855, 0.722323, 0.0106822, -0.0879803, -0.0667005, -0.1647019, 0.5403197, 0.2927969, -0.6472849],
        ],
    }
    for (k, d_s, d_p), rows in printed.items():
        run = table1_run(2.0, np.array([0.0, 0.5, 1.0, 2.0]), k=k, d_s=d_s, d_p=d_p)
        ours = run.q[1:][:, [0, 1, 2, 5, 4, 3, 6, 7, 8]]  # (x, y, z, ψ, θ, φ, ...) as (x, y, z, φ, θ, ψ, ...)
        np.testing.assert_allclose(ours, rows, rtol=0, atol=5.01e-8)


@pytest.mark.slow
def test_table1_balloon_invariants_and_its_damped_energy_falling_towards_the_equilibrium():
    """Check 19: undamped over 10 s, the centre of mass stays at (0.065118, −0.680697, 0), H_G·y = 0 and
    E = −106.842216 J; damped (k = 50, d_s = 5, d_p = 0.5) over 200 s, E never rises and approaches the
    equilibrium's −223.668 J from above (digest: −223.39 J after 200 s), the loads' work accounting for all of
    the loss."""
    undamped = table1_run(10.0, rtol=1e-10)  # at 1e-11 DOP853 takes 20 times the steps: the slider flies off at 145 m/s
    assert np.abs(undamped.com - [0.065118, -0.680697, 0]).max() < 5.01e-7
    assert np.abs(undamped.com - undamped.com[0]).max() < 1e-8  # while the slider travels 600 m
    assert np.abs(undamped.angular_momentum[:, 1]).max() < 1e-7 * np.abs(undamped.angular_momentum).max()
    assert undamped.total[0] == pytest.approx(-106.842216, abs=5.01e-7)
    assert np.abs(undamped.total - undamped.total[0]).max() < 1e-9 * undamped.kinetic.max()  # T reaches 1e4 J
    damped = table1_run(200.0, np.linspace(0, 200, 2001), rtol=1e-10, k=50.0, d_s=5.0, d_p=0.5)
    energy = damped.total
    assert np.diff(energy).max() <= 1e-9
    assert energy.min() > -223.668 and energy[-1] == pytest.approx(-223.39, abs=0.005)  # the digest's, after 200 s
    np.testing.assert_allclose(energy - damped.work, energy[0], rtol=0, atol=1e-6)


def test_a_recorded_run_gives_back_its_efforts():
    """Check 21: the damped sample simulated by the general route; its recorded (q, q̇, q̈) through the inverse
    diagram give the joint laws' efforts −k p − d_s ṗ, −d θ̇ and no wrench on the balloon."""
    model = damped_balloon()
    result = simulate(model, 1.0, rtol=1e-10, atol=1e-12, samples=51)
    inv = recorded_efforts(model, result)
    rates = {c: result.qd[:, result.coordinates.index(c)] for c in ("p", "theta1", "theta2")}
    p = result.q[:, result.coordinates.index("p")]
    expected = np.stack([-50 * p - 5 * rates["p"], -0.5 * rates["theta1"], -0.5 * rates["theta2"]], axis=1)
    np.testing.assert_allclose(inv.efforts, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
    assert np.abs(inv.bases[0]).max() < 1e-9


# ---------------------------------------------------------------- closed loops
@pytest.mark.slow
def test_loop_closures_converge_on_the_closed_loop_method():
    """Check 16 and the cross-check of a closed loop: the four-bar's cut joint as spring-dampers of 100 and 1000
    Hz against the closed-loop simulation over 0.5 s: the coordinates' error falls by more than 30 (as 1/f²), the
    cut joint's mismatch stays below 1e-5 m, and the block model's energy balance holds."""
    model = samples.load("four_bar")
    result = simulate(model, 0.5, "Radau", rtol=1e-8, atol=1e-10, samples=51)
    errors = []
    for frequency in (100.0, 1000.0):
        check = cross_check(model, result, closure_frequency=frequency)
        errors.append(max(v for n, v in check.largest().items() if n[6:] in result.coordinates))
        run = check.run
        np.testing.assert_allclose(run.total - run.work, run.total[0], rtol=0, atol=1e-7)
    blocks = block_model(model, closure_frequency=1000.0)
    from mbstudio.simulation.block_runs import Layout

    kin = blocks.kinematics(Layout(blocks).state(run.y))
    closure = blocks.loads[-1]
    assert closure.mismatch(blocks, kin).max() < 1e-5
    assert errors[1] < errors[0] / 30 and errors[1] < 1e-4
