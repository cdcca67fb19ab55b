"""File › Export › Equations as C: a job builds the sources and the window writes them into the folder."""

from __future__ import annotations

import pytest

from mbstudio.jobs import DONE


@pytest.mark.slow  # compiles the SLA's engine (8 s); tests/test_c_export.py compiles and checks the C itself
def test_equations_as_c_are_written_by_a_job(window, qtbot, tmp_path):
    window.actions["export_c"]  # in the File › Export menu
    job = window.export_c(str(tmp_path))
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: len(list(tmp_path.glob("*.[ch]"))) == 2, timeout=5000)
    header = next(tmp_path.glob("*.h")).read_text()
    assert "model sha256" in header and "accelerations(t[1], q[11], qd_ind[2], tau[11])" in header
    assert "C code written" in window.statusBar().currentMessage()


def test_a_folder_that_cannot_take_the_files_is_refused_before_any_work(window, answers, tmp_path):
    (tmp_path / "missing").mkdir()
    (tmp_path / "missing").rmdir()
    assert window.export_c(str(tmp_path / "missing")) is None
    assert answers["calls"][-1][0] == "critical"


def test_equations_as_a_numpy_module_are_written_by_a_job(window, qtbot, tmp_path):
    window.open_sample("double_pendulum")
    job = window.export_c(str(tmp_path), language="numpy")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: len(list(tmp_path.glob("*.py"))) == 1, timeout=5000)
    assert "def base_regressor(q, qd, qdd):" in next(tmp_path.glob("*.py")).read_text()
    assert "numpy module written" in window.statusBar().currentMessage()
