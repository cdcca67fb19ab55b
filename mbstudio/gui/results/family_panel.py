"""The Linear-family panel (LPV): each mode's natural frequency and damping ratio against the scheduling parameter,
side by side (the family's root locus as a control engineer reads it: where a mode stiffens, softens or loses
its damping), one curve per mode followed across the members (tasks.linear_family_result), the picked member
under a cursor with its values read out. Drag the cursor, click a plot or move the slider to pick another
member: the Modes and Frequency-response panels show it. Exports the curves as CSV, the plots as PNG or SVG and
the family of state-space models as .mat, JSON or .npz, the files `mbstudio linearize --schedule` writes. The
scheduling parameter and the outputs read in the window's display units, in the plots, the CSV and the models
alike. The job computes everything (SI); this panel draws it."""

from __future__ import annotations

import json

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QWidget

from ...io.csv_text import csv_table
from ...io.state_space import stacked_document, state_space_file
from ...jobs import JobResult
from ...jobs.results import LinearFamilyResult
from .linear_panel import LinearPanel, schedule_label, schedule_unit, schedule_values, signal_sizes
from .panel_parts import COLORS, LogAxis, plain_units, result_layout, save_image, write_export

EXPORT_FORMATS = ("csv", "json", "mat", "npz", "png", "svg")
PLACEHOLDER = (
    "Run Analysis › Linearise… with a schedule (a coordinate or parameter, from, to, count) to see a family of "
    "linear models: each mode's frequency and damping against it."
)
POINTS = {"equilibrium": "its equilibrium", "initial": "the document's pose"}
ALL_MODES = "all modes"
DECADE = 10.0  # natural frequencies spanning more than this ratio are drawn on a logarithmic axis
CURSOR = "#b02020"


class FamilyPanel(LinearPanel):
    formats = EXPORT_FORMATS
    placeholder = PLACEHOLDER

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.log = False  # natural frequencies on a logarithmic axis
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setBackground("w")
        self.plots.setToolTip("drag the red cursor or click a plot to pick a model")
        self.frequency = self.plots.addPlot(row=0, col=0, axisItems={"left": LogAxis("left")})
        self.damping = self.plots.addPlot(row=0, col=1)
        self.damping.setXLink(self.frequency)
        self.frequency.setLabel("left", "frequency [Hz]")  # short: the panel may be a few lines high
        self.damping.setLabel("left", "damping ratio ζ")
        self.cursors = [pg.InfiniteLine(0.0, angle=90, movable=True, pen=pg.mkPen(CURSOR, width=2)) for _ in "fd"]
        self.markers = [pg.ScatterPlotItem(size=11, pen=pg.mkPen(CURSOR, width=2), brush=None) for _ in "fd"]
        for plot, cursor in zip((self.frequency, self.damping), self.cursors, strict=True):
            plot.showGrid(x=True, y=True, alpha=0.25)
            for side in ("bottom", "left"):
                plain_units(plot.getAxis(side))
            cursor.sigPositionChanged.connect(lambda line: self._pick_near(line.value()))
        self.plots.scene().sigMouseClicked.connect(self._clicked)
        self.readout = QLabel("")  # the picked model's values, each mode in its curve's colour: the legend too
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.x_axis = QComboBox()
        self.x_axis.setToolTip("against the scheduling parameter, or an output's value at each model's point")
        self.x_axis.currentIndexChanged.connect(self.draw)
        self.modes = QComboBox()
        self.modes.setToolTip("the modes drawn: one alone shows how its frequency and damping change on its own scale")
        self.modes.currentIndexChanged.connect(self.draw)
        buttons = QHBoxLayout()
        buttons.addWidget(self.readout, 1)
        buttons.addWidget(QLabel("against"))
        buttons.addWidget(self.x_axis)
        buttons.addWidget(self.modes)
        buttons.addWidget(self.export_button())
        result_layout(self, self.summary, self.plots, buttons, self.picker)

    # ------------------------------------------------------------------ drawing
    def show_result(self, result: JobResult) -> None:
        """A family's curves; one model (no schedule) leaves the panel empty."""
        if not isinstance(result.data, LinearFamilyResult):
            self.clear()
            return
        self.take(result)
        _refill(self.modes, [ALL_MODES, *result.data.branches["labels"]])
        self._label()

    def _label(self, keep: int = -1) -> None:
        """The abscissa's choices (choice `keep` kept, else the one of the same text) and the summary in display
        units; then the curves."""
        outputs = [f"{n} [{u}]" for n, u in zip(self.outputs(), self.output_units()[0], strict=True)]
        _refill(self.x_axis, [schedule_label(self.family, self.units), *outputs])
        if 0 <= keep < self.x_axis.count():
            self.x_axis.blockSignals(True)
            self.x_axis.setCurrentIndex(keep)
            self.x_axis.blockSignals(False)
        self.summary.setText(_summary(self.result, self.units))
        self.draw()

    def redraw(self) -> None:
        self.picker.show_family(self.family, self.member)
        self._label(keep=self.x_axis.currentIndex())  # the same choice in other units

    def outputs(self) -> list[str]:
        return self.result.data.members[0].model["outputs"]

    def output_units(self) -> tuple[list[str], np.ndarray]:
        """The outputs' display units and SI sizes."""
        model = self.result.data.members[0].model
        return signal_sizes(model["outputs"], model["output_units"], self.units)

    def x(self) -> np.ndarray:
        """The abscissa of every member in its display unit: the scheduling parameter, or an output's value at
        each member's point (the SLA's wheel travel for a family over its arm angle)."""
        k = self.x_axis.currentIndex()
        if k <= 0:
            return schedule_values(self.family, self.units)
        size = self.output_units()[1][k - 1]
        return np.array([member.model["y0"][k - 1] for member in self.result.data.members], float) / size

    def shown(self) -> list[int]:
        """The modes drawn: all, or the one chosen."""
        k = self.modes.currentIndex()
        return list(range(len(self.result.data.branches["labels"]))) if k <= 0 else [k - 1]

    def draw(self) -> None:
        """The chosen modes' curves against the scheduling parameter, natural frequencies on a logarithmic axis
        where they span more than a decade; then the picked member."""
        if self.result is None:
            return
        branches, shown = self.result.data.branches, self.shown()
        self.log = _spans_decades(np.asarray(branches["frequency_hz"], float)[:, shown])
        self.frequency.setLogMode(x=False, y=self.log)
        for plot, key in ((self.frequency, "frequency_hz"), (self.damping, "damping")):
            plot.clear()
            plot.setLabel("bottom", self.x_axis.currentText())
            values = np.asarray(branches[key], float)
            if self.log and key == "frequency_hz":
                values = np.where(values > 0, values, np.nan)  # a neutral mode (0 Hz) has no place on a log axis
            for b in shown:
                style = {"pen": pg.mkPen(_colour(b), width=2), "symbolBrush": _colour(b), "symbolPen": None}
                plot.plot(self.x(), values[:, b], symbol="o", symbolSize=5, connect="finite", **style)
        self.damping.addItem(pg.InfiniteLine(0.0, angle=0, pen=pg.mkPen("#909090", style=Qt.PenStyle.DashLine)))
        for plot, cursor, markers in zip((self.frequency, self.damping), self.cursors, self.markers, strict=True):
            plot.addItem(cursor)
            plot.addItem(markers)
            plot.enableAutoRange()
        self.member_changed()

    def member_changed(self) -> None:
        """The cursor at the picked member, the chosen modes' values there marked, every mode's read out."""
        branches, shown = self.result.data.branches, self.shown()
        x = float(self.x()[self.member])
        frequency = np.asarray(branches["frequency_hz"], float)[self.member]
        damping = np.asarray(branches["damping"], float)[self.member]
        y = np.log10(np.where(frequency > 0, frequency, np.nan)) if self.log else frequency  # in the view's units
        for cursor, markers, values in zip(self.cursors, self.markers, (y[shown], damping[shown]), strict=True):
            cursor.blockSignals(True)
            cursor.setValue(x)
            cursor.blockSignals(False)
            finite = np.isfinite(values)
            markers.setData(x=np.full(finite.sum(), x), y=values[finite])
        parts = [
            f"<span style='color:{_colour(b)}'>●</span> {label}: {f:.4g} Hz, ζ {round(z, 3) + 0.0:.3f}"  # not −0.000
            for b, (label, f, z) in enumerate(zip(branches["labels"], frequency, damping, strict=True))
            if np.isfinite(f)
        ]
        self.readout.setText("; ".join(parts))  # which model: the slider's label says

    # ------------------------------------------------------------------ picking
    def _pick_near(self, x: float) -> None:
        """The member whose value is nearest `x` (a dragged cursor, a click): asks the window to show it."""
        k = int(np.abs(self.x() - x).argmin())
        if k != self.member:
            self.member_picked.emit(k)
        else:
            self.member_changed()  # the cursor back on the member

    def _clicked(self, event) -> None:
        if self.family is None:
            return
        for plot in (self.frequency, self.damping):
            if plot.vb.sceneBoundingRect().contains(event.scenePos()):
                self._pick_near(plot.vb.mapSceneToView(event.scenePos()).x())

    # ------------------------------------------------------------------ clearing and exporting
    def clear(self) -> None:
        super().clear()
        self.modes.clear()
        self.x_axis.clear()
        self.frequency.clear()
        self.damping.clear()
        self.readout.setText("")

    def export(self, fmt: str, path: str | None = None) -> bool:
        """csv: each mode's frequency and damping at every member; json, mat, npz: the family of state-space
        models (io/state_space.py, as the command writes them); png, svg: the plots."""
        what = "the family's modes" if fmt.lower() in ("csv", "png", "svg") else "the family of linear models"
        fmt, path = fmt.lower(), self.export_target(what, "family", fmt, path)
        if path is None:
            return False
        provenance = self.result.provenance.to_json()
        if fmt in ("png", "svg"):
            save_image(self.plots, self.plots.scene(), path, fmt, "Linear family", json.dumps(provenance, default=str))
            return True
        if fmt == "csv":
            header, rows = _table(self.family, self.result.data.branches, self.units)
            return write_export(self, path, csv_table({**provenance, "units": self.units.spec()}, header, rows))
        family, members = self.family, self.result.data.members
        models = [m.model for m in members]
        document = stacked_document(family["name"], family["kind"], family["unit"], family["values"], models)
        return write_export(self, path, state_space_file({**self.in_units(document), "job": provenance}, fmt))


def _refill(combo: QComboBox, items: list[str]) -> None:
    """New choices, the current one kept where it is still there."""
    chosen = combo.currentText()
    combo.blockSignals(True)
    combo.clear()
    combo.addItems(items)
    combo.setCurrentIndex(max(combo.findText(chosen), 0))
    combo.blockSignals(False)


def _colour(branch: int) -> str:
    return COLORS[(branch + 2) % len(COLORS)]  # blue first, as the Bode curve; then green, purple, …


def _spans_decades(frequencies: np.ndarray) -> bool:
    positive = frequencies[np.isfinite(frequencies) & (frequencies > 0)]
    return bool(positive.size) and bool(positive.max() > DECADE * positive.min())


def _summary(result: JobResult, units) -> str:
    family, options = result.data.family, result.provenance.options
    shown, size = schedule_unit(family, units)
    unit = f" {shown}" if shown else ""
    at, schedule = options.get("at") or "equilibrium", options["schedule"]
    held = f" with {family['name']} held there" if family["kind"] == "coordinate" and at == "equilibrium" else ""
    text = (
        f"{family['count']} linear models over the {family['kind']} {family['name']} from "
        f"{schedule['from'] / size:.6g} to {schedule['to'] / size:.6g}{unit}, each about {POINTS[at]}{held}."
    )
    if family["stopped"]:
        text += f" <b>Stopped early</b>: the first {len(family['values'])} are shown (the Jobs panel says why)."
    return text


def _table(family: dict, branches: dict, units) -> tuple[list[str], list[list[str]]]:
    """The CSV's columns: the scheduling value (in display units), then each mode's natural frequency and damping
    ratio."""
    header = [schedule_label(family, units)]
    for label in branches["labels"]:
        header += [f"{label} natural [Hz]", f"{label} damping ratio"]
    frequency, damping = (np.asarray(branches[k], float) for k in ("frequency_hz", "damping"))
    columns = [schedule_values(family, units)]
    for b in range(len(branches["labels"])):
        columns += [frequency[:, b], damping[:, b]]
    return header, [[repr(float(x)) for x in row] for row in np.column_stack(columns)]
