"""Files: save, title, bad files, recent files, layout, save as script, autosave and recovery."""

from __future__ import annotations

import subprocess
import sys

from PySide6.QtWidgets import QMessageBox

from mbstudio import samples
from mbstudio.gui import settings as app_settings
from mbstudio.gui.editing.document import Document
from mbstudio.gui.main_window import MainWindow
from mbstudio.gui.recovery import Autosave, offer_recovery, pending
from mbstudio.model import dumps, load

from .conftest import dispose
from .test_window import edit_field


def test_save_marks_clean_and_undo_back_to_the_saved_state_clears_the_star(window, tmp_path):
    target = tmp_path / "sla.mbs"
    assert window.save_as(str(target))
    assert window.windowTitle().startswith("sla.mbs") and not window.isWindowModified()
    assert target.read_text() == dumps(window.document.model)
    edit_field(window, ("inertia", "2"), "m", "1.6")
    assert window.isWindowModified()
    window.save()
    assert load(target).body("2").inertia["m"] == 1.6 and not window.isWindowModified()
    window.document.stack.undo()
    assert window.isWindowModified()
    window.document.stack.redo()
    assert not window.isWindowModified()


def test_a_bad_file_opens_nothing_and_says_why(window, answers, tmp_path):
    bad = tmp_path / "bad.mbs"
    bad.write_text('{"format": "mbstudio", "schema_version": 1,\n "bodies": [}\n')
    before = dumps(window.document.model)
    assert not window.open_file(str(bad))
    kind, title, text = answers["calls"][-1]
    assert kind == "critical" and "line 2" in text and "bad.mbs" in text
    assert dumps(window.document.model) == before and window.document.path is None


def test_open_adds_to_recent_files_and_samples_open_as_unsaved_copies(window, tmp_path):
    path = tmp_path / "four_bar.mbs"
    path.write_text(samples.path("four_bar").read_text())
    assert window.open_file(str(path))
    assert window.document.model.name == load(path).name
    assert app_settings.recent_files()[0] == str(path.resolve())
    window.open_sample("double_pendulum")
    assert window.document.path is None and window.status["dof"].text().startswith("DOF 2")


def test_layout_and_geometry_persist(qtbot, display, answers):
    first = MainWindow()
    first.show()
    first.resize(760, 580)  # within the offscreen platform's 800x600 screen, above the docks' least height
    qtbot.waitUntil(lambda: first.width() == 760)
    first.docks["coordinates"].hide()
    dispose(first)
    second = MainWindow()
    second.show()
    assert (second.width(), second.height()) == (760, 580)
    assert second.docks["coordinates"].isHidden()
    dispose(second)


def test_save_as_script_rebuilds_the_same_file(window, tmp_path):
    edit_field(window, ("parameter", "D12"), "value", "0.33")
    edit_field(window, ("inertia", "3"), "mz", "0.5*L7")
    script, out = tmp_path / "sla.py", tmp_path / "rebuilt.mbs"
    assert window.save_script(str(script))
    run = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert out.read_text(encoding="utf-8") == dumps(window.document.model)


def test_autosave_writes_a_recovery_file_that_the_next_session_offers(window, answers):
    edit_field(window, ("inertia", "1"), "m", "3.25")
    window.autosave.autosave()
    assert window.autosave.path.exists() and pending() == [window.autosave.path]
    answers["question"] = QMessageBox.StandardButton.Yes
    # the next session's document (a second window would share VTK's OpenGL context with this one)
    document = Document(samples.load())
    assert offer_recovery(document)
    assert document.model.body("1").inertia["m"] == 3.25 and document.modified
    assert "did not close normally" in answers["calls"][-1][2]
    assert pending() == []  # the document holds the changes now


def test_discarded_recovery_goes_and_postponed_recovery_stays(window, answers):
    edit_field(window, ("inertia", "1"), "m", "3.25")
    window.autosave.autosave()
    answers["question"] = QMessageBox.StandardButton.Cancel  # decide next time
    document = Document(samples.load())
    assert not offer_recovery(document) and pending() == [window.autosave.path]
    answers["question"] = QMessageBox.StandardButton.No  # discard
    assert not offer_recovery(document)
    assert pending() == [] and not document.modified


def test_saving_removes_only_its_own_recovery_file(window, tmp_path):
    other = Autosave(Document(samples.load("four_bar")))  # a second window's document
    other.document.set_pose({"theta1": 0.5}, "move", 0)
    other.autosave()
    edit_field(window, ("inertia", "1"), "m", "3.25")
    window.autosave.autosave()
    assert window.autosave.path != other.path and set(pending()) == {window.autosave.path, other.path}
    window.save_as(str(tmp_path / "x.mbs"))
    assert pending() == [other.path]


def test_an_unreadable_recovery_file_is_set_aside_not_deleted(window, answers):
    edit_field(window, ("inertia", "1"), "m", "3.25")
    window.autosave.autosave()
    window.autosave.path.write_text("{ not a model")
    answers["question"] = QMessageBox.StandardButton.Yes
    assert not offer_recovery(Document(samples.load()))
    aside = window.autosave.path.with_name(window.autosave.path.name + ".unreadable")
    assert aside.read_text() == "{ not a model" and pending() == []
    assert answers["calls"][-1][0] == "warning" and str(aside) in answers["calls"][-1][2]
