"""Analysis › Parameter Study…: choose parameters to vary over grids and an analysis, run every point on Dask
(mbstudio.jobs.study), watch the points arrive, and plot any result against a varied parameter. Ranges are typed,
and the table, plot and exports shown, in the window's display units, every header naming its unit; the rows
stay SI.

The cluster starts and closes on a background thread (a local cluster takes a second or two to spawn its
processes) and the window polls the points from a timer, so it never waits; Cancel stops the points that have
not finished, and the rows already in stay."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...io.display_units import SI, DisplayUnits
from ...io.study_table import column_header, columns, study_bytes, study_columns, study_units
from ...jobs.study import ANALYSES, Study
from ...model import Model, ModelError
from .panel_parts import export_path, menu_button, write_export

POLL_MS = 200
HIDDEN = ("model_hash", "worker", "version")  # provenance columns: in the exported file, not in the plot choices


class StudyPanel(QWidget):
    """`model` returns the document's current model when a study starts (the study runs on that snapshot)."""

    def __init__(self, model: Callable[[], Model]) -> None:
        super().__init__()
        self.model = model
        self.vary: dict[str, np.ndarray] = {}
        self.study: Study | None = None
        self.start_error: str | None = None  # why the last study could not start (set on its thread)
        self.rows: list[dict] = []  # SI, as the points return them
        self.shown: list[dict] = []  # the rows in display units, their columns named with their units
        self.units = SI  # Edit › Preferences… › Units
        self.named: dict[str, str] = {}  # the SI unit of each column whose name does not say it (study_units)
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(self._grid_rows())
        layout.addLayout(self._run_row())
        self.status = QLabel("Add a parameter to vary, then Run.")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.table = QTableWidget()
        self.table.setSortingEnabled(True)
        self.plot = pg.PlotWidget(background="w")
        plot_side = QWidget()
        plot_layout = QVBoxLayout(plot_side)
        plot_layout.setContentsMargins(0, 0, 0, 0)
        plot_layout.addLayout(self._plot_row())
        plot_layout.addWidget(self.plot, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(plot_side)
        layout.addWidget(split, 1)
        self.refresh_parameters()

    # ------------------------------------------------------------------ the grid and the analysis
    def _grid_rows(self) -> QVBoxLayout:
        """Vary NAME from a to b, n values [Add] [Remove]; the grid so far; the analysis and its digits."""
        self.parameter = QComboBox()
        self.start, self.stop = (QDoubleSpinBox(decimals=6, minimum=-1e9, maximum=1e9) for _ in range(2))
        self.count = QSpinBox(minimum=1, maximum=1000, value=11)
        add, remove = QPushButton("Add"), QPushButton("Remove")
        add.clicked.connect(self.add_variation)
        remove.clicked.connect(self.remove_variation)
        vary = _row(QLabel("Vary"), self.parameter, QLabel("values"), self.count, add, remove)
        self.unit = QLabel()  # the range's unit
        span = _row(QLabel("from"), self.start, QLabel("to"), self.stop, self.unit, stretch=True)
        self.variations = QListWidget()
        self.variations.setMaximumHeight(44)
        self.analysis = QComboBox()
        self.analysis.addItems(list(ANALYSES))
        self.digits = QSpinBox(minimum=0, maximum=1000, value=0, specialValueText="DP")
        self.digits.setToolTip(
            "base_parameters: DP (0) is double precision only; 16 to 1000 digits run variable precision"
        )
        self.parameter.currentTextChanged.connect(self._suggest_range)
        rows = QVBoxLayout()
        rows.addLayout(vary)
        rows.addLayout(span)
        rows.addWidget(self.variations)
        rows.addLayout(_row(QLabel("Analysis"), self.analysis, QLabel("digits"), self.digits, stretch=True))
        return rows

    def refresh_parameters(self) -> None:
        """The model's parameters as choices (after opening another model, say)."""
        self.named = study_units(self.model())
        self.parameter.clear()
        self.parameter.addItems([p.name for p in self.model().parameters])

    def _size(self, name: str) -> tuple[str, float]:
        """A varied parameter's display unit ('' without one) and its SI size."""
        header, size = column_header(name, self.units, self.named)
        return (header[len(name) + 2 : -1] if header != name else ""), size

    def _suggest_range(self, name: str) -> None:
        value = next((p.value for p in self.model().parameters if p.name == name), None)
        unit, size = self._size(name)
        self.unit.setText(unit)
        if value is not None:
            self.start.setValue(0.9 * value / size)
            self.stop.setValue(1.1 * value / size)

    def add_variation(self) -> None:
        """The range typed in the display unit, kept in SI."""
        name = self.parameter.currentText()
        if not name:
            return
        size = self._size(name)[1]
        self.vary[name] = size * np.linspace(self.start.value(), self.stop.value(), self.count.value())
        self._list_variations()

    def set_units(self, units: DisplayUnits) -> None:
        """Show the ranges, table and plot in `units` (the rows stay SI)."""
        size = self._size(self.parameter.currentText())[1]
        start, stop = self.start.value() * size, self.stop.value() * size
        self.units = units
        unit, size = self._size(self.parameter.currentText())
        self.unit.setText(unit)
        self.start.setValue(start / size)
        self.stop.setValue(stop / size)
        self._list_variations()
        if self.rows:
            self.show_rows(self.rows)

    def remove_variation(self) -> None:
        for item in self.variations.selectedItems():
            self.vary.pop(item.text().split(" ")[0], None)
        self._list_variations()

    def _list_variations(self) -> None:
        self.variations.clear()
        for name, values in self.vary.items():
            unit, size = self._size(name)
            shown = f"{values[0] / size:g} … {values[-1] / size:g}" + (f" {unit}" if unit else "")
            self.variations.addItem(f"{name} = {shown} ({len(values)} values)")

    def options(self) -> dict:
        """The digits field's route for base parameters; the other analyses take their defaults."""
        if self.analysis.currentText() != "base_parameters":
            return {}
        digits = self.digits.value()
        return {"digits": digits, "method": "vp"} if digits else {"method": "dp"}

    # ------------------------------------------------------------------ running
    def _run_row(self) -> QHBoxLayout:
        self.run_button, self.cancel_button = QPushButton("Run"), QPushButton("Cancel")
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        export = menu_button(
            "Export", [("as Parquet…", lambda: self.export("parquet")), ("as CSV…", lambda: self.export("csv"))]
        )
        return _row(self.run_button, self.cancel_button, self.progress, export)

    def run(self) -> None:
        if not self.vary:
            self.status.setText("Nothing to vary: choose a parameter, its range and count, then Add.")
            return
        model = self.model()
        try:
            self.study = Study(model, self.vary, self.analysis.currentText(), self.options())
        except ModelError as exc:
            self.status.setText(str(exc))
            return
        self.rows, self.named = [], study_units(model)
        self.progress.setRange(0, len(self.study.points))
        self.progress.setValue(0)
        self.status.setText(f"starting a local Dask cluster for {len(self.study.points)} points…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.start_error: str | None = None
        threading.Thread(target=self._start, args=(self.study,), daemon=True).start()
        self.timer.start()

    def _start(self, study: Study) -> None:
        """On the background thread: a study that cannot start (no scheduler there, a worker without mbstudio or
        of another version) leaves its reason for poll() to show, instead of 'starting…' for ever."""
        try:
            study.start()
        except Exception as exc:  # whatever stopped it, said in the panel
            self.start_error = str(exc) or type(exc).__name__

    def poll(self) -> None:
        study = self.study
        if study is not None and self.start_error is not None:
            self.timer.stop()
            self.status.setText(f"the study could not start: {self.start_error}")
            self.run_button.setEnabled(True)
            self.cancel_button.setEnabled(False)
            threading.Thread(target=study.close, daemon=True).start()
            return
        if study is None or study.client is None or len(study.futures) < len(study.points):
            return  # still starting
        done = study.poll()
        self.progress.setValue(done)
        self.status.setText(f"{done} of {len(study.points)} points on {study.provenance()['scheduler']}")
        self.show_rows([r for r in study.results if r is not None])
        if done == len(study.points):
            self._finish("done")

    def cancel(self) -> None:
        if self.study is not None and self.study.client is not None:
            self.study.cancel()
            self._finish("cancelled: the points that had finished are kept")

    def _finish(self, message: str) -> None:
        self.timer.stop()
        study = self.study
        study.poll()
        self.show_rows(study.rows())
        failed = sum(1 for r in self.rows if r.get("error"))
        self.status.setText(f"{message}; {len(self.rows)} rows, {failed} failed")
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        threading.Thread(target=study.close, daemon=True).start()

    # ------------------------------------------------------------------ results
    def _plot_row(self) -> QHBoxLayout:
        self.x_choice, self.y_choice = QComboBox(), QComboBox()
        for box in (self.x_choice, self.y_choice):
            box.currentTextChanged.connect(self.replot)
        return _row(QLabel("plot"), self.y_choice, QLabel("against"), self.x_choice)

    def show_rows(self, rows: list[dict]) -> None:
        """The rows (SI) in the table and the plot's choices, in display units."""
        self.rows = rows
        self.shown = shown = study_columns(rows, self.units, self.named)
        names = columns(shown)
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(shown))
        self.table.setColumnCount(len(names))
        self.table.setHorizontalHeaderLabels(names)
        for i, r in enumerate(shown):
            for j, n in enumerate(names):
                self.table.setItem(i, j, QTableWidgetItem(_cell(r.get(n))))
        self.table.setSortingEnabled(True)
        numeric = [n for n in names if n not in HIDDEN and any(isinstance(r.get(n), int | float) for r in shown)]
        varied = [column_header(n, self.units, self.named)[0] for n in self.vary]
        results = [n for n in numeric if n not in varied]
        for box, chosen in ((self.x_choice, varied), (self.y_choice, results)):
            current = box.currentText()
            box.blockSignals(True)
            box.clear()
            box.addItems(numeric)
            box.setCurrentText(current if current in numeric else (chosen[0] if chosen else ""))
            box.blockSignals(False)
        self.replot()

    def replot(self) -> None:
        self.plot.clear()
        x, y = self.x_choice.currentText(), self.y_choice.currentText()
        pairs = sorted(
            (r[x], r[y]) for r in self.shown if isinstance(r.get(x), int | float) and isinstance(r.get(y), int | float)
        )
        if not pairs:
            return
        xs, ys = np.array(pairs, dtype=float).T
        self.plot.plot(xs, ys, pen=pg.mkPen("#1f77b4", width=2), symbol="o", symbolSize=6)
        self.plot.setLabel("bottom", x)
        self.plot.setLabel("left", y)

    def export(self, fmt: str, path: str | None = None) -> bool:
        if not self.rows or self.study is None:
            self.status.setText("No study to export yet: run one first.")
            return False
        path = export_path(self, "the parameter study", "study", fmt, path)
        return path is not None and write_export(
            self, path, study_bytes(self.rows, self.study.provenance(), fmt, self.units, self.named)
        )


def _cell(value) -> str:
    return "" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)


def _row(*widgets: QWidget, stretch: bool = False) -> QHBoxLayout:
    """Widgets side by side; number fields kept narrow so the panel fits a docked column."""
    row = QHBoxLayout()
    for widget in widgets:
        if isinstance(widget, QSpinBox | QDoubleSpinBox):
            widget.setMaximumWidth(110)
        row.addWidget(widget)
    if stretch:
        row.addStretch(1)
    return row
