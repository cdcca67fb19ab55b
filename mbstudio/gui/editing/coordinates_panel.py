"""A slider per independent coordinate. The panel only reports wanted values; the window assembles."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QSlider, QWidget

from ...kinematics import Mechanism
from ...model import JOINT_MOTIONS

STEPS = 1000  # slider resolution over the coordinate's range


def coordinate_range(mech: Mechanism, name: str) -> tuple[float, float, str]:
    """The coordinate's min/max from the document, else ±180° for rotations and ±(mechanism size) for
    translations; and its unit."""
    joint = next(j for j in mech.model.joints if name in [c.name for c in j.coordinates])
    k = [c.name for c in joint.coordinates].index(name)
    coord = joint.coordinates[k]
    rotation = JOINT_MOTIONS[joint.type][k].startswith("R")
    span = math.pi if rotation else mech.length_scale
    low = coord.min if coord.min is not None else (coord.initial or 0.0) - span
    high = coord.max if coord.max is not None else (coord.initial or 0.0) + span
    return low, high, "rad" if rotation else "m"


class CoordinateSlider(QWidget):
    def __init__(self, name: str, low: float, high: float, unit: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name, self.low, self.high, self.unit = name, low, high, unit
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, STEPS)
        self.label = QLabel()
        self.label.setMinimumWidth(110)
        self.label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.label)

    def value(self) -> float:
        return self.low + (self.high - self.low) * self.slider.value() / STEPS

    def set_value(self, value: float) -> None:
        """Show `value` without emitting a change."""
        self.slider.blockSignals(True)
        self.slider.setValue(round((value - self.low) / (self.high - self.low) * STEPS))
        self.slider.blockSignals(False)
        self._show(value)

    def _show(self, value: float) -> None:
        degrees = f" ({math.degrees(value):.1f}°)" if self.unit == "rad" else ""
        self.label.setText(f"{value:.4g} {self.unit}{degrees}")


class CoordinatesPanel(QWidget):
    """`moved(name, value, drag)`: the user asks for coordinate `name` at `value`; `drag` is the same number
    for all steps of one mouse drag (so they merge into one undo step) and new for any other change."""

    moved = Signal(str, float, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.sliders: dict[str, CoordinateSlider] = {}
        self._drag = 0

    def build(self, mech: Mechanism, values: dict[str, float]) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.sliders = {}
        for name in mech.independent:
            row = CoordinateSlider(name, *coordinate_range(mech, name))
            row.set_value(values[name])
            row.slider.sliderPressed.connect(self._new_drag)
            row.slider.valueChanged.connect(lambda _, r=row: self._changed(r))
            self.form.addRow(name, row)
            self.sliders[name] = row
        if not self.sliders:
            self.form.addRow(QLabel("This mechanism has no independent coordinates."))

    def _new_drag(self) -> None:
        self._drag += 1

    def _changed(self, row: CoordinateSlider) -> None:
        if not row.slider.isSliderDown():
            self._drag += 1
        self.moved.emit(row.name, row.value(), self._drag)

    def set_values(self, values: dict[str, float]) -> None:
        for name, row in self.sliders.items():
            row.set_value(values[name])
