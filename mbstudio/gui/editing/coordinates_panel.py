"""A slider per independent coordinate, each with a field to type the value (in its unit, or in degrees with
'°' or 'deg'), and the choice of which coordinates drive the mechanism. The panel only reports wanted values
and choices; the window assembles and edits the document."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from ...io.display_units import SI, DisplayUnits
from ...kinematics import Mechanism
from ...model import JOINT_MOTIONS
from ...model.document import turns
from ...numerics import rodrigues

STEPS = 1000  # slider resolution over the coordinate's range
MIN_SLIDER = 120  # pixels: a slider narrower than this cannot be dragged with any precision
FILTER_FROM = 9  # coordinates from which the panel has a filter box (a humanoid's 40 and more scroll far)


def coordinate_range(mech: Mechanism, name: str) -> tuple[float, float, str]:
    """The coordinate's min/max from the document, else ±180° for rotations and ±(mechanism size) for
    translations; and its unit."""
    joint = next(j for j in mech.model.joints if name in [c.name for c in j.coordinates])
    k = [c.name for c in joint.coordinates].index(name)
    coord = joint.coordinates[k]
    motion = JOINT_MOTIONS[joint.type][k]
    rotation = turns(motion)
    span = (rodrigues.LIMIT if motion[0] == "B" else math.pi) if rotation else mech.length_scale
    low = coord.min if coord.min is not None else (coord.initial or 0.0) - span
    high = coord.max if coord.max is not None else (coord.initial or 0.0) + span
    return low, high, "rad" if rotation else "m"


SYMBOLS = {"deg": "°"}  # how a slider writes a display unit


def typed_value(text: str, unit: str, scale: float = 1.0) -> float | None:
    """A typed coordinate value, in SI: '30°', '30 deg', '0.5 rad' (rotations), '25 mm', '0.025 m'
    (translations), or a plain number in the display unit of size `scale`; None when the text is none of
    these."""
    text = text.strip().replace(",", ".")
    scales = {"rad": {"°": math.pi / 180, "deg": math.pi / 180, "rad": 1.0}, "m": {"mm": 1e-3, "m": 1.0}}[unit]
    scale = next((f for suffix, f in scales.items() if text.endswith(suffix)), scale)
    number = next((text[: -len(s)] for s in scales if text.endswith(s)), text).strip()
    try:
        value = float(number) * scale
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class NameLabel(QLabel):
    """A coordinate's whole name, wrapped after '_', '.' or '-' when the dock is narrower than it (a humanoid's
    'leg_left_..._joint' names differ in their middle, which eliding would hide); the name in its tooltip too."""

    BREAKS = "_.-"

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full = text
        self.setToolTip(text)
        self.setWordWrap(True)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText("".join(c + "\u200b" if c in self.BREAKS else c for c in text))  # zero-width break points

    def name(self) -> str:
        """The name as shown, without its break points."""
        return self.text().replace("\u200b", "")


class CoordinateSlider(QWidget):
    """`typed(value)` when a value is typed into the field and Enter pressed."""

    typed = Signal(float)

    def __init__(
        self,
        name: str,
        low: float,
        high: float,
        unit: str,
        parent: QWidget | None = None,
        angle: bool = True,
        title: str | None = None,
    ) -> None:
        """`angle` False: a ball joint's rotation parameter, shown in rad without degrees (it is no angle);
        `title`: the name shown, when not `name`."""
        super().__init__(parent)
        self.name, self.low, self.high, self.unit, self.angle = name, low, high, unit, angle
        self._value: float | None = None  # the shown value, exact (the slider holds it to 1/STEPS of its range)
        self.display = (unit, 1.0)  # the unit shown and its size in SI
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, STEPS)
        self.entry = QLineEdit()
        self.entry.setMaximumWidth(90)
        self.entry.setToolTip(
            "a rotation parameter, 4 tan(φ/4) along the turning axis: type a number"
            if not angle
            else f"type a value in {unit}" + (", or in degrees: 30°" if unit == "rad" else ", or 25 mm")
        )
        self.entry.editingFinished.connect(self._typed)
        self.label = QLabel()  # the unit, and the angle in degrees
        self.title = NameLabel(title or name)
        # the name and unit on one line, the slider and field under them: a long joint name ('shoulder_lift_joint')
        # never takes the slider's width, which keeps at least MIN_SLIDER pixels in the narrowest dock
        self.slider.setMinimumWidth(MIN_SLIDER)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 2, 0, 2)
        grid.setVerticalSpacing(0)
        grid.addWidget(self.title, 0, 0)
        grid.addWidget(self.label, 0, 1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.slider, 1, 0)
        grid.addWidget(self.entry, 1, 1)
        grid.setColumnStretch(0, 1)

    def _typed(self) -> None:
        value = typed_value(self.entry.text(), self.unit, self.display[1])
        self.entry.setStyleSheet("" if value is not None else "color: #b02020;")
        if value is not None and abs(value - self.value()) > 0:
            self.typed.emit(value)

    def value(self) -> float:
        return self._value if self._value is not None else self.slider_value()

    def slider_value(self) -> float:
        return self.low + (self.high - self.low) * self.slider.value() / STEPS

    def set_value(self, value: float) -> None:
        """Show `value` without emitting a change (a typed value beyond the slider's range keeps its end)."""
        self._value = value
        self.slider.blockSignals(True)
        self.slider.setValue(round(min(max((value - self.low) / (self.high - self.low), 0), 1) * STEPS))
        self.slider.blockSignals(False)
        symbol, scale = self.display
        self.entry.setText(f"{value / scale:.6g}")
        self.entry.setStyleSheet("")
        degrees = self.unit == "rad" and symbol == "rad" and self.angle
        self.label.setText(f"rad ({math.degrees(value):.1f}°)" if degrees else symbol if self.angle else "ρ, rad")

    def set_display(self, units: DisplayUnits) -> None:
        """Show the value in the display units (degrees, millimetres, or SI)."""
        symbol, size = units.unit(self.unit) if self.angle else (self.unit, 1.0)
        self.display = (SYMBOLS.get(symbol, symbol), size)
        if self._value is not None:
            self.set_value(self._value)


class CoordinatesPanel(QWidget):
    """`moved(name, value, drag)`: the user asks for coordinate `name` at `value`; `drag` is the same number
    for all steps of one mouse drag (so they merge into one undo step) and new for any other change."""

    moved = Signal(str, float, int)
    platform_moved = Signal(str, float, int)  # a parallel machine's platform along a task coordinate (x, y, z)
    choose = Signal()  # the person asks to choose the driving coordinates

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        rows = QWidget()
        layout = QVBoxLayout(rows)
        self.list = QVBoxLayout()
        self.list.setSpacing(2)
        layout.addLayout(self.list)
        self.choose_button = QPushButton("Driving coordinates…")
        self.choose_button.setToolTip("choose which coordinates the sliders (and a simulation's state) use")
        self.choose_button.clicked.connect(self.choose.emit)
        layout.addWidget(self.choose_button)
        layout.addStretch(1)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter coordinates…")
        self.filter.setToolTip("show only the coordinates whose name contains this text")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        self.filter.hide()
        # the sliders scroll: a vehicle's 11 or a humanoid's 44 would otherwise hold the dock (and the result
        # docks under it) to their whole height
        self.rows = rows
        scroll = QScrollArea()
        scroll.setWidget(rows)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.filter)
        outer.addWidget(scroll)
        self.sliders: dict[str, CoordinateSlider] = {}
        self.platform: dict[str, CoordinateSlider] = {}  # task-space sliders of a parallel machine's platform
        self.units = SI  # Edit › Preferences… › Units
        self._drag = 0

    def build(
        self, mech: Mechanism, values: dict[str, float], platform: list[tuple[str, float, float, float]] | None = None
    ) -> None:
        """A slider per independent coordinate; `platform`: (task coordinate, low, high, value) of a parallel
        machine's platform, which gets sliders of its own under them (task space)."""
        while self.list.count():
            old = self.list.takeAt(0).widget()
            old.hide()
            old.deleteLater()
        self.sliders, self.platform = {}, {}
        balls = {mech.coordinates[k] for k in mech.tree.ball_coordinates}
        for name in mech.independent:
            row = self._slider(name, *coordinate_range(mech, name), self.moved, angle=name not in balls)
            row.set_value(values[name])
            self.list.addWidget(row)
            self.sliders[name] = row
        if not self.sliders:
            self.list.addWidget(QLabel("This mechanism has no independent coordinates."))
        if platform:
            self.list.addWidget(QLabel("<b>Platform</b> (task space: its limbs follow)"))
        for name, low, high, value in platform or []:
            row = self._slider(name, low, high, "m", self.platform_moved, title=f"platform {name}")
            row.set_value(value)
            row.setToolTip(f"the platform's {name} in the ground frame; every limb's inverse kinematics follows")
            self.list.addWidget(row)
            self.platform[name] = row
        self.filter.setVisible(len(self.sliders) >= FILTER_FROM)
        self._apply_filter()

    def _apply_filter(self) -> None:
        """Only the coordinates whose name holds the filter's text (any case); all when it is empty or hidden."""
        wanted = self.filter.text().strip().lower() if self.filter.isVisibleTo(self) else ""
        for name, row in self.sliders.items():
            row.setVisible(wanted in name.lower())

    def _slider(
        self, name: str, low: float, high: float, unit: str, signal, angle: bool = True, title: str | None = None
    ) -> CoordinateSlider:
        row = CoordinateSlider(name, low, high, unit, angle=angle, title=title)
        row.set_display(self.units)
        row.slider.sliderPressed.connect(self._new_drag)
        row.slider.valueChanged.connect(lambda _, r=row: self._changed(r, signal))
        row.typed.connect(lambda value, r=row: self._typed(r, value, signal))
        return row

    def _new_drag(self) -> None:
        self._drag += 1

    def _changed(self, row: CoordinateSlider, signal) -> None:
        if not row.slider.isSliderDown():
            self._drag += 1
        signal.emit(row.name, row.slider_value(), self._drag)

    def _typed(self, row: CoordinateSlider, value: float, signal) -> None:
        self._drag += 1
        signal.emit(row.name, value, self._drag)

    def set_units(self, units: DisplayUnits) -> None:
        self.units = units
        for row in [*self.sliders.values(), *self.platform.values()]:
            row.set_display(units)

    def set_values(self, values: dict[str, float], platform: dict[str, float] | None = None) -> None:
        """The coordinates' values, and the platform's task coordinates when it has sliders."""
        for name, row in self.sliders.items():
            row.set_value(values[name])
        for name, value in (platform or {}).items():
            if name in self.platform:
                self.platform[name].set_value(value)


class DrivingDialog(QDialog):
    """Check the coordinates that drive the mechanism (as many as it has degrees of freedom), or 'auto'; and
    those its actuators drive in inverse dynamics (none checked: the driving ones)."""

    def __init__(self, mech: Mechanism, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Driving and actuated coordinates")
        self.dof = mech.dof
        self.list = _checklist(mech.coordinates, mech.independent)
        self.actuated = _checklist(mech.coordinates, mech.model.actuated)
        self.auto = QPushButton("Automatic (best conditioned)")
        self.auto.clicked.connect(lambda: self.done(2))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Driving: check {self.dof} coordinate(s), one per degree of freedom."))
        layout.addWidget(self.list)
        layout.addWidget(self.auto)
        layout.addWidget(QLabel(f"Actuated (inverse dynamics): at least {self.dof}; none checked: the driving ones."))
        layout.addWidget(self.actuated)
        layout.addWidget(buttons)

    def chosen(self) -> list[str]:
        return _checked(self.list)

    def chosen_actuated(self) -> list[str]:
        return _checked(self.actuated)


def _checklist(names: list[str], checked: list[str]) -> QListWidget:
    widget = QListWidget()
    for name in names:
        item = QListWidgetItem(name)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if name in checked else Qt.CheckState.Unchecked)
        widget.addItem(item)
    return widget


def _checked(widget: QListWidget) -> list[str]:
    items = (widget.item(i) for i in range(widget.count()))
    return [item.text() for item in items if item.checkState() == Qt.CheckState.Checked]
