"""Contacts and the ground from a robot file's collision geometry (io/collision_geometry.py, docs/contact.md):
the spheres each kind of geometry becomes, the plane under the lowest of them at the initial pose (checked
against Pinocchio's forward kinematics of the same file, an independent reading), the file's own plane in MJCF,
--no-ground from the CLI, and an imported robot that lands on its ground instead of falling through it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from mbstudio.io.collision_geometry import MESH_VERTICES, Collision, contact_shapes, contact_spheres
from mbstudio.io.example_robots import robots_folder
from mbstudio.io.imports import import_mechanism
from mbstudio.model import dumps, loads

ROBOTS = robots_folder()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed (the test extra has it)")

URDF = """<robot name="cart">
  <link name="body">
    <inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.1"/><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
  </link>
  <link name="wheel">
    <inertial><mass value="0.5"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="0.05" length="0.02"/></geometry>
    </collision>
  </link>
  <link name="probe">
    <inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.02"/><geometry><sphere radius="0.03"/></geometry></collision>
  </link>
  <joint name="axle" type="continuous"><parent link="body"/><child link="wheel"/><origin xyz="0.15 0 -0.05"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="arm" type="fixed"><parent link="body"/><child link="probe"/><origin xyz="-0.15 0 -0.04"/></joint>
</robot>
"""


def contacts(model):
    return [f for f in model.forces if f.type == "contact"]


def test_each_kind_of_geometry_becomes_the_shapes_stated():
    """A sphere is itself; a capsule its end spheres; a box a box contact, its corners where the box's are; a round
    mesh (points on a ball) that ball; a long mesh its hull's vertices when they are few, none when many."""
    pose = np.eye(4)
    pose[:3, 3] = [1.0, 2.0, 3.0]
    assert contact_spheres(Collision("1", "sphere", pose, (0.2,)))[0][1] == 0.2
    ends = contact_spheres(Collision("1", "capsule", np.eye(4), (0.1, 0.5)))
    assert [list(c) for c, _ in ends] == [[0, 0, -0.5], [0, 0, 0.5]]
    (box,) = contact_shapes(Collision("1", "box", pose, (0.3, 0.2, 0.1)))
    assert box.fields == {"shape": "box", "half_extents": [0.3, 0.2, 0.1], "rpy": None} and box.radius == 0
    assert np.abs(box.offsets) == pytest.approx(np.tile([0.3, 0.2, 0.1], (8, 1)), abs=1e-15)
    rng = np.random.default_rng(1)
    ball = rng.normal(size=(500, 3))
    ball = 0.02 * ball / np.linalg.norm(ball, axis=1)[:, None]
    (centre, r), = contact_spheres(Collision("1", "mesh", np.eye(4), vertices=ball + [0.1, 0, 0]))  # fmt: skip
    assert r == pytest.approx(0.02, rel=0.05) and centre == pytest.approx([0.1, 0, 0], abs=1e-3)
    assert contact_spheres(Collision("1", "mesh", np.eye(4), vertices=ball * [1, 1, 8])) is None
    assert contact_shapes(Collision("1", "mesh", np.eye(4), vertices=ball * [1, 1, 8])) is None  # 500 vertices
    few = ball[:MESH_VERTICES] * [1, 1, 8]
    (mesh,) = contact_shapes(Collision("1", "mesh", pose, vertices=few))
    assert mesh.fields["shape"] == "mesh" and np.array(mesh.fields["vertices"]) == pytest.approx(few, abs=1e-15)


def test_a_floating_urdf_robot_gets_contacts_and_a_ground_under_its_lowest_geometry(tmp_path):
    """The cart's box (a box contact), wheel (16 rim spheres) and probe sphere become contacts sharing the
    named parameters; the ground lies under the lowest: the wheel's rim at z = −0.05 − 0.05 (the probe's bottom is
    at −0.04 − 0.02 − 0.03), where the two rim spheres at its bottom, one at each end, carry the weight."""
    path = tmp_path / "cart.urdf"
    path.write_text(URDF)
    result = import_mechanism(path)
    model = result.model
    found = contacts(model)
    assert [f.shape for f in found if f.body == "body"] == ["box"] and len(found) == 1 + 16 + 1
    assert {f.stiffness for f in found} == {"contact_k"} and all(f.plane_origin[2] == "ground_z" for f in found)
    values = model.parameter_values()
    assert values["ground_z"] == pytest.approx(-0.1, abs=1e-12)
    weight = 2.6 * 9.81  # the weight on the two lowest spheres presses them in by 1 mm: k = W / 2δ^1.5, two digits
    assert values["contact_k"] == pytest.approx(weight / 2 / 1e-3**1.5, rel=0.05)
    assert any("ground plane at z = -0.1 m" in note and "--no-ground" in note for note in result.notes)
    assert len(model.measures) == len(found)
    assert loads(dumps(model)).forces == model.forces
    bare = import_mechanism(path, ground=False).model
    assert not contacts(bare) and "ground_z" not in bare.parameter_values()
    assert not contacts(import_mechanism(path, floating_base=False).model)  # a welded robot needs no ground


@needs_robots
def test_solo12_stands_its_four_feet_on_the_ground_pinocchio_places():
    """solo12's feet are round meshes: four spheres of the foot's radius at the foot frames; the ground under
    them at q = 0 is at Pinocchio's foot-frame height minus that radius (Pinocchio reads the same file)."""
    pin = pytest.importorskip("pinocchio")
    path = ROBOTS / "solo_description/robots/solo12.urdf"
    result = import_mechanism(path)
    found = contacts(result.model)
    assert sorted(f.body for f in found) == ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
    radius = found[0].radius
    assert radius == pytest.approx(0.016, rel=0.02)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = pm.createData()
    pin.framesForwardKinematics(pm, data, pin.neutral(pm))
    feet = [data.oMf[pm.getFrameId(name)].translation[2] for name in ("FL_FOOT", "HR_FOOT")]
    assert result.model.parameter_values()["ground_z"] == pytest.approx(min(feet) - radius, abs=1e-9)
    assert any("no contact for the mesh of link 'base_link'" in note for note in result.notes)


def test_an_mjcf_robot_lands_on_the_files_own_floor(tmp_path):
    """A free box with a capsule leg above the file's plane at z = −0.05: contacts for its corners and the
    capsule's two end spheres against that plane, the box a box contact of MuJoCo's half sizes, no ground_z
    parameter; the MuJoCo compiler reads it."""
    pytest.importorskip("mujoco")
    path = tmp_path / "box.xml"
    path.write_text("""<mujoco model="box"><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1" pos="0 0 -0.05"/>
      <body name="torso" pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.05 0.02" mass="1"/>
        <body name="leg" pos="0.05 0 -0.05"><joint name="hip" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.01" mass="0.1"/></body></body>
    </worldbody></mujoco>""")
    model = import_mechanism(path).model
    found = contacts(model)
    assert len(found) == 3 and all(f.plane_origin == [0.0, 0.0, -0.05] for f in found)
    assert [f.half_extents for f in found if f.shape == "box"] == [[0.1, 0.05, 0.02]]
    legs = sorted(model.body("leg").points[f.point][2] for f in found if f.body == "leg")
    assert legs == pytest.approx([-0.1, 0.0], abs=1e-12)
    assert "ground_z" not in model.parameter_values()
    assert not contacts(import_mechanism(path, ground=False).model)


def test_the_cli_imports_with_a_ground_unless_told_not_to(tmp_path):
    path = tmp_path / "cart.urdf"
    path.write_text(URDF)
    for extra, count in (([], 18), (["--no-ground"], 0)):
        out = tmp_path / f"cart{len(extra)}.mbs"
        cmd = [sys.executable, "-m", "mbstudio.cli", "import", str(path), "-o", str(out), "--json", *extra]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        notes = json.loads(done.stdout)["notes"]
        assert len(contacts(loads(out.read_text()))) == count
        assert any("ground plane" in n for n in notes) == bool(count)


def test_an_imported_cart_lands_on_its_ground_instead_of_falling_through(tmp_path):
    """Simulated without any edit, the imported cart tips onto its plane and comes to rest there: its weight
    carried by the contacts (their vertical forces sum to m g) and no contact deeper than a few millimetres."""
    from mbstudio.simulation.run import simulate

    path = tmp_path / "cart.urdf"
    path.write_text(URDF)
    model = import_mechanism(path).model
    result = simulate(model, 2.0, method="CVODES-BDF", samples=21, rtol=1e-8, atol=1e-10)
    columns = {name: values for name, _, values in result.measures}
    lift = sum(values for name, values in columns.items() if name.endswith(".fz"))
    assert lift[-1] == pytest.approx(2.6 * 9.81, rel=1e-3)
    deepest = max(values.max() for name, values in columns.items() if name.endswith(".penetration"))
    assert 0 < deepest < 5e-3


def test_geometry_without_contacts_is_named_and_a_robot_of_it_alone_gets_no_ground(tmp_path):
    """An ellipsoid has no contact spheres: named in the notes; with nothing else to stand on, no ground."""
    pytest.importorskip("mujoco")
    path = tmp_path / "egg.xml"
    path.write_text("""<mujoco model="egg"><worldbody><body name="egg" pos="0 0 1"><freejoint/>
      <geom name="shell" type="ellipsoid" size="0.1 0.05 0.05" mass="1"/></body></worldbody></mujoco>""")
    result = import_mechanism(path)
    assert not contacts(result.model) and "ground_z" not in result.model.parameter_values()
    assert any("no ground added" in n and "ellipsoid 'shell' of body 'egg'" in n for n in result.notes)
