"""The smooth road profile (dynamics/road_profile.py): through every row, a continuous slope, no overshoot, level
at its ends; the same interior as SciPy's PCHIP (an independent implementation of Fritsch and Carlson's rule); the
same on the compiled engine's traced path; written to and read from the file."""

from __future__ import annotations

import json

import casadi
import numpy as np
import pytest
from scipy.interpolate import PchipInterpolator

from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.road_profile import knot_slopes, smooth_height_and_slope
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps, loads
from mbstudio.model.errors import ModelError
from mbstudio.model.fileformat import to_dict

from .test_vehicle import wheel_on_a_tyre

XS = np.array([-5.0, 0.0, 0.3, 0.5, 0.9, 1.0, 2.0, 2.2, 6.0])
ZS = np.array([0.0, 0.0, 0.02, 0.05, 0.05, 0.04, -0.01, 0.0, 0.0])


class Floats:
    name = "float64"
    asarray, zeros = staticmethod(np.asarray), staticmethod(np.zeros)


class Traced:
    name = "casadi"
    asarray, zeros = staticmethod(lambda v: np.array(v, dtype=object)), staticmethod(np.zeros)


def profile(s) -> tuple[np.ndarray, np.ndarray]:
    return smooth_height_and_slope(XS, ZS, np.asarray(s, float), Floats)


def test_the_smooth_profile_passes_through_its_rows_with_a_continuous_slope():
    height, slope = profile(XS)
    assert height == pytest.approx(ZS, abs=1e-15) and slope == pytest.approx(knot_slopes(XS, ZS), abs=1e-15)
    for x in XS[1:-1]:  # the slope from either side of each row
        left, right = profile([x - 1e-9])[1], profile([x + 1e-9])[1]
        assert abs(left[0] - right[0]) < 1e-6
    s = np.linspace(-8.0, 9.0, 20001)
    height, slope = profile(s)
    numeric = np.gradient(height, s)
    assert np.abs(numeric - slope)[1:-1].max() < 2e-3  # the slope is the height's derivative


def test_the_smooth_profile_never_overshoots_and_is_level_at_and_beyond_its_ends():
    s = np.linspace(-8.0, 9.0, 20001)
    height, slope = profile(s)
    for a, b, za, zb in zip(XS[:-1], XS[1:], ZS[:-1], ZS[1:], strict=True):
        inside = (s >= a) & (s <= b)
        assert height[inside].min() >= min(za, zb) - 1e-15 and height[inside].max() <= max(za, zb) + 1e-15
    outside = (s <= XS[0]) | (s >= XS[-1])
    assert np.all(slope[outside] == 0.0) and np.all(height[outside] == 0.0)
    flat = (s >= -5.0) & (s <= 0.0)
    assert np.all(height[flat] == 0.0)  # a flat stretch next to a rise stays flat


def test_inside_it_is_scipys_monotone_cubic():
    """Away from the ends (where ours is level and SciPy's takes a one-sided slope) the slopes at the rows and
    the cubics between them are SciPy's PCHIP."""
    reference = PchipInterpolator(XS, ZS)
    assert knot_slopes(XS, ZS)[1:-1] == pytest.approx(reference.derivative()(XS)[1:-1], abs=1e-13)
    s = np.linspace(XS[1], XS[-2], 3001)
    height, slope = profile(s)
    assert np.abs(height - reference(s)).max() < 1e-13 and np.abs(slope - reference.derivative()(s)).max() < 1e-12


def test_the_traced_profile_is_the_float_one():
    """The compiled engine traces the profile on symbols: at 400 distances, the same heights and slopes."""
    s = casadi.SX.sym("s")
    height, slope = smooth_height_and_slope(XS, ZS, [s], Traced)
    traced = casadi.Function("road", [s], [height[0], slope[0]])
    at = np.linspace(-6.0, 7.0, 400)
    expected = profile(at)
    got = [np.array([float(traced(x)[k]) for x in at]) for k in range(2)]
    assert np.abs(got[0] - expected[0]).max() < 1e-15 and np.abs(got[1] - expected[1]).max() < 1e-13


def test_the_interpolation_is_written_read_and_checked():
    road = {"speed": 4.0, "profile": [[0.0, 0.0], [10.0, 0.0], [10.3, 0.05], [20.0, 0.05]]}
    linear = loads(json.dumps(wheel_on_a_tyre(road)))
    assert linear.road.interpolation == "linear" and "interpolation" not in to_dict(linear)["road"]
    smooth = loads(json.dumps(wheel_on_a_tyre({**road, "interpolation": "smooth"})))
    assert loads(dumps(smooth)).road.interpolation == "smooth"
    forces = AppliedForces(Mechanism(smooth))
    height, slope, _ = forces.road(np.array([2.1625]), np.array([1.5]))  # s = 1.5 + 4 t = 10.15: halfway up the ramp
    assert float(height[0]) == pytest.approx(0.025, abs=1e-15) and float(slope[0]) == pytest.approx(0.25, rel=1e-12)
    with pytest.raises(ModelError, match=r"road\.interpolation.*'spline'.*linear or smooth"):
        loads(json.dumps(wheel_on_a_tyre({**road, "interpolation": "spline"})))
