"""Export a tree model to Pinocchio (`pin`, optional), used as the independent reference in tests and benchmarks.

Each of our tree joints becomes a Pinocchio composite joint of the same primitive motions (RZ, RX, PZ, ...),
placed at our parent joint frame; each body becomes a Pinocchio frame at the inverse of our child joint
frame, carrying the body's inertia moved to its centre of mass."""

from __future__ import annotations

import numpy as np
import pinocchio as pin  # optional dependency: only this module needs it

from mbstudio.kinematics import Mechanism
from mbstudio.model.document import INERTIA_NAMES, JOINT_MOTIONS
from mbstudio.model.validation import inertia_about_centre

PRIMITIVES = {  # our axis motions as Pinocchio's one-axis joints
    "Rx": pin.JointModelRX,
    "Ry": pin.JointModelRY,
    "Rz": pin.JointModelRZ,
    "Tx": pin.JointModelPX,
    "Ty": pin.JointModelPY,
    "Tz": pin.JointModelPZ,
}


def primitive_joint(motion: str, joint: str):
    """Pinocchio's one-axis joint for one of our axis motions; a ValueError for a ball or free joint's rotation
    parameters, which Pinocchio's spherical and free-flyer joints hold as a quaternion (other coordinates)."""
    if motion not in PRIMITIVES:
        raise ValueError(
            f"joint '{joint}' turns by rotation parameters: Pinocchio has no joint with the same coordinates (its "
            "spherical and free-flyer joints hold a quaternion); tests/test_floating_base.py converts the states"
        )
    return PRIMITIVES[motion]()


def _se3(frame) -> pin.SE3:
    return pin.SE3(np.asarray(frame.rotation, dtype=float), np.asarray(frame.origin, dtype=float))


def inertia(mech: Mechanism, label: str) -> pin.Inertia:
    """Our ten parameters about the body origin -> Pinocchio's (mass, centre of mass, inertia at the CoM)."""
    v = dict(zip(INERTIA_NAMES, mech.tree.geometry.inertia(mech.model.body(label)).astype(float), strict=True))
    return pin.Inertia(*inertia_about_centre(v))


def build(mech: Mechanism) -> tuple[pin.Model, dict[str, int]]:
    """Pinocchio model with the same coordinates in the same order; returns it and body label -> frame id."""
    assert not mech.topology.cut and not mech.topology.reversed, "trees with joints in document direction only"
    model = pin.Model()
    g = mech.tree.geometry
    model.gravity = pin.Motion(np.r_[np.asarray(g.gravity(), dtype=float), 0, 0, 0])
    joint_of = {"0": 0}
    after_of = {"0": pin.SE3.Identity()}  # body frame expressed in its joint's frame
    frames = {}
    for link in mech.tree.links:
        parent = mech.tree.body_labels[link.parent]
        child = mech.tree.body_labels[link.child]
        composite = pin.JointModelComposite()
        for motion in JOINT_MOTIONS[link.joint.type]:
            composite.addJoint(primitive_joint(motion, link.joint.name))
        placement = after_of[parent] * _se3(link.before)
        jid = model.addJoint(joint_of[parent], composite, placement, link.joint.name)
        body_in_joint = _se3(link.after).inverse()
        model.appendBodyToJoint(jid, inertia(mech, child), body_in_joint)
        frames[child] = model.addFrame(pin.Frame(f"body_{child}", jid, body_in_joint, pin.FrameType.OP_FRAME))
        joint_of[child], after_of[child] = jid, body_in_joint
    return model, frames
