"""The suspension report: the SLA's curves against wheel travel, each checked by another route
(the design position the sample was built to, the wheel's axis from its pose, finite differences of toe and of
the coil-over's length over the travel), a steering sweep on the SLA with a rack, and the page and CSV."""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.io.display_units import parse_units
from mbstudio.io.suspension_report import curves_csv, report_bytes
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, dumps, loads
from mbstudio.simulation.suspension import suspension_curves


@functools.cache
def sla_curves(travel: float = 0.1, points: int = 41):
    return suspension_curves(samples.load("sla_suspension"), travel=travel, points=points)


def wheel_axis_and_centre(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hub's spin axis (pointing outboard, +y for this left corner) and its centre K, from the body poses."""
    mech = Mechanism(samples.load("sla_suspension"))
    rotation, origin = mech.poses(q)["3"]
    centre = mech.points(q)[("3", "K")]
    return -rotation[:, :, 1], centre  # the measure's spin axis is -y of the hub


def test_at_the_design_position_the_curves_are_what_the_sample_was_built_to():
    """The sample's description: kingpin inclination 3°, caster 3°, zero toe, camber -3° at the design position."""
    design = sla_curves().design
    for name, degrees in (("kingpin_inclination", 3.0), ("caster", 3.0), ("toe", 0.0), ("camber", -3.0)):
        assert math.degrees(design[name][1]) == pytest.approx(degrees, abs=1e-9), name


def test_each_pose_has_the_travel_asked_and_its_loops_closed():
    curves = sla_curves()
    mech = Mechanism(samples.load("sla_suspension"))
    _, centre = wheel_axis_and_centre(curves.travel.q)
    design = centre[np.abs(curves.travel.x).argmin(), 2]
    assert np.abs(centre[:, 2] - design - curves.travel.x).max() < 1e-11
    assert np.abs(mech.residual(curves.travel.q)).max() < 1e-10
    assert curves.travel.x[0] == pytest.approx(-0.1) and curves.travel.x[-1] == pytest.approx(0.1)
    assert curves.driver == "theta1" and not curves.stops


def test_camber_and_toe_agree_with_the_wheels_axis_from_its_pose():
    curves = sla_curves()
    axis, _ = wheel_axis_and_centre(curves.travel.q)
    camber = np.arcsin(-axis[:, 2])  # top outboard positive: an outboard axis tilting down
    toe = np.arctan2(axis[:, 0], axis[:, 1])  # toe-in: the front turned inboard turns the outboard axis forward
    assert np.abs(camber - curves.travel.curves["camber"][1]).max() < 1e-12
    assert np.abs(toe - curves.travel.curves["toe"][1]).max() < 1e-12


def test_bump_steer_and_motion_ratio_are_the_derivatives_over_travel():
    """Bump steer (the exact ratio of the toe's rate to the travel's) against central differences of toe over a
    1 mm lattice; the motion ratio against those of the coil-over's length, from its end points' positions."""
    curves = sla_curves(0.02, 41)
    x, q = curves.travel.x, curves.travel.q
    toe = curves.travel.curves["toe"][1]
    assert np.abs(np.gradient(toe, x)[1:-1] - curves.travel.curves["bump_steer"][1][1:-1]).max() < 2e-5  # rad/m
    points = Mechanism(samples.load("sla_suspension")).points(q)
    length = np.linalg.norm(points[("7", "ball")] - points[("6", "C")], axis=1)
    ratio = -np.gradient(length, x)
    assert np.abs(ratio[1:-1] - curves.travel.curves["motion_ratio"][1][1:-1]).max() < 2e-6
    assert curves.travel.curves["motion_ratio"][1][20] == pytest.approx(0.76199, abs=1e-5)


def test_beyond_where_the_loops_close_the_curves_stop_and_say_where():
    curves = suspension_curves(samples.load("sla_suspension"), travel=0.4, points=21)
    assert curves.travel.x.max() < 0.4 and curves.travel.x.min() > -0.4
    assert any(s.startswith("bump stops at +") for s in curves.stops)
    assert any(s.startswith("rebound stops at -") for s in curves.stops)


def rack_model():
    """The SLA with a steering rack: the tie rod's inner joint on a body sliding along y (±50 mm)."""
    d = json.loads(dumps(samples.load("sla_suspension")))
    ground = d["ground"]
    ground["points"]["O"] = [0.0, 0.0, 0.0]
    ground["frames"]["rack_axis"] = {"origin": "O", "z": [0, 1, 0], "x": [1, 0, 0]}
    inertia = {"m": 1.0, "mx": 0, "my": 0, "mz": 0, "Ixx": 0.01, "Ixy": 0, "Ixz": 0, "Iyy": 0.01, "Iyz": 0, "Izz": 0.01}
    frames = {"slide": {"origin": "O", "z": [0, 1, 0], "x": [1, 0, 0]}, "J": ground["frames"]["J"]}
    points = {"O": [0.0, 0.0, 0.0], "J": ground["points"]["J"]}
    d["bodies"].append({"label": "rack", "name": "rack", "inertia": inertia, "points": points, "frames": frames})
    coordinate = {"name": "rack", "initial": 0.0, "min": -0.05, "max": 0.05}
    slide = {"name": "rack_slide", "type": "prismatic", "parent": "0", "child": "rack"}
    d["joints"].append({**slide, "parent_frame": "rack_axis", "child_frame": "slide", "coordinates": [coordinate]})
    next(j for j in d["joints"] if j["name"] == "tie_rod_inner")["parent"] = "rack"
    d["independent_coordinates"] = ["theta1", "theta2", "rack"]
    return loads(json.dumps(d))


def test_a_steering_rack_gets_its_sweep_at_the_design_height():
    model = rack_model()
    curves = suspension_curves(model, points=11)
    steer = curves.steer
    assert steer is not None and steer.name == "rack" and steer.unit == "m"
    assert steer.x[0] == pytest.approx(-0.05) and steer.x[-1] == pytest.approx(0.05)
    mech = Mechanism(model)
    centre = mech.points(steer.q)[("3", "K")][:, 2]
    assert np.abs(centre - centre[5]).max() < 1e-11  # every pose at the design height
    rotation, _ = mech.poses(steer.q)["3"]
    axis = -rotation[:, :, 1]
    assert np.abs(np.arctan2(axis[:, 0], axis[:, 1]) - steer.curves["toe"][1]).max() < 1e-12
    toe = np.degrees(steer.curves["toe"][1])
    assert np.all(np.diff(toe) > 0) and 15 < toe[-1] < 30  # the rack outboard pushes the tie rod: toe-in
    assert not any("steering" in n for n in curves.notes)


def test_the_page_and_the_csv(tmp_path):
    curves = sla_curves()
    provenance = {"model_hash": "0" * 64, "method": "parallel wheel travel", "version": "test", "seconds": 1.0}
    assert report_bytes(curves, provenance, "png")[:8] == b"\x89PNG\r\n\x1a\n"
    assert report_bytes(curves, provenance, "pdf")[:5] == b"%PDF-"
    svg = report_bytes(curves, provenance, "svg").decode("utf-8")
    assert "<svg" in svg and "Suspension report: SLA suspension" in svg
    with pytest.raises(ModelError, match="PNG, SVG or PDF"):
        report_bytes(curves, provenance, "gif")
    header = curves_csv(curves, provenance).text.splitlines()[0].split(",")
    assert header[:3] == ["wheel travel [m]", "toe [rad]", "camber [rad]"] and "motion_ratio [1]" in header
    table = curves_csv(curves, provenance, units=parse_units("deg,mm"))
    header, first = (line.split(",") for line in table.text.splitlines()[:2])
    assert header[:3] == ["wheel travel [mm]", "toe [deg]", "camber [deg]"] and "bump_steer [deg/mm]" in header
    assert float(first[0]) == pytest.approx(-100.0) and float(first[2]) == pytest.approx(math.degrees(0.01394341))


def test_the_command_writes_the_page_and_the_curves(tmp_path, capsys):
    out, table = tmp_path / "report.pdf", tmp_path / "curves.csv"
    arguments = ["--travel", "80mm", "--points", "9", "--csv", str(table)]
    assert main(["report", str(samples.path("sla_suspension")), "--out", str(out), *arguments]) == 0
    text = capsys.readouterr().out
    assert out.read_bytes()[:5] == b"%PDF-" and f"wrote {out}" in text and "camber" in text
    rows = table.read_text(encoding="utf-8").splitlines()[1:]
    assert len(rows) == 9 and float(rows[0].split(",")[0]) == pytest.approx(-0.08)
    assert json.loads((tmp_path / "curves.csv.json").read_text())["provenance"]["method"] == "parallel wheel travel"
    assert main(["report", str(samples.path("four_bar")), "--out", str(tmp_path / "r.png")]) == 2
    assert "has no suspension measure set" in capsys.readouterr().err
    assert not (tmp_path / "r.png").exists()
