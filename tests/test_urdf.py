"""URDF in and out.

Real robots: the URDF files of the PyPI package example-robot-data, imported by us and read independently by
Pinocchio's own URDF parser (pin.buildModelFromUrdf; our Pinocchio exporter is not involved), compared at
random states. Export: our samples written as URDF and read back by Pinocchio's parser, compared with our
algorithms on the document."""

from __future__ import annotations

import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.closed_loop import (
    actuator_forces_on_tree,
    closed_loop_forward_dynamics,
    closed_loop_inverse_dynamics,
    reduced_mass_matrix,
)
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.inverse_dynamics import inverse_dynamics
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.identification.pipeline import base_parameters
from mbstudio.io.example_robots import ROBOTS as EXAMPLES
from mbstudio.io.example_robots import robots_folder
from mbstudio.io.urdf_export import roll_pitch_yaw, urdf_text
from mbstudio.io.urdf_import import import_urdf
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, dumps, load, loads
from mbstudio.model.validation import inertia_warnings

from .test_floating_base import urdf_converter, worst_differences

pin = pytest.importorskip("pinocchio")
pytest.importorskip("yourdfpy")


ROBOTS = robots_folder()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed (the test extra has it)")
REAL = {  # the bench's robots, and a pendulum with continuous joints
    **EXAMPLES,
    "double_pendulum_continuous": "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
}


def urdf_coordinates(model) -> dict[str, str]:
    """Each one-axis URDF joint's name -> our coordinate: the file's name (`source_name`, where ours had to change)
    for a one-coordinate joint, the coordinate's name for each step of the chain a joint of several becomes."""
    single = [j for j in model.joints if len(j.coordinates) == 1]
    one = {j.source_name or j.coordinates[0].name: j.coordinates[0].name for j in single}
    return one | {c.name: c.name for j in model.joints if len(j.coordinates) > 1 for c in j.coordinates}


def _pin_state(pm, mech: Mechanism, q: np.ndarray, v: np.ndarray):
    """Our coordinates -> Pinocchio's q and v by joint name (a continuous joint holds cos, sin), and the index of
    each Pinocchio velocity in our order."""
    qp, vp, order = pin.neutral(pm), np.zeros(pm.nv), []
    ours = urdf_coordinates(mech.model)
    for j in range(1, pm.njoints):
        k, joint = mech.coordinates.index(ours[pm.names[j]]), pm.joints[j]
        qp[joint.idx_q : joint.idx_q + joint.nq] = [np.cos(q[k]), np.sin(q[k])] if joint.nq == 2 else [q[k]]
        vp[joint.idx_v] = v[k]
        order.append(k)
    return qp, vp, order


def _compare(mech: Mechanism, pm, states: int = 10) -> dict[str, float]:
    """Largest RNEA, CRBA and ABA differences, ours against Pinocchio's, at random states."""
    data, rng, worst = pm.createData(), np.random.default_rng(7), dict.fromkeys(("rnea", "crba", "aba"), 0.0)
    for _ in range(states):
        q, v, a = rng.uniform(-1, 1, (3, mech.n))
        qp, vp, order = _pin_state(pm, mech, q, v)
        tau = inverse_dynamics(mech, q[None], v[None], a[None])[0]
        worst["rnea"] = max(worst["rnea"], np.abs(tau[order] - pin.rnea(pm, data, qp, vp, a[order])).max())
        mp = pin.crba(pm, data, qp)
        mp = np.triu(mp) + np.triu(mp, 1).T
        ours = mass_matrix(mech, q[None])[0][np.ix_(order, order)]
        worst["crba"] = max(worst["crba"], np.abs(ours - mp).max())
        acc = forward_dynamics(mech, q[None], v[None], tau[None])[0]
        theirs = np.empty(mech.n)
        theirs[order] = pin.aba(pm, data, qp, vp, tau[order])
        worst["aba"] = max(worst["aba"], np.abs(acc - a).max(), np.abs(theirs - a).max())
        # each one's accelerations through the other's inverse dynamics: the torques back, however ill-conditioned
        # the mass matrix (iCub's reaches 1e16 at rest: accelerations then agree to 1e-9 only, as they should)
        back = inverse_dynamics(mech, q[None], v[None], theirs[None])[0]
        residual = max(np.abs(back - tau).max(), np.abs(pin.rnea(pm, data, qp, vp, acc[order]) - tau[order]).max())
        worst["aba_residual"] = max(worst.get("aba_residual", 0.0), residual)
    return worst


def fixed(path) -> Mechanism:
    """The robot welded to the ground at its root, as pin.buildModelFromUrdf(path) reads it."""
    return Mechanism(import_urdf(path, floating_base=False).model)


@needs_robots
@pytest.mark.parametrize("robot", REAL)
def test_real_robot_dynamics_equal_pinocchios_reading_of_the_same_file(robot):
    path = ROBOTS / REAL[robot]
    mech = fixed(path)
    pm = pin.buildModelFromUrdf(str(path))
    assert sorted(pm.names[1:]) == sorted(urdf_coordinates(mech.model))
    worst = _compare(mech, pm)
    assert worst["rnea"] < 1e-10 and worst["crba"] < 1e-10 and worst["aba"] < 1e-10, worst


def _pinocchio_rank(pm, mech: Mechanism, samples: int = 60) -> int:
    """The rank of Pinocchio's joint-torque regressor, at states that keep the mimic joints' couplings (which
    its own model ignores) and projected on the independent coordinates, as ours is: W = Pᵀ Y with P = ∂v/∂v_ind."""
    data, rng = pm.createData(), np.random.default_rng(3)
    at = {pm.names[j]: pm.joints[j].idx_v for j in range(1, pm.njoints)}  # one-axis joints: idx_q = idx_v
    P = np.zeros((pm.nv, len(mech.independent)))
    for k, name in enumerate(mech.independent):
        P[at[name], k] = 1.0
    for c in mech.model.couplings:
        P[at[c.follower]] = float(c.ratio) * P[at[c.leader]]
    rows = []
    for _ in range(samples):
        q, (v, a) = pin.randomConfiguration(pm), rng.uniform(-1, 1, (2, pm.nv))
        for c in mech.model.couplings:
            f, lead = at[c.follower], at[c.leader]
            q[f], v[f], a[f] = (
                float(c.ratio) * q[lead] + float(c.offset),
                float(c.ratio) * v[lead],
                float(c.ratio) * a[lead],
            )
        rows.append(P.T @ pin.computeJointTorqueRegressor(pm, data, q, v, a))
    s = np.linalg.svd(np.vstack(rows), compute_uv=False)
    return int((s > 1e-10 * s[0]).sum())


@needs_robots
@pytest.mark.parametrize("robot", [pytest.param(r, marks=pytest.mark.slow) for r in ("ur5", "z1", "panda")])
def test_real_robot_base_parameters_agree_across_routes_and_with_pinocchios_regressor_rank(robot):
    """The panda's second finger mimics the first: the numerical routes see the masses the coupling regroups,
    the symbolic method (joints only) does not, and says so."""
    path = ROBOTS / REAL[robot]
    model = import_urdf(path, floating_base=False).model
    run = base_parameters(model, "all", digits=40, samples=30)
    expected = _pinocchio_rank(pin.buildModelFromUrdf(str(path)), Mechanism(model))
    assert run.comparison["vp_dp"]["agree"] and run.vp.final.rank == run.dp.rank == expected, run.comparison
    if model.couplings:
        assert run.symbolic.rank > run.dp.rank and any("coupling" in note for note in run.symbolic.notes)
    else:
        assert run.comparison["all_agree"] and run.symbolic.rank == run.dp.rank, run.comparison


@needs_robots
def test_import_says_what_it_changed_or_left_out():
    panda = import_urdf(ROBOTS / REAL["panda"], floating_base=False)
    assert panda.model.joint("panda_link0_to_ground").type == "fixed"  # the root carries a mesh and mass
    shape = panda.model.body("panda_link1").shape
    assert shape["type"] == "mesh" and Path(shape["file"]).is_file() and shape["file"].endswith(".dae")
    go1 = import_urdf(ROBOTS / "go1_description/urdf/go1.urdf")  # its base's inertia breaks the triangle rule
    note = next(n for n in go1.notes if "link 'base'" in n)
    assert "not one a rigid body can have" in note and "triangle inequality" in note and "kept as written" in note
    assert any("mass matrix at the document's pose" in n and "is positive definite" in n for n in go1.notes)
    z1 = import_urdf(ROBOTS / REAL["z1"]).model.joint("joint2").coordinates[0]
    assert (z1.min, z1.max) == (0.0, pytest.approx(2.9670597283903604)) and z1.min < z1.initial < z1.max


# ---------------------------------------------------------------------------------------------- floating bases
@needs_robots
@pytest.mark.parametrize(
    "robot",
    [
        "solo_description/robots/solo12.urdf",
        "romeo_description/urdf/romeo_small.urdf",  # two inertias no rigid body can have, kept as Pinocchio reads them
        "talos_data/robots/talos_full_v2.urdf",  # 44 joints, 12 of them in mimic grippers (the tree's dynamics here)
    ],
)
def test_a_root_link_floats_by_default_as_on_pinocchios_free_flyer(robot):
    """Ours: the root link origin's position in the world and its rotation parameters ρ, rates (ṗ, ρ̇); Pinocchio's
    free flyer: position and quaternion, velocity (Rᵀ ṗ, ω in the base frame), linear first (converted)."""
    path = ROBOTS / robot
    mech = Mechanism(import_urdf(path).model)
    assert mech.model.joint("root_joint").type == "free" and mech.model.joints[0].parent == "0"
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert pm.nv == mech.n and mech.dof == mech.n - len(mech.model.couplings)  # TALOS's grippers have mimics
    worst = worst_differences(mech, pm, urdf_converter(mech, pm), states=3)
    assert max(worst.values()) < 1e-10, worst


@needs_robots
def test_a_root_named_world_is_the_ground_and_fixed_base_welds_any_root():
    ur5 = import_urdf(ROBOTS / "ur_description/urdf/ur5_robot.urdf").model  # its root link is 'world'
    assert all(j.type != "free" for j in ur5.joints) and len(ur5.coordinate_names()) == 6
    solo = import_urdf(ROBOTS / "solo_description/robots/solo12.urdf", floating_base=False).model
    assert [j.type for j in solo.joints[:1]] == ["fixed"] and len(solo.coordinate_names()) == 12


def test_a_floating_joint_between_links_is_a_free_joint_read_back_as_pinocchio_reads_it(tmp_path):
    body = (
        ARM
        + """<link name="load"><inertial><mass value="0.7"/><origin xyz="0 0.05 0"/>
      <inertia ixx="0.003" iyy="0.004" izz="0.005" ixy="0.0005" ixz="0" iyz="0"/></inertial></link>
    <joint name="tether" type="floating"><parent link="arm"/><child link="load"/>
      <origin xyz="0.2 0 -0.1" rpy="0.4 -0.2 1.1"/></joint>"""
    )
    path = _write(tmp_path, body)
    model = import_urdf(path, floating_base=False).model
    tether = model.joint("tether")
    assert tether.type == "free" and [c.name for c in tether.coordinates][3:] == ["tether_rx", "tether_ry", "tether_rz"]
    mech = Mechanism(model)
    for text in (path.read_text(), urdf_text(model)[0]):  # the file, and our export of it: one floating joint
        pm = pin.buildModelFromXML(text)
        kinds = [pm.joints[j].shortname() for j in range(1, pm.njoints)]
        assert len(kinds) == 2 and kinds[1] == "JointModelFreeFlyer"
        worst = worst_differences(mech, pm, urdf_converter(mech, pm), states=3)
        assert max(worst.values()) < 1e-12, worst


def ours_by_name(pm, model):
    """Pinocchio's model with its joints renamed as our coordinates (`joint_0.0` -> `joint_0_0`)."""
    names = urdf_coordinates(model)
    for j in range(1, pm.njoints):
        pm.names[j] = names.get(pm.names[j], pm.names[j])
    return pm


@needs_robots
@pytest.mark.slow  # about 20 s: every robot of example-robot-data, fixed and floating
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # romeo_laas_small's mass matrix is singular at rest (ABA: 0/0)
def test_every_robot_of_example_robot_data_has_pinocchios_dynamics_fixed_and_floating():
    """69 URDF files: all import but ur3 (Pinocchio refuses it too), and every one that moves agrees with
    Pinocchio's reading of the same file, welded (RNEA, CRBA, and forward dynamics through the other's inverse
    dynamics: iCub's mass matrix reaches a condition number of 1e16) and on its free flyer (RNEA, CRBA)."""
    files = sorted(ROBOTS.glob("**/*.urdf"))
    moving, floating, refused = [], [], []
    for path in files:
        try:
            model = import_urdf(path).model
        except ModelError:
            refused.append(path.name)
            continue
        mech = fixed(path)
        if mech.n:
            worst = _compare(mech, pin.buildModelFromUrdf(str(path)), states=2)
            moving.append((path.name, max(worst["rnea"], worst["crba"], worst["aba_residual"])))
        if model.joints[0].type == "free":
            floats = Mechanism(model)
            pm = ours_by_name(pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()), model)
            worst = worst_differences(floats, pm, urdf_converter(floats, pm), states=2)
            floating.append((path.name, max(worst["rnea"], worst["crba"])))
    assert (len(files), refused) == (69, ["ur3.urdf"])
    assert len(moving) == 66 and len(floating) == 57
    assert max(moving, key=lambda x: x[1])[1] < 1e-10 and max(floating, key=lambda x: x[1])[1] < 1e-10


# ---------------------------------------------------------------------------------------------- mimic joints
@needs_robots
@pytest.mark.parametrize(
    "robot",
    [
        "panda_description/urdf/panda.urdf",  # a prismatic finger mimics the other
        "talos_data/robots/talos_left_arm.urdf",  # a gripper's six joints mimic one, multipliers ±1
        "pr2_description/urdf/pr2.urdf",  # two grippers of four mimics each, impossible inertias kept
    ],
)
def test_mimic_joints_are_couplings_with_the_dynamics_of_pinocchios_mimic_joints(robot):
    """Pinocchio (mimic=True) drops a mimic joint's coordinate and moves it with its leader; ours is a coupling,
    and the dynamics on the independent coordinates are the tree's projected by R = ∂q/∂q_ind."""
    if tuple(int(part) for part in pin.__version__.split(".")[:2]) < (3, 7):
        pytest.skip("Pinocchio's URDF parser reads mimic joints (mimic=True) from 3.7; 3.3.1 and 3.4.0 do not")
    path = ROBOTS / robot
    model = import_urdf(path, floating_base=False).model
    mech = Mechanism(model)
    pm = pin.buildModelFromUrdf(str(path), mimic=True)
    assert mech.dof == pm.nv and len(model.couplings) == len(mech.coordinates) - pm.nv
    ours = urdf_coordinates(model)
    moving = [j for j in range(1, pm.njoints) if pm.joints[j].nv > 0]
    order = [mech.independent.index(ours[pm.names[j]]) for j in moving]  # Pinocchio's v order in ours
    assert sorted(order) == list(range(mech.dof))
    data, rng, worst = pm.createData(), np.random.default_rng(11), dict.fromkeys(("rnea", "crba", "aba"), 0.0)
    for _ in range(3):
        x, xd, xdd = rng.uniform(-0.5, 0.5, (3, mech.dof))
        q = mech.assemble(dict(zip(mech.independent, x, strict=True)))
        qd = mech.velocities(q, xd[None])
        qp = pin.neutral(pm)
        for j, k in zip(moving, order, strict=True):
            joint = pm.joints[j]
            qp[joint.idx_q : joint.idx_q + joint.nq] = [np.cos(x[k]), np.sin(x[k])] if joint.nq == 2 else [x[k]]
        tau = closed_loop_inverse_dynamics(mech, q, qd, xdd[None], actuated=mech.independent)[0]
        worst["rnea"] = max(worst["rnea"], np.abs(tau[order] - pin.rnea(pm, data, qp, xd[order], xdd[order])).max())
        mp = pin.crba(pm, data, qp)
        mp = np.triu(mp) + np.triu(mp, 1).T
        reduced = reduced_mass_matrix(mech, q)[0]
        worst["crba"] = max(worst["crba"], np.abs(reduced[np.ix_(order, order)] - mp).max())
        forces = actuator_forces_on_tree(mech, tau[None], mech.independent)
        acceleration = closed_loop_forward_dynamics(mech, q, qd, forces)[0]
        theirs = np.linalg.solve(mp, tau[order] - pin.nonLinearEffects(pm, data, qp, xd[order]))  # no mimic ABA
        worst["aba"] = max(worst["aba"], np.abs(acceleration - xdd).max(), np.abs(theirs - xdd[order]).max())
    assert max(worst.values()) < 1e-10, worst


def test_a_mimic_of_a_joint_later_in_the_file_with_an_offset_couples_and_goes_back_out_as_a_mimic(tmp_path):
    body = ARM.replace('<link name="arm">', '<link name="finger"><inertial><mass value="0.1"/>'
                       '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                       '<link name="arm">')  # fmt: skip
    body += """<joint name="finger" type="prismatic"><parent link="arm"/><child link="finger"/><axis xyz="1 0 0"/>
      <limit lower="0" upper="0.1" effort="1" velocity="1"/><mimic joint="shoulder" multiplier="0.02" offset="0.03"/>
    </joint><joint name="bad" type="fixed"><parent link="base"/><child link="extra"/><mimic joint="finger"/></joint>
    <link name="extra"/>"""
    result = import_urdf(_write(tmp_path, body), floating_base=False)
    model = result.model
    (coupling,) = model.couplings
    assert (coupling.name, coupling.follower, coupling.leader) == ("finger_mimic", "finger", "shoulder")
    assert (coupling.ratio, coupling.offset) == (0.02, 0.03)
    assert model.joint("finger").coordinates[0].initial == pytest.approx(0.03)  # on the coupling at the leader's 0
    assert any("joint 'bad' mimics 'finger'" in n and "imported as a joint of its own" in n for n in result.notes)
    mech = Mechanism(model)
    assert (mech.dof, mech.independent) == (1, ["shoulder"])
    mimic = ET.fromstring(urdf_text(model)[0].encode()).find("joint[@name='finger']/mimic")
    assert mimic.attrib == {"joint": "shoulder", "multiplier": "0.02", "offset": "0.03"}


# ---------------------------------------------------------------------------------------------- inertias
@needs_robots
def test_inertias_are_kept_as_written_or_repaired_on_request():
    """romeo_small's shoulder and elbow yaw links break the triangle inequality: kept, the dynamics are
    Pinocchio's; repaired (the user's choice), its accelerations differ from Pinocchio's by over 0.1 rad/s²."""
    path = ROBOTS / "romeo_description/urdf/romeo_small.urdf"
    kept, repaired = (import_urdf(path, floating_base=False, repair_inertias=r) for r in (False, True))
    assert sum("kept as written" in n for n in kept.notes) == 2
    assert sum("->" in n and "--repair-inertias" in n for n in repaired.notes) == 2
    assert [w.split("'")[1] for w in inertia_warnings(kept.model)] == ["RShoulderYawLink", "RElbowYawLink"]
    assert inertia_warnings(repaired.model) == []
    pm = pin.buildModelFromUrdf(str(path))
    assert max(_compare(Mechanism(kept.model), pm, states=3).values()) < 1e-10
    assert _compare(Mechanism(repaired.model), pm, states=3)["aba"] > 0.1


@needs_robots
def test_a_negative_principal_moment_is_kept_and_the_mass_matrix_checked_at_the_document_pose(tmp_path):
    result = import_urdf(ROBOTS / "romeo_description/urdf/romeo_laas_small.urdf")
    assert any("link 'body'" in n and "one is negative" in n for n in result.notes)
    assert any("is singular to rounding: a coordinate moves no inertia there" in n for n in result.notes)
    negative = ARM.replace('ixx="0.01" iyy="0.02" izz="0.02"', 'ixx="0.01" iyy="0.02" izz="-0.5"')
    result = import_urdf(_write(tmp_path, negative), floating_base=False)  # the arm turns about its axis y
    assert not any("is not positive definite" in n for n in result.notes)
    result = import_urdf(
        _write(tmp_path, negative.replace('<axis xyz="0 1 0"/>', '<axis xyz="0 0 1"/>')), floating_base=False
    )
    assert any("is not positive definite: the impossible inertias give some motion a negative" in n
               for n in result.notes)  # fmt: skip


# ---------------------------------------------------------------------------------------------- names and export
@needs_robots
def test_names_survive_import_and_export_exactly():
    """The Allegro hand names links and joints `link_0.0`, `joint_0.0`: ours are `link_0_0`, `joint_0_0`, the
    file's names are kept and written back, so Pinocchio reads the same robot by the same names."""
    path = ROBOTS / "allegro_hand_description/urdf/allegro_left_hand.urdf"
    model = import_urdf(path, floating_base=False).model
    assert model.joint("joint_0_0").source_name == "joint_0.0" and model.body("link_0_0").source_name == "link_0.0"
    text = urdf_text(model)[0]
    original, written = ET.parse(path).getroot(), ET.fromstring(text.encode())
    for kind in ("link", "joint"):
        names = {e.get("name") for e in original.iter(kind)}
        assert names <= {e.get("name") for e in written.iter(kind)}, kind
    mech = fixed(path)
    assert max(_compare(mech, pin.buildModelFromXML(text), states=3).values()) < 1e-10


@needs_robots
def test_the_full_icubs_export_round_trip_is_exact():
    """iCub: 32 joints, a floating base, rotations written to 8 digits (pitch 1.5707963, cos 2.7e-8: where
    reading roll and yaw from entries of size cos(pitch) lost 8 digits)."""
    path = ROBOTS / "icub_description/robots/icub.urdf"
    model = import_urdf(path).model
    text = urdf_text(model)[0]
    again = Mechanism(import_urdf_text(text))
    mech = Mechanism(model)
    assert again.coordinates == mech.coordinates
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-1, 1, (3, 4, mech.n))
    tau = inverse_dynamics(mech, q, qd, qdd)
    assert np.abs(inverse_dynamics(again, q, qd, qdd) - tau).max() < 1e-12
    assert np.abs(mass_matrix(again, q) - mass_matrix(mech, q)).max() < 1e-12
    # forward dynamics: the mass matrix reaches a condition number of 1e16 (massless links), so the accelerations
    # of one are checked through the other's inverse dynamics
    assert np.abs(inverse_dynamics(mech, q, qd, forward_dynamics(again, q, qd, tau)) - tau).max() < 1e-12
    # and Pinocchio reading both files (the same names, the same states): RNEA and CRBA agree
    pm, back = (pin.buildModelFromXML(t, pin.JointModelFreeFlyer()) for t in (path.read_text(), text))
    data, back_data = pm.createData(), back.createData()
    for _ in range(3):
        qp, vp, ap = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq)), *rng.uniform(-1, 1, (2, pm.nv))
        assert np.abs(pin.rnea(pm, data, qp, vp, ap) - pin.rnea(back, back_data, qp, vp, ap)).max() < 1e-12
        assert np.abs(pin.crba(pm, data, qp) - pin.crba(back, back_data, qp)).max() < 1e-12


def import_urdf_text(text: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "robot.urdf"
        path.write_text(text)
        return import_urdf(path).model


@pytest.mark.parametrize("pitch", [np.pi / 2, -np.pi / 2, 1.5707963, np.pi / 2 - 1e-12, -np.pi / 2 + 1e-9, 0.3])
def test_roll_pitch_yaw_give_the_rotation_back_at_and_near_the_singular_pitch(pitch):
    rng = np.random.default_rng(4)
    for roll, yaw in rng.uniform(-np.pi, np.pi, (200, 2)):
        rotation = _rotation("z", yaw) @ _rotation("y", pitch) @ _rotation("x", roll)
        angles = roll_pitch_yaw(rotation)
        back = _rotation("z", angles[2]) @ _rotation("y", angles[1]) @ _rotation("x", angles[0])
        assert np.abs(back - rotation).max() < 2e-15
        if np.cos(pitch) > 1e-3:  # away from it the angles themselves come back
            assert np.abs(angles - [roll, pitch, yaw]).max() < 1e-13


def _rotation(axis: str, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    rotation = np.eye(3)
    rotation[i, i] = rotation[j, j] = c
    rotation[i, j], rotation[j, i] = -s, s
    return rotation


URDF_HEAD = '<?xml version="1.0"?>\n<robot name="test">\n'
ARM = """
  <link name="base"/>
  <link name="arm"><inertial><mass value="2"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0.1 0 0" rpy="0 1.5707963267948966 0"/>
      <geometry><mesh filename="package://arm_pkg/meshes/arm.stl" scale="1 -1 1"/></geometry>
      <material name="red"/></visual></link>
  <material name="red"><color rgba="1 0 0 1"/></material>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5" rpy="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="2" effort="10" velocity="1"/><dynamics damping="0.5" friction="0.1"/></joint>
"""


def _write(folder: Path, body: str) -> Path:
    path = folder / "robot.urdf"
    path.write_text(URDF_HEAD + body + "</robot>\n")
    return path


def test_a_small_arm_keeps_limits_friction_colour_and_finds_its_package_mesh(tmp_path):
    mesh = tmp_path / "src" / "arm_pkg" / "meshes" / "arm.stl"
    mesh.parent.mkdir(parents=True)
    mesh.write_text("solid a\nendsolid a\n")
    result = import_urdf(_write(tmp_path, ARM), package_paths=[tmp_path / "src"])
    model = result.model
    coordinate = model.joint("shoulder").coordinates[0]
    assert (coordinate.min, coordinate.max, coordinate.initial) == (-1.0, 2.0, 0.0)
    assert model.forces[0].viscous == 0.5 and model.forces[0].coulomb == 0.1
    shape = model.body("arm").shape
    assert shape["file"] == str(mesh) and shape["color"] == "#ff0000" and shape["scale"] == [1.0, -1.0, 1.0]
    assert np.allclose(shape["z"], [1, 0, 0]) and np.allclose(shape["x"], [0, 0, -1])
    assert model.body("arm").inertia["m"] == 2.0 and model.body("arm").inertia["mx"] == pytest.approx(0.2)
    missing = import_urdf(_write(tmp_path, ARM))  # no package path given: the mesh is not found, and said so
    assert any("arm_pkg/meshes/arm.stl not found" in n for n in missing.notes)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (('type="revolute"', 'type="planar"'), "is planar"),
        (('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'), "axis"),
        (('lower="-1" upper="2"', 'lower="2" upper="-1"'), "lower above upper"),
        (('<parent link="base"/>', '<parent link="nowhere"/>'), "names a link the file does not define"),
        (('<mass value="2"/>', '<mass value="-2"/>'), "negative mass"),
        (("</joint>", '</joint><joint name="loop" type="fixed"><parent link="base"/><child link="arm"/></joint>'),
         "second parent"),
        (("<robot", "<robot><"), "not a readable URDF"),
    ],
)  # fmt: skip
def test_what_has_no_mbstudio_form_is_refused_by_name_and_the_file_stays(tmp_path, change, says):
    path = _write(tmp_path, ARM)
    path.write_text(path.read_text().replace(*change))
    before = path.read_bytes()
    with pytest.raises(ModelError) as caught:
        import_urdf(path)
    assert says in str(caught.value) and str(path) in str(caught.value)
    assert path.read_bytes() == before


def test_names_that_are_not_identifiers_or_are_reserved_become_valid_and_unique_and_go_back_on_export(tmp_path):
    body = ARM.replace('name="arm"', 'name="ground"').replace('link="arm"', 'link="ground"')
    body = body.replace('name="shoulder"', 'name="q"')  # a reserved word of the generated code
    body += '<link name="2-x"/><joint name="my joint" type="fixed"><parent link="ground"/><child link="2-x"/></joint>'
    model = import_urdf(_write(tmp_path, body), floating_base=False).model
    assert [b.label for b in model.bodies] == ["ground_link", "n2_x"]
    assert model.coordinate_names() == ["q_2"] and model.joints[-1].name == "my_joint"
    assert [b.source_name for b in model.bodies] == ["ground", "2-x"]
    assert [j.source_name for j in model.joints] == ["q", "my joint"]
    assert loads(dumps(model)).joints[-1].source_name == "my joint"  # kept in the file
    root = ET.fromstring(urdf_text(model)[0].encode())
    assert [e.get("name") for e in root.iter("link")] == ["world", "ground", "2-x"]
    assert [e.get("name") for e in root.iter("joint")] == ["q", "my joint"]


def test_a_renamed_body_or_joint_is_exported_under_its_new_name(tmp_path):
    from mbstudio.gui.editing import edits  # the window's edits (plain functions of the model)

    body = ARM.replace('name="shoulder"', 'name="shoulder.1"').replace('"arm"', '"arm-1"')
    model = import_urdf(_write(tmp_path, body), floating_base=False).model
    edits.rename_body(model, "arm_1", "forearm")
    edits.rename_coordinate(model, "shoulder_1", "shoulder_1", "elbow")
    root = ET.fromstring(urdf_text(model)[0].encode())
    assert [e.get("name") for e in root.iter("link")] == ["world", "forearm"]
    assert [e.get("name") for e in root.iter("joint")] == ["elbow"]


def test_a_source_name_in_a_model_file_is_one_line_of_text():
    text = dumps(samples.load("double_pendulum")).replace('"shoulder",', '"shoulder", "source_name": "a\\nb",', 1)
    with pytest.raises(ModelError, match="source_name.*one line of printable text"):
        loads(text)


# ---------------------------------------------------------------------------------------------- export

TWISTED = """{"format": "mbstudio", "schema_version": 1, "name": "twisted <tree> & \\"co\\" -->",
 "description": "a tree of every joint kind, one written child to parent -- on purpose",
 "parameters": [{"name": "L", "value": 0.4}],
 "bodies": [
  {"label": "a", "name": "a", "inertia": {"m": 1.5, "mx": 0.1, "my": 0.05, "mz": 0, "Ixx": 0.02, "Ixy": 0.001,
   "Ixz": 0, "Iyy": 0.03, "Iyz": 0.002, "Izz": 0.04}, "shape": {"type": "box", "size": [0.1, 0.2, "L"],
   "z": [0, 1, 1], "color": "#3080c0"}},
  {"label": "b", "name": "b", "inertia": {"m": 0.8, "mx": 0, "my": 0.08, "mz": 0.02, "Ixx": 0.02, "Ixy": 0,
   "Ixz": 0.001, "Iyy": 0.012, "Iyz": 0, "Izz": 0.018}},
  {"label": "c", "name": "c", "inertia": {"m": 0.5, "mx": 0.03, "my": 0, "mz": 0, "Ixx": 0.004, "Ixy": 0,
   "Ixz": 0, "Iyy": 0.005, "Iyz": 0, "Izz": 0.006}, "shape": {"type": "cylinder", "radius": 0.02, "length": "L",
   "axis": [1, 0, 0]}},
  {"label": "d", "name": "d", "inertia": {"m": 0.3, "mx": 0, "my": 0, "mz": 0.01, "Ixx": 0.001, "Ixy": 0,
   "Ixz": 0, "Iyy": 0.002, "Iyz": 0, "Izz": 0.002}}],
 "joints": [
  {"name": "j1", "type": "universal", "parent": "0", "child": "a", "parent_frame": {"origin": [0, 0, 1],
   "z": [0, 1, 0]}, "child_frame": {"origin": [0.1, 0, 0]}, "coordinates": [{"name": "u1"}, {"name": "u2"}]},
  {"name": "j2", "type": "spherical", "parent": "b", "child": "a", "parent_frame": {"origin": [0, 0.2, 0]},
   "child_frame": {"origin": [0, 0, "L"], "z": [1, 1, 0]},
   "coordinates": [{"name": "s1"}, {"name": "s2"}, {"name": "s3"}]},
  {"name": "j3", "type": "cylindrical", "parent": "b", "child": "c", "parent_frame": {"origin": [0.1, 0, 0],
   "z": [1, 0, 0]}, "child_frame": {"origin": [0, 0, 0]}, "coordinates": [{"name": "c1", "min": -0.5, "max": 0.5},
   {"name": "c2", "min": -2, "max": 2}]},
  {"name": "j4", "type": "prismatic", "parent": "c", "child": "d", "parent_frame": {"origin": [0, 0.1, 0]},
   "child_frame": {"origin": [0, 0, -0.05]}, "coordinates": [{"name": "p"}]}],
 "gravity": [0, -9.81, 0],
 "forces": [{"type": "joint_friction", "name": "fr", "coordinate": "c2", "viscous": 0.2, "coulomb": 0.05}]}"""


def _reread(model, folder=None):
    text, notes = urdf_text(model, folder)
    pm = pin.buildModelFromXML(text)
    pm.gravity = pin.Motion(np.r_[np.asarray(model.gravity, float), 0, 0, 0])  # URDF has no gravity
    return text, notes, pm


@pytest.mark.parametrize("name", ["puma560", "double_pendulum", "gripper", "balloon"])
def test_exported_samples_read_by_pinocchio_have_our_dynamics(name):
    model = samples.load(name)
    _, _, pm = _reread(model)
    worst = _compare(Mechanism(model), pm)
    assert max(worst.values()) < 1e-10, worst


def test_every_joint_kind_and_a_reversed_joint_export_with_their_dynamics_and_names_escaped():
    model = loads(TWISTED)
    mech = Mechanism(model)
    assert mech.topology.reversed == {"j2"}
    text, notes, pm = _reread(model)
    assert max(_compare(mech, pm).values()) < 1e-10
    root = ET.fromstring(text.encode())  # names with <, &, " and a description with -- stay data
    assert root.get("name") == model.name
    assert any("--" not in c and "child to parent" in c for c in _comments(text))
    assert any("gravity" in n for n in notes)
    joint = root.find("joint[@name='c2']")
    assert joint.find("dynamics").get("damping") == "0.2" and joint.find("limit").get("upper") == "2.0"
    assert root.find("joint[@name='u1']").get("type") == "continuous"


def _comments(text: str) -> list[str]:
    return [part.split("-->")[0] for part in text.split("<!--")[1:]]


def test_export_then_import_gives_back_the_same_dynamics(tmp_path):
    model = loads(TWISTED)
    path = tmp_path / "twisted.urdf"
    path.write_text(urdf_text(model)[0])
    back = import_urdf(path).model
    back.gravity = model.gravity
    ours, again = Mechanism(model), Mechanism(back)
    rng = np.random.default_rng(5)
    q, v, a = rng.uniform(-1, 1, (3, 1, ours.n))
    order = [again.coordinates.index(c) for c in ours.coordinates]
    tau = inverse_dynamics(again, q[:, np.argsort(order)], v[:, np.argsort(order)], a[:, np.argsort(order)])
    assert np.abs(inverse_dynamics(ours, q, v, a) - tau[:, order]).max() < 1e-12
    assert back.forces[0].viscous == 0.2 and back.body("a").shape["color"] == "#3080c0"


def test_closed_loops_are_refused_naming_the_cut_joint():
    with pytest.raises(ModelError, match="cut joints .*URDF cannot describe"):
        urdf_text(samples.load("four_bar"))


# ---------------------------------------------------------------------------------------------- command line


def test_command_line_round_trip_and_outputs_that_must_not_be_written(tmp_path, capsys):
    mesh = tmp_path / "src" / "arm_pkg" / "meshes" / "arm.stl"
    mesh.parent.mkdir(parents=True)
    mesh.write_text("solid a\nendsolid a\n")
    urdf, mbs, back = _write(tmp_path, ARM), tmp_path / "arm.mbs", tmp_path / "back.urdf"
    assert main(["import", str(urdf), "-o", str(mbs), "--package-path", str(tmp_path / "src")]) == 0
    out, err = capsys.readouterr()
    assert "7 coordinates" in out and "root link 'base' floats on the free joint 'root_joint'" in err
    assert main(["export", str(mbs), "--urdf", str(back)]) == 0  # the floating root is the URDF's root link
    assert [e.get("name") for e in ET.parse(back).getroot().iter("link")] == ["base", "arm"]
    assert main(["import", str(urdf), "-o", str(mbs), "--package-path", str(tmp_path / "src"), "--fixed-base"]) == 0
    assert "1 coordinates" in capsys.readouterr().out
    assert load(mbs).joint("shoulder").coordinates[0].max == 2.0
    assert main(["export", str(mbs), "--urdf", str(back)]) == 0
    assert ET.parse(back).getroot().find("joint[@name='shoulder']").get("type") == "revolute"
    assert ET.parse(back).getroot().find("link").get("name") == "world"  # what keeps it fixed when read back
    before = urdf.read_bytes()
    assert main(["import", str(urdf), "-o", str(urdf)]) == 2  # the output is the input: refused, file kept
    assert urdf.read_bytes() == before
    assert main(["export", str(samples.path("four_bar")), "--urdf", str(tmp_path / "loop.urdf")]) == 2
    assert "URDF cannot describe" in capsys.readouterr().err and not (tmp_path / "loop.urdf").exists()


def test_a_name_too_long_to_keep_is_refused_at_import_not_at_the_next_load(tmp_path):
    """A joint name of 400 digits became 'n1000…' and was kept as its source_name, which the file format refuses
    (over 200 characters): the import succeeded, the save succeeded, and the saved document could not be opened
    (found by the URDF fuzz). The import now refuses it, naming the file and the joint."""
    path = _write(tmp_path, ARM.replace('joint name="shoulder"', f'joint name="{"1" * 400}"'))
    with pytest.raises(ModelError, match=r"robot\.urdf: joint 'n1+.*'\.source_name.*up to 200 characters"):
        import_urdf(path, floating_base=False)
