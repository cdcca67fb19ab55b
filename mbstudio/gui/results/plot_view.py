"""One plot of the post-processor: any series against time or against another series (camber against wheel
travel, a coupler curve y against x), for the current run and the runs overlaid on it; axes labelled with
their units, the legend above the plot (never over the curves), a cursor at the shown frame with the
values read out under the plot, and PNG/SVG export."""

from __future__ import annotations

import json

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ...jobs import JobResult
from .panel_parts import COLORS, readable, save_image, set_axis_label

TIME = "t [s]"
SERIES_WIDTH = 170  # px: the list of series beside the plot
PLOT_MIN_HEIGHT = 180  # px: the canvas, legend and axes included
LEGEND_ROWS, LEGEND_COLUMNS = 2, 4  # at most: a legend of 12 rows left the curves of a 1280x800 window no room
LEGEND_SAMPLE = 40  # px: an entry's line sample and spacing, beside its text
LEGEND_ROW_HEIGHT = 22  # px: a row of the legend
OVERLAY_STYLES = (Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine)
ERROR_PREFIX = "error:"  # a cross-check's series block − general (simulation/cross_check.py)
ERROR_COLOR = "#e01010"  # the errors' axis in red, as Alazard et al.'s Fig. 17 draws its errors
ERROR_STYLE = Qt.PenStyle.DotLine
CONTACT_COLOR = "#d07000"  # the stops' impacts (dashed lines) and engagements (shaded spans), against time


def unit_of(name: str) -> str:
    """'theta1 [rad]' -> 'rad'."""
    return name.rsplit(" [", 1)[1].rstrip("]") if name.endswith("]") and " [" in name else ""


def _bare(name: str) -> str:
    """A series' name without its unit: 'theta1 [deg]' -> 'theta1'."""
    return name.split(" [")[0]


def axis_label(names: list[str]) -> str:
    """The y axis' label: the series' name and unit for one series; their shared unit for several; the
    units side by side when they differ."""
    if len(names) == 1:
        return names[0]
    units = list(dict.fromkeys(unit_of(n) for n in names))
    return " | ".join(f"[{u}]" for u in units if u) or "value"


def _swatch(color: str) -> QIcon:
    """A small square of `color`, for the series list."""
    pixmap = QPixmap(10, 10)
    pixmap.fill(QColor(color))
    return QIcon(pixmap)


class PlotView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs: list[tuple[str, JobResult]] = []  # (label, result): the current run first, then overlays
        self.index = 0
        self.x_axis = QComboBox()
        self.x_axis.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.x_axis.addItem(TIME)
        self.x_axis.currentIndexChanged.connect(self._replot)
        self.series = QListWidget()
        self.series.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.series.itemSelectionChanged.connect(self._replot)
        # a robot's run has hundreds of series (Talos: 50 coordinates, their rates and accelerations, 19 per
        # contact): typing "contact" or "fz" keeps those rows
        self.filter = QLineEdit(placeholderText="Filter series…", clearButtonEnabled=True)
        self.filter.textChanged.connect(self._filter_series)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground("w")
        # the legend's rows and the axes take ~90 px: below this the curves of a 1280x800 window were a 10-px strip
        self.canvas.setMinimumHeight(PLOT_MIN_HEIGHT)
        # its own row above, never over the curves, and at most LEGEND_ROWS high: the curves keep their room
        self.legend = pg.LegendItem(labelTextColor="k")
        self._entries: list[tuple[pg.PlotDataItem, str]] = []  # every curve's legend entry, shown or not
        self._shape = (0, 0)  # the legend's rows and columns as last filled
        self.canvas.addItem(self.legend, row=0, col=0)
        self.plot_item = self.canvas.addPlot(row=1, col=0)
        self.plot_item.showGrid(x=True, y=True, alpha=0.2)
        for side in ("bottom", "left"):  # the values in the series' own unit, as the label says
            self.plot_item.getAxis(side).enableAutoSIPrefix(False)
        self.cursor = pg.InfiniteLine(0.0, angle=90, movable=True, pen=pg.mkPen("#b02020", width=2))
        self.markers = pg.ScatterPlotItem(size=9, brush=pg.mkBrush("#b02020"), pen=None)
        self.errors = QCheckBox("errors block − general (right axis)")
        self.errors.setChecked(True)
        self.errors.setVisible(False)
        self.errors.toggled.connect(self._replot)
        self.error_curves: dict[str, pg.PlotDataItem] = {}  # the errors drawn, by series name
        self.contacts = QCheckBox("contacts of the stops")
        self.contacts.setChecked(True)
        self.contacts.setVisible(False)
        self.contacts.toggled.connect(self._replot)
        self.contact_marks: list[pg.GraphicsObject] = []
        self.error_box = pg.ViewBox()  # the errors' own scale, on the right axis, sharing the time axis
        self.plot_item.scene().addItem(self.error_box)
        self.plot_item.getAxis("right").linkToView(self.error_box)
        self.error_box.setXLink(self.plot_item)
        self.plot_item.getViewBox().sigResized.connect(self._place_error_box)
        self.plot_item.getViewBox().sigResized.connect(self._fit_left_label)
        readable(self.plot_item)
        self.readout = QLabel("")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.readout.setWordWrap(True)  # every value read, on a second line where one is not enough
        # at most two lines, all of it in the tooltip: more wrapped over the plot of a 1280x800 window
        self.readout.setMaximumHeight(2 * self.readout.fontMetrics().lineSpacing() + 2)
        self.readout.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self._layout()

    def _layout(self) -> None:
        chooser = QWidget()
        column = QVBoxLayout(chooser)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.filter)
        column.addWidget(self.series, 1)
        column.addWidget(self.errors)
        column.addWidget(self.contacts)
        right = QWidget()
        plot_column = QVBoxLayout(right)
        plot_column.setContentsMargins(0, 0, 0, 0)
        plot_column.addWidget(self.canvas, 1)
        row = QHBoxLayout()  # the x axis' choice under the plot, where its whole name has room
        row.addWidget(QLabel("x:"))
        row.addWidget(self.x_axis)
        row.addWidget(self.readout, 1)
        plot_column.addLayout(row)
        split = QSplitter()
        split.addWidget(chooser)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([SERIES_WIDTH, 4 * SERIES_WIDTH])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

    # ------------------------------------------------------------------ data
    @property
    def result(self) -> JobResult | None:
        return self.runs[0][1] if self.runs else None

    def set_runs(self, runs: list[tuple[str, JobResult]]) -> None:
        """The current run first (drawn solid, its frame marked), then the runs overlaid (dashed); the choice
        of series and x axis is kept where the new runs have them (in whatever unit)."""
        chosen, x = {_bare(n) for n in self.selected()}, _bare(self.x_axis.currentText())
        self.runs = list(runs)
        names = list(self.result.data.series) if self.result is not None else []
        for widget in (self.series, self.x_axis):
            widget.blockSignals(True)
        self.series.clear()
        self.series.addItems(names)
        for i in range(self.series.count()):  # a contact's long names are cut by the list's width
            self.series.item(i).setToolTip(self.series.item(i).text())
        self.x_axis.clear()
        self.x_axis.addItems([TIME, *names])
        self.x_axis.setCurrentIndex(max(0, next((i for i, n in enumerate([TIME, *names]) if _bare(n) == x), 0)))
        for i in range(self.series.count()):
            self.series.item(i).setSelected(_bare(self.series.item(i).text()) in chosen)
        for widget in (self.series, self.x_axis):
            widget.blockSignals(False)
        self._filter_series(self.filter.text())
        if names and not self.selected():
            self.series.item(0).setSelected(True)  # replots
        else:
            self._replot()

    def _filter_series(self, text: str) -> None:
        """Show the series whose name holds `text` (any case); those hidden stay plotted if selected."""
        for i in range(self.series.count()):
            item = self.series.item(i)
            item.setHidden(text.casefold() not in item.text().casefold())

    def selected(self) -> list[str]:
        return [item.text() for item in self.series.selectedItems()]

    def select_series(self, names, x: str = TIME) -> None:
        """Plot exactly the series named (with or without their unit, in any: "theta1" and "theta1 [rad]" select
        "theta1 [deg]") against `x` (a series name, with or without its unit, or time)."""
        wanted = {_bare(n) for n in names}
        self.series.blockSignals(True)
        for i in range(self.series.count()):
            item = self.series.item(i)
            item.setSelected(_bare(item.text()) in wanted)
        self.series.blockSignals(False)
        matches = [self.x_axis.itemText(i) for i in range(self.x_axis.count())]
        index = next((i for i, n in enumerate(matches) if _bare(x) == _bare(n)), 0)
        self.x_axis.blockSignals(True)
        self.x_axis.setCurrentIndex(index)
        self.x_axis.blockSignals(False)
        self._replot()

    def _x(self, result: JobResult) -> np.ndarray | None:
        name = self.x_axis.currentText()
        if name in ("", TIME):
            return np.asarray(result.data.t, float)
        values = result.data.series.get(name)
        return None if values is None else np.asarray(values, float)

    def _replot(self) -> None:
        self.plot_item.clear()
        self.legend.clear()
        names = self.selected()
        if self.result is None:
            self.readout.setText("")
            return
        entries = []
        for r, (label, result) in enumerate(self.runs):
            x = self._x(result)
            for k, name in enumerate(names):
                if x is None or name not in result.data.series:
                    continue  # an overlaid run without this series (another model revision)
                style = Qt.PenStyle.SolidLine if r == 0 else OVERLAY_STYLES[(r - 1) % len(OVERLAY_STYLES)]
                pen = pg.mkPen(COLORS[k % len(COLORS)], width=2, style=style)
                curve = self.plot_item.plot(x, np.asarray(result.data.series[name], float), pen=pen)
                entries.append((curve, name if len(self.runs) == 1 else f"{name} · {label.split(':')[0]}"))
        self._entries = entries
        self._fill_legend()
        self._mark_colours(names)
        self._plot_errors(names)
        self._plot_contacts()
        set_axis_label(self.plot_item, "bottom", self.x_axis.currentText() or TIME)
        self._fit_left_label()
        self.plot_item.addItem(self.cursor if self._against_time() else self.markers)
        self.set_index(self.index)

    def _legend_shape(self) -> tuple[int, int]:
        """Rows and columns: as many columns as the widest entry allows across the canvas (1 to LEGEND_COLUMNS),
        and as many rows as keep the legend within a fifth of the canvas' height (1 to LEGEND_ROWS)."""
        metrics = QFontMetrics(self.font())
        widest = max((metrics.horizontalAdvance(text) for _, text in self._entries), default=0) + LEGEND_SAMPLE
        columns = max(1, min(LEGEND_COLUMNS, self.canvas.width() // widest))
        rows = max(1, min(LEGEND_ROWS, self.canvas.height() // (5 * LEGEND_ROW_HEIGHT)))
        return rows, columns

    def _fill_legend(self) -> None:
        """The entries, in `_legend_shape`'s rows and columns: where they do not all fit, the last place counts
        the curves left out (the series list beside marks every curve's colour)."""
        self.legend.clear()
        self._shape = rows, columns = self._legend_shape()
        self.legend.setColumnCount(columns)
        room = rows * columns
        shown = self._entries if len(self._entries) <= room else self._entries[: room - 1]
        for curve, text in shown:
            self.legend.addItem(curve, text)
        if len(shown) < len(self._entries):
            left_out = len(self._entries) - len(shown)
            self.legend.addItem(pg.PlotDataItem(pen=None), f"+{left_out} more (colours in the list)")

    def resizeEvent(self, event) -> None:  # Qt's name
        """The legend's shape follows the canvas' size."""
        super().resizeEvent(event)
        if self._shape != self._legend_shape():
            self._fill_legend()

    def _mark_colours(self, names: list[str]) -> None:
        """Each plotted series' colour beside its name in the list: the legend names a few of them only."""
        for i in range(self.series.count()):
            item = self.series.item(i)
            k = names.index(item.text()) if item.text() in names else None
            item.setIcon(QIcon() if k is None else _swatch(COLORS[k % len(COLORS)]))

    def _fit_left_label(self) -> None:
        """The y axis' label, or its units alone where the whole label is longer than the plot is high (the
        legend above names the series), or "several units" where those are too."""
        names = self.selected()
        text = axis_label(names) if names else ""
        room = self.plot_item.getViewBox().height()
        metrics = QFontMetrics(QFont(QApplication.font().family(), 10))
        if names and metrics.horizontalAdvance(text) > room:
            text = " | ".join(f"[{u}]" for u in dict.fromkeys(unit_of(n) for n in names) if u) or "value"
        if names and metrics.horizontalAdvance(text) > room and " | " in text:
            text = "several units"
        if text != self.plot_item.getAxis("left").labelText:
            set_axis_label(self.plot_item, "left", text)

    def _errors_of(self, names: list[str]) -> list[str]:
        """The current run's error series of the plotted ones ('error:theta1 [rad]' for 'theta1 [rad]')."""
        series = self.result.data.series
        return [ERROR_PREFIX + n for n in names if not n.startswith(ERROR_PREFIX) and ERROR_PREFIX + n in series]

    def _plot_errors(self, names: list[str]) -> None:
        """Alazard et al.'s (2024) Fig. 17: with the responses, the cross-check's errors on their own right axis
        (red), each dotted in its series' colour."""
        self.error_box.clear()
        self.error_curves = {}
        errors = self._errors_of(names) if self._against_time() else []
        self.errors.setVisible(bool(self.result.data.cross_check) and self._against_time())
        shown = errors and self.errors.isChecked()
        self.plot_item.showAxis("right", bool(shown))
        if not shown:
            return
        t = self._x(self.result)
        for k, name in enumerate(names):
            if ERROR_PREFIX + name in errors:  # dotted, in the colour of its series
                values = np.asarray(self.result.data.series[ERROR_PREFIX + name], float)
                curve = pg.PlotDataItem(t, values, pen=pg.mkPen(COLORS[k % len(COLORS)], width=1.5, style=ERROR_STYLE))
                self.error_box.addItem(curve)
                self.error_curves[ERROR_PREFIX + name] = curve
        axis = self.plot_item.getAxis("right")
        axis.setLabel(f"block − general, dotted {axis_label(errors).removeprefix(ERROR_PREFIX)}", color=ERROR_COLOR)
        self.error_box.enableAutoRange()
        self._place_error_box()

    def _plot_contacts(self) -> None:
        """The current run's contacts of its stops, against time: each impact a dashed line at its instant, each
        engagement (an impact stop holding, a compliant stop pressed) a shaded span; each says what it was."""
        contacts = self.result.data.contacts or []
        self.contacts.setVisible(bool(contacts) and self._against_time())
        self.contact_marks = []
        if not (contacts and self._against_time() and self.contacts.isChecked()):
            return
        end = float(self.result.data.t[-1])
        for c in contacts:
            if c["kind"] == "impact":
                mark = pg.InfiniteLine(c["time"], angle=90, pen=pg.mkPen(CONTACT_COLOR, width=1, style=ERROR_STYLE))
                said = f"impact on the {c['limit']} of {c['coordinate']}: {c['impulse']:.4g} {c['unit']} s, " \
                       f"{c['energy']:.4g} J lost"  # fmt: skip
            else:
                span = (c["time"], end if c["end"] is None else c["end"])
                mark = pg.LinearRegionItem(span, movable=False, brush=pg.mkBrush(CONTACT_COLOR + "30"), pen=None)
                said = f"{c['kind']} on the {c['limit']} of {c['coordinate']}, up to {c['force']:.4g} {c['unit']}"
            mark.setToolTip(f"t = {c['time']:.6g} s: {said}")
            self.plot_item.addItem(mark)
            self.contact_marks.append(mark)

    def _place_error_box(self) -> None:
        self.error_box.setGeometry(self.plot_item.getViewBox().sceneBoundingRect())

    def curves(self) -> list[pg.PlotDataItem]:
        """The plotted curves (not the cursor's markers)."""
        return [item for item in self.plot_item.listDataItems() if isinstance(item, pg.PlotDataItem)]

    def _against_time(self) -> bool:
        return self.x_axis.currentText() in ("", TIME)

    # ------------------------------------------------------------------ cursor
    def set_index(self, index: int) -> None:
        """Mark sample `index` of the current run: the time cursor, or dots on x-y curves; read the values."""
        self.index = index
        if self.result is None:
            return
        data = self.result.data
        index = int(np.clip(index, 0, len(data.t) - 1))
        names = [n for n in self.selected() if n in data.series]
        if self._against_time():
            self.cursor.blockSignals(True)
            self.cursor.setValue(float(data.t[index]))
            self.cursor.blockSignals(False)
        else:
            x = self._x(self.result)
            self.markers.setData([x[index]] * len(names), [float(data.series[n][index]) for n in names])
        values = " · ".join(f"{n} = {float(data.series[n][index]):.6g}" for n in names)
        self.readout.setText(f"t = {float(data.t[index]):.4g} s · {values}" if values else "")
        self.readout.setToolTip(self.readout.text())

    # ------------------------------------------------------------------ export
    def export_image(self, path: str, fmt: str) -> None:
        """The plot as PNG or SVG, the current run's provenance in the SVG."""
        provenance = json.dumps(self.result.provenance.to_json(), default=str) if self.result is not None else ""
        save_image(self.canvas, self.canvas.scene(), path, fmt, "MB Studio plot", provenance)
