"""Time simulation against independent routes: energy conservation of conservative closed loops, energy loss
equal to the dissipated work (integrated from the output velocities), the balloon's invariants (Alazard et al.
2024) and initial accelerations (the articulated-body algorithm and the sample's printed values), force elements
against their potentials, progress, cancellation, provenance and the `simulate` command's files."""

from __future__ import annotations

import hashlib
import json
import threading

import numpy as np
import pandas
import pytest
from scipy.integrate import simpson

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics import forward_dynamics
from mbstudio.dynamics.forces import AppliedForces, gravity_potential
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, dumps, loads
from mbstudio.model.document import Actuator, JointFriction, JointSpringDamper, PointForce, SpringDamper
from mbstudio.simulation.run import Cancelled, simulate


def sprung_sla(damping: float = 0.0):
    """The SLA on a spring(-damper) along its damper axis (body 6 point C to body 7 point ball), free at the
    design length 0.5 m, so that it oscillates about the design position."""
    model = samples.load("sla_suspension")
    model.forces = [SpringDamper("coilover", "6", "C", "7", "ball", stiffness=30_000.0, damping=damping, length=0.5)]
    return model


def buoyant_balloon(k: float = 0.0, d_s: float = 0.0, d_p: float = 0.0):
    """Alazard et al.'s (2024) scenario: buoyancy m_G g = 16 · 9.81 N up (+y) at B; spring-damper on the slider and
    dampers on the pendulums (digest 2.4: all zero, or k = 50, d_s = 5, d_p = 0.5)."""
    model = samples.load("balloon")
    model.forces = [
        PointForce("buoyancy", "B", "B", [0.0, "16*9.81", 0.0]),
        JointSpringDamper("slider", "p", stiffness=k, damping=d_s),
        JointSpringDamper("pendulum1", "theta1", damping=d_p),
        JointSpringDamper("pendulum2", "theta2", damping=d_p),
    ]
    return model


def relative_energy_drift(result) -> float:
    """Largest |E(t) − E(0)| relative to the largest kinetic energy (the energy actually exchanged)."""
    return float(np.abs(result.total - result.total[0]).max() / result.kinetic.max())


# (model, least kinetic energy reached [J]) over 10 s. DOP853 here: its error at a tolerance is
# the smallest of our methods, so the bound tests the equations, not the integrator (CVODES is compared with
# it in tests/test_engine.py).
ENERGY_RUNS = {"four_bar": (samples.load, 1.0), "sprung_sla": (lambda _: sprung_sla(), 0.1)}


@pytest.mark.parametrize("name", ENERGY_RUNS)
def test_a_conservative_motion_keeps_its_energy_over_10_s(name):
    build, moves = ENERGY_RUNS[name]
    result = simulate(build(name), 10.0, "DOP853", rtol=1e-12, atol=1e-12, samples=101)
    assert result.kinetic.max() > moves  # it moves: the four-bar's crank falls through a large angle
    assert relative_energy_drift(result) < 1e-8
    assert result.residual.max() < 1e-10


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "gripper", "puma560", "balloon"])
def test_the_default_tolerances_keep_a_conservative_energy_within_1e_7_over_2_s(name):
    """Issue 20: the four-bar drifted 1.3e-6 of its energy over 2 s at the default tolerances (1e-8, 1e-10)."""
    result = simulate(samples.load(name), 2.0)
    assert result.provenance.rtol == 1e-10 and result.kinetic.max() > 0.01 * abs(result.total[0])
    assert result.energy_drift < 1e-7
    assert result.energy_drift == pytest.approx(
        np.abs(result.total - result.total[0]).max() / max(abs(result.total[0]), result.kinetic.max())
    )


def test_sla_damper_dissipates_what_the_energy_loses():
    """E(0) − E(t) = ∫ c L̇² dt, with L(t) the distance of the damper's end points taken from the output
    body poses (C and ball are the origins of bodies 6 and 7) and L̇ by finite differences."""
    c = 1500.0
    result = simulate(sprung_sla(damping=c), 0.1, rtol=1e-11, atol=1e-12, samples=1001)
    length = np.linalg.norm(result.poses["7"][1] - result.poses["6"][1], axis=1)
    rate = np.gradient(length, result.t, edge_order=2)
    work = np.array([simpson(c * rate[: k + 1] ** 2, x=result.t[: k + 1]) for k in range(100, 1001, 100)])
    loss = result.total[0] - result.total[100::100]
    assert work[-1] > 0.01 * result.kinetic.max()  # the damper matters
    np.testing.assert_allclose(loss, work, rtol=1e-5, atol=1e-6 * work[-1])
    assert result.residual.max() < 1e-10


# ---------------------------------------------------------------- Alazard et al. (2024): the balloon
# The sample's description: initial accelerations with buoyancy for its Ixx = 15 (a_B, ω̇_B, p̈, θ̈1, θ̈2),
# in our coordinate order (ẍ, ÿ, z̈, ψ̈ = ω̇_z, θ̈ = ω̇_y, φ̈ = ω̇_x, ...) at zero attitude and rest.
BALLOON_QDD0 = [-0.347105, 0.451251, -0.347105, -1.272533, -0.826177, 0.346094, -1.994573, -5.657198, 4.500483]
BALLOON_COM = [0.065118, -0.680697, 0.0]


def centre_of_mass_and_momentum(result, mech: Mechanism):
    """System centre of mass (K, 3) and angular momentum about it (K, 3), from each body's mass, centre of
    mass and inertia about it, with velocities from the body Jacobians at the centres of mass."""
    bodies = mech.model.bodies
    masses = np.array([mech.tree.geometry.inertia(b).astype(float)[0] for b in bodies])
    com, velocity, inertia = [], [], []
    for body in bodies:
        m, mx, my, mz, xx, xy, xz, yy, yz, zz = mech.tree.geometry.inertia(body).astype(float)
        c = np.array([mx, my, mz]) / m
        R, p = result.poses[body.label]
        com.append(p + R @ c)
        J = mech.body_jacobian(result.q, body.label, c)
        velocity.append((J @ result.qd[:, :, None])[:, :, 0])
        about_com = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) - m * (c @ c * np.eye(3) - np.outer(c, c))
        inertia.append(R @ about_com @ np.swapaxes(R, 1, 2))
    G = sum(m * r for m, r in zip(masses, com, strict=True)) / masses.sum()
    H = sum(
        np.cross(r - G, m * v[:, 3:]) + (I @ v[:, :3, None])[:, :, 0]
        for m, r, v, I in zip(masses, com, velocity, inertia, strict=True)
    )
    return G, H


def test_balloon_initial_accelerations_match_the_articulated_body_algorithm_and_the_sample():
    """The simulation's q̈ (mass matrix and projection) against the articulated-body algorithm with the
    buoyancy as a generalized force (Pinocchio refuses the point masses' zero inertia about their centres).
    The sample file itself carries the buoyancy as a point force, and nothing else."""
    model = samples.load("balloon")
    result = simulate(model, 0.01, samples=2)
    mech = Mechanism(model)
    tau = np.zeros(mech.n)
    tau[mech.coordinates.index("yB")] = 16 * 9.81  # at B the free joint's translations are the world axes
    expected = forward_dynamics(mech, mech.assemble(None), np.zeros(mech.n), tau)[0]
    np.testing.assert_allclose(result.qdd[0], expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.qdd[0], BALLOON_QDD0, rtol=0, atol=5.01e-7)


@pytest.mark.parametrize("damped", [False, True])
def test_balloon_invariants(damped):
    """Neutral buoyancy: the centre of mass stays put and H_G·y stays zero; undamped, the energy (with the
    buoyancy's potential −F·r_B) is kept; damped, it falls by the dampers' work."""
    model = buoyant_balloon(50.0, 5.0, 0.5) if damped else buoyant_balloon()
    result = simulate(model, 0.5, rtol=1e-11, atol=1e-12, samples=501)
    G, H = centre_of_mass_and_momentum(result, Mechanism(model))
    np.testing.assert_allclose(G[0], BALLOON_COM, rtol=0, atol=5.01e-7)
    assert np.abs(G - G[0]).max() < 1e-8
    assert np.abs(H[:, 1]).max() < 1e-8
    assert np.abs(H).max() > 1e-2  # the other components do change
    loss = result.total[0] - result.total
    if not damped:
        assert result.total[0] == pytest.approx(-106.842216, abs=5.01e-7)  # digest 2.5, E(0)
        assert relative_energy_drift(result) < 1e-8
        return
    coordinate = result.coordinates.index
    power = 5.0 * result.qd[:, coordinate("p")] ** 2 + 0.5 * (
        result.qd[:, coordinate("theta1")] ** 2 + result.qd[:, coordinate("theta2")] ** 2
    )
    work = simpson(power, x=result.t)
    assert work > 1.0
    assert loss[-1] == pytest.approx(work, rel=1e-6)


# ---------------------------------------------------------------- force elements
def test_conservative_elements_are_minus_the_gradient_of_their_potential():
    """Q = −∂V/∂q by central differences for the spring, the constant point force and a constant actuator."""
    model = sprung_sla()
    model.forces += [PointForce("load", "5", "K", [10.0, -20.0, 30.0]), Actuator("torque", "theta1", formula=7.0)]
    mech = Mechanism(model)
    forces = AppliedForces(mech)
    q = mech.assemble(None)
    Q = forces.generalized(0.0, q, np.zeros_like(q))
    step = 1e-6
    gradient = []
    for k in range(mech.n):
        e = np.zeros_like(q)
        e[0, k] = step
        gradient.append((forces.potential(q + e) - forces.potential(q - e))[0] / (2 * step))
    np.testing.assert_allclose(Q[0], -np.array(gradient), rtol=1e-6, atol=1e-5)


def test_spring_damper_and_point_force_in_variable_precision():
    model = sprung_sla(damping=1500.0)
    model.forces.append(PointForce("load", "5", "K", [10.0, -20.0, "30*t"]))
    dp, vp = Mechanism(model), Mechanism(model, precision=30)
    q = dp.assemble(None)
    qd = dp.velocities(q, np.array([[0.3, 1.0]]))
    q_vp = vp.assemble(vp.as_batch(q[:, list(dp.partition.independent)]), guess=vp.as_batch(q))
    qd_vp = vp.velocities(q_vp, vp.as_batch([[0.3, 1.0]]))
    Q = AppliedForces(dp).generalized(0.7, q, qd)
    Q_vp = AppliedForces(vp).generalized(0.7, q_vp, qd_vp)
    assert Q_vp.dtype == object
    np.testing.assert_allclose(Q_vp.astype(float), Q, rtol=0, atol=1e-12 * np.abs(Q).max())


def test_friction_tables_formulas_and_variable_precision():
    model = samples.load("double_pendulum")
    name = model.parameters[0].name  # the formula uses a parameter as well as t
    model.forces = [
        JointFriction("f", "theta1", viscous=0.2, coulomb=1.5, velocity_scale=0.01),
        Actuator("table", "theta2", table=[[0.0, 0.0], [1.0, 2.0], [2.0, -2.0]]),
        Actuator("formula", "theta1", formula=f"{name}*sin(t)"),
    ]
    dp, vp = Mechanism(model), Mechanism(model, precision=30)
    q = np.array([[0.3, -0.2], [0.1, 0.4]])
    qd = np.array([[0.5, 0.0], [-0.001, 0.0]])
    t = np.array([0.5, 3.0])
    Q = AppliedForces(dp).generalized(t, q, qd)
    value = model.parameters[0].value
    np.testing.assert_allclose(Q[:, 0], -0.2 * qd[:, 0] - 1.5 * np.tanh(qd[:, 0] / 0.01) + value * np.sin(t))
    np.testing.assert_allclose(Q[:, 1], [1.0, -2.0])  # interpolated, then held beyond the table
    Q_vp = AppliedForces(vp).generalized(t, vp.as_batch(q), vp.as_batch(qd))
    assert Q_vp.dtype == object
    np.testing.assert_allclose(Q_vp.astype(float), Q, rtol=1e-14, atol=1e-14)


def test_gravity_potential_is_the_weight_times_the_height():
    """V_g = 9.81 Σ m z_G, the heights of the centres of mass from the body poses."""
    mech = Mechanism(samples.load("four_bar"))
    q = mech.assemble_path(np.array([[0.0], [0.5]]))
    poses = mech.poses(q)
    height = 0.0
    for body in mech.model.bodies:
        m, mx, my, mz = mech.tree.geometry.inertia(body).astype(float)[:4]
        R, p = poses[body.label]
        height = height + m * p[:, 2] + (R @ np.array([mx, my, mz]))[:, 2]
    np.testing.assert_allclose(gravity_potential(mech, q), 9.81 * height, rtol=1e-12)


def test_force_elements_in_the_file_round_trip_and_are_validated():
    model = sprung_sla(damping="1500")
    model.forces += [
        Actuator("table", "theta1", table=[[0.0, 1.0], [1.0, 2.5]]),
        Actuator("formula", "theta2", formula="D12*sin(t)"),
        PointForce("load", "5", "K", [0, 0, "-100*t"]),
        JointFriction("friction", "theta2", coulomb=0.3),
        JointSpringDamper("bump", "theta1", 10.0, rest=0.1),
    ]
    model.actuated = ["theta1", "theta2"]
    text = dumps(model)
    again = loads(text)
    assert dumps(again) == text and again.forces == model.forces and again.actuated == ["theta1", "theta2"]
    assert '"forces"' not in dumps(samples.load("four_bar"))  # files without forces are unchanged
    mistakes = {
        ('"coordinate": "theta1"', '"coordinate": "nope"'): "force 'table'.coordinate",
        ('"stiffness": 30000.0', '"stiffness": -1'): "force 'coilover'.stiffness",
        ('"point2": "ball"', '"point2": "C"'): "force 'coilover'.point2",
        ('"type": "actuator"', '"type": "motor"'): "forces[1].type",
        ('"velocity_scale": 0.001', '"velocity_scale": 0'): "force 'friction'.velocity_scale",
        ("[1.0, 2.5]", "[0.0, 2.5]"): "force 'table'.table",
        ('"formula": "D12*sin(t)"', '"table": [[0, 1]], "formula": "D12*sin(t)"'): "force 'formula'",
        ('"actuated": ["theta1", "theta2"]', '"actuated": ["theta1", "x"]'): "actuated",
    }
    for (old, new), where in mistakes.items():
        assert old in text
        with pytest.raises(ModelError) as error:
            loads(text.replace(old, new, 1))
        assert error.value.where.endswith(where)


# ---------------------------------------------------------------- running
def test_progress_cancellation_and_provenance():
    model = samples.load("four_bar")
    reports = []
    result = simulate(model, 10.0, progress=reports.append, samples=6)  # 10 000 evaluations: several pieces
    assert reports == sorted(reports) and reports[-1] == 1.0 and len(reports) > 3
    p = result.provenance
    assert p.model_hash == hashlib.sha256(dumps(model).encode()).hexdigest()
    assert (p.method, p.rtol, p.atol) == ("CVODES", 1e-10, 1e-12) and p.seconds > 0 and p.version
    stop = threading.Event()
    with pytest.raises(Cancelled):
        simulate(model, 10.0, progress=lambda fraction: fraction > 0.02 and stop.set(), cancel=stop)
    with pytest.raises(Cancelled):
        simulate(model, 1.0, cancel=lambda: True)
    with pytest.raises(ValueError, match="RK45"):
        simulate(model, 1.0, method="Euler")


def test_simulate_command_writes_named_columns_with_units(tmp_path, capsys):
    path = str(samples.path("four_bar"))
    csv, npz = tmp_path / "out.csv", tmp_path / "out.npz"
    assert main(["simulate", path, "--t-end", "0.05", "--samples", "6", "--out", str(csv), "--quiet"]) == 0
    summary = capsys.readouterr().out
    assert "real-time factor" in summary and "constraint residual" in summary
    lines = csv.read_text().splitlines()
    header = lines[0].split(",")  # one plain header line, then the rows; the provenance beside the file
    assert "model_hash" in json.loads((tmp_path / "out.csv.json").read_text())["provenance"]
    assert header[:2] == ["t [s]", "theta1 [rad]"] and "total_energy [J]" in header
    assert all(" [" in column and column.endswith("]") for column in header)
    data = np.loadtxt(csv, delimiter=",", skiprows=1)
    assert data.shape == (6, len(header))
    named = np.genfromtxt(csv, delimiter=",", names=True)
    assert len(named.dtype.names) == len(header) and named.dtype.names[:2] == ("t_s", "theta1_rad")
    np.testing.assert_array_equal(named["t_s"], data[:, 0])
    exact = {"float_precision": "round_trip"} if int(pandas.__version__.split(".")[0]) < 3 else {}  # pandas 3's default
    frame = pandas.read_csv(csv, **exact)
    assert list(frame.columns) == header and np.array_equal(frame.to_numpy(), data)
    assert (
        main(["simulate", path, "--t-end", "0.05", "--samples", "6", "--out", str(npz), "--quiet", "--method", "Radau"])
        == 0
    )
    archive = np.load(npz)
    assert [f"{n} [{u}]" for n, u in zip(archive["names"], archive["units"], strict=True)] == header
    assert archive["data"].shape == data.shape
    assert '"method": "Radau"' in str(archive["provenance"])


def test_initial_velocities_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "spin.csv"
    path = str(samples.path("four_bar"))
    assert main(["simulate", path, "--t-end", "0.3", "--velocity", "theta1=6", "--quiet", "--out", str(out)]) == 0
    table = pandas.read_csv(out)
    reference = simulate(samples.load("four_bar"), 0.3, velocities=np.array([6.0]))
    assert table["d_theta1 [rad/s]"].iloc[0] == 6.0
    assert np.allclose(table["theta1 [rad]"], reference.q[:, 0], rtol=0, atol=1e-12)
    assert main(["simulate", path, "--t-end", "0.3", "--velocity", "theta2=1", "--quiet"]) == 2
    assert "'theta2' is not an independent coordinate (theta1)" in capsys.readouterr().err
    assert main(["simulate", path, "--t-end", "0.3", "--velocity", "theta1=fast", "--quiet"]) == 2
    assert "'fast' is not a number" in capsys.readouterr().err
    rpm = tmp_path / "rpm.csv"  # 57.2957795130823 rpm is 6 rad/s to the last bit
    assert main(["simulate", path, "--t-end", "0.3", "--velocity", "theta1=57.29577951308232 rpm", "--quiet",
                 "--out", str(rpm)]) == 0  # fmt: skip
    assert pandas.read_csv(rpm)["d_theta1 [rad/s]"].iloc[0] == pytest.approx(6.0, rel=1e-15)
    assert main(["simulate", path, "--t-end", "0.3", "--velocity", "theta1=6 m/s", "--quiet"]) == 2
    assert "velocities: theta1: is a velocity, where an angular velocity is expected" in capsys.readouterr().err


def test_initial_velocities_given_from_python_may_be_numpy_numbers():
    """A script's options hold numpy floats as often as Python's: np.float64(6.0) is read as 6.0, and an unknown
    name or a non-finite rate is still refused by name."""
    from mbstudio.simulation.run import initial_velocities

    kinds = Mechanism(samples.load("four_bar")).independent_kinds
    assert initial_velocities({"theta1": np.float64(6.0)}, kinds).tolist() == [6.0]
    with pytest.raises(ModelError, match="'theta2' is not an independent coordinate"):
        initial_velocities({"theta2": 1.0}, kinds)
    with pytest.raises(ModelError, match="not a finite number"):
        initial_velocities({"theta1": np.inf}, kinds)
