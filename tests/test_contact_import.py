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

from mbstudio.dynamics.contact_shapes import reduced_hull
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
    mesh (points on a ball) that ball; a long mesh its hull's vertices (all of them: the import reduces them)."""
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
    (long,) = contact_shapes(Collision("1", "mesh", np.eye(4), vertices=ball * [1, 1, 8]))
    assert long.offsets == pytest.approx(ball * [1, 1, 8], abs=1e-15)  # all 500 on its hull
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
    assert any("above the ground at the initial pose (the mesh of link 'base_link'" in note for note in result.notes)


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


@pytest.mark.slow  # an imported cart's engine and its run (~6 s): the suite's five minutes
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


def outside(vertices: np.ndarray, kept: np.ndarray) -> float:
    """How far the farthest of `vertices` lies outside the convex hull of `kept` (its facets' planes)."""
    from scipy.spatial import ConvexHull

    facets = ConvexHull(kept).equations
    return float((vertices @ facets[:, :3].T + facets[:, 3]).max(axis=1).max())


def test_a_hull_reduced_to_fewer_vertices_keeps_its_own_vertices_and_nears_it_as_they_grow():
    """500 points on an ellipsoid of semi-axes 2, 2 and 16 cm (all on their hull): at most `most` of them are kept,
    each one of the given, those asked first among them, and the farthest point left outside their hull comes
    nearer as `most` grows (a greedy fit: 16 → 64 vertices)."""
    rng = np.random.default_rng(3)
    ball = rng.normal(size=(500, 3))
    points = 0.02 * ball / np.linalg.norm(ball, axis=1)[:, None] * [1, 1, 8]
    gaps = []
    for most in (16, 32, 64):
        kept = reduced_hull(points, most, first=np.array([7, 3]))
        assert len(kept) == most and all(np.any(np.all(points == k, axis=1)) for k in kept)
        assert np.all(np.any(np.all(kept[:, None] == points[[3, 7]][None], axis=2), axis=0))
        gaps.append(outside(points, kept))
    assert 0 < gaps[2] < gaps[1] < gaps[0] < 0.02
    assert reduced_hull(points[:20], 32) == pytest.approx(points[:20], abs=0)


WALKER = """<robot name="walker">
  <link name="body">
    <inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="foot">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.5"/><geometry><mesh filename="foot.stl"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0.2 -0.2"/><geometry><mesh filename="foot.stl"/></geometry></collision>
  </link>
  <joint name="ankle" type="revolute"><parent link="body"/><child link="foot"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="shoulder" type="revolute"><parent link="body"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"""


def foot_points() -> np.ndarray:
    """A foot 0.2 × 0.1 m: a sole bulging 0.5 mm down within an ellipse (24 points on its rim, a grid inside: all on
    the hull) under a dome 6 cm high from 1 mm above the rim."""
    turns = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    grid = [[x, y] for x in np.linspace(-0.9, 0.9, 12) for y in np.linspace(-0.9, 0.9, 8) if x * x + y * y < 0.8]
    flat = np.vstack([np.c_[np.cos(turns), np.sin(turns)], grid])
    sole = np.c_[0.1 * flat[:, 0], 0.05 * flat[:, 1], -5e-4 * (1 - (flat**2).sum(axis=1))]
    up = np.random.default_rng(4).normal(size=(80, 3))
    up[:, 2] = np.abs(up[:, 2])
    up /= np.linalg.norm(up, axis=1)[:, None]
    return np.vstack([sole, up * [0.1, 0.05, 0.06] + [0, 0, 1e-3]])


def test_a_walker_keeps_its_foot_mesh_reduced_to_its_sole_and_leaves_its_arm_mesh_out(tmp_path):
    """A mesh on a link standing on the ground at the initial pose (the foot) becomes a mesh contact of at most
    MESH_VERTICES of its hull's vertices, its sole's outline among them (the footprint of the vertices within 1 mm
    of its lowest is the full sole's, to rounding), the ground under its lowest; the same mesh on a link above the
    ground (the arm, 0.3 m up) gets no contact and is named in the note."""
    import trimesh
    from scipy.spatial import ConvexHull

    points = foot_points()
    trimesh.convex.convex_hull(points).export(tmp_path / "foot.stl")
    (tmp_path / "walker.urdf").write_text(WALKER)
    result = import_mechanism(tmp_path / "walker.urdf")
    (foot,) = contacts(result.model)
    assert foot.body == "foot" and foot.shape == "mesh" and len(foot.vertices) == MESH_VERTICES
    kept = np.array(foot.vertices, float)
    hull = points[ConvexHull(points).vertices]
    assert len(hull) > MESH_VERTICES and np.abs(kept[:, None] - hull[None]).sum(axis=2).min(axis=1).max() < 1e-6

    def footprint(vertices):
        sole = vertices[vertices[:, 2] <= vertices[:, 2].min() + 1e-3]
        return ConvexHull(sole[:, :2]).volume

    assert footprint(kept) == pytest.approx(footprint(hull), rel=1e-6)
    assert result.model.parameter_values()["ground_z"] == pytest.approx(-0.5 + kept[:, 2].min(), abs=1e-6)
    assert kept[:, 2].min() - hull[:, 2].min() <= 1e-3
    (note,) = [n for n in result.notes if "ground plane" in n]
    assert "no contact for the 1 mesh above the ground at the initial pose (the mesh of link 'arm'" in note


@needs_robots
def test_talos_stands_on_its_two_foot_meshes_where_pinocchio_places_its_soles():
    """Talos' collision meshes (47, up to 310 hull vertices): contacts of mesh shape only on its two ankle links,
    32 vertices each, among them the outline of the flat sole (the footprint of the vertices within 1 mm of the
    full hull's lowest, in the foot's axes, is the full hull's); the ground lies under the lowest point of the full
    ankle hulls at the initial pose (knees at their limit 0.2618 rad), placed by Pinocchio's reading of the same
    file (trimesh reading the mesh)."""
    pin = pytest.importorskip("pinocchio")
    import trimesh
    from scipy.spatial import ConvexHull

    path = ROBOTS / "talos_data/robots/talos_reduced.urdf"
    result = import_mechanism(path)
    meshes = [f for f in contacts(result.model) if f.shape == "mesh"]
    assert sorted(f.body for f in meshes) == ["leg_left_6_link", "leg_right_6_link"]
    assert all(len(f.vertices) == MESH_VERTICES for f in meshes)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data, q = pm.createData(), pin.neutral(pm)
    for joint in result.model.joints:  # the import's initial pose: zero, or a joint's limit nearest zero (knees)
        if pm.existJointName(joint.name) and joint.type == "revolute":
            q[pm.joints[pm.getJointId(joint.name)].idx_q] = float(joint.coordinates[0].initial)
    pin.framesForwardKinematics(pm, data, q)
    stl = ROBOTS / "talos_data/meshes/v2/ankle_X_collision.stl"
    ankle = np.asarray(trimesh.load(str(stl), force="mesh").vertices, float)
    lowest = min(
        float(
            (ankle @ data.oMf[pm.getFrameId(link)].rotation.T)[:, 2].min()
            + data.oMf[pm.getFrameId(link)].translation[2]
        )
        for link in ("leg_left_6_link", "leg_right_6_link")
    )

    def footprint(vertices):  # of the vertices within 1 mm of the full hull's lowest, in the foot's axes
        sole = vertices[vertices[:, 2] <= ankle[:, 2].min() + 1e-3]
        return ConvexHull(sole[:, :2]).volume

    left = next(f for f in meshes if f.body == "leg_left_6_link")  # its mesh unscaled, at the link's origin
    assert footprint(np.array(left.vertices, float)) == pytest.approx(footprint(ankle), rel=1e-6)
    ground = result.model.parameter_values()["ground_z"]
    assert ground - lowest == pytest.approx(0, abs=1e-11)  # ground_z is written to 12 digits
    (note,) = [n for n in result.notes if "ground plane" in n]
    assert "no contact for the 45 meshes above the ground at the initial pose" in note
