"""Contact pairs as located events (simulation/contact_watch.py, docs/contact.md "Touch-downs located"): a ball
dropped fast onto thin boxes lands on them with every integrator, moving as on a ground plane (an independent law
that cannot be stepped over), its energy never rising; the touch-down is located to the instant free flight
predicts; a model without pairs is not cut."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mbstudio.dynamics.engine import engine
from mbstudio.model import dumps, loads
from mbstudio.model.document import Contact
from mbstudio.simulation.contact_watch import pair_watch
from mbstudio.simulation.regula_falsi import illinois
from mbstudio.simulation.run import simulate

from .test_contact import G, ball
from .test_shape_pairs import N_EXP, RADIUS, V_S, K, on_table, pair

HEIGHT, T_END, SAMPLES = 1.0, 0.5, 501
RTOL, ATOL = 1e-10, 1e-12
THICKNESS = (0.2, 0.02, 0.002)
SPEEDS = (0.0, 5.0, 20.0)


def on_thin_box(thickness: float, dissipation: float = 0.3):
    """The ball (radius 0.05 m, 1 kg) at HEIGHT over a fixed box `thickness` thick, its top face z = 0;
    frictionless, so that a straight drop is the same motion as on the plane z = 0."""
    half = thickness / 2
    model = on_table([pair(half_extents1=[2.0, 0.5, half], dissipation=dissipation, friction=0.0)], HEIGHT)
    model.ground.points["table"] = [0.0, 0.0, -half]
    return loads(dumps(model))


def on_plane(dissipation: float = 0.3):
    """The same ball on the ground plane z = 0 (a contact element: contact_law.py)."""
    model = on_table([], HEIGHT)
    model.forces, model.measures = [Contact("g", "1", "c", RADIUS, K, N_EXP, dissipation, 0.0, V_S)], []
    return loads(dumps(model))


def dropped(model, speed: float, method: str):
    velocities = np.zeros(6)
    velocities[2] = -speed
    return simulate(model, T_END, samples=SAMPLES, velocities=velocities, method=method, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("method", ["CVODES", "DOP853"])
@pytest.mark.parametrize("speed", SPEEDS)
@pytest.mark.parametrize("thickness", THICKNESS)
def test_a_ball_dropped_fast_lands_on_a_thin_box_as_on_the_ground(thickness, speed, method):
    """Dropped from 1 m at up to 20 m/s onto boxes 0.2 m to 2 mm thick (before the watch every one but the thickest
    at rest was passed through): the ball's centre never goes below the top face, its height follows the drop onto
    the plane z = 0 to 1e-6 m (both at rtol 1e-10: the runs' errors are far below), and the total energy
    (kinetic, gravity's and the contact's elastic) never rises by more than 100 rtol of its scale, the
    integrator's error through an impact (damped impacts only take energy out; an impact found late, at the
    watch's allowance of half the pass depth, would start with k δ^(n+1)/(n+1) ≈ 200 J of potential)."""
    result = dropped(on_thin_box(thickness), speed, method)
    reference = dropped(on_plane(), speed, method)
    assert result.q[:, 2].min() > 0.0
    assert np.abs(result.q[:, 2] - reference.q[:, 2]).max() < 1e-6
    scale = abs(result.total[0])
    assert np.diff(result.total).max() <= 100 * RTOL * scale


@pytest.mark.parametrize("method", ["CVODES-BDF", "Radau", "RK45"])
def test_every_integrator_lands_the_ball_on_the_thinnest_box(method):
    """The other integrators (CVODES' BDF, scipy's implicit Radau and explicit RK45) at 20 m/s on the 2-mm box."""
    result = dropped(on_thin_box(0.002), 20.0, method)
    reference = dropped(on_plane(), 20.0, method)
    assert result.q[:, 2].min() > 0.0
    assert np.abs(result.q[:, 2] - reference.q[:, 2]).max() < 1e-6


def test_the_touch_down_is_located_at_the_instant_free_flight_predicts():
    """From 1 m at 5 m/s the sphere's surface meets the top face when its centre is at z = r: free flight gives
    t = (−v + sqrt(v² + 2 g (h − r))) / g; the energy balance (E + what damping took) holds to 1e-8 of E through
    the impacts, the run's work carried across its legs."""
    result = dropped(on_thin_box(0.002), 5.0, "CVODES")
    touch = (-5.0 + math.sqrt(25.0 + 2 * G * (HEIGHT - RADIUS))) / G
    assert result.q[:, 2].min() < RADIUS
    before = result.t < touch
    assert (result.q[before, 2] > RADIUS).all() and (result.q[~before, 2] < RADIUS).any()
    assert result.energy_drift < 1e-8


def test_the_watch_is_a_function_of_the_state_alone():
    """The same run twice, and once in two calls (resumed at an output), gives the same samples bit for bit."""
    model = on_thin_box(0.02)
    first, second = dropped(model, 20.0, "CVODES"), dropped(model, 20.0, "CVODES")
    assert np.array_equal(first.q, second.q) and np.array_equal(first.qd, second.qd)


def test_a_model_without_pairs_is_not_cut():
    """A ball on a ground plane has no pair to watch; a pair model's watch knows each contact point's pass depth:
    the thin box's thickness plus both radii (the box's sharp corners, radius 0)."""
    assert pair_watch(engine(ball(1.0, 0.3))) is None
    eng = engine(on_thin_box(0.002))
    watch = pair_watch(eng)
    y = eng.pack(eng.mech.tree.initial_coordinates(), np.zeros(6))
    depth, speed, rate, passes = watch.points(0.0, y)
    assert depth == pytest.approx([RADIUS - HEIGHT], abs=1e-12)
    assert passes == pytest.approx([0.002 + 2 * RADIUS], rel=1e-12)
    assert speed == pytest.approx([0.0], abs=1e-12) and rate == pytest.approx([G], rel=1e-9)


def test_illinois_finds_a_root_to_the_width_asked():
    """Regula falsi (Illinois) on e^t − 2 from 0 to 1: ln 2 to within the width, the point returned below zero."""

    def trial(c):
        return 2.0 - math.exp(c), np.array([c]), 1

    root, state, calls = illinois(trial, (0.0, 1.0), (1.0, 2 - math.e, np.array([1.0])), 1e-12)
    assert math.log(2) <= root <= math.log(2) + 1e-12 and state[0] == root and 0 < calls < 40


@pytest.mark.parametrize("speed", [5.0, 20.0])
def test_the_rigid_model_lands_a_small_fast_ball_on_the_thinnest_box(speed):
    """The rigid model's steps of 1 ms carried a 1-mm ball at 5 m/s and 20 m/s through the 2-mm box (midpoints 5 and
    20 mm apart, the contact found within 2.5 and 10 mm of the face and 4 mm deep): cut where a pair's point could
    move half its pass depth, the ball bounces (e = 0.5) and its centre stays above the top face less its radius;
    its energy (kinetic and gravity's) never rises."""
    model = on_table([pair(half_extents1=[2.0, 0.5, 0.001], radius2=1e-3, restitution=0.5)], HEIGHT)
    model.ground.points["table"] = [0.0, 0.0, -0.001]
    velocities = np.zeros(6)
    velocities[2] = -speed
    result = simulate(loads(dumps(model)), T_END, samples=SAMPLES, velocities=velocities, contact="rigid")
    assert result.q[:, 2].min() > -1e-3 and result.qd[-1, 2] != 0.0 and result.qd[:, 2].max() > 0.4 * speed
    assert np.diff(result.total).max() <= 1e-12 * abs(result.total[0])


def test_the_command_line_computes_the_samples_python_does(tmp_path):
    """`mbstudio simulate` of the ball dropped at 20 m/s onto the 2-mm box (a file) writes the heights Python's
    simulate gives, bit for bit: the legs and touch-downs follow from the states alone, not from the entry point
    (the command line's progress and cancel)."""
    import subprocess
    import sys

    path, out = tmp_path / "drop.mbs", tmp_path / "drop.csv"
    path.write_text(dumps(on_thin_box(0.002)))
    command = [sys.executable, "-m", "mbstudio.cli", "simulate", str(path), "--t-end", str(T_END), "--samples",
               str(SAMPLES), "--velocity", "z=-20", "--out", str(out)]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, cwd=tmp_path)
    header = out.read_text().splitlines()[0].split(",")
    heights = np.loadtxt(
        out, delimiter=",", skiprows=1, usecols=header.index(next(h for h in header if h.startswith("z")))
    )
    velocities = np.zeros(6)
    velocities[2] = -20.0
    python = simulate(loads(path.read_text()), T_END, samples=SAMPLES, velocities=velocities)
    assert heights.min() > 0.0 and np.array_equal(heights, python.q[:, 2])


def test_a_stop_within_a_leg_keeps_the_outputs_of_the_legs_before():
    """Where a leg's integration stops (a closed loop's watch, say: integrators.IntegrationError), the error carries
    the outputs of every leg before it, as computed, and their evaluations."""
    from mbstudio.simulation.integrators import IntegrationError, integrate

    eng = engine(on_thin_box(0.002))
    watch = pair_watch(eng)
    y0 = eng.pack(eng.mech.tree.initial_coordinates(), np.array([0.0, 0.0, -20.0, 0.0, 0.0, 0.0]))
    times = np.linspace(0.0, T_END, SAMPLES)
    whole, _, _ = integrate(eng, times, y0, "DOP853", RTOL, ATOL)

    def run(at, y, start, watched):  # the first leg and its touch-down's trials as integrate's, then a stop
        if start > 0:
            raise IntegrationError(start, "stopped here", y, np.empty((0, len(y))), calls=7)
        return integrate(eng, at, y, "DOP853", RTOL, ATOL, t0=start)

    with pytest.raises(IntegrationError) as stopped:
        watch.integrate(run, times, y0, 0.0, IntegrationError)
    kept = int(np.searchsorted(times, stopped.value.time, side="right"))
    assert 0 < kept < SAMPLES and len(stopped.value.outputs) == kept and stopped.value.calls > 7
    assert np.abs(stopped.value.outputs - whole[:kept]).max() < 1e-7 * np.abs(whole).max()  # its own legs' rtol


@pytest.mark.slow  # a stiff block's engine and two runs of its legs (~4 s each): the suite's five minutes
@pytest.mark.parametrize("method", ["CVODES", "DOP853"])
def test_a_sharp_block_dropped_fast_lands_on_the_thinnest_box(method):
    """The 1-kg block's sharp corners (radius 0) at 5 m/s onto the 2-mm box: their pass depth is the box's 2 mm, so
    the contact must stop them within 1 mm (k = 1e9 N/m^1.5: 0.6 mm; with 1e6 they would need 9 mm and the box's
    bottom face pushes them through, the law's limit, docs/contact.md). The block lands and stays (c_d = 20 s/m),
    its energy never rising; DOP853's outputs before the touch-down are integrated again to it (the leg's own
    bulged 1.2 m through the box)."""
    model = on_table([pair(shape2="box", half_extents1=[2.0, 0.5, 0.001], stiffness=1e9, friction=0.0)], HEIGHT)
    model.ground.points["table"] = [0.0, 0.0, -0.001]
    result = dropped(loads(dumps(model)), 5.0, method)
    assert result.q[:, 2].min() > 0.024 and abs(result.q[-1, 2] - 0.025) < 1e-3
    assert np.diff(result.total).max() <= 100 * RTOL * abs(result.total[0])
