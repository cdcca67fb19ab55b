"""The options dialogs take and show values in the window's units (Edit › Preferences › Units): with deg and mm,
coordinates typed in the Linearise, Equilibrium and Simulate dialogs are degrees (their rates deg/s), the LPV
schedule's range is in its display unit, the workspace map's ranges and the suspension travel in mm; a number
may carry its own unit instead, checked against what the field holds; the options stay SI, and SI options kept
from last time come back converted."""

from __future__ import annotations

import math

import pytest

from mbstudio import samples
from mbstudio.gui.jobs.job_options import (
    EquilibriumDialog,
    LinearizeDialog,
    SimulationDialog,
    SuspensionReportDialog,
    WorkspaceDialog,
)
from mbstudio.io.display_units import SI

from .test_units_window import DEG_MM

DEG = math.pi / 180


@pytest.fixture
def make(qtbot):
    def build(cls, name, previous=None, units=DEG_MM):
        dialog = cls(samples.load(name), previous, None, units)
        qtbot.addWidget(dialog)
        return dialog

    return build


def _label(dialog, key: str) -> str:
    return dialog.form.labelForField(dialog.lines[key]).text()


def test_linearise_reads_coordinates_in_degrees_or_with_their_unit(make):
    dialog = make(LinearizeDialog, "double_pendulum", {"at": "initial", "values": {"theta1": 0.5}})
    assert (
        _label(dialog, "values") == "coordinate values [deg]" and _label(dialog, "velocities") == "velocities [deg/s]"
    )
    assert dialog.lines["values"].text() == f"theta1 = {0.5 / DEG:.12g}"  # kept SI, shown in degrees
    dialog.lines["values"].setText("theta1 = 10, theta2 = 0.1 rad")
    dialog.lines["velocities"].setText("theta2 = 90")
    options = dialog.options()
    assert options["values"] == {"theta1": pytest.approx(10 * DEG, rel=1e-15), "theta2": 0.1}
    assert options["velocities"] == {"theta2": pytest.approx(math.pi / 2, rel=1e-15)}
    dialog.lines["values"].setText("theta1 = 10 mm")
    assert dialog.validate() == [
        "values: theta1: is a length, where an angle is expected (got '10 mm'); expected rad, deg, arcmin, turn"
    ]
    in_si = make(LinearizeDialog, "double_pendulum", {"at": "initial"}, SI)
    in_si.lines["values"].setText("theta1 = 10")
    assert _label(in_si, "values") == "coordinate values [rad]" and in_si.options()["values"] == {"theta1": 10.0}


def test_an_lpv_schedule_is_typed_in_its_display_unit(make):
    previous = {"at": "equilibrium", "schedule": {"name": "theta1", "from": -0.2, "to": 0.2, "count": 5}}
    dialog = make(LinearizeDialog, "double_pendulum", previous)
    assert _label(dialog, "schedule_from") == "schedule from [deg]"
    assert float(dialog.lines["schedule_to"].text()) == pytest.approx(0.2 / DEG, rel=1e-11)  # 12 digits shown
    assert dialog.schedule.currentText() == "theta1 (coordinate, deg)"
    dialog.lines["schedule_from"].setText("-10")
    dialog.lines["schedule_to"].setText("0.2 rad")
    assert dialog.options()["schedule"] == {"name": "theta1", "from": -10 * DEG, "to": 0.2, "count": 5}
    dialog.schedule.setCurrentIndex(dialog.schedule.findData("L"))  # a parameter in m: mm here, ±10 % suggested
    assert _label(dialog, "schedule_from") == "schedule from [mm]"
    length = next(p.value for p in dialog.model.parameters if p.name == "L")
    low = float(dialog.lines["schedule_from"].text())
    assert low == pytest.approx(0.9 * length * 1e3, rel=1e-6)
    assert dialog.options()["schedule"]["from"] == pytest.approx(0.9 * length, rel=1e-6)


def test_equilibrium_holds_and_simulation_rates_in_display_units(make):
    hold = make(EquilibriumDialog, "double_pendulum")
    hold.lines["hold"].setText("theta1 = 30")
    assert hold.options()["hold"] == {"theta1": pytest.approx(30 * DEG, rel=1e-15)}
    run = make(SimulationDialog, "four_bar", {"velocities": {"theta1": 2 * math.pi}})
    assert (
        _label(run, "velocities") == "initial velocities [deg/s]" and run.lines["velocities"].text() == "theta1 = 360"
    )
    run.lines["velocities"].setText("theta1 = 60 rpm")
    assert run.options()["velocities"] == {"theta1": pytest.approx(2 * math.pi, rel=1e-15)}


def test_workspace_ranges_and_suspension_travel_in_millimetres(make):
    dialog = make(WorkspaceDialog, "irsbot2", {"ranges": {"x": [-0.3, 0.3]}, "plane": ["x", "z"]})
    first, second = dialog.plane.currentData().split(",")
    assert _label(dialog, "first") == "first axis range [mm]" and _label(dialog, "at") == "other coordinate [mm]"
    assert (first, dialog.lines["first"].text()) == ("x", "-300, 300")  # kept in m, shown in mm
    dialog.lines["first"].setText("-300, 300")
    dialog.lines["second"].setText("")
    assert dialog.options()["ranges"] == {first: [-0.3, 0.3]}
    dialog.lines["first"].setText("-3000000, 0")
    assert "is out of range" in dialog.validate()[0]  # 3 km: beyond any machine
    report = make(SuspensionReportDialog, "sla_suspension", {"travel": 0.08}, SI)  # the suspension pair: mm
    assert _label(report, "travel") == "wheel travel each way [m]" and report.lines["travel"].text() == "0.08"
    report = make(SuspensionReportDialog, "sla_suspension", {"travel": 0.08})
    assert _label(report, "travel") == "wheel travel each way [mm]" and report.lines["travel"].text() == "80"
    report.lines["travel"].setText("25")
    assert report.options()["travel"] == pytest.approx(0.025, rel=1e-15)
