"""A run's motion stays in the window's view: where its bodies leave the floor drawn under the document's pose (a
walking robot), the floor grows under all of them and the camera is fitted to them; the time histories keep room
for their curves however many values the readout lists (two lines of it, all of it in its tooltip)."""

from __future__ import annotations

import numpy as np

from mbstudio.gui.results.plot_view import PLOT_MIN_HEIGHT

from .test_pair_shapes_window import pairs_model


def floor_extent(window) -> np.ndarray:
    return np.asarray(window.view.scene.floor.GetBounds(), float)[:4]


def test_the_floor_grows_under_a_motion_that_leaves_it(window):
    window.document.replace(pairs_model(), None)
    q = np.array(window.q, float)
    before = floor_extent(window)
    frames = np.repeat(q[None], 41, axis=0)
    assert not window.view.cover(frames, q)  # standing still: nothing changes
    assert np.array_equal(floor_extent(window), before)
    frames[:, 0] += np.linspace(0.0, 2.0, 41)  # the block walks 2 m along x
    assert window.view.cover(frames, q)
    grown = floor_extent(window)
    assert grown[0] <= before[0] and grown[1] >= 2.0 + HALF_LENGTH and grown[2] <= before[2] and grown[3] >= before[3]
    assert np.array_equal(window.view.scene.matrix("1")[:3, 3], window.mech.poses(q[None])["1"][1][0])  # q shown
    low, high = np.array(window.view.plotter.renderer.ComputeVisiblePropBounds()).reshape(3, 2).T
    assert low[0] <= 0.0 and high[0] >= 2.0  # the whole floor is in the fitted view's props


HALF_LENGTH = 0.1  # the block's half length along x (test_pair_shapes_window.HALF)


def test_the_readout_keeps_to_two_lines_and_the_curves_keep_their_room(window, qtbot):
    from mbstudio import samples
    from mbstudio.jobs import DONE

    window.document.replace(samples.load("four_bar"), None)
    job = window.run_job("simulation", {"t_end": 0.2, "samples": 21}, "Simulate")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    plots = window.plots.view
    window.plots.select_series(sorted(name.split(" [")[0] for name in job.result.data.series)[:12])
    window.plots.seek_time(0.1)
    qtbot.wait(100)
    text = plots.readout.text()
    assert text.count(" = ") == 1 + 12 and plots.readout.toolTip() == text  # the time and each value
    assert plots.readout.height() <= 2 * plots.readout.fontMetrics().lineSpacing() + 2
    assert plots.canvas.height() >= PLOT_MIN_HEIGHT


def test_a_run_first_plots_its_first_six_independent_coordinates(window, qtbot):
    """The balloon has nine: a legend of nine rows left its curves no room at 1280x800."""
    from mbstudio import samples
    from mbstudio.jobs import DONE

    window.document.replace(samples.load("balloon"), None)
    job = window.run_job("simulation", {"t_end": 0.1, "samples": 11}, "Simulate")
    qtbot.waitUntil(lambda: not job.running, timeout=300_000)
    assert job.state == DONE, job.error
    assert len(window.mech.independent) == 9
    names = [name.split(" [")[0] for name in window.plots.view.selected()]
    assert names == list(window.mech.independent[:6]) and len(window.plots.view.curves()) == 6
