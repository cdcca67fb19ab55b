"""Ball and free joints (rotation parameters, no gimbal lock) against Pinocchio's spherical and free-flyer joints,
through motions an Euler-angle joint cannot follow, in every integrator, number system and the compiled engine.

Pinocchio holds a ball's orientation as a quaternion and its rate as the angular velocity in the child frame;
its free flyer holds (position, quaternion) and, as velocity, the linear velocity in the child frame first, then
the angular velocity (docs/file-format.md). `pinocchio_state` converts ours: v = T(q) q̇, a = T q̈ + Ṫ q̇, and
generalized forces τ_ours = Tᵀ τ_pin, M_ours = Tᵀ M_pin T."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from mbstudio.dynamics.closed_loop import closed_loop_forward_dynamics
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.inverse_dynamics import inverse_dynamics
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.io.example_robots import robots_folder
from mbstudio.kinematics import Mechanism
from mbstudio.kinematics.tree import Ball
from mbstudio.linear.linear_model import linearize
from mbstudio.linear.modes import modes
from mbstudio.model import INERTIA_NAMES, Body, Coordinate, Frame, Joint, Model, dumps, loads
from mbstudio.numerics import rodrigues
from mbstudio.simulation.run import simulate

from .mujoco_matrices import mujoco_mass_matrix

pin = pytest.importorskip("pinocchio")

ROBOTS = robots_folder()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed (the test extra has it)")
FREE = ("x", "y", "z", "rx", "ry", "rz")


def inertia(m: float, centre, about_centre) -> dict[str, float]:
    """Our ten parameters about the body origin from the mass, centre of mass and inertia about it."""
    c, tensor = np.asarray(centre, float), np.asarray(about_centre, float)
    origin = tensor + m * (c @ c * np.eye(3) - np.outer(c, c))
    values = [m, *(m * c), origin[0, 0], origin[0, 1], origin[0, 2], origin[1, 1], origin[1, 2], origin[2, 2]]
    return dict(zip(INERTIA_NAMES, values, strict=True))


def floating_arm(reversed_: bool = False) -> Model:
    """A free body carrying an arm on a ball joint and a forearm on a revolute one; `reversed_` writes the free
    and ball joints from their child to their parent (the tree then turns them backwards)."""
    model = Model(name="floating arm", gravity=[0.3, -0.2, -9.81])
    model.bodies = [
        Body("1", "base", inertia(3.0, [0.1, -0.05, 0.02], np.diag([0.2, 0.3, 0.4]) + 0.01)),
        Body("2", "arm", inertia(1.0, [0.0, 0.02, -0.2], [[0.05, 0.001, 0], [0.001, 0.06, 0.002], [0, 0.002, 0.03]])),
        Body("3", "forearm", inertia(0.5, [0.1, 0.0, 0.0], np.diag([0.01, 0.02, 0.015]))),
    ]
    free = [Coordinate(n) for n in FREE]
    ball = [Coordinate(n) for n in ("a", "b", "c")]
    shoulder, arm = Frame([0.2, 0.1, 0.0], [0, 1, 1], [1, 0, 0]), Frame([0.0, 0.0, 0.1], [1, 0, 1], [0, 1, 0])
    model.joints = [
        Joint("float", "free", "1", "0", Frame([0.1, 0, 0]), Frame([0, 0, 0.5]), free)
        if reversed_
        else Joint("float", "free", "0", "1", Frame([0, 0, 0.5]), Frame([0.1, 0, 0]), free),
        Joint("shoulder", "ball", "2", "1", arm, shoulder, ball)
        if reversed_
        else Joint("shoulder", "ball", "1", "2", shoulder, arm, ball),
        Joint("elbow", "revolute", "2", "3", Frame([0, 0, -0.4], [1, 0, 0]), Frame(), [Coordinate("e")]),
    ]
    return loads(dumps(model))


# ------------------------------------------------------------------------------------------ Pinocchio's states
def _se3(frame) -> pin.SE3:
    return pin.SE3(np.asarray(frame.rotation, float), np.asarray(frame.origin, float))


def pinocchio_tree(mech: Mechanism) -> tuple[pin.Model, list]:
    """Pinocchio's model of our tree, joint by joint in tree order (a joint of several steps a composite of
    one-axis joints and spherical ones, a backwards step with its axis reversed), and for each of our steps
    (kind, coordinates, sign) in Pinocchio's q and v order."""
    model, steps = pin.Model(), []
    model.gravity = pin.Motion(np.r_[np.asarray(mech.tree.geometry.gravity(), float), 0, 0, 0])
    joint_of, body_in_joint = {0: 0}, {0: pin.SE3.Identity()}
    for link in mech.tree.links:
        composite = pin.JointModelComposite()
        for step in link.steps:
            if isinstance(step, Ball):
                composite.addJoint(pin.JointModelSpherical())
                steps.append(("ball", list(step.coordinates), step.sign))
            else:
                axis = np.eye(3)[step.axis] * step.sign
                one = pin.JointModelRevoluteUnaligned if step.kind == "R" else pin.JointModelPrismaticUnaligned
                composite.addJoint(one(axis))
                steps.append(("axis", [step.coordinate], 1))
        placement = body_in_joint[link.parent] * _se3(link.before)
        joint = model.addJoint(joint_of[link.parent], composite, placement, link.joint.name)
        after = _se3(link.after).inverse()
        values = mech.tree.geometry.inertia(mech.model.body(mech.tree.body_labels[link.child]))
        model.appendBodyToJoint(joint, _pin_inertia(dict(zip(INERTIA_NAMES, values, strict=True))), after)
        joint_of[link.child], body_in_joint[link.child] = joint, after
    return model, steps


def _pin_inertia(values: dict) -> pin.Inertia:
    m = float(values["m"])
    c = np.array([values["mx"], values["my"], values["mz"]], float) / m
    v = {k: float(x) for k, x in values.items()}
    about_origin = np.array(
        [[v["Ixx"], v["Ixy"], v["Ixz"]], [v["Ixy"], v["Iyy"], v["Iyz"]], [v["Ixz"], v["Iyz"], v["Izz"]]]
    )
    return pin.Inertia(m, c, about_origin - m * (c @ c * np.eye(3) - np.outer(c, c)))


def pinocchio_state(steps: list, q, qd, qdd) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(q_pin, v_pin, a_pin, T) for our q, q̇, q̈ (n,): per ball step of sign s, φ = s ρ and Pinocchio's
    quaternion of R(φ) with v = J(φ)ᵀ φ̇, the angular velocity in the child frame; per axis step, itself."""
    n = len(q)
    qp, T, bias = [], [], []
    for kind, cols, sign in steps:
        if kind == "axis":
            qp.append(q[cols])
            T.append(np.eye(n)[cols])
            bias.append(np.zeros(1))
            continue
        phi, phid = sign * q[cols], sign * qd[cols]
        w, v = rodrigues.quaternion(phi)
        qp.append(np.r_[v, w])
        block = np.zeros((3, n))
        block[:, cols] = sign * rodrigues.jacobian(phi).T
        T.append(block)
        bias.append(-rodrigues.jacobian_rate(-phi, phid))  # d/dt (J(φ)ᵀ) φ̇, J(φ)ᵀ = J(−φ)
    T = np.vstack(T)
    return np.concatenate(qp), T @ qd, T @ qdd + np.concatenate(bias), T


def worst_differences(mech: Mechanism, pm, convert, states: int = 5, seed: int = 7) -> dict[str, float]:
    """Largest RNEA, CRBA and ABA differences (ours against Pinocchio's) at random states, rotation
    parameters up to |ρ| ≈ 3.5 (rotations up to 150°)."""
    data, rng = pm.createData(), np.random.default_rng(seed)
    worst = dict.fromkeys(("rnea", "crba", "aba"), 0.0)
    for _ in range(states):
        q, qd, qdd = rng.uniform(-1, 1, (3, mech.n))
        q[list(mech.tree.ball_coordinates)] *= 2
        qp, vp, ap, T = convert(q, qd, qdd)
        tau = inverse_dynamics(mech, q, qd, qdd)[0]
        worst["rnea"] = max(worst["rnea"], np.abs(tau - T.T @ pin.rnea(pm, data, qp, vp, ap)).max())
        M = pin.crba(pm, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        worst["crba"] = max(worst["crba"], np.abs(mass_matrix(mech, q)[0] - T.T @ M @ T).max())
        theirs = pin.aba(pm, data, qp, vp, np.linalg.solve(T.T, tau))  # T is square here: nv = n
        ours = T @ forward_dynamics(mech, q, qd, tau)[0] + (ap - T @ qdd)
        worst["aba"] = max(worst["aba"], np.abs(ours - theirs).max())
    return worst


@pytest.mark.parametrize("reversed_", [False, True])
def test_ball_and_free_joints_in_either_direction_match_pinocchios_spherical_and_free_flyer(reversed_):
    mech = Mechanism(floating_arm(reversed_))
    assert (mech.dof, len(mech.tree.balls)) == (10, 2) and bool(mech.topology.reversed) == reversed_
    pm, steps = pinocchio_tree(mech)
    worst = worst_differences(mech, pm, lambda q, qd, qdd: pinocchio_state(steps, q, qd, qdd))
    assert max(worst.values()) < 1e-12, worst


# ------------------------------------------------------------------------------------------ robots from URDF
def urdf_converter(mech: Mechanism, pm):
    """Our states to Pinocchio's for a robot read by Pinocchio's own parser on a free flyer: joints by name, the
    free flyer's position and orientation from our root joint's (x, y, z, ρ) and its velocity (Rᵀ ṗ, Jᵀ ρ̇)."""
    index = {name: k for k, name in enumerate(mech.coordinates)}

    def convert(q, qd, qdd):
        qp, T, bias = np.zeros(pm.nq), np.zeros((pm.nv, mech.n)), np.zeros(pm.nv)
        for j in range(1, pm.njoints):
            joint, name = pm.joints[j], pm.names[j]
            if joint.nq == 7:
                cols = [index[f"{name}_{c}"] for c in FREE]
                p, rho, pd, rhod = q[cols[:3]], q[cols[3:]], qd[cols[:3]], qd[cols[3:]]
                R, (w, v) = rodrigues.rotation(rho), rodrigues.quaternion(rho)
                qp[joint.idx_q : joint.idx_q + 7] = np.r_[p, v, w]
                T[joint.idx_v : joint.idx_v + 3, cols[:3]] = R.T
                T[joint.idx_v + 3 : joint.idx_v + 6, cols[3:]] = rodrigues.jacobian(rho).T
                omega = rodrigues.jacobian(rho).T @ rhod
                bias[joint.idx_v : joint.idx_v + 3] = -np.cross(omega, R.T @ pd)
                bias[joint.idx_v + 3 : joint.idx_v + 6] = -rodrigues.jacobian_rate(-rho, rhod)
            else:
                k = index[name]
                qp[joint.idx_q : joint.idx_q + joint.nq] = [np.cos(q[k]), np.sin(q[k])] if joint.nq == 2 else q[k]
                T[joint.idx_v, k] = 1.0
        return qp, T @ qd, T @ qdd + bias, T

    return convert


@needs_robots
@pytest.mark.parametrize("robot", ["solo_description/robots/solo12.urdf", "talos_data/robots/talos_reduced.urdf"])
def test_legged_robots_on_a_free_base_match_pinocchios_free_flyer_reading_of_the_same_file(robot):
    from mbstudio.io.urdf_import import import_urdf

    path = ROBOTS / robot
    mech = Mechanism(import_urdf(path, floating_base=True).model)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert pm.nv == mech.n and mech.model.joint("root_joint").type == "free"
    worst = worst_differences(mech, pm, urdf_converter(mech, pm), states=3)
    assert max(worst.values()) < 1e-10, worst


# ------------------------------------------------------------------------------------------ motions
def tumbler(kind: str = "free") -> Model:
    """A free body with distinct principal moments (2, 3, 4 kg m², tilted by products), its centre of mass off
    its origin, in space (no gravity)."""
    tensor = [[2.0, 0.05, 0.0], [0.05, 3.0, 0.1], [0.0, 0.1, 4.0]]
    model = Model(name="tumbler", gravity=[0, 0, 0], bodies=[Body("1", "tumbler", inertia(2.0, CENTRE, tensor))])
    names = FREE if kind == "free" else ("x", "y", "z", "yaw", "pitch", "roll")
    model.joints = [Joint("float", kind, "0", "1", Frame(), Frame(), [Coordinate(n, 0.0) for n in names])]
    return loads(dumps(model))


CENTRE = np.array([0.1, -0.2, 0.05])
SPIN = np.array([0.1, 0.0, -0.05, 0.01, 3.0, 0.02])  # the origin's velocity, then ω ≈ 3 rad/s about the middle axis


def invariants(run) -> tuple[np.ndarray, np.ndarray]:
    """Kinetic energy (K,) and angular momentum about the world origin (K, 3), from the run's own states."""
    tensor = np.array([[2.0, 0.05, 0.0], [0.05, 3.0, 0.1], [0.0, 0.1, 4.0]])
    momenta = []
    for q, qd in zip(run.q, run.qd, strict=True):
        R, omega = rodrigues.rotation(q[3:]), rodrigues.jacobian(q[3:]) @ qd[3:]
        centre, speed = q[:3] + R @ CENTRE, qd[:3] + np.cross(omega, R @ CENTRE)
        momenta.append(R @ tensor @ R.T @ omega + 2.0 * np.cross(centre, speed))
    return run.kinetic, np.array(momenta)


@pytest.mark.parametrize(
    ("method", "compiled"),
    [("CVODES", True), ("DOP853", True), *(pytest.param(*c, marks=pytest.mark.slow) for c in (("Radau", True),
     ("BDF", True), ("CVODES-BDF", True), ("RK45", True), ("DOP853", False)))],
)  # fmt: skip
def test_a_tumbling_body_keeps_its_energy_and_momentum_through_every_orientation(method, compiled):
    """Spun about its middle axis the body flips over and over (Dzhanibekov's wing nut): it passes the poses
    where Euler angles lock (the body x axis along the world z axis) and its ρ passes to the shadow parameters
    each half turn; energy and momentum hold to 1e-8 over 10 s all the same."""
    run = simulate(tumbler(), 10.0, method, 1e-11, 1e-11, samples=2001, velocities=SPIN, compiled=compiled)
    energy, momentum = invariants(run)
    assert np.abs(energy / energy[0] - 1).max() < 1e-8
    assert np.abs(momentum - momentum[0]).max() < 1e-8 * np.linalg.norm(momentum[0])
    x_up = np.array([rodrigues.rotation(q[3:])[2, 0] for q in run.q])
    assert np.abs(x_up).max() > 0.9999  # within 0.8° of an Euler-angle joint's lock, β = ±π/2
    norms = np.linalg.norm(run.q[:, 3:], axis=1)
    assert norms.max() <= rodrigues.LIMIT + 1e-12 and norms.max() > 3.9  # read back with |ρ| ≤ 4, every half turn
    assert run.residual.max() == 0.0


def test_the_tumbling_body_follows_eulers_equations_integrated_independently():
    """The orientation against Euler's rigid-body equations and the quaternion kinematics, integrated by scipy
    in body axes (no MB Studio code)."""
    from scipy.integrate import solve_ivp

    tensor = np.array([[2.0, 0.05, 0.0], [0.05, 3.0, 0.1], [0.0, 0.1, 4.0]])

    def euler(t, y):
        w, (qw, qx, qy, qz) = y[:3], y[3:]
        w_dot = np.linalg.solve(tensor, -np.cross(w, tensor @ w))
        wx, wy, wz = w  # q̇ = ½ q ⊗ (0, ω_body)
        q_dot = 0.5 * np.array(
            [
                -qx * wx - qy * wy - qz * wz,
                qw * wx + qy * wz - qz * wy,
                qw * wy - qx * wz + qz * wx,
                qw * wz + qx * wy - qy * wx,
            ]
        )
        return np.r_[w_dot, q_dot]

    times = np.linspace(0, 10.0, 51)
    reference = solve_ivp(euler, (0, 10.0), np.r_[SPIN[3:], 1, 0, 0, 0], t_eval=times, rtol=1e-12, atol=1e-12)
    run = simulate(tumbler(), 10.0, rtol=1e-11, atol=1e-11, velocities=SPIN, t_eval=times)
    for q, y in zip(run.q, reference.y.T, strict=True):
        w, v = y[3], y[4:]
        expected = (
            (w * w - v @ v) * np.eye(3)
            + 2 * np.outer(v, v)
            + 2 * w * np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
        )
        assert np.abs(rodrigues.rotation(q[3:]) - expected).max() < 1e-7


def test_where_euler_angles_lock_the_rotation_parameters_are_as_well_conditioned_as_anywhere():
    """At a quarter turn about y the Euler-angle free joint's mass matrix is singular (its yaw and roll turn
    about the same axis); with rotation parameters its turning block is the body's inertia seen through the
    conformal J, conditioned as the inertia itself (its principal moments 2 to 4 kg m²)."""
    euler, chart = Mechanism(tumbler("free_euler")), Mechanism(tumbler())
    at_lock = mass_matrix(euler, [0, 0, 0, 0.3, np.pi / 2, -0.2])[0][3:, 3:]
    assert np.linalg.cond(at_lock) > 1e15
    turning = mass_matrix(chart, np.r_[0, 0, 0, rodrigues.axis_angle([0, 1, 0], np.pi / 2)])[0][3:, 3:]
    centroidal = np.array([[2.0, 0.05, 0.0], [0.05, 3.0, 0.1], [0.0, 0.1, 4.0]])
    about_origin = centroidal + 2.0 * (CENTRE @ CENTRE * np.eye(3) - np.outer(CENTRE, CENTRE))
    assert np.linalg.cond(turning) == pytest.approx(np.linalg.cond(about_origin), rel=1e-12)


def spherical_pendulum() -> Model:
    """A 1 kg bob 0.5 m below a ball joint (its own inertia small), hanging along −z at ρ = 0."""
    bob = inertia(1.0, [0, 0, -0.5], np.diag([1e-3, 1e-3, 5e-4]))
    model = Model(name="spherical pendulum", bodies=[Body("1", "bob", bob)])
    model.joints = [Joint("pivot", "ball", "0", "1", Frame(), Frame(), [Coordinate(n, 0.0) for n in ("a", "b", "c")])]
    model.joints[0].coordinates[0].initial = float(rodrigues.axis_angle([1, 0, 0], np.pi / 2)[0])  # horizontal
    return loads(dumps(model))


def test_a_spherical_pendulum_swings_through_the_pole_keeping_energy_and_vertical_momentum():
    """Released horizontal with a sideways push, the bob passes close under the pivot (the pole of polar angles)
    and over its other side; energy and the angular momentum about the vertical stay constant."""
    model = spherical_pendulum()
    run = simulate(model, 4.0, rtol=1e-11, atol=1e-11, velocities=[0.0, 0.0, 0.3], samples=801)
    total = run.kinetic + run.potential
    assert np.abs(total - total[0]).max() < 1e-8 * np.abs(run.potential).max()
    momentum = _vertical_momentum(run)
    assert np.ptp(momentum) < 1e-8 * np.abs(momentum).max() and np.abs(momentum).max() > 0.04
    bob = np.array([rodrigues.rotation(q) @ [0, 0, -0.5] for q in run.q])
    horizontal = np.linalg.norm(bob[:, :2], axis=1)
    assert horizontal.min() < 0.05 and bob[:, 2].max() > -1e-3  # near the pole, and back up to the horizontal


def _vertical_momentum(run) -> np.ndarray:
    """The body's angular momentum about the vertical through the pivot: R I Rᵀ ω + m c × (ω × c)."""
    tensor = np.diag([1e-3, 1e-3, 5e-4])
    centre = np.array([0, 0, -0.5])
    out = []
    for q, qd in zip(run.q, run.qd, strict=True):
        R, omega = rodrigues.rotation(q), rodrigues.jacobian(q) @ qd
        c = R @ centre
        out.append((R @ tensor @ R.T @ omega + np.cross(c, np.cross(omega, c)))[2])
    return np.array(out)


def test_the_linear_model_of_a_hanging_spherical_pendulum_has_the_hand_computed_frequencies():
    """About ρ = 0: two swings at ω² = m g l / (I + m l²) and a free twist about the rod."""
    model = spherical_pendulum()
    for c in model.joints[0].coordinates:
        c.initial = 0.0
    found = sorted(m.frequency_hz for m in modes(linearize(model)) if m.kind == "oscillation")
    swing = np.sqrt(1.0 * 9.81 * 0.5 / (1e-3 + 0.25)) / (2 * np.pi)
    assert found == pytest.approx([swing, swing], rel=1e-10)


# ------------------------------------------------------------------------------------------ number systems
def test_engine_variable_precision_and_sympy_agree_with_float64():
    model = floating_arm()
    mech = Mechanism(model)
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-2, 2, (2, mech.n))
    reference = closed_loop_forward_dynamics(mech, q, qd)[0]
    assert np.abs(engine(model).accelerations(0.0, q, qd) - reference).max() < 1e-12 * np.abs(reference).max()
    vp = Mechanism(model, precision=40)
    exact = vp.backend.to_float(closed_loop_forward_dynamics(vp, vp.as_batch(q), vp.as_batch(qd)))[0]
    assert np.abs(exact - reference).max() < 1e-12 * np.abs(reference).max()

    # sympy: rational rotation parameters and rational frames give exact rational forces (no square root)
    tumbling = tumbler()
    rational = [[sympy.Rational(round(x * 1000), 1000) for x in row[:6]] for row in (q, qd, qd[::-1])]
    tau = inverse_dynamics(Mechanism(tumbling, precision="sympy"), *(np.array([r], dtype=object) for r in rational))
    assert all(entry.is_Rational for entry in tau.ravel())
    floats = [np.array([[float(x) for x in r]]) for r in rational]
    expected = inverse_dynamics(Mechanism(tumbling), *floats)[0]
    assert np.abs(tau[0].astype(float) - expected).max() < 1e-14 * np.abs(expected).max()


def test_the_symbolic_equations_of_a_spherical_pendulum_are_rational_and_match_the_numbers():
    """No sine of a rotation parameter anywhere: M, c and g are rational functions of ρ (seconds, where the
    trigonometric simplification took minutes on them)."""
    from mbstudio.symbolic.eom import equations_of_motion

    model = spherical_pendulum()
    eom = equations_of_motion(model, numeric_inertia=True)
    terms = [eom.mass_matrix, eom.bias, eom.gravity]
    assert not any(expr.has(sympy.sin, sympy.cos) for matrix in terms for expr in matrix)
    mech = Mechanism(model)
    q, qd = np.array([0.3, -1.2, 2.0]), np.array([0.5, 0.1, -0.7])
    names = [sympy.Symbol(k, real=True) for k in eom.values]
    arguments = [*eom.coordinates, *eom.velocities, *names]
    numbers = [*q, *qd, *eom.values.values()]
    # the numbers put in at 30 digits: printing these expressions for lambdify took 40 s of the test's 43
    at = {symbol: sympy.Float(float(x), 30) for symbol, x in zip(arguments, numbers, strict=True)}
    M = np.array(eom.mass_matrix.xreplace(at).evalf(30), dtype=float)
    h = np.array((eom.bias + eom.gravity).xreplace(at).evalf(30), dtype=float).ravel()
    assert np.abs(M - mass_matrix(mech, q)[0]).max() < 1e-14
    assert np.abs(h - inverse_dynamics(mech, q, qd, np.zeros(3))[0]).max() < 1e-13


def test_what_cannot_hold_rotation_parameters_says_so_by_name():
    """The URDF export (which has no ball joint; a free joint is its floating root, tests/test_urdf.py), the FMU
    export (its state is (q, q̇_ind)) and the block models (Euler-angle floating bases) refuse a ball or free joint
    by name instead of writing its parameters as angles; the MJCF export writes MuJoCo's ball and free joints
    (tests/test_mjcf.py)."""
    from mbstudio.dynamics.titop import block_model
    from mbstudio.io.urdf_export import urdf_text
    from mbstudio.model import ModelError

    with pytest.raises(ModelError, match=r"ball joints \(pivot\), which URDF cannot describe"):
        urdf_text(spherical_pendulum())
    with pytest.raises(ModelError, match="joint 'pivot'.type: turns by rotation parameters"):
        block_model(spherical_pendulum())
    block_model(tumbler("free_euler"))  # the Euler-angle one is the block models' floating base
    from mbstudio.io.fmu_export import _Builder

    with pytest.raises(ModelError, match=r"ball or free joints \(float\), whose orientation"):
        _Builder(tumbler(), None, [])  # the FMU's state would hold a quaternion


def test_a_schema_1_free_joint_keeps_its_euler_angles_and_a_new_file_says_free_euler():
    text = dumps(tumbler("free_euler")).replace('"schema_version": 2', '"schema_version": 1')
    text = text.replace('"type": "free_euler"', '"type": "free"')
    old = loads(text)
    assert old.joints[0].type == "free_euler" and old == tumbler("free_euler")
    assert '"type": "free_euler"' in dumps(old) and '"schema_version": 2' in dumps(old)
    assert loads(dumps(tumbler())).joints[0].type == "free"


def test_an_ensemble_of_tumbling_bodies_runs_as_one_system():
    from mbstudio.simulation.ensemble import simulate_ensemble

    spins = np.array([SPIN, SPIN * [1, 1, 1, 1, -1, 1]])
    runs = simulate_ensemble(tumbler(), 3.0, velocities=spins, rtol=1e-10, atol=1e-10, samples=61)
    single = simulate(tumbler(), 3.0, rtol=1e-10, atol=1e-10, velocities=spins[1], samples=61)
    assert np.abs(runs[1].q - single.q).max() < 1e-7
    for run in runs:
        assert np.abs(run.kinetic / run.kinetic[0] - 1).max() < 1e-7


FLYER = """<mujoco model="flyer">
  <worldbody>
    <body name="base" pos="0.1 0.2 1.0" quat="0.9 0.1 -0.3 0.2">
      <freejoint name="float"/>
      <inertial pos="0.05 -0.02 0.01" mass="3" diaginertia="0.2 0.3 0.35"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" type="ball"/>
        <inertial pos="0 0 -0.2" mass="1" diaginertia="0.04 0.05 0.02"/>
        <body name="forearm" pos="0 0 -0.4">
          <joint name="elbow" type="hinge" axis="1 0 0"/>
          <inertial pos="0.1 0 0" mass="0.5" diaginertia="0.01 0.02 0.015"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_free_and_ball_joints_import_without_lock_and_match_mujocos_mass_matrix_and_bias(tmp_path):
    """MuJoCo's free joint holds (position, quaternion) with the linear velocity in world axes and the angular one
    in the body's; its ball joint a quaternion and the angular velocity in the child's axes. Ours: position and
    rotation parameters, whose rates map by v = T q̇ (T = 1 for the position, Jᵀ for ρ)."""
    mujoco = pytest.importorskip("mujoco")
    from mbstudio.io.mjcf_import import import_mjcf

    path = tmp_path / "flyer.xml"
    path.write_text(FLYER)
    result = import_mjcf(path)
    assert [j.type for j in result.model.joints] == ["free", "ball", "revolute"]
    mech = Mechanism(result.model)
    m = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(m)
    free, ball = [mech.coordinates.index(c) for c in result.coordinates["float"]], result.coordinates["shoulder"]
    ball = [mech.coordinates.index(c) for c in ball]
    elbow = mech.coordinates.index(result.coordinates["elbow"][0])
    q0 = mech.tree.initial_coordinates()  # the imported pose is MuJoCo's qpos0
    np.testing.assert_allclose(rodrigues.quaternion(q0[free[3:]])[1], m.qpos0[4:7], atol=1e-15)
    rng = np.random.default_rng(11)
    for _ in range(4):
        q, qd = rng.uniform(-1, 1, (2, mech.n))
        q[free[3:]] *= 3
        q[ball] *= 3
        T, bias = np.zeros((m.nv, mech.n)), np.zeros(m.nv)
        qpos = np.r_[q[free[:3]], _wxyz(q[free[3:]]), _wxyz(q[ball]), q[elbow]]
        T[0:3, free[:3]] = np.eye(3)
        for at, cols in ((3, free[3:]), (6, ball)):
            T[at : at + 3, cols] = rodrigues.jacobian(q[cols]).T
            bias[at : at + 3] = -rodrigues.jacobian_rate(-q[cols], qd[cols])
        T[9, elbow] = 1.0
        data.qpos[:], data.qvel[:] = qpos, T @ qd
        mujoco.mj_forward(m, data)
        M = mujoco_mass_matrix(m, data)
        ours = mass_matrix(mech, q)[0]
        assert np.abs(ours - T.T @ M @ T).max() < 1e-10
        h = inverse_dynamics(mech, q, qd, np.zeros(mech.n))[0]
        assert np.abs(h - T.T @ (M @ bias + data.qfrc_bias)).max() < 1e-10


def _wxyz(rho: np.ndarray) -> np.ndarray:
    w, v = rodrigues.quaternion(rho)
    return np.r_[w, v]
