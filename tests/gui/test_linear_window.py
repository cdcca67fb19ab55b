"""Equilibrium… and Linearise… in the window: the options dialogs, the Modes table with its eigenvalue map and a
selected mode animating in the 3D view, the Bode plot of a chosen pair, the exports, stale results after an
edit, and the equilibrium as one undoable move of the pose. Screenshots go to MBSTUDIO_SCREENSHOTS when it is
set (that is how they are looked at)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from mbstudio import samples
from mbstudio.gui.jobs.job_options import EquilibriumDialog, LinearizeDialog
from mbstudio.gui.results.bode_panel import BodePanel
from mbstudio.gui.results.modes_panel import ModesPanel
from mbstudio.jobs.tasks import TASKS
from mbstudio.model import dumps

OPTIONS = {"at": "equilibrium", "inputs": ["theta1", "5.K.fz"], "outputs": ["theta1", "alignment.wheel_travel"]}


def _run(model, options: dict):
    return TASKS["linearization"](dumps(model), options, lambda *_: None, lambda: False)


def test_the_dialogs_check_names_and_pairs_as_they_are_typed(qtbot):
    model = samples.load("sla_suspension")
    dialog = LinearizeDialog(model, {"at": "initial", "velocities": {"theta1": 2.0}})
    qtbot.addWidget(dialog)
    assert dialog.options()["velocities"] == {"theta1": 2.0} and not dialog.lines["hold"].isEnabled()
    dialog.lines["inputs"].setText("theta1, 5.nowhere.fz")
    assert "inputs: names no point 'nowhere' of body 5" in dialog.validate()[0] and not dialog.ok.isEnabled()
    dialog.lines["inputs"].setText("theta1, 5.K.fz")
    dialog.lines["outputs"].setText("alignment.toe")
    assert "outputs: is not an output of this model" in dialog.validate()[0]
    dialog.lines["outputs"].setText("alignment.wheel_travel, d_theta1")
    assert dialog.validate() == [] and dialog.options()["outputs"] == ["alignment.wheel_travel", "d_theta1"]
    equilibrium = EquilibriumDialog(model, {"hold": {"damper_s": 0.5}})
    qtbot.addWidget(equilibrium)
    assert "hold: 'damper_s' is not an independent coordinate (theta1, theta2)" in equilibrium.validate()[0]
    equilibrium.lines["hold"].setText("theta1 = 0.05")
    assert equilibrium.options() == {"hold": {"theta1": 0.05}, "move": True}


def test_the_panels_show_modes_and_responses_and_export_the_model(qtbot, tmp_path):
    """The double pendulum held at theta1 = 0.2: two modes, both conjugate pairs on the map; the Bode curve is
    the job's response of the chosen pair; the .mat export is the job's model."""
    result = _run(samples.load("double_pendulum"), {"at": "equilibrium", "hold": {"theta1": 0.2}})
    modes, bode = ModesPanel(), BodePanel()
    qtbot.addWidget(modes)
    qtbot.addWidget(bode)
    modes.show_result(result)
    bode.show_result(result)
    modes.resize(830, 260)  # its room at the bottom of a 1200 x 800 window
    modes.show()
    qtbot.waitExposed(modes)
    assert modes.table.horizontalScrollBar().maximum() == 0  # every column in view, "moves most" too
    assert not modes.picker.isVisible()  # one model: no slider over a family
    assert modes.table.rowCount() == 2 and "theta1 held by" in modes.summary.text()
    assert modes.table.item(0, 5).text() == "marginal" and len(modes.map.points.data) == 4
    with qtbot.waitSignal(modes.mode_selected) as selected:
        modes.map.picked.emit(1)
    assert selected.args == [1] and modes.table.selectionModel().selectedRows()[0].row() == 1
    bode.choose("theta2", "theta1")
    (curve,) = bode.magnitude.listDataItems()
    assert np.allclose(curve.getData()[1], result.data.magnitude_db[:, 0, 1])
    for fmt in ("csv", "json", "mat", "npz", "png"):
        assert modes.export(fmt, str(tmp_path / f"modes.{fmt}")), fmt
    assert np.array_equal(scipy.io.loadmat(tmp_path / "modes.mat")["A"], result.data.model["A"])
    assert "natural [Hz]" in (tmp_path / "modes.csv").read_text()
    for fmt in ("csv", "json", "png", "svg"):
        assert bode.export(fmt, str(tmp_path / f"bode.{fmt}")), fmt


def wait_done(qtbot, job, seconds: float = 120) -> None:
    qtbot.waitUntil(lambda: not job.running, timeout=int(seconds * 1000))
    qtbot.wait(200)  # the window takes the result on its next poll
    assert job.state == "done", job.error


@pytest.mark.slow  # two jobs, each in its own process
def test_linearise_and_equilibrium_in_the_window(window, qtbot, tmp_path):
    folder = Path(os.environ.get("MBSTUDIO_SCREENSHOTS") or tmp_path)
    job = window.run_job("linearization", OPTIONS, "Linearise")
    wait_done(qtbot, job)
    assert window.modes.result is job.result and window.modes.table.rowCount() == 2
    hop = next(r for r in range(2) if window.modes.table.item(r, 6).text() == "theta1")
    drawn = []
    window.mode_animation.draw = lambda q: (drawn.append(np.array(q)), window.view.set_pose(q))
    window.docks["modes"].raise_()
    window.modes.select(hop)
    qtbot.waitUntil(lambda: len(drawn) >= 6, timeout=5000)
    assert window.modes.table.horizontalScrollBar().maximum() == 0  # every column, "moves most" too, in view
    assert window.mode_animation.running and np.ptp(np.array(drawn)[:, 0]) > 0.05  # theta1 swings
    window.window_image().save(str(folder / "window_sla_modes.png"))
    window.docks["bode"].raise_()
    window.bode.choose("5.K.fz", "alignment.wheel_travel")
    qtbot.wait(100)
    window.window_image().save(str(folder / "window_sla_bode.png"))
    static = window.bode.result.data.magnitude_db[0, 1, 1]
    assert static == pytest.approx(-20 * np.log10(17419), abs=0.1)  # the wheel rate k MR² at low frequency
    window.move_coordinate("theta1", 0.05)
    assert not window.mode_animation.running and window.modes.stale.isVisibleTo(window.modes)
    window.document.stack.undo()
    job = window.run_job("equilibrium", {"hold": {}, "move": True}, "Equilibrium")
    wait_done(qtbot, job)
    assert window.document.stack.undoText() == "Move to the equilibrium"
    assert window._values()["theta2"] == pytest.approx(-0.608755, abs=1e-6)  # the wheel's heavy side down
    window.document.stack.undo()
    assert window._values()["theta2"] == 0.0


@pytest.mark.parametrize(
    ("sample", "kind", "headline"),
    [
        ("sla_suspension", "equilibrium", "About the equilibrium near the document's pose (found from it;"),
        ("four_bar", "equilibrium", "About the undamped but stable equilibrium nearest the document's pose (a nearer"),
    ],
)
def test_the_dialog_takes_the_equilibrium_near_the_pose_by_default_and_says_so(qtbot, sample, kind, headline):
    """Issue 24, item 8: as the command without --at."""
    model = samples.load(sample)
    dialog = LinearizeDialog(model, {})
    qtbot.addWidget(dialog)
    options = dialog.options()
    assert options["at"] == "auto" and "values" not in options and dialog.lines["hold"].isEnabled()
    result = _run(model, options)
    assert result.data.model["point_kind"] == kind
    panel = ModesPanel()
    qtbot.addWidget(panel)
    panel.show_result(result)
    assert headline in panel.summary.text()
