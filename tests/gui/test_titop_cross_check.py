"""The block-model cross-check in the window (Alazard et al. 2024, Fig. 17): Simulate… with the cross-check asks for the
loop closures' frequency only for closed loops, the run's time histories carry the error series block − general,
and the plot draws each plotted series' error in red on its own right axis (a screenshot goes to the folder in
MBSTUDIO_SCREENSHOTS when it is set, which is how it is looked at)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from mbstudio import samples
from mbstudio.gui.jobs.job_options import SimulationDialog
from mbstudio.jobs import DONE

from .test_workbench import shot


def test_the_simulate_dialog_offers_the_cross_check(qtbot, display):
    for name, closed in (("balloon", False), ("four_bar", True)):
        dialog = SimulationDialog(samples.load(name))
        qtbot.addWidget(dialog)
        assert "cross_check" not in dialog.options()  # a plain run's options are as they were
        dialog.cross.setChecked(True)
        assert dialog.lines["closure_frequency"].isEnabled() == closed
        expected = {"cross_check": True} | ({"closure_frequency": 500.0} if closed else {})
        assert {k: v for k, v in dialog.options().items() if k in ("cross_check", "closure_frequency")} == expected
        assert "The block model then runs the same motion" in dialog.hint.text()
        if closed:
            dialog.lines["closure_frequency"].setText("-3")
            assert "closure_frequency: -3 is out of range; expected a frequency above 0 Hz" in dialog.error.text()


def test_the_plot_draws_each_error_dotted_on_the_right_axis(qtbot, display):
    """A run with error series: each plotted series' error on the right axis, in its colour; a run without
    them, or the errors unchecked, or an x-y plot: none, and no right axis."""
    from mbstudio.gui.results.plots_panel import PlotsPanel
    from mbstudio.jobs.results import MotionResult
    from mbstudio.jobs.tasks import JobResult, Provenance

    t = np.linspace(0, 1, 11)
    series = {"a [m]": t, "b [rad]": -t, "error:a [m]": 1e-9 * t, "error:b [rad]": 2e-9 * t**2}
    provenance = Provenance("hash", "DOP853", "float64", {}, 0.1)
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    plain = JobResult("simulation", "plain", provenance, MotionResult(t, ["a"], t[:, None], {"a [m]": t}))
    panel.show_result(plain)
    panel.select_series(["a"])
    assert not panel.view.error_curves and not panel.view.errors.isVisibleTo(panel)
    data = MotionResult(t, ["a"], t[:, None], series, cross_check={"largest": {}})
    panel.show_result(JobResult("simulation", "checked", provenance, data))
    panel.select_series(["a", "b"])
    view = panel.view
    assert sorted(view.error_curves) == ["error:a [m]", "error:b [rad]"] and view.errors.isVisibleTo(panel)
    np.testing.assert_array_equal(view.error_curves["error:b [rad]"].getData()[1], series["error:b [rad]"])
    assert view.error_curves["error:b [rad]"].opts["pen"].style() == Qt.PenStyle.DotLine
    assert view.plot_item.getAxis("right").isVisible()
    assert view.plot_item.getAxis("right").labelText == "block − general, dotted [m] | [rad]"
    view.select_series(["a"], x="b")  # against another series: no time axis to share
    assert not view.error_curves and not view.plot_item.getAxis("right").isVisible()
    view.select_series(["a"])
    view.errors.setChecked(False)
    assert not view.error_curves and not view.error_box.addedItems


@pytest.mark.slow
def test_a_cross_checked_run_in_the_window(window, qtbot):
    window.open_sample("balloon")
    options = {"t_end": 3.0, "method": "DOP853", "rtol": 1e-10, "atol": 1e-12, "cross_check": True}
    job = window.run_job("simulation", options, "balloon with cross-check")
    qtbot.waitUntil(lambda: not job.running, timeout=180_000)
    assert job.state == DONE, job.error
    view = window.plots.view
    view.select_series(["theta1", "theta2", "p"])
    series = window.plots.result.data.series
    names = ["error:theta1 [rad]", "error:theta2 [rad]", "error:p [m]"]
    assert sorted(view.error_curves) == sorted(names) and all(
        c in view.error_box.addedItems for c in view.error_curves.values()
    )
    assert view.plot_item.getAxis("right").isVisible() and view.errors.isVisible()
    for name, curve in view.error_curves.items():
        np.testing.assert_array_equal(curve.getData()[1], series[name])
        assert 0 < np.abs(series[name]).max() < 1e-6  # integrator-level: two routes, one mechanics
    assert "block − general" in view.plot_item.getAxis("right").labelText
    window.resize(1400, 900)
    window.resizeDocks([window.docks["plots"]], [460], Qt.Orientation.Vertical)
    shot(window, "balloon_cross_check.png")
    view.errors.setChecked(False)
    assert not view.error_curves and not view.error_box.addedItems
    assert not view.plot_item.getAxis("right").isVisible()
