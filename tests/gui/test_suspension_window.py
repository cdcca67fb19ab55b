"""Analysis › Suspension Report… in the window: the options dialog in mm, the job, the page in
its panel with the design position summarised, and the exports; a screenshot to MBSTUDIO_SCREENSHOTS when set."""

from __future__ import annotations

import pytest

from mbstudio import samples
from mbstudio.gui.jobs.job_options import SuspensionReportDialog
from mbstudio.jobs import DONE

from .test_workbench import shot


def test_the_dialog_reads_the_travel_in_mm_and_refuses_a_model_without_a_measure_set(qtbot):
    dialog = SuspensionReportDialog(samples.load("sla_suspension"), {})
    qtbot.addWidget(dialog)
    assert dialog.lines["travel"].text() == "100" and dialog.options() == {
        "measure": "alignment",
        "travel": pytest.approx(0.1),
        "points": 41,
    }
    dialog.lines["travel"].setText("-5")
    assert "travel: -5 is out of range" in dialog.validate()[0] and not dialog.ok.isEnabled()
    four_bar = SuspensionReportDialog(samples.load("four_bar"), {})
    qtbot.addWidget(four_bar)
    assert "no suspension measure set" in four_bar.validate()[0] and not four_bar.ok.isEnabled()


def test_the_report_job_fills_its_panel_and_exports(window, qtbot, tmp_path):
    window.showMaximized()
    job = window.run_job("suspension_report", {"travel": 0.1, "points": 21}, "Suspension report")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    panel = window.suspension
    assert panel.result is job.result and not panel.page.isNull() and panel.image.pixmap().width() > 300
    assert "camber -3 deg" in panel.summary.text() and "kingpin inclination 3 deg" in panel.summary.text()
    assert window.docks["suspension"].isVisible()
    shot(window, "sla_suspension_report.png")
    for fmt, magic in (("pdf", b"%PDF-"), ("png", b"\x89PNG"), ("svg", b"<?xml"), ("csv", b"wheel travel [m]")):
        path = tmp_path / f"report.{fmt}"
        assert window.export_result("suspension", fmt, str(path))
        assert path.read_bytes().startswith(magic), fmt
    window.actions["suspension_options"].isEnabled()
