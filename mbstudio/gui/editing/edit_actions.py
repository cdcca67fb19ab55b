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

from ...model import GROUND, JOINT_TYPES, Model, ModelError
from ...model.document import FORCE_ELEMENTS, MEASURES
from . import edits
from .document import Document

ORIGIN = "(origin)"


class BodyPoint:
    """Two linked lists: a body of the model (or the ground), and one of its points or its origin."""

    def __init__(self, model: Model, label: str) -> None:
        self.model = model
        self.body = QComboBox()
        self.body.addItems(model.body_labels())
        self.body.setCurrentText(label)
        self.point = QComboBox()
        self.body.currentTextChanged.connect(self._points)
        self._points(self.body.currentText())

    def _points(self, label: str) -> None:
        self.point.clear()
        self.point.addItems([ORIGIN, *self.model.body(label).points])

    def choice(self) -> tuple[str, str | None]:
        """The body's label and the chosen point (None for the origin)."""
        point = self.point.currentText()
        return self.body.currentText(), None if point == ORIGIN else point


class _Form(QDialog):
    """A titled dialog with a form and OK / Cancel."""

    def __init__(self, title: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.form = QFormLayout(self)

    def add_buttons(self) -> None:
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.form.addRow(buttons)


def _joint_types(default: str = "revolute") -> QComboBox:
    box = QComboBox()
    box.addItems(list(JOINT_TYPES))
    box.setCurrentText(default)
    return box


class AddBodyDialog(_Form):
    """A new body: the body it hangs from, at which of that body's points, by which joint type."""

    def __init__(self, model: Model, parent_label: str, parent: QWidget | None = None) -> None:
        super().__init__("Add body", parent)
        self.attach = BodyPoint(model, parent_label)
        self.parent_body, self.point = self.attach.body, self.attach.point
        self.joint_type = _joint_types()
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. link")
        self.form.addRow("attached to body", self.parent_body)
        self.form.addRow("at point", self.point)
        self.form.addRow("by joint", self.joint_type)
        self.form.addRow("name", self.name)
        self.add_buttons()

    def choice(self) -> tuple[str, str, str, str | None]:
        label, point = self.attach.choice()
        return label, self.joint_type.currentText(), self.name.text().strip(), point


class AddJointDialog(_Form):
    """A joint between two bodies already in the mechanism (it closes a loop): each body and the point of it
    where the joint is, the joint type, and its z axis (in each body's axes)."""

    def __init__(self, model: Model, label: str, parent: QWidget | None = None) -> None:
        super().__init__("Add joint", parent)
        other = next((b.label for b in reversed(model.bodies) if b.label != label), GROUND)
        self.first, self.second = BodyPoint(model, label), BodyPoint(model, other)
        self.joint_type = _joint_types()
        self.axis = QLineEdit("0, 0, 1")
        self.axis.setToolTip("the joint's z axis as x, y, z (numbers or expressions), in each body's axes")
        for text, widget in (
            ("parent body", self.first.body),
            ("at point", self.first.point),
            ("child body", self.second.body),
            ("at point", self.second.point),
            ("joint type", self.joint_type),
            ("axis z", self.axis),
        ):
            self.form.addRow(text, widget)
        self.add_buttons()

    def choice(self) -> tuple[str, str | None, str, str | None, str, list]:
        """(parent, its point, child, its point, joint type, axis); a ModelError for an axis that is not
        three values."""
        return (
            *self.first.choice(),
            *self.second.choice(),
            self.joint_type.currentText(),
            edits.parse_vector(self.axis.text(), "axis z"),
        )


class AddCouplingDialog(_Form):
    """A coordinate driven by another: follower = offset + ratio · leader (a mimic joint, a gear pair, a rack
    and pinion); the ratio and offset may be expressions in the parameters."""

    def __init__(self, model: Model, parent: QWidget | None = None) -> None:
        super().__init__("Add coupling", parent)
        axial = model.axial_coordinates()
        self.follower, self.leader = QComboBox(), QComboBox()
        self.follower.addItems(axial)
        self.leader.addItems(axial)
        self.leader.setCurrentIndex(min(1, len(axial) - 1))
        self.ratio, self.offset = QLineEdit("1"), QLineEdit("0")
        self.ratio.setToolTip("follower per unit of leader: −1 for a mirrored mimic joint, −z1/z2 for a gear pair")
        for text, widget in (
            ("follower", self.follower),
            ("leader", self.leader),
            ("ratio", self.ratio),
            ("offset", self.offset),
        ):
            self.form.addRow(text, widget)
        self.add_buttons()

    def choice(self) -> tuple[str, str, float | str, float | str]:
        return (
            self.follower.currentText(),
            self.leader.currentText(),
            edits.parse_expression(self.ratio.text() or "1"),
            edits.parse_expression(self.offset.text() or "0"),
        )


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

    def add_frame(self, key: tuple) -> tuple:
        label = GROUND if key[0] == "ground" else key[1]
        name = self.document.edit(f"Add frame to body '{label}'", lambda m: edits.add_frame(m, label))
        return ("frame", label, name)

    def add_body(self, key: tuple) -> tuple | None:
        parent_label = key[1] if key[0] == "body" else GROUND
        dialog = AddBodyDialog(self.document.model, parent_label, self.parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        parent, joint_type, name, point = dialog.choice()
        label = self.document.edit(
            f"Add body attached to '{parent}' by a {joint_type} joint",
            lambda m: edits.add_body(m, parent, joint_type, name, point),
        )
        return ("body", label)

    def add_joint(self, key: tuple) -> tuple | None:
        dialog = AddJointDialog(self.document.model, key[1] if key[0] == "body" else GROUND, self.parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        parent, parent_point, child, child_point, joint_type, axis = dialog.choice()
        name = self.document.edit(
            f"Add {joint_type} joint between body '{parent}' and body '{child}'",
            lambda m: edits.add_joint(m, parent, child, joint_type, parent_point, child_point, axis),
        )
        return ("joint", name)

    def add_force(self, key: tuple) -> tuple | None:
        kinds = list(FORCE_ELEMENTS)
        kind, ok = QInputDialog.getItem(self.parent, "Add force element", "Type:", kinds, 0, False)
        if not ok:
            return None
        name = self.document.edit(f"Add force element ({kind.replace('_', ' ')})", lambda m: edits.add_force(m, kind))
        return ("force", name)

    def make_compliant(self, key: tuple | None) -> tuple | None:
        """Edit › Make Compliant: the selected joint becomes a free joint on a bushing at its nominal position
        (edits.make_compliant); the bushing is selected, for its rates to be set."""
        if key is None or key[0] != "joint":
            raise ModelError("Make Compliant", "needs a joint selected", None if key is None else key[0],
                             "a joint chosen in the model tree")  # fmt: skip
        joint = key[1]
        name = self.document.edit(f"Make joint '{joint}' compliant", lambda m: edits.make_compliant(m, joint))
        return ("force", name)

    def add_measure(self, key: tuple, kind: str | None = None) -> tuple | None:
        """Measures > Add measure…: a type, then a measure placed on the first points, for the person to edit."""
        if kind is None:
            kind, ok = QInputDialog.getItem(self.parent, "Add measure", "Type:", list(MEASURES), 0, False)
            if not ok:
                return None
        name = self.document.edit(f"Add {kind} measure", lambda m: edits.add_measure(m, kind))
        return ("measure", name)

    def add_coupling(self, key: tuple) -> tuple | None:
        dialog = AddCouplingDialog(self.document.model, self.parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        follower, leader, ratio, offset = dialog.choice()
        name = self.document.edit(
            f"Add coupling {follower} = {ratio} · {leader} + {offset}",
            lambda m: edits.add_coupling(m, follower, leader, ratio, offset),
        )
        return ("coupling", name)

    def add_trajectory(self, key: tuple) -> tuple:
        name = self.document.edit("Add trajectory of the independent coordinates", edits.add_trajectory)
        return ("trajectory", name)

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
            "force": lambda m: edits.rename_force(m, old, new),
            "measure": lambda m: edits.rename_measure(m, old, new),
            "trajectory": lambda m: edits.rename_trajectory(m, old, new),
            "coupling": lambda m: edits.rename_coupling(m, old, new),
        }
        self.document.edit(f"Rename {key[0]} '{old}' to '{new}'", renames[key[0]])
        return key[:-1] + (new,)

    # ------------------------------------------------------------------ deleting
    def delete(self, key: tuple) -> tuple | None:
        model, kind, name = self.document.model, key[0], key[-1]
        plans = {  # what refers to the item, what deleting does to those, and the edit
            "parameter": lambda: (
                edits.parameter_uses(model, name),
                "each use is replaced by its value",
                lambda m: edits.delete_parameter(m, name),
            ),
            "body": lambda: (
                edits.body_uses(model, name),
                "these joints, force elements and measures are deleted with it and "
                "the references to the joints' coordinates removed",
                lambda m: edits.delete_body(m, name),
            ),
            "point": lambda: (
                edits.point_uses(model, key[1], name),
                "those frames keep its position as their origin and those force elements and measures are deleted",
                lambda m: edits.delete_point(m, key[1], name),
            ),
            "frame": lambda: ([], "", lambda m: edits.delete_frame(m, key[1], name)),
            "joint": lambda: (
                edits.joint_uses(model, name),
                "these references to its coordinates are removed (force elements and couplings on them deleted)",
                lambda m: edits.delete_joint(m, name),
            ),
            "force": lambda: (
                edits.force_uses(model, name),
                "these measures are deleted with it",
                lambda m: edits.delete_force(m, name),
            ),
            "measure": lambda: ([], "", lambda m: edits.delete_measure(m, name)),
            "trajectory": lambda: ([], "", lambda m: edits.delete_trajectory(m, name)),
            "coupling": lambda: ([], "", lambda m: edits.delete_coupling(m, name)),
        }
        uses, consequence, change = plans[kind]()
        if uses and not self._confirm(kind, name, uses, consequence):
            return None
        self.document.edit(f"Delete {kind} '{name}'", change)
        groups = {
            "parameter": ("parameters",),
            "body": ("bodies",),
            "joint": ("joints",),
            "point": ("points", key[1]),
            "frame": ("frames", key[1]),
            "force": ("forces",),
            "measure": ("measures",),
            "trajectory": ("trajectories",),
            "coupling": ("couplings",),
        }
        return groups[kind]

    def _confirm(self, kind: str, name: str, uses: list[str], consequence: str) -> bool:
        listed = "\n".join(f"  • {u}" for u in uses[:12]) + ("\n  …" if len(uses) > 12 else "")
        answer = QMessageBox.question(
            self.parent,
            f"Delete {kind} '{name}'?",
            f"{kind.capitalize()} '{name}' is used by:\n{listed}\n\nIf you delete it, {consequence}. Delete?",
        )
        return answer == QMessageBox.StandardButton.Yes
