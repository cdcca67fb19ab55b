"""Edit › Preferences…: the units the window shows and takes (angles, lengths, and the suspension measures'
own pair), with the derived units they make. The choice is a DisplayUnits (io/display_units.py), which the
sliders, tree, properties, plots, cursors and exports apply; the document itself stays in SI."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..io.display_units import ANGLES, LENGTHS, DisplayUnits

SAME = "as above"
# the derived units shown under the choice: a label and the SI unit it is made from
DERIVED = (
    ("angular velocity", "rad/s"),
    ("velocity", "m/s"),
    ("acceleration", "m/s^2"),
    ("torque", "N m"),
    ("stiffness", "N/m"),
    ("inertia", "kg m^2"),
)


class PreferencesDialog(QDialog):
    def __init__(self, units: DisplayUnits, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.angle = _combo(ANGLES, units.angle)
        self.length = _combo(LENGTHS, units.length)
        self.suspension = _combo([f"{a} and {m}" for a in ANGLES for m in LENGTHS] + [SAME], SAME)
        pair = f"{units.suspension_angle} and {units.suspension_length}"
        if (units.suspension_angle, units.suspension_length) != (units.angle, units.length):
            self.suspension.setCurrentText(pair)
        self.derived = QLabel()
        self.derived.setWordWrap(True)
        for combo in (self.angle, self.length, self.suspension):
            combo.currentIndexChanged.connect(self._show_derived)
        general = QGroupBox("Coordinates, results, plots and exports")
        form = QFormLayout(general)
        form.addRow("Angles", self.angle)
        form.addRow("Lengths", self.length)
        form.addRow(self.derived)
        special = QGroupBox("Suspension measures (camber, toe, caster, kingpin inclination, scrub radius, travel)")
        QFormLayout(special).addRow("Shown in", self.suspension)
        page = QWidget()
        column = QVBoxLayout(page)
        column.addWidget(general)
        column.addWidget(special)
        column.addWidget(QLabel("Files stay in SI; an export names the unit of every column."))
        column.addStretch(1)
        tabs = QTabWidget()
        tabs.addTab(page, "Units")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(tabs)
        layout.addWidget(buttons)
        self._show_derived()

    def units(self) -> DisplayUnits:
        """The units chosen."""
        angle, length = self.angle.currentText(), self.length.currentText()
        pair = self.suspension.currentText()
        suspension = (angle, length) if pair == SAME else tuple(pair.split(" and "))
        return DisplayUnits(angle, length, *suspension)

    def _show_derived(self) -> None:
        units = self.units()
        shown = ", ".join(f"{label} in {units.unit(si)[0]}" for label, si in DERIVED)
        self.derived.setText(f"and so: {shown}")


def _combo(items, current: str) -> QComboBox:
    combo = QComboBox()
    combo.addItems(list(items))
    combo.setCurrentText(current)
    return combo
