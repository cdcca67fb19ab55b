"""Undo commands: every change to the document is one of these, pushed on the document's QUndoStack."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand

from ..model import Model

if TYPE_CHECKING:
    from .document import Document

POSE_ID = 1


class ModelEdit(QUndoCommand):
    """A structural edit kept as the models before and after it (cheap at mechanism sizes, and exact:
    undo gives back the same saved bytes)."""

    def __init__(self, document: Document, text: str, before: Model, after: Model) -> None:
        super().__init__(text)
        self.document, self.before, self.after = document, before, after

    def redo(self) -> None:
        self.document.install(self.after.copy())

    def undo(self) -> None:
        self.document.install(self.before.copy())


class PoseEdit(QUndoCommand):
    """New initial values of coordinates (the pose shown); successive steps of one slider drag merge."""

    def __init__(
        self, document: Document, text: str, before: dict[str, float | None], after: dict[str, float], drag: int
    ) -> None:
        super().__init__(text)
        self.document, self.before, self.after, self.drag = document, before, after, drag

    def id(self) -> int:
        return POSE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, PoseEdit) or other.drag != self.drag:
            return False
        self.after = {**self.after, **other.after}
        self.before = {**other.before, **self.before}
        self.setText(other.text())
        return True

    def redo(self) -> None:
        self.document.set_initial(self.after)

    def undo(self) -> None:
        self.document.set_initial(self.before)
