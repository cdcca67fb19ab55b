"""Time stepping with rigid contacts (simulation/rigid_stepping.py, docs/contact.md) against what mechanics says of
its simple cases, each by a route of its own: a ball's apex heights from its flight state z + ż² / 2g (energy) and
Newton's impact law, a block's acceleration on an incline from Newton's law with Coulomb friction, its stopping
distance from the work of friction, the friction cone at every sample, and solo12's foot forces against its
weight from Pinocchio's reading of the same URDF."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from mbstudio.io.example_robots import robot_path, robots_folder
from mbstudio.model import dumps
from mbstudio.model.errors import ModelError
from mbstudio.simulation.run import simulate

from .test_contact import MASS, G, ball, block, column, incline

ROUNDING = 64 * np.finfo(float).eps  # a few ulps of a quantity's scale, summed over a step's operations
CORNERS = range(4)


def energy(result) -> np.ndarray:
    return result.kinetic + result.potential


def test_a_ball_bounces_to_apex_heights_in_the_ratio_e_squared_and_never_gains_energy():
    """Newton's impact law with restitution e = 0.8 from 1 m: each apex is e² of the one before (to 1e-3; the
    scheme places each impact within a step of the touch-down, 0.1 ms here), and the total energy never rises:
    the flights keep it to rounding (the midpoint rule is exact under constant gravity), the impacts take
    (1 − e²) of the kinetic energy out."""
    e, radius = 0.8, 0.1
    result = simulate(ball(1.0 + radius, 0.0, radius, restitution=e), 1.7, samples=1701, contact="rigid", step=1e-4)
    height = result.q[:, 2] - radius + result.qd[:, 2] ** 2 / (2 * G)  # the apex of the flight through each sample
    tops = [k for k in range(1, len(result.t)) if result.qd[k - 1, 2] > 0 >= result.qd[k, 2]]
    assert len(tops) >= 2
    apexes = np.array([1.0] + [height[k] for k in tops])
    assert apexes[1:] / apexes[:-1] == pytest.approx(np.full(len(tops), e * e), rel=1e-3)
    total = energy(result)
    assert np.diff(total).max() <= ROUNDING * total[0]
    assert total[-1] < 0.5 * total[0]
    landed = column(result, "f.normal_force")
    assert landed.max() > 0 and landed.min() == 0.0  # impulses at the impacts' steps, nothing in flight


def test_a_ball_whose_bounces_die_out_at_a_coarse_step_comes_to_rest_on_the_plane_without_gaining_energy():
    """At h = 1 ms a ball with e = 0.5 bounces lower and lower until its rebounds are slower than g h / 2: the
    step whose contact is still apart at its midpoint lets it close the gap (u⁺_n ≥ −2 gap / h) instead of
    stopping it short of the plane. Before, it hung 1.9e-6 m above the plane, 1.0e-5 J more than it had."""
    radius = 0.1
    result = simulate(ball(1.0 + radius, 0.0, radius, restitution=0.5), 3.0, samples=3001, contact="rigid", step=1e-3)
    total = energy(result)
    assert np.diff(total).max() <= ROUNDING * total[0]
    assert abs(result.q[-1, 2] - radius) <= ROUNDING
    assert result.qd[-1, 2] == 0.0


@pytest.mark.parametrize("step", [1e-3, 1e-4])
def test_a_plastic_landing_ends_on_the_plane_not_in_it(step):
    """With e = 0 the step that lands stops the ball where its midpoint had it, up to h |v| / 2 deep (4.4 m/s
    from 1 m: 1.2e-4 m at 0.1 ms, kept for ever before); its end is lifted back onto the plane along M⁻¹ Jᵀ
    with the velocity untouched, so the ball never sinks and the energy still never rises."""
    radius = 0.1
    result = simulate(ball(1.0 + radius, 0.0, radius), 1.0, samples=1001, contact="rigid", step=step)
    assert (result.q[:, 2] - radius).min() >= -ROUNDING
    assert result.q[-1, 2] - radius == pytest.approx(0.0, abs=ROUNDING)
    total = energy(result)
    assert np.diff(total).max() <= ROUNDING * total[0]


def test_restitution_is_a_contact_parameter_from_zero_to_one():
    with pytest.raises(ModelError, match=r"'foot'\.restitution: is out of range \(got 1\.5\)"):
        ball(1.0, 0.0, restitution=1.5)
    with pytest.raises(ModelError, match="restitution"):
        ball(1.0, 0.0, restitution=-0.1)


def test_a_block_slides_down_a_steep_incline_at_coulombs_acceleration_losing_energy():
    """tan θ > μ: the block accelerates at g (sin θ − μ cos θ) from the first step (to 1e-4; the solver's
    tolerance gives 1e-9), stays on the plane, and its energy falls at every sample (friction's work)."""
    angle, mu = math.radians(30), 0.3
    result = simulate(block(mu, incline(angle)), 0.5, samples=51, contact="rigid")
    expected = G * (math.sin(angle) - mu * math.cos(angle))
    assert result.qdd[:, 0] == pytest.approx(np.full(len(result.t), expected), rel=1e-4)
    assert np.abs(result.qd[:, 1:]).max() < 1e-6 * result.qd[-1, 0]
    total = energy(result)
    assert np.all(np.diff(total) < 0)
    for i in CORNERS:
        normal, friction = column(result, f"mk{i}.normal_force"), column(result, f"mk{i}.friction_force")
        assert friction == pytest.approx(mu * normal, rel=1e-6, abs=1e-9 * MASS * G)


def test_a_block_on_a_gentle_incline_does_not_creep():
    """tan θ < μ: friction holds the block exactly; it does not move at all (rigid Coulomb friction has no
    stiction velocity), where the compliant model creeps at v_s tan θ / sqrt(μ² − tan² θ)."""
    angle, mu = math.radians(10), 0.5
    result = simulate(block(mu, incline(angle)), 0.5, samples=51, contact="rigid")
    assert np.abs(result.q - result.q[0]).max() < 1e-12
    friction = sum(column(result, f"mk{i}.friction_x") for i in CORNERS)
    assert friction == pytest.approx(np.full(len(result.t), -MASS * G * math.sin(angle)), rel=1e-9)


def test_a_block_launched_on_the_flat_stops_after_the_distance_friction_allows():
    """v₀ = 1 m/s, μ = 0.5: it stops after v₀² / (2 μ g), within the distance it travels in a step (1 ms), and
    stays stopped."""
    mu, v0, step = 0.5, 1.0, 1e-3
    result = simulate(block(mu), 0.4, samples=401, contact="rigid", velocities=np.array([v0, 0, 0, 0, 0, 0]))
    assert result.q[-1, 0] - result.q[0, 0] == pytest.approx(v0 * v0 / (2 * mu * G), abs=v0 * step)
    stopped = result.t > v0 / (mu * G) + step
    assert np.abs(result.qd[stopped]).max() < 1e-12


def test_a_box_pushed_diagonally_keeps_its_friction_in_the_cone_against_the_slip():
    """A push of 1.5 μ m g along (2, 1, 0): the box slides along the push, each corner's friction is at most
    μ times its normal force (on the cone's edge while sliding) and opposes its slip."""
    mu = 0.5
    push = 1.5 * mu * MASS * G * np.array([2.0, 1.0, 0.0]) / math.sqrt(5)
    result = simulate(block(mu, push=tuple(push)), 0.3, samples=31, contact="rigid")
    velocity = result.qd[-1, :3]
    assert np.cross(velocity, push)[2] == pytest.approx(0.0, abs=1e-9 * np.linalg.norm(velocity))
    for i in CORNERS:
        normal = column(result, f"mk{i}.normal_force")
        friction = np.column_stack([column(result, f"mk{i}.friction_{a}") for a in "xyz"])
        slip = np.column_stack([column(result, f"mk{i}.slip_{a}") for a in "xyz"])
        size = np.linalg.norm(friction, axis=1)
        assert np.all(size <= mu * normal * (1 + ROUNDING) + ROUNDING * MASS * G)
        moving = (np.linalg.norm(slip, axis=1) > 0.1) & (normal > 0)
        assert moving.sum() > 20
        assert size[moving] == pytest.approx(mu * normal[moving], rel=1e-6)
        along = np.einsum("ki,ki->k", friction[moving], slip[moving])
        assert along == pytest.approx(-size[moving] * np.linalg.norm(slip[moving], axis=1), rel=1e-6)


@pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
def test_solo12_standing_on_rigid_feet_carries_its_weight():
    """PD hold at the nominal pose, one sphere per foot on z = 0, μ = 1: after 1.5 s the legs have settled
    under the load and the feet's vertical forces sum to m g (m from Pinocchio's reading of the URDF) to 1e-6,
    every foot pressing and sticking (no slip, its force inside the cone)."""
    from mbstudio.io.legged import solo12

    pin = pytest.importorskip("pinocchio")
    mass = pin.computeTotalMass(pin.buildModelFromUrdf(str(robot_path("solo12")), pin.JointModelFreeFlyer()))
    result = simulate(solo12("stand"), 1.5, samples=16, contact="rigid")
    feet = [f"{leg}_FOOT_contact_f" for leg in ("FL", "FR", "HL", "HR")]
    vertical = sum(column(result, f"{foot}.fz") for foot in feet)
    assert vertical[-1] == pytest.approx(mass * G, rel=1e-6)
    for foot in feet:
        normal, friction = column(result, f"{foot}.normal_force")[-1], column(result, f"{foot}.friction_force")[-1]
        assert 0 < friction < normal
        assert column(result, f"{foot}.slip_speed")[-1] < 1e-9


def test_unknown_contact_models_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown contact model 'soft'"):
        simulate(ball(1.0, 0.0), 0.1, contact="soft")


def test_the_cli_simulates_with_rigid_contacts(tmp_path):
    """`mbstudio simulate --contact rigid --step`: the ball's run written with its contact series."""
    path, out = tmp_path / "ball.mbs", tmp_path / "ball.csv"
    path.write_text(dumps(ball(0.3, 0.0, restitution=0.5)))
    args = [sys.executable, "-m", "mbstudio.cli", "simulate", str(path), "--t-end", "0.5", "--contact", "rigid"]
    done = subprocess.run([*args, "--step", "1e-4", "--out", str(out), "--quiet"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    header = out.read_text().splitlines()[0]
    assert "f.normal_force [N]" in header and "f.fz [N]" in header
    assert "(from a run at twice the step)" in done.stdout  # the tolerances do not apply to Moreau's steps
    assert "sensitive" not in done.stdout  # the bounces' estimate is a small fraction of the scale
    rejected = subprocess.run([*args, "--step", "0"], capture_output=True, text=True)
    assert rejected.returncode == 2 and "--step" in rejected.stderr


def test_the_window_draws_a_rigid_runs_recorded_contact_forces():
    """The force arrows and the support polygon of a run's sample use the forces the run recorded
    (contact_results.recorded_contacts), here the rigid block's corner forces: a quarter of the weight each
    (the least-norm share of its four redundant corners), the centre of pressure under its centre of mass."""
    from mbstudio.jobs.tasks import motion_series
    from mbstudio.kinematics import Mechanism
    from mbstudio.simulation.contact_results import recorded_contacts, support

    model = block(0.5)
    result = simulate(model, 0.02, samples=3, contact="rigid")
    series = motion_series(result)
    recorded = recorded_contacts(model, series, 2)
    assert sorted(recorded) == [f"k{i}" for i in CORNERS]
    for name, (point, force) in recorded.items():
        assert force == pytest.approx([0.0, 0.0, MASS * G / 4], abs=1e-9 * MASS * G)
        assert point == pytest.approx([column(result, f"m{name}.{axis}")[2] for axis in "xyz"], abs=1e-15)
    stance = support(Mechanism(model), float(result.t[2]), result.q[2], result.qd[2], recorded)
    assert len(stance.polygon) == 4
    assert stance.pressure_centre[:2] == pytest.approx(result.q[2, :2], abs=1e-12)
