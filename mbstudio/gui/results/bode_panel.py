"""The frequency-response panel: the Bode plot of one input/output pair of the linear model, magnitude in dB
and phase in degrees against frequency in Hz on logarithmic axes, the modes' natural frequencies marked;
choose the pair below the plots, and of a family (LPV) the member with the slider above them. The frequency axis
reads in plain numbers (0.1, 1, 10 Hz). Exports the shown pair as CSV or JSON, the plots as PNG or SVG. The job
computes every pair's response; this panel only draws the chosen one."""

from __future__ import annotations

import json

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from ...io.csv_text import csv_table
from ...io.json_text import json_text
from ...jobs import JobResult
from .linear_panel import LinearPanel
from .panel_parts import COLORS, LogAxis, result_layout, save_image, write_export

EXPORT_FORMATS = ("csv", "json", "png", "svg")
PLACEHOLDER = "Run Analysis › Linearise… to see the frequency responses."
# short enough to stand beside a plot a quarter of the panel high
LABELS = ("|H| [dB]", "phase [°]")


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
            plot.getAxis("bottom").setStyle(maxTextLevel=0)  # decades only: the minor labels run together
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.setLabel("left", label)
        self.magnitude.getAxis("bottom").setStyle(showValues=False)  # read below the phase: the height goes to both
        self.phase.setLabel("bottom", "frequency [Hz]")
        self.plots.setMinimumHeight(120)
        buttons = QHBoxLayout()
        for text, combo in (("input", self.input), ("output", self.output)):
            buttons.addWidget(QLabel(text))
            buttons.addWidget(combo, 1)
        buttons.addWidget(self.export_button())
        result_layout(self, self.summary, self.plots, buttons, self.picker)

    def show_result(self, result: JobResult) -> None:
        self.take(result)
        model = self.data["model"]
        for combo, names, units in (
            (self.input, model["inputs"], model["input_units"]),
            (self.output, model["outputs"], model["output_units"]),
        ):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([f"{n} [{u}]" for n, u in zip(names, units, strict=True)])
            combo.blockSignals(False)
        self.draw()

    def member_changed(self) -> None:
        self.draw()

    def choose(self, input_name: str, output_name: str) -> None:
        model = self.data["model"]
        self.input.setCurrentIndex(model["inputs"].index(input_name))
        self.output.setCurrentIndex(model["outputs"].index(output_name))
        self.draw()

    def pair(self) -> tuple[int, int]:
        return max(self.input.currentIndex(), 0), max(self.output.currentIndex(), 0)

    def draw(self) -> None:
        if self.result is None:
            return
        data, (j, i) = self.data, self.pair()
        f = np.asarray(data["frequency_hz"], float)
        magnitude, phase = (np.asarray(data[k], float)[:, i, j] for k in ("magnitude_db", "phase_deg"))
        for plot, values in ((self.magnitude, magnitude), (self.phase, phase)):
            plot.clear()
            plot.plot(
                f, np.where(np.isfinite(values), values, np.nan), pen=pg.mkPen(COLORS[2], width=2), connect="finite"
            )
            for mode in data["modes"]:
                if mode["frequency_hz"] > 0:  # pyqtgraph's log axis takes log10 of the position itself
                    line = pg.InfiniteLine(
                        np.log10(mode["frequency_hz"]), angle=90, pen=pg.mkPen("#b0b0b0", style=Qt.PenStyle.DashLine)
                    )
                    plot.addItem(line)
            plot.enableAutoRange()
        model = data["model"]
        self.summary.setText(
            self.member_heading() + f"{model['outputs'][i]} [{model['output_units'][i]}] per {model['inputs'][j]} "
            f"[{model['input_units'][j]}]: H(jω) = C (jωI − A)⁻¹ B + D; dashed: the modes' natural frequencies."
        )

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
        model = data["model"]
        columns = {
            "frequency [Hz]": np.asarray(data["frequency_hz"], float),
            "magnitude [dB]": np.asarray(data["magnitude_db"], float)[:, i, j],
            "phase [deg]": np.asarray(data["phase_deg"], float)[:, i, j],
        }
        pair = {"input": model["inputs"][j], "output": model["outputs"][i]}
        if fmt == "json":
            return write_export(self, path, json_text({"provenance": provenance, **pair, **columns}))
        rows = ([repr(float(x)) for x in row] for row in np.column_stack(list(columns.values())))
        return write_export(self, path, csv_table({**provenance, **pair}, list(columns), rows))
