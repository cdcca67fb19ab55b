"""A handling manoeuvre's own plot (Analysis › Manoeuvre…; simulation/manoeuvres.py computes everything, this panel
only draws): the steady-state runs as the handling diagram, the road-wheel steer δ_f − δ_r and the understeer angle
δ_f − δ_r − L r / V against the lateral acceleration with the least-squares line whose slope is the understeer
gradient; the step steer's yaw-rate response with the half-input instant, the response time (90 % of the steady
yaw rate), the peak and its overshoot marked; the other manoeuvres' yaw rate in time. Angles in degrees and
accelerations in g, as ISO 4138 and ISO 7401 report them. Export as PNG, SVG or CSV (the manoeuvre's table)."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from ...io.csv_text import csv_table
from ...io.display_units import SI, DisplayUnits
from ...jobs import JobResult
from ...jobs.options import options_of
from .panel_parts import (
    AXIS_TEXT,
    COLORS,
    export_button,
    export_plot,
    plain_units,
    readable,
    result_layout,
    set_axis_label,
    stale_banner,
)

PLACEHOLDER = "Run Analysis › Manoeuvre… on a vehicle with Magic Formula tyres (samples/vehicle_handling.mbs)."
FORMATS = ("png", "svg", "csv")
G = 9.81
DASH = pg.QtCore.Qt.PenStyle.DashLine


class HandlingPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.units = SI  # the plot keeps degrees and g whatever the display units
        self.summary = QLabel(PLACEHOLDER)
        self.summary.setWordWrap(True)
        self.stale = stale_banner()
        self.plot = pg.PlotWidget(background="w")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setMinimumHeight(160)
        readable(self.plot.plotItem)
        for side in ("left", "bottom"):
            plain_units(self.plot.plotItem.getAxis(side))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(export_button(self.export, FORMATS))
        result_layout(self, self.summary, self.plot, buttons)

    def show_result(self, result: JobResult) -> None:
        self.result = result
        self.plot.clear()
        kind = result.provenance.options.get("kind")
        # where the curves leave room: top left of a rising handling diagram, bottom right of a settled response
        diagram = kind in ("steady_state", "constant_radius")
        self.plot.addLegend(offset=(10, 5) if diagram else (-10, -10), labelTextColor=AXIS_TEXT)
        table = {name: np.asarray(values, float) for name, _, values in result.data.table}
        figures = result.data.figures
        if diagram:
            self.summary.setText(self._handling_diagram(table, figures, kind == "constant_radius"))
        elif kind == "step_steer":
            self.summary.setText(self._yaw_response(table, figures))
        else:
            self._yaw_rate(table)
            self.summary.setText(f"{kind}: the yaw rate in time; its figures are in the job's title and notes.")
        self.set_stale(False)

    def clear(self) -> None:
        self.result = None
        self.summary.setText(PLACEHOLDER)
        self.plot.clear()
        self.stale.hide()

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    def set_units(self, units: DisplayUnits) -> None:
        self.units = units

    def export(self, fmt: str, path: str | None = None) -> bool:
        """fmt: png, svg or csv (any case); the CSV is the manoeuvre's table with its figures in the provenance."""
        return export_plot(self, "the handling plot", "handling", fmt, path, lambda _: self.csv(), "Handling")

    def csv(self):
        data = self.result.data
        header = [f"{name} [{unit}]" for name, unit, _ in data.table]
        rows = zip(*(np.asarray(values, float) for _, _, values in data.table), strict=True)
        figures = {k: {"value": v, "unit": u} for k, (v, u) in data.figures.items()}
        provenance = self.result.provenance.to_json() | {"figures": figures}
        return csv_table(provenance, header, ([f"{x:.12g}" for x in row] for row in rows))

    # ------------------------------------------------------------------ drawing
    def _axes(self, bottom: str, left: str) -> None:
        set_axis_label(self.plot.plotItem, "bottom", bottom)
        set_axis_label(self.plot.plotItem, "left", left)

    def _handling_diagram(self, table: dict, figures: dict, constant_radius: bool = False) -> str:
        """Steer angles (deg) against a_y (g), one point per speed (constant radius: a curve over the readings while
        the circle was held), and the understeer angle's fitted line."""
        from ...simulation.manoeuvres import held_readings  # when drawn: the window starts without the simulation code

        self._axes("lateral acceleration a_y [g]", "angle [deg]")
        radius = self.result.provenance.options.get("radius") if constant_radius else None
        read = held_readings(table["t"], table["radius_error"], radius) if constant_radius else slice(None)
        ay = table["lateral_acceleration"][read] / G
        steer = np.degrees(table["front_steer"] - table["rear_steer"])[read]
        understeer = np.degrees(table["understeer_angle"])[read]
        symbols = {"pen": None, "symbolSize": 9} if not constant_radius else {"symbolSize": 0}
        self.plot.plot(ay, steer, symbol="s", symbolBrush=COLORS[2], name="road-wheel steer δf − δr", **symbols)
        self.plot.plot(ay, understeer, symbol="o", symbolBrush=COLORS[1], name="understeer angle", **symbols)
        if "understeer_gradient" not in figures:
            return "Steady-state circular driving: one speed; the gradients need two or more."
        slope = figures["understeer_gradient"][0]
        fitted = np.abs(ay) <= figures.get("fitted_up_to", (math.inf, ""))[0]  # constant radius: its linear range
        intercept = float(np.mean((understeer - slope * ay)[fitted]))  # the least-squares line through the centroid
        span = np.array([0.0, float(np.max(np.abs(ay)))]) * np.sign(np.mean(ay) or 1.0)
        self.plot.plot(span, intercept + slope * span, pen=pg.mkPen(COLORS[1], width=1.5, style=DASH),
                       name=f"K = {slope:.3g} deg/g")  # fmt: skip
        roll = figures.get("roll_gradient", (math.nan, ""))[0]
        if constant_radius:
            handwheel = figures["understeer_gradient_from_handwheel"][0]
            lost, fitted_up_to = figures.get("circle_lost_at_speed"), figures["fitted_up_to"][0]
            limit = (f" The car left the circle at {lost[0]:.4g} m/s: lateral acceleration at the limit "
                     f"{figures['lateral_acceleration_at_limit'][0]:.3g} g; drawn and fitted before."
                     if lost else "")  # fmt: skip
            return (f"Handling diagram (ISO 4138, constant radius, speed raised to {table['speed'][-1]:.4g} m/s): "
                    f"understeer gradient {slope:.4g} deg/g (from the handwheel angle {handwheel:.4g} deg/g), "
                    f"roll gradient {roll:.4g} deg/g, fitted up to {fitted_up_to:.3g} g.{limit}")  # fmt: skip
        speeds = ", ".join(f"{v:.4g}" for v in table["speed"])
        return (f"Handling diagram (ISO 4138, constant handwheel angle) at {speeds} m/s: understeer gradient "
                f"{slope:.4g} deg/g, roll gradient {roll:.4g} deg/g.")  # fmt: skip

    def _yaw_rate(self, table: dict) -> np.ndarray:
        """The yaw rate (deg/s) in time, drawn; returned."""
        self._axes("time [s]", "yaw rate r [deg/s]")
        r = np.degrees(table["yaw_rate"])
        self.plot.plot(table["t"], r, pen=pg.mkPen(COLORS[0], width=1.5), name="yaw rate")
        return r

    def _yaw_response(self, table: dict, figures: dict) -> str:
        """The yaw rate with the half-input instant, the 90 % response point, the peak and the steady level."""
        t, r = table["t"], self._yaw_rate(table)
        options = options_of("manoeuvre", _tuples(self.result.provenance.options))
        half = options.step_at + options.rise / 2
        steady = figures["steady_yaw_rate"][0]
        response, peak = figures["response_time"][0], figures["peak_response_time"][0]
        self.plot.addItem(pg.InfiniteLine(half, angle=90, pen=pg.mkPen(COLORS[5], style=DASH)))
        self.plot.plot([t[0], t[-1]], [steady, steady], pen=pg.mkPen(COLORS[2], style=DASH), name="steady yaw rate")
        marks = ((half + response, COLORS[3], f"response time {response:.3g} s"),
                 (half + peak, COLORS[1], f"peak {peak:.3g} s, overshoot {figures['overshoot'][0]:.3g} %"))  # fmt: skip
        for at, color, name in marks:
            if math.isfinite(at):
                self.plot.plot([at], [float(np.interp(at, t, r))], pen=None, symbol="o", symbolSize=10,
                               symbolBrush=color, name=name)  # fmt: skip
        return (
            f"Step steer (ISO 7401) at {figures['speed'][0]:.4g} m/s: steady yaw rate {steady:.4g} deg/s, "
            f"gain {figures['yaw_rate_gain'][0]:.4g} 1/s; times from 50 % of the input (the dashed line)."
        )


def _tuples(options: dict) -> dict:
    """The job's options as ManoeuvreOptions takes them (its lists as tuples)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
