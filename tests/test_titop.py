"""TITOP block models (Alazard et al. 2024) against independent routes, no time integration here
(tests/test_titop_runs.py):

- the operators' identities (checks 1–5, 7–9), each by a second formula written here;
- every tree sample (and the spanning tree of every closed-loop sample, whose universal, spherical and cylindrical
  joints become chains of blocks) against our recursive Newton-Euler and articulated-body algorithms at random
  states, for inverse and forward dynamics, both loop solves;
- Table 1's balloon as printed (Ixx = 5, built from explicit data: the file format refuses it) reproducing the
  initial accelerations of an independent reproduction, and the sample's centre of mass and E(0) from its geometry;
- forward then inverse recovers the efforts (checks 6, 21 at one state); option B's mass matrix symmetric
  positive definite, and Ṁ − 2C skew-symmetric with C from Christoffel symbols (check 22);
- the compiled (traced) right-hand side against numpy; messages for what a block model cannot do.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from mbstudio import samples
from mbstudio.dynamics import forward_dynamics, inverse_dynamics
from mbstudio.dynamics.titop import (
    GROUND,
    Block,
    BlockModel,
    Body,
    Joint,
    JointLaw,
    PointLoad,
    block_model,
    floating_base,
    invariants,
)
from mbstudio.dynamics.titop.euler import angles, dcm, inverse_rate_matrix, rate_matrix
from mbstudio.dynamics.titop.motion import coriolis, rodrigues, skew, spatial_mass, tau
from mbstudio.kinematics import Mechanism
from mbstudio.kinematics.topology import spanning_tree
from mbstudio.model import ModelError
from mbstudio.numerics.backends import Float64

RNG = np.random.default_rng(2024)
TREES = ["balloon", "double_pendulum", "gripper", "puma560"]
CLOSED = ["four_bar", "slider_crank", "sla_suspension", "delta_3rr2rrr"]


def random_body():
    """Mass, centre of mass, a positive-definite inertia about it, a point P, a twist, a spatial acceleration."""
    A = RNG.normal(size=(3, 3))
    return (
        1 + RNG.random(),
        RNG.normal(size=3),
        A @ A.T + np.eye(3),
        RNG.normal(size=3),
        RNG.normal(size=6),
        RNG.normal(size=6),
    )


# ---------------------------------------------------------------- checks 1-5, 7-9: the operators
def test_spatial_mass_matrix_from_the_centre_of_mass_is_the_explicit_form():
    """Check 1: eq. (13) equals eq. (11) written out, [[m 1, m (*BP)], [−m (*BP), I_B − m (*BP)²]]."""
    for _ in range(5):
        m, B, I_B, P, *_ = random_body()
        S = skew(P - B)
        explicit = np.block([[m * np.eye(3), m * S], [-m * S, I_B - m * S @ S]])
        np.testing.assert_allclose(spatial_mass(m, B, I_B, P), explicit, rtol=0, atol=1e-14 * np.abs(explicit).max())


def test_newton_euler_at_a_point_two_ways_and_at_the_centre_of_mass():
    """Check 2: D x'' + W_P(ω) (eq. 11–12) equals D xdot' + 𝒞(x') D x' (eq. 25–26) when a_P = vdot_P + ω × v_P;
    check 5: the classical F = m a_B, T_B = I ωdot + ω × I ω, moved from B to P, equals it too."""
    for _ in range(5):
        m, B, I_B, P, tw, acc = random_body()
        v, w = tw[:3], tw[3:]
        D, S = spatial_mass(m, B, I_B, P), skew(P - B)
        spatial = D @ acc + coriolis(tw) @ D @ tw
        a_P = acc[:3] + np.cross(w, v)
        W_P = np.concatenate([m * skew(w) @ S @ w, skew(w) @ (I_B - m * S @ S) @ w])
        classical = D @ np.concatenate([a_P, acc[3:]]) + W_P
        PB = B - P
        a_B = a_P + np.cross(acc[3:], PB) + np.cross(w, np.cross(w, PB))
        F, T_B = m * a_B, I_B @ acc[3:] + np.cross(w, I_B @ w)
        at_P = np.concatenate([F, T_B + np.cross(PB, F)])
        scale = np.abs(spatial).max()
        np.testing.assert_allclose(classical, spatial, rtol=0, atol=1e-13 * scale)
        np.testing.assert_allclose(at_P, spatial, rtol=0, atol=1e-13 * scale)


def test_power_duality_and_kinetic_energy_at_any_point():
    """Check 3: (τ_CPᵀ W_C)·x'_P = W_C·(τ_CP x'_P); check 4: ½ x'_Pᵀ D_P x'_P = ½ x'_Bᵀ D_B x'_B, x'_B = τ_BP x'_P."""
    for _ in range(5):
        m, B, I_B, P, tw, W = random_body()
        d = RNG.normal(size=3)
        assert (tau(d).T @ W) @ tw == pytest.approx(W @ (tau(d) @ tw), rel=1e-14)
        D_B = spatial_mass(m, B, I_B, B)
        tw_B = tau(P - B) @ tw
        assert tw @ spatial_mass(m, B, I_B, P) @ tw / 2 == pytest.approx(tw_B @ D_B @ tw_B / 2, rel=1e-13)


def test_prismatic_apparent_mass_is_the_mass_at_any_point():
    """Check 7: [t~; 0]ᵀ D_P [t~; 0] = m for any P, and the effort is the same at P and at P0 (eq. 93, 76)."""
    m, B, I_B, P, _, W = random_body()
    t = RNG.normal(size=3)
    t /= np.linalg.norm(t)
    e = np.concatenate([t, np.zeros(3)])
    assert e @ spatial_mass(m, B, I_B, P) @ e == pytest.approx(m, rel=1e-14)
    assert e @ tau(-0.7 * t).T @ W == pytest.approx(e @ W, rel=1e-14)


def test_euler_321_round_trip_and_rates():
    """Check 8: Θ → P → Θ; Γ(Θ) against the rates of P by central differences (ω_b from Pᵀ Ṗ); Γ Γ⁻¹ = 1."""
    b = Float64()
    euler = RNG.uniform([-3, -1.4, -3], [3, 1.4, 3], size=(20, 3))
    np.testing.assert_allclose(angles(dcm(euler, b)), euler, rtol=0, atol=1e-14)
    rates, h = RNG.normal(size=(20, 3)), 1e-6
    Pdot = (dcm(euler + h * rates, b) - dcm(euler - h * rates, b)) / (2 * h)
    W = np.swapaxes(dcm(euler, b), 1, 2) @ Pdot  # (*ω_b)
    omega = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], axis=1)
    np.testing.assert_allclose((rate_matrix(euler, b) @ omega[:, :, None])[:, :, 0], rates, rtol=0, atol=1e-8)
    np.testing.assert_allclose(
        rate_matrix(euler, b) @ inverse_rate_matrix(euler, b), np.broadcast_to(np.eye(3), (20, 3, 3)), atol=1e-13
    )


def test_joint_rotation_is_the_exponential_of_the_axis():
    """Check 9: exp(θ (*r~)) by Rodrigues' formula is orthogonal with det +1, leaves r~ fixed, and is scipy's expm."""
    r = RNG.normal(size=3)
    r /= np.linalg.norm(r)
    theta = RNG.uniform(-3, 3, size=7)
    R = rodrigues(r, np.cos(theta), np.sin(theta))
    for Rk, t in zip(R, theta, strict=True):
        np.testing.assert_allclose(Rk, expm(t * skew(r)), atol=1e-14)
        np.testing.assert_allclose(Rk @ Rk.T, np.eye(3), atol=1e-15)
        assert np.linalg.det(Rk) == pytest.approx(1.0, abs=1e-14)
        np.testing.assert_allclose(Rk @ r, r, atol=1e-15)


# ---------------------------------------------------------------- against RNEA and ABA
def tree_of(name: str, reverse: str | None = None):
    """The sample with its cut joints (and the spring-dampers across them) removed: its spanning tree; with the
    joint `reverse` declared from its child to its parent (the tree then runs it backwards)."""
    model = samples.load(name)
    cut = {j.name for j in spanning_tree(model).cut}
    model.joints = [j for j in model.joints if j.name not in cut]
    model.independent_coordinates = "auto"
    model.forces = [f for f in model.forces if f.type != "spring_damper"]
    model.measures = []
    for joint in model.joints:
        if joint.name == reverse:
            joint.parent, joint.child = joint.child, joint.parent
            joint.parent_frame, joint.child_frame = joint.child_frame, joint.parent_frame
    assert reverse is None or spanning_tree(model).reversed == {reverse}
    return model


def generalized(blocks, state, inv) -> np.ndarray:
    """The efforts and base wrenches of the inverse diagram as forces on the block model's coordinates."""
    parts = []
    for k, block in enumerate(blocks.blocks):
        if block.joint.kind == "floating":
            i = blocks.floating.index(k)
            parts.append(floating_base.forces_of_wrench(block.joint, state.bases[i], inv.bases[i], blocks.backend))
        elif k in blocks.channel_of:
            parts.append(inv.efforts[:, blocks.channel_of[k], None])
    return np.concatenate(parts, axis=1)


def applied(values: np.ndarray):
    """An effort law that is these values (N,) whatever the state."""
    return lambda t, q, qd: values


def random_states(mech: Mechanism, N: int = 40):
    return (RNG.uniform(-1.5, 1.5, (N, mech.n)) for _ in range(4))


REVERSED = ["double_pendulum:elbow", "slider_crank:crank_pin", "sla_suspension:lower_ball_joint"]


@pytest.mark.parametrize("name", TREES + CLOSED + REVERSED)
def test_block_model_is_the_recursive_algorithms_at_random_states(name):
    """Inverse dynamics (every acceleration imposed) against RNEA; forward dynamics by both loop solves against
    ABA, as the residual of ABA's equations relative to their terms: ≤ 1e-12. The spanning trees of the closed
    samples bring universal, spherical and cylindrical joints (chains of blocks through massless frames, which
    only the condensed solve takes); 'sample:joint' runs that joint (revolute, universal, spherical) backwards."""
    model = tree_of(*name.split(":"))
    mech, blocks = Mechanism(model), block_model(model)
    q, qd, qdd, tau_applied = random_states(mech)
    order = [mech.coordinates.index(c) for c in blocks.coordinates]
    state = blocks.from_coordinates(q[:, order], qd[:, order])
    acc = blocks.accelerations_from_coordinates(state, qdd[:, order])
    tau = inverse_dynamics(mech, q, qd, qdd)
    inv = generalized(blocks, state, blocks.inverse_dynamics(state, acc, loads=False))
    assert np.abs(inv - tau[:, order]).max() <= 1e-12 * np.abs(tau).max()

    laws = [JointLaw(c, applied(tau_applied[:, mech.coordinates.index(c)])) for c in blocks.coordinates]
    driven = BlockModel(blocks.blocks, blocks.gravity, laws)
    from mbstudio.dynamics.mass_matrix import mass_matrix

    M, h = mass_matrix(mech, q), inverse_dynamics(mech, q, qd, np.zeros_like(q))
    scale = np.abs(M).max() * np.abs(forward_dynamics(mech, q, qd, tau_applied)).max() + np.abs(h).max()
    massless = any(b.body.mass == 0 for b in blocks.blocks)
    for solver in ["condensed"] if massless else ["condensed", "faithful"]:
        found = driven.forward_dynamics(state, solver=solver)
        qdd_found = np.empty_like(q)
        qdd_found[:, order] = driven.accelerations_to_coordinates(state, found)
        residual = (M @ qdd_found[:, :, None])[:, :, 0] + h - tau_applied
        assert np.abs(residual).max() <= 1e-12 * scale, solver


def test_the_faithful_solve_refuses_massless_frames_with_the_joint_named():
    blocks = block_model(tree_of("sla_suspension"))
    state = blocks.from_coordinates(np.zeros((1, len(blocks.coordinates))), np.zeros((1, len(blocks.coordinates))))
    with pytest.raises(ModelError, match="apparent inertia of its body alone.*condensed"):
        blocks.forward_dynamics(state, solver="faithful")
    with pytest.raises(ModelError, match="not a solver of the algebraic loop.*'newton'.*condensed or faithful"):
        blocks.forward_dynamics(state, solver="newton")


def test_a_closed_loop_needs_a_closure_frequency():
    with pytest.raises(ModelError, match="closed loops.*coupler_rocker.*closure frequency in Hz"):
        block_model(samples.load("four_bar"))


# ---------------------------------------------------------------- the balloon (Alazard et al. (2024) §4)
def table1_balloon(k: float = 0.0, d_s: float = 0.0, d_p: float = 0.0, buoyancy: bool = True, gravity=-9.81):
    """Table 1 as printed, from explicit data: balloon B (Ixx = 5) floating at its centre of mass, slider S on
    t = (1, 0, −1)/√2 at C = (0, −2, 0), point pendulums of 1.2 m and 1.6 m about z; buoyancy 16 g at B; the
    slider's spring-damper and the pendulum dampers as effort laws with their potential."""
    Z, I3 = np.zeros(3), np.eye(3)
    t = np.array([1.0, 0.0, -1.0]) / np.sqrt(2)
    euler = ("x", "y", "z", "psi", "theta", "phi")
    J_B, point_mass = [[5, 0, 0], [0, 10, -7], [0, -7, 10]], np.zeros((3, 3))
    z, tip = [0, 0, 1], [0, -1.2, 0]
    blocks = [
        Block(Body("B", 10.0, Z, J_B, Z), Joint("balloon", "floating", GROUND, Z, I3, None, euler)),
        Block(Body("S", 1.0, Z, point_mass, Z), Joint("slider", "prismatic", 0, [0, -2, 0], I3, t, ("p",))),
        Block(Body("P1", 2.0, tip, point_mass, Z), Joint("pendulum1", "revolute", 1, Z, I3, z, ("theta1",))),
        Block(Body("P2", 3.0, [0, -1.6, 0], point_mass, Z), Joint("pendulum2", "revolute", 2, tip, I3, z, ("theta2",))),
    ]
    loads = [
        JointLaw("p", lambda t, q, qd: -k * q - d_s * qd, lambda q: k * q * q / 2),
        JointLaw("theta1", lambda t, q, qd: -d_p * qd),
        JointLaw("theta2", lambda t, q, qd: -d_p * qd),
    ]
    if buoyancy:
        loads.append(PointLoad(0, Z, lambda t, N: np.tile([0.0, 16 * 9.81, 0.0], (N, 1))))
    return BlockModel(blocks, [0.0, gravity, 0.0], loads, name="Table 1 balloon")


THETA0 = np.radians([170.0, -170.0])
BALLOON_Q0 = np.array([[0, 0, 0, 0, 0, 0, 0, *THETA0]])


def test_table1_balloon_initial_accelerations_are_the_digest_s_to_every_printed_digit():
    """Check 18 (Alazard et al. 2024, section 4, as a TITOP and a Lagrange reproduction give it): vdot_B, ωdot_B, p̈,
    θ̈1, θ̈2 at rest, by both loop solves; independent of k and d."""
    for k, d_s, d_p in ((0, 0, 0), (50, 5, 0.5)):
        blocks = table1_balloon(k, d_s, d_p)
        state = blocks.from_coordinates(BALLOON_Q0, 0 * BALLOON_Q0)
        for solver in ("condensed", "faithful"):
            acc = blocks.forward_dynamics(state, solver=solver)
            np.testing.assert_allclose(
                acc.bases[0][0], [-0.314588, 0.466693, -0.314588, 0.700316, -0.745882, -1.151293], rtol=0, atol=5.01e-7
            )
            np.testing.assert_allclose(acc.qdd[0], [-2.800975, -6.015575, 4.746979], rtol=0, atol=5.01e-7)


def test_balloon_sample_centre_of_mass_and_energy_by_the_block_route():
    """Check 19 at t = 0 on the sample: centre of mass (0.065118, −0.680697, 0) m and E(0) = −106.842216 J
    (values derived independently), from the blocks' own positions and the buoyancy's potential; the same for
    Table 1's data."""
    mech = Mechanism(samples.load("balloon"))
    for blocks in (block_model(mech), table1_balloon()):
        q0 = mech.assemble(None) if blocks.name != "Table 1 balloon" else BALLOON_Q0
        state = blocks.from_coordinates(q0, 0 * q0)
        kin = blocks.kinematics(state)
        np.testing.assert_allclose(invariants.centre_of_mass(blocks, kin)[0], [0.065118, -0.680697, 0], atol=5.01e-7)
        energy = invariants.kinetic_energy(blocks, kin) + invariants.potential_energy(blocks, state, kin)
        assert energy[0] == pytest.approx(-106.842216, abs=5.01e-7)


def test_efforts_come_back_from_the_inverse_diagram():
    """Checks 6 and 21 at random states of the damped Table 1 balloon: the forward diagram's accelerations fed to
    the inverse diagram give back the joint laws' efforts, −k p − d_s ṗ and −d θ̇, and a zero base wrench; and
    −eᵀ W_{A/B,P} of each joint reaction is its effort (eq. 46, 76)."""
    blocks = table1_balloon(50.0, 5.0, 0.5)
    q, qd = RNG.uniform(-1, 1, (30, 9)), RNG.uniform(-1, 1, (30, 9))
    state = blocks.from_coordinates(q, qd)
    inv = blocks.inverse_dynamics(state, blocks.forward_dynamics(state, solver="faithful"))
    expected = np.stack([-50 * q[:, 6] - 5 * qd[:, 6], -0.5 * qd[:, 7], -0.5 * qd[:, 8]], axis=1)
    np.testing.assert_allclose(inv.efforts, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    assert np.abs(inv.bases[0]).max() < 1e-11
    for c, k in enumerate(blocks.channels):
        e = blocks.blocks[k].joint.e
        np.testing.assert_allclose(-(inv.reactions[k] @ e), inv.efforts[:, c], atol=1e-12)


def test_option_b_mass_matrix_is_symmetric_positive_definite_and_its_rate_minus_2c_is_skew():
    """Check 22: M(q) from unit accelerations in the inverse diagram (option B) is symmetric positive
    definite on the balloon; on the PUMA (Lagrange coordinates) it is our CRBA's, and Ṁ − 2C is skew-symmetric
    with C from the Christoffel symbols of the block M (central differences)."""
    blocks = table1_balloon()
    state = blocks.from_coordinates(RNG.uniform(-1, 1, (5, 9)), RNG.uniform(-1, 1, (5, 9)))
    M, _ = blocks.mass_matrix(state)
    np.testing.assert_allclose(M, np.swapaxes(M, 1, 2), atol=1e-13 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > 0

    model = samples.load("puma560")
    mech, arm = Mechanism(model), block_model(model)
    q, qd = RNG.uniform(-1.5, 1.5, (1, 6)), RNG.uniform(-1, 1, (1, 6))

    def block_M(x):
        return arm.mass_matrix(arm.from_coordinates(x, 0 * x))[0][0]

    from mbstudio.dynamics.mass_matrix import mass_matrix

    np.testing.assert_allclose(block_M(q), mass_matrix(mech, q)[0], atol=1e-13 * np.abs(block_M(q)).max())
    h = 1e-6
    dM = np.stack([(block_M(q + h * e) - block_M(q - h * e)) / (2 * h) for e in np.eye(6)[:, None, :]])  # dM/dq_k
    # c_ijk = (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) / 2, with dM[k, i, j] = ∂M_ij/∂q_k
    christoffel = (dM.transpose(1, 2, 0) + dM.transpose(1, 0, 2) - dM) / 2
    C = np.einsum("ijk,k->ij", christoffel, qd[0])
    N = np.einsum("kij,k->ij", dM, qd[0]) - 2 * C
    assert np.abs(N + N.T).max() < 1e-7 * np.abs(N).max()
    assert np.abs(N).max() > 1e-3  # not trivially zero


# ---------------------------------------------------------------- number systems and messages
def test_traced_right_hand_side_is_the_numpy_one():
    """The state derivative traced on CasADi symbols (the compiled simulation's) against numpy at random states."""
    from mbstudio.model import dumps
    from mbstudio.simulation.block_runs import Layout, _traced_document, _traced_function, state_derivative

    model = samples.load("balloon")
    blocks, function = block_model(model), _traced_function(_traced_document(dumps(model), None), "condensed")
    for y in RNG.uniform(-1, 1, (3, Layout(blocks).size)):
        expected = state_derivative(blocks, 0.2, y[None], "condensed")[0]
        np.testing.assert_allclose(
            np.asarray(function(0.2, y)).ravel(), expected, rtol=0, atol=1e-13 * np.abs(expected).max()
        )


def test_variable_precision_agrees_with_float64():
    """The same blocks in MPFR at 30 digits (object arrays): the Table 1 accelerations agree with float64 to
    rounding, and carry more digits."""
    model = samples.load("balloon")
    mech = Mechanism(model, precision=30)
    vp = block_model(mech)
    q0 = mech.assemble(None)
    state = vp.from_coordinates(q0, 0 * q0)
    acc = vp.forward_dynamics(state)
    assert acc.qdd.dtype == object
    dp = block_model(model)
    dp_acc = dp.forward_dynamics(dp.from_coordinates(q0.astype(float), 0 * q0.astype(float)))
    np.testing.assert_allclose(acc.qdd.astype(float), dp_acc.qdd, rtol=0, atol=1e-14)


def test_gimbal_lock_is_reported_with_the_joint_and_coordinate():
    from mbstudio.simulation.block_runs import simulate_blocks

    model = samples.load("balloon")
    for joint in model.joints:
        for c in joint.coordinates:
            if c.name == "thetaB":
                c.initial = np.pi / 2
    with pytest.raises(ModelError, match=r"joint 'balloon'.*thetaB = 90° at the start.*gimbal lock"):
        simulate_blocks(model, 1.0)


def test_a_model_built_in_python_is_checked():
    body = Body("A", 1.0, np.zeros(3), np.eye(3), np.zeros(3))
    with pytest.raises(ModelError, match="joint 'j'.*parent block does not come before it"):
        BlockModel([Block(body, Joint("j", "revolute", 0, np.zeros(3), np.eye(3), [0, 0, 1], ("q",)))], [0, 0, -9.81])
    with pytest.raises(ModelError, match=r"joint 'j': a revolute block has 1 coordinate\(s\) \(got \[\]\)"):
        Joint("j", "revolute", GROUND, np.zeros(3), np.eye(3), [0, 0, 1])
    with pytest.raises(ModelError, match=r"joint 'j': its axis has no direction \(got \[0.0, 0.0, 0.0\]\)"):
        Joint("j", "prismatic", GROUND, np.zeros(3), np.eye(3), [0, 0, 0], ("x",))
    with pytest.raises(ModelError, match="joint 'j': is of no block kind.*'ball'"):
        Joint("j", "ball", GROUND, np.zeros(3), np.eye(3))
    twice = [
        Block(body, Joint(f"j{k}", "revolute", k - 1, np.zeros(3), np.eye(3), [0, 0, 2], ("q",))) for k in range(2)
    ]
    with pytest.raises(ModelError, match=r"coordinates: name a coordinate of two blocks \(got \['q'\]\)"):
        BlockModel(twice, [0, 0, 0])
    assert np.allclose(twice[0].joint.axis, [0, 0, 1])  # a script's axis is a direction
    with pytest.raises(ModelError, match="not a coordinate of the block model.*'nope'.*expected q"):
        blocks = BlockModel(
            [Block(body, Joint("j", "revolute", GROUND, np.zeros(3), np.eye(3), [0, 0, 1], ("q",)))], [0, 0, 0]
        )
        blocks.coordinate_values(blocks.from_coordinates([[0.0]], [[0.0]]), "nope")
