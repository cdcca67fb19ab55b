"""What the result panels share: the stale banner, the layout, menu buttons, and exporting a file (the Save
dialog, an atomic write, and a message when it fails), so the panels' own Export buttons and File › Export
behave alike."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters as exporters
from PySide6.QtGui import QFont, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QMessageBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...io.csv_text import CsvTable, write_output
from ...model import ModelError

COLORS = ("#202020", "#d0602a", "#2a70c0", "#40a040", "#a040a0", "#a08020")
STALE_TEXT = "STALE: the model was edited after this run; run the analysis again."
FORMAT_NAMES = {
    "csv": "CSV",
    "json": "JSON",
    "tex": "LaTeX",
    "png": "PNG image",
    "svg": "SVG image",
    "parquet": "Parquet",
    "mat": "MATLAB file",
    "npz": "NumPy archive",
    "pdf": "PDF document",
}


AXIS_TEXT = "#202020"  # axis labels and tick values: dark, as the text around the plot
AXIS_FONT = "10pt"
# a log axis labels these leading digits of its ticks, the most that leave each label its room (see LogAxis)
MANTISSAS = ((1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 5), (1, 2, 5), (1,))
LABEL_ROOM = {"horizontal": 46, "vertical": 18}  # px a tick label needs along the axis


class LogAxis(pg.AxisItem):
    """A logarithmic axis labelled in plain numbers, 0.01, 0.1, 1, 10, 100, never 10¹ beside 0.1; of the minor
    ticks it labels only as many as have room (2 to 9, then 2, 3, 5, then 2, 5, then none), so that labels
    below 1 never run into each other."""

    def logTickStrings(self, values, scale, spacing) -> list[str]:  # pyqtgraph calls it in log mode
        shown = self._labelled()
        out = []
        for v in values:
            mantissa = round(10.0 ** (v - np.floor(v + 1e-9)))
            out.append(f"{10.0**v * scale:.4g}" if mantissa in shown else "")
        return out

    def _labelled(self) -> tuple[int, ...]:
        """The leading digits labelled at this axis length: the first set whose closest labels (in decades)
        are as far apart as a label needs."""
        horizontal = self.orientation in ("top", "bottom")
        length = self.geometry().width() if horizontal else self.geometry().height()
        decades = abs(self.range[1] - self.range[0]) or 1.0
        room = LABEL_ROOM["horizontal" if horizontal else "vertical"] / max(length / decades, 1e-9)
        for mantissas in MANTISSAS[:-1]:
            closest = min(np.log10(b / a) for a, b in zip(mantissas, [*mantissas[1:], 10], strict=True))
            if closest >= room:
                return mantissas
        return MANTISSAS[-1]


def readable(item: pg.PlotItem) -> None:
    """Dark tick values on every axis of the plot, at the size of the window's text."""
    for side in ("left", "bottom", "right", "top"):
        axis = item.getAxis(side)
        axis.setTextPen(AXIS_TEXT)
        axis.setTickFont(QFont(QApplication.font().family(), 9))


def set_axis_label(item: pg.PlotItem, side: str, text: str, color: str = AXIS_TEXT) -> None:
    """An axis label in dark text at the window's size (pyqtgraph's default is pale grey and small)."""
    item.setLabel(side, text, color=color, **{"font-size": AXIS_FONT})


def plain_units(axis: pg.AxisItem) -> None:
    """The axis' values in its own unit, never rescaled by an SI prefix (enableAutoSIPrefix(False) alone keeps
    the scale pyqtgraph found for the range the axis had then: a colour bar from -0.3 to 0.3 read -300 to 300)."""
    axis.setSIPrefixEnableRanges(())
    axis.enableAutoSIPrefix(False)


def result_layout(
    panel: QWidget, summary: QLabel, body: QWidget, buttons: QHBoxLayout, above: QWidget | None = None
) -> None:
    """A result panel from top to bottom: its stale banner (`panel.stale`), summary, what goes `above` the body
    (a family's member slider), body, buttons."""
    layout = QVBoxLayout(panel)
    layout.setContentsMargins(2, 2, 2, 2)
    layout.addWidget(panel.stale)
    layout.addWidget(summary)
    if above is not None:
        layout.addWidget(above)
    layout.addWidget(body, 1)
    layout.addLayout(buttons)


def stale_banner() -> QLabel:
    """The banner a result panel shows (hidden until then) once the model is edited after the run."""
    banner = QLabel(STALE_TEXT)
    banner.setStyleSheet("background: #ffe2b0; color: #804000; padding: 3px;")
    banner.setWordWrap(True)
    banner.hide()
    return banner


def menu_button(text: str, entries: list[tuple[str, object]]) -> QToolButton:
    """One narrow button with a menu: panels side by side must not add up to a wide window."""
    button = QToolButton()
    button.setText(text)
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    menu = QMenu(button)
    for label, slot in entries:
        menu.addAction(label).triggered.connect(lambda _=False, s=slot: s())
    button.setMenu(menu)
    return button


def export_button(export: Callable[[str], object], formats) -> QToolButton:
    """The Export button of a panel: one entry per format ('CSV…'), each calling export(format)."""
    return menu_button("Export", [(f"{fmt.upper()}…", lambda f=fmt: export(f)) for fmt in formats])


def export_path(parent: QWidget, what: str, stem: str, fmt: str, path: str | None) -> str | None:
    """`path`, else the file the user picks in a Save dialog for `what` as `fmt`; None when cancelled."""
    if path is None:
        name = FORMAT_NAMES[fmt]
        path, _ = QFileDialog.getSaveFileName(parent, f"Export {what} as {name}", f"{stem}.{fmt}", f"{name} (*.{fmt})")
    return path or None


def write_export(parent: QWidget, path: str, text: str | bytes | CsvTable) -> bool:
    """Write `text` (or bytes, or a CSV table with its provenance beside it) atomically; on failure say so (the
    target is left as it was) and return False."""
    try:
        write_output(path, text)
    except ModelError as exc:
        QMessageBox.critical(parent, "Export failed", f"Nothing was written:\n\n{exc}")
        return False
    return True


def save_image(view: QWidget, scene_item: pg.GraphicsObject, path: str, fmt: str, title: str, description: str) -> None:
    """A plot as PNG (pyqtgraph's exporter of `scene_item`, at the widget's resolution) or SVG. SVG goes
    through Qt's generator rendering the whole `view`: pyqtgraph's SVGExporter fails on the path syntax of
    current Qt (pyqtgraph issues #3485, #3495). `description` (the provenance) is kept in the SVG."""
    if fmt == "png":
        exporters.ImageExporter(scene_item).export(path)
        return
    generator = QSvgGenerator()
    generator.setFileName(path)
    generator.setSize(view.size())
    generator.setViewBox(view.rect())
    generator.setTitle(title)
    generator.setDescription(description)
    painter = QPainter(generator)
    view.render(painter)
    painter.end()


def export_plot(panel: QWidget, what: str, stem: str, fmt: str, path: str | None, text, title: str) -> bool:
    """A plot panel's Export: `text(fmt)` for csv or json, written atomically; png or svg of `panel.plot`, the
    result's provenance kept in the SVG. False when there is no result, the dialog is cancelled or a write fails."""
    if panel.result is None:
        return False
    fmt = fmt.lower()
    path = export_path(panel, what, stem, fmt, path)
    if path is None:
        return False
    if fmt in ("csv", "json"):
        return write_export(panel, path, text(fmt))
    provenance = json.dumps(panel.result.provenance.to_json(), default=str)
    save_image(panel.plot, panel.plot.plotItem, path, fmt, title, provenance)
    return True


def show_hover(panel: QWidget, event) -> None:
    """The panel's readout of the point under the mouse (its `value_at` in plot coordinates)."""
    point = panel.plot.plotItem.vb.mapSceneToView(event[0])
    text = panel.value_at(point.x(), point.y())
    if text:
        panel.hover.setText(text)
