"""Tree dynamics (inverse dynamics, mass matrix, bias forces, forward dynamics) against independent routes:
Pinocchio, the inertial-parameter regressor, each other (ABA = M⁻¹(τ − h), RNEA = M q̈ + h), mirrored joints,
50-digit arithmetic and sympy."""

from __future__ import annotations

import functools

import numpy as np
import pinocchio as pin
import pytest
import sympy

from mbstudio import samples
from mbstudio.dynamics import (
    bias_forces,
    coriolis_forces,
    forward_dynamics,
    forward_dynamics_dense,
    gravity_forces,
    inverse_dynamics,
    mass_matrix,
)
from mbstudio.dynamics.regressor import tree_regressor
from mbstudio.io.pinocchio import build
from mbstudio.kinematics import Mechanism
from mbstudio.model.fileformat import from_dict, to_dict

TREES = ["puma560", "gripper"]
CLOSED = ["four_bar", "sla_suspension"]


@functools.cache
def mechanism(name: str, precision=None) -> Mechanism:
    return Mechanism(samples.load(name), precision=precision)


def random_states(mech: Mechanism, count: int = 20, seed: int = 3):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-np.pi, np.pi, (count, mech.n)) for _ in range(3))


def per_state(function, *arrays) -> np.ndarray:
    return np.array([function(*row) for row in zip(*arrays, strict=True)])


@pytest.mark.parametrize("name", TREES)
def test_tree_dynamics_match_pinocchio(name):
    mech = mechanism(name)
    model, _ = build(mech)
    data = model.createData()
    q, qd, qdd = random_states(mech)
    tau = inverse_dynamics(mech, q, qd, qdd)
    np.testing.assert_allclose(tau, per_state(lambda *x: pin.rnea(model, data, *x), q, qd, qdd), rtol=0, atol=1e-10)
    crba = per_state(lambda x: np.triu(pin.crba(model, data, x)), q)
    crba = crba + np.swapaxes(np.triu(crba, 1), 1, 2)
    np.testing.assert_allclose(mass_matrix(mech, q), crba, rtol=0, atol=1e-10)
    nle = per_state(lambda *x: pin.nonLinearEffects(model, data, *x), q, qd)
    gravity = per_state(lambda x: pin.computeGeneralizedGravity(model, data, x), q)
    np.testing.assert_allclose(bias_forces(mech, q, qd), nle, rtol=0, atol=1e-10)
    np.testing.assert_allclose(gravity_forces(mech, q), gravity, rtol=0, atol=1e-10)
    np.testing.assert_allclose(coriolis_forces(mech, q, qd), nle - gravity, rtol=0, atol=1e-10)
    # τ from accelerations of order one: with arbitrary τ the PUMA's light wrist accelerates at 1e4-1e5 rad/s²
    # and an absolute 1e-10 would ask for more than double precision
    np.testing.assert_allclose(
        forward_dynamics(mech, q, qd, tau),
        per_state(lambda *x: pin.aba(model, data, *x), q, qd, tau),
        rtol=0,
        atol=1e-10,
    )


@pytest.mark.parametrize("name", TREES + CLOSED + ["double_pendulum", "balloon", "delta_3rr2rrr"])
def test_articulated_body_equals_mass_matrix_solve(name):
    mech = mechanism(name)
    q, qd, _ = random_states(mech)
    tau = np.random.default_rng(5).uniform(-1, 1, q.shape)
    dense = forward_dynamics_dense(mech, q, qd, tau)
    # relative to the accelerations and the mass matrix's condition, which reaches 1e5-1e6 at random states
    scale = np.abs(dense).max(axis=1, keepdims=True) * np.linalg.cond(mass_matrix(mech, q))[:, None]
    assert (np.abs(forward_dynamics(mech, q, qd, tau) - dense) / scale).max() < 1e-14


@pytest.mark.parametrize("name", CLOSED + ["delta_3rr2rrr", "balloon"])
def test_tree_of_a_closed_loop_satisfies_the_equations_of_motion(name):
    """The tree of a closed loop (cut joints open) is a tree: RNEA = M q̈ + h = C q̇ + g + M q̈, and the
    regressor's virtual-power route gives the same forces."""
    mech = mechanism(name)
    q, qd, qdd = random_states(mech)
    tau = inverse_dynamics(mech, q, qd, qdd)
    h = bias_forces(mech, q, qd)
    scale = 1e-12 * max(1.0, np.abs(tau).max())
    np.testing.assert_allclose(tau, np.einsum("nij,nj->ni", mass_matrix(mech, q), qdd) + h, rtol=0, atol=scale)
    np.testing.assert_allclose(h, coriolis_forces(mech, q, qd) + gravity_forces(mech, q), rtol=0, atol=scale)
    K = tree_regressor(mech, q, qd, qdd)
    phi = np.concatenate([mech.tree.geometry.inertia(body) for body in mech.model.bodies])
    np.testing.assert_allclose(tau, K @ phi, rtol=0, atol=scale)


def flipped(name: str, joints: list[str]) -> Mechanism:
    """The sample with these joints written from child to parent, so the tree traverses them reversed."""
    data = to_dict(samples.load(name))
    for joint in data["joints"]:
        if joint["name"] in joints:
            joint["parent"], joint["child"] = joint["child"], joint["parent"]
            joint["parent_frame"], joint["child_frame"] = joint["child_frame"], joint["parent_frame"]
    mech = Mechanism(from_dict(data))
    assert mech.topology.reversed == set(joints)
    return mech


def test_reversed_revolute_joints_mirror_their_coordinates():
    """Flipping a revolute joint's document direction turns its angle into minus the angle: the same motion
    then needs the same forces, with the flipped coordinates' signs changed."""
    mech, mirror = mechanism("puma560"), flipped("puma560", ["J2", "J5"])
    sign = np.array([1.0 if c not in ("theta2", "theta5") else -1.0 for c in mech.coordinates])
    q, qd, qdd = random_states(mech)
    tau = inverse_dynamics(mech, q, qd, qdd)
    np.testing.assert_allclose(inverse_dynamics(mirror, q * sign, qd * sign, qdd * sign), tau * sign, atol=1e-10)
    np.testing.assert_allclose(mass_matrix(mirror, q * sign), mass_matrix(mech, q) * np.outer(sign, sign), atol=1e-12)
    np.testing.assert_allclose(forward_dynamics(mirror, q * sign, qd * sign, tau * sign), qdd * sign, atol=1e-9)


def test_reversed_spherical_joint_satisfies_the_equations_of_motion():
    mech = flipped("sla_suspension", ["lower_ball_joint"])
    q, qd, qdd = random_states(mech)
    tau = inverse_dynamics(mech, q, qd, qdd)
    phi = np.concatenate([mech.tree.geometry.inertia(body) for body in mech.model.bodies])
    np.testing.assert_allclose(tau, tree_regressor(mech, q, qd, qdd) @ phi, rtol=0, atol=1e-11)
    np.testing.assert_allclose(
        tau, np.einsum("nij,nj->ni", mass_matrix(mech, q), qdd) + bias_forces(mech, q, qd), rtol=0, atol=1e-11
    )
    np.testing.assert_allclose(
        forward_dynamics(mech, q, qd, tau), forward_dynamics_dense(mech, q, qd, tau), rtol=1e-8, atol=1e-8
    )


def dynamics(mech: Mechanism, q, qd, qdd) -> dict[str, np.ndarray]:
    tau = inverse_dynamics(mech, q, qd, qdd)
    return {
        "tau": tau,
        "M": mass_matrix(mech, q),
        "h": bias_forces(mech, q, qd),
        "g": gravity_forces(mech, q),
        "aba": forward_dynamics(mech, q, qd, tau),
        "dense": forward_dynamics_dense(mech, q, qd, tau),
    }


def test_fifty_digits_agree_with_float64_and_with_themselves():
    fp, vp = mechanism("double_pendulum"), mechanism("double_pendulum", 50)
    q, qd, qdd = random_states(fp, count=5)
    ours, precise = dynamics(fp, q, qd, qdd), dynamics(vp, q, qd, qdd)
    for key, value in ours.items():
        np.testing.assert_allclose(precise[key].astype(float), value, rtol=0, atol=1e-12, err_msg=key)
    # each route recovers q̈ to about 50 digits: the whole computation ran in variable precision
    for key in ("aba", "dense"):
        assert max(abs(x) for x in (precise[key] - vp.as_batch(qdd)).ravel()) < 1e-45


def test_sympy_equations_substituted_equal_float64():
    fp, sym = mechanism("double_pendulum"), mechanism("double_pendulum", "sympy")
    symbols = [np.array([sympy.symbols(f"{x}1:{fp.n + 1}", real=True)], dtype=object) for x in ("q", "u", "a")]
    exprs = dynamics(sym, *symbols)
    q, qd, qdd = random_states(fp, count=1)
    values = {s: v for arr, row in zip(symbols, (q, qd, qdd), strict=True) for s, v in zip(arr[0], row[0], strict=True)}
    values.update({sympy.Symbol(p, real=True): v for p, v in fp.model.parameter_values().items()})
    values[sympy.Symbol("g", real=True)] = -fp.model.gravity[2]  # sympy names gravity's magnitude g
    ours = dynamics(fp, q, qd, qdd)
    for key, value in ours.items():
        got = np.array([float(sympy.sympify(e).subs(values)) for e in exprs[key].ravel()]).reshape(value.shape)
        np.testing.assert_allclose(got, value, rtol=0, atol=1e-12, err_msg=key)


def test_bodies_on_fixed_joints_move_with_their_carrier():
    """A tool welded to the PUMA's last link adds its inertia there; a pedestal welded to the ground adds
    nothing. Checked against the regressor's virtual-power route, which sums body by body."""
    data = to_dict(samples.load("puma560"))
    inertia = {
        "m": 2.0,
        "mx": 0.1,
        "my": 0.0,
        "mz": 0.3,
        "Ixx": 0.1,
        "Ixy": 0.0,
        "Ixz": 0.01,
        "Iyy": 0.12,
        "Iyz": 0.0,
        "Izz": 0.05,
    }
    for label, parent in (("tool", "6"), ("pedestal", "0")):
        data["bodies"].append({"label": label, "name": label, "inertia": inertia, "points": {}, "frames": {}})
        data["joints"].append(
            {
                "name": f"weld_{label}",
                "type": "fixed",
                "parent": parent,
                "child": label,
                "parent_frame": {"origin": [0.0, 0.05, 0.1]},
                "child_frame": {"origin": [0, 0, 0]},
                "coordinates": [],
            }
        )
    mech, plain = Mechanism(from_dict(data)), mechanism("puma560")
    q, qd, qdd = random_states(mech)
    tau = inverse_dynamics(mech, q, qd, qdd)
    phi = np.concatenate([mech.tree.geometry.inertia(body) for body in mech.model.bodies])
    np.testing.assert_allclose(tau, tree_regressor(mech, q, qd, qdd) @ phi, rtol=0, atol=1e-10)
    assert np.abs(tau - inverse_dynamics(plain, q, qd, qdd)).max() > 1.0
    np.testing.assert_allclose(forward_dynamics(mech, q, qd, tau), qdd, rtol=0, atol=1e-8)
