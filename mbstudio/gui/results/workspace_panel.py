"""A parallel machine's workspace map (seed 002): the condition number of M_t, the dynamic manipulability or the
condition number of J_IK as a heat map over a plane of platform positions (axes in m, a colour bar, grey
where the platform cannot go), the value under the mouse, export as PNG, SVG, CSV and JSON. The values come
computed from the job; this panel only draws."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QWidget

from ...io.csv_text import CsvTable, csv_table
from ...io.json_text import json_text
from ...jobs import JobResult
from .panel_parts import export_plot, menu_button, result_layout, show_hover, stale_banner

EXPORT_FORMATS = ("png", "svg", "csv", "json")
PLACEHOLDER = "Run Analysis › Workspace Map… on a parallel machine to see its workspace."
UNREACHED = (225, 225, 225, 255)  # the grey of points no limb configuration reaches


class WorkspacePanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.plot = pg.PlotWidget(background="w")
        self.plot.setAspectLocked(True)
        self.plot.setMinimumHeight(180)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colors = pg.ColorBarItem(colorMap=pg.colormap.get("viridis"), interactive=False, width=15)
        self.colors.setImageItem(self.image, insert_in=self.plot.plotItem)
        self.quantity = QComboBox()
        self.quantity.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.quantity.currentIndexChanged.connect(self._draw)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.hover = QLabel(PLACEHOLDER)
        self.hover.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.stale = stale_banner()
        buttons = QHBoxLayout()
        buttons.addWidget(self.quantity)
        buttons.addWidget(self.hover, 1)
        buttons.addWidget(
            menu_button("Export", [(f"{fmt.upper()}…", lambda f=fmt: self.export(f)) for fmt in EXPORT_FORMATS])
        )
        result_layout(self, self.summary, self.plot, buttons)
        self._mouse = pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._moved)

    def show_result(self, result: JobResult) -> None:
        self.result = result
        data = result.data
        self.quantity.blockSignals(True)
        self.quantity.clear()
        for key, label in data["labels"].items():
            self.quantity.addItem(label, key)
        self.quantity.blockSignals(False)
        first, second = data["axes"]
        self.plot.setLabel("bottom", f"platform {first}", units="m")
        self.plot.setLabel("left", f"platform {second}", units="m")
        reached = np.isfinite(data["values"]["mass_condition"]).mean()
        fixed = "".join(f", {name} = {value:.4g} m" for name, value in data["fixed"].items())
        cancelled = " (cancelled: the points not done are grey)" if data.get("cancelled") else ""
        self.summary.setText(
            f"Platform '{data['platform']}': {len(data['first'])} × {len(data['second'])} positions over "
            f"{first} and {second}{fixed}; {reached:.0%} reachable{cancelled}. Colours span the 2nd to 98th "
            "percentile of the shown quantity; the readout below gives every value."
        )
        self._draw()
        self.plot.autoRange()
        self.hover.setText("Move the mouse over the map to read the value.")

    def _draw(self) -> None:
        if self.result is None or self.quantity.currentData() is None:
            return
        data = self.result.data
        values = np.asarray(data["values"][self.quantity.currentData()], float)
        finite = values[np.isfinite(values)]
        # the colours span the 2nd to 98th percentile: the few points beside a singularity would wash out the rest
        low, high = (float(np.percentile(finite, 2)), float(np.percentile(finite, 98))) if finite.size else (0.0, 1.0)
        high = high if high > low else low + 1.0
        self.image.setImage(values, levels=(low, high))
        self.image.setRect(*_rect(data["first"], data["second"]))
        self.colors.setLevels((low, high))
        lookup = self.colors.colorMap().getLookupTable(nPts=256, alpha=True)
        self.image.setLookupTable(lookup)
        self.plot.getViewBox().setBackgroundColor(UNREACHED)
        unit = data["units"][self.quantity.currentData()]
        self.colors.axis.setLabel(f"{self.quantity.currentText()} [{unit}]")

    def clear(self) -> None:
        """Back to the empty panel: another document is open."""
        self.result = None
        self.image.clear()
        self.quantity.clear()
        self.summary.clear()
        self.hover.setText(PLACEHOLDER)
        self.stale.hide()

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    # ------------------------------------------------------------------ hover
    def _moved(self, event) -> None:
        show_hover(self, event)

    def value_at(self, x: float, y: float) -> str:
        """The grid point nearest to (x, y) in m and the shown quantity there, as text; '' off the map."""
        if self.result is None or self.quantity.currentData() is None:
            return ""
        data = self.result.data
        first, second = np.asarray(data["first"]), np.asarray(data["second"])
        if not (first[0] <= x <= first[-1] and second[0] <= y <= second[-1]):
            return ""
        i, j = int(np.abs(first - x).argmin()), int(np.abs(second - y).argmin())
        value = data["values"][self.quantity.currentData()][j][i]
        shown = "out of reach" if not np.isfinite(value) else f"{value:.5g}"
        names = data["axes"]
        return f"{names[0]} = {first[i]:.4g} m, {names[1]} = {second[j]:.4g} m: {self.quantity.currentText()} {shown}"

    # ------------------------------------------------------------------ export
    def export(self, fmt: str, path: str | None = None) -> bool:
        """fmt: png, svg, csv or json (any case); text files are written atomically, a failure is reported."""
        return export_plot(
            self, "the workspace map", "workspace", fmt, path, lambda f: workspace_text(self.result, f), "Workspace map"
        )


def _rect(first: np.ndarray, second: np.ndarray) -> tuple[float, float, float, float]:
    """The image's rectangle in m: each pixel centred on its grid point."""
    dx = (first[-1] - first[0]) / max(len(first) - 1, 1)
    dy = (second[-1] - second[0]) / max(len(second) - 1, 1)
    return first[0] - dx / 2, second[0] - dy / 2, first[-1] - first[0] + dx, second[-1] - second[0] + dy


def workspace_text(result: JobResult, fmt: str) -> str | CsvTable:
    """CSV: one row per grid point (its two coordinates, then every quantity; empty where unreachable) after the
    provenance beside it. JSON: the provenance, the axes, the fixed coordinates and the grids."""
    data = result.data
    if fmt == "json":
        return json_text(
            {
                "provenance": result.provenance.to_json(),
                **{k: data[k] for k in ("axes", "fixed")},
                "first": data["first"],
                "second": data["second"],
                "values": data["values"],
            }
        )
    first, second = np.meshgrid(data["first"], data["second"])
    keys = list(data["values"])
    header = [f"{data['axes'][0]} [m]", f"{data['axes'][1]} [m]"] + [f"{k} [{data['units'][k]}]" for k in keys]
    columns = [first.ravel(), second.ravel(), *(np.asarray(data["values"][k]).ravel() for k in keys)]
    rows = ([repr(float(v)) if np.isfinite(v) else "" for v in row] for row in np.column_stack(columns))
    return csv_table(result.provenance.to_json(), header, rows)
