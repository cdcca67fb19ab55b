"""Units in the window: Edit › Preferences… › Units (deg and mm) applied to the sliders, tree, properties,
plots, cursors and exports; a value typed with its unit keeps it, in the file too; the document stays SI."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas
import pytest
from PySide6.QtWidgets import QDialog

from mbstudio.gui.preferences import PreferencesDialog
from mbstudio.gui.settings import display_units
from mbstudio.io.display_units import DisplayUnits
from mbstudio.jobs import DONE
from mbstudio.model import dumps, loads
from mbstudio.model.units import Quantity

from .test_window import edit_field
from .test_workbench import shot

DEG_MM = DisplayUnits("deg", "mm", "deg", "mm")


def test_the_preferences_dialog_offers_the_units_and_their_derived_ones(window, monkeypatch):
    dialog = PreferencesDialog(DisplayUnits())
    assert dialog.units() == DisplayUnits()  # rad and m; the suspension measures in deg and mm
    dialog.angle.setCurrentText("deg")
    dialog.length.setCurrentText("mm")
    assert "deg/s" in dialog.derived.text() and "N mm" in dialog.derived.text() and "mm/s^2" in dialog.derived.text()
    dialog.suspension.setCurrentText("as above")
    assert dialog.units() == DEG_MM
    monkeypatch.setattr(PreferencesDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    monkeypatch.setattr(PreferencesDialog, "units", lambda self: DEG_MM)
    assert window.edit_preferences() and window.units == DEG_MM
    assert display_units() == DEG_MM  # kept for the next session
    assert window.actions["degrees"].isChecked() and window.actions["millimetres"].isChecked()


def tree_text(window, key: tuple) -> str:
    return window.tree.items[key].text(1)


def test_sliders_tree_and_properties_show_and_take_deg_and_mm(window):
    window.open_sample("four_bar")
    window.set_units(DEG_MM)
    row = window.coordinates.sliders["theta1"]
    assert row.label.text() == "°" and float(row.entry.text()) == pytest.approx(math.degrees(window.q[0]), abs=1e-9)
    assert tree_text(window, ("parameter", "L1")) == "0.1 m"  # a parameter in its own unit
    assert tree_text(window, ("point", "2", "P")) == "L2/2, 100, 0 mm"
    edit_field(window, ("point", "2", "P"), "position", "L2/2, 120, 0")  # plain numbers: in mm
    assert window.document.model.body("2").points["P"] == ["L2/2", 0.12, 0.0]  # the document in SI
    assert window.properties.editors["position"].text() == "L2/2, 120, 0"
    edit_field(window, ("point", "2", "P"), "position", "L2/2, 4.5 in, 0")  # a unit typed is kept
    value = window.document.model.body("2").points["P"][1]
    assert isinstance(value, Quantity) and value == pytest.approx(0.1143) and value.text() == "4.5 in"
    assert window.properties.editors["position"].text() == "L2/2, 4.5 in, 0"
    assert '"P": ["L2/2", "4.5 in", 0.0]' in dumps(window.document.model)  # saved as typed
    edit_field(window, ("coordinate", "crank_pivot", "theta1"), "max", "90")
    assert window.document.model.joint("crank_pivot").coordinates[0].max == pytest.approx(math.pi / 2, rel=1e-15)
    edit_field(window, ("parameter", "L1"), "unit", "mm")  # the length stays; the file writes it in mm
    assert window.document.model.parameter_values()["L1"] == 0.1
    assert window.properties.editors["value"].text() == "100" and tree_text(window, ("parameter", "L1")) == "100 mm"
    edit_field(window, ("parameter", "L1"), "value", "110")
    assert window.document.model.parameter_values()["L1"] == pytest.approx(0.11)
    assert '"value": 110.0,\n      "unit": "mm"' in dumps(window.document.model)
    edit_field(window, ("body", "1"), "name", "crank")  # any other item: back to the crank's inertia
    edit_field(window, ("inertia", "1"), "m", "480 mm")
    assert "a length, where a mass is expected" in window.properties.error.text()
    window.document.stack.undo()
    assert loads(dumps(window.document.model)).parameter_values()["L1"] == pytest.approx(0.1)


def test_plots_cursors_and_exports_in_deg_and_mm(window, qtbot, tmp_path):
    window.open_sample("sla_suspension")
    job = window.run_job("kinematics", {"trajectory": "wheel_travel", "samples": 41}, "wheel travel")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    plots = window.plots
    assert "alignment.camber [deg]" in plots.view.result.data.series  # the suspension measures: deg, mm
    assert "theta1 [rad]" in plots.view.result.data.series
    window.set_units(DEG_MM)
    plots.select_series(["alignment.camber [rad]"], x="alignment.wheel_travel")  # any unit finds the series
    view = plots.view
    assert view.plot_item.getAxis("bottom").labelText == "alignment.wheel_travel [mm]"
    # the whole label where the plot is high enough, else the unit, the legend above naming the series
    assert view.plot_item.getAxis("left").labelText in ("alignment.camber [deg]", "[deg]")
    assert [label.text for _, label in view.legend.items] == ["alignment.camber [deg]"]
    (curve,) = view.curves()
    x, y = curve.getData()
    si = job.result.data.series
    np.testing.assert_allclose(x, 1000 * si["alignment.wheel_travel [m]"], rtol=1e-14)
    np.testing.assert_allclose(y, np.degrees(si["alignment.camber [rad]"]), rtol=1e-14)
    plots.seek(40)
    assert f"alignment.camber [deg] = {math.degrees(si['alignment.camber [rad]'][40]):.6g}" in view.readout.text()
    assert window.coordinates.sliders["theta1"].label.text() == "°"
    window.tree.select(("point", "0", "F"))  # a ground point's position in mm, in the tree and the properties
    assert window.properties.editors["position"].text().startswith("11.1584553115404, 355.659661701838, ")
    window.docks["plots"].raise_()
    shot(window, "units_deg_mm.png")
    angle = plots.add_plot()
    angle.select_series(["theta1"])
    assert angle.plot_item.getAxis("left").labelText == "theta1 [deg]"
    assert plots.export("csv", str(tmp_path / "run.csv"))
    table = pandas.read_csv(tmp_path / "run.csv")
    np.testing.assert_allclose(table["d_theta1 [deg/s]"], np.degrees(si["d_theta1 [rad/s]"]), rtol=1e-14)
    assert "actuator:theta1 [N mm]" in table.columns and "alignment.bump_steer [deg/mm]" in table.columns
    assert json.loads((tmp_path / "run.csv.json").read_text())["provenance"]["units"] == "deg,mm"
    window.set_units(DisplayUnits("rad", "m", "rad", "m"))
    assert view.plot_item.getAxis("left").labelText in ("alignment.camber [rad]", "[rad]")  # the plot follows
    assert [label.text for _, label in view.legend.items] == ["alignment.camber [rad]"]
    assert plots.result is job.result and "alignment.camber [rad]" in plots.result.data.series  # SI kept
