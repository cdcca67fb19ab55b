"""Joint stops (simulation/stops.py, dynamics/forces.py): impacts against the textbook restitution law and energy
loss, the closed-loop projection of the impulse, holding and letting go, compliant stops against their static
deflection and the numpy path, the file format's fields and messages, and what old files keep."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from mbstudio.dynamics.closed_loop import closed_loop_forward_dynamics
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, dumps, loads
from mbstudio.simulation.run import simulate
from tests.conftest import FOUR_BAR

G, MASS, LENGTH, SPIN = 9.81, 2.0, 0.5, 1e-4  # the pendulum: a point mass on a light rod (SPIN: the rod's own)
INERTIA = MASS * LENGTH**2 + SPIN  # about the pivot


def pendulum(stop: dict | None = None, low: float | None = -0.3, high: float | None = None, start: float = 0.6,
             forces: list | None = None) -> dict:  # fmt: skip
    """A pendulum swinging about the world y axis, θ = 0 hanging down, θ > 0 swinging towards −x, its
    coordinate's limits [low, high] enforced by `stop`."""
    coordinate = {"name": "theta", "initial": start}
    coordinate |= {k: v for k, v in (("min", low), ("max", high), ("stop", stop)) if v is not None}
    inertia = {"m": MASS, "mx": MASS * LENGTH, "my": 0, "mz": 0, "Ixx": SPIN, "Ixy": 0, "Ixz": 0, "Iyy": INERTIA,
               "Iyz": 0, "Izz": INERTIA}  # fmt: skip
    return {
        "format": "mbstudio",
        "schema_version": 1,
        "name": "pendulum",
        "bodies": [{"label": "1", "name": "bob", "inertia": inertia, "points": {"tip": [LENGTH, 0, 0]}}],
        "joints": [
            {
                "name": "pivot",
                "type": "revolute",
                "parent": "0",
                "child": "1",
                "parent_frame": {"origin": [0, 0, 0], "z": [0, 1, 0], "x": [0, 0, -1]},
                "child_frame": {"origin": [0, 0, 0], "z": [0, 1, 0], "x": [1, 0, 0]},
                "coordinates": [coordinate],
            }
        ],
        "forces": forces or [],
    }


def model(data: dict):
    return loads(json.dumps(data))


def balance(result) -> np.ndarray:
    return next(v for name, _, v in result.monitors if name == "energy_balance")


# ---------------------------------------------------------------------------------------------- impacts
@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_a_pendulum_loses_half_of_1_minus_e_squared_of_its_kinetic_energy_at_the_stop(e):
    """Released from 0.6 rad, it meets its stop at -0.3 rad with ω² = 2 m g L (cos 0.3 − cos 0.6) / I (energy);
    the impact takes ½ (1 − e²) I ω² and keeps the rest: the energy balance (E + dissipated, the impacts' losses
    included) stays where it was, and with e = 1 nothing is lost at all."""
    result = simulate(model(pendulum({"type": "impact", "restitution": e})), 0.7, samples=141)
    impacts = [c for c in result.contacts if c.kind == "impact"]
    omega2 = 2 * MASS * G * LENGTH * (math.cos(0.3) - math.cos(0.6)) / INERTIA
    assert len(impacts) == 1 and impacts[0].coordinate == "theta" and impacts[0].limit == "min"
    assert impacts[0].energy == pytest.approx((1 - e**2) * INERTIA * omega2 / 2, rel=1e-8, abs=1e-10)
    assert impacts[0].impulse == pytest.approx((1 + e) * INERTIA * math.sqrt(omega2), rel=1e-8)
    assert result.q[:, 0].min() >= -0.3 - 1e-9
    assert np.abs(balance(result) - balance(result)[0]).max() < 1e-8
    before, after = result.total[result.t < impacts[0].time], result.total[result.t > impacts[0].time]
    assert before[-1] - after[0] == pytest.approx(impacts[0].energy, abs=1e-8)


def test_the_rate_after_an_impact_is_minus_e_times_the_rate_before():
    """Newton's law, read from the motion itself at instants 1e-9 s either side of the impact."""
    data = pendulum({"type": "impact", "restitution": 0.7})
    first = simulate(model(data), 0.7, samples=3)
    t_hit = first.contacts[0].time
    around = simulate(model(data), 0.7, t_eval=np.array([0.0, t_hit - 1e-9, t_hit + 1e-9, 0.7]))
    before, after = around.qd[1, 0], around.qd[2, 0]
    assert before < 0 and after == pytest.approx(-0.7 * before, rel=1e-6)


def four_bar_falling_on(stop: dict) -> dict:
    """The four-bar in a vertical plane (gravity along −y), the coupler-rocker angle theta3 (a dependent
    coordinate) limited to [1.0, 1.6] by `stop`: the linkage falls onto its min."""
    data = copy.deepcopy(FOUR_BAR)
    data["gravity"] = [0, -9.81, 0]
    data["joints"][2]["coordinates"][0].update({"min": 1.0, "max": 1.6, "stop": stop})
    return data


def test_impacts_of_a_closed_loop_keep_its_velocity_constraints_and_energy_balance_then_it_rests_held():
    """The impulse on a dependent coordinate goes through R: after every impact Φ_q q̇ = 0; the rebounds die out,
    and the stop holds as a one-sided constraint with the force that balances the linkage's weight there (the
    accelerations of the numpy path are zero under gravity and that force)."""
    mech = Mechanism(model(four_bar_falling_on({"type": "impact", "restitution": 0.6})))
    result = simulate(mech, 1.0, samples=401)
    kinds = [c.kind for c in result.contacts]
    assert kinds.count("impact") >= 5 and kinds[-1] == "held" and result.contacts[-1].end is None
    velocity_constraints = (mech.constraint_jacobian(result.q) * result.qd[:, None, :]).sum(axis=2)
    assert np.abs(velocity_constraints).max() < 1e-12 and result.residual.max() < 1e-12
    assert np.abs(balance(result) - balance(result)[0]).max() < 1e-8
    k = mech.coordinates.index("theta3")
    assert result.q[-1, k] == pytest.approx(1.0, abs=1e-12) and np.abs(result.qd[-1]).max() < 1e-12
    force = dict((name, v) for name, _, v in result.stops)["stop:theta3"][-1]
    Q = np.zeros((1, mech.n))
    Q[0, k] = force
    assert force > 0 and result.contacts[-1].force == pytest.approx(force, rel=1e-9)
    free = closed_loop_forward_dynamics(mech, result.q[-1:], np.zeros((1, mech.n)), Q)
    assert np.abs(free).max() < 1e-9


def test_a_held_stop_lets_go_when_its_force_would_pull():
    """Resting on its stop at 0.2 rad, the pendulum is held by m g L sin 0.2; a torque 2 t N m lifting it takes
    that over, and the stop lets go when they are equal, at t = m g L sin(0.2) / 2."""
    lift = {"type": "actuator", "name": "lift", "coordinate": "theta", "formula": "2*t"}
    data = pendulum({"type": "impact", "restitution": 0.5}, low=0.2, start=0.2, forces=[lift])
    result = simulate(model(data), 1.5, samples=151)
    weight = MASS * G * LENGTH * math.sin(0.2)
    held = result.contacts[0]
    assert [c.kind for c in result.contacts] == ["held"] and held.time == 0.0
    assert held.end == pytest.approx(weight / 2, abs=1e-7) and held.force == pytest.approx(weight, rel=1e-9)
    force = dict((name, v) for name, _, v in result.stops)["stop:theta"]
    holding = result.t < held.end
    assert force[holding] == pytest.approx(weight - 2 * result.t[holding], abs=1e-9)
    assert np.all(force[~holding] == 0) and result.q[-1, 0] > 0.2


def test_the_command_line_prints_the_contacts_and_writes_them(tmp_path, capsys):
    from mbstudio.cli import main
    from mbstudio.io.csv_text import sidecar
    from mbstudio.model import save

    def sidecar_text(path):
        return Path(sidecar(path)).read_text()

    save(model(pendulum({"type": "impact", "restitution": 0.5}, low=0.2)), tmp_path / "p.mbs")
    table = tmp_path / "contacts.csv"
    assert main(["simulate", str(tmp_path / "p.mbs"), "--t-end", "2", "--quiet", "--contacts", str(table)]) == 0
    out = capsys.readouterr().out
    assert "contacts of the stops: 19 (18 impact, 1 held, 0 compliant)" in out
    assert "DOP853 stepped the run and located its impacts (CVODES cannot here)" in out
    lines = table.read_text().splitlines()
    assert lines[0].startswith("time [s],joint,coordinate,limit,kind")
    assert len(lines) == 20 and lines[1].split(",")[1:5] == ["pivot", "theta", "min", "impact"]
    assert '"method": "DOP853"' in sidecar_text(table)


def test_impact_stops_need_the_compiled_engine_and_a_start_within_the_limits():
    data = pendulum({"type": "impact"})
    with pytest.raises(ModelError, match="compiled engine"):
        simulate(model(data), 0.1, method="DOP853", compiled=False)
    data = pendulum({"type": "impact"}, low=0.7)
    with pytest.raises(ModelError, match=r"joint 'pivot' coordinate 'theta'.*starts at 0\.6.*min 0\.7"):
        simulate(model(data), 0.1)


# ---------------------------------------------------------------------------------------------- compliant stops
def test_a_compliant_stop_holds_the_weight_at_the_static_deflection_and_matches_the_numpy_path():
    """Settled on its stop (stiffness k), the pendulum sinks in by δ with k δ = m g L sin(0.2 − δ); the compiled
    and numpy paths agree along the way, and the stop's spring is in the potential energy (the energy balance
    holds with the damping's loss)."""
    k = 2000.0
    stop = {"type": "compliant", "stiffness": k, "damping": 150.0, "engagement": 0.005}
    data = pendulum(stop, low=0.2)
    result = simulate(model(data), 3.0, samples=3001)
    depth = 0.2 - result.q[-1, 0]
    assert k * depth == pytest.approx(MASS * G * LENGTH * math.sin(0.2 - depth), rel=1e-6)
    force = dict((name, v) for name, _, v in result.stops)["stop:theta"]
    assert force[-1] == pytest.approx(k * depth, rel=1e-6)
    contact = result.contacts[0]
    assert contact.kind == "compliant" and contact.limit == "min" and contact.unit == "N m"
    assert contact.force == pytest.approx(force.max(), rel=1e-12)
    first_contact = simulate(model(data), 0.6, samples=12001)  # the balance's integral follows the samples
    assert np.abs(balance(first_contact) - balance(first_contact)[0]).max() < 1e-5 * abs(balance(result)[0])
    reference = simulate(model(data), 0.6, method="DOP853", compiled=False, samples=61)
    compiled = simulate(model(data), 0.6, method="DOP853", samples=61)
    assert np.abs(reference.q - compiled.q).max() < 1e-7


def test_the_compliant_stop_pushes_only_and_its_damping_rises_over_the_engagement_distance():
    """The contact law by hand: no force outside, k δ + c s(δ) δ̇ inside with s = 3u² − 2u³, u = δ/d, and never a
    pull (a fast rebound would make k δ + c δ̇ negative)."""
    stop = {"type": "compliant", "stiffness": 1000.0, "damping": 50.0, "engagement": 0.01}
    mech = Mechanism(model(pendulum(stop, low=0.2, high=0.8)))
    forces = AppliedForces(mech)
    element = next(e for e in forces.elements if e.name == "stop:theta")
    x = np.array([0.3, 0.195, 0.195, 0.15, 0.81, 0.195])
    v = np.array([1.0, -0.2, 0.0, -0.1, 0.5, 5.0])
    u = np.array([0.0, 0.5, 0.5, 1.0, 1.0, 0.5])
    depth = np.array([0.0, 0.005, 0.005, 0.05, 0.01, 0.005])
    push = np.maximum(1000 * depth + 50 * u**2 * (3 - 2 * u) * np.array([0, 0.2, 0, 0.1, 0.5, -5.0]), 0)
    expected = push * np.array([1, 1, 1, 1, -1, 1])
    assert np.asarray(forces.stop_force(element, x, v), float) == pytest.approx(expected, abs=1e-12)
    assert expected[-1] == 0  # the rebound's case


def test_a_compliant_stop_is_minus_the_gradient_of_its_potential():
    stop = {"type": "compliant", "stiffness": 1500.0, "damping": 0.0}
    mech = Mechanism(model(pendulum(stop, low=0.2, high=0.5)))
    forces = AppliedForces(mech)
    q = np.array([[0.18], [0.3], [0.53]])
    h = 1e-6
    gradient = (forces.potential(q + h) - forces.potential(q - h)) / (2 * h)
    assert forces.generalized(0.0, q, np.zeros_like(q))[:, 0] == pytest.approx(-gradient, rel=1e-6, abs=1e-9)


# ---------------------------------------------------------------------------------------------- the file
def test_stops_round_trip_and_old_files_keep_their_limits_as_ranges():
    """A stop is written inside its coordinate; without one (every file before stops) the limits are ranges: the
    run is that of the free pendulum, and a note says the limits were passed and are not enforced."""
    data = pendulum({"type": "compliant", "stiffness": 1e4, "damping": 5.0, "engagement": 0.002})
    text = dumps(model(data))
    assert '"stop": {\n' in text and dumps(loads(text)) == text
    impact = model(pendulum({"type": "impact"})).joints[0].coordinates[0].stop
    assert impact.type == "impact" and impact.restitution == 0.5  # the default
    free = simulate(model(pendulum(None, low=-0.3, high=0.65)), 1.0, samples=11)
    assert free.q[:, 0].min() < -0.59 and not free.contacts and not free.stops
    assert len(free.notes) == 1 and "'theta' of joint 'pivot' left its range [-0.3, 0.65]" in free.notes[0]
    assert "not enforced" in free.notes[0]


@pytest.mark.parametrize(
    ("stop", "limits", "message"),
    [
        ({"type": "impact", "restitution": 1.5}, (-0.3, None), r"coordinate 'theta'\.stop\.restitution.*1\.5.*0"),
        ({"type": "compliant", "stiffness": 0}, (-0.3, None), r"coordinate 'theta'\.stop\.stiffness.*> 0"),
        ({"type": "compliant"}, (-0.3, None), r"coordinate 'theta'\.stop: lacks 'stiffness'"),
        ({"type": "compliant", "stiffness": 1, "engagement": -1}, (0, 1), r"stop\.engagement.*distance > 0"),
        ({"type": "compliant", "stiffness": 1, "damping": "-c"}, (0, 1), r"stop\.damping.*undefined parameter"),
        ({"type": "bumper"}, (-0.3, None), r"coordinate 'theta'\.stop\.type.*impact, compliant"),
        ({"type": "impact", "bounce": 1}, (-0.3, None), r"coordinate 'theta'\.stop.*unknown field 'bounce'"),
        ({"type": "impact"}, (None, None), r"coordinate 'theta'\.stop: has no limit to act at"),
        ("hard", (-0.3, None), r"coordinate 'theta'\.stop: must be a JSON object"),
    ],
)
def test_bad_stops_are_refused_naming_the_joint_coordinate_and_field(stop, limits, message):
    data = pendulum(stop, *limits)
    with pytest.raises(ModelError, match=message) as error:
        model(data)
    assert "joint 'pivot' coordinate 'theta'" in str(error.value)


def test_a_stop_on_a_cut_joint_is_refused_where_the_motion_starts():
    data = copy.deepcopy(FOUR_BAR)
    data["joints"][3]["coordinates"][0]["stop"] = {"type": "impact"}
    with pytest.raises(ModelError, match=r"joint 'D' coordinate 'theta4'\.stop: is on a cut joint"):
        simulate(model(data), 0.1)


def test_an_ensemble_reports_its_compliant_contacts_and_refuses_impact_stops():
    from mbstudio.simulation.ensemble import simulate_ensemble

    stop = {"type": "compliant", "stiffness": 2000.0, "damping": 150.0, "engagement": 0.005}
    runs = simulate_ensemble(model(pendulum(stop, low=0.2)), 1.0, initial=[[0.6], [0.5]])
    assert all(r.contacts and r.contacts[0].kind == "compliant" and r.stops for r in runs)
    with pytest.raises(ModelError, match="impact stops.*one simulation per run"):
        simulate_ensemble(model(pendulum({"type": "impact"})), 1.0, initial=[[0.6], [0.5]])


def test_the_block_model_takes_a_compliant_stop_and_moves_as_the_general_route():
    """Alazard et al.'s (2024) block model of the pendulum carries its compliant stop as a joint law: its motion
    through the contacts is the general route's (tyres, which need a road, are refused by name)."""
    from mbstudio.simulation.block_runs import simulate_blocks

    stop = {"type": "compliant", "stiffness": 2000.0, "damping": 150.0, "engagement": 0.005}
    data = pendulum(stop, low=0.2)
    blocks = simulate_blocks(model(data), 1.0, samples=101)
    general = simulate(model(data), 1.0, method="DOP853", samples=101)
    assert general.q[:, 0].min() < 0.2 and np.abs(blocks.q[:, 0] - general.q[:, 0]).max() < 1e-7
    data["forces"] = [{"type": "tyre", "name": "tyre", "body": "1", "point": "tip", "stiffness": 1e5}]
    with pytest.raises(ModelError, match="force 'tyre': is a tyre"):
        simulate_blocks(model(data), 0.1)


def test_where_the_rebounds_end_in_a_hold_survives_rounding(perturb):
    """docs/architecture.md, principle 9: the model's numbers moved by 1e-13 give the same motion to the run's
    tolerance; the
    stop holds where the rebounds fall below the position tolerance, one rebound more or less at most (the rebound
    at the threshold rises no higher than the tolerance)."""
    result = simulate(perturb(model(pendulum({"type": "impact", "restitution": 0.5}, low=0.2))), 2.0, samples=21)
    impacts = [c for c in result.contacts if c.kind == "impact"]
    assert result.contacts[-1].kind == "held" and abs(len(impacts) - 18) <= 1
    assert result.contacts[-1].time == pytest.approx(1.303694, abs=1e-6)
    assert result.q[-1, 0] == pytest.approx(0.2, abs=1e-12) and result.qd[-1, 0] == 0
