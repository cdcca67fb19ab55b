"""An identification from a measured log (Analysis › Identify…): the summary (rank, filter, validation, what the
model does not explain), then four tabs: the logged signals with their filtered versions, the estimates with their
error bars (±3σ) beside the parameter table (σ, 3σ, the estimate each is most correlated with), the measured against
the predicted forces on the validation log, and the checks: each coordinate's training residual against the noise
floor read from the log, the known force elements the log contradicts, the rank at each precision level and what
decided it, the cut-off and why, and what was done with the log's extra columns. The signals are in the window's
display units, the estimates in SI (as the base-parameter tables). Export as CSV or JSON. Everything comes computed
from the job; this panel only draws."""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ...io.display_units import SI, DisplayUnits
from ...io.identification_table import FORMATS, identification_text
from ...jobs import JobResult
from .panel_parts import COLORS, export_button, export_path, result_layout, stale_banner, write_export
from .results_table import SI_NOTE

PLACEHOLDER = "Run Analysis › Identify… with a measured log to see the estimates here."
RAW = (170, 170, 170)
COLUMNS = ("base parameter", "value", "± σ", "σ [%]", "± 3σ", "model", "consistent", "most correlated with")
FIT_COLUMNS = ("coordinate", "training residual", "noise floor", "ratio", "verdict", "accelerations' error (× floor)")
SHOWN_RANGE = (-0.5, 2.5)  # estimate / model value: 1 is the model's value
NAMED_TICKS = 12


class IdentificationPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.units = SI  # Edit › Preferences… › Units
        self.summary = QLabel(PLACEHOLDER)
        self.summary.setWordWrap(True)
        self.stale = stale_banner()
        self.tabs = QTabWidget()
        self.signal = QComboBox()
        self.signal.currentIndexChanged.connect(self._draw_signal)
        self.signals = _plot("time", "s")
        self.estimates = _plot("base parameter (the parameter it keeps)", "")
        self.estimates.setLabel("left", "estimate / model value (±3σ)")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.checked = QComboBox()
        self.checked.currentIndexChanged.connect(self._draw_validation)
        self.validation = _plot("time", "s")
        self.tabs.addTab(_with_chooser(self.signal, self.signals), "Signals")
        split = QSplitter()
        split.addWidget(self.estimates)
        split.addWidget(self.table)
        split.setSizes([500, 500])
        self.tabs.addTab(split, "Estimates")
        self.tabs.addTab(_with_chooser(self.checked, self.validation), "Validation")
        self.fit = QTableWidget(0, len(FIT_COLUMNS))
        self.fit.setHorizontalHeaderLabels(FIT_COLUMNS)
        self.fit.verticalHeader().hide()
        self.checks = QTextBrowser()
        checks = QSplitter(Qt.Orientation.Vertical)
        checks.addWidget(self.fit)
        checks.addWidget(self.checks)
        checks.setSizes([120, 300])
        self.tabs.addTab(checks, "Checks")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(export_button(self.export, FORMATS))
        result_layout(self, self.summary, self.tabs, buttons)

    # ------------------------------------------------------------------ results
    def show_result(self, result: JobResult) -> None:
        self.result = result
        document, signals = result.data.json, result.data.signals
        self.summary.setText(f"{summary_text(document)}. {SI_NOTE}")
        _refill(self.signal, [f"{c} position" for c in signals.coordinates] + [f"{c} force" for c in signals.actuated])
        self._fill_table(document)
        self._fill_checks(document)
        self._draw_estimates(document)
        checked = result.data.validation is not None
        self.tabs.setTabEnabled(2, checked)
        _refill(self.checked, signals.actuated if checked else [])
        self.set_stale(False)

    def clear(self) -> None:
        self.result = None
        self.summary.setText(PLACEHOLDER)
        for plot in (self.signals, self.estimates, self.validation):
            plot.clear()
        self.table.setRowCount(0)
        self.fit.setRowCount(0)
        self.checks.clear()
        self.stale.hide()

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    def set_units(self, units: DisplayUnits) -> None:
        """The signals' plots in `units` (the estimates stay SI)."""
        self.units = units
        if self.result is not None:
            self._draw_signal()
            self._draw_validation()

    def shown(self, key: str) -> tuple[str, float]:
        """A logged signal's display unit ('N·m' as 'N·mm') and its SI size."""
        si = self.result.data.signals.units[key]
        unit, size = self.units.unit(si.replace("·", " "), key)
        return (unit.replace(" ", "·") if "·" in si else unit), size

    # ------------------------------------------------------------------ drawing
    def _draw_signal(self) -> None:
        """A coordinate's logged position (grey) under its filtered one, or an actuator's force under its
        filtered, decimated samples and the force the estimate predicts there."""
        self.signals.clear()
        if self.result is None or self.signal.currentIndex() < 0:
            return
        s = self.result.data.signals
        k, n = self.signal.currentIndex(), len(s.coordinates)
        self.signals.addLegend(offset=(10, 5))
        if k < n:
            name = s.coordinates[k]
            unit, size = self.shown(name)
            self.signals.setLabel("left", f"{name} [{unit}]")
            positions, filtered = (np.asarray(x)[:, k] / size for x in (s.positions, s.filtered))
            self.signals.plot(s.t, positions, pen=pg.mkPen(RAW, width=3), name="logged")
            self.signals.plot(s.t, filtered, pen=pg.mkPen(COLORS[2], width=1.5), name="filtered")
            return
        j = k - n
        name = s.actuated[j]
        unit, size = self.shown("tau_" + name)
        self.signals.setLabel("left", f"force on {name} [{unit}]")
        self.signals.plot(s.t, np.asarray(s.forces)[:, j] / size, pen=pg.mkPen(RAW), name="logged")
        kept = np.asarray(s.t_kept)
        filtered = np.asarray(s.forces_filtered)[:, j] / size
        self.signals.plot(kept, filtered, pen=pg.mkPen(COLORS[2], width=1.5), name="filtered, decimated")
        self.signals.plot(
            kept,
            np.asarray(s.predicted)[:, j] / size,
            pen=pg.mkPen(COLORS[1], width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine),
            name="predicted",
        )

    def _draw_estimates(self, document: dict) -> None:
        """Each estimated base parameter with a non-zero model value as estimate / model value with ±3σ bars
        (1: the model's value); the table lists them all."""
        self.estimates.clear()
        rows = [(i, p) for i, p in enumerate(document["base_parameters"]) if p["model_value"] and p["std"] is not None]
        if not rows:
            return
        x = np.array([i + 1 for i, _ in rows], float)
        ratio = np.array([p["value"] / p["model_value"] for _, p in rows])
        bar = np.array([3 * p["std"] / abs(p["model_value"]) for _, p in rows])
        self.estimates.addItem(pg.InfiniteLine(1.0, angle=0, pen=pg.mkPen(RAW, style=pg.QtCore.Qt.PenStyle.DashLine)))
        self.estimates.addItem(pg.ErrorBarItem(x=x, y=ratio, height=2 * bar, beam=0.3, pen=pg.mkPen(COLORS[2])))
        self.estimates.plot(x, ratio, pen=None, symbol="o", symbolSize=6, symbolBrush=COLORS[2])
        self.estimates.setYRange(*SHOWN_RANGE)
        count = len(document["base_parameters"])
        self.estimates.setXRange(0, count + 1)
        named = [(i + 1, p["kept"]) for i, p in enumerate(document["base_parameters"])]
        step = max(1, count // NAMED_TICKS)  # the parameters each base parameter keeps, as many as fit
        self.estimates.getAxis("bottom").setTicks([named[::step], []])

    def _fill_table(self, document: dict) -> None:
        """One row per base parameter (its expression), then per friction coefficient."""
        consistent = document.get("physical") or {}
        rows = [
            (
                p["expression"],
                p["value"],
                None if p["held"] else p["std"],
                p["relative_std"],
                p["model_value"],
                p.get("physical_value"),
                _partner(p),
            )
            for p in document["base_parameters"]
        ]
        rows += [
            (
                f"{f['name']} [{f['unit']}]",
                f["value"],
                f["std"],
                f["relative_std"],
                None,
                consistent.get("friction", {}).get(f["name"]),
                "",
            )
            for f in document["friction"]
        ]
        self.table.setRowCount(len(rows))
        for r, (label, value, std, relative, model, physical, partner) in enumerate(rows):
            cells = (
                label,
                _number(value),
                "held" if std is None else f"{std:.3g}",
                _number(relative, 3),
                "" if std is None else f"{3 * std:.3g}",
                _number(model),
                _number(physical),
                partner,
            )
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(label)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()

    def _fill_checks(self, document: dict) -> None:
        """The fit per coordinate in the table (a coordinate the model does not explain in red), the rest as text."""
        fit = document["adequacy"]
        per = fit.get("coordinates", {})
        rebuilt = fit.get("accelerations", {}).get("coordinates", {})
        self.fit.setRowCount(len(per))
        for r, (name, row) in enumerate(per.items()):
            ratio = row["ratio"]
            verdict = (
                "no noise floor"
                if ratio is None
                else f"NOT explained (over {fit['misfit_ratio']:g}× its noise)"
                if row["unexplained"]
                else "explained"
            )
            cells = (
                name,
                _number(row["residual_rms"], 4),
                _number(row["noise_floor"], 4),
                _number(ratio, 3),
                verdict,
                _acceleration_cell(rebuilt.get(name)),
            )
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if row["unexplained"]:
                    item.setForeground(Qt.GlobalColor.red)
                self.fit.setItem(r, c, item)
        self.fit.resizeColumnsToContents()
        self.checks.setHtml(checks_html(document))

    def _draw_validation(self) -> None:
        self.validation.clear()
        data = self.result.data.validation if self.result is not None else None
        j = self.checked.currentIndex()
        if data is None or j < 0:
            return
        name = self.result.data.signals.actuated[j]
        error = self.result.data.json["validation_relative_rms"].get(name)
        self.validation.setTitle(f"{name} on {data.file}: relative RMS error {100 * error:.3g} %")
        unit, size = self.shown("tau_" + name)
        self.validation.setLabel("left", f"force on {name} [{unit}]")
        self.validation.addLegend(offset=(10, 5))
        self.validation.plot(
            data.t,
            np.asarray(data.measured)[:, j] / size,
            pen=pg.mkPen(COLORS[0], width=1.5),
            name="measured (filtered)",
        )
        self.validation.plot(
            data.t,
            np.asarray(data.predicted)[:, j] / size,
            pen=pg.mkPen(COLORS[1], width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine),
            name="predicted",
        )

    # ------------------------------------------------------------------ export
    def export(self, fmt: str, path: str | None = None) -> bool:
        if self.result is None:
            return False
        path = export_path(self, "the identification", "identification", fmt, path)
        return path is not None and write_export(self, path, identification_text(self.result.data.json, fmt))


def summary_text(document: dict) -> str:
    f, e = document["filter"], document["estimation"]
    held = f"; held at the model's values: {', '.join(document['held'])}" if document["held"] else ""
    check = document["validation_relative_rms"]
    said = "" if check is None else f"; validation: relative RMS error {100 * check['overall']:.3g} %"
    return (
        f"{document['model']}: rank {document['rank']}, {len(document['base_parameters'])} base parameters"
        f"{' and ' + str(len(document['friction'])) + ' friction coefficients' if document['friction'] else ''} "
        f"from {e['samples']} samples (cut-off {f['cutoff_hz']:.3g} Hz, order {f['order']}, every "
        f"{f['decimation']} kept){held}{said}{summary_warnings(document)}"
    )


def summary_warnings(document: dict) -> str:
    """What the summary must not leave unsaid: coordinates the model does not explain, contradicted known
    elements, a capped cut-off."""
    fit = document["adequacy"]
    said = []
    if fit.get("unexplained"):
        said.append(f"NOT explained by the model: {', '.join(fit['unexplained'])} (see Checks)")
    contradicted = fit.get("known_forces", {}).get("contradicted", [])
    if contradicted:
        said.append(f"the log contradicts {', '.join(contradicted)}")
    if document["filter"].get("capped"):
        said.append("cut-off capped: the motion is too fast for this log's rate (see Checks)")
    return "".join(f"; {x}" for x in said)


def checks_html(document: dict) -> str:
    """The Checks tab's text: filter, precision levels, known force elements, notes."""
    f, levels, fit = document["filter"], document["precision_levels"], document["adequacy"]
    parts = [
        "<h4>Filter</h4>",
        f"<p>Cut-off {f['cutoff_hz']:.4g} Hz ({escape(f['rule'])}); velocities: {escape(f.get('velocities', ''))}; "
        f"one sample in {f['decimation']} kept, {f['edge']} dropped at each end.</p>",
        "<h4>Rank at each precision</h4>",
        f"<p>{escape(_levels_text(levels))}</p>",
    ]
    known = fit.get("known_forces")
    if known:
        parts.append("<h4>Known force elements against the log</h4>")
        if not known.get("separable"):
            parts.append(f"<p>Not separable from the parameters: {escape(known.get('why', ''))}</p>")
        else:
            rows = "".join(
                f"<tr><td>{escape(name)}</td><td>{e['share']:.4g} ± {e['std']:.2g}</td>"
                f"<td>{'CONTRADICTED' if e['contradicted'] else 'consistent'}</td></tr>"
                for name, e in known["elements"].items()
            )
            parts.append(
                '<table cellpadding="4"><tr><th>element</th><th>share of the log (model: 1)</th><th></th></tr>'
                f"{rows}</table>"
            )
    if document["notes"]:
        parts.append("<h4>Notes</h4><ul>" + "".join(f"<li>{escape(n)}</li>" for n in document["notes"]) + "</ul>")
    return "".join(parts)


def _levels_text(levels: dict) -> str:
    vp, log = levels.get("variable_precision", {}), levels.get("log", {})
    said = [f"decided by {levels.get('decided_by', '?')}"]
    if vp:
        ridge = "evident ridge" if vp.get("ridge", {}).get("evident") else "no evident ridge"
        said.append(f"variable precision ({vp['digits']} digits): rank {vp['rank']}, {ridge}")
    if log:
        double, noise = log["double"], log["noise"]
        said.append(f"the log in double precision: rank {double['rank']}{_gap(double['gap'])}")
        said.append(f"at the log's noise: rank {noise['rank']}{_gap(noise['gap'])}")
    if levels.get("grouped"):
        said.append(f"grouped (only the rounding separates them): {', '.join(levels['grouped'])}")
    return "; ".join(said)


def _acceleration_cell(check: dict | None) -> str:
    """How far the rebuilt accelerations are off, and the force error that makes against the noise floor."""
    if not check or check["relative_error"] is None or check["ratio_to_floor"] is None:
        return ""
    return f"{100 * check['relative_error']:.2g} % off: {check['ratio_to_floor']:.2g}×"


def _gap(gap: float | None) -> str:
    return "" if gap is None else f" (gap {gap:.1f} decades)"


def _partner(p: dict) -> str:
    name, r = p.get("most_correlated"), p.get("correlation")
    return "" if name is None or r is None else f"{name} ({r:+.2f})"


def _number(x: float | None, digits: int = 6) -> str:
    return "" if x is None else f"{x:.{digits}g}"


def _plot(bottom: str, unit: str) -> pg.PlotWidget:
    plot = pg.PlotWidget(background="w")
    plot.setLabel("bottom", bottom, units=unit or None)
    plot.showGrid(x=True, y=True, alpha=0.2)
    plot.setMinimumHeight(160)
    return plot


def _with_chooser(chooser: QComboBox, plot: pg.PlotWidget) -> QWidget:
    holder = QWidget()
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(chooser)
    layout.addWidget(plot, 1)
    return holder


def _refill(combo: QComboBox, items: list[str]) -> None:
    combo.blockSignals(True)
    combo.clear()
    combo.addItems(items)
    combo.blockSignals(False)
    combo.setCurrentIndex(0 if items else -1)
    combo.currentIndexChanged.emit(combo.currentIndex())
