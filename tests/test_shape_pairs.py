"""Contact pairs with a box or a convex mesh on either side (force_laws/contact_pair_law.py, contact_shapes.py,
docs/contact.md): a sphere or a box resting on a fixed box at the law's static penetration, a box sliding on an
inclined box at Coulomb's acceleration, momentum kept by free boxes colliding, energy lost at every impact of a
damped sphere on a box's corner, the compiled engine against the numpy path, and the rigid model's contact points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.rigid_contact import rigid_contact_dynamics
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps, loads
from mbstudio.model.document import Body, ContactPair, Coordinate, ForceMeasure, Frame, Joint
from mbstudio.model.errors import ModelError
from mbstudio.simulation.run import simulate

from .test_contact import FREE, G, free_body, incline
from .test_contact_shapes import column, impacts

MASS, HALF = 1.0, (0.1, 0.05, 0.025)
# the fixed box's half extents, its top face z = 0: deep, as a table's legs and floor would be (thin boxes are
# tests/test_located_contacts.py's: their touch-downs are located)
TABLE = (2.0, 0.5, 10.0)
K, N_EXP, C_D, V_S = 1e6, 1.5, 20.0, 1e-3


def rounding(depth: float) -> float:
    """The relative rounding of k δ^n at a depth δ measured through the fixed box's centre TABLE[2] below its top:
    a few ulps of that length, in units of δ, times n."""
    return 4 * N_EXP * np.finfo(float).eps * TABLE[2] / depth


RADIUS = 0.05
RTOL, ATOL = 1e-10, 1e-12


def pair(name="p", shape2=None, friction=0.5, **fields) -> ContactPair:
    """A pair of the fixed box (side 1, the ground's point "table") and body 1's shape at its point c (side 2)."""
    values = {"shape1": "box", "half_extents1": list(TABLE), "radius1": 0.0, "radius2": RADIUS, "stiffness": K,
              "exponent": N_EXP, "dissipation": C_D, "friction": friction, "stiction_velocity": V_S}  # fmt: skip
    if shape2 == "box":
        values |= {"shape2": "box", "half_extents2": list(HALF), "radius2": 0.0}
    elif shape2 is not None:
        values["shape2"] = shape2
    return ContactPair(name, "ground", "table", "1", "c", **(values | fields))


def on_table(contacts: list[ContactPair], z: float, gravity=(0.0, 0.0, -G), **initial):
    """Body 1 (the 1 kg block 0.2 × 0.1 × 0.05 m's inertia) on a free joint at height z, over the fixed box."""
    a, b, c = HALF
    inertia = tuple(MASS * (u * u + v * v) / 3 for u, v in ((b, c), (a, c), (a, b)))
    model = free_body(MASS, inertia, {"c": [0.0, 0.0, 0.0]}, gravity)
    model.ground.points["table"] = [0.0, 0.0, -TABLE[2]]
    for name, value in ({"z": z} | initial).items():
        model.joints[0].coordinates[FREE.index(name)].initial = value
    model.forces = contacts
    model.measures = [ForceMeasure(f"m_{f.name}", f.name) for f in contacts]
    return loads(dumps(model))


def point_forces(model, q, qd=None) -> np.ndarray:
    """The normal force at each contact point of the model's pairs at one state."""
    mech = Mechanism(model)
    q = np.asarray(q, float)[None]
    qd = np.zeros_like(q) if qd is None else np.asarray(qd, float)[None]
    st = mech.motion(q, qd)
    out = []
    for law in AppliedForces(mech).laws:
        for depth, _, J, normal in law.placements(st):
            out.append(float(law.contact(depth, (J * qd[:, None, :]).sum(axis=2), normal, np.sqrt)[0][0]))
    return np.array(out)


def test_a_sphere_resting_on_a_fixed_box_carries_its_weight():
    """At the static penetration δ_s = (m g / k)^(1/n) the sphere's one contact point pushes m g (to rounding:
    6e-11, the box's depth of 10 m in ulps of δ_s), straight up; the rigid model at δ = 0 holds it with m g (1e-6)
    and q̈ = 0."""
    static = (MASS * G / K) ** (1 / N_EXP)
    model = on_table([pair()], RADIUS - static)
    q = Mechanism(model).tree.initial_coordinates()
    f = point_forces(model, q)
    assert len(f) == 1 and f[0] == pytest.approx(MASS * G, rel=rounding(static))
    Q = AppliedForces(Mechanism(model)).generalized(0.0, q[None], np.zeros((1, 6)))[0]
    assert np.abs(Q - [0, 0, MASS * G, 0, 0, 0]).max() <= rounding(static) * MASS * G
    resting = on_table([pair()], RADIUS)
    rigid = rigid_contact_dynamics(Mechanism(resting), 0.0, Mechanism(resting).tree.initial_coordinates(), np.zeros(6))
    assert rigid.names == ["p"]
    assert abs(rigid.forces[:, 2].sum() / (MASS * G) - 1) < 1e-6
    assert np.abs(rigid.qdd).max() < 1e-9 * G


@pytest.mark.parametrize(("dx", "dz"), [(0.01, 0.03), (0.03, 0.01), (0.02, -0.02)])
def test_a_sphere_beside_a_boxs_edge_overlaps_by_its_radius_less_its_exact_distance(dx, dz):
    """Beyond the fixed box's top edge x = 2, z = 0 (dx, dz from it; dz < 0 beside the side face) the sphere's
    overlap is r − the exact distance to the box, sqrt(dx² + dz²) above the edge and dx beside the face, along the
    line from the box's nearest point: the normal force k δ^n on body 1 points that way (1e-9 of the force)."""
    model = on_table([pair()], dz, x=TABLE[0] + dx)
    q = Mechanism(model).tree.initial_coordinates()
    distance = math.hypot(dx, max(dz, 0.0))
    Q = AppliedForces(Mechanism(model)).generalized(0.0, q[None], np.zeros((1, 6)))[0]
    expected = K * (RADIUS - distance) ** N_EXP * np.array([dx, 0.0, max(dz, 0.0)]) / distance
    assert np.abs(Q[:3] - expected).max() <= 1e-9 * np.abs(expected).max()


def test_a_box_resting_on_a_fixed_box_carries_a_quarter_of_its_weight_at_each_bottom_corner():
    """The block's four bottom corners inside the fixed box by δ_s = (m g / 4k)^(1/n) each push m g / 4 (to
    rounding, as the sphere's),
    the other twelve points (its top corners, the fixed box's corners far outside the block) none; the rigid model
    holds it at δ = 0 on its four bottom corners with forces summing to m g (1e-6)."""
    static = (MASS * G / 4 / K) ** (1 / N_EXP)
    model = on_table([pair(shape2="box")], HALF[2] - static)
    q = Mechanism(model).tree.initial_coordinates()
    f = point_forces(model, q)
    assert len(f) == 16  # the block's 8 corners against the fixed box, and the fixed box's 8 against the block
    loaded = f > 0
    assert loaded.sum() == 4 and f[loaded] == pytest.approx(np.full(4, MASS * G / 4), rel=rounding(static))
    assert abs(f.sum() / (MASS * G) - 1) < rounding(static)
    resting = on_table([pair(shape2="box")], HALF[2])
    rigid = rigid_contact_dynamics(Mechanism(resting), 0.0, Mechanism(resting).tree.initial_coordinates(), np.zeros(6))
    assert rigid.names == ["p"] * 4
    assert abs(rigid.forces[:, 2].sum() / (MASS * G) - 1) < 1e-6
    assert np.abs(rigid.qdd).max() < 1e-9 * G


@pytest.mark.slow  # a tilted box pair's engine and two runs (~5 s): the suite's five minutes
def test_a_box_slides_down_an_inclined_box_at_coulombs_acceleration():
    """Gravity tilted by θ = 30° (the fixed box's axes), μ = 0.3: the block slides at g (sin θ − μ cos θ), the
    compliant model once v ≫ v_s (1e-4), the rigid model at one sliding state (1e-9)."""
    angle, mu = math.radians(30), 0.3
    expected = G * (math.sin(angle) - mu * math.cos(angle))
    static = (MASS * G * math.cos(angle) / 4 / K) ** (1 / N_EXP)
    model = on_table([pair(shape2="box", friction=mu)], HALF[2] - static, incline(angle), x=-1.5)
    result = simulate(model, 0.8, samples=161, rtol=RTOL, atol=ATOL)
    sliding = result.qd[:, 0] > 0.5
    assert sliding.sum() > 50
    assert result.qdd[sliding, 0] == pytest.approx(np.full(sliding.sum(), expected), rel=1e-4)
    resting = on_table([pair(shape2="box", friction=mu)], HALF[2], incline(angle))
    q = Mechanism(resting).tree.initial_coordinates()
    rigid = rigid_contact_dynamics(Mechanism(resting), 0.0, q, np.array([1.0, 0, 0, 0, 0, 0]))
    assert rigid.qdd[0] == pytest.approx(expected, rel=1e-9)


def two_boxes(gap_z: float, rz: float = 0.3, rx: float = 0.2):
    """Two free blocks without gravity, block 2 at gap_z above block 1 and turned by rx, rz. Block 1's contact box
    is 0.6 × 0.6 m, so that block 2's corners land on its top face, and reaches 2 m down from it, so that no
    adaptive step in free flight steps over it."""
    model = free_body(MASS, (0.002, 0.003, 0.004), {"c": [0.0, 0.0, 0.0], "base": [0.0, 0.0, HALF[2] - 1.0]},
                      (0.0, 0.0, 0.0))  # fmt: skip
    model.bodies.append(Body("2", "body", dict(model.bodies[0].inertia) | {"m": 2.0}, {"c": [0.0, 0.0, 0.0]}))
    model.joints.append(Joint("float2", "free", "0", "2", Frame(), Frame(), [Coordinate(f"{n}2") for n in FREE]))
    for name, value in {"z2": gap_z, "rz2": rz, "rx2": rx, "x2": 0.02}.items():
        next(c for c in model.joints[1].coordinates if c.name == name).initial = value
    box = {"half_extents1": [0.3, 0.3, 1.0], "half_extents2": list(HALF), "radius1": 0.0, "radius2": 0.0}
    law = {"stiffness": K, "exponent": N_EXP, "dissipation": 0.5, "friction": 0.4, "stiction_velocity": V_S}
    model.forces = [ContactPair("boxes", "1", "base", "2", "c", shape1="box", shape2="box", **law, **box)]
    model.measures = [ForceMeasure("f", "boxes")]
    return loads(dumps(model))


def momentum(qd, masses=(MASS, 2.0)) -> np.ndarray:
    """The two blocks' linear momentum (their centres of mass at their origins)."""
    return masses[0] * qd[..., 0:3] + masses[1] * qd[..., 6:9]


@pytest.mark.slow
def test_free_boxes_colliding_keep_their_momentum():
    """Two free blocks meeting turned (block 2's lowest corners into block 1's top face): the pair's forces are
    equal and opposite, so the generalized forces' linear parts cancel to rounding (1e-12 of them); the compliant
    run keeps the momentum to 1e-8 of it through the impact, and the rigid model's steps (impulses equal and
    opposite at each contact point) to 1e-12."""
    model = two_boxes(0.06)
    mech = Mechanism(model)
    q = mech.tree.initial_coordinates()
    q[8] = 0.04  # block 2's two lowest corners 3 mm inside block 1
    Q = AppliedForces(mech).generalized(0.0, q[None], np.zeros((1, 12)))[0]
    assert np.abs(Q[:3]).max() > 1.0  # they press
    assert np.abs(Q[:3] + Q[6:9]).max() <= 1e-12 * np.abs(Q[:3]).max()
    speeds = np.zeros(12)
    speeds[8] = -1.0
    result = simulate(model, 0.2, samples=201, rtol=RTOL, atol=ATOL, velocities=speeds)
    assert column(result, "f.normal_force").max() > 10
    p = momentum(result.qd)
    assert np.abs(p - p[0]).max() <= 1e-8 * np.abs(p[0]).max()
    stepped = simulate(model, 0.2, samples=201, contact="rigid", velocities=speeds)
    assert column(stepped, "f.normal_force").max() > 10
    p = momentum(stepped.qd)
    assert np.abs(p - p[0]).max() <= 1e-12 * np.abs(p[0]).max()
    for run in (result, stepped):  # block 2 stays on block 1's top (their centres 0.05 m apart at rest, flat)
        assert (run.q[:, 8] - run.q[:, 2]).min() > HALF[2]


def test_a_box_on_the_fixed_box_presses_as_on_the_ground_plane():
    """Within the fixed box's top face the deepest face of every pressed vertex is the top, whose plane is the
    ground plane z = 0: the pair's generalized forces equal a box contact's on the plane (contact_law.py, an
    independent implementation) to 1e-12 of their scale at states where it presses, tilts and moves. Frictionless:
    with friction the two differ by design, the pair's point being δ/2 further along n (docs/contact.md)."""
    from mbstudio.model.document import Contact

    on_pair = on_table([pair(shape2="box", friction=0.0)], 0.02)
    plane = Contact("b", "1", "c", 0.0, K, N_EXP, C_D, 0.0, V_S, shape="box", half_extents=list(HALF))
    on_plane = on_table([], 0.02)
    on_plane.forces, on_plane.measures = [plane], []
    on_plane = loads(dumps(on_plane))
    rng = np.random.default_rng(5)
    q = Mechanism(on_pair).tree.initial_coordinates() + rng.normal(0, [0.3, 0.1, 3e-3, 0.1, 0.1, 1.0], (8, 6))
    v = rng.normal(0, [0.3, 0.3, 0.05, 0.5, 0.5, 0.5], (8, 6))
    Q_pair = AppliedForces(Mechanism(on_pair)).generalized(0.0, q, v)
    Q_plane = AppliedForces(Mechanism(on_plane)).generalized(0.0, q, v)
    assert (np.abs(Q_plane[:, 2]) > 0).sum() >= 6
    assert np.abs(Q_pair - Q_plane).max() <= 1e-12 * np.abs(Q_plane).max()


def test_two_boxes_crossed_edge_to_edge_press_at_their_crossings():
    """Two blocks crossed like a plus sign (block 2 turned a quarter turn about z) and sunk 1 mm into each other
    overlap in a slab with no vertex of either inside the other (every vertex contact is apart by 0.04 m or more):
    the edges' crossings carry the contact, the four top and bottom long edges crossing 1 mm deep, and the pair
    pushes the blocks apart along z by 4 k (1 mm)^n, with no moment (to rounding; tests/test_edge_contacts.py)."""
    model = two_boxes(0.0, rz=math.pi / 2, rx=0.0)
    model.forces[0].half_extents1 = list(HALF)
    model.forces[0].point1 = "c"
    model.forces[0].rpy2 = [0.0, 0.0, math.pi / 2]  # the free joint's rz is not the yaw's angle: a quarter turn
    model.joints[1].coordinates[FREE.index("rz")].initial = 0.0
    model = loads(dumps(model))
    mech = Mechanism(model)
    q = mech.tree.initial_coordinates()
    q[6], q[8] = 0.0, 2 * HALF[2] - 1e-3
    st = mech.motion(q[None])
    depths = [float(np.asarray(got[0], float)[0]) for got in AppliedForces(mech).laws[0].placements(st)]
    assert len(depths) == 16 and max(depths) < -0.04  # the nearest vertex is 0.05 m from the other's solid
    Q = AppliedForces(mech).generalized(0.0, q[None], np.zeros((1, 12)))[0]
    push = 4 * K * 1e-3**N_EXP
    expected = np.zeros(12)
    expected[2], expected[8] = -push, push
    assert np.abs(Q - expected).max() <= 1e-12 * push


def test_a_damped_sphere_dropped_on_a_boxs_corner_loses_energy_at_every_impact():
    """A sphere dropped over the fixed box's top corner, its centre 0.5 mm beyond the x face and 0.3 mm beyond the y
    face (the corner's region, where the box's exact distance and its normal from the corner apply), with
    c_d = 0.3 s/m bounces on the corner (3 impacts in 1 s, tipped off it a little each time): at every impact the
    total energy after is lower than before, and it never rises beyond the integrator's error."""
    model = on_table([pair(dissipation=0.3)], 0.15, x=TABLE[0] + 5e-4, y=TABLE[1] + 3e-4)
    result = simulate(model, 1.0, samples=4001, rtol=RTOL, atol=ATOL)
    total = result.total
    found = impacts(column(result, "m_p.normal_force"))
    assert len(found) >= 3
    for before, after in found:
        assert total[after] < total[before] - 1e-6 * abs(total[0])
    error = result.energy_drift * abs(total[0])
    assert np.diff(total).max() <= 10 * error + 1e-12 * abs(total[0])


@pytest.mark.slow  # three engines compiled (~15 s)
def test_the_compiled_engine_equals_the_numpy_path_for_boxes_and_meshes():
    """The engine's accelerations (the faces' max traced with if_else) against the numpy forces and the
    articulated-body algorithm, for a turned box on the fixed box, and for a tetrahedron mesh: to 1e-12 of their
    scale at states where they press and slide."""
    mesh = [[0.0, 0.0, -0.03], [0.08, 0.0, 0.02], [-0.04, 0.07, 0.02], [-0.04, -0.07, 0.02]]
    for contact, depth in ((pair(shape2="box", rpy2=[0.1, 0.0, 0.2]), TABLE[2]),
                           (pair(shape2="mesh", vertices2=mesh, radius2=0.002), TABLE[2]),
                           (pair(shape1="mesh", half_extents1=None, vertices1=mesh), 0.02)):  # fmt: skip
        model = on_table([contact], 0.02 if depth == TABLE[2] else 0.05)
        model.ground.points["table"] = [0.0, 0.0, -depth]  # the tetrahedron's top face at z = 0
        model = loads(dumps(model))
        eng = engine(model)
        forces = AppliedForces(eng.mech)
        rng = np.random.default_rng(11)
        q = eng.mech.tree.initial_coordinates() + rng.normal(0, [1e-3, 1e-3, 3e-3, 0.05, 0.05, 0.05], (4, 6))
        v = rng.normal(0, [0.3, 0.3, 0.005, 0.02, 0.02, 0.02], (4, 6))
        Q = forces.generalized(0.0, q, v)
        assert (np.abs(Q).max(axis=1) > 0).sum() >= 2
        reference = forward_dynamics(eng.mech, q, v, Q)
        ours = np.array([eng.accelerations(0.0, q[k], v[k]) for k in range(4)])
        assert np.abs(ours - reference).max() <= 1e-12 * max(1.0, np.abs(reference).max())


@pytest.mark.parametrize(
    ("fields", "where", "words"),
    [
        ({"shape2": "cone"}, "shape2", "sphere, box or mesh"),
        ({"shape2": "box"}, "half_extents2", "is missing"),
        ({"half_extents2": [0.1, 0.1, 0.1]}, "half_extents2", "is given for a sphere"),
        ({"shape2": "box", "half_extents2": [0.1, 0.1, 0.1], "radius2": -0.01}, "radius2", ">= 0"),
        ({"radius2": 0.0}, "radius2", "a radius > 0"),
        (
            {"shape1": "mesh", "half_extents1": None, "vertices1": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]},
            "vertices1",
            "spans no volume",
        ),
    ],
)
def test_a_bad_pair_shape_is_named_with_its_field_and_what_is_valid(fields, where, words):
    model = on_table([pair()], 0.2)
    for key, value in fields.items():
        setattr(model.forces[0], key, value)
    with pytest.raises(ModelError, match=words) as raised:
        loads(dumps(model))
    assert f"'p'.{where}" in str(raised.value)


def test_a_capsule_with_a_box_is_refused():
    model = on_table([pair(shape2="box")], 0.2)
    model.bodies[0].points["d"] = [0.1, 0.0, 0.0]
    model.forces[0].end2 = "d"
    with pytest.raises(ModelError, match="meets spheres only"):
        loads(dumps(model))


def test_the_window_edits_each_sides_shape():
    """The properties panel shows a pair's side shapes as a contact's (shape1, shape2 choices; a box's half extents
    and a mesh's vertices only for that shape): choosing box for side 2 gives it sharp corners and the sphere's
    radius as half extents, and the model it writes loads."""
    from mbstudio.gui.editing.fields import fields_for

    def field(model, key):
        return next(f for f in fields_for(model, ("force", "p"))[1] if f.name == key)

    model = on_table([pair(radius2=0.02)], 0.2)
    names = {f.name for f in fields_for(model, ("force", "p"))[1]}
    assert {"shape1", "half_extents1", "shape2"} <= names and not names & {"half_extents2", "vertices2", "vertices1"}
    field(model, "shape2").apply(model, "box")
    model = loads(dumps(model))
    side = model.forces[0]
    assert (side.shape2, side.half_extents2, side.radius2) == ("box", [0.02] * 3, 0)
    field(model, "half_extents2").apply(model, [0.03, 0.02, 0.01])
    field(model, "shape1").apply(model, "mesh")
    model = loads(dumps(model))
    assert model.forces[0].half_extents2 == [0.03, 0.02, 0.01] and len(model.forces[0].vertices1) == 8
