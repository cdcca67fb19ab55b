"""A parallel machine's workspace map (Briot and Khalil's modular method): the condition number of M_t, the dynamic
manipulability or the condition number of J_IK as a heat map over a plane of platform positions (both axes in
the window's display unit of length, a colour bar), hatched where the platform is out of reach of a limb, blank
and outlined where the grid was not computed, with a legend that says which; the value under the mouse; export
as PNG, SVG, CSV (in the display unit) and JSON (SI). The values come computed from the job (SI); this panel
only draws."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QWidget

from ...io.csv_text import CsvTable, csv_table
from ...io.display_units import SI, DisplayUnits
from ...io.json_text import json_text
from ...jobs import JobResult
from ...jobs.results import WorkspaceResult
from .panel_parts import (
    export_button,
    export_plot,
    plain_units,
    readable,
    result_layout,
    set_axis_label,
    show_hover,
    stale_banner,
)

EXPORT_FORMATS = ("png", "svg", "csv", "json")
PLACEHOLDER = "Run Analysis › Workspace Map… on a parallel machine to see its workspace."
# out of reach: grey hatching, unlike any colour of the map; outside the grid (or not computed): the blank page
HATCH, HATCH_GROUND, HATCH_CELL = (110, 110, 110, 255), (215, 215, 215, 255), 8  # pixels per cell side
LEGEND = (
    "<span style='color:#6e6e6e'>▨</span> out of reach of a limb &nbsp;&nbsp; "
    "<span style='color:#202020'>□</span> outside the computed grid (not computed)"
)


class WorkspacePanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.units = SI  # Edit › Preferences… › Units
        self.unit, self.scale = "m", 1.0  # the length unit of both axes, and how many of it make a metre
        self.plot = pg.PlotWidget(background="w")
        self.plot.setAspectLocked(True)
        self.plot.setMinimumHeight(180)
        for side in ("left", "bottom"):
            plain_units(self.plot.getAxis(side))
        readable(self.plot.plotItem)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.unreached = pg.ImageItem(axisOrder="row-major")  # the hatching under the cells out of reach
        self.outline = pg.PlotDataItem(pen=pg.mkPen("#202020", width=1))  # the computed grid's edge
        for item in (self.unreached, self.image, self.outline):
            self.plot.addItem(item)
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
        buttons.addWidget(export_button(self.export, EXPORT_FORMATS))
        result_layout(self, self.summary, self.plot, buttons)
        self._mouse = pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._moved)

    def show_result(self, result: JobResult) -> None:
        self.result = result
        data = result.data
        self.quantity.blockSignals(True)
        self.quantity.clear()
        for key, label in data.labels.items():
            self.quantity.addItem(label, key)
        self.quantity.blockSignals(False)
        self._axes()
        self.plot.autoRange()
        self.hover.setText("Move the mouse over the map to read the value.")

    def set_units(self, units: DisplayUnits) -> None:
        """Both axes, the readout and the CSV in the display unit of length."""
        self.units = units
        self.unit, size = units.unit("m")
        self.scale = 1.0 / size
        if self.result is not None:
            self._axes()
            self.plot.autoRange()

    def _axes(self) -> None:
        """The axes' labels, the summary and the map in the display unit."""
        data = self.result.data
        first, second = data.axes
        set_axis_label(self.plot.plotItem, "bottom", f"platform {first} [{self.unit}]")
        set_axis_label(self.plot.plotItem, "left", f"platform {second} [{self.unit}]")
        self.plot.setTitle(LEGEND, size="9pt", color="#202020")
        self.summary.setText(_summary(data, self.unit, self.scale))
        self._draw()

    def _draw(self) -> None:
        if self.result is None or self.quantity.currentData() is None:
            return
        data = self.result.data
        values = np.asarray(data.values[self.quantity.currentData()], float)
        finite = values[np.isfinite(values)]
        # the colours span the 2nd to 98th percentile: the few points beside a singularity would wash out the rest
        low, high = (float(np.percentile(finite, 2)), float(np.percentile(finite, 98))) if finite.size else (0.0, 1.0)
        high = high if high > low else low + 1.0
        rect = _rect(np.asarray(data.first) * self.scale, np.asarray(data.second) * self.scale)
        self.image.setImage(values, levels=(low, high))
        self.image.setRect(*rect)
        self.unreached.setImage(hatching(_out_of_reach(data)))
        self.unreached.setRect(*rect)
        x, y, width, height = rect
        self.outline.setData([x, x + width, x + width, x, x], [y, y, y + height, y + height, y])
        self.colors.setLevels((low, high))
        lookup = self.colors.colorMap().getLookupTable(nPts=256, alpha=True)
        self.image.setLookupTable(lookup)
        unit = data.units[self.quantity.currentData()]
        self.colors.axis.setLabel(f"{self.quantity.currentText()} [{unit}]")

    def clear(self) -> None:
        """Back to the empty panel: another document is open."""
        self.result = None
        for item in (self.image, self.unreached, self.outline):
            item.clear()
        self.plot.setTitle(None)
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
        """The grid point nearest to (x, y) (in the axes' unit) and the shown quantity there, as text; '' off the
        computed grid."""
        if self.result is None or self.quantity.currentData() is None:
            return ""
        data = self.result.data
        first, second = np.asarray(data.first) * self.scale, np.asarray(data.second) * self.scale
        if not (first[0] <= x <= first[-1] and second[0] <= y <= second[-1]):
            return ""
        i, j = int(np.abs(first - x).argmin()), int(np.abs(second - y).argmin())
        value = data.values[self.quantity.currentData()][j][i]
        if np.isfinite(value):
            shown = f"{self.quantity.currentText()} {value:.5g}"
        else:
            shown = "out of reach of a limb" if _out_of_reach(data)[j, i] else "not computed (the job was cancelled)"
        names = data.axes
        return f"{names[0]} = {first[i]:.4g} {self.unit}, {names[1]} = {second[j]:.4g} {self.unit}: {shown}"

    # ------------------------------------------------------------------ export
    def export(self, fmt: str, path: str | None = None) -> bool:
        """fmt: png, svg, csv or json (any case); text files are written atomically, a failure is reported."""
        return export_plot(
            self,
            "the workspace map",
            "workspace",
            fmt,
            path,
            lambda f: workspace_text(self.result, f, self.units),
            "Workspace map",
        )


def _summary(data: WorkspaceResult, unit: str, scale: float) -> str:
    first, second = data.axes
    reached = np.isfinite(data.values["mass_condition"]).mean()
    fixed = "".join(f", {name} = {value * scale:.4g} {unit}" for name, value in data.fixed.items())
    sized = " (the grid holds every position found within the limbs' reach)" if data.sized else ""
    cancelled = " (cancelled: the points not done are blank)" if data.cancelled else ""
    return (
        f"Platform '{data.platform}': {len(data.first)} × {len(data.second)} positions over "
        f"{first} and {second}{fixed}{sized}; {reached:.0%} reachable{cancelled}. Colours span the 2nd to 98th "
        "percentile of the shown quantity; the readout below gives every value."
    )


def _out_of_reach(data: WorkspaceResult) -> np.ndarray:
    """Grid points computed and found out of reach (n2, n1)."""
    values = np.asarray(data.values["mass_condition"], float)
    return np.asarray(data.computed, bool) & ~np.isfinite(values)


def hatching(cells: np.ndarray) -> np.ndarray:
    """An RGBA image (HATCH_CELL pixels per cell) with diagonal hatching over the True cells, clear elsewhere."""
    rows, columns = cells.shape
    image = np.zeros((rows * HATCH_CELL, columns * HATCH_CELL, 4), np.uint8)
    mask = np.repeat(np.repeat(cells, HATCH_CELL, axis=0), HATCH_CELL, axis=1)
    i, j = np.indices(mask.shape)
    stripe = (i + j) % (HATCH_CELL // 2) == 0
    image[mask] = HATCH_GROUND
    image[mask & stripe] = HATCH
    return image


def _rect(first: np.ndarray, second: np.ndarray) -> tuple[float, float, float, float]:
    """The image's rectangle in the axes' unit: each pixel centred on its grid point."""
    dx = (first[-1] - first[0]) / max(len(first) - 1, 1)
    dy = (second[-1] - second[0]) / max(len(second) - 1, 1)
    return first[0] - dx / 2, second[0] - dy / 2, first[-1] - first[0] + dx, second[-1] - second[0] + dy


def workspace_text(result: JobResult, fmt: str, units: DisplayUnits = SI) -> str | CsvTable:
    """CSV: one row per grid point (its two coordinates in the display unit of length, then every quantity; empty
    where unreachable), the provenance beside it. JSON: the provenance, the axes, the fixed coordinates and the
    grids (SI)."""
    data = result.data
    if fmt == "json":
        return json_text(
            {
                "provenance": result.provenance.to_json(),
                "axes": data.axes,
                "fixed": data.fixed,
                "first": data.first,
                "second": data.second,
                "values": data.values,
            }
        )
    unit, size = units.unit("m")
    first, second = (g / size for g in np.meshgrid(data.first, data.second))
    keys = list(data.values)
    header = [f"{data.axes[0]} [{unit}]", f"{data.axes[1]} [{unit}]"]
    header += [f"{k} [{data.units[k]}]" for k in keys]
    columns = [first.ravel(), second.ravel(), *(np.asarray(data.values[k]).ravel() for k in keys)]
    rows = ([repr(float(v)) if np.isfinite(v) else "" for v in row] for row in np.column_stack(columns))
    return csv_table({**result.provenance.to_json(), "units": units.spec()}, header, rows)
