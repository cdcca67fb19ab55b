"""The SVD ridge: log10 σ_i against i for DP and every VP precision, each with its tolerance line, the
chosen rank and the ridge depth; the value under the mouse; export as PNG, SVG, CSV and JSON. The log10 values
come computed from the job (in mpmath), so this panel only draws."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from ...io.csv_text import CsvTable, csv_table
from ...io.json_text import json_text
from ...jobs import JobResult
from .panel_parts import (
    AXIS_TEXT,
    COLORS,
    export_button,
    export_plot,
    readable,
    result_layout,
    set_axis_label,
    show_hover,
    stale_banner,
)

EXPORT_FORMATS = ("png", "svg", "csv", "json")


PLACEHOLDER = "Run Analysis › Base parameters to see the singular values."


class RidgePanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.plot = pg.PlotWidget(background="w")
        item = self.plot.plotItem
        readable(item)
        set_axis_label(item, "bottom", "index i of the singular value σ_i")
        set_axis_label(item, "left", "log10 σ_i")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setMinimumHeight(150)  # the spectrum needs height to show a ridge of tens of decades
        # the legend in its own column right of the plot (exported with it), never over the curves, which need
        # the height more than the width: the curves, then what the lines and marks mean
        self.legend = pg.LegendItem(labelTextColor=AXIS_TEXT, labelTextSize="8pt", verSpacing=-8)
        item.layout.addItem(self.legend, 1, 3, 3, 1)  # beside the plot and its index axis: their height
        self.ranks = QLabel()
        self.ranks.setWordWrap(True)
        self.hover = QLabel(PLACEHOLDER)
        self.stale = stale_banner()
        # a long hover text must not widen the window
        self.hover.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        buttons = QHBoxLayout()
        buttons.addWidget(self.hover, 1)
        buttons.addWidget(export_button(self.export, EXPORT_FORMATS))
        result_layout(self, self.ranks, self.plot, buttons)
        self._mouse = pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._moved)

    def show_result(self, result: JobResult) -> None:
        self.result = result
        self.plot.clear()
        self.legend.clear()
        self.curves = {}
        lines = []
        for k, spectrum in enumerate(result.data.spectra):
            color = COLORS[k % len(COLORS)]
            self._draw(spectrum, color)
            lines.append(_rank_text(spectrum, color))
        self._explain(any(not all(map(math.isfinite, s["log10_sigma"])) for s in result.data.spectra))
        self.ranks.setText("<br>".join(lines))
        self.plot.autoRange()
        self.hover.setText("Move the mouse over a point to read σ_i.")

    def clear(self) -> None:
        """Back to the empty panel: another document is open."""
        self.result, self.curves = None, {}
        self.plot.clear()
        self.legend.clear()
        self.ranks.clear()
        self.hover.setText(PLACEHOLDER)
        self.stale.hide()

    def _draw(self, s: dict, color: str) -> None:
        y = np.array([v if math.isfinite(v) else np.nan for v in s["log10_sigma"]])
        x = np.arange(1, len(y) + 1)
        dashed = Qt.PenStyle.DashLine
        self.curves[s["label"]] = self.plot.plot(
            x,
            y,
            pen=pg.mkPen(color, width=2),
            symbol="o",
            symbolSize=5,
            symbolBrush=color,
            symbolPen=None,
            name=s["label"],
            connect="finite",
        )
        self.legend.addItem(self.curves[s["label"]], s["label"])
        tolerance = pg.InfiniteLine(
            s["log10_tolerance"],
            angle=0,
            pen=pg.mkPen(color, style=dashed),
            label=f"tolerance {s['label']}",
            labelOpts={"color": color, "position": 0.97, "anchors": [(1, 1), (1, 1)]},
        )
        self.plot.addItem(tolerance)
        r = s["rank"]
        self.plot.addItem(pg.InfiniteLine(r + 0.5, angle=90, pen=pg.mkPen(color, style=Qt.PenStyle.DotLine)))
        # the ridge itself: a thick bar from σ_r down to σ_(r+1) (to the plot's floor when that is zero)
        finite = y[np.isfinite(y)]
        top = y[r - 1] if r >= 1 else finite.max()
        bottom = y[r] if r < len(y) and math.isfinite(y[r]) else finite.min() - 5
        self.plot.plot([r + 0.5, r + 0.5], [top, bottom], pen=pg.mkPen(color, width=5))

    def _explain(self, stopping: bool) -> None:
        """Legend entries for the marks: the tolerance (dashed), the rank (dotted), the ridge (thick bar), and,
        where a curve stops short, why."""
        grey = "#606060"
        marks = [
            (pg.mkPen(grey, style=Qt.PenStyle.DashLine), "tolerance (dashed)"),
            (pg.mkPen(grey, style=Qt.PenStyle.DotLine), "rank r (dotted)"),
            (pg.mkPen(grey, width=5), "ridge: σ_r down to σ_r+1"),
        ]
        if stopping:
            marks.append((None, "a curve ends where the rest<br>of its σ_i are 0 exactly"))
        for pen, text in marks:
            self.legend.addItem(pg.PlotDataItem([], [], pen=pen), text)

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    # ------------------------------------------------------------------ hover
    def _moved(self, event) -> None:
        show_hover(self, event)

    def value_at(self, x: float, y: float) -> str:
        """The point nearest to (x, y) in plot coordinates, as text; '' when there is no result."""
        if self.result is None:
            return ""
        i = round(x)
        best = None
        for s in self.result.data.spectra:
            if 1 <= i <= len(s["log10_sigma"]):
                distance = abs(s["log10_sigma"][i - 1] - y)
                if best is None or distance < best[0]:
                    best = (distance, s)
        if best is None:
            return ""
        s = best[1]
        return f"{s['label']}: σ_{i} = {_short(s['singular_values'][i - 1])}  (log10 {s['log10_sigma'][i - 1]:.3f})"

    # ------------------------------------------------------------------ export
    def export(self, fmt: str, path: str | None = None) -> bool:
        """fmt: png, svg, csv or json (any case); text files are written atomically, a failure is reported."""
        return export_plot(self, "the ridge", "ridge", fmt, path, lambda f: spectra_text(self.result, f), "SVD ridge")


def _rank_text(s: dict, color: str) -> str:
    depth = "∞" if math.isinf(s["log10_depth"]) else f"{s['log10_depth']:.1f}"
    evident = "evident" if s["evident"] else "not evident"
    return (
        f"<span style='color:{color}'>■ <b>{s['label']}</b>: rank {s['rank']}, ridge depth {depth} "
        f"decades ({evident})</span>"
    )


def _short(text: str, digits: int = 8) -> str:
    try:
        return f"{float(text):.{digits}g}" if abs(float(text)) > 1e-300 else text[: digits + 8]
    except ValueError:
        return text


def spectra_text(result: JobResult, fmt: str) -> str | CsvTable:
    """CSV: one row per index, σ_i in full digits per curve, then log10 σ_i; the provenance beside it.
    JSON: the provenance and each curve with its singular values (full digits, as text), tolerance,
    rank and ridge depth."""
    spectra = result.data.spectra
    if fmt == "json":
        return json_text({"provenance": result.provenance.to_json(), "spectra": spectra})
    header = ["i"] + [f"sigma {s['label']}" for s in spectra] + [f"log10 sigma {s['label']}" for s in spectra]
    rows = []
    for i in range(max(len(s["singular_values"]) for s in spectra)):
        row = [s["singular_values"][i] if i < len(s["singular_values"]) else "" for s in spectra]
        row += [f"{s['log10_sigma'][i]:.6f}" if i < len(s["log10_sigma"]) else "" for s in spectra]
        rows.append([i + 1, *row])
    return csv_table(result.provenance.to_json(), header, rows)
