"""The open document: the model, its file, and the undo stack through which every edit goes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from ...kinematics import Mechanism
from ...model import Model, load, save, validate
from .commands import ModelEdit, PoseEdit


def check(model: Model) -> None:
    """Raise the ModelError a person would see if this model became the document."""
    validate(model)
    Mechanism(model)  # topology and the choice of independent coordinates can refuse a valid file


class Document(QObject):
    """`structureChanged` after edits that change what is drawn, `poseChanged` after pose-only edits."""

    structureChanged = Signal()
    poseChanged = Signal()
    pathChanged = Signal()
    replaced = Signal()  # another model in this window (new, open, recovered, imported): old results go

    def __init__(self, model: Model, path: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.path = path
        self.stack = QUndoStack(self)

    # ------------------------------------------------------------------ edits
    def edit(self, text: str, change: Callable[[Model], object]) -> object:
        """Apply `change` to a copy; if the copy is a valid mechanism push it as one undo step and return
        what `change` returned, otherwise raise its ModelError and leave the document as it was."""
        after = self.model.copy()
        result = change(after)
        check(after)
        self.stack.push(ModelEdit(self.install, text, self.model.copy(), after))
        return result

    def set_pose(self, values: dict[str, float], text: str, drag: int) -> None:
        before = {name: self._coordinate(name).initial for name in values}
        self.stack.push(PoseEdit(self.set_initial, text, before, dict(values), drag))

    def install(self, model: Model) -> None:
        self.model = model
        self.structureChanged.emit()

    def set_initial(self, values: dict[str, float | None]) -> None:
        for name, value in values.items():
            self._coordinate(name).initial = value
        self.poseChanged.emit()

    def _coordinate(self, name: str):
        return next(c for j in self.model.joints for c in j.coordinates if c.name == name)

    # ------------------------------------------------------------------ files
    @property
    def modified(self) -> bool:
        return not self.stack.isClean()

    @property
    def title(self) -> str:
        return Path(self.path).name if self.path else self.model.name

    def replace(self, model: Model, path: str | None, modified: bool = False) -> None:
        """A new document in this window: empty history, clean unless `modified` (a recovered file)."""
        self.stack.clear()
        self.path = path
        self.install(model)
        if modified:
            self.stack.resetClean()  # no state of the (empty) history is the saved one
        self.pathChanged.emit()
        self.replaced.emit()

    def open(self, path: str) -> None:
        """Load `path`; a ModelError leaves the current document untouched."""
        model = load(path)
        check(model)
        self.replace(model, str(path))

    def save(self, path: str | None = None) -> None:
        target = path or self.path
        if target is None:
            raise ValueError("no file name: use save(path)")
        save(self.model, target)
        self.path = str(target)
        self.stack.setClean()
        self.pathChanged.emit()
