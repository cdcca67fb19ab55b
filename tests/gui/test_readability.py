"""Everything readable: log-axis labels never run together, the status bar's message ends
before its indicators, job titles and run names whole, a small plot keeps its y label, x-axis choice and readout,
the ridge's legend explains its marks. Each checked at 1280 x 800 and 1920 x 1080."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QFontMetrics

from mbstudio.gui.results.panel_parts import LABEL_ROOM, LogAxis
from mbstudio.gui.results.ridge_panel import RidgePanel
from mbstudio.jobs import DONE

from .test_workbench import shot

SIZES = [(1280, 800), (1920, 1080)]


@pytest.mark.parametrize("width", [300, 700, 1500, 3000])
def test_a_log_axis_labels_no_two_ticks_closer_than_a_label_needs(qtbot, width):
    """Below 1 Hz pyqtgraph labelled 0.006, 0.007, 0.008, 0.009 into one blot: now the labelled ticks of every
    level stand at least a label's width apart, and the decades are always labelled."""
    widget = pg.PlotWidget(axisItems={"bottom": LogAxis("bottom")})
    qtbot.addWidget(widget)
    widget.resize(width, 200)
    widget.setLogMode(x=True, y=False)
    widget.setXRange(np.log10(0.004), np.log10(40), padding=0)
    widget.show()
    qtbot.waitExposed(widget)
    axis = widget.getAxis("bottom")
    ticks = axis.tickValues(*axis.range, axis.geometry().width())
    values = sorted({round(v, 9) for _, level in ticks for v in level})  # a tick on two levels is drawn once
    labelled = sorted(v for v, text in zip(values, axis.logTickStrings(values, 1.0, 1.0), strict=True) if text)
    pixels = np.diff(labelled) * axis.geometry().width() / (axis.range[1] - axis.range[0])
    assert {-2, -1, 0, 1} <= {round(v) for v in labelled if abs(v - round(v)) < 1e-9}
    assert pixels.min() >= LABEL_ROOM["horizontal"] - 1e-6


@pytest.mark.parametrize("size", SIZES)
def test_the_status_message_ends_before_the_indicators_and_is_whole_in_its_tooltip(window, qtbot, size):
    window.resize(*size)
    qtbot.wait(50)
    bar = window.statusBar()
    text = "theta1 = 0.8 cannot be reached: " + "the loop of cut joint 'upper_ball_joint' does not close; " * 6
    bar.showMessage(text, 60_000)
    shown, first = bar.shown(), min(w.geometry().left() for w in bar.permanent)
    assert shown.endswith("…") and bar.currentMessage() == text and bar.toolTip() == text
    assert QFontMetrics(bar.font()).horizontalAdvance(shown) < first - 10


@pytest.mark.slow  # three jobs in the window at two sizes: the screenshots of this check
@pytest.mark.parametrize("size", SIZES)
def test_titles_run_names_and_a_small_plot_are_whole(window, qtbot, size):
    window.resize(*size)
    title = "Kinematics along the wheel-travel sweep of the alignment set, for the readability check"
    job = window.run_job("kinematics", {"samples": 50, "trajectory": "wheel_travel"}, title)
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    window.docks["plots"].raise_()
    view = window.plots.view
    view.select_series(["alignment.kingpin_inclination"], "alignment.wheel_travel")
    qtbot.wait(100)
    row = window.jobs_panel.rows[job.id]
    assert row.title.wordWrap() and row.title.height() >= 2 * QFontMetrics(row.title.font()).height()
    run = window.plots.runs.item(0)
    assert window.plots.runs.wordWrap() and run.toolTip() == run.text()
    combo = view.x_axis
    assert combo.width() >= QFontMetrics(combo.font()).horizontalAdvance(combo.currentText())
    left = view.plot_item.getAxis("left").labelText
    assert left in ("alignment.kingpin_inclination [deg]", "[deg]")  # a suspension measure: deg by default
    whole = QFontMetrics(view.plot_item.getAxis("left").label.font()).horizontalAdvance(left)
    assert whole <= view.plot_item.getViewBox().height()  # the label fits the plot's height
    shot(window, f"readable_plots_{size[0]}x{size[1]}.png")


def test_the_ridge_legend_explains_its_lines_and_marks(qtbot):
    from mbstudio.jobs.results import BaseParametersResult
    from mbstudio.jobs.tasks import JobResult, Provenance

    spectrum = {
        "label": "VP 30 digits",
        "log10_sigma": [0.0, -1.0, -30.0, -float("inf")],
        "singular_values": ["1", "0.1", "1e-30", "0"],
        "log10_tolerance": -25.0,
        "rank": 2,
        "log10_depth": 29.0,
        "evident": True,
    }
    panel = RidgePanel()
    qtbot.addWidget(panel)
    data = BaseParametersResult(json={}, spectra=[spectrum], table=[], parameters=[], parameter_names=[])
    panel.show_result(JobResult("base_parameters", "t", Provenance("", "", "", {}, 0.0), data))
    texts = [label.text for _, label in panel.legend.items]
    assert texts[0] == "VP 30 digits" and "tolerance (dashed)" in texts and "rank r (dotted)" in texts
    assert any(t.startswith("ridge:") for t in texts) and any("0 exactly" in t for t in texts)
    assert panel.plot.plotItem.getAxis("left").labelText == "log10 σ_i"
    assert panel.plot.plotItem.getAxis("left").labelStyle["color"] == "#202020"
