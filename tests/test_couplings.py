"""Couplings (mimic joints, gears, MJCF equality joints): constraint rows beside the loops', in every number
system and in the compiled engine, checked against hand derivations."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from scipy.integrate import solve_ivp

from mbstudio.dynamics.closed_loop import closed_loop_forward_dynamics, reduced_mass_matrix
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forces import kinetic_energy
from mbstudio.identification.pipeline import base_parameters
from mbstudio.kinematics import Mechanism
from mbstudio.model import (
    INERTIA_NAMES,
    AssemblyError,
    Body,
    Coordinate,
    Coupling,
    Frame,
    Joint,
    Model,
    ModelError,
    Parameter,
    dumps,
    loads,
    validate,
)
from mbstudio.model.document import Actuator
from mbstudio.report import check_report, format_report
from mbstudio.simulation.run import simulate

G = 9.81
Z1, Z2 = 12, 30
RATIO = -Z1 / Z2
M2, E2, IC2, IZZ1 = 1.2, 0.03, 0.01, 0.002  # wheel 2: mass, eccentricity, inertia about its centre; wheel 1's


def wheel(label: str, m: float, about_centre: float, e: float) -> Body:
    """A disc turning about its frame's z axis, its centre of mass at e along x."""
    inertia = dict.fromkeys(INERTIA_NAMES, 0.0) | {"m": m, "mx": m * e, "Izz": about_centre + m * e * e}
    inertia |= {"Ixx": about_centre / 2, "Iyy": about_centre / 2 + m * e * e}
    return Body(label, f"wheel {label}", inertia)


def gear_pair(torque: str = "0.05*sin(3*t)") -> Model:
    """Two wheels on parallel axes in a vertical plane (gravity along −y), wheel 2 driven by wheel 1 through
    z1 = 12 and z2 = 30 teeth with an offset of 0.1 rad: th2 = −z1/z2 th1 + 0.1; a motor on th1."""
    model = Model(name="gears", gravity=[0, -G, 0], parameters=[Parameter("z1", Z1), Parameter("z2", Z2)])
    model.bodies = [wheel("1", 0.5, IZZ1, 0.0), wheel("2", M2, IC2, E2)]
    model.joints = [
        Joint("J1", "revolute", "0", "1", Frame([0, 0, 0]), Frame(), [Coordinate("th1", 0.2)]),
        Joint("J2", "revolute", "0", "2", Frame([0.1, 0, 0]), Frame(), [Coordinate("th2", 0.0)]),
    ]
    model.couplings = [Coupling("gears", "th2", "th1", ratio="-z1/z2", offset=0.1)]
    model.forces = [Actuator("motor", "th1", formula=torque)]
    return loads(dumps(model))


def gear_acceleration(t: float, th1: float) -> float:
    """By hand: T = ½ (I1 + r² I2) th1'², V = m2 g e sin th2, with I2 = Ic2 + m2 e² about wheel 2's axis."""
    th2 = RATIO * th1 + 0.1
    inertia = IZZ1 + RATIO**2 * (IC2 + M2 * E2**2)
    return (0.05 * np.sin(3 * t) - RATIO * M2 * G * E2 * np.cos(th2)) / inertia


def test_a_gear_pair_has_one_degree_of_freedom_and_the_hand_derived_inertia_and_energy():
    mech = Mechanism(gear_pair())
    assert (mech.dof, mech.dof_grubler, mech.independent, mech.dependent) == (1, 1, ["th1"], ["th2"])
    q = mech.assemble(None)
    assert q[0, 1] == pytest.approx(RATIO * 0.2 + 0.1, abs=1e-15)
    inertia = IZZ1 + RATIO**2 * (IC2 + M2 * E2**2)
    assert reduced_mass_matrix(mech, q)[0, 0, 0] == pytest.approx(inertia, rel=1e-14)
    qd = mech.velocities(q, [[1.7]])
    assert kinetic_energy(mech, q, qd)[0] == pytest.approx(0.5 * inertia * 1.7**2, rel=1e-14)


def test_the_gear_pairs_motion_and_reaction_follow_the_hand_derivation():
    model = gear_pair()
    hand = solve_ivp(
        lambda t, y: [y[1], gear_acceleration(t, y[0])], (0, 1.0), [0.2, 0.0], rtol=1e-12, atol=1e-12, dense_output=True
    )
    times = np.linspace(0, 1.0, 21)
    for method, compiled in (("CVODES", True), ("DOP853", False)):
        run = simulate(model, 1.0, method=method, rtol=1e-11, atol=1e-12, t_eval=times, compiled=compiled)
        np.testing.assert_allclose(run.q[:, 0], hand.sol(times)[0], rtol=0, atol=1e-8)
        np.testing.assert_allclose(run.q[:, 1], RATIO * run.q[:, 0] + 0.1, rtol=0, atol=1e-12)
        by_hand = [gear_acceleration(t, x) for t, x in zip(times, run.q[:, 0], strict=True)]
        np.testing.assert_allclose(run.qdd[:, 0], by_hand, rtol=0, atol=1e-8)
        # the coupling's force on wheel 2 is what its own equation lacks: I2 th2'' + m2 g e cos th2
        column = run.reactions.names.index("gears.force")
        expected = (IC2 + M2 * E2**2) * run.qdd[:, 1] + M2 * G * E2 * np.cos(run.q[:, 1])
        np.testing.assert_allclose(run.reactions.values[:, column], expected, rtol=0, atol=1e-10)
        assert run.reactions.units[column] == "N m"


def test_couplings_give_the_same_numbers_in_every_number_system_and_the_compiled_engine():
    model = gear_pair()
    model.couplings = [Coupling("cam", "th2", "th1", polynomial=[0.1, "-z1/z2", 0.3, -0.05])]
    mech = Mechanism(model)
    q = mech.assemble({"th1": 0.7})
    qd = mech.velocities(q, [[1.3]])
    # Φ̈ at q̈ = 0 against the second derivative of Φ along the motion, by central differences
    step, x = 1e-4, q[0, 0]
    path = [mech.residual(mech.assemble({"th1": x + s * 1.3 * step}))[0, 0] for s in (-1, 0, 1)]
    assert abs(path[1]) < 1e-15 and abs(path[0]) < 1e-15  # the row itself stays closed along the path
    acceleration = mech.acceleration_term(q, qd)[0, 1]  # th2'' at th1'' = 0: P''(th1) th1'²
    assert acceleration == pytest.approx((2 * 0.3 - 6 * 0.05 * x) * 1.3**2, rel=1e-13)
    reference = closed_loop_forward_dynamics(mech, q, qd)[0]
    vp = Mechanism(model, precision=30)
    qv = vp.assemble({"th1": vp.backend.scalar(0.7)})
    assert abs(float(qv[0, 1]) - q[0, 1]) < 1e-15
    accelerations = closed_loop_forward_dynamics(vp, qv, vp.velocities(qv, [[1.3]]))
    assert np.abs(vp.backend.to_float(accelerations) - reference).max() < 1e-13
    exact = Mechanism(model, precision="sympy")  # exact: the teeth counts stay symbols
    th1, th2, z1, z2 = sympy.symbols("th1 th2 z1 z2", real=True)
    phi = exact.residual(np.array([[th1, th2]], dtype=object))[0, 0]
    polynomial = sympy.Rational(1, 10) - z1 / z2 * th1 + sympy.Rational(3, 10) * th1**2 - th1**3 / 20
    assert sympy.expand(phi - (th2 - polynomial)) == 0
    eng = engine(model)
    assert np.abs(eng.accelerations(0.0, q[0], qd[0, :1]) - reference).max() < 1e-12
    closed, residual = eng.close_loops(np.array([0.7, 0.0]))
    assert residual < 1e-12 and closed[1] == pytest.approx(q[0, 1], abs=1e-13)


def mimic_gripper(revolute: bool = True) -> Model:
    """A palm with two jaws on joints mirrored about the palm's centre, the right one mimicking the left (URDF
    mimic: multiplier −1, offset 0)."""
    jaw = dict.fromkeys(INERTIA_NAMES, 0.0) | {"m": 0.1, "mx": 0.004, "Ixx": 1e-5, "Iyy": 3e-4, "Izz": 3e-4}
    kind = "revolute" if revolute else "prismatic"
    model = Model(name="gripper", bodies=[Body("L", "left jaw", dict(jaw)), Body("Rj", "right jaw", dict(jaw))])
    model.joints = [
        Joint("left", kind, "0", "L", Frame([-0.02, 0, 0], [0, 1, 0], [1, 0, 0]), Frame(), [Coordinate("qL", 0.1)]),
        Joint("right", kind, "0", "Rj", Frame([0.02, 0, 0], [0, 1, 0], [-1, 0, 0]), Frame(), [Coordinate("qR", -0.1)]),
    ]
    model.couplings = [Coupling("mimic", "qR", "qL", ratio=-1, offset=0)]
    return loads(dumps(model))


@pytest.mark.parametrize("revolute", [True, False])
def test_a_mimic_gripper_has_one_degree_of_freedom_and_check_says_so(revolute):
    model = mimic_gripper(revolute)
    mech = Mechanism(model)
    assert mech.dof == mech.dof_grubler == 1 and len(mech.independent) == 1
    report = check_report(model)
    assert report["dof_jacobian"] == 1 and report["couplings"] == ["mimic: qR = -1 · qL"]
    assert "couplings (1): mimic: qR = -1 · qL" in format_report(report)
    q = mech.assemble(None)
    assert q[0, 1] == pytest.approx(-q[0, 0], abs=1e-15)


def test_base_parameters_of_a_coupled_mechanism_agree_in_double_and_variable_precision():
    """The gear pair regroups the wheels' axial moments into Izz1 + r² Izz2 (rank 5 of 20): both numerical
    routes see it; the symbolic method of Ros et al., which knows joints and not couplings, keeps them apart and
    says why."""
    run = base_parameters(gear_pair(), "all", digits=40, samples=30)
    assert run.dp.rank == run.vp.final.rank == 5
    assert run.comparison["vp_dp"]["agree"]
    assert run.symbolic.rank == 6 and any("coupling" in note for note in run.symbolic.notes)


def test_a_coupling_round_trips_and_bad_ones_are_named():
    model = gear_pair()
    assert loads(dumps(model)) == model
    assert '"couplings": [' in dumps(model) and '"ratio": "-z1/z2"' in dumps(model)
    cases = [
        (Coupling("gears", "th3", "th1"), "coupling 'gears'.follower", "unknown coordinate"),
        (Coupling("gears", "th2", "th2"), "coupling 'gears'.leader", "follower itself"),
        (Coupling("J1", "th2", "th1"), "coupling 'J1'", "name of a joint"),
        (Coupling("gears", "th2", "th1", ratio=2, polynomial=[0, 1]), "coupling 'gears'", "both a polynomial"),
        (Coupling("gears", "th2", "th1", ratio="zz"), "coupling 'gears'.ratio", "zz"),
        (Coupling("gears", "th2", None, ratio=2), "coupling 'gears'.ratio", "without a leader"),
        (Coupling("gears", "th2", "th1", polynomial=[]), "coupling 'gears'.polynomial", "number of coefficients"),
    ]
    for coupling, where, words in cases:
        model.couplings = [coupling]
        with pytest.raises(ModelError) as caught:
            validate(model)
        assert where in str(caught.value) and words in str(caught.value)


def test_a_coupling_that_cannot_hold_is_named_when_assembling():
    model = gear_pair()
    model.couplings = [Coupling("square", "th2", "th1", polynomial=[0, 0, 1])]  # th2 = th1², driven by th2
    model.independent_coordinates = ["th2"]
    mech = Mechanism(loads(dumps(model)))
    assert mech.assemble({"th2": 0.25})[0, 0] == pytest.approx(0.5, abs=1e-12)  # the starting branch, th1 > 0
    with pytest.raises(AssemblyError, match="th2 = -1: coupling 'square' leaves residual"):
        mech.assemble({"th2": -1.0})


def test_a_rack_and_pinion_couples_a_slide_to_a_turn():
    """A pinion of radius r (inertia I) turning about z drives a rack of mass m along x: x = r θ, so the rack
    adds m r² to the pinion's inertia, and the coupling force on the rack (N) is its mass times its
    acceleration under a torque on the pinion."""
    r, inertia, mass, torque = 0.04, 2e-4, 1.5, 0.3
    model = Model(name="rack and pinion", gravity=[0, 0, -G])
    pinion = dict.fromkeys(INERTIA_NAMES, 0.0) | {"m": 0.2, "Ixx": 1e-4, "Iyy": 1e-4, "Izz": inertia}
    rack = dict.fromkeys(INERTIA_NAMES, 0.0) | {"m": mass, "Ixx": 1e-3, "Iyy": 1e-3, "Izz": 1e-3}
    model.bodies = [Body("p", "pinion", pinion), Body("r", "rack", rack)]
    model.joints = [
        Joint("spin", "revolute", "0", "p", Frame(), Frame(), [Coordinate("theta", 0.0)]),
        Joint("slide", "prismatic", "0", "r", Frame([0, -r, 0], [1, 0, 0]), Frame(), [Coordinate("x", 0.0)]),
    ]
    model.couplings = [Coupling("mesh", "x", "theta", ratio=r)]
    model.forces = [Actuator("motor", "theta", formula=str(torque))]
    run = simulate(loads(dumps(model)), 0.5, rtol=1e-11, atol=1e-12, samples=11, check_accuracy=True)
    acceleration = torque / (inertia + mass * r * r)
    np.testing.assert_allclose(run.qdd[:, 0], acceleration, rtol=1e-10)
    # the parabola to the integrator's own accuracy (a run at a tenth of the tolerances: docs/accuracy.md), which is
    # relative to the states' scale; the stroke here is 0.58 m, and CVODES' steps follow its version's heuristics
    x = run.q[:, 1]
    tolerance = 10 * run.provenance.accuracy * max(1.0, np.abs(x).max()) + 1e-14
    np.testing.assert_allclose(x, r * 0.5 * acceleration * run.t**2, rtol=0, atol=tolerance)
    force = run.reactions.values[:, run.reactions.names.index("mesh.force")]
    assert run.reactions.units[run.reactions.names.index("mesh.force")] == "N"
    np.testing.assert_allclose(force, mass * r * acceleration, rtol=1e-10)


def test_the_pandas_mimic_finger_is_coupled_on_import():
    """Its second finger mimics the first (URDF mimic, multiplier 1): 8 degrees of freedom, not 9."""
    from mbstudio.io.example_robots import robot_path, robots_folder

    if robots_folder() is None:
        pytest.skip("example-robot-data is not installed (the test extra has it)")
    pytest.importorskip("yourdfpy")
    from mbstudio.io.urdf_import import import_urdf

    result = import_urdf(robot_path("panda"), floating_base=False)
    [coupling] = result.model.couplings
    assert (coupling.follower, coupling.leader, coupling.ratio) == ("panda_finger_joint2", "panda_finger_joint1", 1.0)
    mech = Mechanism(result.model)
    assert mech.n == 9 and mech.dof == 8 and "panda_finger_joint1" in mech.independent


@pytest.mark.parametrize("ratio", [-1.0, 2.5])
def test_the_leader_drives_whatever_the_rounding(perturb, ratio):
    """A mimic pair's two columns have equal norms, and a ratio above 1 makes the leader's the larger: the
    follower is still the dependent one, with every number moved by 1e-13 (docs/decisions.md)."""
    model = mimic_gripper()
    model.couplings[0].ratio = ratio
    mech = Mechanism(perturb(loads(dumps(model))))
    assert (mech.independent, mech.dependent) == (["qL"], ["qR"])
