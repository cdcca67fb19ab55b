"""The K&C rig (simulation/kc_rig.py) on the bushed SLA (samples/sla_suspension_bushed.mbs, written by
tools/make_sla_bushed.py), each figure against an independent route:

- bushings stiff (1e12) in every direction their joint constrained reproduce the ideal-joint suspension report's
  curves (simulation/suspension.py: Newton on the driver with the loops closed, no forces at all);
- the compliance at design against a hand linear route, K = Aᵀ diag(k) A over the bushings' and the spring's
  deflection Jacobians (from the bodies' Jacobians, not the bushing law), bordered by the wheel-centre height the
  rig holds, and against scipy minimising the potential energy (from the laws' energies, not their forces);
- the work of the load along the load path equals the stored energy's change, to the load steps' second order;
- the linearisation of one arm on its bushing against the hand eigenproblem K φ = ω² M φ at the bushing;
- options refused with the field named.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.kinematics import Mechanism
from mbstudio.linear.equilibrium import equilibrium
from mbstudio.linear.linear_model import linearize
from mbstudio.linear.modes import modes
from mbstudio.model import ModelError, dumps, loads
from mbstudio.model.document import Model
from mbstudio.progress import Stages
from mbstudio.simulation.kc_rig import CASES, KCOptions, _Rig, kc_analysis
from mbstudio.simulation.suspension import suspension_curves
from tests.test_vehicle import assert_same_document

ROOT = Path(__file__).resolve().parents[1]
# the bushing directions each joint left free (the arms' pivots turn about z; the tie rod's inner ball swings
# about x and z of its frame, its spin about y being the universal joint's constraint)
FREE = {"lower_arm_pivot_bushing1": (5,), "upper_arm_pivot_bushing1": (5,), "tie_rod_inner_bushing1": (3, 5)}


def bushed() -> Model:
    return samples.load("sla_suspension_bushed")


def stiff(model: Model, k: float = 1e12) -> Model:
    """The bushed corner with every direction its joint constrained made `k` stiff, the free ones as they were."""
    for e in model.forces:
        if e.type == "bushing":
            e.stiffness = [s if i in FREE[e.name] else k for i, s in enumerate(e.stiffness)]
    return loads(dumps(model))


def unloaded(model: Model) -> Model:
    """Gravity off and the spring's free length its length at design: the design pose is an equilibrium with
    nothing loaded, so the corner's stiffness there is Aᵀ K A with no geometric (preload) part."""
    model.gravity = [0.0, 0.0, 0.0]
    mech = Mechanism(model)
    spring = next(e for e in model.forces if e.type == "spring_damper")
    points = mech.points(mech.assemble(None))
    spring.length = float(np.linalg.norm(points[(spring.body2, spring.point2)] - points[(spring.body1, spring.point1)]))
    return loads(dumps(model))


def test_the_bushed_sample_is_what_its_script_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_sla_bushed", ROOT / "tools" / "make_sla_bushed.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(tmp_path / "bushed.mbs")
    written = json.loads((tmp_path / "bushed.mbs").read_text(encoding="utf-8"))
    stored = json.loads(samples.path("sla_suspension_bushed").read_text(encoding="utf-8"))
    assert_same_document(written, stored, rtol=1e-10)


def test_stiff_bushings_reproduce_the_ideal_suspension_report():
    """The stiff corner departs from the ideal joints by its bushings' deflections under the spring's and gravity's
    few kN, about 1e3 / 1e12 m: 1e-6 (rad, m, rad/m) bounds that with a margin of 1e5; measured 3e-8 (bump steer)."""
    options = KCOptions(travel=0.08, travel_points=9, load_points=3)
    result = kc_analysis(stiff(bushed()), options)
    ideal = suspension_curves(samples.load("sla_suspension"), travel=0.08, points=9)
    assert result.stops == [] and result.travel.x == pytest.approx(ideal.travel.x, abs=1e-15)
    curves = ideal.travel.curves
    for name in ("toe", "camber", "caster", "kingpin_inclination", "scrub_radius", "bump_steer", "motion_ratio"):
        assert np.abs(result.travel.curves[name][1] - curves[name][1]).max() < 1e-6, name
    recession = -result.travel.curves["wheel_centre_recession"][1]
    assert np.abs(recession - curves["longitudinal_shift"][1]).max() < 1e-6
    assert np.ptp(curves["toe"][1]) > 0.02  # the curves move: 1.2° of bump steer over the travel


def hand_compliance(model: Model) -> tuple[np.ndarray, np.ndarray, _Rig]:
    """The corner's compliance at design by hand: the hub's twist (ω, v at the contact patch) per load (moment,
    force at the contact patch) from K = Aᵀ diag(k) A, A the bushings' deflection rates (frame B's velocity
    relative to A's, in A's axes, at B's origin: exact at an undeflected bushing) and the spring's length rate, per
    free coordinate; bordered by the rig's wheel-centre height. Returns (C (6, 6), spin axis at design, rig)."""
    rig = _Rig(Mechanism(model), model.measures[0], KCOptions(gravity=False))
    mech, q = rig.mech, rig.design.q
    st = mech.motion(q[None])
    R = np.asarray(mech.r_matrix(q[None]), float)[0][:, rig.free]
    rows, stiffness = [], []
    for e in model.forces:
        if e.type == "bushing":
            frames = [mech.tree.frame_state(st, b, mech.tree.geometry.frame(model.body(b), f))[:2]
                      for b, f in ((e.body1, e.frame1), (e.body2, e.frame2))]  # fmt: skip
            (Ra, _), (_, ob) = (tuple(np.asarray(x, float)[0] for x in f) for f in frames)
            twist = [np.zeros((6, mech.n)) if body == "0" else _jacobian_at(mech, q, body, ob) for body in (e.body1,
                     e.body2)]  # fmt: skip
            relative = twist[1] - twist[0]  # [ω; v at B's origin]
            rows += list(Ra.T @ relative[3:]) + list(Ra.T @ relative[:3])
            stiffness += list(e.stiffness)
        elif e.type == "spring_damper":
            p1, p2 = (mech.points(q[None])[(b, p)][0] for b, p in ((e.body1, e.point1), (e.body2, e.point2)))
            axis = (p2 - p1) / np.linalg.norm(p2 - p1)
            v1, v2 = (_jacobian_at(mech, q, b, p)[3:] for b, p in ((e.body1, p1), (e.body2, p2)))
            rows.append(axis @ (v2 - v1))
            stiffness.append(e.stiffness)
    A = np.array(rows) @ R
    K = A.T @ np.diag(stiffness) @ A
    lift = _jacobian_at(mech, q, rig.carrier, rig._centres(q[None])[0])[5] @ R
    bordered = np.block([[K, lift[:, None]], [lift[None], np.zeros((1, 1))]])
    contact = _world(mech, q, rig.carrier, rig.contact)
    J = _jacobian_at(mech, q, rig.carrier, contact) @ R  # (6, nx): ω, v of the contact patch
    J = np.hstack([J, np.zeros((6, 1))])
    C = J @ np.linalg.solve(bordered, J.T)
    Rw, _ = (np.asarray(x, float)[0] for x in mech.poses(q[None])[rig.carrier])
    return C, Rw @ rig._spin_local(), rig


def _jacobian_at(mech: Mechanism, q: np.ndarray, body: str, world: np.ndarray) -> np.ndarray:
    """[ω; v] (6, n) of the body's material point now at `world`."""
    R, p = (np.asarray(x, float)[0] for x in mech.poses(q[None])[body])
    return np.asarray(mech.body_jacobian(q[None], body, R.T @ (world - p)), float)[0]


def _world(mech: Mechanism, q: np.ndarray, body: str, local: np.ndarray) -> np.ndarray:
    R, p = (np.asarray(x, float)[0] for x in mech.poses(q[None])[body])
    return p + R @ local


def toe_rate(spin: np.ndarray, omega: np.ndarray, side: float = 1.0) -> float:
    """d toe/dt of toe = atan2(s_x, side s_y) (toe-in positive, s the outboard spin axis) turning at ω."""
    s, ds = spin * side, np.cross(omega, spin * side)
    return float((side * s[1] * ds[0] - s[0] * side * ds[1]) / (s[0] ** 2 + s[1] ** 2))


def test_compliance_at_design_matches_the_hand_linear_route():
    """Lateral and braking forces at the contact patch and the aligning moment: the contact patch's displacement
    and the toe per load, from the rig's equilibrium system (the laws' forces, a central-difference Jacobian whose
    truncation is 1e-12 relative) against Aᵀ K A by hand: 1e-6 relative (measured 1e-9)."""
    model = unloaded(bushed())
    C, spin, rig = hand_compliance(model)
    assert abs(rig.design.mu) < 1e-9 and rig.design.x == pytest.approx(rig.q0[rig.ind][rig.free], abs=1e-14)
    for case, column in (("lateral", 4), ("braking", 3), ("aligning", 2)):
        rates = rig.load_rates(case)
        found = np.array([rates[f"contact_{a}"][1] for a in "xyz"])
        hand = C[3:, column]
        assert np.abs(found - hand).max() < 1e-6 * np.abs(hand).max(), case
        assert rates["toe"][1] == pytest.approx(toe_rate(spin, C[:3, column]), rel=1e-6), case
    steer = rig.load_rates("lateral")["toe"][1]
    assert abs(steer) > 1e-8  # a compliance steer to check: 0.04 deg/kN measured


def test_compliance_matches_scipy_minimising_the_potential_energy():
    """A 200 N lateral force at the contact patch: the rig's equilibrium (Newton on the laws' forces) against the
    minimum of V(q) − F·r_P(q) at the rig's wheel-centre height found by scipy's SLSQP from the energies alone, in
    variables y scaled by the rig's stiffness (for its convergence, not its answer: the energy is about ½|y|² − F·u,
    the minimum near |y| = 0.08), its gradient by central differences of step 1e-4 in y. SLSQP stops on the energy's
    changes, and the energy (5e-3 J) rounds at about 1e-14 J (the load's potential, 200 N times positions of
    0.75 m), which places a minimum to √(2e-14) in |y|: 2e-6 relative at worst. Measured: 2.7e-7 on the contact
    patch's displacement, 1.2e-7 on the toe change (the force balance there is 6e-6 N against the rig's 4e-10 N);
    the issue's 1e-6 holds them."""
    from scipy.optimize import minimize

    model = unloaded(bushed())
    force = 200.0
    result = kc_analysis(model, KCOptions(gravity=False, lateral_force=force, load_points=3, travel_points=3))
    sweep = result.loads["lateral"]
    moved = np.array([sweep.curves[f"contact_{a}"][1][-1] for a in "xyz"])
    toe = sweep.curves["toe"][1][-1] - sweep.curves["toe"][1][1]

    C, _, rig = hand_compliance(model)
    forces = AppliedForces(rig.mech)
    x0, q0 = rig.design.x, rig.design.q
    start = _world(rig.mech, q0, rig.carrier, rig.contact)

    def pose(x):
        return rig._closed(np.atleast_2d(x), q0)

    def energy(x):
        q = pose(x)
        r = _world(rig.mech, q[0], rig.carrier, rig.contact)
        return float(np.asarray(forces.potential(q), float)[0]) - force * (r[1] - start[1])

    K = _reduced_stiffness(rig)
    L = np.linalg.cholesky(K + 1e-9 * np.abs(K).max() * np.eye(len(K)))
    to_x = np.linalg.inv(L.T)

    def scaled(f):
        return lambda y: f(x0 + to_x @ y)

    def gradient(f, h=1e-4):
        def g(y):
            out = np.zeros(len(y))
            for i in range(len(y)):
                e = np.zeros(len(y))
                e[i] = h * max(1.0, abs(y[i]))
                out[i] = (f(y + e) - f(y - e)) / (2 * e[i])
            return out

        return g

    height = scaled(lambda x: rig._centres(pose(x))[0, 2] - rig.z0)
    found = minimize(scaled(energy), np.zeros(len(x0)), jac=gradient(scaled(energy)), method="SLSQP",
                     constraints=[{"type": "eq", "fun": height, "jac": gradient(height)}],
                     options={"ftol": 1e-20, "maxiter": 500})  # fmt: skip
    q = pose(x0 + to_x @ found.x)[0]
    theirs = _world(rig.mech, q, rig.carrier, rig.contact) - start
    assert np.abs(theirs - moved).max() < 1e-6 * np.abs(moved).max()
    columns = rig._columns(q[None], np.zeros((1, len(q))))
    assert columns["toe"][1][0] - rig._columns(q0[None], np.zeros((1, len(q0))))["toe"][1][0] == pytest.approx(
        toe, rel=1e-6
    )


def _reduced_stiffness(rig: _Rig) -> np.ndarray:
    """The rig's own equilibrium Jacobian's stiffness block at design (only to scale the minimiser's variables)."""
    return -rig.design.jacobian[:-1, :-1]


def test_the_loads_work_is_the_stored_energys_change():
    """Along the lateral load path 0 → 4 kN (equilibria at each load step), the work ∫ F dy_P by the trapezoid
    rule against the change of the bushings', spring's and gravity's energy: the rule's error is second order in
    the step, so doubling the steps quarters it (within 3.5..4.5), and at 5 steps it is below 1e-3 of the work
    (measured: 3e-6 at 5 steps, 7.6e-7 at 10)."""
    from mbstudio.dynamics.forces import gravity_potential

    def mismatch(points: int) -> tuple[float, float]:
        model = bushed()
        rig = _Rig(Mechanism(model), model.measures[0], KCOptions(load_points=2 * points + 1))
        sweep = rig.load_sweep("lateral", [], Stages(None, None, [1.0]))
        half = sweep.x >= 0
        F, y, q = sweep.x[half], sweep.curves["contact_y"][1][half], sweep.q[half]
        work = float(np.sum((F[1:] + F[:-1]) / 2 * np.diff(y)))
        mech = Mechanism(bushed())
        V = np.asarray(AppliedForces(mech).potential(q[[0, -1]]), float) + np.asarray(
            gravity_potential(mech, q[[0, -1]]), float
        )
        return work, float(V[1] - V[0])

    (w5, v5), (w10, v10) = mismatch(5), mismatch(10)
    assert v5 == pytest.approx(v10, rel=1e-12) and v5 > 0
    assert abs(w5 - v5) < 1e-3 * v5
    assert 3.5 < (w5 - v5) / (w10 - v10) < 4.5


def test_one_arm_on_its_bushing_vibrates_at_the_hand_frequencies():
    """The lower arm alone on its chassis bushing (the rest of the corner taken away, gravity and damping off): the
    linear model's six frequencies are those of K φ = ω² M φ with K the bushing's diagonal stiffness and M the arm's
    spatial inertia at the bushing, in its axes (1e-8 relative); the torsion about the pivot, nearly alone, is
    within 1 % of the 1-DOF √(k_rz / I_axis) / 2π."""
    model = bushed()
    arm = model.body("1")
    bushing = next(e for e in model.forces if e.name == "lower_arm_pivot_bushing1")
    model.bodies = [arm]
    model.joints = [model.joint("lower_arm_pivot")]
    bushing.damping = [0.0] * 6  # undamped: its stiff directions are overdamped at the sample's loss factor
    model.forces, model.measures, model.gravity = [bushing], [], [0.0, 0.0, 0.0]
    model.independent_coordinates = "auto"
    model = loads(dumps(model))
    found = sorted(mode.frequency_hz for mode in modes(linearize(model, equilibrium(model))))

    mech = Mechanism(model)
    frame = mech.tree.geometry.frame(model.body("1"), bushing.frame2)
    Rb, ob = np.asarray(frame.rotation, float), np.asarray(frame.origin, float)  # the bushing's frame in arm axes
    inertia = {k: float(v) for k, v in model.body("1").inertia.items()}
    m, c = inertia["m"], np.array([inertia["mx"], inertia["my"], inertia["mz"]]) / inertia["m"]
    I_origin = np.array([[inertia["Ixx"], inertia["Ixy"], inertia["Ixz"]],
                         [inertia["Ixy"], inertia["Iyy"], inertia["Iyz"]],
                         [inertia["Ixz"], inertia["Iyz"], inertia["Izz"]]])  # fmt: skip
    d = c - ob  # centre of mass from the bushing, arm axes
    I_b = I_origin - m * (c @ c * np.eye(3) - np.outer(c, c)) + m * (d @ d * np.eye(3) - np.outer(d, d))
    skew = np.array([[0, -d[2], d[1]], [d[2], 0, -d[0]], [-d[1], d[0], 0]])
    # kinetic energy of small motions (translation u of the bushing's origin, rotation θ), arm axes
    M = np.block([[m * np.eye(3), -m * skew], [m * skew, I_b]])
    T = np.block([[Rb, np.zeros((3, 3))], [np.zeros((3, 3)), Rb]])  # bushing axes → arm axes
    M_b = T.T @ M @ T
    omega2 = np.linalg.eigvals(np.linalg.solve(M_b, np.diag(bushing.stiffness))).real
    hand = sorted(np.sqrt(omega2) / (2 * np.pi))
    assert found == pytest.approx(hand, rel=1e-8)
    axis = Rb[:, 2]
    torsion = np.sqrt(bushing.stiffness[5] / (axis @ I_b @ axis)) / (2 * np.pi)
    assert min(found) == pytest.approx(torsion, rel=1e-2)


@pytest.mark.slow  # the bushed corner's engine is compiled (or loaded) and linearised: 15 s and more
def test_the_bushed_corners_linearisation_has_the_tie_rods_spin_on_its_bushing():
    """The whole bushed corner linearised at design (unloaded: gravity off, the spring at its length there, so the
    pose is an equilibrium; undamped). Its tie rod spins about its own axis (J to the outer ball, which holds it
    nowhere else) against the inner bushing's torsion alone: the 1-DOF √(k_ry / I_xx) / 2π (the axis is the rod's
    x through its origin, and the bushing's y). Products of inertia couple it to the rod's swing; within 1 % (measured
    0.1 %: 40.56 Hz against 40.60 Hz), its dominant coordinate one of the rod's ball's."""
    from mbstudio.linear.equilibrium import operating_point

    model = unloaded(bushed())
    for e in model.forces:
        e.damping = [0.0] * 6 if e.type == "bushing" else 0.0
    model = loads(dumps(model))
    point = operating_point(model, "initial")
    found = modes(linearize(model, point))
    rod = next(e for e in model.forces if e.name == "tie_rod_inner_bushing1")
    hand = np.sqrt(rod.stiffness[4] / float(model.body("4").inertia["Ixx"])) / (2 * np.pi)
    spin = min(found, key=lambda mode: abs(mode.frequency_hz - hand))
    assert spin.frequency_hz == pytest.approx(hand, rel=1e-2) and spin.dominant.startswith("tie_ball")


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"travel": -0.1}, "travel"),
        ({"load_points": 2.5}, "load_points"),
        ({"axle": "middle"}, "axle"),
        ({"lateral_force": float("nan")}, "lateral_force"),
        ({"colour": 1}, "options"),
    ],  # fmt: skip
)
def test_bad_options_are_refused_naming_the_field(data, field):
    with pytest.raises(ModelError, match=field):
        KCOptions.from_dict(data)


def test_options_round_trip_and_every_case_is_swept():
    options = KCOptions(travel=0.05, load_points=4)
    assert options.load_points == 5 and KCOptions.from_dict(options.to_dict()) == options
    result = kc_analysis(bushed(), KCOptions(travel_points=5, load_points=3))
    assert set(result.loads) == set(CASES) and all(len(s.x) == 3 for s in result.loads.values())
    assert result.summary["lateral_stiffness"][1] > 0 and result.provenance["held"] == ["theta2"]


def test_make_compliant_on_a_closed_loop_chooses_the_coordinates_anew():
    """The SLA's lower pivot made compliant: the free joint closes its loop as a cut joint (no coordinates), so the
    chosen list [theta1, theta2] no longer fits; the edit leaves "auto", and the corner stands where it stood."""
    from mbstudio.gui.editing import edits
    from mbstudio.model.validation import validate

    model = samples.load("sla_suspension")
    model.trajectories = []  # they drive theta1
    before = Mechanism(model).points(Mechanism(model).assemble(None))
    edits.make_compliant(model, "lower_arm_pivot")
    validate(model)
    assert model.independent_coordinates == "auto"
    mech = Mechanism(loads(dumps(model)))
    after = mech.points(mech.assemble(None))
    assert after[("3", "K")] == pytest.approx(before[("3", "K")], abs=1e-12)


def test_the_command_writes_the_sweeps_the_page_and_the_figures(tmp_path, capsys):
    """`mbstudio kc`: the travel CSV and one per load case, each with its provenance sidecar, the PDF page, and
    --json's figures equal to the Python API's for the same options; a wrong --out is refused before any work."""
    from mbstudio.cli import main

    out, page = tmp_path / "kc.csv", tmp_path / "kc.pdf"
    arguments = ["kc", str(samples.path("sla_suspension_bushed")), "--out", str(out), "--report", str(page),
                 "--points", "5", "--load-points", "3", "--json", "--quiet"]  # fmt: skip
    assert main(arguments) == 0
    figures = json.loads(capsys.readouterr().out)
    python = kc_analysis(bushed(), KCOptions(travel_points=5, load_points=3))
    for name, (unit, value) in python.summary.items():
        assert figures["summary"][name] == {"unit": unit, "value": pytest.approx(value, rel=1e-9)}
    assert page.read_bytes().startswith(b"%PDF")
    for path in [out, *(tmp_path / f"kc.{case}.csv" for case in CASES)]:
        assert path.exists() and Path(f"{path}.json").exists()
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[:3] == ["wheel travel [m]", "toe [rad]", "camber [rad]"] and "wheel_rate [N/m]" in header
    assert main(["kc", str(samples.path("sla_suspension_bushed")), "--out", str(tmp_path / "kc.txt")]) == 2
    assert "--out" in capsys.readouterr().err


def test_progress_rises_to_one_and_cancel_stops_between_points():
    from mbstudio.progress import Cancelled

    seen = []
    kc_analysis(bushed(), KCOptions(travel_points=5, load_points=3), progress=lambda f, m: seen.append(f))
    assert np.all(np.diff(seen) >= 0) and seen[-1] == 1.0 and len(seen) > 10
    asked = []
    with pytest.raises(Cancelled, match="cancelled during: .* load"):
        kc_analysis(bushed(), KCOptions(travel_points=5, load_points=3),
                    cancel=lambda: asked.append(1) or len(asked) > 8)  # fmt: skip
