"""Boxes and convex meshes as contact shapes (dynamics/contact_shapes.py, docs/contact.md): their vertices are
the contact points of the compliant and the rigid model. Checked against the laws' own closed forms (static
penetration, Coulomb's sliding), against the same shape written as spheres at its vertices, against the box for a
cube mesh, and the compiled engine against the numpy path."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mbstudio.dynamics.contact_shapes import CORNER_SIGNS
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.rigid_contact import rigid_contact_dynamics
from mbstudio.io.imports import import_mechanism
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps, loads
from mbstudio.model.document import Contact, ForceMeasure
from mbstudio.model.errors import ModelError
from mbstudio.simulation.contact_results import support
from mbstudio.simulation.run import simulate

from .test_contact import FREE, G, free_body, incline

MASS, HALF = 1.0, (0.1, 0.05, 0.025)
K, N_EXP, C_D, V_S = 1e6, 1.5, 20.0, 1e-3
STATIC = (MASS * G / 4 / K) ** (1 / N_EXP)  # each bottom corner's k δ^n = m g / 4
RTOL, ATOL = 1e-10, 1e-12


def box_body(contacts: list[Contact], gravity=(0.0, 0.0, -G), z: float = HALF[2] - STATIC, points=None, **initial):
    """The 1 kg block 0.2 × 0.1 × 0.05 m on a free joint, its centre of mass at its origin, at height z; its
    point c there and `points`."""
    a, b, c = HALF
    inertia = tuple(MASS * (u * u + v * v) / 3 for u, v in ((b, c), (a, c), (a, b)))
    model = free_body(MASS, inertia, {"c": [0.0, 0.0, 0.0]} | (points or {}), gravity)
    for name, value in ({"z": z} | initial).items():
        model.joints[0].coordinates[FREE.index(name)].initial = value
    model.forces = contacts
    model.measures = [ForceMeasure(f"m_{f.name}", f.name) for f in contacts]
    return loads(dumps(model))


def box(friction: float = 0.5, **fields) -> Contact:
    values = {"exponent": N_EXP, "dissipation": C_D, "shape": "box", "half_extents": list(HALF)} | fields
    return Contact("box", "1", "c", 0.0, K, friction=friction, stiction_velocity=V_S, **values)


def vertex_forces(model, q, qd=None) -> np.ndarray:
    """The normal force at each contact point of each contact element at one state (N per vertex)."""
    mech = Mechanism(model)
    forces = AppliedForces(mech)
    q = np.asarray(q, float)[None]
    qd = np.zeros_like(q) if qd is None else np.asarray(qd, float)[None]
    st = mech.motion(q, qd)
    out = []
    for law in forces.laws:
        for depth, _, J, normal in law.placements(st):
            velocity = (J * qd[:, None, :]).sum(axis=2)
            out.append(float(law.contact(depth, velocity, normal, np.sqrt)[0][0]))
    return np.array(out)


def column(result, name: str) -> np.ndarray:
    return next(values for label, _, values in result.measures if label == name)


@pytest.mark.parametrize("exponent", [N_EXP, 1.0])
def test_a_box_resting_flat_carries_a_quarter_of_its_weight_at_each_bottom_corner(exponent):
    """At z = c − δ_s, δ_s = (m g / 4k)^(1/n) with the law f_n = k δ^n (n = 1.5, Hertz; n = 1, a linear spring:
    δ_s = m g / 4k), each of the four bottom corners is pressed in by δ_s and pushes k δ_s^n = m g / 4; the top
    corners are apart. The forces sum to m g to rounding (1e-12; the check asks 1e-6), the generalized force is m g
    up with no moment, and the support polygon is the bottom face with its centre of pressure in the middle."""
    static = (MASS * G / 4 / K) ** (1 / exponent)
    model = box_body([box(exponent=exponent)], z=HALF[2] - static)
    q = Mechanism(model).tree.initial_coordinates()
    f = vertex_forces(model, q)
    assert len(f) == 8
    bottom = f[[0, 2, 4, 6]]  # the corners' signs: x, y, z in {−1, 1}, z fastest
    assert bottom == pytest.approx(np.full(4, MASS * G / 4), rel=1e-12)
    assert np.all(f[[1, 3, 5, 7]] == 0)
    assert abs(f.sum() / (MASS * G) - 1) < 1e-12
    Q = AppliedForces(Mechanism(model)).generalized(0.0, q[None], np.zeros((1, 6)))[0]
    assert np.abs(Q - [0, 0, MASS * G, 0, 0, 0]).max() <= 1e-12 * MASS * G
    held = support(Mechanism(model), 0.0, q, np.zeros(6))  # the window's support polygon: the bottom face
    assert np.abs(held.polygon[:, :2]) == pytest.approx(np.tile(HALF[:2], (4, 1)), rel=1e-12)
    assert held.pressure_centre == pytest.approx([0.0, 0.0, -static], abs=1e-12)


def test_the_rigid_model_holds_a_box_resting_flat_on_its_four_bottom_corners():
    """On the plane (δ = 0 at the bottom corners, or ±1e-13 m) the rigid model's touching points are the four
    bottom vertices (within 1 nm of the plane), their forces sum to m g (1e-6 asked; the sticking solution is exact
    to rounding) and q̈ = 0."""
    for lift in (0.0, 1e-13, -1e-13):  # a pose 1e-13 m off the plane: the same four corners hold it
        resting = box_body([box()], z=HALF[2] + lift)
        q = Mechanism(resting).tree.initial_coordinates()
        rigid = rigid_contact_dynamics(Mechanism(resting), 0.0, q, np.zeros(6))
        assert rigid.names == ["box"] * 4
        assert abs(rigid.forces[:, 2].sum() / (MASS * G) - 1) < 1e-6
        assert np.abs(rigid.qdd).max() < 1e-9 * G


@pytest.mark.slow
def test_a_dropped_box_settles_at_the_static_penetration_compliant_and_rigid():
    """Dropped from 1 mm above the plane, the compliant box settles with its normal forces summing to m g (1e-4)
    and its deepest corner at δ_s (1e-3 relative, the settled motion decaying far below); the rigid model's time
    stepping holds the box resting on the plane with its corners' forces summing to m g (1e-6)."""
    model = box_body([box()], z=HALF[2] + 1e-3)
    result = simulate(model, 1.0, samples=101, method="CVODES-BDF", rtol=1e-9, atol=1e-11)
    assert column(result, "m_box.normal_force")[-1] == pytest.approx(MASS * G, rel=1e-4)
    assert column(result, "m_box.fz")[-1] == pytest.approx(MASS * G, rel=1e-4)
    assert column(result, "m_box.penetration")[-1] == pytest.approx(STATIC, rel=1e-3)
    resting = box_body([box()], z=HALF[2])
    q = Mechanism(resting).tree.initial_coordinates()
    stepped = simulate(resting, 0.2, samples=21, contact="rigid")
    assert column(stepped, "m_box.fz")[1:] == pytest.approx(np.full(20, MASS * G), rel=1e-6)
    assert np.abs(stepped.q[-1] - q).max() < 1e-9


@pytest.mark.slow
def test_a_box_on_a_steep_incline_slides_at_coulombs_acceleration_and_on_a_gentle_one_sticks():
    """Gravity tilted by θ about y (the plane's axes): with tan θ > μ the box slides at g (sin θ − μ cos θ), the
    compliant model once v ≫ v_s (1e-4) and the rigid model at one sliding state (1e-9); with tan θ < μ the rigid
    box at rest stays at rest (its corners' forces inside their cones) and the compliant one creeps below the
    regularised law's bound v_s tan θ / sqrt(μ² − tan² θ)."""
    angle, mu = math.radians(30), 0.3
    expected = G * (math.sin(angle) - mu * math.cos(angle))
    model = box_body([box(mu)], incline(angle))
    result = simulate(model, 0.8, samples=161, rtol=RTOL, atol=ATOL)
    sliding = result.qd[:, 0] > 0.5
    assert sliding.sum() > 50
    assert result.qdd[sliding, 0] == pytest.approx(np.full(sliding.sum(), expected), rel=1e-4)
    on_plane = box_body([box(mu)], incline(angle), z=HALF[2])
    q = Mechanism(on_plane).tree.initial_coordinates()
    rigid = rigid_contact_dynamics(Mechanism(on_plane), 0.0, q, np.array([1.0, 0, 0, 0, 0, 0]))
    assert rigid.qdd[0] == pytest.approx(expected, rel=1e-9)
    gentle, mu = math.radians(10), 0.5
    still = rigid_contact_dynamics(Mechanism(box_body([box(mu)], incline(gentle), z=HALF[2])), 0.0, q, np.zeros(6))
    assert np.abs(still.qdd).max() < 1e-9 * G
    creeping = simulate(box_body([box(mu)], incline(gentle)), 0.5, samples=101, rtol=RTOL, atol=ATOL)
    bound = V_S * math.tan(gentle) / math.sqrt(mu * mu - math.tan(gentle) ** 2)
    assert np.abs(creeping.qd[creeping.t > 0.1, 0]).max() < bound * (1 + 1e-3)


def impacts(normal: np.ndarray) -> list[tuple[int, int]]:
    """(last sample before, first sample after) of each stretch of samples with a contact force."""
    touching = normal > 0
    starts = np.flatnonzero(~touching[:-1] & touching[1:])
    ends = np.flatnonzero(touching[:-1] & ~touching[1:]) + 1
    return [(s, next(e for e in ends if e > s)) for s in starts if any(ends > s)]


@pytest.mark.slow  # 3 s (the README's run is held under 5 minutes)
def test_a_box_dropped_on_a_corner_loses_energy_at_every_impact():
    """Tilted about x and y and dropped 0.1 m with c_d = 0.3 s/m (e ≈ 1 − c_d v ≈ 0.6 at 1.4 m/s), the box lands on
    a corner, then on edges and corners, bouncing (15 impacts in 1 s): at every impact (a stretch of samples with
    contact force) the total energy (kinetic, gravity's and the contact's elastic) after it is lower than before
    it, and it never rises anywhere beyond the integrator's error."""
    model = box_body([box(0.5, dissipation=0.3)], z=0.15, rx=0.4, ry=0.3)
    result = simulate(model, 1.0, samples=4001, rtol=RTOL, atol=ATOL)
    total = result.total
    found = impacts(column(result, "m_box.normal_force"))
    assert len(found) >= 10
    for before, after in found:
        assert total[after] < total[before] - 1e-6 * abs(total[0])
    error = result.energy_drift * abs(total[0])
    assert np.diff(total).max() <= 10 * error + 1e-12 * abs(total[0])


@pytest.mark.slow
def test_a_rigid_box_dropped_on_a_corner_loses_energy_at_every_impact():
    """The same drop with rigid contacts (plastic impacts, e = 0; Moreau–Jean steps of 1 ms): the box lands on a
    corner at 0.127 s, tips onto its edge and face and rests on the face from 0.171 s (two stretches of contact:
    the corner's, and the rest; before a step could stop a corner short of the plane, the box hopped in eleven);
    each stretch takes energy out (1e-4 J and more, against the scheme's own drift in flight of a few 1e-6 J), and
    it rests on its face to within the corners' sinking in the step that tipped it (2.6e-4 m; 0 at 0.1 ms)."""
    model = box_body([box(0.5)], z=0.15, rx=0.4, ry=0.3)
    result = simulate(model, 1.0, samples=1001, contact="rigid")
    total = result.total
    found = impacts(column(result, "m_box.normal_force"))
    assert 0.12 < result.t[found[0][0]] < 0.14
    for before, after in found:
        assert total[after] < total[before] - 1e-6 * abs(total[0])
    assert total[-1] < 0.2 * total[0]
    speed = np.abs(result.qd[:, :3]).max() + np.abs(result.qd[:, 3:]).max() * np.linalg.norm(HALF)
    assert abs(result.q[-1, 2] - HALF[2]) <= speed * 1e-3
    assert np.abs(result.qd[-1]).max() <= 1e-9


def apexes(result, height: float) -> np.ndarray:
    """The start height and the apex of each flight after it (the bottom face's height plus ż² / 2g at the sample
    where ż turns from rising to falling)."""
    z = result.q[:, 2] - HALF[2] + result.qd[:, 2] ** 2 / (2 * G)
    tops = [k for k in range(1, len(result.t)) if result.qd[k - 1, 2] > 0 >= result.qd[k, 2]]
    return np.array([height] + [z[k] for k in tops])


@pytest.mark.slow
def test_a_rigid_box_dropped_flat_rebounds_to_e_squared_of_its_height_and_never_gains_energy():
    """Dropped flat from 1 m with e = 0.5, its four bottom corners strike at once (a Delassus matrix of rank 3 on
    12 rows): each of its first three rebounds reaches e² of the height before (1e-3: the scheme reverses the fall
    within a step of the touch-down, at most |v| h above the plane, which moves a ratio by at most
    3 |v| h / apex, 6.6e-4 at h = 25 µs), the total energy never rises beyond rounding (no spin: each flight is
    exact), and it comes to rest on its face."""
    e, height = 0.5, 1.0
    result = simulate(box_body([box(restitution=e)], z=HALF[2] + height), 1.6, samples=1601, contact="rigid",
                      step=2.5e-5)  # fmt: skip
    tops = apexes(result, height)
    assert len(tops) >= 4
    assert tops[1:4] / tops[:3] == pytest.approx(np.full(3, e * e), rel=1e-3)
    total = result.total
    assert np.diff(total).max() <= 64 * np.finfo(float).eps * total[0]
    assert abs(result.q[-1, 2] - HALF[2]) < 1e-6 and np.abs(result.qd[-1]).max() < 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["box", "corner spheres"])
def test_a_rigid_box_landing_nearly_flat_with_restitution_loses_energy_at_every_impact(shape):
    """Tilted by 1 and 2 mrad and dropped 0.1 m with e = 0.5, a box (or eight sphere contacts at its corners) lands
    on a corner and its face within a few steps: Newton's law per corner asks rebounds that no motion gives exactly
    (the four coplanar corners move with three of the body's speeds), which left the cone solver 1e-6 short of its
    tolerance after 20 000 iterations; the rebound asked is now the part impulses can give. Every impact takes
    energy out, and the box comes to rest flat on the plane (its energy m g times its centre's height there)."""
    e, radius = 0.5, 1e-3 if shape == "corner spheres" else 0.0
    if shape == "box":
        contacts, points = [box(restitution=e)], None
    else:
        points = {f"k{i}": list(np.multiply(signs, HALF)) for i, signs in enumerate(CORNER_SIGNS)}
        contacts = [Contact(f"s{i}", "1", f"k{i}", radius, K, N_EXP, C_D, 0.5, V_S, restitution=e) for i in range(8)]
    model = box_body(contacts, z=HALF[2] + radius + 0.1, points=points, rx=1e-3, ry=2e-3)
    result = simulate(model, 0.6, samples=601, contact="rigid", step=1e-4)
    total = result.total
    forces = sum(column(result, f"m_{c.name}.normal_force") for c in contacts)
    found = impacts(forces)
    assert len(found) >= 5
    for before, after in found:
        assert total[after] < total[before]
    assert np.abs(result.qd[-1]).max() < 1e-6
    assert total[-1] == pytest.approx(MASS * G * (HALF[2] + radius), rel=1e-6)


def tetrahedron() -> np.ndarray:
    return np.array([[0.05, 0.0, -0.03], [-0.03, 0.04, -0.02], [-0.02, -0.05, -0.025], [0.01, 0.0, 0.06]])


@pytest.mark.slow  # 5 s: two meshes' engines
def test_a_tetrahedron_mesh_is_its_four_vertex_spheres():
    """A mesh of four vertices turned by rpy, each a sphere of 1 mm, against four sphere contacts at the same
    vertices placed as body points by hand (R = Rz Ry Rx): the generalized forces at pressing, sliding states
    agree to 1e-12 of their scale, and so do short runs of the two."""
    rpy = [0.3, -0.2, 0.7]
    (cr, sr), (cp, sp), (cy, sy) = ((math.cos(a), math.sin(a)) for a in rpy)
    Rz, Ry = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]]), np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    R = Rz @ Ry @ np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    centre = np.array([0.01, -0.02, 0.0])
    shape = {"shape": "mesh", "vertices": tetrahedron().tolist(), "rpy": rpy}
    mesh = box_body([Contact("m", "1", "p", 1e-3, K, N_EXP, C_D, 0.5, V_S, **shape)], z=0.04, points={"p": [*centre]})
    corners = {f"v{k}": (centre + R @ v).tolist() for k, v in enumerate(tetrahedron())}
    spheres = box_body([Contact(f"s{k}", "1", f"v{k}", 1e-3, K, N_EXP, C_D, 0.5, V_S) for k in range(4)], z=0.04,
                       points=corners)  # fmt: skip
    one, four = AppliedForces(Mechanism(mesh)), AppliedForces(Mechanism(spheres))
    rng = np.random.default_rng(3)
    pressing = 0
    for _ in range(6):
        q = np.array([[0, 0, 0.04, 0, 0, 0]]) + rng.normal(0, [0.01, 0.01, 0.01, 0.3, 0.3, 0.3])
        v = rng.normal(0, 0.3, (1, 6))
        a, b = one.generalized(0.0, q, v)[0], four.generalized(0.0, q, v)[0]
        assert np.abs(a - b).max() <= 1e-12 * max(np.abs(b).max(), 1e-300)
        pressing += np.abs(b).max() > 0
    assert pressing >= 3
    runs = [simulate(m, 0.3, samples=31, rtol=RTOL, atol=ATOL) for m in (mesh, spheres)]
    assert np.abs(runs[0].q - runs[1].q).max() < 1e-6  # two runs' global errors at rtol 1e-10, through impacts


CUBE_OBJ = (
    "\n".join(f"v {x} {y} {z}" for x in (-1, 1) for y in (-1, 1) for z in (-1, 1))
    + """
f 1 2 4 3
f 5 7 8 6
f 1 5 6 2
f 3 4 8 7
f 1 3 7 5
f 2 6 8 4
"""
)


def robot(geometry: str) -> str:
    return f"""<robot name="block"><link name="block">
  <inertial><mass value="1"/><inertia ixx="0.001" iyy="0.002" izz="0.003" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><origin xyz="0.01 0 0.02" rpy="0.2 0.1 0.3"/><geometry>{geometry}</geometry></collision>
</link></robot>"""


def test_a_cube_mesh_imports_as_the_box_it_is(tmp_path):
    """A URDF's cube mesh (an OBJ of half-size 1 scaled to 0.1 × 0.05 × 0.025) and its box of the same size and
    pose import as a convex mesh of 8 vertices and a box; both get the ground under their lowest corner, and their
    generalized forces agree to 1e-12 of their scale at pressing, sliding states."""
    (tmp_path / "cube.obj").write_text(CUBE_OBJ)
    (tmp_path / "mesh.urdf").write_text(robot('<mesh filename="cube.obj" scale="0.1 0.05 0.025"/>'))
    (tmp_path / "box.urdf").write_text(robot('<box size="0.2 0.1 0.05"/>'))
    models = [import_mechanism(tmp_path / f"{name}.urdf").model for name in ("mesh", "box")]
    (mesh,), (box_contact,) = ([f for f in m.forces if f.type == "contact"] for m in models)
    assert mesh.shape == "mesh" and len(mesh.vertices) == 8 and mesh.rpy is None
    assert box_contact.shape == "box" and box_contact.half_extents == pytest.approx(list(HALF), rel=1e-15)
    from scipy.spatial.transform import Rotation

    corners = np.array(HALF) * CORNER_SIGNS @ Rotation.from_euler("xyz", [0.2, 0.1, 0.3]).as_matrix().T
    lowest = 0.02 + corners[:, 2].min()  # the collision origin's height plus the lowest turned corner's
    assert [m.parameter_values()["ground_z"] for m in models] == pytest.approx([lowest, lowest], abs=1e-12)
    laws = [AppliedForces(Mechanism(m)) for m in models]
    q0 = Mechanism(models[0]).tree.initial_coordinates()
    rng, pressing = np.random.default_rng(5), 0
    for _ in range(6):
        q = q0[None] + rng.normal([0, 0, -0.003, 0, 0, 0], [0.01, 0.01, 0.001, 0.05, 0.05, 0.05])
        v = rng.normal(0, 0.01, (1, len(q0)))
        a, b = (law.generalized(0.0, q, v)[0] for law in laws)
        assert np.abs(a - b).max() <= 1e-12 * max(np.abs(b).max(), 1e-300)
        pressing += np.abs(b).max() > 0
    assert pressing >= 3


def test_the_compiled_engine_equals_the_numpy_path_for_a_box_and_a_mesh():
    """The engine's accelerations (the shapes traced into C) against the numpy forces and the articulated-body
    algorithm, at states where the turned box and the mesh press, slide and tilt: to 1e-12 of their scale."""
    model = box_body([box(0.4, rpy=[0.1, 0.0, 0.2]),
                      Contact("m", "1", "c", 0.0, K, N_EXP, C_D, 0.5, V_S, shape="mesh",
                              vertices=tetrahedron().tolist())])  # fmt: skip
    eng = engine(model)
    forces = AppliedForces(eng.mech)
    rng = np.random.default_rng(11)
    q = eng.mech.tree.initial_coordinates() + rng.normal(0, [1e-3, 1e-3, 3e-3, 0.05, 0.05, 0.05], (4, 6))
    v = rng.normal(0, [0.3, 0.3, 0.005, 0.02, 0.02, 0.02], (4, 6))  # sliding, pressing slowly
    Q = forces.generalized(0.0, q, v)
    assert (np.abs(Q[:, 3:]).max(axis=1) > 0).sum() >= 3  # contact moments: the shapes press
    reference = forward_dynamics(eng.mech, q, v, Q)
    ours = np.array([eng.accelerations(0.0, q[k], v[k]) for k in range(4)])
    assert np.abs(ours - reference).max() <= 1e-12 * max(1.0, np.abs(reference).max())


@pytest.mark.parametrize(
    ("fields", "where", "words"),
    [
        ({"shape": "cone"}, "shape", "sphere, box or mesh"),
        ({"shape": "box"}, "half_extents", "is missing"),
        ({"shape": "box", "half_extents": [0.1, 0.0, 0.1]}, "half_extents", "three half extents > 0"),
        ({"shape": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]}, "vertices", "spans no volume"),
        ({"shape": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]]}, "vertices", "at least four"),
        ({"half_extents": [0.1, 0.1, 0.1]}, "half_extents", "is given for a sphere"),
        ({"shape": "box", "half_extents": [0.1, 0.1, 0.1], "radius": -0.01}, "radius", ">= 0"),
    ],
)
def test_a_bad_shape_is_named_with_its_body_field_and_what_is_valid(fields, where, words):
    element = box() if fields.get("shape") == "box" else Contact("box", "1", "c", 0.01, K, N_EXP, C_D, 0.5, V_S)
    for key, value in ({"half_extents": None} | fields).items():
        setattr(element, key, value)
    model = box_body([])
    model.forces = [element]
    with pytest.raises(ModelError) as error:
        loads(dumps(model))
    text = str(error.value)
    assert f"force 'box'.{where}" in text and words in text


def test_the_window_chooses_a_contacts_shape_and_draws_it(tmp_path):
    """The properties panel's shape choice turns a sphere into a box (of the sphere's radius as half extent,
    sharp corners), then into a mesh of that box's corners, whose vertices may be typed or read from a mesh
    file's hull; the 3D view's mesh of each shape has the shape's vertices, in body coordinates."""
    from mbstudio.gui.editing.fields import fields_for
    from mbstudio.gui.view3d.scene import contact_mesh

    def field(model, key):
        return next(f for f in fields_for(model, ("force", "foot"))[1] if f.name == key)

    model = box_body([Contact("foot", "1", "c", 0.02, K, N_EXP, C_D, 0.5, V_S)])
    assert {f.name for f in fields_for(model, ("force", "foot"))[1]} & {"half_extents", "vertices", "rpy"} == set()
    field(model, "shape").apply(model, "box")
    model = loads(dumps(model))
    assert (model.forces[0].shape, model.forces[0].half_extents, model.forces[0].radius) == ("box", [0.02] * 3, 0)
    drawn = contact_mesh(Mechanism(model), model.forces[0])
    assert np.sort(np.abs(drawn.points), axis=0) == pytest.approx(np.full((8, 3), 0.02), abs=1e-15)
    field(model, "shape").apply(model, "mesh")
    model = loads(dumps(model))
    assert len(model.forces[0].vertices) == 8 and model.forces[0].half_extents is None
    (tmp_path / "cube.obj").write_text(CUBE_OBJ)
    field(model, "vertices").apply(model, str(tmp_path / "cube.obj"))
    assert np.abs(model.forces[0].vertices) == pytest.approx(np.ones((8, 3)))
    with pytest.raises(ModelError, match="neither rows nor a mesh file"):
        field(model, "vertices").apply(model, str(tmp_path / "missing.stl"))
    field(model, "vertices").apply(model, "[[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]")
    model = loads(dumps(model))
    assert len(contact_mesh(Mechanism(model), model.forces[0]).faces) == 4 * 4  # four triangles


def test_a_box_on_a_road_incline_presses_as_on_the_tilted_plane():
    """Against the road z = −x tan θ (a formula road) each vertex meets the road's tangent plane under it, which
    on a plane road is the plane itself: the box's generalized forces equal those against the plane through the
    origin with normal (sin θ, 0, cos θ), at pressing, sliding states, to 1e-12 of their scale; the rigid model's
    bottom corners on the road slide at g (sin θ − μ cos θ) (1e-9, the solver's tolerance) as on the plane; a run
    on the road slides at that acceleration (1e-4) once v ≫ v_s."""
    from mbstudio.model.document import Road

    angle, mu = math.radians(30), 0.3
    tilted = box(mu, plane_normal=[math.sin(angle), 0.0, math.cos(angle)], rpy=[0.0, angle, 0.0])
    on_plane = box_body([tilted], z=HALF[2] / math.cos(angle))
    on_road = box_body([box(mu, against="road", rpy=[0.0, angle, 0.0])], z=HALF[2] / math.cos(angle))
    on_road.road = Road(formula=f"-x * tan({angle!r})")
    on_road = loads(dumps(on_road))
    laws = [AppliedForces(Mechanism(m)) for m in (on_plane, on_road)]
    rng, pressing = np.random.default_rng(8), 0
    for _ in range(6):
        start = [0.0, 0.0, HALF[2] / math.cos(angle) - 1e-3, 0, 0, 0]
        q = np.array([start]) + rng.normal(0, [0.2, 0.2, 5e-4, 0.01, 0.01, 0.01])
        q[0, 2] -= q[0, 0] * math.tan(angle)
        v = rng.normal(0, 0.01, (1, 6))
        a, b = (law.generalized(0.0, q, v)[0] for law in laws)
        assert np.abs(a - b).max() <= 1e-12 * max(np.abs(a).max(), 1e-300)
        pressing += np.abs(a).max() > 0
    assert pressing >= 3
    along = np.array([math.cos(angle), 0.0, -math.sin(angle)])
    expected = G * (math.sin(angle) - mu * math.cos(angle))
    q, sliding_state = Mechanism(on_road).tree.initial_coordinates(), np.r_[along, 0.0, 0.0, 0.0]
    rigid = [rigid_contact_dynamics(Mechanism(m), 0.0, q, sliding_state) for m in (on_plane, on_road)]
    assert rigid[1].names == ["box"] * 4  # the bottom face's corners on the road's tangent plane, rigid too
    assert rigid[1].qdd == pytest.approx(rigid[0].qdd, abs=1e-9 * G)
    assert rigid[1].qdd[:3] @ along == pytest.approx(expected, rel=1e-9)
    result = simulate(on_road, 0.5, samples=101, rtol=RTOL, atol=ATOL)
    sliding = result.qd[:, :3] @ along > 0.5
    assert sliding.sum() > 10
    assert result.qdd[sliding, :3] @ along == pytest.approx(np.full(sliding.sum(), expected), rel=1e-4)


def test_an_mjcf_mesh_geom_imports_as_its_hulls_vertices(tmp_path):
    """An MJCF box-shaped mesh geom (an OBJ cube scaled by the asset) on a free body becomes a mesh contact of its
    8 hull vertices, as MuJoCo placed them, the ground under the lowest at the initial pose: MuJoCo's own
    geom_aabb half sizes (0.1, 0.05, 0.025) below the body's height."""
    pytest.importorskip("mujoco")
    (tmp_path / "cube.obj").write_text(CUBE_OBJ)
    path = tmp_path / "crate.xml"
    path.write_text("""<mujoco model="crate"><asset><mesh name="cube" file="cube.obj" scale="0.1 0.05 0.025"/></asset>
      <worldbody><body name="crate" pos="0 0 0.3"><freejoint/><geom type="mesh" mesh="cube" mass="1"/></body>
      </worldbody></mujoco>""")
    model = import_mechanism(path).model
    (mesh,) = [f for f in model.forces if f.type == "contact"]
    assert mesh.shape == "mesh" and np.abs(mesh.vertices) == pytest.approx(np.tile(HALF, (8, 1)), rel=1e-6)
    assert model.parameter_values()["ground_z"] == pytest.approx(0.3 - HALF[2], abs=1e-6)
