"""Measures: the SLA's alignment set at its design position against angles built from the
sample's own description and from body points by plain geometry, rates against finite differences along the
motion, the four-bar's transmission angle against the law of cosines, force measures against the force
elements, the file format's checks, and the columns in every motion (API, kinematics and simulate CSV)."""

from __future__ import annotations

import math

import numpy as np
import pandas
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.jobs.tasks import kinematics
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, dumps, loads
from mbstudio.model.document import (
    DistanceMeasure,
    ForceMeasure,
    Harmonic,
    JointSpringDamper,
    PointMeasure,
    Trajectory,
)
from mbstudio.simulation.measures import applied_forces, measure_columns
from mbstudio.simulation.run import simulate

DEG = math.pi / 180


def _series(model, trajectory: str) -> dict[str, np.ndarray]:
    result = kinematics(dumps(model), {"trajectory": trajectory}, lambda *_: None, lambda: False)
    return {"t": result.data.t, **{k.split(" [")[0]: v for k, v in result.data.series.items()}}


def _design(mech: Mechanism) -> dict[str, float]:
    q = mech.assemble()
    zero = np.zeros_like(q)
    return {name: float(v[0]) for name, _, v in measure_columns(mech, np.zeros(1), q, zero, zero)}


def test_sla_alignment_at_the_design_position():
    """The sample was built for kingpin inclination 3°, caster 3°, zero toe and camber −3° (its description);
    the kingpin angles again from the ball joints' world positions, camber and toe from the wheel's spin axis
    as the wheel body's x axis (X5 = −Y3), the scrub radius from a hand-placed contact point."""
    mech = Mechanism(samples.load("sla_suspension"))
    values = _design(mech)
    assert values["alignment.kingpin_inclination"] == pytest.approx(3 * DEG, abs=1e-12)
    assert values["alignment.caster"] == pytest.approx(3 * DEG, abs=1e-12)
    assert values["alignment.toe"] == pytest.approx(0, abs=1e-12)
    assert values["alignment.camber"] == pytest.approx(-3 * DEG, abs=1e-12)
    assert values["alignment.wheel_travel"] == 0.0
    q = mech.assemble()
    points = mech.points(q)
    d, g = points[("3", "D")][0], points[("3", "G")][0]
    axis = (d - g) / np.linalg.norm(d - g)  # left corner: inboard is −y
    assert math.degrees(math.atan(axis[1] / axis[2])) == pytest.approx(-3, abs=1e-10)  # top inboard
    assert math.degrees(math.atan(-axis[0] / axis[2])) == pytest.approx(3, abs=1e-10)  # top rearward
    rotation, centre = (x[0] for x in mech.poses(q)["5"])
    spin = rotation[:, 0]  # X5, pointing outboard (+y) on this corner
    assert spin[1] > 0
    assert math.degrees(math.asin(-spin[2])) == pytest.approx(-3, abs=1e-10)
    assert math.degrees(math.atan2(spin[0], spin[1])) == pytest.approx(0, abs=1e-10)  # no toe: no x part
    down = np.array([0, 0, -1]) + spin[2] * spin
    contact = centre + 0.3 * down / np.linalg.norm(down)
    ground = g + axis * (contact[2] - g[2]) / axis[2]
    assert values["alignment.scrub_radius"] == pytest.approx(contact[1] - ground[1], abs=1e-14)


def test_sla_wheel_travel_sweep_gives_the_alignment_curves_and_their_rates():
    series = _series(samples.load("sla_suspension"), "wheel_travel")
    travel = series["alignment.wheel_travel"]
    assert travel.max() == pytest.approx(0.1193, abs=1e-3) and travel.min() == pytest.approx(-0.1149, abs=1e-3)
    # camber gains negative camber in bump (the short upper arm), caster stays within a tenth of a degree
    assert np.corrcoef(travel, series["alignment.camber"])[0, 1] < -0.99
    assert np.ptp(series["alignment.caster"]) < 0.1 * DEG
    # exact rates against central differences in time of the measured curves (200 steps over 2 s)
    t = series["t"]
    rising = slice(5, 45)  # theta1 rising well away from its turning points, where the rates are 0/0
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 at the turning points, outside `rising`
        rates = {
            "bump_steer": np.gradient(series["alignment.toe"], t) / np.gradient(travel, t),
            "motion_ratio": -np.gradient(_series(_with_coil_length(), "wheel_travel")["coil"], t)
            / np.gradient(travel, t),
        }
    for name, expected in rates.items():
        assert np.allclose(series[f"alignment.{name}"][rising], expected[rising], rtol=2e-3, atol=1e-4), name
    turning = np.argmax(travel)
    assert np.isnan(series["alignment.bump_steer"][turning])  # no vertical motion there: no ratio


def _with_coil_length():
    model = samples.load("sla_suspension")
    model.measures.append(DistanceMeasure("coil", "6", "C", "7", "ball"))
    return model


def test_four_bar_transmission_angle_follows_the_law_of_cosines_and_the_coupler_point_its_rates():
    model = samples.load("four_bar")
    model.trajectories = [Trajectory("swing", {"theta1": [Harmonic(1.5, 2.0)]}, 3.0, 601)]  # dense: 5 ms steps
    series = _series(model, "swing")
    mech = Mechanism(model)
    theta = np.linspace(-np.pi, np.pi, 73)
    q = mech.assemble({"theta1": theta})
    zero = np.zeros_like(q)
    columns = {name: v for name, _, v in measure_columns(mech, np.zeros(len(q)), q, zero, zero)}
    L0, L1, L2, L3 = 0.4, 0.1, 0.35, 0.3
    crank_to_rocker = np.hypot(L1 * np.cos(theta) - L0, L1 * np.sin(theta))
    law = np.arccos((L2**2 + L3**2 - crank_to_rocker**2) / (2 * L2 * L3))
    assert np.abs(columns["transmission"] - law).max() < 1e-12
    t = series["t"]  # velocities and accelerations of the coupler point against differences in time
    for axis in "xz":
        position, velocity = series[f"coupler_point.{axis}"], series[f"coupler_point.v{axis}"]
        acceleration = series[f"coupler_point.a{axis}"]
        inner = slice(2, -2)
        assert np.allclose(np.gradient(position, t)[inner], velocity[inner], atol=2e-3 * np.abs(velocity).max())
        assert np.allclose(np.gradient(velocity, t)[inner], acceleration[inner], atol=2e-3 * np.abs(acceleration).max())


def test_force_measures_agree_with_the_force_elements():
    model = samples.load("sla_suspension")
    model.measures = [ForceMeasure("spring", "coilover")]
    mech = Mechanism(model)
    rng = np.random.default_rng(3)
    q = mech.assemble({"theta1": rng.uniform(-0.3, 0.3, 6), "theta2": rng.uniform(-1, 1, 6)})
    qd = np.einsum("nij,nj->ni", mech.r_matrix(q), rng.uniform(-2, 2, (6, 2)))
    columns = {name: v for name, _, v in measure_columns(mech, np.zeros(6), q, qd, np.zeros_like(q))}
    forces = AppliedForces(mech)
    generalized = np.asarray(forces.generalized(np.zeros(6), q, qd), float)
    # Q = −f ∂L/∂q: the tension times the length's gradient, which finite differences of the length give
    step = 1e-6
    for k in range(6):
        grad = np.zeros(mech.n)
        for i in range(mech.n):
            plus, minus = q[k].copy(), q[k].copy()
            plus[i] += step
            minus[i] -= step
            lengths = [
                measure_columns(mech, np.zeros(1), x[None], np.zeros((1, mech.n)), np.zeros((1, mech.n)))[0][2][0]
                for x in (plus, minus)
            ]
            grad[i] = (lengths[0] - lengths[1]) / (2 * step)
        assert np.allclose(-columns["spring.force"][k] * grad, generalized[k], atol=1e-5 * np.abs(generalized[k]).max())


def test_measures_are_columns_of_every_motion_and_of_the_csv_files(tmp_path, capsys):
    model = samples.load("four_bar")
    result = simulate(model, 0.2)
    names = [name for name, _, _ in result.columns()]
    assert "coupler_point.x" in names and "transmission" in names
    out = tmp_path / "four_bar.csv"
    assert main(["simulate", str(samples.path("four_bar")), "--t-end", "0.2", "--out", str(out)]) == 0
    table = pandas.read_csv(out)
    assert "coupler_point.x [m]" in table.columns and "transmission [rad]" in table.columns
    index = names.index("transmission")
    assert np.allclose(table["transmission [rad]"], result.columns()[index][2], rtol=1e-6)
    out = tmp_path / "sla.csv"
    arguments = ["kinematics", str(samples.path("sla_suspension")), "--trajectory", "wheel_travel", "--out", str(out)]
    assert main(arguments) == 0
    table = np.genfromtxt(out, delimiter=",", names=True)
    assert "alignmentcamber_rad" in table.dtype.names and len(table) == 201


@pytest.mark.parametrize(
    "change, where, words",
    [
        (lambda m: m.measures.append(PointMeasure("P", "9", "K")), "measure 'P'.body", "unknown body"),
        (lambda m: m.measures.append(PointMeasure("P", "5", "Q")), "measure 'P'.point", "unknown point"),
        (lambda m: m.measures.append(PointMeasure("alignment", "5", "K")), "measure 'alignment'", "twice"),
        (lambda m: m.measures.append(PointMeasure("theta1", "5", "K")), "measure 'theta1'", ""),
        (lambda m: m.measures.append(ForceMeasure("F", "nothing")), "measure 'F'.element", "unknown force"),
        (lambda m: setattr(m.measures[0], "radius", -0.3), "measure 'alignment'.radius", "not positive"),
        (lambda m: setattr(m.measures[0], "spin_axis", [0, 0, 0]), "measure 'alignment'.spin_axis", "direction"),
    ],
)
def test_bad_measures_are_refused_by_name(change, where, words):
    model = samples.load("sla_suspension")
    change(model)
    with pytest.raises(ModelError) as caught:
        loads(dumps(model))  # as a file with this content would be read
    assert caught.value.where.startswith(where) and words in str(caught.value)


def test_a_suspension_damper_must_be_a_spring_damper_and_every_field_round_trips():
    model = samples.load("sla_suspension")
    assert dumps(loads(dumps(model))) == dumps(model) and loads(dumps(model)).measures == model.measures
    model.forces.append(JointSpringDamper("bump_stop", "theta1", 1e4))
    model.measures[0].damper = "bump_stop"
    with pytest.raises(ModelError, match="measure 'alignment'.damper: is not a spring-damper"):
        loads(dumps(model))


def test_force_arrows_are_the_spring_tension_along_its_line_and_the_point_forces():
    mech = Mechanism(samples.load("sla_suspension"))
    q = mech.assemble()[0]
    arrows = applied_forces(mech, 0.0, q, np.zeros_like(q))
    points = mech.points(q[None])
    c, ball = points[("6", "C")][0], points[("7", "ball")][0]
    tension = 30_000.0 * (np.linalg.norm(ball - c) - 0.487041)  # at rest: the spring alone, by hand
    assert [(name, tuple(p)) for name, p, _ in arrows] == [("coilover", tuple(c)), ("coilover", tuple(ball))]
    assert np.allclose(arrows[0][2], tension * (ball - c) / np.linalg.norm(ball - c), rtol=1e-12)
    assert np.allclose(arrows[1][2], -arrows[0][2], rtol=0, atol=0)
    balloon = Mechanism(samples.load("balloon"))
    ((name, _, force),) = applied_forces(balloon, 0.0, balloon.assemble()[0], np.zeros(balloon.n))
    assert name == "buoyancy" and np.allclose(force, [0, 16 * 9.81, 0])
