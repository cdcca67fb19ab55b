"""The road surface z(x, y) from a CSV grid (dynamics/road_surface.py): the interpolation against the functions it
must reproduce, a block of four corner spheres on an incline given as a grid against Newton's and Coulomb's laws
(as tests/test_contact.py checks the tilted plane), a ball on a bump against the nearest point found by brute
force, the tyre on a grid that is a profile against the profile, the compiled engine against the numpy path,
and the file's errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.road_surface import cardinal_weights
from mbstudio.kinematics import Mechanism
from mbstudio.model import Body, Coordinate, Frame, Joint, Model, Parameter, dumps, load, save
from mbstudio.model.document import Contact, ForceMeasure, MagicFormulaTyre, Road, Tyre
from mbstudio.model.errors import ModelError
from mbstudio.simulation.run import simulate

G = 9.81
FREE = ("x", "y", "z", "rx", "ry", "rz")
MASS, HALF, CORNER = 1.0, (0.1, 0.05, 0.025), 0.005
K, N_EXP, C_D, V_S = 1e6, 1.5, 20.0, 1e-3


def write_grid(folder: Path, xs, ys, height, name="road.csv") -> Path:
    """A CSV grid of height(x, y) at xs × ys."""
    lines = ["y \\ x," + ",".join(f"{float(x)!r}" for x in xs)]
    lines += [f"{float(y)!r}," + ",".join(f"{float(height(x, y))!r}" for x in xs) for y in ys]
    (folder / name).write_text("\n".join(lines) + "\n")
    return folder / name


def saved_and_loaded(model: Model, folder: Path) -> Model:
    """The model through its file in `folder` (its road's grid path made absolute there)."""
    save(model, folder / "m.mbs")
    return load(folder / "m.mbs")


def free_body(points: dict, inertia=(0.004, 0.004, 0.004)) -> Model:
    model = Model(name="surface", gravity=[0.0, 0.0, -G])
    values = dict.fromkeys(("mx", "my", "mz", "Ixy", "Ixz", "Iyz"), 0.0) | {"m": MASS}
    values |= dict(zip(("Ixx", "Iyy", "Izz"), inertia, strict=True))
    model.bodies = [Body("1", "body", values, points)]
    model.joints = [Joint("float", "free", "0", "1", Frame(), Frame(), [Coordinate(n) for n in FREE])]
    return model


def block_on_incline(folder: Path, angle: float, friction: float) -> Model:
    """The block of tests/test_contact.py, its corners against a road z = −x tan θ given as a grid, tilted onto
    it at the corners' static penetration under the weight's normal part."""
    write_grid(folder, np.arange(-3.0, 3.01, 0.25), np.arange(-1.0, 1.01, 0.25), lambda x, y: -x * math.tan(angle))
    a, b, c = HALF
    corners = {f"k{i}": [sx * a, sy * b, -c] for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1)))}
    inertia = tuple(MASS * (u * u + v * v) / 3 for u, v in ((b, c), (a, c), (a, b)))
    model = free_body(corners | {"c": [0.0, 0.0, 0.0]}, inertia)
    depth = (MASS * G * math.cos(angle) / 4 / K) ** (1 / N_EXP)
    normal = np.array([math.sin(angle), 0.0, math.cos(angle)])
    start = (c + CORNER - depth) * normal
    coordinates = model.joints[0].coordinates
    for k in range(3):
        coordinates[k].initial = float(start[k])
    coordinates[4].initial = angle  # about y: the body's x axis down the slope
    model.forces = [Contact(p, "1", p, CORNER, K, N_EXP, C_D, friction, V_S, against="road") for p in corners]
    model.measures = [ForceMeasure(f"m{p}", p) for p in corners]
    model.road = Road(surface="road.csv")
    return saved_and_loaded(model, folder)


def column(result, name: str) -> np.ndarray:
    return next(values for label, _, values in result.measures if label == name)


def test_the_interpolation_passes_through_the_heights_and_reproduces_a_plane_inside():
    """Weights at the knots are the unit vectors; a linear function's slope is exact in the inner cells (the
    three-point slopes are exact for a quadratic), level at the ends; the slope is the weights' derivative (a
    central difference of the heights, to its truncation error h² f''' / 6 with f''' of order 1/h³)."""
    xs = np.array([0.0, 0.3, 1.0, 1.4, 2.5])
    w, _ = cardinal_weights(xs, xs)
    assert np.abs(w - np.eye(5)).max() < 1e-15
    inside = np.linspace(0.3, 1.4, 23)
    w, dw = cardinal_weights(xs, inside)
    assert np.abs(w @ (2 * xs - 1) - (2 * inside - 1)).max() < 1e-14
    assert np.abs(dw @ (2 * xs - 1) - 2).max() < 1e-13
    assert np.abs(cardinal_weights(xs, np.array([0.0, 2.5, -1.0, 9.0]))[1] @ xs).max() == 0.0
    z = np.sin(3 * xs)
    at, h = np.linspace(0.01, 2.49, 50), 1e-6
    numeric = (cardinal_weights(xs, at + h)[0] @ z - cardinal_weights(xs, at - h)[0] @ z) / (2 * h)
    assert np.abs(numeric - cardinal_weights(xs, at)[1] @ z).max() < 1e-8


@pytest.mark.slow
def test_a_block_on_a_gentle_grid_incline_rests_with_m_g_cos_theta_along_the_normal(tmp_path):
    """tan θ < μ: the corners' normal forces sum to m g cos θ, the whole contact force balances the weight
    (m g up, to 1e-4 of it once the start's transient has settled), and the block creeps no faster than the
    regularised friction's bound v_s tan θ / sqrt(μ² − tan² θ) (tests/test_contact.py derives it)."""
    angle, mu = math.radians(10), 0.5
    model = block_on_incline(tmp_path, angle, mu)
    result = simulate(model, 0.5, samples=51, rtol=1e-10, atol=1e-12)
    normal = sum(column(result, f"mk{i}.normal_force") for i in range(4))
    assert normal[-1] == pytest.approx(MASS * G * math.cos(angle), rel=1e-4)
    force = np.array([sum(column(result, f"mk{i}.f{a}") for i in range(4))[-1] for a in "xyz"])
    assert force == pytest.approx([0.0, 0.0, MASS * G], abs=1e-4 * MASS * G)
    along = np.array([math.cos(angle), 0.0, -math.sin(angle)])
    bound = V_S * math.tan(angle) / math.sqrt(mu * mu - math.tan(angle) ** 2)
    assert abs(result.qd[-1, :3] @ along) < bound * (1 + 1e-3)


@pytest.mark.slow
def test_a_block_on_a_steep_grid_incline_slides_at_coulombs_acceleration(tmp_path):
    """tan θ > μ: once sliding at v ≫ v_s the block accelerates along the slope at g (sin θ − μ cos θ)."""
    angle, mu = math.radians(30), 0.3
    result = simulate(block_on_incline(tmp_path, angle, mu), 0.6, samples=61, rtol=1e-10, atol=1e-12)
    along = np.array([math.cos(angle), 0.0, -math.sin(angle)])
    sliding = result.qd[:, :3] @ along > 0.5
    assert sliding.sum() > 10
    expected = G * (math.sin(angle) - mu * math.cos(angle))
    assert result.qdd[sliding, :3] @ along == pytest.approx(np.full(sliding.sum(), expected), rel=1e-4)


def bump(x, y):
    return 0.05 * math.exp(-(x * x + y * y) / 0.25)


def ball_on_bump(folder: Path, at=(0.0, 0.0), height=0.2, friction=0.5) -> Model:
    write_grid(folder, np.linspace(-1.5, 1.5, 31), np.linspace(-1.5, 1.5, 31), bump)
    model = free_body({"c": [0.0, 0.0, 0.0]})
    for k, value in enumerate((*at, height)):
        model.joints[0].coordinates[k].initial = value
    model.forces = [Contact("ball", "1", "c", 0.1, 1e5, 1.5, 2.0, friction, 1e-3, against="road")]
    model.measures = [ForceMeasure("f", "ball")]
    model.road = Road(surface="road.csv")
    return saved_and_loaded(model, folder)


@pytest.mark.slow
def test_a_ball_on_top_of_a_bump_settles_on_the_static_penetration(tmp_path):
    """At the bump's top the normal is vertical: the ball settles with k δ^1.5 = m g, its force m g up."""
    result = simulate(ball_on_bump(tmp_path), 1.0, samples=11, rtol=1e-10, atol=1e-12)
    assert column(result, "f.penetration")[-1] == pytest.approx((G / 1e5) ** (1 / 1.5), rel=1e-4)
    force = np.array([column(result, f"f.f{a}")[-1] for a in "xyz"])
    assert force == pytest.approx([0.0, 0.0, G], abs=1e-4 * G)


def test_the_penetration_on_a_bumps_flank_is_the_distance_to_the_nearest_surface_point(tmp_path):
    """Over the flank the sphere's penetration is r minus the distance from its centre to the surface's nearest
    point, found by brute force on a 0.04 mm lattice of the interpolated surface; the contact's normal is the
    direction from that point to the centre (the tangent-plane step errs by the curvature times the squared
    offset of the first foot: 3e-9 m here)."""
    model = ball_on_bump(tmp_path, at=(0.3, 0.1), height=0.125)
    mech = Mechanism(model)
    forces = AppliedForces(mech)
    law = next(law for law in forces.laws if law.element.name == "ball")
    q = mech.tree.initial_coordinates()[None, :]
    depth, point, _, normal = (np.asarray(v, float) for v in law.placed(mech.tree.motion(q)))
    centre = nearest = q[0, :3]
    for half, step in ((0.2, 2e-3), (4e-3, 4e-5)):  # a coarse lattice, then a fine one around its nearest point
        gx, gy = np.meshgrid(*(np.arange(c - half, c + half, step) for c in nearest[:2]))
        lattice = np.column_stack([gx.ravel(), gy.ravel(), forces.road_surface(None, gx.ravel(), gy.ravel())[0]])
        distances = np.linalg.norm(lattice - centre, axis=1)
        nearest = lattice[np.argmin(distances)]
    assert depth[0] == pytest.approx(0.1 - distances.min(), abs=1e-7)  # the lattice's own error: 2e-9 m
    assert normal[0] == pytest.approx((centre - nearest) / distances.min(), abs=1e-3)
    assert depth[0] > 0.0 and point[0] == pytest.approx(centre - 0.1 * normal[0], abs=1e-15)


@pytest.mark.slow
def test_the_compiled_engine_and_the_numpy_path_agree_on_the_bump(tmp_path):
    """Accelerations of the engine (the grid traced into C) against the numpy forces at states pressing into the
    bump's flank and top, to 1e-9 of their scale."""
    model = ball_on_bump(tmp_path, at=(0.2, -0.1), height=0.14)
    eng = engine(model)
    mech, forces = eng.mech, AppliedForces(eng.mech)
    rng = np.random.default_rng(3)
    for _ in range(4):
        q = mech.tree.initial_coordinates()[None, :] + rng.normal(0, [0.1, 0.1, 0.0, 0.2, 0.2, 0.2])
        q[0, 2] = bump(q[0, 0], q[0, 1]) + 0.098  # the 0.1 m ball pressed in by up to 2 mm
        v = rng.normal(0, [0.5, 0.5, 0.2, 2.0, 2.0, 2.0])
        ours = eng.accelerations(0.0, q[0], v)
        reference = forward_dynamics(mech, q, v[None], forces.generalized(0.0, q, v[None]))[0]
        assert np.abs(reference[:3] - np.array([0, 0, -G])).max() > 1.0  # pressed in: the contact acts
        assert np.abs(ours - reference).max() <= 1e-9 * max(1.0, np.abs(reference).max())


def tyre_on(road: Road) -> Model:
    """A wheel on a free joint, its tyre pressed into the road at the centre's start."""
    model = free_body({"c": [0.0, 0.0, 0.0]})
    model.forces = [Tyre("tyre", "1", "c", 2e5, 3e3, 0.3, 1e-3)]
    model.road = road
    return model


def test_a_tyre_on_a_grid_that_is_its_profile_gives_the_profiles_forces(tmp_path):
    """The profile [s, z] as a grid with every y row the same: in the cells where the grid's C1 join is the
    profile's straight line (a ramp's inner cells) the tyre's force is the profile's, to rounding, at states
    moving sideways too (the grid's ∂z/∂y is 0 there)."""
    ramp = [[float(s), 0.1 * s] for s in range(5)]
    write_grid(tmp_path, [r[0] for r in ramp], [-1.0, 0.0, 1.0], lambda x, y: 0.1 * x)
    on_profile = Mechanism(tyre_on(Road(profile=ramp)))
    on_grid = Mechanism(saved_and_loaded(tyre_on(Road(surface="road.csv")), tmp_path))
    rng = np.random.default_rng(5)
    q = np.zeros((8, 6))
    q[:, 0], q[:, 1], q[:, 2] = rng.uniform(1.0, 3.0, 8), rng.uniform(-0.9, 0.9, 8), 0.2 + rng.uniform(0, 0.2, 8)
    v = rng.normal(0, 1.0, (8, 6))
    expected = AppliedForces(on_profile).generalized(0.0, q, v)
    got = AppliedForces(on_grid).generalized(0.0, q, v)
    assert np.abs(expected).max() > 1e3
    assert np.abs(got - expected).max() <= 64 * np.finfo(float).eps * np.abs(expected).max()


@pytest.mark.parametrize(
    "content, words",
    [
        ("y \\ x,0,1\n0,0,0\n1,0\n", "is not rectangular: line 3 has 2 cells"),
        ("y \\ x,0,1\n0,0,nan\n1,0,0\n", "holds 'nan' at line 2, column 3"),
        ("y \\ x,0,1\n0,0,0\n0,0,0\n", "has y coordinates that do not increase"),
        ("y \\ x,0,1\n0,0,0\n", "fewer than two x columns or two y rows"),
    ],
)
def test_a_bad_grid_is_named_with_what_is_wrong(tmp_path, content, words):
    (tmp_path / "road.csv").write_text(content)
    model = free_body({"c": [0.0, 0.0, 0.0]})
    model.road = Road(surface="road.csv")
    (tmp_path / "m.mbs").write_text(dumps(model))
    with pytest.raises(ModelError, match="road.surface") as error:
        load(tmp_path / "m.mbs")
    assert words in str(error.value)


@pytest.mark.parametrize(
    "surface, words", [("missing.csv", "names no file"), ("../road.csv", "leaves the model's folder")]
)
def test_a_grid_file_outside_the_folder_or_missing_is_refused(tmp_path, surface, words):
    folder = tmp_path / "model"
    folder.mkdir()
    write_grid(tmp_path, [0.0, 1.0], [0.0, 1.0], lambda x, y: 0.0)
    model = free_body({"c": [0.0, 0.0, 0.0]})
    model.road = Road(surface=surface)
    (folder / "m.mbs").write_text(dumps(model))
    with pytest.raises(ModelError, match=words):
        load(folder / "m.mbs")


def test_a_contact_against_a_rolling_road_is_refused(tmp_path):
    model = ball_on_bump(tmp_path)
    model.road.speed = 1.0
    with pytest.raises(ModelError, match="against.*rolling road"):
        saved_and_loaded(model, tmp_path)


def test_the_grid_is_copied_beside_a_model_saved_elsewhere(tmp_path):
    model = ball_on_bump(tmp_path)
    other = tmp_path / "elsewhere"
    other.mkdir()
    save(model, other / "m.mbs")
    assert (other / "road.csv").read_bytes() == (tmp_path / "road.csv").read_bytes()
    saved = (other / "m.mbs").read_text()
    assert '"surface": "road.csv"' in saved and "surface_sha256" not in saved
    third = tmp_path / "third"
    third.mkdir()
    (third / "road.csv").write_text("y \\ x, 0, 1\n0, 0, 0\n1, 0, 0\n")  # another grid of the same name
    with pytest.raises(ModelError, match=r"road.surface: would replace a different road.csv in the folder"):
        save(model, third / "m.mbs")
    assert not (third / "m.mbs").exists() and (third / "road.csv").read_text().startswith("y \\ x, 0, 1")


def test_the_field_editor_offers_the_road_as_a_contacts_ground(tmp_path):
    """The contact's `against` is a choice of its plane (empty) or the road; choosing writes it, clearing drops it."""
    from mbstudio.gui.editing.fields import fields_for

    model = ball_on_bump(tmp_path)
    field = next(f for f in fields_for(model, ("force", "ball"))[1] if f.name == "against")
    assert (field.kind, field.value, field.choices) == ("choice", "road", ("", "road"))
    field.apply(model, "")
    assert model.forces[0].against is None
    field.apply(model, "road")
    assert model.forces[0].against == "road"


def test_a_grid_edited_after_loading_is_refused_rather_than_served_from_a_stale_engine(tmp_path):
    """The loaded model's text (under which engines are filed) holds the grid's hash: after the file changes the
    same text would name other heights, so evaluating it asks for the model to be loaded again."""
    model = ball_on_bump(tmp_path)
    assert model.road.surface_sha256 in dumps(model)
    write_grid(tmp_path, [0.0, 1.0], [0.0, 1.0], lambda x, y: 0.5)
    with pytest.raises(ModelError, match="has changed since the model was loaded"):
        AppliedForces(Mechanism(model)).generalized(0.0, np.zeros((1, 6)), np.zeros((1, 6)))
    assert load(tmp_path / "m.mbs").road.surface_sha256 != model.road.surface_sha256


FORMULA = (
    "h0 * sin(x) * cos(y) + 0.02 * sqrt(1 + x**2) + 0.01 * atan2(y, 2 + x) + 0.01 * asin(0.1 * x)"
    " + 0.01 * acos(0.1 * y) + 0.01 * atan(x * y) + 0.01 * tan(0.1 * x) + 0.003 * (x - y) ** 1.5 / (3 + x)"
)


def on_formula(formula: str) -> Model:
    model = free_body({"c": [0.0, 0.0, 0.0]})
    model.parameters = [Parameter("h0", 0.1)]
    model.forces = [Contact("ball", "1", "c", 0.1, 1e5, 1.5, 2.0, 0.5, 1e-3, against="road")]
    model.road = Road(formula=formula)
    return load_text(model)


def load_text(model: Model) -> Model:
    from mbstudio.model import loads

    return loads(dumps(model))


def test_a_formula_roads_gradient_is_its_derivative(tmp_path):
    """The dual-number gradient of a formula using every function of the language against central differences
    (step 1e-5: truncation 1e-10 · |z'''|, rounding 1e-16 / 1e-5), and its height against the formula in floats."""
    forces = AppliedForces(Mechanism(on_formula(FORMULA)))
    rng = np.random.default_rng(11)
    x, y = rng.uniform(0.0, 3.0, 20), rng.uniform(-3.0, -0.1, 20)  # inside the formula's domain
    height, slope_x, slope_y, _ = forces.road_surface(None, x, y)
    h = 1e-5
    for slope, dx, dy in ((slope_x, h, 0.0), (slope_y, 0.0, h)):
        ahead, behind = forces.road_surface(None, x + dx, y + dy)[0], forces.road_surface(None, x - dx, y - dy)[0]
        assert np.abs((ahead - behind) / (2 * h) - slope).max() < 1e-8
    x0, y0 = x[0], y[0]
    expected = (
        0.1 * math.sin(x0) * math.cos(y0) + 0.02 * math.sqrt(1 + x0**2) + 0.01 * math.atan2(y0, 2 + x0)
        + 0.01 * math.asin(0.1 * x0) + 0.01 * math.acos(0.1 * y0) + 0.01 * math.atan(x0 * y0)
        + 0.01 * math.tan(0.1 * x0) + 0.003 * (x0 - y0) ** 1.5 / (3 + x0)
    )  # fmt: skip
    assert height[0] == pytest.approx(expected, rel=1e-14)


def test_a_formula_incline_presses_as_the_grid_incline(tmp_path):
    """The incline z = −x tan θ as a formula and as a grid: the same contact forces inside the grid (rounding)."""
    angle = math.radians(10)
    grid = block_on_incline(tmp_path, angle, 0.5)
    formula = load_text(grid)
    formula.road = Road(formula=f"-x * tan({angle!r})")
    on_grid, on_formula_ = Mechanism(grid), Mechanism(load_text(formula))
    q = np.tile(on_grid.tree.initial_coordinates(), (5, 1))
    q[:, 0] += np.linspace(-1.0, 1.0, 5)
    q[:, 2] -= np.linspace(-1.0, 1.0, 5) * math.tan(angle)
    v = np.random.default_rng(2).normal(0, 0.3, (5, 6))
    expected = AppliedForces(on_grid).generalized(0.0, q, v)
    got = AppliedForces(on_formula_).generalized(0.0, q, v)
    assert np.abs(expected).max() > 1.0
    assert np.abs(got - expected).max() <= 1e-9 * np.abs(expected).max()


@pytest.mark.slow
def test_the_compiled_engine_and_the_numpy_path_agree_on_a_formula_road():
    model = on_formula("h0 * sin(x) * cos(y)")
    eng = engine(model)
    mech, forces = eng.mech, AppliedForces(eng.mech)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = rng.normal(0, [0.5, 0.5, 0.0, 0.2, 0.2, 0.2])
        q[2] = 0.1 * math.sin(q[0]) * math.cos(q[1]) + 0.098
        v = rng.normal(0, [0.5, 0.5, 0.2, 2.0, 2.0, 2.0])
        ours = eng.accelerations(0.0, q, v)
        reference = forward_dynamics(mech, q[None], v[None], forces.generalized(0.0, q[None], v[None]))[0]
        assert np.abs(reference[:3] - np.array([0, 0, -G])).max() > 1.0
        assert np.abs(ours - reference).max() <= 1e-9 * max(1.0, np.abs(reference).max())


@pytest.mark.parametrize(
    "formula, words",
    [
        ("sqrt(-1 - x * x)", "cannot evaluate sqrt here"),
        ("x ** y", "exponent that depends on x or y"),
        ("z * x", "undefined parameter 'z'"),
        ("0.1 * x +", "is not valid arithmetic"),
    ],
)
def test_a_formula_that_fails_is_named(formula, words):
    with pytest.raises(ModelError, match="road.formula") as error:
        on_formula(formula)
    assert words in str(error.value)


def test_the_elastic_force_on_a_bumps_flank_is_its_potentials_gradient(tmp_path):
    """Q = −∂V/∂q by central differences (step 1e-7 m: rounding 1e-16 V / 1e-7, truncation 1e-14 V'''): on a
    curved road the one-step tangent plane leaves a non-conservative part of the order (κ r)² of the force
    (4e-6 of it here, κ ≈ 0.4 /m the bump's curvature, r = 0.1 m), under the 1e-4 asserted."""
    model = ball_on_bump(tmp_path, at=(0.3, 0.1), height=0.125)
    mech = Mechanism(model)
    law = AppliedForces(mech).laws[0]
    q = mech.tree.initial_coordinates()[None, :]
    force = law.generalized(0.0, q, np.zeros((1, 6)), mech.tree.motion(q))[0]
    h = 1e-7

    def potential(at):
        return float(law.potential(at, mech.tree.motion(at))[0])

    gradient = np.array([(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in np.eye(6)[:, None, :]])
    assert np.abs(force).max() > 10.0
    assert np.abs(force + gradient).max() < 1e-4 * np.abs(force).max()


TIR = Path(__file__).parents[1] / "samples" / "passenger_car_205_55R16.tir"


def wheel_on(road: Road, folder: Path, grid=None) -> Model:
    """A wheel on a free joint with the sample's Magic Formula tyre, spinning about its y axis, over the road."""
    (folder / "tyre.tir").write_bytes(TIR.read_bytes())
    if grid is not None:
        write_grid(folder, *grid)
    model = free_body({"c": [0.0, 0.0, 0.0]}, (0.7, 1.2, 0.7))
    model.forces = [MagicFormulaTyre("tyre", "1", "c", "tyre.tir", stiffness=2e5, damping=3e3, radius=0.31)]
    model.road = road
    return saved_and_loaded(model, folder)


def test_a_magic_formula_tyre_on_a_grid_that_is_its_profile_gives_the_profiles_forces(tmp_path):
    """As the vertical tyre: the profile ramp and the grid repeating it in y, the same forces and moments to
    rounding at rolling, slipping, sideways-moving states over the ramp's inner cells."""
    ramp = [[float(s), 0.1 * s] for s in range(5)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    on_profile = Mechanism(wheel_on(Road(profile=ramp), tmp_path / "a"))
    grid = ([r[0] for r in ramp], [-1.0, 0.0, 1.0], lambda x, y: 0.1 * x)
    on_grid = Mechanism(wheel_on(Road(surface="road.csv"), tmp_path / "b", grid))
    rng = np.random.default_rng(8)
    q = np.zeros((6, 6))
    q[:, 0], q[:, 1] = rng.uniform(1.0, 3.0, 6), rng.uniform(-0.9, 0.9, 6)
    q[:, 2] = 0.1 * q[:, 0] + 0.3
    q[:, 3:] = rng.normal(0, 0.05, (6, 3))
    v = np.column_stack([rng.normal(10, 1, 6), rng.normal(0, 0.5, (6, 2)), rng.normal(0, 1, 6), rng.normal(32, 2, 6),
                         rng.normal(0, 0.3, 6)])  # fmt: skip
    expected = AppliedForces(on_profile).generalized(0.0, q, v)
    got = AppliedForces(on_grid).generalized(0.0, q, v)
    assert np.abs(expected).max() > 1e3
    assert np.abs(got - expected).max() <= 64 * np.finfo(float).eps * np.abs(expected).max()


def test_a_magic_formula_tyre_on_a_cambered_road_takes_the_roads_normal(tmp_path):
    """A road banked by φ across (z = y tan φ, a formula): the tyre's normal is (0, −sin φ, cos φ), its heading and
    lateral axes lie in the road's plane."""
    bank = math.radians(8)
    model = wheel_on(Road(formula=f"y * tan({bank!r})"), tmp_path)
    mech = Mechanism(model)
    law = AppliedForces(mech).laws[0]
    q = np.array([[0.0, 0.2, 0.2 * math.tan(bank) + 0.3, 0.0, 0.0, 0.0]])
    v = np.array([[10.0, 0.0, 0.0, 0.0, 33.0, 0.0]])
    got = law.contact(0.0, mech.tree.motion(q), v)
    normal = np.array([0.0, -math.sin(bank), math.cos(bank)])
    assert np.asarray(got["normal"], float)[0] == pytest.approx(normal, abs=1e-15)
    for axis in ("heading", "lateral"):
        assert abs(np.asarray(got[axis], float)[0] @ normal) < 1e-15


def test_the_windows_force_arrows_draw_a_contact_on_the_road(tmp_path):
    """The arrow of a sphere on the bump is its contact force at its contact point; the support polygon (of
    contacts on a plane) leaves it out rather than failing."""
    from mbstudio.simulation.contact_results import support
    from mbstudio.simulation.measures import applied_forces

    model = ball_on_bump(tmp_path, at=(0.3, 0.1), height=0.125)
    mech = Mechanism(model)
    q, qd = mech.tree.initial_coordinates(), np.zeros(6)
    (name, point, force), *_ = applied_forces(mech, 0.0, q, qd)
    law = AppliedForces(mech).laws[0]
    depth, expected_point, _, normal = (np.asarray(v, float)[0] for v in law.placed(mech.tree.motion(q[None])))
    assert name == "ball" and point == pytest.approx(expected_point, abs=1e-15)
    assert force == pytest.approx(1e5 * depth**1.5 * normal, rel=1e-12)
    assert len(support(mech, 0.0, q, qd).polygon) == 0


def test_the_field_editor_shows_and_sets_the_roads_surface(tmp_path):
    """The Road item: its speed, formula and grid; typing a grid's full path makes the road that grid (hashed as a
    loaded one), a relative path is refused by name, typing a formula makes the road that formula."""
    from mbstudio.gui.editing.fields import fields_for
    from mbstudio.model.validation import validate

    model = on_formula("h0 * sin(x)")
    title, shown = fields_for(model, ("road",))
    assert title == "Road" and [(f.name, f.value) for f in shown] == [
        ("speed", 0.0), ("formula", "h0 * sin(x)"), ("surface", "")
    ]  # fmt: skip
    grid = write_grid(tmp_path, [0.0, 1.0, 2.0], [0.0, 1.0], lambda x, y: 0.1 * x * y)
    shown[2].apply(model, str(grid))
    validate(model)
    assert (model.road.formula, model.road.surface, model.road.profile) == (None, str(grid), [])
    assert model.road.surface_sha256 in dumps(model)
    with pytest.raises(ModelError, match="road.surface.*full path"):
        shown[2].apply(model, "road.csv")
    shown[1].apply(model, "0.01 * cos(y)")
    validate(model)
    assert (model.road.formula, model.road.surface) == ("0.01 * cos(y)", None)
