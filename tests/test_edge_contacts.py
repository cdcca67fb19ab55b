"""Edge–edge contacts of contact pairs between boxes and convex meshes, and a mesh's exact distance outside
(contact_shapes.edge_crossing, contact_shapes.mesh_distance, force_laws/contact_pair_law.py, docs/contact.md): two
blocks crossed like a plus sign carry the weight at their edges' four crossings (compliant and rigid, at rest and
dropped), a box given as a mesh crosses as the box, the compiled engine against the numpy path, and the mesh's
distance against the projection's optimality conditions and a second formulation over the hull's corners."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import nnls
from scipy.spatial import ConvexHull

from mbstudio.dynamics.contact_shapes import _hull_triangles, _rows, hull_vertices, mesh_distance
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.rigid_contact import rigid_contact_dynamics
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps, loads
from mbstudio.simulation.run import simulate

from .test_contact import G
from .test_contact_shapes import column, impacts
from .test_shape_pairs import HALF, MASS, N_EXP, RADIUS, K, on_table, pair

DEEP = 1.0  # m, the fixed block's half height: its top face z = 0, deep enough that no adaptive step crosses it
STATIC = (MASS * G / 4 / K) ** (1 / N_EXP)  # each crossing's static penetration under a quarter of the weight
CORNERS = [[sx * HALF[0], sy * HALF[1], sz * DEEP] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]


def rounding() -> float:
    """The relative rounding of k δ^n at δ = STATIC measured through the fixed block's centre DEEP below its top."""
    return 8 * N_EXP * np.finfo(float).eps * DEEP / STATIC


def crossed(z: float, as_mesh: bool = False, roll: float = 0.0, sphere: bool = False, **fields):
    """Body 1's block (side 2) turned a quarter turn about z by its shape's yaw (and by `roll` about its own long
    axis), over a fixed block of the same plan (side 1, its top face z = 0): their long edges cross at
    (±0.05, ±0.05) with no corner of either over the other's face. `as_mesh`: the fixed block given as the mesh of
    its corners; `sphere`: body 1 a sphere of the pairs' radius instead of the block."""
    side1 = ({"shape1": "mesh", "vertices1": CORNERS, "half_extents1": None} if as_mesh
             else {"half_extents1": [HALF[0], HALF[1], DEEP]})  # fmt: skip
    side2 = {} if sphere else {"shape2": "box", "rpy2": [roll, 0.0, math.pi / 2]}
    contact = pair(**side2, **side1, **fields)
    model = on_table([contact], z)
    model.ground.points["table"] = [0.0, 0.0, -DEEP]
    return loads(dumps(model))


def pressing(model, q, qd=None) -> list[tuple[float, np.ndarray, np.ndarray, float]]:
    """(δ, c, n, f_n) of every contact point the pair presses through (vertices, then crossings) at one state."""
    mech = Mechanism(model)
    q = np.asarray(q, float)[None]
    qd = np.zeros_like(q) if qd is None else np.asarray(qd, float)[None]
    law = AppliedForces(mech).laws[0]
    out = []
    for depth, point, J, normal in law.pressing(mech.motion(q, qd)):
        f_n = law.contact(depth, (J * qd[:, None, :]).sum(axis=2), normal, np.sqrt)[0]
        out.append((float(depth[0]), np.asarray(point, float)[0], np.asarray(normal, float)[0], float(f_n[0])))
    return out


def test_crossed_blocks_carry_the_weight_at_their_four_crossings():
    """At z = c − δ_s the block's sixteen corners are all apart (0.05 m from the other solid), and the weight is
    carried by the four crossings of the fixed block's top long edges with the block's bottom long edges, each
    pressed in by δ_s = (m g / 4k)^(1/n) along +z and pushing m g / 4 (to rounding), at (±0.05, ±0.05, −δ_s/2);
    the generalized force is m g up with no moment. The rigid model at δ = 0 holds the block there on the same
    four crossings, its forces summing to m g to rounding and q̈ = 0."""
    model = crossed(HALF[2] - STATIC)
    q = Mechanism(model).tree.initial_coordinates()
    points = pressing(model, q)
    assert len(points) == 16 + 36  # the corners both ways, and the nine pairs of axes' facing edges, 2 × 2 each
    assert max(depth for depth, *_ in points[:16]) < -0.04
    loaded = [(point, normal, f) for depth, point, normal, f in points if f > 0]
    assert len(loaded) == 4
    for point, normal, f in loaded:
        assert f == pytest.approx(MASS * G / 4, rel=rounding())
        assert np.abs(normal - [0, 0, 1]).max() <= 1e-15
        assert np.abs(np.abs(point[:2]) - 0.05).max() <= 1e-15 and point[2] == pytest.approx(-STATIC / 2, rel=1e-9)
    Q = AppliedForces(Mechanism(model)).generalized(0.0, q[None], np.zeros((1, 6)))[0]
    assert np.abs(Q - [0, 0, MASS * G, 0, 0, 0]).max() <= rounding() * MASS * G
    resting = crossed(HALF[2])
    mech = Mechanism(resting)
    rigid = rigid_contact_dynamics(mech, 0.0, mech.tree.initial_coordinates(), np.zeros(6))
    assert rigid.names == ["p"] * 4
    assert abs(rigid.forces[:, 2].sum() / (MASS * G) - 1) <= 1e-12
    assert np.abs(rigid.forces[:, :2]).max() <= 1e-12 * MASS * G
    assert np.abs(rigid.qdd).max() <= 1e-9 * G


def test_a_tilted_crossing_presses_deeper_where_it_sinks_deeper():
    """Rolled by 5 mrad about its long axis (world y) and sunk 0.5 mm at its centre, the block's bottom long edges
    stay horizontal at heights z0 + y_l sin θ − c cos θ (y_l = ±0.05 its own offsets, at world x = −y_l cos θ −
    c sin θ): each crossing presses by its edge's depth below the top face (to 1e-9 of it), so the four forces
    differ, no corner is pressed, and the generalized moment about y is the forces' −Σ x f_z (1e-9)."""
    roll, sunk = 5e-3, 5e-4
    model = crossed(HALF[2] - sunk, roll=roll)
    q = Mechanism(model).tree.initial_coordinates()
    points = pressing(model, q)
    assert max(depth for depth, *_ in points[:16]) < 0
    loaded = [(point, depth, f) for depth, point, _, f in points if f > 0]
    assert len(loaded) == 4
    for offset in (-HALF[1], HALF[1]):
        x = -offset * math.cos(roll) - HALF[2] * math.sin(roll)
        depth = -(HALF[2] - sunk + offset * math.sin(roll) - HALF[2] * math.cos(roll))
        got = [d for point, d, _ in loaded if abs(point[0] - x) < 1e-9]
        assert len(got) == 2 and got == pytest.approx([depth, depth], rel=1e-9)
    Q = AppliedForces(Mechanism(model)).generalized(0.0, q[None], np.zeros((1, 6)))[0]
    moment = -sum(point[0] * f for point, _, f in loaded)
    assert Q[2] == pytest.approx(sum(f for *_, f in loaded), rel=1e-12)
    assert abs(moment) > 1e-3 and Q[4] == pytest.approx(moment, rel=1e-9)


def test_a_box_given_as_a_mesh_crosses_as_the_box():
    """The fixed block as the mesh of its eight corners (every edge of the mesh against every edge of the block)
    against the block as a box (the facing edges only): the same generalized forces (to 1e-12 of their scale) at
    states where the crossed blocks press, tilt, turn and slide, so the 36 facing pairs miss no crossing the 144
    find."""
    as_box, as_mesh = crossed(0.02), crossed(0.02, as_mesh=True)
    rng = np.random.default_rng(3)
    q = Mechanism(as_box).tree.initial_coordinates() + rng.normal(0, [0.01, 0.01, 2e-4, 0.01, 0.01, 0.05], (8, 6))
    q[:, 2] = HALF[2] - rng.uniform(0, 2e-3, 8)
    v = rng.normal(0, [0.1, 0.1, 0.05, 0.3, 0.3, 0.3], (8, 6))
    Q_box = AppliedForces(Mechanism(as_box)).generalized(0.0, q, v)
    Q_mesh = AppliedForces(Mechanism(as_mesh)).generalized(0.0, q, v)
    assert (np.abs(Q_box[:, 2]) > 1.0).sum() >= 6
    assert np.abs(Q_box - Q_mesh).max() <= 1e-12 * np.abs(Q_box).max()


@pytest.mark.slow  # two engines compiled and a rigid run (~25 s)
def test_crossed_blocks_dropped_come_to_rest_on_their_crossings():
    """Dropped 5 mm with c_d = 2 s/m: the compliant run bounces on the four crossings (every impact losing energy,
    the total never rising beyond the integrator's error), never passes through, and after 2 s rests at the static
    penetration (1 %) with the contact force m g (1e-4); the rigid run lands within one step's travel (v h) of
    the top face and rests there with m g (1e-12)."""
    model = crossed(HALF[2] + 5e-3, dissipation=2.0)
    result = simulate(model, 2.0, samples=4001, rtol=1e-10, atol=1e-12)
    normal = column(result, "m_p.normal_force")
    total = result.total
    found = impacts(normal)
    assert len(found) >= 2
    for before, after in found:
        assert total[after] < total[before] - 1e-6 * abs(total[0])
    assert np.diff(total).max() <= 10 * result.energy_drift * abs(total[0]) + 1e-12 * abs(total[0])
    assert result.q[:, 2].min() > HALF[2] - 10 * STATIC
    assert HALF[2] - result.q[-1, 2] == pytest.approx(STATIC, rel=1e-2)
    assert normal[-1] == pytest.approx(MASS * G, rel=1e-4)
    stepped = simulate(model, 0.5, samples=501, contact="rigid")
    normal = column(stepped, "m_p.normal_force")
    assert normal[-1] == pytest.approx(MASS * G, rel=1e-12)
    landing = math.sqrt(2 * G * 5e-3) * 1e-3  # the landing speed times the 1 ms step: Moreau's deepest reach
    assert stepped.q[:, 2].min() > HALF[2] - landing
    assert np.ptp(stepped.q[-100:, 2]) <= 1e-12  # at rest


@pytest.mark.slow  # two engines compiled (~15 s)
def test_the_compiled_engine_equals_the_numpy_path_at_crossings():
    """The engine's accelerations (the facing edges' choice, the caps and the mesh's exact distance traced with
    if_else) against the numpy forces and the articulated-body algorithm, for the crossed blocks and for the fixed
    block as a mesh under a rounded block (radius 2 mm, so that its corners feel the mesh's exact distance), at
    states where they press, tilt and slide: to 1e-12 of their scale."""
    for model in (crossed(0.02), crossed(0.02, as_mesh=True, radius2=2e-3)):
        eng = engine(model)
        forces = AppliedForces(eng.mech)
        rng = np.random.default_rng(7)
        q = eng.mech.tree.initial_coordinates() + rng.normal(0, [0.01, 0.01, 0.0, 0.01, 0.01, 0.05], (4, 6))
        q[:, 2] = HALF[2] - rng.uniform(0, 2e-3, 4)
        v = rng.normal(0, [0.1, 0.1, 0.05, 0.3, 0.3, 0.3], (4, 6))
        Q = forces.generalized(0.0, q, v)
        assert (np.abs(Q[:, 2]) > 1.0).sum() >= 3
        reference = forward_dynamics(eng.mech, q, v, Q)
        ours = np.array([eng.accelerations(0.0, q[k], v[k]) for k in range(4)])
        assert np.abs(ours - reference).max() <= 1e-12 * max(1.0, np.abs(reference).max())


def _random_mesh(rng) -> np.ndarray:
    """The hull corners of 30 random points in a flattened, shifted ellipsoid (lengths 0.02 to 0.2 m)."""
    points = rng.normal(0, 1, (30, 3))
    points /= np.linalg.norm(points, axis=1)[:, None] * rng.uniform(1.0, 1.3, (30, 1))
    return hull_vertices(points * [0.2, 0.1, 0.05] + [0.03, -0.02, 0.01])


def test_a_meshs_distance_outside_is_the_projection_on_its_hull():
    """For 2000 random points outside a random convex mesh, mesh_distance's nearest point p = y − d n is the
    projection of y on the hull: p lies in the hull (scipy's facet equations, to 1e-13 of its size) and y − p
    makes no acute angle with any corner (p − v)·(y − p) ≥ 0 (the projection's optimality, to 1e-13 of the sizes'
    product), and d equals the distance found by a second formulation, the nearest convex combination of the
    corners (non-negative least squares, to 1e-6 of the size: that solve's own accuracy)."""
    rng = np.random.default_rng(36)
    corners = _random_mesh(rng)
    triangles, _ = _hull_triangles(_rows(corners))
    sides = np.unique(np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]]),
                                axis=1), axis=0)  # fmt: skip
    hull = ConvexHull(corners)
    y = rng.normal(0, 0.15, (4000, 3))
    y = y[(y @ hull.equations[:, :3].T + hull.equations[:, 3]).max(axis=1) > 1e-4][:2000]
    assert len(y) == 2000
    distance, normal = mesh_distance(y, corners, triangles, sides, np.sqrt, 0.0)
    nearest = y - distance[:, None] * normal
    size = np.abs(corners).max()
    assert (nearest @ hull.equations[:, :3].T + hull.equations[:, 3]).max() <= 1e-13 * size
    gaps = y - nearest
    assert np.einsum("nj,nvj->nv", gaps, nearest[:, None, :] - corners[None, :, :]).min() >= -1e-13 * size * size
    assert np.abs(np.linalg.norm(gaps, axis=1) - distance).max() <= 1e-13 * size
    weight = 1e4  # Σλ = 1 as a heavy row: its violation is of order 1 / weight² of the residual
    for k in range(0, 2000, 40):
        system = np.vstack([corners.T, weight * np.ones(len(corners))])
        lam, _ = nnls(system, np.concatenate([y[k], [weight]]))
        assert distance[k] == pytest.approx(np.linalg.norm(corners.T @ lam - y[k]), abs=1e-6 * size)


@pytest.mark.parametrize(("dx", "dy", "dz"), [(0.01, 0.0, 0.03), (0.01, 0.02, 0.03), (0.03, 0.0, -0.01)])
def test_a_sphere_beyond_a_meshs_edge_or_corner_feels_its_exact_distance(dx, dy, dz):
    """The fixed block as the mesh of its corners, a sphere of radius r beyond its top edge x = 0.1, z = 0 (dy = 0),
    its corner (dy > 0) or its side face (dz < 0): the overlap is r less the exact distance (the mesh's, as the box's
    clamp gives it: a second formulation), along the line from the nearest point, k δ^n on body 1 (1e-9)."""
    model = crossed(dz, as_mesh=True, sphere=True)
    mech = Mechanism(model)
    q = mech.tree.initial_coordinates()
    q[0], q[1] = HALF[0] + dx, (HALF[1] + dy) if dy else 0.0
    Q = AppliedForces(mech).generalized(0.0, q[None], np.zeros((1, 6)))[0]
    away = np.array([dx, dy, max(dz, 0.0)])
    distance = np.linalg.norm(away)
    expected = K * (RADIUS - distance) ** N_EXP * away / distance
    assert np.abs(Q[:3] - expected).max() <= 1e-9 * np.abs(expected).max()
