"""The handling vehicle's roll (samples/vehicle_handling.mbs, docs/vehicle.md "Roll at high lateral acceleration"):
the roll the manoeuvres read is the chassis's roll from the road plane whatever the car's heading; the K&C rig's
axle roll test (kc_rig.axle_roll) against the corner's own curves and stops; and the constant-radius run's roll
gradient, which falls with the lateral acceleration, against the roll stiffness the rig gives at the wheel travels
the run reaches."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline

from mbstudio.dynamics.closed_loop import JointReactions
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, load
from mbstudio.simulation.kc_rig import (
    KCOptions,
    axle_roll,
    axle_roll_stiffness,
    kc_analysis,
    travel_at,
    vehicle_corner,
)
from mbstudio.simulation.manoeuvres import ENTRY_TIME, G, ManoeuvreOptions, manoeuvre, vehicle_series
from mbstudio.simulation.run import SimulationResult

from .test_handling import roll_gradient_by_hand

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
TRACK = 1.5174266897061266  # m: the wheel centres', front and rear (measured on the sample)


@pytest.fixture(scope="module")
def car():
    return load(SAMPLES / "vehicle_handling.mbs")


def posed_run(mech: Mechanism, headings: np.ndarray, roll: float, pitch: float, speed: float) -> SimulationResult:
    """The car held rigid (its suspension at design) at each heading ψ with the given roll and pitch, moving at
    `speed` along its heading, as a run's result: what the manoeuvres read from a simulation."""
    names = mech.coordinates
    q = np.repeat(mech.assemble(None), len(headings), axis=0)  # the loops close whatever the chassis's pose
    q[:, names.index("yaw")], q[:, names.index("pitch")], q[:, names.index("roll")] = headings, pitch, roll
    assert np.max(np.abs(mech.residual(q))) < 1e-12
    qd = np.zeros_like(q)
    qd[:, names.index("x")] = speed * np.cos(headings)
    qd[:, names.index("y")] = speed * np.sin(headings)
    st = mech.tree.motion(q)
    poses = {label: (np.asarray(st.R[b], float), np.asarray(st.p[b], float))
             for b, label in enumerate(mech.tree.body_labels) if label != "0"}  # fmt: skip
    zeros, units = np.zeros(len(q)), ["rad" if n in ("yaw", "pitch", "roll") else "m" for n in names]
    return SimulationResult(headings, names, units, q, qd, np.zeros_like(q), poses, zeros, zeros, zeros, {},
                            JointReactions([], [], [], [], np.zeros((len(q), 0))))  # fmt: skip


def test_the_roll_the_manoeuvres_read_is_the_chassis_roll_from_the_road_at_every_heading(car):
    """The car rolled 3° (right side down) and pitched −1°, turned through two full headings (its yaw passing ±π):
    the roll the manoeuvres read is 3° at every heading, as is the chassis's own roll from the road plane,
    atan2(R₃₂, R₃₃) of its rotation (the turn of its y axis out of the horizontal about its x axis); the wheels'
    steer and camber do not change with the heading, and a car moving along its heading has no sideslip. A roll
    taken about the world's x axis first (atan2(−R₂₃, R₃₃)) would read the pitch at 90° of heading: the headings
    tell the two apart."""
    mech = Mechanism(car)
    headings = np.linspace(-math.pi, 3 * math.pi, 33)
    roll, pitch = math.radians(3.0), math.radians(-1.0)
    result = posed_run(mech, headings, roll, pitch, speed=10.0)
    series = vehicle_series(mech, result)
    R = result.poses["chassis"][0]
    ulps = 64 * np.finfo(float).eps  # rad: a few roundings of the rotations' products
    assert np.allclose(series["roll"], roll, rtol=0, atol=ulps)
    assert np.allclose(np.arctan2(R[:, 2, 1], R[:, 2, 2]), roll, rtol=0, atol=ulps)
    for name in ("front_steer", "rear_steer", "front_camber", "rear_camber"):
        assert np.ptp(series[name]) < ulps, name
    assert np.allclose(series["sideslip"], 0.0, rtol=0, atol=ulps)
    world_x_first = np.arctan2(-R[:, 1, 2], R[:, 2, 2])
    assert np.max(np.abs(world_x_first - roll)) > 0.5 * abs(roll)


@pytest.fixture(scope="module")
def front(car):
    """The K&C of the car's front left corner over ±60 mm (its rebound stop at −26.3 mm, its bump stop at +39.2)."""
    return kc_analysis(vehicle_corner(car, "fl"), KCOptions(travel=0.06, travel_points=61, load_points=3))


def test_the_axle_roll_test_keeps_the_axle_load_and_its_stiffness_is_the_slope_of_its_moment(car, front):
    """The front axle rolled ±3° on the rig, the body free to heave: the two wheels' vertical loads (the sweep's,
    read at their travels) add to twice the design load at every roll; the stiffness is dM/dφ (central differences
    of the moment, away from the stops' corners); up to the rebound stop it is the springs' t² k_w / 2 at the wheel
    rate the rig reports; the stiffness steps up where the wheel going down reaches its rebound stop, the damper
    20 mm longer than at design (the sample's stop), a travel the rig's poses give."""
    track = TRACK
    result = axle_roll(front, track, math.radians(3.0), points=601, tyre_stiffness=250000.0)
    s, curves = front.travel.x, front.travel.curves
    load = CubicHermiteSpline(s, curves["vertical_load"][1], curves["wheel_rate"][1])  # the rig's loads and rates
    total = load(result.left_travel) + load(result.right_travel)
    assert np.allclose(total, 2 * curves["vertical_load"][1][len(s) // 2], rtol=1e-9)
    slope = (result.moment[2:] - result.moment[:-2]) / (result.roll[2:] - result.roll[:-2])
    change = np.abs(np.diff(result.stiffness)) / result.stiffness[1:]
    smooth = (change[1:] < 1e-3) & (change[:-1] < 1e-3)  # off the stops' corners, which a difference straddles
    assert np.count_nonzero(smooth) > 0.8 * len(slope)
    # a central difference of M is off dM/dφ by its truncation h² d³M/dφ³ / 6: the stiffness's second difference / 6
    truncation = np.abs(np.diff(result.stiffness, 2)) / 6
    error = np.abs(slope - result.stiffness[1:-1])
    assert np.all((error <= 2 * truncation + 1e-9 * result.stiffness[1:-1])[smooth])
    rate = front.design["wheel_rate"][1]
    middle = len(result.roll) // 2
    assert result.stiffness[middle] == pytest.approx(track**2 * rate / 2, rel=1e-9)
    # the rebound stop: where the damper is 20 mm longer than at design, along the rig's sweep
    names = Mechanism(vehicle_corner(car, "fl")).coordinates
    damper = front.travel.q[:, names.index("fl_damper_s")]
    stop = float(np.interp(0.02, damper[::-1] - damper[len(damper) // 2], s[::-1]))
    assert -0.03 < stop < -0.02  # m of wheel travel: the stop at 20 mm of the damper over a motion ratio near 0.76
    spacing = s[1] - s[0]  # the rates between two of the sweep's points are interpolated
    rolled = result.roll > 0
    below = result.stiffness[rolled & (result.left_travel > stop + spacing)]
    above = result.stiffness[rolled & (result.left_travel < stop - spacing)]
    assert np.ptp(below) < 0.01 * below[0] and np.min(above) > 1.5 * np.max(below)
    # the tyres add the roll 2 M / (k_t t²), and the stiffness through them is the two in series
    assert np.allclose(result.total_roll - result.roll, 2 * result.moment / (250000.0 * track**2), rtol=1e-12)
    with pytest.raises(ModelError, match="axle roll.*beyond the K&C sweep"):
        axle_roll(front, track, math.radians(10.0))


BANDS = (0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.77)  # g: where the roll gradient is read
# 40 m, 5 -> 25 m/s over 30 s: past the grip, the circle held up to 0.77 g
LIMIT = {"kind": "constant_radius", "speeds": (5.0, 25.0), "duration": 30.0, "radius": 40.0, "samples": 601}


def banded_roll_gradients(result) -> tuple[np.ndarray, np.ndarray]:
    """The run's roll gradient dφ/da_y (deg/g) by least squares over its held readings in each band of BANDS, and
    which readings fall in each band (bands, K); NaN in a band of fewer than 5 readings (the circle lost before it)."""
    table = {name: values for name, _, values in result.columns}
    lost = result.figures.get("circle_lost_at_time", (math.inf, "s"))[0]
    held = (table["t"] >= ENTRY_TIME) & (table["t"] < lost)
    ay = table["lateral_acceleration"] / G
    bands = np.array([held & (ay >= low) & (ay <= high) for low, high in zip(BANDS, BANDS[1:], strict=False)])
    gradients = [math.degrees(np.polyfit(ay[band] * G, table["roll"][band], 1)[0]) * G
                 if np.count_nonzero(band) >= 5 else math.nan for band in bands]  # fmt: skip
    return np.array(gradients), bands


@pytest.mark.slow
def test_the_roll_gradient_falls_where_the_stops_engage_as_the_rigs_roll_stiffness_says(car):
    """40 m, 5 -> 25 m/s: the roll gradient falls from 6.6 deg/g at 0.15-0.2 g to 1.7 at 0.7-0.77 g. In every band
    it is within 15 % of m_s h' / (K_f + K_r − m_s g h') with each axle's K the K&C rig's at the wheel travels the
    run reaches (the heave free; the tyres in series; measured 6.61 against 6.13 at 0.15-0.2 g, where the hand
    formula from the rig's rates is 10 % under the step steer too, to 1.65 against 1.73), and falls as that
    prediction does: the inner wheels reach their rebound stops (26 mm of droop) at 0.2 g in front and 0.4 g at
    the rear, the outer rear its bump stop at 0.6 g. With the stops out of reach the same run's roll gradient
    does not fall: it rises, as a car's does (measured 6.61 to 7.17 deg/g at 0.6-0.7 g; that car leaves the circle
    at 0.706 g)."""
    result = manoeuvre(car, ManoeuvreOptions(**LIMIT))
    measured, bands = banded_roll_gradients(result)
    column = {name: values for name, _, values in result.runs[0].columns()}
    options = {"travel": 0.06, "travel_points": 61, "load_points": 3}
    corners, stiffness = {}, 0.0
    for axle, (left, right) in (("front", ("fl", "fr")), ("rear", ("rl", "rr"))):
        corner = vehicle_corner(car, left)
        corners[axle] = kc = kc_analysis(corner, KCOptions(axle=axle, **options))
        travels = [travel_at(kc, corner, f"{left}_damper_s", column[f"{w}_damper_s"]) for w in (left, right)]
        stiffness = stiffness + axle_roll_stiffness(kc, TRACK, *travels, tyre_stiffness=250000.0)
    hand = roll_gradient_by_hand(Mechanism(car), corners)  # m_s and h' over the roll axis of the rig's roll centres
    mass, arm = hand["mass"], hand["arm"]
    predicted = np.array([np.mean(np.degrees(mass * arm / (stiffness[b] - mass * G * arm)) * G) for b in bands])
    assert np.all(np.abs(measured - predicted) < 0.15 * predicted), (measured, predicted)
    assert measured[0] > 6.0 and measured[-1] < 0.3 * measured[0]
    # the stops out of reach: the dampers' lengths free over ±100 mm
    free = copy.deepcopy(car)
    for coordinate in (c for j in free.joints for c in j.coordinates if c.name.endswith("_damper_s")):
        coordinate.min, coordinate.max = 0.4, 0.6
    unstopped, _ = banded_roll_gradients(manoeuvre(free, ManoeuvreOptions(**LIMIT)))
    read = unstopped[np.isfinite(unstopped)]
    assert len(read) >= 6 and np.all(read >= read[0]) and read[-1] > 1.05 * read[0]
