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
TABLE = (2.0, 0.5, 0.1)  # the fixed box's half extents; its top face is z = 0
K, N_EXP, C_D, V_S = 1e6, 1.5, 20.0, 1e-3
RADIUS = 0.05
RTOL, ATOL = 1e-10, 1e-12


def pair(name="p", shape2=None, friction=0.5, **fields) -> ContactPair:
    """A pair of the fixed box (side 1, the ground's point "table") and body 1's shape at its point c (side 2)."""
    values = {"shape1": "box", "half_extents1": list(TABLE), "radius1": 0.0, "radius2": RADIUS, "stiffness": K,
              "exponent": N_EXP, "dissipation": C_D, "friction": friction, "stiction_velocity": V_S}  # fmt: skip
    if shape2 == "box":
        values |= {"shape2": "box", "half_extents2": list(HALF), "radius2": 0.0}
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
    """At the static penetration δ_s = (m g / k)^(1/n) the sphere's one contact point pushes m g (1e-12), straight
    up; the rigid model at δ = 0 holds it with m g (1e-6) and q̈ = 0."""
    static = (MASS * G / K) ** (1 / N_EXP)
    model = on_table([pair()], RADIUS - static)
    q = Mechanism(model).tree.initial_coordinates()
    f = point_forces(model, q)
    assert len(f) == 1 and f[0] == pytest.approx(MASS * G, rel=1e-12)
    Q = AppliedForces(Mechanism(model)).generalized(0.0, q[None], np.zeros((1, 6)))[0]
    assert np.abs(Q - [0, 0, MASS * G, 0, 0, 0]).max() <= 1e-12 * MASS * G
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
    """The block's four bottom corners inside the fixed box by δ_s = (m g / 4k)^(1/n) each push m g / 4 (1e-12),
    the other twelve points (its top corners, the fixed box's corners far outside the block) none; the rigid model
    holds it at δ = 0 on its four bottom corners with forces summing to m g (1e-6)."""
    static = (MASS * G / 4 / K) ** (1 / N_EXP)
    model = on_table([pair(shape2="box")], HALF[2] - static)
    q = Mechanism(model).tree.initial_coordinates()
    f = point_forces(model, q)
    assert len(f) == 16  # the block's 8 corners against the fixed box, and the fixed box's 8 against the block
    loaded = f > 0
    assert loaded.sum() == 4 and f[loaded] == pytest.approx(np.full(4, MASS * G / 4), rel=1e-12)
    assert abs(f.sum() / (MASS * G) - 1) < 1e-12
    resting = on_table([pair(shape2="box")], HALF[2])
    rigid = rigid_contact_dynamics(Mechanism(resting), 0.0, Mechanism(resting).tree.initial_coordinates(), np.zeros(6))
    assert rigid.names == ["p"] * 4
    assert abs(rigid.forces[:, 2].sum() / (MASS * G) - 1) < 1e-6
    assert np.abs(rigid.qdd).max() < 1e-9 * G


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


def two_boxes(gap_z: float, rz: float = 0.3, rx: float = 0.2, v: float = 1.0):
    """Two free blocks without gravity: block 2 turned by rx, rz and moving at v along −z onto block 1 below."""
    model = free_body(MASS, (0.002, 0.003, 0.004), {"c": [0.0, 0.0, 0.0]}, (0.0, 0.0, 0.0))
    model.bodies.append(Body("2", "body", dict(model.bodies[0].values) | {"m": 2.0}, {"c": [0.0, 0.0, 0.0]}))
    model.joints.append(Joint("float2", "free", "0", "2", Frame(), Frame(), [Coordinate(f"{n}2") for n in FREE]))
    for name, value in {"z2": gap_z, "rz2": rz, "rx2": rx, "x2": 0.02}.items():
        next(c for c in model.joints[1].coordinates if c.name == name).initial = value
    next(c for c in model.joints[1].coordinates if c.name == "z2").velocity = -v
    box = {"half_extents1": list(HALF), "half_extents2": list(HALF), "radius1": 0.0, "radius2": 0.0}
    model.forces = [ContactPair("boxes", "1", "c", "2", "c", shape1="box", shape2="box", stiffness=K,
                                exponent=N_EXP, dissipation=0.5, friction=0.4, stiction_velocity=V_S, **box)]  # fmt: skip
    model.measures = [ForceMeasure("f", "boxes")]
    return loads(dumps(model))


def momentum(q, qd, masses=(MASS, 2.0)) -> np.ndarray:
    return masses[0] * qd[..., 0:3] + masses[1] * qd[..., 6:9]


def test_free_boxes_colliding_keep_their_momentum():
    """Two free blocks meeting turned (block 2's corners and edges into block 1's top face): the pair's forces
    are equal and opposite, so the momentum's rate m1 a1 + m2 a2 is zero to rounding of the forces, compliant
    (generalized forces) and rigid (q̈ of the cone problem, 1e-12 of m g); the compliant run keeps the momentum to
    1e-8 of it through the impact."""
    model = two_boxes(0.05)
    mech = Mechanism(model)
    q = mech.tree.initial_coordinates()
    depth = 0.002
    q[8] = HALF[2] + 0.025 - depth  # roughly overlapping: some corners inside
    qd = np.zeros(12)
    qd[8] = -1.0
    Q = AppliedForces(mech).generalized(0.0, q[None], qd[None])[0]
    assert np.abs(Q[:3]).max() > 1.0  # they press
    assert np.abs(Q[:3] + Q[6:9]).max() <= 1e-12 * np.abs(Q[:3]).max()
    touching = two_boxes(0.0)
    mech = Mechanism(touching)
    q = mech.tree.initial_coordinates()
    low = min(((np.asarray(law.placed(mech.motion(q[None]))[0], float)[0]) for law in []), default=None)
    del low
    rigid = rigid_contact_dynamics(mech, 0.0, q, qd)
    assert np.abs(momentum(None, rigid.qdd)).max() <= 1e-12 * G if rigid.names else True
    result = simulate(model, 0.2, samples=201, rtol=RTOL, atol=ATOL)
    assert column(result, "f.normal_force").max() > 10
    p = momentum(result.q, result.qd)
    assert np.abs(p - p[0]).max() <= 1e-8 * np.abs(p[0]).max()
