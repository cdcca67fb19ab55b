"""File › Import (MJCF) and File › Export › Model as MJCF / as FMU in the window."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from mbstudio.jobs import DONE

mujoco = pytest.importorskip("mujoco")
FOUR_BAR = Path(__file__).parent.parent / "mjcf" / "four_bar.xml"


def test_an_mjcf_four_bar_opens_with_its_loop_and_exports_for_mujoco(window, qtbot, tmp_path):
    window.actions["import_urdf"]  # File › Import URDF or MJCF…
    job = window.import_urdf(str(FOUR_BAR))  # no package folder is asked for an MJCF file
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: window.document.model.name == "four-bar", timeout=5000)
    assert window.document.model.joint("loop").cut and window.mech.independent  # the loop closed, one slider
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "urdf_notes") is not None, timeout=5000)
    assert window.findChild(QMessageBox, "urdf_notes").windowTitle() == "MJCF import"
    window.window_image().save(str(tmp_path / "mjcf_four_bar.png"))
    out = tmp_path / "again.xml"
    window.actions["export_mjcf"]
    assert window.export_mjcf(str(out))
    assert mujoco.MjModel.from_xml_path(str(out)).neq == 1 and "MJCF written" in window.statusBar().currentMessage()


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_the_model_exports_as_an_fmu_from_a_job(window, qtbot, tmp_path):
    window.open_sample("double_pendulum")
    window.actions["export_fmu"]
    job = window.export_fmu(str(tmp_path))
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: len(list(tmp_path.glob("*.fmu"))) == 1, timeout=5000)
    assert "FMU written" in window.statusBar().currentMessage()
