"""Edit › Preferences…: the units the window shows and takes (angles, lengths, and the suspension measures'
own pair), with the derived units they make. The choice is a DisplayUnits (io/display_units.py), which the
sliders, tree, properties, plots, cursors and exports apply; the document itself stays in SI. Its Engine cache
page says what the cache of compiled engines holds and removes the engines unused lately
(numerics/cache_upkeep.py), on a thread of its own: the window goes on meanwhile."""

from __future__ import annotations

import threading

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
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
        self.cache = CachePage()
        tabs.addTab(self.cache, "Engine cache")
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


class CachePage(QWidget):
    """What the engine cache holds, and buttons that remove the engines unused for some days, or all: each is
    built again when a model needs it. The cache is read and pruned on a thread, polled by a timer."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = QLabel("reading the engine cache…")
        self.status.setWordWrap(True)
        self.days = QSpinBox()
        self.days.setRange(0, 3650)
        self.days.setValue(30)
        self.days.setSuffix(" days")
        self.unused = QPushButton("Remove the engines unused for")
        self.clear = QPushButton("Remove every engine")
        self.unused.clicked.connect(lambda: self._start({"unused_days": float(self.days.value())}))
        self.clear.clicked.connect(lambda: self._start({"everything": True}))
        column = QVBoxLayout(self)
        column.addWidget(self.status)
        for widgets in ((self.unused, self.days), (self.clear,)):
            row = QHBoxLayout()
            for widget in widgets:
                row.addWidget(widget)
            row.addStretch(1)
            column.addLayout(row)
        column.addWidget(QLabel("A model's engine is built again, in seconds, the next time it is needed."))
        column.addStretch(1)
        self.timer = QTimer(self)
        self.timer.setInterval(100)
        self.timer.timeout.connect(self.poll)
        self.said: str | None = None
        self._start(None)

    def _start(self, removal: dict | None) -> None:
        """Reads the cache (and first removes what `removal` asks, prune's arguments) on a thread."""
        self.unused.setEnabled(False)
        self.clear.setEnabled(False)
        if removal is not None:
            self.status.setText("removing…")
        self.said = None
        threading.Thread(target=self._read, args=(removal,), daemon=True).start()
        self.timer.start()

    def _read(self, removal: dict | None) -> None:
        from ..numerics.cache_upkeep import prune, usage
        from ..numerics.native_cache import CacheRefused

        try:
            removed = [prune(**removal).text()] if removal is not None else []
            self.said = "\n".join([*removed, usage().text()])
        except (OSError, ValueError, CacheRefused) as exc:
            self.said = f"the engine cache could not be read: {exc}"

    def poll(self) -> None:
        if self.said is None:
            return
        self.timer.stop()
        self.status.setText(self.said)
        self.unused.setEnabled(True)
        self.clear.setEnabled(True)
