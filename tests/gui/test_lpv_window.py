"""Linear families (LPV) in the window: Linearise… with a schedule and an operating point typed as coordinate
values, each refused by name when the text is bad; the family's panel (each mode's frequency and damping against
the scheduling parameter) equal to the API's family, the Modes and Bode panels following the member picked; the
family exported as the command writes it; Cancel keeping the models done. Screenshots go to
MBSTUDIO_SCREENSHOTS when it is set (that is how they are looked at)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
import scipy.io
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar

from mbstudio import samples
from mbstudio.gui.jobs.job_options import LinearizeDialog
from mbstudio.gui.results.eigenvalue_map import EigenvalueMap
from mbstudio.gui.results.panel_parts import LogAxis
from mbstudio.io.state_space import family_document, save_state_space
from mbstudio.jobs import DONE, Job
from mbstudio.jobs.tasks import linearization
from mbstudio.linear.lpv import linear_family
from mbstudio.linear.modes import modes
from mbstudio.model import dumps
from tests.test_linearization import G, point_pendulum

from .test_linear_window import wait_done

LENGTHS = {"name": "L", "from": 0.8, "to": 1.6, "count": 5}


def test_the_dialog_takes_a_schedule_and_coordinate_values_and_names_bad_text(qtbot):
    model = samples.load("double_pendulum")
    dialog = LinearizeDialog(model, {"at": "initial"})
    qtbot.addWidget(dialog)
    dialog.lines["values"].setText("theta1 = 0.3, d_theta2 = 1")
    assert (
        "values: 'd_theta2' is not an independent coordinate (theta1, theta2) (got 'd_theta2 = 1')"
        in (dialog.validate()[0])
    )
    dialog.lines["values"].setText("theta1 = 0.3")
    dialog.lines["velocities"].setText("theta2 = 1")
    assert dialog.options() | {"inputs": None} == {
        "at": "initial",
        "values": {"theta1": 0.3},
        "velocities": {"theta2": 1.0},
        "inputs": None,
        "outputs": [],
        "schedule": None,
    }
    dialog.schedule.setCurrentIndex(dialog.schedule.findData("theta1"))  # suggests ±0.2 rad about the pose
    pose = next(c.initial for j in model.joints for c in j.coordinates if c.name == "theta1")
    suggested = [float(dialog.lines[k].text()) for k in ("schedule_from", "schedule_to")]
    assert suggested == pytest.approx([pose - 0.2, pose + 0.2], abs=1e-5)
    assert not dialog.lines["values"].isEnabled() and "values" not in dialog.options()
    dialog.lines["schedule_from"].setText("-0.2")
    dialog.lines["schedule_to"].setText("0.2")
    for key, text, message in (
        (
            "schedule_from",
            "abc",
            "schedule from: 'abc' is not a number; expected a number, with or without a unit: e.g. 0.5 or 0.5 rad",
        ),
        (
            "schedule_from",
            "3 mm",
            "schedule from: is a length, where an angle is expected (got '3 mm'); expected rad, deg, arcmin, turn",
        ),
        ("schedule_to", "-0.2", "schedule to: is the first value (got -0.2); expected a value ≠ the first"),
        ("schedule_count", "1", "number of models: 1 is out of range; expected a whole number from 2 to 1000"),
    ):
        good = dialog.lines[key].text()
        dialog.lines[key].setText(text)
        assert dialog.validate() == [message] and not dialog.ok.isEnabled()
        dialog.lines[key].setText(good)
    dialog.at.setCurrentIndex(dialog.at.findData("equilibrium"))
    dialog.lines["hold"].setText("theta1 = 0.1")
    assert dialog.validate() == [
        "hold: holds theta1, the scheduling coordinate; expected other coordinates: each model holds theta1"
    ]
    dialog.lines["hold"].setText("")
    assert dialog.options()["schedule"] == {"name": "theta1", "from": -0.2, "to": 0.2, "count": 11}


def test_coordinate_values_typed_are_the_operating_point():
    result = linearization(
        dumps(samples.load("double_pendulum")),
        {"at": "initial", "values": {"theta1": 0.3}},
        lambda *_: None,
        lambda: False,
    )
    model = result.data.model
    assert model["point_kind"] == "given" and model["q0"][model["coordinates"].index("theta1")] == 0.3
    assert not model["is_equilibrium"]  # 0.3 rad out, at rest: gravity pulls it back, the drift is kept


def test_axes_read_in_plain_numbers(qtbot):
    """Bode's frequency axis in decades of plain numbers; a family's colour bar from -0.3 to 0.3 rad in rad."""
    assert LogAxis("bottom").logTickStrings([-2, -1, 0, 1, 2], 1.0, 1.0) == ["0.01", "0.1", "1", "10", "100"]
    spots = EigenvalueMap()
    qtbot.addWidget(spots)
    mode = {"eigenvalue_real": -1.0, "eigenvalue_imag": 2.0}
    spots.show_family([[mode], [mode]], np.array([-0.3, 0.3]), "theta1 [rad]")
    assert spots.colour_bar.axis.autoSIPrefixScale == 1.0 and spots.colour_bar.axis.labelUnitPrefix == ""


def _curves(plot) -> list[pg.PlotDataItem]:
    return [item for item in plot.listDataItems() if isinstance(item, pg.PlotDataItem)]


def _finished(result, options: dict) -> Job:
    """The job the window takes, for a result computed here (the window's own jobs run in a process)."""
    return Job(1, "linearization", "Linearise", options, result.provenance.model_hash, state=DONE, result=result)


def test_the_family_in_the_window_is_the_api_family_and_a_picked_model_fills_modes_and_bode(window, qtbot, tmp_path):
    """The pendulum over its length: the family panel's curve is the API's family (its frequencies to 1e-12) and
    √(g/L) / 2π; picking L = 1.4 m puts that model in the Modes and Bode panels; File › Export writes the family
    as the command does."""
    model = point_pendulum()
    window.document.replace(model, None)
    options = {"at": "equilibrium", "schedule": LENGTHS}
    result = linearization(dumps(model), options, lambda *_: None, lambda: False)
    window._job_finished(_finished(result, options))
    lengths = np.linspace(0.8, 1.6, 5)
    family = linear_family(model, "L", lengths)
    api = np.array([modes(lin)[0].frequency_hz for lin in family.models])
    assert window.docks["lpv"].isVisible() and window.lpv.member == 1  # the document's L = 1 m
    (curve,) = _curves(window.lpv.frequency)
    x, y = curve.getData()
    assert x.tolist() == lengths.tolist() and y == pytest.approx(api, rel=1e-12, abs=0)
    assert y == pytest.approx(np.sqrt(G / lengths) / (2 * np.pi), rel=1e-12)
    assert len(window.modes.map.family.data) == 10  # each member's conjugate pair
    started = []
    window.mode_animation.start = started.append
    window.modes.select(0)  # animating the swing of L = 1 m
    window.lpv._pick_near(1.41)  # the cursor dragged near L = 1.4 m
    assert window.modes.member == window.bode.member == 3
    members = result.data.members
    assert np.shares_memory(started[0], members[1].poses) and np.shares_memory(started[1], members[3].poses)
    assert window.modes.table.item(0, 1).text() == f"{api[3]:.6g}"
    assert window.modes.summary.text().startswith("L = 1.4 m (model 4 of 5): About the equilibrium found")
    (response,) = _curves(window.bode.magnitude)
    assert np.array_equal(response.getData()[1], result.data.members[3].magnitude_db[:, 0, 0])
    assert window.bode.summary.text().startswith("L = 1.4 m (model 4 of 5): theta [rad] per theta [N m]")
    assert window.lpv.readout.text().endswith(f"mode 1 (theta): {api[3]:.4g} Hz, ζ 0.000")
    assert "export_lpv_mat" in window.actions  # File › Export › Linear Family (LPV) › as MATLAB file
    assert window.export_result("lpv", "mat", str(tmp_path / "window.mat"))
    save_state_space(family_document(family), tmp_path / "command.mat")  # what `mbstudio linearize` writes
    shown, written = (scipy.io.loadmat(tmp_path / f"{n}.mat") for n in ("window", "command"))
    for key in ("A", "B", "C", "D", "schedule_values", "eigenvalues"):
        assert np.array_equal(shown[key], written[key]), key
    assert [str(s[0]) for s in shown["states"].ravel()] == ["theta", "d_theta"]


@pytest.mark.slow  # two jobs, each in its own process
def test_the_sla_family_through_the_job_and_a_cancelled_family_keeps_its_models(window, qtbot, tmp_path):
    """The sprung SLA over its arm angle: the bounce frequency against the wheel travel (the screenshot); then a
    long family cancelled after three models shows those three."""
    folder = Path(os.environ.get("MBSTUDIO_SCREENSHOTS") or tmp_path)
    options = {
        "at": "equilibrium",
        "inputs": ["theta1", "5.K.fz"],
        "outputs": ["theta1", "alignment.wheel_travel"],
        "schedule": {"name": "theta1", "from": -0.3, "to": 0.3, "count": 25},
    }
    job = window.run_job("linearization", options, "Linearise")
    wait_done(qtbot, job)
    assert window.lpv.result is job.result and len(job.parts) == 25
    window.lpv.modes.setCurrentIndex(window.lpv.modes.findText("mode 2 (theta1)"))
    window.lpv.x_axis.setCurrentIndex(window.lpv.x_axis.findText("alignment.wheel_travel [m]"))
    (curve,) = _curves(window.lpv.frequency)
    travel, bounce = curve.getData()
    assert travel[12] == pytest.approx(0.0, abs=1e-6) and bounce[12] == pytest.approx(3.84, abs=0.01)
    assert travel[0] < -0.1 and travel[-1] > 0.1 and bounce.max() > bounce[0] + 0.4  # stiffer in bump
    qtbot.wait(100)
    bars = [b for b in window.findChildren(QTabBar) if "Linear family" in [b.tabText(i) for i in range(b.count())]]
    assert bars and all(b.elideMode() == Qt.TextElideMode.ElideNone and b.usesScrollButtons() for b in bars)
    window.window_image().save(str(folder / "window_sla_lpv.png"))
    long = {"at": "equilibrium", "schedule": {"name": "theta1", "from": -1.0, "to": 1.0, "count": 1000}}
    window.document.replace(samples.load("double_pendulum"), None)
    job = window.run_job("linearization", long, "Linearise")
    qtbot.waitUntil(lambda: len(job.parts) >= 3, timeout=120_000)
    window.jobs.cancel(job)
    kept = len(job.parts)
    assert job.state == "cancelled" and job.message == f"cancelled; kept {kept} of 1000 linear models over theta1"
    assert len(window.lpv.result.data.members) == kept and window.lpv.picker.slider.maximum() == kept - 1
    assert "Stopped early</b>: the first" in window.lpv.summary.text()
    assert window.lpv.family["values"].tolist() == np.linspace(-1.0, 1.0, 1000)[:kept].tolist()
