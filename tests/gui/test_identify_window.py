"""Analysis › Identify… in the window: the options dialog checks its fields, the identification runs as a job (with
progress, and Cancel), the Identification panel shows the signals, the estimates with error bars and the
validation, and exports CSV and JSON; a bad log fails the job with the log's message. Screenshots go to
MBSTUDIO_SCREENSHOTS when set."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from mbstudio.gui.jobs.job_options import IdentifyDialog
from mbstudio.jobs import CANCELLED, DONE, FAILED
from mbstudio.model.document import JointFriction

from ..test_identify import BAD_LOGS, good_log
from .test_workbench import shot


@pytest.fixture
def pendulum(window, tmp_path):
    window.document.stack.setClean()
    window.open_sample("double_pendulum")
    (tmp_path / "run1.csv").write_text(good_log(seed=1))
    (tmp_path / "run2.csv").write_text(good_log(seed=2, motion_seed=8))
    return window


def test_identify_in_the_window(pendulum, qtbot, tmp_path):
    """One window for all (each costs seconds to open): the dialog, a job into the panel, a bad log, Cancel."""
    _options_dialog(pendulum, tmp_path)
    _job_fills_the_panel(pendulum, qtbot, tmp_path)
    _bad_log_and_cancel(pendulum, qtbot, tmp_path)


def _options_dialog(pendulum, tmp_path):
    dialog = IdentifyDialog(pendulum.document.model, {"friction": ["viscous"]}, pendulum)
    assert dialog.friction["viscous"].isChecked() and not dialog.friction["coulomb"].isChecked()
    assert not dialog.ok.isEnabled() and "log: is empty" in dialog.error.text()
    dialog.lines["data"].setText(str(tmp_path / "missing.csv"))
    assert "is not a file" in dialog.error.text()
    dialog.lines["data"].setText(str(tmp_path / "run1.csv"))
    dialog.lines["cutoff_hz"].setText("-2")
    assert not dialog.ok.isEnabled() and "cut-off" in dialog.error.text()
    dialog.lines["cutoff_hz"].setText("")
    dialog.lines["digits"].setText("12")
    assert not dialog.ok.isEnabled()
    dialog.lines["digits"].setText("30")
    dialog.physical.setChecked(True)
    assert dialog.ok.isEnabled()
    options = dialog.options()
    assert options["data"] == str(tmp_path / "run1.csv") and options["validate"] is None
    assert options["friction"] == ["viscous"] and options["digits"] == 30 and options["cutoff_hz"] is None
    assert options["physical"] and not options["hold_unexcited"]
    dialog.reject()


def _job_fills_the_panel(pendulum, qtbot, tmp_path):
    options = {"data": str(tmp_path / "run1.csv"), "validate": str(tmp_path / "run2.csv"), "physical": True}
    job = pendulum.run_job("identification", options, "Identify")
    qtbot.waitUntil(lambda: not job.running, timeout=180_000)
    assert job.state == DONE, job.error
    panel = pendulum.identification
    assert panel.result is job.result and pendulum.docks["identification"].isVisible()
    assert "rank 6" in panel.summary.text() and "validation: relative RMS error" in panel.summary.text()
    assert panel.table.rowCount() == 6 and panel.table.item(0, 0).text() == "mx1 + m2"
    assert panel.signal.count() == 4 and panel.checked.count() == 2 and panel.tabs.isTabEnabled(2)
    pendulum.resizeDocks([pendulum.docks["identification"]], [430], Qt.Orientation.Vertical)
    for tab, name in enumerate(("signals", "estimates", "validation")):
        panel.tabs.setCurrentIndex(tab)
        shot(pendulum, f"identify_{name}.png")
    panel.tabs.setCurrentIndex(0)
    panel.signal.setCurrentIndex(2)  # theta1's force: logged, filtered and predicted
    assert panel.signals.getAxis("left").labelText == "force on theta1 [N·m]"
    shot(pendulum, "identify_force.png")
    assert pendulum.export_result("identification", "csv", str(tmp_path / "id.csv"))
    assert pendulum.export_result("identification", "json", str(tmp_path / "id.json"))
    table = pd.read_csv(tmp_path / "id.csv")
    document = json.loads((tmp_path / "id.json").read_text())
    assert list(table["kept"]) == ["mx1", "my1", "Izz1", "mx2", "my2", "Izz2"]
    assert document["rank"] == 6 and document["physical"]["consistent"]
    pendulum.document.edit("Rename", lambda model: setattr(model, "name", "edited"))
    assert panel.stale.isVisibleTo(panel)
    pendulum.document.stack.undo()


def _bad_log_and_cancel(pendulum, qtbot, tmp_path):
    bad = tmp_path / "bad.csv"
    change, message = BAD_LOGS["NaN"]
    bad.write_text(change(good_log()))
    job = pendulum.run_job("identification", {"data": str(bad)}, "Identify a bad log")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == FAILED and message in job.error
    job = pendulum.run_job("identification", {"data": str(tmp_path / "run1.csv")}, "Identify, then cancel")
    pendulum.jobs.cancel(job)
    qtbot.waitUntil(lambda: not job.running, timeout=30_000)
    assert job.state == CANCELLED


def test_the_checks_say_what_the_model_does_not_explain(pendulum, qtbot, tmp_path):
    """A bearing the document claims and the log lacks (its torques come from the RNEA without friction): the
    summary names the shoulder the model does not explain and the contradicted element; the Checks tab shows each
    coordinate's residual against its noise floor, the element's share of the log, the rank at each precision and
    the cut-off with its reason; the estimates' table their 3σ and the estimate each is most correlated with."""
    pendulum.document.edit("Add a bearing", lambda m: m.forces.append(JointFriction("bearing", "theta1", viscous=0.5)))
    options = {"data": str(tmp_path / "run1.csv"), "validate": str(tmp_path / "run2.csv")}
    job = pendulum.run_job("identification", options, "Identify")
    qtbot.waitUntil(lambda: not job.running, timeout=180_000)
    assert job.state == DONE, job.error
    panel = pendulum.identification
    summary = panel.summary.text()
    assert "NOT explained by the model: theta1" in summary and "the log contradicts bearing" in summary
    fit = {panel.fit.item(r, 0).text(): [panel.fit.item(r, c).text() for c in range(1, 6)] for r in range(2)}
    document = job.result.data.json
    for name, row in document["adequacy"]["coordinates"].items():
        assert float(fit[name][2]) == pytest.approx(row["ratio"], rel=1e-2)
    assert fit["theta1"][3].startswith("NOT explained") and float(fit["theta1"][2]) > 3
    assert fit["theta2"][3] == "explained"
    rebuilt = document["adequacy"]["accelerations"]["coordinates"]["theta2"]
    assert fit["theta2"][4] == f"{100 * rebuilt['relative_error']:.2g} % off: {rebuilt['ratio_to_floor']:.2g}×"
    text = panel.checks.toPlainText()
    share = document["adequacy"]["known_forces"]["elements"]["bearing"]
    assert f"{share['share']:.4g} ± {share['std']:.2g}" in text and "CONTRADICTED" in text
    assert "decided by variable precision" in text and "the log in double precision: rank 6" in text
    assert f"Cut-off {document['filter']['cutoff_hz']:.4g} Hz" in text and "velocities'" in text
    header = [panel.table.horizontalHeaderItem(c).text() for c in range(panel.table.columnCount())]
    std, three, partner = (header.index(h) for h in ("± σ", "± 3σ", "most correlated with"))
    for r, p in enumerate(document["base_parameters"]):
        assert float(panel.table.item(r, three).text()) == pytest.approx(3 * p["std"], rel=1e-2)
        assert panel.table.item(r, partner).text().startswith(p["most_correlated"])
    assert float(panel.table.item(0, std).text()) == pytest.approx(document["base_parameters"][0]["std"], rel=1e-2)
    pendulum.resizeDocks([pendulum.docks["identification"]], [430], Qt.Orientation.Vertical)
    panel.tabs.setCurrentIndex(3)
    shot(pendulum, "identify_checks.png")
    panel.tabs.setCurrentIndex(1)
    shot(pendulum, "identify_estimates_3sigma.png")
