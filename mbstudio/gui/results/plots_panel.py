"""The post-processor's time histories: the runs of kinematics and simulation jobs kept side by side (the
current one drawn solid and animated in the 3D view, the others checked for overlay, dashed), plots in tabs that
each show any series against time or another series (plot_view.py), a time cursor linked to the 3D view,
playback (play/pause, step, speed, loop, time slider), and export of the current run's series as CSV or JSON
and of a plot as PNG or SVG. The plots, their cursors and the exports are in the display units (Edit ›
Preferences… › Units); the runs stay in SI. The panel emits the coordinates of the shown frame; the window draws
them. Playback runs on a QTimer, so the GUI thread never waits."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSlider,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...io.display_units import SI, DisplayUnits
from ...io.time_series import time_series_text
from ...jobs import JobResult
from .panel_parts import export_path, menu_button, stale_banner, write_export
from .plot_view import TIME, PlotView

FRAME_MS = 33  # about 30 frames per second
SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
KEPT_RUNS = 8  # the oldest run is dropped beyond these


class PlotsPanel(QWidget):
    """`frame(q)`: the coordinates (n,) at the cursor's time, for the 3D view."""

    frame = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kept: list[tuple[str, JobResult]] = []  # every run of this document, oldest first
        self.result: JobResult | None = None  # the current run (SI)
        self.units = SI  # what the plots show (Edit › Preferences… › Units)
        self.index = 0
        self._count = 0
        self.runs = QListWidget()  # check a run to overlay it; the selected one is current
        self.runs.setWordWrap(True)  # a run's whole name, on as many lines as it takes
        self.runs.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.runs.currentRowChanged.connect(self._current_run_changed)
        self.runs.itemChanged.connect(lambda _: self._show_runs())
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.tabCloseRequested.connect(self._close_plot)
        self.tabs.currentChanged.connect(lambda _: self.view.set_index(self.index))
        self.add_plot()
        self.timer = QTimer(self)
        self.timer.setInterval(FRAME_MS)
        self.timer.timeout.connect(self._tick)
        self._clock = 0.0
        self._t = 0.0  # playback time: continuous, so that speeds below one sample per frame still advance
        self.stale = stale_banner()
        side = QWidget()  # the runs and the panel's buttons in a column beside the plots: the plots keep the height
        column = QVBoxLayout(side)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(QLabel("Runs (check to overlay):"))
        column.addWidget(self.runs, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(_button("Add plot", self.add_plot))
        buttons.addWidget(menu_button("Export", self._export_entries()))
        column.addLayout(buttons)
        split = QSplitter()
        split.addWidget(self.tabs)
        split.addWidget(side)
        split.setStretchFactor(0, 1)
        split.setSizes([800, 200])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.stale)
        layout.addWidget(split, 1)
        layout.addLayout(self._controls())

    def _export_entries(self) -> list:
        data = [(f"Series as {fmt.upper()}…", lambda f=fmt: self.export(f)) for fmt in ("csv", "json")]
        return data + [(f"Plot as {fmt.upper()}…", lambda f=fmt: self.export_plot(f)) for fmt in ("png", "svg")]

    # ------------------------------------------------------------------ plots
    @property
    def view(self) -> PlotView:
        """The plot in the front tab."""
        return self.tabs.currentWidget()

    @property
    def views(self) -> list[PlotView]:
        return [self.tabs.widget(i) for i in range(self.tabs.count())]

    @property
    def series(self) -> QListWidget:
        return self.view.series

    @property
    def cursor(self):
        return self.view.cursor

    def add_plot(self) -> PlotView:
        view = PlotView()
        view.cursor.sigPositionChanged.connect(lambda: self.seek_time(view.cursor.value()))
        self.tabs.addTab(view, f"Plot {self.tabs.count() + 1}")
        self.tabs.setCurrentWidget(view)
        if self.result is not None:
            view.set_runs(self._shown_runs())
        return view

    def _close_plot(self, index: int) -> None:
        if self.tabs.count() > 1:  # one plot always stays
            self.tabs.widget(index).deleteLater()
            self.tabs.removeTab(index)

    # ------------------------------------------------------------------ runs
    def show_result(self, result: JobResult) -> None:
        """A new run: kept, made current; the plots keep their choice of series where the run has them."""
        self.pause()
        self._count += 1
        self.kept.append((f"run {self._count}: {result.title}", result))
        self.kept = self.kept[-KEPT_RUNS:]
        self.runs.blockSignals(True)
        self.runs.clear()
        for label, _ in self.kept:
            item = QListWidgetItem(label)
            item.setToolTip(label)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.runs.addItem(item)
        self.runs.setCurrentRow(len(self.kept) - 1)
        self.runs.blockSignals(False)
        self._current_run_changed(len(self.kept) - 1)

    def _current_run_changed(self, row: int) -> None:
        if row < 0:
            return
        self.result = self.kept[row][1]
        self.slider.setRange(0, len(self.result.data.t) - 1)
        self._show_runs()
        self.seek(min(self.index, len(self.result.data.t) - 1), force=True)

    def _shown_runs(self) -> list[tuple[str, JobResult]]:
        """The current run, then the checked others, their series in the display units."""
        current = self.runs.currentRow()
        checked = [
            self.kept[i]
            for i in range(self.runs.count())
            if i != current and self.runs.item(i).checkState() == Qt.CheckState.Checked
        ]
        return [(label, self._displayed(result)) for label, result in [self.kept[current], *checked]]

    def _displayed(self, result: JobResult) -> JobResult:
        """The run with its series renamed and scaled to the display units ('theta1 [deg]')."""
        if self.units.is_si:
            return result
        series = dict(self.units.column(name, values) for name, values in result.data.series.items())
        return replace(result, data=replace(result.data, series=series))

    def set_units(self, units: DisplayUnits) -> None:
        """Plot, read out and export in these units; the plots keep their series."""
        self.units = units
        self._show_runs()

    def overlay(self, rows: list[int]) -> None:
        """Check exactly these runs (by their row, oldest first) for overlay."""
        for i in range(self.runs.count()):
            self.runs.item(i).setCheckState(Qt.CheckState.Checked if i in rows else Qt.CheckState.Unchecked)

    def _show_runs(self) -> None:
        if self.result is not None:
            for view in self.views:
                view.set_runs(self._shown_runs())

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    def clear(self) -> None:
        """Back to the empty panel: another document is open (its runs are not this one's)."""
        self.pause()
        self.result, self.kept = None, []
        self.runs.clear()
        for view in self.views:
            view.set_runs([])
        self.slider.setRange(0, 0)
        self.time_label.setText("no motion yet")
        self.stale.hide()

    def select_series(self, names, x: str = TIME) -> None:
        """In the front plot: exactly these series (by name, with or without unit) against `x`."""
        self.view.select_series(names, x)

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

    # ------------------------------------------------------------------ export
    def export(self, fmt: str, path: str | None = None) -> bool:
        """Every series of the current run (not only the plotted ones) at every time, with the provenance;
        'csv' or 'json'. The file is written atomically; a failure is reported."""
        if self.result is None:
            return False
        text = time_series_text(self.result, fmt, self.units)  # an unknown format raises before the dialog
        path = export_path(self, "time histories", "time_histories", fmt, path)
        return path is not None and write_export(self, path, text)

    def export_plot(self, fmt: str, path: str | None = None) -> bool:
        """The front plot as 'png' or 'svg'."""
        if self.result is None:
            return False
        path = export_path(self, "the plot", "plot", fmt, path)
        if path is not None:
            self.view.export_image(path, fmt)
        return path is not None

    # ------------------------------------------------------------------ time
    @property
    def times(self) -> np.ndarray:
        return np.asarray(self.result.data.t, float) if self.result is not None else np.zeros(0)

    def seek_time(self, t: float) -> None:
        if len(self.times):
            self.seek(int(np.abs(self.times - t).argmin()))

    def seek(self, index: int, force: bool = False) -> None:
        """Show frame `index` (clamped) of the current run: cursors, slider, label, and the 3D view through
        `frame` (`force`: even if the index is the shown one, as after a change of run)."""
        if self.result is None:
            return
        index = int(np.clip(index, 0, len(self.times) - 1))
        changed = force or index != self.index or self.time_label.text() == "no motion yet"
        self.index = index
        t = self.times[index]
        self.slider.blockSignals(True)
        self.slider.setValue(index)
        self.slider.blockSignals(False)
        for view in self.views:
            view.set_index(index)
        self._t = t
        self.time_label.setText(f"t = {t:.3f} s")
        if changed:
            self.frame.emit(np.asarray(self.result.data.q[index], float))

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
