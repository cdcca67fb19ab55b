"""Autosave of unsaved changes to a recovery file, and recovery offered when the next session starts."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QMessageBox, QWidget

from ..model import ModelError, load, save
from .document import Document
from .settings import autosave_seconds, recovery_file, settings


class Autosave(QObject):
    """Every few seconds, writes a modified document to the recovery file; a clean one removes it."""

    def __init__(self, document: Document, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.autosave)
        self.timer.start(autosave_seconds() * 1000)
        document.stack.cleanChanged.connect(lambda clean: clean and discard())

    def autosave(self) -> None:
        if not self.document.modified:
            return
        target = recovery_file()
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            save(self.document.model, target)
        except ModelError:
            return  # a failed autosave must not interrupt the user; the next tick tries again
        settings().setValue("recovery/source", self.document.path or "")


def discard() -> None:
    recovery_file().unlink(missing_ok=True)


def offer_recovery(document: Document, parent: QWidget | None = None) -> bool:
    """If a previous session left a recovery file, ask whether to restore it; returns whether it was."""
    path = recovery_file()
    if not path.exists():
        return False
    source = settings().value("recovery/source", "") or None
    answer = QMessageBox.question(
        parent,
        "Recover unsaved changes?",
        f"MB Studio did not close normally last time. Unsaved changes to "
        f"{source or 'an unsaved model'} were autosaved.\n\nRecover them?",
    )
    recovered = False
    if answer == QMessageBox.StandardButton.Yes:
        try:
            document.replace(load(path), source, modified=True)
            recovered = True
        except ModelError as exc:
            QMessageBox.warning(parent, "Recovery failed", f"The recovery file could not be read:\n\n{exc}")
    discard()
    return recovered
