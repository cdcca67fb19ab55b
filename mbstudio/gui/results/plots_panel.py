"""Time histories of a kinematics or simulation job, with a time cursor linked to the 3D view and playback
controls (play/pause, step, speed, loop, time slider), and export of every series as CSV or JSON. The
panel emits the coordinates of the shown frame; the window draws them. Playback runs on a QTimer, so the
GUI thread never waits."""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QSlider,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...io.time_series import time_series_text
from ...jobs import JobResult
from .panel_parts import export_path, menu_button, stale_banner, write_export
from .ridge_panel import COLORS

SERIES_WIDTH = 170  # px: the list of series beside the plot
FRAME_MS = 33  # about 30 frames per second
SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)


class PlotsPanel(QWidget):
    """`frame(q)`: the coordinates (n,) at the cursor's time, for the 3D view."""

    frame = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.index = 0
        self.series = QListWidget()
        self.series.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.series.itemSelectionChanged.connect(self._replot)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "t [s]")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.addLegend(brush=pg.mkBrush(255, 255, 255, 220), labelTextColor="k").setZValue(10)  # above curves
        self.cursor = pg.InfiniteLine(0.0, angle=90, movable=True, pen=pg.mkPen("#b02020", width=2))
        self.cursor.sigPositionChanged.connect(lambda: self.seek_time(self.cursor.value()))
        # the Export button sits under the series list: in the controls row it would widen the docks' minimum
        chooser = QWidget()
        column = QVBoxLayout(chooser)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.series, 1)
        column.addWidget(
            menu_button("Export", [(f"{fmt.upper()}…", lambda f=fmt: self.export(f)) for fmt in ("csv", "json")])
        )
        split = QSplitter()
        split.addWidget(chooser)
        split.addWidget(self.plot)
        split.setStretchFactor(1, 1)
        split.setSizes([SERIES_WIDTH, 4 * SERIES_WIDTH])  # the plot gets the room; the names fit in the list
        self.timer = QTimer(self)
        self.timer.setInterval(FRAME_MS)
        self.timer.timeout.connect(self._tick)
        self._clock = 0.0
        self._t = 0.0  # playback time: continuous, so that speeds below one sample per frame still advance
        self.stale = stale_banner()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.stale)
        layout.addWidget(split, 1)
        layout.addLayout(self._controls())

    def _controls(self) -> QHBoxLayout:
        self.play_button = _button("Play", self.toggle_play, checkable=True)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.valueChanged.connect(self.seek)
        self.speed = QComboBox()
        self.speed.addItems([f"{s:g}×" for s in SPEEDS])
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.loop = QCheckBox("Loop")
        self.loop.setChecked(True)
        self.time_label = QLabel("no motion yet")
        row = QHBoxLayout()
        for widget in (
            _button("◀", lambda: self.seek(self.index - 1)),
            self.play_button,
            _button("▶", lambda: self.seek(self.index + 1)),
            self.slider,
            self.time_label,
            self.speed,
            self.loop,
        ):
            row.addWidget(widget, 1 if widget is self.slider else 0)
        return row

    # ------------------------------------------------------------------ data
    def show_result(self, result: JobResult) -> None:
        self.pause()
        self.result = result
        self.series.clear()
        self.series.addItems(list(result.data["series"]))
        self.slider.setRange(0, len(result.data["t"]) - 1)
        self.series.item(0).setSelected(True)
        self.seek(0)

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    def clear(self) -> None:
        """Back to the empty panel: another document is open."""
        self.pause()
        self.result = None
        self.series.clear()
        self._replot()
        self.slider.setRange(0, 0)
        self.time_label.setText("no motion yet")
        self.stale.hide()

    def select_series(self, names) -> None:
        """Plot exactly the series named (those present), with or without their unit: "theta1" selects
        "theta1 [rad]", so the independent coordinates can be asked for by name."""
        wanted = set(names)
        self.series.blockSignals(True)
        for i in range(self.series.count()):
            item = self.series.item(i)
            item.setSelected(item.text() in wanted or item.text().split(" [")[0] in wanted)
        self.series.blockSignals(False)
        self._replot()

    def _replot(self) -> None:
        self.plot.clear()
        self.plot.plotItem.legend.clear()
        if self.result is None:
            return
        t = self.result.data["t"]
        for k, item in enumerate(self.series.selectedItems()):
            values = np.asarray(self.result.data["series"][item.text()], float)
            self.plot.plot(t, values, pen=pg.mkPen(COLORS[k % len(COLORS)], width=2), name=item.text())
        self.plot.addItem(self.cursor)

    # ------------------------------------------------------------------ export
    def export(self, fmt: str, path: str | None = None) -> bool:
        """Every series (not only the plotted ones) at every time, with the provenance; 'csv' or 'json'.
        The file is written atomically; a failure is reported."""
        if self.result is None:
            return False
        text = time_series_text(self.result, fmt)  # an unknown format raises before the dialog
        path = export_path(self, "time histories", "time_histories", fmt, path)
        return path is not None and write_export(self, path, text)

    # ------------------------------------------------------------------ time
    @property
    def times(self) -> np.ndarray:
        return np.asarray(self.result.data["t"], float) if self.result is not None else np.zeros(0)

    def seek_time(self, t: float) -> None:
        if len(self.times):
            self.seek(int(np.abs(self.times - t).argmin()))

    def seek(self, index: int) -> None:
        """Show frame `index` (clamped): cursor, slider, label, and the 3D view through `frame`."""
        if self.result is None:
            return
        index = int(np.clip(index, 0, len(self.times) - 1))
        changed = index != self.index or self.time_label.text() == "no motion yet"
        self.index = index
        t = self.times[index]
        for widget, value in ((self.slider, index), (self.cursor, t)):
            widget.blockSignals(True)
            widget.setValue(value)
            widget.blockSignals(False)
        self._t = t
        self.time_label.setText(f"t = {t:.3f} s")
        if changed:
            self.frame.emit(np.asarray(self.result.data["q"][index], float))

    # ------------------------------------------------------------------ playback
    def toggle_play(self) -> None:
        self.play() if self.play_button.isChecked() else self.pause()

    def play(self) -> None:
        if self.result is None:
            return
        if self.index >= len(self.times) - 1:
            self.seek(0)
        self._clock = time.monotonic()
        self.play_button.setChecked(True)
        self.play_button.setText("Pause")
        self.timer.start()

    def pause(self) -> None:
        self.timer.stop()
        self.play_button.setChecked(False)
        self.play_button.setText("Play")

    def _tick(self) -> None:
        """Advance by the real time passed times the speed, so slow frames skip samples instead of lagging."""
        now = time.monotonic()
        target = self._t + (now - self._clock) * SPEEDS[self.speed.currentIndex()]
        self._clock = now
        if target > self.times[-1]:
            if not self.loop.isChecked():
                self.seek(len(self.times) - 1)
                self.pause()
                return
            target = self.times[0]
        self.seek_time(target)
        self._t = target


def _button(text: str, slot, checkable: bool = False) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setCheckable(checkable)
    button.clicked.connect(lambda _=False: slot())
    return button
