"""URDF in and out (issue 12, items 1 and 2).

Real robots: the URDF files of the PyPI package example-robot-data, imported by us and read independently by
Pinocchio's own URDF parser (pin.buildModelFromUrdf; our Pinocchio exporter is not involved), compared at
random states. Export: our samples written as URDF and read back by Pinocchio's parser, compared with our
algorithms on the document."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.inverse_dynamics import inverse_dynamics
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.identification.pipeline import base_parameters
from mbstudio.io.example_robots import ROBOTS as EXAMPLES
from mbstudio.io.example_robots import robots_folder
from mbstudio.io.urdf_export import urdf_text
from mbstudio.io.urdf_import import import_urdf
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, load, loads

pin = pytest.importorskip("pinocchio")
pytest.importorskip("yourdfpy")


ROBOTS = robots_folder()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed (the test extra has it)")
REAL = {  # the bench's robots, and a pendulum with continuous joints
    **EXAMPLES,
    "double_pendulum_continuous": "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
}


def _pin_state(pm, coordinates: list[str], q: np.ndarray, v: np.ndarray):
    """Our coordinates -> Pinocchio's q and v by joint name (a continuous joint holds cos, sin), and the index of
    each Pinocchio velocity in our order."""
    qp, vp, order = pin.neutral(pm), np.zeros(pm.nv), []
    for j in range(1, pm.njoints):
        k, joint = coordinates.index(pm.names[j]), pm.joints[j]
        qp[joint.idx_q : joint.idx_q + joint.nq] = [np.cos(q[k]), np.sin(q[k])] if joint.nq == 2 else [q[k]]
        vp[joint.idx_v] = v[k]
        order.append(k)
    return qp, vp, order


def _compare(mech: Mechanism, pm, states: int = 10) -> dict[str, float]:
    """Largest RNEA, CRBA and ABA differences, ours against Pinocchio's, at random states."""
    data, rng, worst = pm.createData(), np.random.default_rng(7), dict.fromkeys(("rnea", "crba", "aba"), 0.0)
    for _ in range(states):
        q, v, a = rng.uniform(-1, 1, (3, mech.n))
        qp, vp, order = _pin_state(pm, mech.coordinates, q, v)
        tau = inverse_dynamics(mech, q[None], v[None], a[None])[0]
        worst["rnea"] = max(worst["rnea"], np.abs(tau[order] - pin.rnea(pm, data, qp, vp, a[order])).max())
        mp = pin.crba(pm, data, qp)
        mp = np.triu(mp) + np.triu(mp, 1).T
        ours = mass_matrix(mech, q[None])[0][np.ix_(order, order)]
        worst["crba"] = max(worst["crba"], np.abs(ours - mp).max())
        acc = forward_dynamics(mech, q[None], v[None], tau[None])[0]
        worst["aba"] = max(
            worst["aba"], np.abs(acc - a).max(), np.abs(pin.aba(pm, data, qp, vp, tau[order]) - a[order]).max()
        )
    return worst


@needs_robots
@pytest.mark.parametrize("robot", REAL)
def test_real_robot_dynamics_equal_pinocchios_reading_of_the_same_file(robot):
    path = ROBOTS / REAL[robot]
    mech = Mechanism(import_urdf(path).model)
    pm = pin.buildModelFromUrdf(str(path))
    assert sorted(pm.names[1:]) == sorted(mech.coordinates)
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
    model = import_urdf(path).model
    run = base_parameters(model, "all", digits=40, samples=30)
    expected = _pinocchio_rank(pin.buildModelFromUrdf(str(path)), Mechanism(model))
    assert run.comparison["vp_dp"]["agree"] and run.vp.final.rank == run.dp.rank == expected, run.comparison
    if model.couplings:
        assert run.symbolic.rank > run.dp.rank and any("coupling" in note for note in run.symbolic.notes)
    else:
        assert run.comparison["all_agree"] and run.symbolic.rank == run.dp.rank, run.comparison


@needs_robots
def test_import_says_what_it_changed_or_left_out():
    panda = import_urdf(ROBOTS / REAL["panda"])
    assert any("panda_finger_joint2" in n and "mimics" in n for n in panda.notes)
    assert panda.model.joint("panda_link0_to_ground").type == "fixed"  # the root carries a mesh and mass
    shape = panda.model.body("panda_link1").shape
    assert shape["type"] == "mesh" and Path(shape["file"]).is_file() and shape["file"].endswith(".dae")
    go1 = import_urdf(ROBOTS / "go1_description/urdf/go1.urdf")  # its base's inertia breaks the triangle rule
    assert any("link 'base'" in n and "not possible" in n for n in go1.notes)
    z1 = import_urdf(ROBOTS / REAL["z1"]).model.joint("joint2").coordinates[0]
    assert (z1.min, z1.max) == (0.0, pytest.approx(2.9670597283903604)) and z1.min < z1.initial < z1.max


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
        (('type="revolute"', 'type="floating"'), "is floating"),
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


def test_names_that_are_not_identifiers_or_are_reserved_become_valid_and_unique(tmp_path):
    body = ARM.replace('name="arm"', 'name="ground"').replace('link="arm"', 'link="ground"')
    body = body.replace('name="shoulder"', 'name="q"')  # a reserved word of the generated code
    body += '<link name="2-x"/><joint name="my joint" type="fixed"><parent link="ground"/><child link="2-x"/></joint>'
    model = import_urdf(_write(tmp_path, body)).model
    assert [b.label for b in model.bodies] == ["ground_link", "n2_x"]
    assert model.coordinate_names() == ["q_2"] and model.joints[-1].name == "my_joint"


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
    assert "1 coordinates" in capsys.readouterr().out
    assert load(mbs).joint("shoulder").coordinates[0].max == 2.0
    assert main(["export", str(mbs), "--urdf", str(back)]) == 0
    assert ET.parse(back).getroot().find("joint[@name='shoulder']").get("type") == "revolute"
    before = urdf.read_bytes()
    assert main(["import", str(urdf), "-o", str(urdf)]) == 2  # the output is the input: refused, file kept
    assert urdf.read_bytes() == before
    assert main(["export", str(samples.path("four_bar")), "--urdf", str(tmp_path / "loop.urdf")]) == 2
    assert "URDF cannot describe" in capsys.readouterr().err and not (tmp_path / "loop.urdf").exists()
