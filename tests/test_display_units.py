"""The user's units at the edges: headers and values in deg and mm (`--units`), SI files otherwise; plain CSV
tables with their provenance beside them."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.io.csv_text import csv_table, numeric_table, write_output
from mbstudio.io.display_units import SI, DisplayUnits, parse_units
from mbstudio.io.study_table import study_bytes, study_units
from mbstudio.jobs.study import evaluate_point
from mbstudio.model import ModelError, dumps

DEG = math.pi / 180


@pytest.mark.parametrize(
    ("header", "shown", "size"),
    [
        ("theta1 [rad]", "theta1 [deg]", DEG),
        ("d_theta1 [rad/s]", "d_theta1 [deg/s]", DEG),
        ("dd_theta1 [rad/s^2]", "dd_theta1 [deg/s^2]", DEG),
        ("coupler_point.x [m]", "coupler_point.x [mm]", 1e-3),
        ("coupler_point.ax [m/s^2]", "coupler_point.ax [mm/s^2]", 1e-3),
        ("actuator:theta1 [N m]", "actuator:theta1 [N mm]", 1e-3),
        ("k [N/m]", "k [N/mm]", 1e3),
        ("I [kg m^2]", "I [kg mm^2]", 1e-6),
        ("alignment.bump_steer [rad/m]", "alignment.bump_steer [deg/mm]", DEG / 1e-3),
        ("total_energy [J]", "total_energy [J]", 1.0),
        ("momentum.x [N s]", "momentum.x [N s]", 1.0),
        ("constraint_residual [m|1]", "constraint_residual [m|1]", 1.0),
        ("alignment.motion_ratio [1]", "alignment.motion_ratio [1]", 1.0),
        ("lowest_frequency_hz", "lowest_frequency_hz", 1.0),
    ],
)
def test_a_column_in_deg_and_mm_has_its_unit_renamed_and_its_hand_computed_size(header, shown, size):
    assert parse_units("deg,mm").header(header) == (shown, pytest.approx(size, rel=1e-15))
    assert SI.header(header) == (header, 1.0)


def test_the_suspension_measures_have_their_own_units_deg_and_mm_in_the_window_by_default():
    window = DisplayUnits()
    assert window.header("alignment.camber [rad]")[0] == "alignment.camber [deg]"
    assert window.header("alignment.wheel_travel [m]")[0] == "alignment.wheel_travel [mm]"
    assert window.header("error:alignment.toe [rad]")[0] == "error:alignment.toe [deg]"
    assert window.header("theta1 [rad]")[0] == "theta1 [rad]" and window.header("hub.x [m]")[0] == "hub.x [m]"
    name, values = window.column("alignment.camber [rad]", [math.pi / 180, -0.5 * math.pi / 180])
    assert name == "alignment.camber [deg]" and np.allclose(values, [1.0, -0.5], rtol=1e-15)


def test_units_on_the_command_line_are_named_or_refused():
    assert parse_units(None) == SI and parse_units("si") == SI
    units = parse_units("deg,mm")
    assert (units.angle, units.length, units.suspension_angle, units.suspension_length) == ("deg", "mm", "deg", "mm")
    assert parse_units("deg").header("x [m]")[0] == "x [m]"
    with pytest.raises(ModelError, match="--units.*'inch'.*rad or deg"):
        parse_units("deg,inch")


def test_kinematics_in_deg_and_mm_are_the_si_values_converted(tmp_path, capsys):
    sla = str(samples.path("sla_suspension"))
    common = ["kinematics", sla, "--trajectory", "wheel_travel", "--samples", "9"]
    assert main([*common, "--out", str(tmp_path / "si.csv")]) == 0
    assert main([*common, "--out", str(tmp_path / "mm.csv"), "--units", "deg,mm"]) == 0
    si, mm = pandas.read_csv(tmp_path / "si.csv"), pandas.read_csv(tmp_path / "mm.csv")
    np.testing.assert_allclose(mm["alignment.camber [deg]"], np.degrees(si["alignment.camber [rad]"]), rtol=1e-14)
    np.testing.assert_allclose(mm["alignment.wheel_travel [mm]"], 1000 * si["alignment.wheel_travel [m]"], rtol=1e-14)
    np.testing.assert_allclose(mm["d_theta1 [deg/s]"], np.degrees(si["d_theta1 [rad/s]"]), rtol=1e-14)
    np.testing.assert_allclose(mm["actuator:theta1 [N mm]"], 1000 * si["actuator:theta1 [N m]"], rtol=1e-14)
    assert list(mm["t [s]"]) == list(si["t [s]"])
    assert json.loads((tmp_path / "mm.csv.json").read_text())["provenance"]["units"] == "deg,mm"
    assert "actuator:theta1 [N mm]" in capsys.readouterr().out  # the summary in the same units
    json_out = tmp_path / "mm.json"
    assert main([*common, "--out", str(json_out), "--units", "deg,mm"]) == 0
    series = json.loads(json_out.read_text())["series"]
    assert series["alignment.camber [deg]"] == pytest.approx(list(mm["alignment.camber [deg]"]), rel=1e-15)


def test_simulate_pkm_and_linearize_write_in_the_units_asked_for(tmp_path):
    four_bar = str(samples.path("four_bar"))
    run = ["simulate", four_bar, "--t-end", "0.1", "--samples", "3", "--quiet"]
    assert main([*run, "--out", str(tmp_path / "si.csv")]) == 0
    assert main([*run, "--out", str(tmp_path / "deg.npz"), "--units", "deg"]) == 0
    si, archive = pandas.read_csv(tmp_path / "si.csv"), np.load(tmp_path / "deg.npz")
    names = [f"{n} [{u}]" for n, u in zip(archive["names"], archive["units"], strict=True)]
    assert "theta1 [deg]" in names and "coupler_point.x [m]" in names
    np.testing.assert_allclose(archive["data"][:, names.index("theta1 [deg]")], np.degrees(si["theta1 [rad]"]))
    path = ["pkm", str(samples.path("irsbot2")), "--trajectory", "pick_and_place", "--samples", "3"]
    assert main([*path, "--out", str(tmp_path / "p.csv"), "--units", "mm"]) == 0
    assert pandas.read_csv(tmp_path / "p.csv").columns[1] == "x [mm]"
    assert main(["linearize", four_bar, "--out", str(tmp_path / "si.json")]) == 0
    assert main(["linearize", four_bar, "--out", str(tmp_path / "deg.json"), "--units", "deg,mm"]) == 0
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("si", "deg"))
    assert b["state_units"] == ["deg", "deg/s"] and b["input_units"] == ["N mm"] and b["output_units"] == ["deg"]
    np.testing.assert_allclose(np.linalg.eigvals(b["A"]), np.linalg.eigvals(a["A"]), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(b["B"]), np.asarray(a["B"]) * 1e-3 / DEG, rtol=1e-14)  # deg/s² per N mm


def test_a_study_table_converts_the_columns_that_name_a_unit():
    rows = [{"D12": 0.3, "peak actuator:theta1 [N m]": 2.0, "at theta1 [rad]": math.pi / 2, "error": ""}]
    table = study_bytes(rows, {"scheduler": "local"}, "csv", parse_units("deg,mm"))
    assert table.text.splitlines() == ["D12,peak actuator:theta1 [N mm],at theta1 [deg],error", "0.3,2000.0,90.0,"]


def test_a_study_names_the_unit_of_its_varied_parameters_and_equilibrium_coordinates(tmp_path):
    """Issue 24 item 1: 'L' and 'at theta1' named no unit, and --units left them SI. The linearised double
    pendulum at two lengths: the same rows written SI and in deg and mm, every header naming its unit."""
    model = samples.load("double_pendulum")
    text, named = dumps(model), study_units(model)
    rows = [evaluate_point(text, {"L": length}, "linearize", {}) for length in (0.8, 1.2)]
    assert all(r["error"] == "" for r in rows)
    for units, name in ((SI, "si"), (parse_units("deg,mm"), "deg")):
        write_output(tmp_path / f"{name}.csv", study_bytes(rows, {"scheduler": "local"}, "csv", units, named))
    si, shown = (pandas.read_csv(tmp_path / f"{n}.csv") for n in ("si", "deg"))
    assert {"L [m]", "at theta1 [rad]", "at theta2 [rad]", "seconds [s]", "lowest_frequency_hz"} <= set(si.columns)
    assert {"L [mm]", "at theta1 [deg]", "at theta2 [deg]", "seconds [s]"} <= set(shown.columns)
    np.testing.assert_allclose(shown["L [mm]"], 1e3 * si["L [m]"], rtol=1e-12)
    for angle in ("theta1", "theta2"):
        np.testing.assert_allclose(shown[f"at {angle} [deg]"], si[f"at {angle} [rad]"] / DEG, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(si["at theta1 [rad]"], [r["at theta1"] for r in rows], rtol=0)  # SI as computed
    assert json.loads((tmp_path / "deg.csv.json").read_text())["provenance"]["units"] == "deg,mm"


def test_a_plain_table_reads_with_every_reader_without_options(tmp_path):
    table = numeric_table({"model_hash": "abc"}, ["t [s]", "x [m]"], [[0.0, 1.5], [0.5, np.nan]], parse_units("mm"))
    path = tmp_path / "run.csv"
    write_output(path, table)
    assert path.read_text().splitlines() == ["t [s],x [mm]", "0.0,1500.0", "0.5,nan"]
    frame = pandas.read_csv(path)
    assert list(frame.columns) == ["t [s]", "x [mm]"] and frame["x [mm]"].dtype == float
    named = np.genfromtxt(path, names=True, delimiter=",")
    assert named.dtype.names == ("t_s", "x_mm") and named["x_mm"][0] == 1500.0
    sidecar = json.loads((tmp_path / "run.csv.json").read_text())
    assert sidecar == {
        "table": "run.csv",
        "columns": ["t [s]", "x [mm]"],
        "provenance": {"model_hash": "abc", "units": "rad,mm"},
    }


def test_a_table_and_its_sidecar_are_written_both_or_neither(tmp_path):
    (tmp_path / "run.csv.json").mkdir()  # the sidecar cannot be written: the table must not be either
    with pytest.raises(ModelError, match="run.csv.json"):
        write_output(tmp_path / "run.csv", csv_table({}, ["a"], [[1]]))
    assert not (tmp_path / "run.csv").exists()
