"""The suspension report in the window: the page the command writes (io/suspension_report.py draws it), scaled
to the panel's width and scrolled, a summary of the design position above, and Export as PDF, PNG, SVG or CSV.
The page shows the suspension measures' display units (Edit › Preferences…, deg and mm by default), the CSV the
window's. The curves come computed from the job; this panel only shows the page."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QWidget

from ...io.display_units import DisplayUnits
from ...io.suspension_report import curves_csv, report_bytes, shown
from ...jobs import JobResult
from .panel_parts import export_button, export_path, result_layout, stale_banner, write_export

EXPORT_FORMATS = ("pdf", "png", "svg", "csv")
PLACEHOLDER = "Run Analysis › Suspension Report… on a model with a suspension measure set (the SLA sample has one)."


class PagePanel(QWidget):
    """A report's page in the window (drawn by io/, shown as an image scaled to the width and scrolled), a summary
    above it, and its export; a subclass says what the page, the CSV and the summary are."""

    placeholder: str
    note_text: str
    export_title: str  # "the suspension report": the export dialog's words
    export_stem: str  # the file name it offers

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.units = DisplayUnits()  # the window's (set_units)
        self.page = QPixmap()
        self.summary = QLabel(self.placeholder)
        self.summary.setWordWrap(True)
        self.image = QLabel()
        self.image.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.image)
        self.scroll.setWidgetResizable(False)
        self.scroll.setMinimumHeight(180)
        self.stale = stale_banner()
        buttons = QHBoxLayout()
        self.note = QLabel(self.note_text)
        self.note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        buttons.addWidget(self.note, 1)
        buttons.addWidget(export_button(self.export, EXPORT_FORMATS))
        result_layout(self, self.summary, self.scroll, buttons)

    # ------------------------------------------------------------------ what a subclass draws
    def page_bytes(self, fmt: str) -> bytes:
        raise NotImplementedError

    def csv(self):
        raise NotImplementedError

    def summary_text(self) -> str:
        raise NotImplementedError

    # ------------------------------------------------------------------ the panel
    def show_result(self, result: JobResult) -> None:
        self.result = result
        self._draw()

    def set_units(self, units: DisplayUnits) -> None:
        """The page in these units' suspension pair, the CSV in these units."""
        self.units = units
        if self.result is not None:
            self._draw()

    def _draw(self) -> None:
        self.page.loadFromData(self.page_bytes("png"), "PNG")
        self.summary.setText(self.summary_text())
        self._fit()

    def resizeEvent(self, event) -> None:  # Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """The page at the viewport's width (never wider than drawn), the rest by scrolling."""
        if self.page.isNull():
            return
        width = min(self.scroll.viewport().width() - 2, self.page.width())
        scaled = self.page.scaledToWidth(max(width, 200), Qt.TransformationMode.SmoothTransformation)
        self.image.setPixmap(scaled)
        self.image.resize(scaled.size())

    def clear(self) -> None:
        """Back to the empty panel: another document is open."""
        self.result = None
        self.page = QPixmap()
        self.image.clear()
        self.summary.setText(self.placeholder)
        self.stale.hide()

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    def export(self, fmt: str, path: str | None = None) -> bool:
        """fmt: pdf, png, svg or csv (any case); written atomically, a failure is reported."""
        if self.result is None:
            return False
        fmt = fmt.lower()
        path = export_path(self, self.export_title, self.export_stem, fmt, path)
        if path is None:
            return False
        return write_export(self, path, self.csv() if fmt == "csv" else self.page_bytes(fmt))


class SuspensionPanel(PagePanel):
    """The suspension report's page."""

    placeholder = PLACEHOLDER
    note_text = "The page as `mbstudio report` writes it, in the suspension measures' units."
    export_title, export_stem = "the suspension report", "suspension_report"

    def page_bytes(self, fmt: str) -> bytes:
        return report_bytes(self.result.data.curves, self.result.provenance.to_json(), fmt, self.units)

    def csv(self):
        return curves_csv(self.result.data.curves, self.result.provenance.to_json(), units=self.units)

    def summary_text(self) -> str:
        return _summary(self.result.data.curves, self.units)


def _summary(curves, units: DisplayUnits) -> str:
    design = curves.design
    parts = []
    for name in ("toe", "camber", "caster", "kingpin_inclination", "scrub_radius", "motion_ratio"):
        if name in design:
            unit, value = shown(*design[name], units)
            parts.append(f"{name.replace('_', ' ')} {float(value) + 0.0:.3g}{'' if unit == '–' else ' ' + unit}")
    length, travel = shown("m", curves.travel.x, units)
    stops = f" Stopped: {'; '.join(curves.stops)}." if curves.stops else ""
    return (
        f"Corner '{curves.measure}', wheel travel {travel[0]:+.4g} to {travel[-1]:+.4g} {length} by {curves.driver}. "
        f"At the design position: {', '.join(parts)}.{stops}"
    )
