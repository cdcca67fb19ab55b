"""The simulation benchmark's reference (io/pinocchio_reference.py), a Pinocchio model of our closed loops built
without our exporter: its constrained accelerations equal ours, its motions follow ours, and its trees equal
Pinocchio's own reading of the URDF files we imported them from."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp

from mbstudio import samples
from mbstudio.benchmarks.models import driven_delta, sprung_sla
from mbstudio.dynamics.engine import engine
from mbstudio.io.pinocchio_reference import ClosedLoopReference
from mbstudio.io.urdf_import import import_urdf
from mbstudio.kinematics import Mechanism
from mbstudio.simulation.run import simulate

from .test_urdf import REAL, ROBOTS, needs_robots, urdf_coordinates

MODELS = {"four_bar": lambda: samples.load("four_bar"), "sprung_sla": sprung_sla, "driven_delta": driven_delta}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "driven_delta" else n for n in MODELS]
)
def test_the_reference_accelerations_equal_ours(name):
    model = MODELS[name]()
    eng = engine(model)
    mech, ref = eng.mech, ClosedLoopReference.of(eng.mech)
    rng = np.random.default_rng(2)
    q = mech.assemble(None)[0]
    v_ind = rng.standard_normal(len(eng.independent))
    qd = eng.velocities(q, v_ind)
    y = ref.state(q, qd)
    ours = mech.accelerations(q[None], qd[None], eng.accelerations(0.3, q, v_ind)[None])[0]
    theirs = ref.coordinates(np.concatenate([ref.accelerations(0.3, *np.split(y, 2))] * 2)[None])[0]
    assert np.abs(theirs - ours).max() < 1e-10 * max(1.0, np.abs(ours).max())


def test_the_reference_motion_follows_ours():
    model = sprung_sla()
    ref = ClosedLoopReference.of(engine(model).mech)
    ours = simulate(model, 0.5, "DOP853", rtol=1e-10, atol=1e-12, samples=51)
    times = np.linspace(0, 0.5, 51)
    theirs = solve_ivp(ref.rhs, (0, 0.5), ref.state(ours.q[0]), "DOP853", times, rtol=1e-10, atol=1e-12)
    assert ours.kinetic.max() > 0.1  # it moves
    assert np.abs(ref.coordinates(theirs.y.T) - ours.q).max() < 1e-7


# A gripper's build in small: a body on two chained fixed joints with offsets and roll-pitch-yaw, carrying a
# joint about a negative axis, a prismatic joint along an oblique axis, and a continuous joint on a fixed offset.
# The reference once dropped a fixed joint's offset (the body and everything beyond it moved by it): on this file
# its RNEA then differed from Pinocchio's by 83 % and its ABA by 460 times the largest acceleration; on Talos'
# full body (mimic joints free on both sides) a gripper joint accelerated at -125.0 rad/s² against our 91.0.
GRIPPER = """<?xml version="1.0"?>
<robot name="gripper">
  <link name="base"><inertial><mass value="3"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.03" iyy="0.04" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="wrist"><inertial><mass value="1.2"/><origin xyz="0.01 0.02 -0.05" rpy="0 0 0"/>
    <inertia ixx="0.004" iyy="0.005" izz="0.003" ixy="0.0002" ixz="0" iyz="0.0001"/></inertial></link>
  <link name="flange"><inertial><mass value="0.3"/><origin xyz="0 0.01 -0.02"/>
    <inertia ixx="0.0004" iyy="0.0005" izz="0.0003" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="palm"><inertial><mass value="0.4"/><origin xyz="0.02 0 -0.01" rpy="0.2 0 0"/>
    <inertia ixx="0.0006" iyy="0.0004" izz="0.0005" ixy="0" ixz="0.00005" iyz="0"/></inertial></link>
  <link name="finger"><inertial><mass value="0.1"/><origin xyz="0 0.03 -0.04"/>
    <inertia ixx="0.0002" iyy="0.0001" izz="0.00015" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="slider"><inertial><mass value="0.05"/><origin xyz="0.01 0 0"/>
    <inertia ixx="0.00002" iyy="0.00003" izz="0.00002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"><inertial><mass value="0.02"/><origin xyz="0 0 -0.01"/>
    <inertia ixx="0.000005" iyy="0.000004" izz="0.000003" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="wrist_joint" type="revolute"><parent link="base"/><child link="wrist"/>
    <origin xyz="0.1 0 0.4" rpy="0.3 -0.2 0.5"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <joint name="flange_joint" type="fixed"><parent link="wrist"/><child link="flange"/>
    <origin xyz="0 0.02 -0.1" rpy="0 0 1.2"/></joint>
  <joint name="palm_joint" type="fixed"><parent link="flange"/><child link="palm"/>
    <origin xyz="0.01 0 -0.03" rpy="0.4 0.1 0"/></joint>
  <joint name="finger_joint" type="revolute"><parent link="palm"/><child link="finger"/>
    <origin xyz="0 0.02 -0.06" rpy="0 0 3.14159265359"/><axis xyz="0 0 -1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="slider_joint" type="prismatic"><parent link="finger"/><child link="slider"/>
    <origin xyz="0 0.04 -0.05" rpy="0.1 0 0"/><axis xyz="0.6 0 -0.8"/>
    <limit lower="-0.1" upper="0.1" effort="10" velocity="1"/></joint>
  <joint name="tip_joint" type="continuous"><parent link="slider"/><child link="tip"/>
    <origin xyz="0.02 0 0" rpy="0 0.3 0"/><axis xyz="-1 0 0"/></joint>
</robot>
"""


def _pinocchio_columns(model, pm) -> list[list[int]]:
    """For each of Pinocchio's joints, our coordinates it holds: a root joint of several (a floating base read
    with a root joint) holds the document's first joint's coordinates in order, the others one by name."""
    mech, names = Mechanism(model), urdf_coordinates(model)
    root = [c.name for c in model.joints[0].coordinates]
    return [
        [mech.coordinates.index(c) for c in root]
        if pm.joints[j].nv > 1
        else [mech.coordinates.index(names[pm.names[j]])]
        for j in range(1, pm.njoints)
    ]


def _pinocchio_state(pm, columns: list[list[int]], q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Our q, v -> Pinocchio's (a continuous joint holds cos, sin of its angle)."""
    qp, vp = pin.neutral(pm), np.zeros(pm.nv)
    for j, k in enumerate(columns, start=1):
        joint = pm.joints[j]
        qp[joint.idx_q : joint.idx_q + joint.nq] = [np.cos(q[k[0]]), np.sin(q[k[0]])] if joint.nq == 2 else q[k]
        vp[joint.idx_v : joint.idx_v + joint.nv] = v[k]
    return qp, vp


def _symmetric(m: np.ndarray) -> np.ndarray:
    return np.triu(m) + np.triu(m, 1).T  # Pinocchio's CRBA fills the upper triangle


def reference_against_pinocchio(model, pm, states: int = 3) -> dict[str, float]:
    """The reference's RNEA, CRBA and ABA against Pinocchio's reading `pm` of the file `model` was imported
    from, at random states: the largest differences relative to the largest value."""
    mech = Mechanism(model)
    ref, columns = ClosedLoopReference.of(mech), _pinocchio_columns(model, pm)
    order, mine = np.concatenate(columns), ref.ours  # our coordinate of each of Pinocchio's, of the reference's
    at = np.argsort(mine)[order]  # the reference's index of each of Pinocchio's velocities
    data, rng, worst = pm.createData(), np.random.default_rng(3), dict.fromkeys(("rnea", "crba", "aba"), 0.0)
    for _ in range(states):
        q, v, a = rng.uniform(-1, 1, (3, mech.n))
        qp, vp = _pinocchio_state(pm, columns, q, v)
        torque = np.empty(mech.n)
        torque[order] = tau = pin.rnea(pm, data, qp, vp, a[order])
        pairs = {
            "rnea": (pin.rnea(ref.model, ref.data, q[mine], v[mine], a[mine])[at], tau),
            "crba": (_symmetric(pin.crba(ref.model, ref.data, q[mine]))[np.ix_(at, at)], pin.crba(pm, data, qp)),
            "aba": (pin.aba(ref.model, ref.data, q[mine], v[mine], torque[mine])[at], pin.aba(pm, data, qp, vp, tau)),
        }
        for name, (reference, theirs) in pairs.items():
            theirs = _symmetric(theirs) if name == "crba" else theirs
            worst[name] = max(worst[name], np.abs(reference - theirs).max() / np.abs(theirs).max())
    return worst


def _floating(model):
    """The document with its free root turned into free_euler (x, y, z, then angles about z, y, x): the
    reference's floating base, which Pinocchio reads as the same chain of one-axis joints as its root joint."""
    assert model.joints[0].type == "free"
    model.joints[0].type = "free_euler"
    return model


def _euler_root():
    """Pinocchio's root joint as free_euler's chain."""
    root = pin.JointModelComposite()
    for joint in (
        pin.JointModelPX,
        pin.JointModelPY,
        pin.JointModelPZ,
        pin.JointModelRZ,
        pin.JointModelRY,
        pin.JointModelRX,
    ):
        root.addJoint(joint())
    return root


def test_the_reference_tree_equals_pinocchios_reading_of_a_small_gripper(tmp_path):
    path = tmp_path / "gripper.urdf"
    path.write_text(GRIPPER)
    welded = reference_against_pinocchio(
        import_urdf(path, floating_base=False).model, pin.buildModelFromUrdf(str(path))
    )
    floating = reference_against_pinocchio(
        _floating(import_urdf(path).model), pin.buildModelFromUrdf(str(path), _euler_root())
    )
    assert max(welded.values()) < 1e-10 and max(floating.values()) < 1e-10, (welded, floating)


def _free(path, floating_base: bool):
    """A robot as Pinocchio's plain reading of its URDF has it: mimic joints free, joints' friction left out."""
    model = import_urdf(path, floating_base=floating_base).model
    model.couplings, model.forces = [], []
    return _floating(model) if floating_base else model


TREES = {
    **REAL,
    "talos_full": "talos_data/robots/talos_full_v2.urdf",
    "pr2": "pr2_description/urdf/pr2.urdf",
    "icub_reduced": "icub_description/robots/icub_reduced.urdf",  # inertias about the centre at -5e-20
}
FLOATING = ("panda", "solo12", "talos_left_arm", "talos_full", "pr2", "icub_reduced")  # the others' root: the world


@needs_robots
@pytest.mark.parametrize("robot", TREES)
def test_the_reference_tree_equals_pinocchios_reading_of_a_robot_welded_and_floating(robot):
    path = str(ROBOTS / TREES[robot])
    worst = {"welded": reference_against_pinocchio(_free(path, False), pin.buildModelFromUrdf(path))}
    if robot in FLOATING:
        worst["floating"] = reference_against_pinocchio(_free(path, True), pin.buildModelFromUrdf(path, _euler_root()))
    assert max(max(w.values()) for w in worst.values()) < 1e-10, worst


@needs_robots
def test_the_reference_refuses_couplings_by_name():
    model = import_urdf(ROBOTS / REAL["panda"], floating_base=False).model
    with pytest.raises(ValueError, match="coupling 'panda_finger_joint2_mimic' \\(panda_finger_joint2 from panda_"):
        ClosedLoopReference.of(Mechanism(model))
