"""Equilibria and linear models (linear/equilibrium.py, linear_model.py, modes.py, frequency_response.py,
lpv.py), each against an independent route: hand-derived Lagrangians and closed forms, central differences of
the nonlinear equations on the numpy path, the nonlinear simulation, a modal sum for the frequency response."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.jobs.tasks import linear_family_result, linearization
from mbstudio.kinematics import Mechanism
from mbstudio.linear.equilibrium import equilibrium, operating_point, parse_state
from mbstudio.linear.frequency_response import bode, frequency_grid, frequency_response
from mbstudio.linear.linear_model import linearize
from mbstudio.linear.lpv import linear_family, mode_branches
from mbstudio.linear.modes import mode_poses, modes
from mbstudio.model import ModelError, dumps, loads
from mbstudio.model.document import (
    INERTIA_NAMES,
    Actuator,
    Body,
    Coordinate,
    Frame,
    Joint,
    JointSpringDamper,
    Model,
    Parameter,
    PointForce,
)
from mbstudio.simulation.run import simulate

G = 9.81


def point_pendulum(length: float = 1.0) -> Model:
    """A 1 kg point mass on a massless rod of length L (a parameter) about a horizontal pin (world y)."""
    inertia = dict.fromkeys(INERTIA_NAMES, 0.0) | {"m": 1.0, "mx": "L", "Iyy": "L**2", "Izz": "L**2"}
    model = Model(name="pendulum", parameters=[Parameter("L", length, "m")])
    model.bodies = [Body("1", "bob", inertia, {"bob": ["L", 0.0, 0.0]})]
    pin = Frame([0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0])  # x points down: theta = 0 hangs
    model.joints = [Joint("pin", "revolute", "0", "1", pin, Frame(), [Coordinate("theta", 0.3)])]
    return loads(dumps(model))


def spring_mass(k: float, m: float, c: float = 0.0) -> Model:
    """A mass on a vertical prismatic joint (z up) on a spring of rest length 0 and a damper."""
    inertia = dict.fromkeys(INERTIA_NAMES, 0.0) | {"m": m, "Ixx": 0.01, "Iyy": 0.01, "Izz": 0.01}
    model = Model(name="spring-mass", bodies=[Body("1", "mass", inertia)])
    model.joints = [Joint("slide", "prismatic", "0", "1", Frame(), Frame(), [Coordinate("z", 0.0)])]
    model.forces = [JointSpringDamper("spring", "z", stiffness=k, damping=c)]
    return loads(dumps(model))


# ------------------------------------------------------------------------------------------ closed forms
def test_the_pendulum_periods_and_the_family_over_its_length_follow_sqrt_g_over_l():
    """Alazard et al. (2024), §4.2 check 12: T = 2π √(L/g) is 2.19754 s at L = 1.2 m and 2.53750 s at L = 1.6 m; the LPV
    family over L, each model at its own equilibrium, has ω = √(g/L) at every point."""
    family = linear_family(point_pendulum(), "L", [0.8, 1.2, 1.6])
    omegas = [max(lin.eigenvalues.imag) for lin in family.models]
    assert omegas == pytest.approx(np.sqrt(G / family.values), rel=1e-12)
    periods = [2 * np.pi / w for w in omegas[1:]]
    assert periods == pytest.approx([2.19754, 2.53750], abs=5e-6)
    for lin in family.models:
        assert lin.point.is_equilibrium and abs(lin.point.q[0]) < 1e-12  # it hangs straight down
        (mode,) = modes(lin)
        assert mode.damping == pytest.approx(0.0, abs=1e-12) and mode.stability == "marginal"


def test_the_family_job_sends_each_model_when_done_and_keeps_those_of_a_cancelled_run():
    """The Linearise job over the pendulum's length: one part per model as it is done, the modes followed
    across them at √(g/L) / 2π; the first two parts alone (a job cancelled then) make a family of two."""
    options = {"at": "equilibrium", "schedule": {"name": "L", "from": 0.8, "to": 1.6, "count": 3}}
    parts = []
    result = linearization(dumps(point_pendulum()), options, lambda f, m, part=None: parts.append(part), lambda: False)
    family, branches = result.data.family, result.data.branches
    sent = [p for p in parts if p is not None]
    assert len(sent) == 3 and all(a is b for a, b in zip(sent, result.data.members, strict=True))
    assert family["values"] == pytest.approx([0.8, 1.2, 1.6], abs=1e-15) and not family["stopped"]
    assert (family["kind"], family["unit"]) == ("parameter", "m")
    assert branches["labels"] == ["mode 1 (theta)"] and family["start"] == 0  # the document's L = 1 is nearest 0.8
    assert branches["frequency_hz"][:, 0] == pytest.approx(np.sqrt(G / family["values"]) / (2 * np.pi), rel=1e-12)
    kept = linear_family_result(result.data.members[:2], options, result.provenance.model_hash, 1.0)
    assert kept.data.family["stopped"] and kept.data.family["values"] == pytest.approx([0.8, 1.2], abs=1e-15)
    assert kept.title == "2 of 3 linear models over L"


def test_a_family_names_the_value_where_a_model_is_missing():
    with pytest.raises(ModelError, match=r"schedule: gives no linear model at L = 0 \(Singular matrix\)"):
        linear_family(point_pendulum(), "L", [1.0, 0.0])


def test_modes_keep_their_branches_where_natural_frequencies_cross():
    """A lightly and a heavily damped mode whose |λ| cross, listed by |λ| as modes() lists them, each stay on
    their branch; a damped pair that turns into two real roots goes on as one and starts another."""
    p = np.linspace(0.0, 1.0, 6)
    light, heavy = -0.05 + 1j * (1 + 2 * p), -1.2 + 1j * (2.5 - p)
    members = [np.array(sorted(pair, key=abs)) for pair in zip(light, heavy, strict=True)]
    assert abs(members[0][0]) < abs(members[0][1]) and members[0][0] == light[0] and members[-1][0] == heavy[-1]
    order = mode_branches(members)
    followed = np.array([m[row] for m, row in zip(members, order, strict=True)])
    assert followed[:, 0].tolist() == light.tolist() and followed[:, 1].tolist() == heavy.tolist()
    split = mode_branches([np.array([-1 + 0.5j]), np.array([-0.8 + 0.1j]), np.array([-1.5 + 0j, -0.5 + 0j])])
    assert split.tolist() == [[0, -1], [0, -1], [1, 0]]


def test_a_spring_mass_settles_at_m_g_over_k_and_rings_at_sqrt_k_over_m():
    """Alazard et al. (2024), §4.2 check 13: ω = √(k/m), ζ = c / (2 √(k m)), sagging m g / k under gravity."""
    k, m, c = 2000.0, 3.0, 12.0
    lin = linearize(spring_mass(k, m, c), equilibrium(spring_mass(k, m, c)))
    assert lin.point.q[0] == pytest.approx(-m * G / k, rel=1e-12)
    (mode,) = modes(lin)
    assert mode.frequency_hz * 2 * np.pi == pytest.approx(np.sqrt(k / m), rel=1e-12)
    assert mode.damping == pytest.approx(c / (2 * np.sqrt(k * m)), rel=1e-12)


def test_the_hanging_double_pendulum_has_the_frequencies_of_its_lagrangian():
    """Two uniform rods (m = 1, L = 1, I about the pin 1/3, centre at L/2), angles from the downward vertical:
    about θ = 0, M = [[8/3, 5/6], [5/6, 1/3]] and K = g [[2, 1/2], [1/2, 1/2]]; ω² are the eigenvalues of M⁻¹K."""
    model = samples.load("double_pendulum")
    lin = linearize(model, equilibrium(model, start=np.array([0.2, -0.1])))
    assert np.abs(lin.point.q).max() < 1e-12
    M = np.array([[8 / 3, 5 / 6], [5 / 6, 1 / 3]])
    K = G * np.array([[2, 0.5], [0.5, 0.5]])
    expected = np.sort(np.sqrt(np.linalg.eigvals(np.linalg.solve(M, K)).real)) / (2 * np.pi)
    assert [mode.frequency_hz for mode in modes(lin)] == pytest.approx(expected, rel=1e-10)


# ------------------------------------------------------------------------------------------ equilibria
def test_a_held_coordinate_gets_the_force_holding_it_and_the_others_settle():
    """The double pendulum's upper rod held at 0.3 rad: the lower rod hangs vertical (θ2 = −0.3) and the
    torque holding it balances both rods' weights, g (½ m₁ + m₂) sin 0.3 about the top pin."""
    point = equilibrium(samples.load("double_pendulum"), hold={"theta1": 0.3})
    assert point.values()["theta2"] == pytest.approx(-0.3, abs=1e-10)
    assert point.held["theta1"] == pytest.approx(G * 1.5 * np.sin(0.3), rel=1e-10)
    assert point.is_equilibrium


# the free joint's turning coordinates: (about z, the tilted one, the last), by rotation parameters or Euler angles
BUOY_JOINTS = {"free": ("rz", "ry", "rx"), "free_euler": ("yaw", "pitch", "roll")}


def floating_buoy(kind: str = "free") -> Model:
    """A 2 kg body on a free joint, its weight balanced by a constant upward force 0.1 m above its centre of
    mass: roll and pitch are held (the force rights it), x, y, z and yaw are free."""
    inertia = dict.fromkeys(INERTIA_NAMES, 0.0) | {"m": 2.0, "Ixx": 0.3, "Iyy": 0.4, "Izz": 0.5}
    model = Model(name="buoy", bodies=[Body("1", "buoy", inertia, {"top": [0.0, 0.0, 0.1]})])
    yaw, pitch, roll = BUOY_JOINTS[kind]
    names = ("x", "y", "z", yaw, pitch, roll) if kind == "free_euler" else ("x", "y", "z", roll, pitch, yaw)
    model.joints = [Joint("float", kind, "0", "1", Frame(), Frame(), [Coordinate(n, 0.0) for n in names])]
    model.joints[0].coordinates[names.index(pitch)].initial = 0.2  # tilted: the force rights it
    model.forces = [PointForce("lift", "1", "top", [0.0, 0.0, 2.0 * G])]
    return loads(dumps(model))


@pytest.mark.parametrize("kind", BUOY_JOINTS)
def test_a_floating_body_has_its_neutral_directions_reported_instead_of_failing(kind):
    yaw, pitch, roll = BUOY_JOINTS[kind]
    point = equilibrium(floating_buoy(kind))
    values = point.values()
    assert abs(values[pitch]) < 1e-10 and abs(values[roll]) < 1e-10  # upright
    directions = point.neutral_directions()
    assert sorted(next(iter(d)) for d in directions) == sorted(["x", "y", yaw, "z"])
    assert all(len(d) == 1 for d in directions)  # each along one coordinate
    kinds = sorted(mode.kind for mode in modes(linearize(floating_buoy(kind), point)))
    assert kinds.count("neutral") == 4 and kinds.count("oscillation") == 2


def test_no_equilibrium_names_the_unbalanced_coordinate_and_its_force():
    model = samples.load("double_pendulum")
    model.gravity = [0.0, 0.0, 0.0]
    model.forces = [Actuator("push", "theta2", formula="0.5")]  # a constant torque nothing resists
    with pytest.raises(ModelError, match=r"equilibrium: none found .* unbalanced on theta2 0\.5 N m"):
        equilibrium(model)


def test_operating_points_and_holds_refuse_what_is_not_independent():
    model = samples.load("four_bar")
    dependent = Mechanism(model).dependent[0]
    with pytest.raises(ModelError, match=f"hold: is not an independent coordinate.*'{dependent}'"):
        equilibrium(model, hold={dependent: 0.1})
    with pytest.raises(ModelError, match=f"at: '{dependent}' is not an independent coordinate or d_ its rate"):
        parse_state(f"{dependent}=0.1", Mechanism(model).independent_kinds)
    with pytest.raises(ModelError, match="at: is not NAME=VALUE"):
        parse_state("theta1", {"theta1": "R"})
    with pytest.raises(ModelError, match="not a finite number"):
        parse_state("theta1=nan", {"theta1": "R"})


# ------------------------------------------------------------------------------------------ derivatives
def _central(f, x0: np.ndarray, h: float) -> np.ndarray:
    """Central differences with one Richardson step (error O(h⁴)), column by column."""

    def once(step: float) -> np.ndarray:
        return np.array([(f(x0 + step * e) - f(x0 - step * e)) / (2 * step) for e in np.eye(len(x0))]).T

    return (4 * once(h / 2) - once(h)) / 3


def test_a_b_c_d_of_a_moving_closed_loop_are_its_derivatives():
    """The four-bar at a moving state (not an equilibrium), pushed at a coupler point and twisted: A, B, C, D
    from CasADi against central differences of the nonlinear equations, the outputs evaluated on the numpy
    path (tree kinematics, R, acceleration analysis), all within 1e-7 of each matrix's largest entry."""
    model = samples.load("four_bar")
    mech = Mechanism(model)
    (crank,) = mech.independent
    coupler = next(b for b in model.bodies if b.points and b.label != model.joints[0].child)
    point_name = next(iter(coupler.points))
    inputs = [crank, f"{coupler.label}.{point_name}.fx", f"{coupler.label}.ty"]
    outputs = [crank, *mech.dependent[:1], f"d_{mech.dependent[0]}", f"dd_{mech.dependent[0]}"]
    outputs += [f"{coupler.label}.{point_name}.{part}" for part in ("x", "vy", "az")]
    point = operating_point(model, "given", {crank: 0.7}, {crank: 2.0})
    lin = linearize(model, point, inputs, outputs)
    assert not point.is_equilibrium and lin.drift[0] == 2.0
    eng = engine(model)
    ind = eng.independent

    def state(x: np.ndarray, u: np.ndarray):
        moved = point.q.copy()
        moved[ind] += x[:1]
        q = eng.close_loops(moved, tol=1e-15)[0]
        v = point.v + x[1:]
        body = mech.tree.body_index(coupler.label)
        st = mech.motion(q)
        local = np.asarray(mech.tree.geometry.point(coupler, point_name), float)

        def jacobian(world: np.ndarray) -> np.ndarray:
            return mech.tree.point_jacobian(st, body, world[None])[0]

        at = st.p[body][0] + st.R[body][0] @ local
        tau = point.tau.copy()
        tau[ind[0]] += u[0]
        tau += jacobian(at)[0] * u[1]
        # a torque T about world y as a couple: F = T x̂ at P + ẑ, −F at P ((P + ẑ − P) × F = T ŷ)
        tau += (jacobian(at + [0.0, 0.0, 1.0]) - jacobian(at))[0] * u[2]
        return q, v, tau

    def f(xu: np.ndarray) -> np.ndarray:
        q, v, tau = state(xu[:2], xu[2:])
        return np.concatenate([v, eng.accelerations(0.0, q, v, tau)])

    def y(xu: np.ndarray) -> np.ndarray:
        from mbstudio.simulation.measures import _Motion

        q, v, tau = state(xu[:2], xu[2:])
        qd = mech.velocities(q, v)
        qdd = mech.accelerations(q, qd, eng.accelerations(0.0, q, v, tau))
        motion = _Motion(mech, np.zeros(1), q[None], qd, qdd)
        position, velocity, acceleration = (p[0] for p in motion.point(coupler.label, point_name))
        k = mech.coordinates.index(mech.dependent[0])
        return np.array([q[ind[0]], q[k], qd[0, k], qdd[0, k], position[0], velocity[1], acceleration[2]])

    xu = np.zeros(2 + len(inputs))
    AB, CD = _central(f, xu, 1e-3), _central(y, xu, 1e-3)
    for exact, numeric in ((lin.A, AB[:, :2]), (lin.B, AB[:, 2:]), (lin.C, CD[:, :2]), (lin.D, CD[:, 2:])):
        assert np.abs(exact - numeric).max() <= 1e-7 * np.abs(exact).max()
    assert np.abs(lin.D[1:3]).max() == 0 and np.abs(lin.D[3]).max() > 0  # only accelerations feel the inputs


def test_the_frequency_response_is_the_modal_sum():
    """H(jω) = C (jωI − A)⁻¹ B + D by solves, against Σ C v_i w_iᵀ B / (jω − λ_i) + D from the eigenvectors."""
    model = spring_mass(2000.0, 3.0, 12.0)
    lin = linearize(model, equilibrium(model), ["z"], ["z", "d_z", "dd_z"])
    w = np.array([0.3, 2.0, np.sqrt(2000 / 3), 150.0])
    values, V = np.linalg.eig(lin.A)
    W = np.linalg.inv(V)
    modal = np.array([lin.C @ V @ np.diag(1 / (1j * x - values)) @ W @ lin.B + lin.D for x in w])
    H = frequency_response(lin.A, lin.B, lin.C, lin.D, w)
    assert np.abs(H - modal).max() <= 1e-12 * np.abs(modal).max()
    magnitude, phase = bode(H)
    assert magnitude[0, 0, 0] == pytest.approx(-20 * np.log10(abs(2000 - 3 * 0.3**2 + 12j * 0.3)), abs=1e-9)
    assert phase[2, 0, 0] == pytest.approx(-90.0, abs=1e-9)  # at resonance
    grid = frequency_grid(lin.eigenvalues)
    assert grid[0] < np.sqrt(2000 / 3) / 5 and grid[-1] > 5 * np.sqrt(2000 / 3)


# ------------------------------------------------------------------------------------------ against motion
def _linear_vs_nonlinear(model, point, t_end: float = 2.0, kick: float = 1e-4) -> float:
    """The largest difference between the perturbed simulation and the linear model's response, relative to
    the largest deviation: both start 1e-4 from the equilibrium in the first independent coordinate."""
    lin = linearize(model, point)
    eng = engine(model)
    start = point.q.copy()
    start[eng.independent[0]] += kick
    start = eng.close_loops(start)[0]
    moved = model.copy()
    for joint in moved.joints:
        for coordinate in joint.coordinates:
            if coordinate.name in eng.mech.coordinates:  # a cut joint's coordinates are derived
                coordinate.initial = float(start[eng.mech.coordinates.index(coordinate.name)])
    times = np.linspace(0.0, t_end, 81)
    run = simulate(moved, t_end, "CVODES", rtol=1e-12, atol=1e-14, t_eval=times)
    nonlinear = run.q[:, eng.independent] - point.q[eng.independent]
    x0 = np.zeros(len(lin.A))
    x0[0] = kick
    linear = np.array([(expm(lin.A * t) @ x0)[: len(eng.independent)] for t in times])
    return float(np.abs(nonlinear - linear).max() / np.abs(linear).max())


def test_a_small_swing_of_the_double_pendulum_follows_its_linear_model():
    model = samples.load("double_pendulum")
    assert _linear_vs_nonlinear(model, equilibrium(model, start=np.zeros(2))) < 1e-3


# ------------------------------------------------------------------------------------------ modes
def test_mode_shapes_cover_every_coordinate_and_their_poses_close_the_loops():
    model = samples.load("four_bar")
    eng = engine(model)
    lin = linearize(model, equilibrium(model, start=eng.mech.assemble({"theta1": -2.0})[0]))  # the hanging one
    (mode,) = [m for m in modes(lin) if m.kind == "oscillation"]
    assert mode.shape.shape == (eng.n,)
    assert mode.shape == pytest.approx(lin.R @ mode.shape[eng.independent], rel=1e-12)  # through R
    poses = mode_poses(model, lin, mode, frames=8)
    assert poses.shape == (8, eng.n)
    residual = np.abs(eng.mech.residual(poses)).max()
    assert residual < 1e-10 and np.ptp(poses[:, eng.independent[0]]) > 0.1
