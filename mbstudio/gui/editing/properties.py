"""The properties panel: typed fields for the selected item, with units and the document's own error
messages shown inline. An edit is validated on a copy first (Document.edit); on error the field turns
red, the message says why, and the document stays as it was. Plain numbers are shown and typed in the display
units (Edit › Preferences… › Units); a number typed with a unit ('25 mm') keeps it, in the file too."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ...io.display_units import SI, DisplayUnits, typed_value, value_text
from ...model import ModelError
from ...model.validation import float_value
from .document import Document
from .edits import parse_vector
from .fields import Field, fields_for

ERROR_BORDER = "{ border: 2px solid #c03030; }"


def shown_text(field: Field, units: DisplayUnits = SI) -> str:
    """A field's value as the form shows it: numbers in the display unit of its SI unit (a parameter's in its
    own), numbers written with a unit and expressions as written."""
    value = field.value
    if field.own_unit or field.kind in ("text", "choice", "bool") or value is None or isinstance(value, bool):
        return "" if value is None else str(value)
    if isinstance(value, list):
        return ", ".join(value_text(v, field.unit, units) for v in value)
    return value_text(value, field.unit, units)


def parse(field: Field, text: str, units: DisplayUnits = SI) -> object:
    """The typed value of `text` for this field, or a ModelError naming the field: a plain number in the display
    unit (in a parameter's own), a number with its unit kept ('25 mm'), an expression (SI)."""
    text = text.strip()
    if field.kind in ("text", "choice"):
        return text
    if field.kind == "optional" and not text:
        return None
    if field.own_unit:
        try:
            return float(text)
        except ValueError:
            raise ModelError(field.name, "must be a number", text, f"a number in {field.unit or 'SI'}") from None
    if field.kind in ("number", "optional"):
        value = typed_value(text, field.unit, units, field.name)
        if isinstance(value, str):
            raise ModelError(field.name, "must be a number", text, "a number such as 0.25, or 25 mm") from None
        return value
    if field.kind == "optional_vector" and not text:
        return None
    if field.kind == "origin" and "," not in text:
        return text  # a point name
    if field.kind in ("vector", "origin", "optional_vector"):
        return parse_vector(text, field.name, lambda part: typed_value(part, field.unit, units, field.name))
    return typed_value(text, field.unit, units, field.name)


class PropertyEditor(QWidget):
    """`renamed(key)` when an edit renamed the shown item, which now has this key."""

    renamed = Signal(tuple)

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.key: tuple = ("model",)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b02020;")
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.error)
        self.editors: dict[str, QWidget] = {}
        self.fields: list[Field] = []
        self.units = SI  # Edit › Preferences… › Units

    def set_units(self, units: DisplayUnits) -> None:
        """Show and take plain numbers in these units."""
        self.units = units
        self.refresh()

    def show_item(self, key: tuple) -> None:
        """Fill the form for `key` (the previous form is dropped: safe even inside one of its signals)."""
        self.key = key
        title, fields = fields_for(self.document.model, key)
        self.title.setText(f"<b>{title}</b>")
        self.error.clear()
        form_widget = QWidget()
        form = QFormLayout(form_widget)
        self.editors, self.fields = {}, fields
        for field in fields:
            form.addRow(field.name, self._row(field))
        if not fields:
            form.addRow(QLabel("Select an item of the model tree to edit it."))
        old = self.scroll.takeWidget()
        self.scroll.setWidget(form_widget)
        if old is not None:
            old.deleteLater()

    def refresh(self) -> None:
        """Show the current document's values (after undo/redo or another edit); an item that no longer
        exists falls back to the model."""
        try:
            self.show_item(self.key)
        except (KeyError, StopIteration, ValueError):
            self.show_item(("model",))

    def _row(self, field: Field) -> QWidget:
        if field.kind == "choice":
            editor = QComboBox()
            editor.addItems(list(field.choices))
            editor.setCurrentText(str(field.value))
            editor.currentTextChanged.connect(lambda text, f=field: self.commit(f, text))
        elif field.kind == "bool":
            editor = QCheckBox()
            editor.setChecked(bool(field.value))
            editor.toggled.connect(lambda on, f=field: self._apply(f, on))
        elif field.kind == "origin":
            editor = self._origin_editor(field)
        else:
            editor = QLineEdit(shown_text(field, self.units))
            editor.setCursorPosition(0)  # long texts show their beginning
            editor.setPlaceholderText(self._hint(field))
            editor.setToolTip(self._hint(field))
            editor.editingFinished.connect(lambda f=field, e=editor: self.commit(f, e.text()))
        self.editors[field.name] = editor
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(editor, 1)
        unit = QLabel(self._unit_text(field))
        unit.setMinimumWidth(40)  # fields line up whatever their unit
        layout.addWidget(unit)
        return row

    def _origin_editor(self, field: Field) -> QComboBox:
        """Pick one of the body's points, or type coordinates: an editable list of the point names."""
        editor = QComboBox()
        editor.setEditable(True)
        editor.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)  # typed coordinates are not points
        editor.addItems(list(field.choices))
        editor.setCurrentText(shown_text(field, self.units))
        editor.lineEdit().setCursorPosition(0)
        points = ", ".join(field.choices) or "none yet"
        hint = f"a point of the body ({points}), or x, y, z as {self._hint(field)}"
        editor.lineEdit().setPlaceholderText(hint)
        editor.setToolTip(hint)
        editor.activated.connect(lambda i, f=field, e=editor: self.commit(f, e.itemText(i)))
        editor.lineEdit().editingFinished.connect(lambda f=field, e=editor: self.commit(f, e.currentText()))
        return editor

    def _hint(self, field: Field) -> str:
        names = ", ".join(p.name for p in self.document.model.parameters) or "none yet"
        if field.kind in ("expr", "vector", "origin", "optional_vector"):
            unit = self.units.unit(field.unit)[0]
            numbers = f"numbers in {unit} or with their unit (25 mm, 30 deg)" if unit else "numbers"
            return f"{numbers}, or expressions in the parameters ({names}), in SI"
        return ""

    def _unit_text(self, field: Field) -> str:
        """The unit plain numbers are in, and the value of an expression, so a typed formula shows what it
        means."""
        unit, size = (field.unit, 1.0) if field.own_unit else self.units.unit(field.unit)
        if field.kind == "expr" and isinstance(field.value, str):
            try:
                value = float_value(field.value, self.document.model.parameter_values(), field.name)
                return f"= {value / size:.6g} {unit}".rstrip()
            except ModelError:
                return unit
        return unit

    def commit(self, field: Field, text: str) -> bool:
        """Parse and apply typed text; returns whether the document accepted it."""
        if text.strip() == shown_text(field, self.units).strip() or not self._shown(field):
            return True  # editingFinished also fires on focus loss with nothing changed, or from a replaced form
        try:
            value = parse(field, text, self.units)
        except ModelError as exc:
            self._fail(field, exc)
            return False
        return self._apply(field, value)

    def _apply(self, field: Field, value: object) -> bool:
        key = self.key  # the edit rebuilds the tree, which may select another item
        title, _ = fields_for(self.document.model, key)
        try:
            shown = shown_text(replace(field, value=value), self.units)
            self.document.edit(f"Set {field.name} of {title} to {shown}", lambda m: field.apply(m, value))
        except ModelError as exc:
            self._fail(field, exc)
            return False
        if field.renames:
            self.show_item(key[:-1] + (value,))
            self.renamed.emit(self.key)
        elif self._shown(field):
            self.refresh()  # nobody listening to the document rebuilt the form: show the new values
        return True

    def _shown(self, field: Field) -> bool:
        """Whether `field` belongs to the form on screen (not to one an edit has replaced)."""
        return any(f is field for f in self.fields)

    def _fail(self, field: Field, exc: ModelError) -> None:
        editor = self.editors.get(field.name)
        if isinstance(editor, QLineEdit | QComboBox):
            editor.setStyleSheet(f"{type(editor).__name__} {ERROR_BORDER}")
        self.error.setText(f"Not applied — {exc}")
