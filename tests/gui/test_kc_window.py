"""Analysis › K&C… in the window: the options dialog (travel in mm, loads in N, the options' limits), the job with
its progress and Cancel, the page in its panel with the figures at design, and the exports; a screenshot to
MBSTUDIO_SCREENSHOTS when set."""

from __future__ import annotations

import pytest

from mbstudio import samples
from mbstudio.gui.jobs.job_options import KCDialog
from mbstudio.jobs import CANCELLED, DONE

from .test_workbench import shot


def test_the_dialog_reads_mm_and_newtons_and_refuses_what_the_options_refuse(qtbot):
    dialog = KCDialog(samples.load("sla_suspension_bushed"), {})
    qtbot.addWidget(dialog)
    assert dialog.lines["travel"].text() == "80"
    options = dialog.options()
    assert options["travel"] == pytest.approx(0.08) and options["lateral_force"] == 4000.0
    assert options["measure"] == "alignment" and options["axle"] == "front"
    dialog.lines["lateral_force"].setText("-5")
    assert "lateral_force" in dialog.validate()[0] and not dialog.ok.isEnabled()
    four_bar = KCDialog(samples.load("four_bar"), {})
    qtbot.addWidget(four_bar)
    assert "no suspension measure set" in four_bar.validate()[0] and not four_bar.ok.isEnabled()


@pytest.mark.slow  # 17 s on two loaded cores: the job, and the A3 page drawn for the panel and the PDF
def test_the_kc_job_fills_its_panel_and_exports(window, qtbot, tmp_path):
    window.open_sample("sla_suspension_bushed")
    window.showMaximized()
    options = {"travel": 0.08, "travel_points": 5, "load_points": 3}
    job = window.run_job("kc_rig", options, "K&C")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    panel = window.kc
    assert panel.result is job.result and not panel.page.isNull() and panel.image.pixmap().width() > 300
    assert "lateral compliance steer: -0.037" in panel.summary.text() and "deg/kN" in panel.summary.text()
    assert window.docks["kc"].isVisible()
    shot(window, "kc_rig.png")
    for fmt, magic in (("pdf", b"%PDF-"), ("csv", b"wheel travel [m]")):  # PNG is the panel's; SVG the same path
        path = tmp_path / f"kc.{fmt}"
        assert window.export_result("kc", fmt, str(path))
        assert path.read_bytes().startswith(magic), fmt
    assert window.actions["kc_options"].text() == "&K&&C…"


def test_a_running_kc_job_reports_progress_and_cancels(window, qtbot):
    window.open_sample("sla_suspension_bushed")
    job = window.run_job("kc_rig", {"travel_points": 2001, "load_points": 3}, "Long K&C")
    qtbot.waitUntil(lambda: job.fraction > 0.0 or not job.running, timeout=60_000)
    assert job.running and 0 < job.fraction < 1
    window.jobs_panel.rows[job.id].cancel_button.click()
    assert job.state == CANCELLED and window.kc.result is None
