"""The frequency-response panel: the Bode plot of one input/output pair of the linear model, magnitude in dB
and phase in degrees against frequency in Hz on logarithmic axes, the modes' natural frequencies marked;
choose the pair below the plots, and of a family (LPV) the member with the slider above them. The frequency axis
reads in plain numbers (0.1, 1, 10 Hz). Exports the shown pair as CSV or JSON, the plots as PNG or SVG. The job
computes every pair's response in SI; this panel draws the chosen one in the window's display units: the gain of
an output in deg per input in N mm is the SI gain times (N mm per N m)/(deg per rad), its dB shifted by as much,
and the magnitude's axis names the unit its dB refer to where the plot is high enough (the summary always does)."""

from __future__ import annotations

import json

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QApplication, QComboBox, QHBoxLayout, QLabel, QWidget

from ...io.csv_text import csv_table
from ...io.json_text import json_text
from ...jobs import JobResult
from .linear_panel import LinearPanel, signal_sizes
from .panel_parts import COLORS, LogAxis, readable, result_layout, save_image, set_axis_label, write_export

EXPORT_FORMATS = ("csv", "json", "png", "svg")
PLACEHOLDER = "Run Analysis › Linearise… to see the frequency responses."
# short enough to stand beside a plot a quarter of the panel high
LABELS = ("|H| [dB]", "phase [°]")


def gain_unit(output: str, input_: str) -> str:
    """'deg/(N mm)': an output's unit per an input's, bracketed where it is a product."""
    return f"{output}/({input_})" if " " in input_ or "/" in input_ else f"{output}/{input_}"


class BodePanel(LinearPanel):
    formats = EXPORT_FORMATS
    placeholder = PLACEHOLDER

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.input = QComboBox()
        self.output = QComboBox()
        for combo in (self.input, self.output):
            combo.currentIndexChanged.connect(self.draw)
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setBackground("w")
        self.magnitude, self.phase = (
            self.plots.addPlot(row=row, col=0, axisItems={"bottom": LogAxis("bottom")}) for row in (0, 1)
        )
        self.phase.setXLink(self.magnitude)
        for plot, label in zip((self.magnitude, self.phase), LABELS, strict=True):
            plot.setLogMode(x=True, y=False)
            plot.showGrid(x=True, y=True, alpha=0.25)
            readable(plot)
            set_axis_label(plot, "left", label)
        self.magnitude.getAxis("bottom").setStyle(showValues=False)  # read below the phase: the height goes to both
        set_axis_label(self.phase, "bottom", "frequency [Hz]")
        self.plots.setMinimumHeight(120)
        buttons = QHBoxLayout()
        for text, combo in (("input", self.input), ("output", self.output)):
            buttons.addWidget(QLabel(text))
            buttons.addWidget(combo, 1)
        buttons.addWidget(self.export_button())
        result_layout(self, self.summary, self.plots, buttons, self.picker)

    def show_result(self, result: JobResult) -> None:
        self.take(result)
        self._fill_choices()
        self.draw()

    def _fill_choices(self) -> None:
        """The inputs and outputs with their display units, the chosen pair kept."""
        for combo, key in ((self.input, "input"), (self.output, "output")):
            names = self.data.model[f"{key}s"]
            k = combo.currentIndex()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([f"{n} [{u}]" for n, u in zip(names, self.signal_units(key)[0], strict=True)])
            combo.setCurrentIndex(k if 0 <= k < len(names) else 0)
            combo.blockSignals(False)

    def signal_units(self, key: str) -> tuple[list[str], np.ndarray]:
        """The inputs' or outputs' display units and their SI sizes."""
        model = self.data.model
        return signal_sizes(model[f"{key}s"], model[f"{key}_units"], self.units)

    def member_changed(self) -> None:
        self.draw()

    def redraw(self) -> None:
        self._fill_choices()
        super().redraw()

    def choose(self, input_name: str, output_name: str) -> None:
        model = self.data.model
        self.input.setCurrentIndex(model["inputs"].index(input_name))
        self.output.setCurrentIndex(model["outputs"].index(output_name))
        self.draw()

    def pair(self) -> tuple[int, int]:
        return max(self.input.currentIndex(), 0), max(self.output.currentIndex(), 0)

    def shown(self) -> tuple[str, np.ndarray, np.ndarray]:
        """The chosen pair's gain unit ('deg/(N mm)'), magnitude in dB of it and phase in degrees (the sizes are
        positive: the phase does not change with the units)."""
        data, (j, i) = self.data, self.pair()
        (inputs, input_sizes), (outputs, output_sizes) = self.signal_units("input"), self.signal_units("output")
        shift = 20 * np.log10(input_sizes[j] / output_sizes[i])
        magnitude, phase = (np.asarray(x, float)[:, i, j] for x in (data.magnitude_db, data.phase_deg))
        return gain_unit(outputs[i], inputs[j]), magnitude + shift, phase

    def draw(self) -> None:
        if self.result is None:
            return
        data, (j, i) = self.data, self.pair()
        f = np.asarray(data.frequency_hz, float)
        gain, magnitude, phase = self.shown()
        self._fit_label(gain)
        for plot, values in ((self.magnitude, magnitude), (self.phase, phase)):
            plot.clear()
            plot.plot(
                f, np.where(np.isfinite(values), values, np.nan), pen=pg.mkPen(COLORS[2], width=2), connect="finite"
            )
            for mode in data.modes:
                if mode["frequency_hz"] > 0:  # pyqtgraph's log axis takes log10 of the position itself
                    line = pg.InfiniteLine(
                        np.log10(mode["frequency_hz"]), angle=90, pen=pg.mkPen("#b0b0b0", style=Qt.PenStyle.DashLine)
                    )
                    plot.addItem(line)
            plot.enableAutoRange()
        model, inputs, outputs = data.model, self.signal_units("input")[0], self.signal_units("output")[0]
        self.summary.setText(
            self.member_heading() + f"{model['outputs'][i]} [{outputs[i]}] per {model['inputs'][j]} "
            f"[{inputs[j]}]: H(jω) = C (jωI − A)⁻¹ B + D, |H| in dB re 1 {gain}; dashed: the modes' natural "
            "frequencies."
        )

    def _fit_label(self, gain: str) -> None:
        """'|H| [dB re 1 deg/(N mm)]', or '|H| [dB]' where that is longer than the plot is high."""
        text = f"|H| [dB re 1 {gain}]"
        if QFontMetrics(QFont(QApplication.font().family(), 10)).horizontalAdvance(text) > self.magnitude.height():
            text = LABELS[0]
        if text != self.magnitude.getAxis("left").labelText:
            set_axis_label(self.magnitude, "left", text)

    def resizeEvent(self, event) -> None:  # noqa: N802  (Qt's name)
        super().resizeEvent(event)
        if self.result is not None:
            self._fit_label(self.shown()[0])

    def clear(self) -> None:
        super().clear()
        self.magnitude.clear()
        self.phase.clear()
        self.input.clear()
        self.output.clear()

    def export(self, fmt: str, path: str | None = None) -> bool:
        """csv or json: the shown pair's response; png or svg: the plots."""
        fmt, path = fmt.lower(), self.export_target("the frequency response", "frequency_response", fmt, path)
        if path is None:
            return False
        provenance = self.provenance()
        if fmt in ("png", "svg"):
            save_image(
                self.plots, self.plots.scene(), path, fmt, "Frequency response", json.dumps(provenance, default=str)
            )
            return True
        data, (j, i) = self.data, self.pair()
        model = data.model
        gain, magnitude, phase = self.shown()
        columns = {
            "frequency [Hz]": np.asarray(data.frequency_hz, float),
            f"magnitude [dB re 1 {gain}]": magnitude,
            "phase [deg]": phase,
        }
        pair = {"input": model["inputs"][j], "output": model["outputs"][i]}
        if fmt == "json":
            return write_export(self, path, json_text({"provenance": provenance, **pair, **columns}))
        rows = ([repr(float(x)) for x in row] for row in np.column_stack(list(columns.values())))
        return write_export(self, path, csv_table({**provenance, **pair}, list(columns), rows))
