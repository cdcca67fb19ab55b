"""Undo commands: every change to the document is one of these, pushed on the document's QUndoStack."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QUndoCommand

from ...model import Model

POSE_ID = 1


class ModelEdit(QUndoCommand):
    """A structural edit kept as the models before and after it (cheap at mechanism sizes, and exact:
    undo gives back the same saved bytes). `install` makes a model the document's."""

    def __init__(self, install: Callable[[Model], None], text: str, before: Model, after: Model) -> None:
        super().__init__(text)
        self.install, self.before, self.after = install, before, after

    def redo(self) -> None:
        self.install(self.after.copy())

    def undo(self) -> None:
        self.install(self.before.copy())


class PoseEdit(QUndoCommand):
    """New initial values of coordinates (the pose shown); successive steps of one slider drag merge.
    `set_initial` writes values into the document."""

    def __init__(
        self,
        set_initial: Callable[[dict[str, float | None]], None],
        text: str,
        before: dict[str, float | None],
        after: dict[str, float],
        drag: int,
    ) -> None:
        super().__init__(text)
        self.set_initial, self.before, self.after, self.drag = set_initial, before, after, drag

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
        self.set_initial(self.after)

    def undo(self) -> None:
        self.set_initial(self.before)
