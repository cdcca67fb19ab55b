"""The K&C rig's axle roll test end to end (`mbstudio kc --test axle_roll`, simulation/kc_axle_roll.py): the
command on the handling car's front corner writes the roll stiffness kc_rig.axle_roll computes in Python, and the
figures tests/test_vehicle_roll.py checks on it (the axle load kept, t² k_w / 2 at design, the step where the
rebound stop engages, the tyres in series); bad input is refused by name before anything is written."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline

from mbstudio.model import ModelError, dumps, load
from mbstudio.simulation.kc_axle_roll import design_track
from mbstudio.simulation.kc_rig import KCOptions, axle_roll, kc_analysis, vehicle_corner

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
TRACK = 1.5174266897061266  # m: the handling car's wheel centres' track (tests/test_vehicle_roll.py)
TYRE = 250000.0  # N/m: the handling car's tyres
RIG = {"travel": 0.06, "travel_points": 61, "load_points": 3}  # tests/test_vehicle_roll.py's front fixture


def kc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mbstudio.cli", "kc", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


def read_csv(path: Path) -> dict[str, np.ndarray]:
    with path.open() as handle:
        rows = [row for row in csv.reader(handle) if row and not row[0].startswith("#")]
    return {name: np.array([float(r[k]) for r in rows[1:]]) for k, name in enumerate(rows[0])}


@pytest.fixture(scope="module")
def corner(tmp_path_factory) -> Path:
    """The handling car's front left corner on the rig (kc_rig.vehicle_corner) as a model file."""
    path = tmp_path_factory.mktemp("corner") / "front_corner.mbs"
    path.write_text(dumps(vehicle_corner(load(SAMPLES / "vehicle_handling.mbs"), "fl")))
    return path


@pytest.mark.slow  # two K&C sweeps of 61 equilibria, one in a fresh process: 12 s on two loaded cores
def test_the_command_writes_the_roll_stiffness_the_python_function_gives(corner, tmp_path):
    done = kc(str(corner), "--test", "axle_roll", "--travel", "0.06", "--points", "61", "--roll", "3",
              "--roll-points", "601", "--tyre-stiffness", str(TYRE), "--out", "roll.csv", "--report", "roll.png",
              "--json", "--quiet", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = {name: v["value"] for name, v in json.loads(done.stdout)["figures"].items()}
    table = read_csv(tmp_path / "roll.csv")
    provenance = json.loads((tmp_path / "roll.csv.json").read_text())["provenance"]
    assert provenance["options"]["test"] == "axle_roll" and provenance["options"]["track"] == TRACK
    assert (tmp_path / "roll.png").read_bytes().startswith(b"\x89PNG")
    front = kc_analysis(load(corner), KCOptions(**RIG))
    python = axle_roll(front, TRACK, math.radians(3.0), points=601, tyre_stiffness=TYRE)
    ulps = 1e-13  # relative: the CSV's and JSON's shortest round-trip text of the same float64 computation
    columns = {"roll [rad]": python.roll, "roll_moment [N m]": python.moment, "roll_stiffness [N m/rad]":
               python.stiffness, "roll_stiffness_with_tyres [N m/rad]": python.total_stiffness, "left_travel [m]":
               python.left_travel, "right_travel [m]": python.right_travel}  # fmt: skip
    for column, values in columns.items():
        assert np.allclose(table[column], values, rtol=ulps, atol=ulps * np.abs(values).max()), column
    middle = len(python.roll) // 2
    assert figures["track"] == TRACK == design_track(load(corner), None)
    assert figures["roll_stiffness"] == pytest.approx(python.stiffness[middle], rel=ulps)
    assert figures["roll_stiffness_with_tyres"] == pytest.approx(python.total_stiffness[middle], rel=ulps)
    # test_vehicle_roll's figures: the axle load kept at every roll, t² k_w / 2 at design from the rig's wheel rate
    s, curves = front.travel.x, front.travel.curves
    vertical = CubicHermiteSpline(s, curves["vertical_load"][1], curves["wheel_rate"][1])
    total = vertical(table["left_travel [m]"]) + vertical(table["right_travel [m]"])
    assert np.allclose(total, 2 * curves["vertical_load"][1][len(s) // 2], rtol=1e-9)
    rate = front.design["wheel_rate"][1]
    assert figures["roll_stiffness"] == pytest.approx(TRACK**2 * rate / 2, rel=1e-9)
    k_t = TYRE * TRACK**2 / 2  # the two tyres in roll, in series with the suspension
    assert figures["roll_stiffness_with_tyres"] == pytest.approx(1 / (1 / figures["roll_stiffness"] + 1 / k_t),
                                                                 rel=1e-9)  # fmt: skip
    # the first step is the left (drooping) wheel reaching its rebound stop, 26 mm down (tests/test_vehicle_roll.py
    # reads it from the damper's length: -30 to -20 mm); a sweep spacing (2 mm) smears it
    assert -0.03 < figures["first_stop_left_travel"] < -0.02
    assert figures["first_stop_right_travel"] == pytest.approx(-figures["first_stop_left_travel"], abs=0.003)
    assert 0 < figures["first_stop_roll"] < figures["largest_stiffness_roll"] <= math.radians(3.0)
    assert figures["largest_roll_stiffness"] > 1.5 * figures["roll_stiffness"]


def test_a_roll_beyond_the_sweep_is_refused_naming_the_roll_that_fits(tmp_path):
    bushed = str(SAMPLES / "sla_suspension_bushed.mbs")
    done = kc(bushed, "--test", "axle_roll", "--travel", "0.01", "--points", "5", "--roll", "3", "--out", "r.csv",
              "--quiet", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert "K&C option roll: takes a wheel beyond the travel the rig's sweep reached (-10.0 to +10.0 mm)" in done.stderr
    assert "(got '3 deg')" in done.stderr and "a roll up to" in done.stderr
    fits = float(done.stderr.split("a roll up to ")[1].split(" deg")[0])
    assert 0.5 < fits < 2 * math.degrees(0.01 / 0.75)  # 10 mm at each wheel of a 1.5 m track, and the heave
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize(
    ("model", "args", "message"),
    [
        ("vehicle_handling.mbs", (), "has no equilibrium on the K&C rig: nothing resists the motion of"),
        ("four_bar.mbs", (), "measures: has no suspension measure set"),
        ("sla_suspension_bushed.mbs", ("--roll", "30"), "--roll: is out of range (got '30')"),
        ("sla_suspension_bushed.mbs", ("--lateral-force", "5"), "--lateral-force: applies to --test corner only"),
        ("sla_suspension_bushed.mbs", ("--test", "corner", "--roll", "2"), "--roll: applies to --test axle_roll"),
    ],
)
def test_bad_input_is_refused_by_name_and_nothing_is_written(tmp_path, model, args, message):
    test = () if "--test" in args else ("--test", "axle_roll")
    done = kc(str(SAMPLES / model), *test, *args, "--out", "r.csv", "--quiet", cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "r.csv").exists()


def test_the_options_refuse_an_unknown_test_and_a_track_out_of_range():
    with pytest.raises(ModelError, match="K&C option test: is not a K&C test"):
        KCOptions(test="roll")
    with pytest.raises(ModelError, match="K&C option track: is out of range"):
        KCOptions(test="axle_roll", track=0.0)
    assert KCOptions(test="axle_roll").track is None and KCOptions.from_dict({"tyre_stiffness": None})
