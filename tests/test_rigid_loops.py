"""Rigid contacts on a closed loop (simulation/rigid_stepping.py, dynamics/rigid_contact.py, docs/contact.md): the
four-bar sample with a sphere on its coupler point falling onto a plane, stepped in its independent coordinates.
Checked by routes of their own: the energy from the run's own series, the loop's residual from its equations, the
cone from the forces, and the accelerations at one state against a Lagrange-multiplier (KKT) solve on the spanning
tree written here in numpy, where the cut joint's equations and the contact are both multipliers."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.inverse_dynamics import inverse_dynamics
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.dynamics.rigid_contact import rigid_contact_dynamics
from mbstudio.jobs import DONE, Runner
from mbstudio.kinematics import Mechanism
from mbstudio.kinematics.fast_assembly import ROUNDING_FLOOR
from mbstudio.model import dumps, loads
from mbstudio.model.document import Contact, Coordinate, ForceMeasure, Frame, Joint
from mbstudio.model.fileformat import from_dict
from mbstudio.simulation.run import simulate

from .test_contact import FREE, column

RADIUS, FLOOR, MU, E = 0.03, 0.1, 0.5, 0.5  # the coupler point P starts at z = 0.2005 m and swings down to 0.10
ROUNDING = 64 * np.finfo(float).eps
SOLVER = 1e-14  # the cone solver's tolerance for the KKT comparison


def four_bar_on_a_plane(floor: float = FLOOR, friction: float = MU) -> object:
    """The four-bar sample, its crank free under gravity, a sphere of RADIUS at the coupler point P over the
    plane z = floor."""
    model = samples.load("four_bar")
    model.forces = [Contact("stop", "2", "P", RADIUS, 1e5, 1.5, 0.0, friction, 1e-3, plane_origin=[0.0, 0.0, floor],
                            restitution=E)]  # fmt: skip
    model.measures.append(ForceMeasure("f", "stop"))
    return loads(dumps(model))


def energy(result) -> np.ndarray:
    return result.kinetic + result.potential


def impacts(normal: np.ndarray) -> np.ndarray:
    """The samples whose interval holds a contact's first impulse after a flight."""
    return np.flatnonzero((normal[1:] > 0) & (normal[:-1] == 0)) + 1


def test_a_four_bar_falling_onto_a_plane_keeps_its_loop_and_loses_energy_at_the_impacts():
    """1 ms steps over 1 s: P's sphere lands at 0.15 s, bounces (e = 0.5) and comes to rest on the plane
    (`check_landing`); the sphere sinks in no further than P moves in one step."""
    step = 1e-3
    result = simulate(four_bar_on_a_plane(), 1.0, samples=1001, contact="rigid", step=step)
    free = simulate(four_bar_on_a_plane(floor=-10.0), 1.0, samples=1001, contact="rigid", step=step)
    first = check_landing(result, free, Mechanism(four_bar_on_a_plane()).length_scale)
    assert 0.1 < result.t[first] < 0.2
    height = column(result, "coupler_point.z")
    speed = np.hypot(column(result, "coupler_point.vx"), column(result, "coupler_point.vz")).max()
    assert height.min() >= FLOOR + RADIUS - speed * step


def slider_crank_on_a_plane(floor: float) -> object:
    """The slider-crank sample (a spatial loop: revolute, universal, prismatic, spherical), its crank free under
    gravity, a sphere of 10 mm at the crank pin over the plane z = floor."""
    model = samples.load("slider_crank")
    crank = model.bodies[0]
    crank.points["pin"] = list(crank.frames["B"].origin)
    model.forces = [Contact("stop", "1", "pin", 0.01, 1e5, 1.5, 0.0, MU, 1e-3, plane_origin=[0.0, 0.0, floor],
                            restitution=E)]  # fmt: skip
    model.measures = [ForceMeasure("f", "stop")]
    return loads(dumps(model))


def test_a_slider_crank_s_crank_pin_bouncing_on_a_plane():
    """The crank pin swings from z = 0.077 m down to −0.11 m; a plane at −0.027 m stops it (`check_landing`)."""
    result = simulate(slider_crank_on_a_plane(-0.027), 1.0, samples=1001, contact="rigid", step=1e-3)
    free = simulate(slider_crank_on_a_plane(-10.0), 1.0, samples=1001, contact="rigid", step=1e-3)
    check_landing(result, free, Mechanism(slider_crank_on_a_plane(-0.027)).length_scale)


def delta_on_a_plane(floor: float) -> object:
    """The 3-RUS Delta sample (21 coordinates, 3 independent), its arms free under gravity, a sphere of 20 mm at
    the platform's origin over the plane z = floor."""
    model = samples.load("delta_3rus")
    model.bodies[-1].points["tcp"] = [0.0, 0.0, 0.0]
    model.forces = [Contact("stop", "p", "tcp", 0.02, 1e5, 1.5, 0.0, MU, 1e-3, plane_origin=[0.0, 0.0, floor],
                            restitution=E)]  # fmt: skip
    model.measures = [ForceMeasure("f", "stop")]
    return loads(dumps(model))


@pytest.mark.slow  # the 21-coordinate engine's first build takes 7 s, and two runs
def test_a_delta_robot_s_platform_bouncing_on_a_plane():
    """The platform falls from z = −0.96 m (it would swing down to −1.27 m, and on to a singular configuration at
    0.27 s); a plane at −1.14 m stops it (`check_landing`). Its energy rises only by the scheme's error while the
    platform rests and rocks on the plane, which falls faster than the step (measured 3.7e-5 J at 1 ms, 8.9e-6 at
    0.5 ms, of 28 J)."""
    model, step = delta_on_a_plane(-1.136), 1e-3
    rises = []
    for h in (step, step / 2):
        result = simulate(model, 1.0, samples=1001, contact="rigid", step=h)
        check_landing(result, None, Mechanism(model).length_scale)
        rises.append(np.diff(energy(result)).max())
    assert rises[1] <= 0.6 * rises[0]


def check_landing(result, free, length: float) -> int:
    """What a rigid run of a closed loop landing on a plane (contact measure `f`) must show, against the same run
    with the plane out of reach (`free`): the loop closed at every sample to the assembly's tolerance; it lands,
    bounces (e = 0.5) and rests on the plane at the end; the friction inside the cone; the energy falls over every
    impact's interval and over the contact phase (the impacts and friction take energy) and nowhere rises by more
    than the scheme's O(h) flight drift, the free run's largest rise (not checked without one). The first sample
    in contact."""
    assert np.abs(result.residual).max() <= ROUNDING_FLOOR * 1e-12 * length
    normal, friction = column(result, "f.normal_force"), column(result, "f.friction_force")
    first = int(np.argmax(normal > 0))
    assert first > 0 and np.all(normal[-100:] > 0)
    assert np.all(friction <= MU * normal * (1 + ROUNDING) + ROUNDING * normal.max())
    total = energy(result)
    landings = impacts(normal)
    assert len(landings) >= 3
    assert np.all(total[landings] < total[landings - 1])
    if free is not None:
        drift = max(np.diff(energy(free)).max(), 0.0)
        assert np.diff(total).max() <= drift + ROUNDING * np.abs(total).max()
    assert total[first - 1] - total[-1] >= total[first - 1] - total[first] > 0  # at least the first impact's loss
    return first


def test_the_flight_converges_at_first_order_to_the_smooth_integration():
    """Plane out of reach: the rigid stepping is the midpoint scheme on the loop; halving the step halves its
    difference from the compiled engine's integration at rtol 1e-11 (first order: the loop's velocity-product
    forces are taken at each step's start). From rest, and with the crank turning at 2 rad/s (the independent
    rate given, the others from R: the first sample's rates are the engine's)."""
    model = four_bar_on_a_plane(floor=-10.0)
    for start in (np.zeros(1), np.array([2.0])):
        smooth = simulate(model, 0.15, samples=16, rtol=1e-11, atol=1e-13, velocities=start)
        runs = [simulate(model, 0.15, samples=16, contact="rigid", step=h, velocities=start) for h in (2e-4, 1e-4)]
        assert runs[0].qd[0] == pytest.approx(smooth.qd[0], rel=ROUNDING, abs=ROUNDING)
        errors = [np.abs(run.q - smooth.q).max() for run in runs]
        assert errors[1] / errors[0] == pytest.approx(0.5, abs=0.05)


def floating_four_bar() -> object:
    """The four-bar sample on a floating base: its ground link becomes a 1.92 kg bar (uniform, 0.4 m, the pivots'
    frames on it) on a free joint, held 0.5 m up and tilted by 0.1 and 0.3 rad about x and y, with a sphere at
    each of its ends and one at the coupler point P over z = 0; μ = MU, e = 0 (a perfectly plastic landing)."""
    data = json.loads(dumps(samples.load("four_bar")))
    bar = {"m": 1.92, "mx": 0.384, "my": 0.0, "mz": 0.0, "Ixx": 1e-4, "Ixy": 0.0, "Ixz": 0.0, "Iyy": 0.1025,
           "Iyz": 0.0, "Izz": 0.1025}  # fmt: skip
    ends = {"left": [0.0, 0.0, 0.0], "right": ["L0", 0.0, 0.0]}
    data["bodies"].append({"label": "4", "name": "base", "inertia": bar, "points": ends,
                           "frames": data["ground"]["frames"]})  # fmt: skip
    data["ground"] = {"points": {}, "frames": {}}
    data.pop("independent_coordinates")
    for joint in data["joints"]:
        joint["parent"] = "4" if joint["parent"] == "0" else joint["parent"]
    model = from_dict(data)
    pose = (0.0, 0.0, 0.5, 0.1, 0.3, 0.0)
    free = [Coordinate(name, initial=value) for name, value in zip(FREE, pose, strict=True)]
    model.joints.insert(0, Joint("float", "free", "0", "4", Frame(), Frame(), free))
    spheres = (("left", "4", "left"), ("right", "4", "right"), ("stop", "2", "P"))
    model.forces = [Contact(name, body, point, RADIUS, 1e5, 1.5, 0.0, MU, 1e-3) for name, body, point in spheres]
    model.measures += [ForceMeasure(f"f_{name}", name) for name, _, _ in spheres]
    return loads(dumps(model))


@pytest.mark.slow  # 13 s with the engine's first build (two step sizes)
def test_a_closed_chain_on_a_floating_base_dropped_on_the_ground():
    """The floating four-bar lands on its base's right end (0.27 s), then its left (0.31 s), then the coupler's
    sphere (0.67 s): the loop stays closed to the assembly's tolerance, no sphere sinks in deeper than one step of
    the fastest fall (from 0.5 m, plus the coupler's 0.4 m reach), each contact's friction stays in its cone, and
    the energy falls over every impact's interval and in all: the plastic impacts and friction take over 70 % of it
    in 1 s. Where it rises, between
    impacts while the chain swings, it is the scheme's first-order drift: halving the step halves the largest
    rise (from 0.5 ms, where the impacts' timing has settled: 0.85 mJ at 0.5 ms, 0.43 at 0.25 ms)."""
    model, step = floating_four_bar(), 5e-4
    result = simulate(model, 1.0, samples=1001, contact="rigid", step=step)
    finer = simulate(model, 1.0, samples=1001, contact="rigid", step=step / 2)
    assert np.abs(result.residual).max() <= ROUNDING_FLOOR * 1e-12 * Mechanism(model).length_scale
    deepest = step * np.sqrt(2 * 9.81 * (0.5 + 0.4))
    for name in ("left", "right", "stop"):
        normal, friction = column(result, f"f_{name}.normal_force"), column(result, f"f_{name}.friction_force")
        assert normal.max() > 0  # landed
        assert np.all(friction <= MU * normal * (1 + ROUNDING) + ROUNDING * normal.max())
        assert column(result, f"f_{name}.penetration").max() <= deepest
        assert np.all(energy(result)[impacts(normal)] < energy(result)[impacts(normal) - 1])
    total = energy(result)
    assert total[-1] < 0.3 * total[0]
    rises = np.diff(total).max(), np.diff(energy(finer)).max()
    assert rises[1] == pytest.approx(rises[0] / 2, rel=0.2)


def kkt_accelerations(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, float]:
    """q̈ and the normal force of a frictionless contact at P on the spanning tree: M q̈ + b = Φ_qᵀ μ + J_nᵀ λ_n,
    Φ_q q̈ = −Φ̇_q q̇ on the cut joint's independent rows, J_n q̈ = −J̇_n q̇ (the point held on the plane)."""
    rows = list(mech.partition.rows)
    st = mech.motion(q[None], qd[None], np.zeros((1, mech.n)))
    phi_q = np.asarray(mech.constraints.jacobian(st), float)[0][rows]
    loop_bias = np.asarray(mech.constraints.acceleration_bias(st), float)[0][rows]
    law = the_contact(mech)
    _, point, J = (np.asarray(x, float)[0] for x in law.place(st))
    body = mech.tree.body_index("2")
    r = point - np.asarray(st.p[body], float)[0]
    w, al, a = (np.asarray(x, float)[0] for x in (st.w[body], st.al[body], st.a[body]))
    point_bias = (a + np.cross(al, r) + np.cross(w, np.cross(w, r)))[2]
    n, m = mech.n, len(rows)
    M = np.asarray(mass_matrix(mech, q[None]), float)[0]
    b = np.asarray(inverse_dynamics(mech, q[None], qd[None], np.zeros((1, n))), float)[0]
    K = np.zeros((n + m + 1, n + m + 1))
    K[:n, :n], K[:n, n : n + m], K[:n, -1] = M, -phi_q.T, -J[2]
    K[n : n + m, :n], K[-1, :n] = phi_q, J[2]
    solution = np.linalg.solve(K, np.concatenate([-b, -loop_bias, [-point_bias]]))
    return solution[:n], solution[-1]


def the_contact(mech: Mechanism):
    return AppliedForces(mech, mech.model.forces).laws[0]


def test_the_contact_accelerations_on_the_loop_agree_with_a_kkt_solve_on_the_tree():
    """At the initial pose with the plane through the sphere's lowest point and the crank turning at 2 rad/s,
    frictionless: the independent-coordinate solve (R (Rᵀ M R)⁻¹ Rᵀ Jᵀ) and the spanning tree's KKT system with
    the cut joint's equations as multipliers give the same q̈ and normal force. The cone solver stops at
    `SOLVER` of the forces' scale; the force-to-acceleration map amplifies that 56 times here (measured: 3e-13 of
    q̈ at 1e-14, 4e-11 at 1e-12), asserted with a decade and a half of margin."""
    q = np.asarray(Mechanism(samples.load("four_bar")).assemble(None), float)[0]
    start = simulate(four_bar_on_a_plane(floor=-10.0), 0.0, samples=1)
    floor = column(start, "coupler_point.z")[0] - RADIUS
    contact = Mechanism(four_bar_on_a_plane(floor=floor, friction=0.0))
    qd = np.asarray(contact.r_matrix(q[None]), float)[0] @ np.array([2.0])
    solved = rigid_contact_dynamics(contact, 0.0, q, qd, tolerance=SOLVER)
    expected, pressing = kkt_accelerations(contact, q, qd)
    assert pressing > 0 and solved.names == ["stop"]
    scale = np.abs(expected).max()
    assert solved.qdd == pytest.approx(expected, rel=0, abs=3000 * SOLVER * scale)
    assert solved.forces[0] == pytest.approx([0.0, 0.0, pressing], abs=30 * SOLVER * pressing)


def test_the_cli_steps_the_four_bar_with_rigid_contacts(tmp_path):
    """`mbstudio simulate --contact rigid` on the closed loop: written with its contact series, the sphere resting
    on the plane at the end with the same force as the Python run's."""
    path, out = tmp_path / "four_bar.mbs", tmp_path / "four_bar.csv"
    model = four_bar_on_a_plane()
    path.write_text(dumps(model))
    args = [sys.executable, "-m", "mbstudio.cli", "simulate", str(path), "--t-end", "0.5", "--contact", "rigid"]
    done = subprocess.run([*args, "--step", "1e-3", "--out", str(out), "--quiet"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    header = out.read_text().splitlines()[0].split(",")
    rows = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
    force = rows[:, header.index("f.normal_force [N]")]
    expected = column(simulate(model, 0.5, samples=len(rows), contact="rigid", step=1e-3), "f.normal_force")
    assert force[-1] > 0
    assert force == pytest.approx(expected, rel=1e-9, abs=1e-9 * expected.max())


def test_the_window_s_simulation_job_steps_the_four_bar_with_rigid_contacts():
    """Analysis › Simulate with "contacts: rigid" runs the simulation job in a worker: it finishes with the
    contact's series and the method named, its forces those of the Python run."""
    runner = Runner()
    try:
        job = runner.submit("simulation", four_bar_on_a_plane(), {"t_end": 0.6, "samples": 61, "contact": "rigid"})
        assert job.wait(300)
    finally:
        runner.cancel_all()
    assert job.state == DONE, job.error + job.details
    assert job.result.provenance.method.startswith("Moreau-Jean")
    force = np.asarray(job.result.data.series["f.normal_force [N]"])
    expected = column(simulate(four_bar_on_a_plane(), 0.6, samples=61, contact="rigid"), "f.normal_force")
    assert force[-1] > 0
    assert force == pytest.approx(expected, rel=1e-9, abs=1e-9 * expected.max())
