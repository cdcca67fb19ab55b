"""Issue 24 item 1 in the result panels: with Preferences › Units at deg and mm, the linear family's x-axis, the
Bode plot's gains, the Modes panel's shapes and scheduling colours, the workspace map's axes and their exports
read in deg and mm, each label naming the unit shown, the values the SI ones converted; the document tree of a
four-bar lists no limbs of a parallel machine. Screenshots go to MBSTUDIO_SCREENSHOTS when set."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from mbstudio import samples
from mbstudio.io.display_units import SI
from mbstudio.jobs import DONE, Job
from mbstudio.jobs.tasks import linearization
from mbstudio.model import dumps

from .test_units_window import DEG_MM
from .test_workbench import shot

DEG = math.pi / 180
SCHEDULE = {"name": "L", "from": 0.8, "to": 1.2, "count": 3}


def _curves(plot) -> list[pg.PlotDataItem]:
    return [item for item in plot.listDataItems() if isinstance(item, pg.PlotDataItem)]


@pytest.fixture
def family(window):
    """The double pendulum linearised about its equilibrium at three lengths L (m), shown in the window."""
    model = samples.load("double_pendulum")
    window.document.replace(model, None)
    options = {"at": "equilibrium", "schedule": SCHEDULE}
    result = linearization(dumps(model), options, lambda *_: None, lambda: False)
    job = Job(1, "linearization", "Linearise", options, result.provenance.model_hash, state=DONE, result=result)
    window._job_finished(job)
    return result


def test_the_linear_family_reads_its_schedule_in_mm(window, family, tmp_path):
    lpv = window.lpv
    window.set_units(DEG_MM)
    assert lpv.x_axis.itemText(0) == "L [mm]" and lpv.frequency.getAxis("bottom").labelText == "L [mm]"
    x = _curves(lpv.frequency)[0].getData()[0]
    np.testing.assert_allclose(x, [800.0, 1000.0, 1200.0], rtol=1e-12)
    assert "from 800 to 1200 mm" in lpv.summary.text() and lpv.picker.label.text() == "L = 1000 mm (model 2 of 3)"
    lpv._pick_near(1190.0)  # a click near L = 1.2 m, in the axis' mm
    assert lpv.member == window.modes.member == 2
    assert window.modes.summary.text().startswith("L = 1200 mm (model 3 of 3): ")
    assert window.modes.map.colour_bar.axis.labelText == "L [mm]"
    assert lpv.export("csv", str(tmp_path / "family.csv"))
    table = pandas.read_csv(tmp_path / "family.csv")
    np.testing.assert_allclose(table["L [mm]"], 1e3 * np.asarray(family.data.family["values"]), rtol=1e-12)
    window.docks["lpv"].raise_()
    shot(window, "units_lpv_deg_mm.png")
    window.set_units(SI)
    assert lpv.frequency.getAxis("bottom").labelText == "L [m]" and lpv.picker.label.text().startswith("L = 1.2 m")


def test_bode_gains_and_labels_follow_the_units(window, family, tmp_path):
    bode = window.bode
    window.set_units(DEG_MM)
    assert [bode.input.itemText(k) for k in range(bode.input.count())] == ["theta1 [N mm]", "theta2 [N mm]"]
    assert [bode.output.itemText(k) for k in range(bode.output.count())] == ["theta1 [deg]", "theta2 [deg]"]
    bode.choose("theta2", "theta1")
    data = family.data.members[bode.member]
    si = np.asarray(data.magnitude_db)[:, 0, 1]  # theta1 per torque on theta2, in dB re 1 rad/(N m)
    # 1 rad/(N m) = (180/π deg)/(1000 N mm): the gain in deg/(N mm) is 20 log10(0.18/π) dB off
    (response,) = _curves(bode.magnitude)
    np.testing.assert_allclose(response.getData()[1], si + 20 * math.log10(1e-3 / DEG), rtol=1e-12, atol=1e-12)
    (phase,) = _curves(bode.phase)
    np.testing.assert_array_equal(phase.getData()[1], np.asarray(data.phase_deg)[:, 0, 1])
    # the axis names the gain's unit where the plot is high enough; the summary above it always does
    assert bode.magnitude.getAxis("left").labelText == "|H| [dB]"
    assert (
        "theta1 [deg] per theta2 [N mm]: H(jω) = C (jωI − A)⁻¹ B + D, |H| in dB re 1 deg/(N mm)" in bode.summary.text()
    )
    window.docks["bode"].raise_()
    window.resize(1400, 1000)
    window.resizeDocks([window.docks["bode"]], [800], Qt.Orientation.Vertical)
    QApplication.processEvents()
    assert bode.magnitude.getAxis("left").labelText == "|H| [dB re 1 deg/(N mm)]"
    assert bode.export("csv", str(tmp_path / "bode.csv"))
    table = pandas.read_csv(tmp_path / "bode.csv")
    np.testing.assert_allclose(table["magnitude [dB re 1 deg/(N mm)]"], si + 20 * math.log10(1e-3 / DEG), rtol=1e-12)
    window.docks["bode"].raise_()
    shot(window, "units_bode_deg_mm.png")
    window.set_units(SI)
    assert bode.magnitude.getAxis("left").labelText == "|H| [dB re 1 rad/(N m)]"
    np.testing.assert_array_equal(_curves(bode.magnitude)[0].getData()[1], si)
    assert bode.output.currentText() == "theta1 [rad]" and bode.input.currentText() == "theta2 [N m]"  # kept


def test_a_mode_shape_and_the_exported_model_read_in_display_units(window, family, tmp_path):
    modes = window.modes
    window.set_units(DEG_MM)
    window.mode_animation.start = lambda poses: None
    modes.select(1)
    mode = family.data.members[modes.member].modes[1]
    shape = dict(zip(family.data.members[modes.member].coordinates, mode["shape_real"], strict=True))
    other = "theta1" if mode["dominant"] == "theta2" else "theta2"
    ratio = shape[other] / shape[mode["dominant"]]  # both angles: the same in deg as in rad
    assert modes.hint.text().startswith(f"Mode 2's shape per 1 deg of {mode['dominant']}: {mode['dominant']} 1 deg")
    assert f"{other} {ratio:.4g} deg" in modes.hint.text()
    assert modes.export("json", str(tmp_path / "model.json"))
    saved = json.loads((tmp_path / "model.json").read_text())
    assert saved["state_units"] == ["deg", "deg", "deg/s", "deg/s"] and saved["input_units"] == ["N mm", "N mm"]
    si = family.data.members[modes.member].model
    np.testing.assert_allclose(np.asarray(saved["B"]), np.asarray(si["B"]) * 1e-3 / DEG, rtol=1e-12)
    np.testing.assert_allclose(
        np.sort_complex(np.linalg.eigvals(saved["A"])), np.sort_complex(np.linalg.eigvals(si["A"])), rtol=1e-12
    )
    window.docks["modes"].raise_()
    shot(window, "units_modes_deg_mm.png")


def test_the_workspace_map_follows_the_length_preference(window, qtbot, tmp_path):
    window.document.stack.setClean()
    window.open_sample("irsbot2")
    job = window.run_job("workspace", {"points": 7}, "Workspace map")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    panel = window.workspace
    axes = ("bottom", "left")
    assert [panel.plot.getAxis(side).labelText for side in axes] == ["platform x [m]", "platform z [m]"]
    window.set_units(DEG_MM)
    assert [panel.plot.getAxis(side).labelText for side in axes] == ["platform x [mm]", "platform z [mm]"]
    first, second = np.asarray(job.result.data.first), np.asarray(job.result.data.second)
    x, y, width, height = panel.image.mapRectToParent(panel.image.boundingRect()).getRect()
    assert x == pytest.approx(1e3 * (first[0] - (first[1] - first[0]) / 2), rel=1e-12)
    assert width == pytest.approx(1e3 * (first[-1] - first[0]) * 7 / 6, rel=1e-12)
    j, i = np.argwhere(np.isfinite(job.result.data.values["mass_condition"]))[0]
    assert panel.value_at(1e3 * first[i], 1e3 * second[j]).startswith(f"x = {1e3 * first[i]:.4g} mm, z = ")
    assert panel.export("csv", str(tmp_path / "map.csv"))
    table = pandas.read_csv(tmp_path / "map.csv")
    np.testing.assert_allclose(table["x [mm]"], 1e3 * np.tile(first, len(second)), rtol=1e-12)
    window.docks["workspace"].raise_()
    shot(window, "units_workspace_mm.png")


def test_a_four_bar_lists_no_limbs_and_a_parallel_machine_does(window):
    window.open_sample("four_bar")
    assert ("limbs",) not in window.tree.items  # its coupler is driven through its loop: no platform
    window.document.stack.setClean()
    window.open_sample("irsbot2")
    assert window.tree.items[("limbs",)].text(1) == "2, platform P"


def test_the_parameter_tables_stay_si_with_a_unit_column_whatever_the_display_units(window, qtbot):
    window.open_sample("four_bar")
    window.set_units(DEG_MM)
    job = window.run_job("base_parameters", {"method": "dp", "samples": 40}, "Base parameters")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    rows = window.parameter_table.rows("text")
    values = {p["name"]: p["value"] for p in job.result.data.parameters}
    for name, value, unit, *_ in rows:  # the four-bar's bodies are 1 to 3: the prefix says the unit
        assert unit == ("kg m^2" if name[0] == "I" else "kg m" if name[:2] in ("mx", "my", "mz") else "kg")
        assert value == f"{values[name]:.6g}"  # SI, as the model holds it, not kg mm
    assert window.parameter_table.columns[2] == window.base_table.columns[1] == "unit (SI)"
    assert "Values in SI (kg, kg m, kg m^2) whatever the display units" in window.base_table.summary.text()
    window.docks["parameter_table"].raise_()
    shot(window, "units_parameter_table_deg_mm.png")
