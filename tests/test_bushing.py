"""Rubber bushings (force_laws/bushing_law.py): the law is the gradient of its potential at any pose (finite
differences, full symmetric 6×6 stiffness, tables, preload); a body hanging on one keeps its energy balance with
and without damping, the damping's dissipated work checked against δ̇ᵀ C δ̇ integrated from the measured
deflections; a body on a bushing sags by m g / k and vibrates at √(k/m)/2π and √(k_r/I)/2π; a very stiff bushing
in place of a revolute joint moves like the joint, closer by the ratio of the stiffnesses; bad input is refused
naming the element and field; the compiled engine and the numpy path agree."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.force_laws.bushing_law import table_force_and_energy
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.io.mjcf_export import mjcf_text
from mbstudio.kinematics import Mechanism
from mbstudio.linear.equilibrium import equilibrium
from mbstudio.linear.linear_model import linearize
from mbstudio.linear.modes import modes
from mbstudio.model import dumps, loads
from mbstudio.model.document import (
    INERTIA_NAMES,
    Body,
    Bushing,
    Coordinate,
    ForceMeasure,
    Frame,
    Joint,
    Model,
)
from mbstudio.model.errors import ModelError
from mbstudio.model.validation import validate
from mbstudio.simulation.run import simulate

FREE = ("x", "y", "z", "rx", "ry", "rz")
G = 9.81


def hanging(stiffness, damping=None, preload=None, tables=None, inertia=None, frames=True, initial=None) -> Model:
    """A block on a free joint from the ground, held by one bushing between a ground frame and a block frame
    (tilted and off the block's centre of mass when `frames`, else both at the block's origin, axes aligned)."""
    model = Model(name="hanging block")
    values = inertia or block_inertia(2.0, np.array([0.1, -0.05, 0.15]), np.diag([0.05, 0.06, 0.07]) + 0.002)
    body = Body("1", "block", dict(zip(INERTIA_NAMES, values, strict=True)))
    if frames:
        body.frames["eye"] = Frame([0.1, -0.05, 0.2], [0.1, 0.2, 1.0], [1.0, 0.0, 0.0])
        model.ground.frames["mount"] = Frame([0.0, 0.1, 0.3], [0.0, 0.3, 1.0], [1.0, 0.2, 0.0])
    else:
        body.frames["eye"], model.ground.frames["mount"] = Frame(), Frame()
    model.bodies.append(body)
    start = initial or [0.0] * 6
    coordinates = [Coordinate(name, value) for name, value in zip(FREE, start, strict=True)]
    model.joints.append(Joint("float", "free", "0", "1", Frame(), Frame(), coordinates))
    six = [0.0] * 6
    model.forces.append(Bushing("mount", "0", "mount", "1", "eye", stiffness, damping or six, preload or six,
                                tables or {}))  # fmt: skip
    model.measures.append(ForceMeasure("bush", "mount"))
    return loads(dumps(model))  # through the file's text: the format reads what it writes


def block_inertia(m: float, centre: np.ndarray, central: np.ndarray) -> list[float]:
    """The ten parameters about the body origin of a body of mass m, centre of mass `centre`, inertia `central`
    about it (parallel axes)."""
    I = central + m * (centre @ centre * np.eye(3) - np.outer(centre, centre))
    return [m, *(m * centre), I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]]


def symmetric(size: float, rng) -> list[list[float]]:
    """A random symmetric positive definite 6×6 matrix of entries about `size`."""
    a = rng.normal(size=(6, 6))
    return ((a @ a.T / 6 + np.eye(6)) * size).tolist()


def minus_gradient(law, mech: Mechanism, q: np.ndarray, h: float) -> np.ndarray:
    """−∂V/∂q by central differences of the law's potential."""
    out = np.zeros(mech.n)
    for k in range(mech.n):
        step = np.zeros_like(q)
        step[0, k] = h
        up, down = (float(np.asarray(law.potential(x, mech.motion(x)), float)[0]) for x in (q + step, q - step))
        out[k] = -(up - down) / (2 * h)
    return out


def test_the_bushing_law_is_minus_the_gradient_of_its_potential():
    """Q(q, q̇ = 0) = −∂V/∂q at random poses up to 70° of rotation, for a full symmetric K with a preload and a
    table. Central differences with step h have truncation O(h² V''') and rounding O(ε V / h); at h = 1e-5 both
    are below 1e-8 of |Q| for these sizes, so the tolerance 1e-7 |Q| separates them from any error of the law."""
    rng = np.random.default_rng(34)
    table = {"z": [[-0.02, -400.0], [0.0, 0.0], [0.01, 100.0], [0.03, 900.0]]}
    model = hanging(symmetric(1e3, rng), preload=[5.0, -3.0, 20.0, 0.5, -0.2, 0.1], tables=table)
    mech = Mechanism(model)
    forces = AppliedForces(mech)
    (law,) = forces.laws
    worst = 0.0
    for _ in range(8):
        q = rng.uniform(-0.3, 0.3, size=(1, 6))
        q[0, 3:] = rng.uniform(-1.0, 1.0, size=3) / np.sqrt(3)  # |ρ| up to 1: φ up to 57°
        Q = np.asarray(forces.of_law(law, 0.0, q, np.zeros_like(q)), float)[0]
        error = np.abs(Q - minus_gradient(law, mech, q, 1e-5)).max() / np.abs(Q).max()
        worst = max(worst, error)
    assert worst < 1e-7


def test_a_table_integrates_to_its_energy():
    """The piecewise linear force through the rows (straight on beyond the ends) and its energy from 0: the
    energy's differences are the force's trapezoids, exactly for a piecewise linear force."""
    rows = [[-0.02, -400.0], [0.0, 0.0], [0.01, 100.0], [0.03, 900.0]]
    s = np.linspace(-0.05, 0.06, 1101)  # rows on the grid, so each step's trapezoid is exact
    force, energy = table_force_and_energy(rows, s)
    assert np.interp([-0.02, 0.0, 0.01, 0.03], s, force) == pytest.approx([-400.0, 0.0, 100.0, 900.0], abs=1e-9)
    assert force[-1] == pytest.approx(900.0 + 40_000.0 * 0.03)  # the last segment's slope carried on
    trapezoids = np.concatenate([[0.0], np.cumsum((force[1:] + force[:-1]) / 2 * np.diff(s))])
    at_zero = int(np.argmin(np.abs(s)))
    assert energy == pytest.approx(trapezoids - trapezoids[at_zero], abs=1e-9 * np.abs(energy).max())


def oscillating(damping) -> Model:
    rng = np.random.default_rng(7)
    stiffness = symmetric(1.0, rng)
    for i in range(6):  # translations near 2 kN/m, rotations near 50 N m/rad, couplings among them
        for j in range(6):
            stiffness[i][j] *= np.sqrt((2e3 if i < 3 else 50.0) * (2e3 if j < 3 else 50.0))
    return hanging(stiffness, damping, initial=[0.02, -0.01, 0.03, 0.3, -0.2, 0.25])


def test_a_body_on_an_undamped_bushing_keeps_its_energy():
    """E = T + V_g + V_bushing stays constant to the integrator's tolerance (rtol 1e-10: drift below 1e-7 E
    over 1 s), and a wrong potential (half the bushing's) breaks that by far more."""
    model = oscillating(None)
    result = simulate(model, 1.0, samples=201)
    balance = next(v for name, _, v in result.monitors if name == "energy_balance")
    scale = max(abs(float(result.total[0])), float(np.abs(result.kinetic).max()))
    assert float(np.abs(result.kinetic).max()) > 1.0  # it swings and twists
    assert np.abs(balance - balance[0]).max() < 1e-7 * scale
    bushing = np.asarray(AppliedForces(Mechanism(model)).potential(result.q), float)
    wrong = balance - bushing / 2
    assert np.abs(wrong - wrong[0]).max() > 1e-3 * scale


def test_the_damped_bushing_dissipates_what_the_model_loses():
    """E + dissipated holds (the monitor's power from the law), and the dissipated work is ∫ δ̇ᵀ C δ̇ dt from the
    measured deflections differentiated and integrated on 4001 samples (an independent route: its error is the
    samples' O(Δt²), far below 1e-3 of the loss)."""
    damping = [3.0, 4.0, 5.0, 0.05, 0.06, 0.04]
    result = simulate(oscillating(damping), 1.0, samples=4001)
    balance = next(v for name, _, v in result.monitors if name == "energy_balance")
    dissipated = next(v for name, _, v in result.monitors if name == "dissipated_energy")
    scale = max(abs(float(result.total[0])), float(np.abs(result.kinetic).max()))
    assert np.abs(balance - balance[0]).max() < 1e-7 * scale
    loss = float(result.total[0] - result.total[-1])
    assert loss > 0.05 * scale  # the damping takes a good share out
    assert dissipated[-1] == pytest.approx(loss, rel=1e-7)
    deflection = np.column_stack([next(v for n, _, v in result.measures if n == f"bush.{d}") for d in FREE])
    rates = np.gradient(deflection, result.t, axis=0, edge_order=2)
    power = (rates**2 * np.array(damping)).sum(axis=1)
    assert np.trapezoid(power, result.t) == pytest.approx(loss, rel=1e-3)


def test_a_body_on_a_bushing_sags_by_mg_over_k_and_vibrates_at_its_hand_frequencies():
    """The bushing at the block's centre of mass, axes on its principal axes, diagonal stiffness: each direction
    is a 1-DOF spring-mass, sag m g / k_z and frequencies √(k/m)/2π, √(k_r/I)/2π (to the equilibrium's and
    eigensolver's rounding: 1e-9 relative)."""
    m, inertia = 3.0, (0.04, 0.05, 0.07)
    k = [2e4, 3e4, 5e4, 80.0, 110.0, 130.0]
    model = hanging(k, inertia=[m, 0, 0, 0, inertia[0], 0, 0, inertia[1], 0, inertia[2]], frames=False)
    point = equilibrium(model)
    assert point.q[2] == pytest.approx(-m * G / k[2], rel=1e-9)
    assert np.abs(np.delete(point.q, 2)).max() < 1e-12
    found = sorted(mode.frequency_hz for mode in modes(linearize(model, point)))
    masses = [m, m, m, *inertia]
    hand = sorted(np.sqrt(np.array(k) / masses) / (2 * np.pi))
    assert found == pytest.approx(hand, rel=1e-9)
    lin = linearize(model, point, outputs=["bush.fz", "bush.z"])
    vertical = next(mode for mode in modes(lin) if mode.dominant == "z")
    assert vertical.frequency_hz == pytest.approx(np.sqrt(k[2] / m) / (2 * np.pi), rel=1e-9)
    # the linear model's outputs: the bushing holds the block up by m g, and its vertical push falls by k per
    # metre of rise (C's rows on the state z)
    assert lin.y0 == pytest.approx([m * G, -m * G / k[2]], rel=1e-9)
    z = lin.states.index("z")
    assert lin.C[:, z] == pytest.approx([-k[2], 1.0], rel=1e-12)


def pendulum(elbow_stiffness: float | None) -> Model:
    """The double pendulum (lower rod given an axial inertia, which its planar swing never uses); with a stiffness,
    its elbow is a free joint held by a bushing between the elbow's two joint frames, free to turn about z only,
    damped near critically in the stiff directions so that the start's small vibration dies out."""
    model = samples.load("double_pendulum")
    for body in model.bodies:
        body.inertia["Ixx"] = 0.01
    if elbow_stiffness is None:
        return loads(dumps(model))
    elbow = model.joint("elbow")
    elbow.type = "free"
    elbow.coordinates = [Coordinate(f"elbow_{d}", 0.0) for d in FREE]
    model.independent_coordinates = "auto"
    k, c = elbow_stiffness, 2 * np.sqrt(elbow_stiffness * 1.0)  # c = 2 √(k m): critical for the rod's mass
    model.forces.append(Bushing("elbow_bushing", "1", "tip", "2", "pivot", [k] * 5 + [0.0], [c] * 5 + [0.0]))
    return loads(dumps(model))


@pytest.mark.slow
def test_a_very_stiff_bushing_moves_like_the_joint_it_replaces():
    """The elbow's reaction F is at most m (g + ω² L) ≈ 60 N over this swing, so the stiff bushing deflects by
    about F / k and the rods' angles depart from the ideal joint's by O(F / (k L)): 6e-8 rad at k = 1e9. The swing
    amplifies a departure by a modest factor over 1 s (measured: 3); the bound allows 20. The departure is first
    order in 1/k: from 1e7 to 1e8 it falls tenfold (within 8..12: the integrators' own error at rtol 1e-10, about
    1e-7 rad over this swing, is under a tenth of the departure at 1e8; at 1e9 it is of its size, so 1e9 is held
    to the bound alone)."""
    ideal = simulate(pendulum(None), 1.0, "CVODES-BDF", samples=101)

    def departure(k: float) -> float:
        run = simulate(pendulum(k), 1.0, "CVODES-BDF", samples=101)
        theta1 = run.q[:, run.coordinates.index("theta1")]
        rho = run.q[:, run.coordinates.index("elbow_rz")]
        theta2 = 4 * np.arctan(rho / 4)
        return max(np.abs(theta1 - ideal.q[:, 0]).max(), np.abs(theta2 - ideal.q[:, 1]).max())

    force, length = 60.0, 1.0
    found = {k: departure(k) for k in (1e7, 1e8, 1e9)}
    for k, value in found.items():
        assert value < 20 * force / (k * length)
    assert 8 < found[1e7] / found[1e8] < 12


def test_bad_bushings_are_refused_naming_the_element_and_field():
    good = hanging([1e3] * 6)
    lopsided = np.diag([1e3] * 6)
    lopsided[0, 1] = 5.0
    unknown_direction = {"q": [[0.0, 0.0], [1.0, 1.0]]}
    cases = [
        ({"frame2": "nowhere"}, r"force 'mount'\.frame2.*unknown frame of body '1'.*eye"),
        ({"body2": "0", "frame2": "mount"}, r"force 'mount'\.body2.*same body"),
        ({"stiffness": [1.0] * 5}, r"force 'mount'\.stiffness.*not a 6×6 matrix"),
        ({"stiffness": [1e3, 1e3, -1.0, 1e3, 1e3, 1e3]}, r"force 'mount'\.stiffness.*semi-definite"),
        ({"stiffness": lopsided.tolist()}, r"force 'mount'\.stiffness\[0\]\[1\].*not symmetric"),
        ({"damping": [0.0] * 5 + ["1/0"]}, r"force 'mount'\.damping\[5\]"),
        ({"damping": [0.0] * 5 + [-2.0]}, r"force 'mount'\.damping.*semi-definite"),
        ({"preload": [0.0] * 3}, r"force 'mount'\.preload.*six"),
        ({"tables": unknown_direction}, r"force 'mount'\.tables\.q.*not a bushing direction"),
        ({"tables": {"z": [[0.0, 0.0], [0.0, 1.0]]}}, r"force 'mount'\.tables\.z.*do not increase"),
        ({"tables": {"z": [[0.0, 0.0]]}}, r"force 'mount'\.tables\.z.*at least two"),
        ({"tables": {"z": [[0.0, 0.0], [1.0]]}}, r"force 'mount'\.tables\.z.*two finite \[deflection, force\]"),
        ({"tables": [[0.0, 0.0]]}, r"force 'mount'\.tables.*must map"),
        ({"frame1": ["mount"]}, r"force 'mount'\.frame1.*unknown frame"),
    ]
    for change, message in cases:
        model = good.copy()
        for key, value in change.items():
            setattr(model.forces[0], key, value)
        with pytest.raises(ModelError, match=message):
            validate(model)  # the Python API's route; the file's reader is checked below


def test_the_file_rejects_a_misshapen_matrix_with_its_place():
    data = json.loads(dumps(hanging([1e3] * 6)))
    data["forces"][0]["stiffness"] = [[1.0, 2.0]] + [0.0] * 5
    with pytest.raises(ModelError, match=r"force 'mount'\.stiffness\[0\].*row of six"):
        loads(json.dumps(data))


def test_the_exporters_say_they_leave_the_bushing_out():
    notes = mjcf_text(hanging([1e3] * 6))[1]
    assert any("bushing 'mount' has no MJCF form" in note for note in notes)


def test_the_compiled_engine_and_the_numpy_path_agree():
    """q̈ of the compiled engine (the law traced on CasADi symbols) against the numpy forward dynamics with the
    law in float64, at random states: to 1e-9 of the accelerations' size (two routes' rounding over a stiff
    spring's forces, far below a wrong term)."""
    rng = np.random.default_rng(5)
    model = hanging(symmetric(1e3, rng), [[x / 100 for x in row] for row in symmetric(1.0, rng)],
                    [1.0, 2.0, 3.0, 0.1, 0.2, 0.3], {"ry": [[-0.5, -20.0], [0.0, 0.0], [0.5, 30.0]]})  # fmt: skip
    eng = engine(model)
    mech = Mechanism(model)
    forces = AppliedForces(mech)
    for _ in range(4):
        q, qd = rng.uniform(-0.4, 0.4, 6), rng.normal(size=6)
        ours = np.asarray(eng.accelerations(0.0, q, qd), float).ravel()
        reference = np.asarray(forward_dynamics(mech, q, qd, forces.generalized(0.0, q, qd)), float).ravel()
        assert ours == pytest.approx(reference, abs=1e-9 * np.abs(reference).max())


def test_bushing_values_take_units_of_their_direction():
    """A translational stiffness in N/mm is read in SI, a rotational one takes N m/rad, a coupling N/rad; a
    stiffness given as a force is refused with its place."""
    data = json.loads(dumps(hanging([1e3] * 6)))
    rows = np.diag([1e3] * 6).tolist()
    rows[0][0], rows[3][3], rows[0][3], rows[3][0] = "2 N/mm", "50 N*m/rad", "10 N/rad", "10 N/rad"
    data["forces"][0]["stiffness"] = rows
    data["forces"][0]["tables"] = {"rz": [["-10 deg", "-5 N*m"], ["10 deg", "5 N*m"]]}
    model = loads(json.dumps(data))
    forces = AppliedForces(Mechanism(model))
    K = np.asarray(forces.laws[0].matrix(model.forces[0].stiffness), float)
    assert (K[0, 0], K[3, 3], K[0, 3]) == pytest.approx((2e3, 50.0, 10.0))
    rows[1][1] = "3 N"
    with pytest.raises(ModelError, match=r"force 'mount'\.stiffness\[1\]\[1\].*a stiffness"):
        loads(json.dumps(data))


def test_make_compliant_keeps_the_nominal_position_and_adding_one_starts_undeflected():
    """Edit › Make Compliant on the double pendulum's shoulder (at 90°) and elbow: every body stays where it was at
    the document's pose, the bushings start undeflected in their stiff directions, and the turned ones free."""
    from mbstudio.gui.editing import edits

    model = samples.load("double_pendulum")
    for body in model.bodies:
        body.inertia["Ixx"] = 0.01
    model.joint("elbow").coordinates[0].initial = 0.4
    before = Mechanism(model)
    poses = before.motion(before.assemble(None))
    compliant = model.copy()
    names = [edits.make_compliant(compliant, joint) for joint in ("shoulder", "elbow")]
    mech = Mechanism(loads(dumps(compliant)))
    q = mech.assemble(None)
    after = mech.motion(q)
    for label in ("1", "2"):
        i, k = before.tree.body_index(label), mech.tree.body_index(label)
        assert np.asarray(after.R[k], float) == pytest.approx(np.asarray(poses.R[i], float), abs=1e-14)
        assert np.asarray(after.p[k], float) == pytest.approx(np.asarray(poses.p[i], float), abs=1e-14)
    forces = AppliedForces(mech)
    for name, angle in zip(names, (np.pi / 2, 0.4), strict=True):
        law = next(law for law in forces.laws if law.name == name)
        delta = np.asarray(law.deflection(mech.motion(q))[0], float)[0]
        assert delta[:5] == pytest.approx(np.zeros(5), abs=1e-14)
        assert delta[5] == pytest.approx(4 * np.tan(angle / 4), rel=1e-14)
        assert np.asarray(forces.of_law(law, 0.0, q, np.zeros_like(q)), float) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ModelError, match=r"joint 'float'\.type.*no bushing form"):
        edits.make_compliant(hanging([1.0] * 6), "float")
    added = hanging([1.0] * 6)
    name = edits.add_force(added, "bushing")
    forces = AppliedForces(Mechanism(loads(dumps(added))))
    law = next(law for law in forces.laws if law.name == name)
    q = np.zeros((1, 6))
    assert np.asarray(law.deflection(law.forces.mech.motion(q))[0], float) == pytest.approx(0.0, abs=1e-14)


def test_the_properties_panel_shows_and_edits_a_bushing():
    """The window's fields of a bushing: its frames as choices of its bodies' frames, its matrices as the file's
    JSON (units kept), read back through the file format's reader; bad JSON is refused naming the field."""
    from mbstudio.gui.editing.fields import fields_for

    model = hanging([1e3] * 6)
    title, form = fields_for(model, ("force", "mount"))
    by_name = {f.name: f for f in form}
    assert title == "bushing 'mount'"
    assert by_name["frame2"].kind == "choice" and by_name["frame2"].choices == ("eye",)
    assert json.loads(by_name["stiffness"].value) == [1e3] * 6
    edited = model.copy()
    by_name["stiffness"].apply(edited, '["2 N/mm", 1000, 1000, 10, 10, 10]')
    by_name["tables"].apply(edited, '{"rz": [["-10 deg", "-5 N*m"], ["10 deg", "5 N*m"]]}')
    reread = loads(dumps(edited))
    assert float(reread.forces[0].stiffness[0]) == pytest.approx(2e3)
    assert float(reread.forces[0].tables["rz"][0][0]) == pytest.approx(-np.pi / 18)
    with pytest.raises(ModelError, match=r"force 'mount'\.preload: is not a JSON value"):
        by_name["preload"].apply(edited, "[1, 2,")


def test_force_arrows_and_measures_read_the_push_on_frame_b():
    """Frames at the block's origin on world axes, diagonal K: moved by (0.01, −0.02, 0.005) m at rest, the push
    on the block is −K d at its origin, its opposite on the ground, and the measure's columns say the same."""
    from mbstudio.simulation.measures import applied_forces, measure_columns

    k = [1e3, 2e3, 3e3, 10.0, 20.0, 30.0]
    model = hanging(k, preload=[0.0, 0.0, 5.0, 0.0, 0.0, 0.0], frames=False)
    mech = Mechanism(model)
    q, qd = np.array([0.01, -0.02, 0.005, 0.0, 0.0, 0.0]), np.zeros(6)
    expected = np.array([-10.0, 40.0, -15.0 + 5.0])
    (name, at, on_b), (_, _, on_a) = applied_forces(mech, 0.0, q, qd)
    assert (
        name == "mount"
        and at == pytest.approx(q[:3])
        and on_b == pytest.approx(expected)
        and on_a == pytest.approx(-expected)
    )
    columns = {n: v for n, _, v in measure_columns(mech, np.zeros(1), q[None], qd[None], np.zeros((1, 6)))}
    assert [float(columns[f"bush.f{d}"][0]) for d in "xyz"] == pytest.approx(expected)
    assert float(columns["bush.y"][0]) == pytest.approx(-0.02)
