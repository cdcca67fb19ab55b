"""Closed-loop equations of motion (projection with R) against independent routes: the Lagrange-multiplier
(KKT) system of the tree with its constraint Jacobian, power balance, forward-then-inverse round trips,
50-digit arithmetic, and our notes on Müller (2021)'s Delta torques along the paper's test trajectory."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics import bias_forces, forward_dynamics, inverse_dynamics, mass_matrix
from mbstudio.dynamics.closed_loop import (
    actuator_forces_on_tree,
    closed_loop_forward_dynamics,
    closed_loop_inverse_dynamics,
    joint_reactions,
    reduced_mass_matrix,
)
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError

CLOSED = ["four_bar", "slider_crank", "sla_suspension", "delta_3rr2rrr"]


@functools.cache
def mechanism(name: str, precision=None) -> Mechanism:
    return Mechanism(samples.load(name), precision=precision)


def moving_state(mech: Mechanism, seed: int = 1):
    """An assembled state near the document's configuration with random independent velocities."""
    rng = np.random.default_rng(seed)
    ind = list(mech.partition.independent)
    q0 = mech.assemble(None)
    q = mech.assemble(q0[:, ind] + 0.1 * rng.uniform(-1, 1, (1, len(ind))), guess=q0)
    return q, mech.velocities(q, rng.uniform(-1, 1, (1, len(ind))))


def kkt(mech: Mechanism, q, qd, Q):
    """q̈ and λ from [[M, Jᵀ], [J, 0]] [q̈; λ'] = [Q − h; −Φ̈(q̈ = 0)] over the non-redundant rows (λ = −λ')."""
    rows = list(mech.partition.rows)
    J = mech.constraint_jacobian(q)[0][rows]
    gamma = -mech.constraints.acceleration_bias(mech.motion(q, qd))[0][rows]
    K = np.block([[mass_matrix(mech, q)[0], J.T], [J, np.zeros((len(rows), len(rows)))]])
    x = np.linalg.solve(K, np.concatenate([Q - bias_forces(mech, q, qd)[0], gamma]))
    return x[: mech.n], -x[mech.n :]


@pytest.mark.parametrize("name", CLOSED)
def test_forward_dynamics_and_reactions_match_the_multiplier_route(name):
    mech = mechanism(name)
    q, qd = moving_state(mech)
    Q = np.random.default_rng(2).uniform(-1, 1, mech.n)
    qdd_ind = closed_loop_forward_dynamics(mech, q, qd, Q[None])
    qdd = mech.accelerations(q, qd, qdd_ind)
    qdd_kkt, lam = kkt(mech, q, qd, Q)
    np.testing.assert_allclose(qdd[0], qdd_kkt, rtol=0, atol=1e-10 * max(1, np.abs(qdd_kkt).max()))
    reactions = joint_reactions(mech, q, qd, qdd, Q[None])
    np.testing.assert_allclose(
        reactions.values[0][list(mech.partition.rows)], lam, rtol=0, atol=1e-9 * max(1, np.abs(lam).max())
    )
    # the multipliers carry every tree force the applied ones do not: Φ_qᵀ λ = M q̈ + h − Q
    residual = mech.constraint_jacobian(q)[0].T @ reactions.values[0] - (inverse_dynamics(mech, q, qd, qdd)[0] - Q)
    assert np.abs(residual).max() < 1e-9
    labels, values = reactions.of_joint(mech.topology.cut[0].name)
    assert len(labels) == values.shape[1] > 0


@pytest.mark.parametrize("name", CLOSED)
def test_inverse_dynamics_returns_the_forces_forward_dynamics_was_given(name):
    mech = mechanism(name)
    q, qd = moving_state(mech, seed=4)
    tau = np.random.default_rng(5).uniform(-2, 2, (1, len(mech.independent)))
    qdd_ind = closed_loop_forward_dynamics(mech, q, qd, actuator_forces_on_tree(mech, tau, mech.independent))
    np.testing.assert_allclose(
        closed_loop_inverse_dynamics(mech, q, qd, qdd_ind, actuated=mech.independent), tau, rtol=0, atol=1e-10
    )


def test_four_bar_driven_at_the_rocker():
    """Actuated ≠ independent: the rocker torque that produces a crank motion. Checked by feeding it back
    through forward dynamics and by the power balance τ θ̇3 = q̇ᵀ (M q̈ + h)."""
    mech = mechanism("four_bar")
    q, qd = moving_state(mech, seed=6)
    qdd_ind = np.array([[0.7]])
    tau = closed_loop_inverse_dynamics(mech, q, qd, qdd_ind, actuated=["theta3"])
    Q = actuator_forces_on_tree(mech, tau, ["theta3"])
    np.testing.assert_allclose(closed_loop_forward_dynamics(mech, q, qd, Q), qdd_ind, rtol=0, atol=1e-10)
    qdd = mech.accelerations(q, qd, qdd_ind)
    power = qd[0] @ inverse_dynamics(mech, q, qd, qdd)[0]
    assert tau[0, 0] * qd[0, mech.coordinates.index("theta3")] == pytest.approx(power, rel=1e-10, abs=1e-12)
    with pytest.raises(ModelError, match="actuated"):
        closed_loop_inverse_dynamics(mech, q, qd, qdd_ind, actuated=["no_such_coordinate"])


def test_a_tree_needs_no_projection():
    mech = mechanism("puma560")
    rng = np.random.default_rng(7)
    q, qd, tau = (rng.uniform(-1, 1, (3, mech.n)) for _ in range(3))
    np.testing.assert_allclose(
        closed_loop_forward_dynamics(mech, q, qd, tau), forward_dynamics(mech, q, qd, tau), rtol=1e-11, atol=1e-10
    )
    np.testing.assert_allclose(reduced_mass_matrix(mech, q), mass_matrix(mech, q), rtol=0, atol=1e-12)


def test_variable_precision_agrees_with_float64():
    dp, vp = mechanism("four_bar"), mechanism("four_bar", 40)
    q, qd = moving_state(dp)
    q_vp = vp.assemble(vp.as_batch(q[:, list(dp.partition.independent)]), guess=vp.as_batch(q))
    qd_vp = vp.velocities(q_vp, vp.as_batch(qd[:, list(dp.partition.independent)]))
    qdd_dp = closed_loop_forward_dynamics(dp, q, qd)
    qdd_vp = closed_loop_forward_dynamics(vp, q_vp, qd_vp)
    assert qdd_vp.dtype == object
    np.testing.assert_allclose(qdd_vp.astype(float), qdd_dp, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- Müller (2021): the Delta robot
# Digest section 7.3: t [s], u1..u3 [N m], ϑ1 of limbs 1..3 [rad] along r(t) = (0, 0, −h) + (0.3, 0.4, 0.1) sin(2πt/10).
DELTA_REFERENCE = np.array(
    [
        [0.00, -3.35250, -3.35272, -3.34960, 0.00000, 0.00000, 0.00000],
        [0.50, -2.13853, -2.50645, -4.98649, 0.06031, 0.01432, -0.29598],
        [1.00, -1.02497, -1.72602, -6.43709, 0.21034, 0.12302, -0.47405],
        [1.50, -0.12660, -1.13649, -7.64902, 0.39312, 0.27642, -0.54635],
        [2.00, 0.45652, -0.79167, -8.44492, 0.53938, 0.40698, -0.56124],
        [2.50, 0.65864, -0.68133, -8.71827, 0.59505, 0.45801, -0.56100],
        [3.00, 0.45652, -0.79167, -8.44492, 0.53938, 0.40698, -0.56124],
        [4.00, -1.02497, -1.72602, -6.43709, 0.21034, 0.12302, -0.47405],
        [5.00, -3.35250, -3.35272, -3.34960, 0.00000, 0.00000, 0.00000],
        [5.50, -4.54554, -4.14740, -1.40842, 0.04513, 0.08848, 0.37050],
        [6.00, -5.57096, -4.81661, 0.83300, 0.17059, 0.25231, 0.75353],
        [6.50, -6.32056, -5.32750, 3.07345, 0.33232, 0.44791, 1.09934],
        [7.00, -6.80017, -5.68923, 4.77075, 0.47543, 0.61874, 1.35996],
        [7.50, -6.99685, -5.84856, 5.39179, 0.53509, 0.69059, 1.46378],
        [8.00, -6.80017, -5.68923, 4.77075, 0.47543, 0.61874, 1.35996],
        [9.00, -5.57096, -4.81661, 0.83300, 0.17059, 0.25231, 0.75353],
        [10.00, -3.35250, -3.35272, -3.34960, 0.00000, 0.00000, 0.00000],
    ]
)


def delta_trajectory(t: np.ndarray):
    """Platform position, velocity and acceleration (N, 3) of the paper's test trajectory."""
    h, w, amplitude = np.sqrt(1 - 0.33**2), 2 * np.pi / 10, np.array([0.3, 0.4, 0.1])
    s, c = np.sin(w * t)[:, None], np.cos(w * t)[:, None]
    return np.array([0, 0, -h]) + amplitude * s, amplitude * w * c, -amplitude * w * w * s


def platform_jacobian(mech: Mechanism, q):
    """Platform origin (N, 3), its Jacobian with respect to the independent coordinates (N, 3, 3), and R."""
    R = mech.r_matrix(q)
    return mech.poses(q)["p"][1], mech.body_jacobian(q, "p")[:, 3:] @ R, R


def delta_inverse_kinematics(mech: Mechanism, target: np.ndarray, substeps: int = 8) -> np.ndarray:
    """Coordinates (N, n) putting the platform origin at the targets (N, 3): Newton on the actuated angles
    (each step re-assembled), walking from the reference configuration in straight-line substeps."""
    ind = list(mech.partition.independent)
    q = np.repeat(mech.assemble(None), len(target), axis=0)
    start = mech.poses(q)["p"][1]
    for s in np.linspace(0, 1, substeps + 1)[1:]:
        goal = start + s * (target - start)
        for _ in range(20):
            p, J, R = platform_jacobian(mech, q)
            if np.abs(p - goal).max() < 1e-14:
                break
            step = -np.linalg.solve(J, (p - goal)[:, :, None])[:, :, 0]
            q = mech.assemble(q[:, ind] + step, guess=q + (R @ step[:, :, None])[:, :, 0])
    return q


def test_delta_reproduces_the_digest_torques_along_the_test_trajectory():
    mech = mechanism("delta_3rr2rrr")
    t = DELTA_REFERENCE[:, 0]
    r, rd, rdd = delta_trajectory(t)
    q = delta_inverse_kinematics(mech, r)
    p, J, _ = platform_jacobian(mech, q)
    assert np.abs(p - r).max() < 1e-13
    assert np.abs(mech.residual(q)).max() < 1e-12
    # chain rule: ṙ = J q̇_ind, r̈ = J q̈_ind + (platform acceleration at q̈_ind = 0)
    qd = mech.velocities(q, np.linalg.solve(J, rd[:, :, None])[:, :, 0])
    drift = mech.motion(q, qd, mech.acceleration_term(q, qd)).a[mech.tree.body_index("p")]
    qdd_ind = np.linalg.solve(J, (rdd - drift)[:, :, None])[:, :, 0]
    u = closed_loop_inverse_dynamics(mech, q, qd, qdd_ind, actuated=["th1a", "th1b", "th1c"])
    np.testing.assert_allclose(u, DELTA_REFERENCE[:, 1:4], rtol=0, atol=5.01e-6)
    np.testing.assert_allclose(q[:, list(mech.partition.independent)], DELTA_REFERENCE[:, 4:], rtol=0, atol=5.01e-6)
