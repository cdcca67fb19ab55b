"""GUI tests: the window on a real or virtual (Xvfb) X display, which VTK needs; Qt draws on that display
when its X11 plugin loads and off-screen otherwise (headless.choose_qt_platform). QSettings, and the
autosave recovery file beside them, go to a temporary folder."""

from __future__ import annotations

import os
import shutil

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QSettings
from PySide6.QtWidgets import QMessageBox

from mbstudio.gui import headless


def dispose(window) -> None:
    """Close without the unsaved-changes prompt and delete now, while Qt still runs: VTK objects left to
    interpreter shutdown call into Qt objects that are already gone."""
    window.document.stack.setClean()
    window.close()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(scope="session")
def display():
    """An X display for VTK: the existing one, or an Xvfb started here; then the Qt platform. Without
    either (no Xvfb installed) the tests that need the window are skipped and say why; with Xvfb they run."""
    if not os.environ.get("DISPLAY"):
        if shutil.which("Xvfb") is None:
            pytest.skip("needs an X display for VTK: install Xvfb (CI does) or run under a desktop session")
        headless.start_xvfb()  # ends with the test process (see start_xvfb)
    headless.choose_qt_platform()
    yield os.environ["DISPLAY"]


@pytest.fixture(scope="session")
def qapp_args(display):
    """pytest-qt creates the QApplication from this: requiring `display` sets DISPLAY and the platform first."""
    return ["mbstudio-tests"]


@pytest.fixture(autouse=True)
def temporary_settings(tmp_path):
    """Never touch the user's settings or recovery file."""
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    yield tmp_path / "settings"


@pytest.fixture
def answers(monkeypatch):
    """Scripted message boxes: set answers["question"] to the button to return; calls are recorded."""
    record = {"question": QMessageBox.StandardButton.Cancel, "calls": []}

    def question(parent, title, text, *args, **kwargs):
        record["calls"].append(("question", title, text))
        return record["question"]

    def message(kind):
        def show(parent, title, text, *args, **kwargs):
            record["calls"].append((kind, title, text))
            return QMessageBox.StandardButton.Ok

        return show

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    for kind in ("critical", "warning", "information"):
        monkeypatch.setattr(QMessageBox, kind, staticmethod(message(kind)))
    return record


@pytest.fixture
def window(qtbot, display, answers):
    from mbstudio.gui.main_window import MainWindow

    w = MainWindow()
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    yield w
    dispose(w)
