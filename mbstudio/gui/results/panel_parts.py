"""What the result panels share: the stale banner, the layout, menu buttons, and exporting a file (the Save
dialog, an atomic write, and a message when it fails), so the panels' own Export buttons and File › Export
behave alike."""

from __future__ import annotations

import json

import pyqtgraph as pg
import pyqtgraph.exporters as exporters
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QMenu, QMessageBox, QToolButton, QVBoxLayout, QWidget

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
}


class LogAxis(pg.AxisItem):
    """A logarithmic axis labelled in plain numbers, 0.01, 0.1, 1, 10, 100, never 10¹ beside 0.1."""

    def logTickStrings(self, values, scale, spacing) -> list[str]:  # pyqtgraph calls it in log mode
        return [f"{10.0**v * scale:.4g}" for v in values]


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
