"""What the tree's context menu asks for: dialogs where needed, then one document edit each.
Deleting something other items refer to first says what refers to it and what will happen."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QInputDialog,
    QLineEdit,
    QMessageBox,
    QWidget,
)

from ..model import GROUND, JOINT_TYPES, Model, ModelError
from . import edits
from .document import Document


class AddBodyDialog(QDialog):
    """A new body: the body it hangs from, at which of that body's points, by which joint type."""

    def __init__(self, model: Model, parent_label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add body")
        self.model = model
        self.parent_body = QComboBox()
        self.parent_body.addItems([GROUND] + [b.label for b in model.bodies])
        self.parent_body.setCurrentText(parent_label)
        self.point = QComboBox()
        self.joint_type = QComboBox()
        self.joint_type.addItems(list(JOINT_TYPES))
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. link")
        form = QFormLayout(self)
        form.addRow("attached to body", self.parent_body)
        form.addRow("at point", self.point)
        form.addRow("by joint", self.joint_type)
        form.addRow("name", self.name)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.parent_body.currentTextChanged.connect(self._points)
        self._points(parent_label)

    def _points(self, label: str) -> None:
        self.point.clear()
        self.point.addItems(["(origin)", *self.model.body(label).points])

    def choice(self) -> tuple[str, str, str, str | None]:
        point = self.point.currentText()
        return (self.parent_body.currentText(), self.joint_type.currentText(), self.name.text().strip(),
                None if point == "(origin)" else point)


class EditActions:
    def __init__(self, document: Document, parent: QWidget) -> None:
        self.document = document
        self.parent = parent

    def run(self, request: str, key: tuple) -> tuple | None:
        """Carry out a context-menu request on item `key`; returns the key of a new or renamed item."""
        try:
            return getattr(self, request)(key)
        except ModelError as exc:
            QMessageBox.warning(self.parent, "Not applied", f"The model was left as it was:\n\n{exc}")
            return None

    # ------------------------------------------------------------------ adding
    def add_parameter(self, key: tuple) -> tuple:
        name = self.document.edit("Add parameter", edits.add_parameter)
        return ("parameter", name)

    def add_point(self, key: tuple) -> tuple:
        label = GROUND if key[0] == "ground" else key[1]
        name = self.document.edit(f"Add point to body '{label}'", lambda m: edits.add_point(m, label))
        return ("point", label, name)

    def add_body(self, key: tuple) -> tuple | None:
        parent_label = key[1] if key[0] == "body" else GROUND
        dialog = AddBodyDialog(self.document.model, parent_label, self.parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        parent, joint_type, name, point = dialog.choice()
        label = self.document.edit(f"Add body attached to '{parent}' by a {joint_type} joint",
                                   lambda m: edits.add_body(m, parent, joint_type, name, point))
        return ("body", label)

    # ------------------------------------------------------------------ renaming
    def rename(self, key: tuple) -> tuple | None:
        old = key[-1]
        new, ok = QInputDialog.getText(self.parent, "Rename", f"New name for '{old}':", text=old)
        new = new.strip()
        if not ok or not new or new == old:
            return None
        renames = {
            "parameter": lambda m: edits.rename_parameter(m, old, new),
            "body": lambda m: edits.rename_body(m, old, new),
            "point": lambda m: edits.rename_point(m, key[1], old, new),
            "frame": lambda m: edits.rename_frame(m, key[1], old, new),
            "joint": lambda m: edits.rename_joint(m, old, new),
            "coordinate": lambda m: edits.rename_coordinate(m, key[1], old, new),
        }
        self.document.edit(f"Rename {key[0]} '{old}' to '{new}'", renames[key[0]])
        return key[:-1] + (new,)

    # ------------------------------------------------------------------ deleting
    def delete(self, key: tuple) -> tuple | None:
        model, kind, name = self.document.model, key[0], key[-1]
        plans = {  # what refers to the item, what deleting does to those, and the edit
            "parameter": lambda: (edits.parameter_uses(model, name), "each use is replaced by its value",
                                  lambda m: edits.delete_parameter(m, name)),
            "body": lambda: (edits.body_uses(model, name), "these joints are deleted with it",
                             lambda m: edits.delete_body(m, name)),
            "point": lambda: (edits.point_uses(model, key[1], name), "those frames keep its position as their origin",
                              lambda m: edits.delete_point(m, key[1], name)),
            "frame": lambda: ([], "", lambda m: edits.delete_frame(m, key[1], name)),
            "joint": lambda: (edits.joint_uses(model, name), "they are removed from the independent coordinates",
                              lambda m: edits.delete_joint(m, name)),
        }
        uses, consequence, change = plans[kind]()
        if uses and not self._confirm(kind, name, uses, consequence):
            return None
        self.document.edit(f"Delete {kind} '{name}'", change)
        groups = {"parameter": ("parameters",), "body": ("bodies",), "joint": ("joints",),
                  "point": ("points", key[1]), "frame": ("frames", key[1])}
        return groups[kind]

    def _confirm(self, kind: str, name: str, uses: list[str], consequence: str) -> bool:
        listed = "\n".join(f"  • {u}" for u in uses[:12]) + ("\n  …" if len(uses) > 12 else "")
        answer = QMessageBox.question(
            self.parent, f"Delete {kind} '{name}'?",
            f"{kind.capitalize()} '{name}' is used by:\n{listed}\n\nIf you delete it, {consequence}. Delete?")
        return answer == QMessageBox.StandardButton.Yes
