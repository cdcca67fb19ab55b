"""A Pinocchio model of a closed-loop mechanism, the reference of the simulation benchmark.

Built independently of io/pinocchio.py (the tree exporter the tests use), the way a Pinocchio user would model
the mechanism by hand: plain one-axis joints (RX … PZ, never composite wrappers) added depth first, so that
every subtree's velocities are contiguous as Pinocchio's algorithms assume; a multi-axis joint as a chain of
one-axis joints through massless bodies, so that its velocities are the derivatives of our coordinates; each
cut joint as rigid point contacts between the two bodies (a spherical joint: one 3-D contact at its centre; a
revolute joint: two, along its axis), with Baumgarte stabilisation, solved by `constraintDynamics`.

What it does not model it refuses by name rather than building another mechanism: couplings (a URDF mimic joint,
a gear pair; Pinocchio's plain reading of a URDF leaves mimic joints free, so compare such a file with the
document's couplings removed), tree joints turning by rotation parameters (ball, free: Pinocchio holds a
quaternion there; free_euler and spherical joints are chains of one-axis joints here), force elements other than
spring-dampers and actuators, and cut joints other than ball, spherical and revolute.

    ref = ClosedLoopReference.of(mech)
    y0 = ref.state(q_ours)                # (q, v) in Pinocchio's order from our assembled coordinates
    solve_ivp(ref.rhs, (0, T), y0, "DOP853", ...)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pinocchio as pin  # optional dependency: only the benchmark imports this module

from mbstudio.dynamics.forces import AppliedForces
from mbstudio.kinematics import Mechanism
from mbstudio.model.document import INERTIA_NAMES, JOINT_MOTIONS, Actuator, SpringDamper
from mbstudio.model.validation import inertia_about_centre

from .pinocchio import primitive_joint

BAUMGARTE_RATE = 20.0  # 1/s: constraint errors decay critically damped at this rate
AXIS_POINTS = 0.1  # a revolute cut's second contact point, along its axis, in length scales


@dataclass
class ClosedLoopReference:
    model: pin.Model
    data: pin.Data
    contacts: list
    contact_data: list
    settings: pin.ProximalSettings
    ours: np.ndarray  # for each Pinocchio coordinate, the index of ours
    springs: list[tuple[int, int, float, float, float]]  # (frame 1, frame 2, stiffness, free length, damping)
    actuators: list[tuple[int, Callable[[float], float]]]  # (Pinocchio velocity index, torque of time)

    @classmethod
    def of(cls, mech: Mechanism) -> ClosedLoopReference:
        if mech.topology.reversed:
            raise ValueError("the reference needs tree joints in document direction")
        _refuse_couplings(mech)
        model, last_joint, body_in_joint = _tree(mech)
        contacts = [
            c
            for joint, sides in _cut_sides(mech)
            for c in _contacts(model, joint, sides, last_joint, body_in_joint, mech)
        ]
        data = model.createData()
        contacts = pin.StdVec_RigidConstraintModel(contacts)
        contact_data = pin.StdVec_RigidConstraintData([c.createData() for c in contacts])
        _init_constraint_dynamics(model, data, contacts, contact_data)
        names = [model.names[j] for j in range(1, model.njoints) if model.nqs[j]]
        ours = np.array([mech.coordinates.index(name) for name in names])
        springs, actuators = _forces(mech, model, last_joint, body_in_joint, names)
        data = model.createData()  # again: the spring ends added frames
        _init_constraint_dynamics(model, data, contacts, contact_data)
        settings = pin.ProximalSettings(1e-12, 1e-10, 20)
        return cls(model, data, contacts, contact_data, settings, ours, springs, actuators)

    def state(self, q: np.ndarray, v: np.ndarray | None = None) -> np.ndarray:
        return np.concatenate([q[self.ours], np.zeros(len(self.ours)) if v is None else v[self.ours]])

    def accelerations(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        tau = self.forces(t, q, v)
        return pin.constraintDynamics(self.model, self.data, q, v, tau, self.contacts, self.contact_data, self.settings)

    def forces(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Joint torques of the actuators and springs: τ = Σ J_Pᵀ F at each spring end."""
        tau = np.zeros(self.model.nv)
        for index, torque in self.actuators:
            tau[index] += torque(t)
        if self.springs:
            pin.forwardKinematics(self.model, self.data, q, v)
            pin.updateFramePlacements(self.model, self.data)
            pin.computeJointJacobians(self.model, self.data, q)
        world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        for f1, f2, stiffness, length, damping in self.springs:
            d = self.data.oMf[f2].translation - self.data.oMf[f1].translation
            u = d / np.linalg.norm(d)
            rate = u @ (
                pin.getFrameVelocity(self.model, self.data, f2, world).linear
                - pin.getFrameVelocity(self.model, self.data, f1, world).linear
            )
            pull = (stiffness * (np.linalg.norm(d) - length) + damping * rate) * u  # on end 1, towards end 2
            J1, J2 = (pin.getFrameJacobian(self.model, self.data, f, world)[:3] for f in (f1, f2))
            tau += J1.T @ pull - J2.T @ pull
        return tau

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        n = self.model.nq
        return np.concatenate([y[n:], self.accelerations(t, y[:n], y[n:])])

    def coordinates(self, y: np.ndarray) -> np.ndarray:
        """Our coordinates (N, n) from reference states (N, 2 n)."""
        out = np.empty((len(y), len(self.ours)))
        out[:, self.ours] = y[:, : self.model.nq]
        return out


def _refuse_couplings(mech: Mechanism) -> None:
    """A coupled document built as a free tree would be another mechanism, and agree with nothing of ours."""
    couplings = mech.model.couplings
    if couplings:
        what = "coupling" if len(couplings) == 1 else f"{len(couplings)} couplings"
        names = ", ".join(f"{c.name!r} ({c.follower} from {c.leader or 'a constant'})" for c in couplings)
        raise ValueError(
            f"{what} {names}: the reference models no couplings; remove them from the document "
            "(model.couplings = []) to compare the free tree"
        )


def _se3(frame) -> pin.SE3:
    return pin.SE3(np.asarray(frame.rotation, dtype=float), np.asarray(frame.origin, dtype=float))


def _inertia(mech: Mechanism, label: str) -> pin.Inertia:
    """The body's inertia as the document gives it, set field by field: pin.Inertia(m, c, I) refuses an inertia
    about the centre that rounding leaves at -5e-20 (iCub's hips, zero in the file), which Pinocchio's URDF reader
    keeps."""
    values = mech.tree.geometry.inertia(mech.model.body(label)).astype(float)
    out = pin.Inertia.Zero()
    out.mass, out.lever, out.inertia = inertia_about_centre(dict(zip(INERTIA_NAMES, values, strict=True)))
    return out


def _depth_first(mech: Mechanism) -> list:
    children: dict[int, list] = {}
    for link in mech.tree.links:
        children.setdefault(link.parent, []).append(link)
    order, stack = [], list(reversed(children.get(0, [])))
    while stack:
        link = stack.pop()
        order.append(link)
        stack.extend(reversed(children.get(link.child, [])))
    return order


def _tree(mech: Mechanism) -> tuple[pin.Model, dict[int, int], dict[int, pin.SE3]]:
    """The tree; per body index, the Pinocchio joint carrying it and the body frame in that joint's frame."""
    model = pin.Model()
    model.gravity = pin.Motion(np.r_[np.asarray(mech.tree.geometry.gravity(), dtype=float), 0, 0, 0])
    last_joint, body_in_joint = {0: 0}, {0: pin.SE3.Identity()}
    for link in _depth_first(mech):
        placement, joint = body_in_joint[link.parent] * _se3(link.before), last_joint[link.parent]
        motions = JOINT_MOTIONS[link.joint.type]
        for k, motion in enumerate(motions):
            name = link.joint.coordinates[k].name
            joint = model.addJoint(joint, primitive_joint(motion, link.joint.name), placement, name)
            placement = pin.SE3.Identity()
        after = placement * _se3(link.after).inverse()  # a fixed joint adds no joint: its offset stays here
        label = mech.tree.body_labels[link.child]
        model.appendBodyToJoint(joint, _inertia(mech, label), after)
        last_joint[link.child], body_in_joint[link.child] = joint, after
    return model, last_joint, body_in_joint


def _forces(mech: Mechanism, model: pin.Model, last_joint, body_in_joint, names: list[str]):
    """Spring ends as frames, actuators as torques on their coordinate; other elements are refused."""
    applied = AppliedForces(mech)
    springs, actuators = [], []
    for element in mech.model.forces:
        if isinstance(element, SpringDamper):
            ends = []
            for label, point in ((element.body1, element.point1), (element.body2, element.point2)):
                body = mech.tree.body_index(label)
                local = np.asarray(mech.tree.geometry.point(mech.model.body(label), point), dtype=float)
                placement = body_in_joint[body] * pin.SE3(np.eye(3), local)
                ends.append(
                    model.addFrame(
                        pin.Frame(f"{element.name}_{point}", last_joint[body], placement, pin.FrameType.OP_FRAME)
                    )
                )
            values = (float(applied.value(x)) for x in (element.stiffness, element.length, element.damping))
            springs.append((*ends, *values))
        elif isinstance(element, Actuator):
            index = names.index(element.coordinate)
            actuators.append((index, lambda t, e=element: float(applied.law(e).prescribed(t)[0])))
        else:
            raise ValueError(f"force {element.name!r}: the reference models spring-dampers and actuators only")
    return springs, actuators


def _cut_sides(mech: Mechanism):
    constraints = mech.constraints
    return zip(constraints.joints, constraints.sides, strict=True)


def _contacts(model, joint, sides, last_joint, body_in_joint, mech) -> list:
    """Point contacts making the cut joint: its centre, and for a revolute a second point on its axis."""
    if joint.type not in ("ball", "spherical", "revolute"):
        raise ValueError(f"cut joint {joint.name!r}: the reference models ball, spherical and revolute cuts only")
    offsets = [np.zeros(3)] + ([np.array([0, 0, AXIS_POINTS * mech.length_scale])] if joint.type == "revolute" else [])
    out = []
    for offset in offsets:
        ends = [(last_joint[s.body], body_in_joint[s.body] * _se3(s.frame) * pin.SE3(np.eye(3), offset)) for s in sides]
        contact = pin.RigidConstraintModel(
            pin.ContactType.CONTACT_3D, model, *ends[0], *ends[1], pin.ReferenceFrame.LOCAL
        )
        _set_baumgarte_gains(contact, BAUMGARTE_RATE**2, 2 * BAUMGARTE_RATE)
        out.append(contact)
    return out


def _init_constraint_dynamics(model, data, contacts, contact_data) -> None:
    """Pinocchio 4 allocates the contacts' data too; Pinocchio 3 takes the contact models alone."""
    try:
        pin.initConstraintDynamics(model, data, contacts, contact_data)
    except TypeError:  # Boost.Python's ArgumentError: Pinocchio 3's signature
        pin.initConstraintDynamics(model, data, contacts)


def _set_baumgarte_gains(contact, stiffness: float, damping: float) -> None:
    """Pinocchio 4 takes the gains as scalars through a setter; Pinocchio 3 as vectors of the contact's size."""
    if hasattr(contact, "setBaumgarteCorrectorParameters"):
        contact.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(stiffness, damping))
        return
    gains = pin.BaumgarteCorrectorParameters(contact.size())
    gains.Kp[:], gains.Kd[:] = stiffness, damping
    contact.corrector = gains
