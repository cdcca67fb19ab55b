"""Analysis › K&C… with the axle roll test in the window: the dialog offers it (the roll in the suspension angle
unit, the load fields off), the job runs from the dialog, and the panel shows the roll moment and roll stiffness
page with the figures; the CSV export is the command's. A screenshot to MBSTUDIO_SCREENSHOTS when set."""

from __future__ import annotations

import math

import pytest
from PySide6.QtWidgets import QDialog

from mbstudio import samples
from mbstudio.gui.jobs.job_options import KCDialog
from mbstudio.jobs import DONE
from mbstudio.simulation.kc_axle_roll import AxleRollTest

from .test_workbench import shot


def choose_axle_roll(dialog: KCDialog) -> None:
    dialog.test.setCurrentIndex(dialog.test.findData("axle_roll"))
    for key, text in (("travel", "40"), ("travel_points", "21"), ("roll", "2"), ("roll_points", "41"),
                      ("tyre_stiffness", "250000")):  # fmt: skip
        dialog.lines[key].setText(text)


def test_the_dialog_offers_the_axle_roll_in_degrees_with_the_load_fields_off(qtbot):
    dialog = KCDialog(samples.load("sla_suspension_bushed"), {})
    qtbot.addWidget(dialog)
    assert dialog.lines["roll"].text() == "3" and not dialog.lines["roll"].isEnabled()
    choose_axle_roll(dialog)
    assert dialog.lines["roll"].isEnabled() and not dialog.lines["lateral_force"].isEnabled()
    options = dialog.options()
    assert options["test"] == "axle_roll" and options["roll"] == pytest.approx(math.radians(2.0), rel=1e-15)
    assert options["tyre_stiffness"] == 250000.0 and "track" not in options and "lateral_force" not in options
    dialog.lines["roll"].setText("25")
    assert "roll" in dialog.validate()[0] and "expected 0.00572958 to 20 deg" in dialog.validate()[0]
    assert not dialog.ok.isEnabled()


def test_the_axle_roll_runs_from_the_dialog_and_fills_the_panel(window, qtbot, tmp_path, monkeypatch):
    window.open_sample("sla_suspension_bushed")
    window.showMaximized()

    def accept(dialog: KCDialog) -> int:  # the user picks the axle roll and presses OK
        choose_axle_roll(dialog)
        assert dialog.ok.isEnabled(), dialog.error.text()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(KCDialog, "exec", accept)
    job = window.run_analysis("kc_rig", "Axle roll")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    test = job.result.data.kc
    assert isinstance(test, AxleRollTest) and len(test.roll.roll) == 41
    panel = window.kc
    assert panel.result is job.result and not panel.page.isNull() and window.docks["kc"].isVisible()
    stiffness = test.figures["roll_stiffness"][1] * math.pi / 180
    assert f"roll stiffness at design: {stiffness:.4g} N m/deg" in panel.summary.text()
    shot(window, "kc_axle_roll.png")
    path = tmp_path / "roll.csv"
    assert window.export_result("kc", "csv", str(path))
    assert path.read_text().startswith("roll [")
