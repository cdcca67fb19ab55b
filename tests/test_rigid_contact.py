"""The rigid contact model (dynamics/rigid_contact.py) against Pinocchio's constraintDynamics, built from the
same URDF by Pinocchio's own reader with four CONTACT_3D constraints at the feet (an independent route: its
mass matrix, bias, Jacobians and KKT solution are its own), while solo12's feet stick; and against Coulomb's law
where a block slides (the friction on the cone's edge, opposite the slip)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.rigid_contact import rigid_contact_dynamics
from mbstudio.io.example_robots import robot_path, robots_folder
from mbstudio.kinematics import Mechanism
from mbstudio.model.document import Contact
from mbstudio.numerics import rodrigues

from .test_contact import block, incline

pin = pytest.importorskip("pinocchio")
needs_robots = pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
FEET = ("FL", "FR", "HL", "HR")


def pinocchio_solo12(mech: Mechanism, q: np.ndarray, points: np.ndarray):
    """Pinocchio's solo12 on its free flyer at our pose q, with a CONTACT_3D constraint (no Baumgarte gains) at
    each foot's contact point (world (4, 3)); its q, the map from its joint names to ours, and the constraints."""
    from mbstudio.io.pinocchio_reference import _init_constraint_dynamics, _set_baumgarte_gains

    model = pin.buildModelFromUrdf(str(robot_path("solo12")), pin.JointModelFreeFlyer())
    data = model.createData()
    legs = [model.names[j] for j in range(2, model.njoints)]
    q_pin = np.concatenate([q[:3], pin.Quaternion(rodrigues.rotation(q[3:6])).coeffs(), _ours(mech, q, legs)])
    pin.framesForwardKinematics(model, data, q_pin)
    contacts = []
    for foot, point in zip(FEET, points, strict=True):
        frame = model.frames[model.getFrameId(f"{foot}_FOOT")]
        local = data.oMf[model.getFrameId(f"{foot}_FOOT")].actInv(point)
        placement = frame.placement * pin.SE3(np.eye(3), local)
        contact = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, frame.parentJoint, placement,
                                           pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)  # fmt: skip
        _set_baumgarte_gains(contact, 0.0, 0.0)
        contacts.append(contact)
    contacts = pin.StdVec_RigidConstraintModel(contacts)
    datas = pin.StdVec_RigidConstraintData([c.createData() for c in contacts])
    _init_constraint_dynamics(model, data, contacts, datas)
    return model, data, q_pin, legs, contacts, datas


def _ours(mech: Mechanism, values: np.ndarray, names: list[str]) -> np.ndarray:
    return np.array([values[mech.coordinates.index(n)] for n in names])


@needs_robots
@pytest.mark.parametrize("moving", [False, True])
def test_solo12_with_sticking_feet_matches_pinocchios_constraint_dynamics(moving):
    """At the standing pose, at rest or moving with its feet still, under the PD torques: every foot
    sticks (its force inside the cone μ = 1), the twelve joint accelerations equal Pinocchio's to 1e-9
    (relative to their scale) and the contact forces, in world axes, to 1e-9 of the weight; their sum is the
    mass times the centre of mass's acceleration less gravity (Newton, Pinocchio's centre of mass). Moving: body and
    legs move together with the feet still (a velocity in the null space of the feet's Jacobian), given to
    Pinocchio as its free flyer's velocity in base axes."""
    from mbstudio.io.legged import solo12

    mech = Mechanism(solo12("stand"))
    q = np.asarray(mech.tree.initial_coordinates(), float)
    st = mech.motion(q[None])
    laws = {law.element.name: law for law in AppliedForces(mech, mech.model.forces).laws}
    names = [f"{foot}_FOOT_contact" for foot in FEET]
    points = np.array([np.asarray(laws[name].place(st)[1], float)[0] for name in names])
    J = np.concatenate([np.asarray(laws[name].place(st)[2], float)[0] for name in names])
    qd = np.zeros(mech.n)
    if moving:  # a motion that keeps the feet still: body and legs together, in the null space of the feet's J
        null = np.linalg.svd(J)[2][J.shape[0] :]
        qd = null.T @ np.random.default_rng(3).uniform(-0.5, 0.5, len(null))
    ours = rigid_contact_dynamics(mech, 0.0, q, qd)
    assert sorted(ours.names) == sorted(names)
    order = [ours.names.index(name) for name in names]
    model, data, q_pin, legs, contacts, datas = pinocchio_solo12(mech, q, points)
    others = [f for f in mech.model.forces if not isinstance(f, Contact)]
    tau = np.asarray(AppliedForces(mech, others).generalized(0.0, q[None], qd[None]), float)[0]
    rotation = rodrigues.rotation(q[3:6])  # Pinocchio's free flyer: the origin's velocity and ω in base axes
    omega = rodrigues.jacobian(q[3:6]) @ qd[3:6]
    v_pin = np.concatenate([rotation.T @ qd[:3], rotation.T @ omega, _ours(mech, qd, legs)])
    tau_pin = np.concatenate([np.zeros(6), _ours(mech, tau, legs)])
    settings = pin.ProximalSettings(1e-14, 0.0, 1)
    a_pin = pin.constraintDynamics(model, data, q_pin, v_pin, tau_pin, contacts, datas, settings)
    joints = _ours(mech, ours.qdd, legs)
    scale = np.abs(a_pin[6:]).max()
    assert joints == pytest.approx(a_pin[6:], abs=1e-9 * scale)
    weight = pin.computeTotalMass(model) * 9.81
    forces = np.array([d.contact_force.linear for d in datas])
    assert ours.forces[order] == pytest.approx(forces, abs=1e-9 * weight)
    pin.centerOfMass(model, data, q_pin, v_pin, a_pin)  # Newton for the whole robot: Σ f = m (a_G − g)
    total = pin.computeTotalMass(model) * (data.acom[0] - model.gravity.linear)
    assert ours.forces.sum(axis=0) == pytest.approx(total, abs=1e-9 * weight)
    normal = ours.forces[:, 2]
    assert np.all(np.linalg.norm(ours.forces[:, :2], axis=1) < 0.9 * normal)  # sticking, inside μ = 1
    assert np.abs(ours.point_accelerations).max() < 1e-9 * scale


def test_a_block_on_a_steep_incline_slides_with_friction_on_the_cones_edge():
    """tan θ > μ, the rigid block resting on its four corners (pressed in: δ > 0, so all four touch; four
    coplanar contacts on a body are redundant, G singular): it slides at g (sin θ − μ cos θ) down the slope
    (to 1e-9), each corner's friction is μ times its normal force, against the slip."""
    angle, mu = math.radians(30), 0.3
    mech = Mechanism(block(mu, incline(angle)))
    q = np.asarray(mech.tree.initial_coordinates(), float)
    result = rigid_contact_dynamics(mech, 0.0, q, np.zeros(mech.n))
    g = 9.81
    assert result.qdd[0] == pytest.approx(g * (math.sin(angle) - mu * math.cos(angle)), rel=1e-9)
    assert np.abs(result.qdd[1:]).max() < 1e-9 * g
    normal, tangent = result.forces[:, 2], result.forces[:, :2]
    assert np.linalg.norm(tangent, axis=1) == pytest.approx(mu * normal, rel=1e-9)
    assert np.all(tangent[:, 0] < 0)
