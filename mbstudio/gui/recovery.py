"""Autosave of unsaved changes to a recovery file per document, and recovery offered when the next session
starts.

Each open document autosaves to its own file in the recovery folder (named by an id of the window's
document, with a small JSON note of the file it came from), so two windows never share one recovery file and
one window's save never removes another's. A recovery file stays until the user decides: recovered (the
document takes it over), discarded, or left for next time; one that cannot be read is set aside, not deleted.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QMessageBox, QWidget

from ..model import ModelError, load, save, write_atomic
from .editing.document import Document
from .settings import autosave_seconds, recovery_folder, settings

UNREADABLE = ".unreadable"


class Autosave(QObject):
    """Every few seconds, writes a modified document to its recovery file; a clean one removes it."""

    def __init__(self, document: Document, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.path = recovery_folder() / f"{uuid.uuid4().hex}.mbs"
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.autosave)
        self.timer.start(autosave_seconds() * 1000)
        document.stack.cleanChanged.connect(lambda clean: clean and self.discard())

    def autosave(self) -> None:
        if not self.document.modified:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            save(self.document.model, self.path)
            write_atomic(_note(self.path), json.dumps({"source": self.document.path or ""}))
        except (ModelError, OSError):
            return  # a failed autosave must not interrupt the user; the next tick tries again

    def discard(self) -> None:
        """This document's recovery file only: other windows keep theirs."""
        _remove(self.path)


def _note(path: Path) -> Path:
    return path.with_suffix(".json")


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)
    _note(path).unlink(missing_ok=True)


def _source(path: Path) -> str | None:
    """The file the recovered changes belong to (None: an unsaved model); files of older versions have their
    source in the settings."""
    try:
        return json.loads(_note(path).read_text(encoding="utf-8")).get("source") or None
    except (OSError, ValueError, AttributeError):
        return settings().value("recovery/source", "") or None


def pending() -> list[Path]:
    """Recovery files left by sessions that did not close normally, newest first."""
    folder = recovery_folder()
    files = folder.glob("*.mbs") if folder.is_dir() else []
    return sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)


def offer_recovery(document: Document, parent: QWidget | None = None) -> bool:
    """Offer the newest recovery file: Yes recovers it into `document`, No discards it, Cancel keeps it for
    next time. Returns whether it was recovered."""
    files = pending()
    if not files:
        return False
    path, source = files[0], _source(files[0])
    more = f"\n\n{len(files) - 1} older recovery file(s) wait in {path.parent}." if len(files) > 1 else ""
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent,
        "Recover unsaved changes?",
        f"MB Studio did not close normally last time. Unsaved changes to {source or 'an unsaved model'} "
        f"were autosaved.\n\nYes: recover them. No: discard them. Cancel: decide next time.{more}",
        buttons.Yes | buttons.No | buttons.Cancel,
    )
    if answer == buttons.No:
        _remove(path)
    if answer != buttons.Yes:
        return False
    try:
        document.replace(load(path), source, modified=True)
    except ModelError as exc:
        aside = path.with_name(path.name + UNREADABLE)
        path.replace(aside)  # kept, and not offered again
        QMessageBox.warning(
            parent, "Recovery failed", f"The recovery file could not be read:\n\n{exc}\n\nIt is kept as {aside}."
        )
        return False
    _remove(path)  # the document holds the changes now, and autosaves them to its own file
    return True
