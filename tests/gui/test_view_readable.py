"""What stays readable in the window at 1280x800: Fit and the camera presets frame the bodies, not the floor grown
under a whole run's motion; every force arrow is an arrow (a third of the longest at least, equally thick, its
magnitude labelled) however small its force; a legend of many series keeps to two rows, the series list marking
each curve's colour. A screenshot of that legend when MBSTUDIO_SCREENSHOTS names a folder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyvista as pv
from PySide6.QtCore import Qt

from mbstudio.gui.view3d.overlays import ARROW_LONGEST, ARROW_RADIUS, ARROW_SHORTEST

from .test_pair_shapes_window import pairs_model


def display_box(window, bounds) -> np.ndarray:
    """The display-pixel extent (width, height) of the world box `bounds` (xmin, xmax, ...) as the camera sees it."""
    renderer = window.view.plotter.renderer
    pixels = []
    for corner in np.array(np.meshgrid(*np.reshape(bounds, (3, 2)))).reshape(3, -1).T:
        renderer.SetWorldPoint(*corner, 1.0)
        renderer.WorldToDisplay()
        pixels.append(renderer.GetDisplayPoint()[:2])
    pixels = np.array(pixels)
    return pixels.max(axis=0) - pixels.min(axis=0)


def test_fit_frames_the_bodies_not_the_floor_under_the_whole_motion(window):
    window.document.replace(pairs_model(), None)
    q = np.array(window.q, float)
    frames = np.repeat(q[None], 41, axis=0)
    frames[:, 0] += np.linspace(0.0, 4.0, 41)  # the block walks 4 m along x: the floor grows under it
    assert window.view.cover(frames, q)
    floor = window.view.scene.floor.GetBounds()
    assert floor[1] - floor[0] >= 4.0
    drawn = np.array([a.GetBounds() for a in window.view.scene.actors["1"]])  # the block's actors, at q
    block = np.column_stack([drawn[:, ::2].min(axis=0), drawn[:, 1::2].max(axis=0)]).ravel()
    view = np.array(window.view.plotter.renderer.GetSize(), float)
    for preset in ("isometric", "side", "front", "top"):
        window.view.scene.camera(preset)
        seen = display_box(window, window.view.plotter.renderer.ComputeVisiblePropBounds())
        assert (display_box(window, block) <= view).all()  # the block is whole in the picture
        assert (seen > view).any()  # and the floor, drawn, reaches past it: it was not what was fitted
    window.view.scene.camera("isometric")
    fitted = display_box(window, block) / view
    assert fitted.max() > 0.1, fitted  # the 0.2-m block, not a speck on a 5-m floor
    near, far = window.view.plotter.renderer.GetActiveCamera().GetClippingRange()
    distances = [np.linalg.norm(np.array(window.view.plotter.camera.position) - c) for c in _corners(floor)]
    assert near <= min(distances) and far >= max(distances)  # the floor's near and far parts are not clipped


def _corners(bounds) -> np.ndarray:
    return np.array(np.meshgrid(*np.reshape(bounds, (3, 2)))).reshape(3, -1).T


def test_a_small_force_is_still_an_arrow_with_its_value(window):
    window.document.replace(pairs_model(), None)
    size = window.view.scene.size
    big, small = np.array([0.0, 0.0, 40.0]), np.array([0.3, 0.0, 0.4])  # 40 N and 0.5 N
    assert window.view.overlays.show_forces([(None, np.zeros(3), big), (None, np.array([1.0, 0, 0]), small)]) == 2
    glyphs = pv.wrap(window.view.plotter.actors["forces"].GetMapper().GetInput())
    tol = 16 * np.finfo(glyphs.points.dtype).eps * np.abs(glyphs.points).max()  # the glyphs' points are float32
    near_origin = glyphs.points[np.linalg.norm(glyphs.points[:, :2], axis=1) < 0.5]
    tall = near_origin[:, 2].max() - near_origin[:, 2].min()
    assert abs(tall - ARROW_LONGEST * size) <= tol  # the largest force sets the scale
    unit = small / np.linalg.norm(small)
    others = glyphs.points[glyphs.points[:, 0] > 0.5] - [1.0, 0.0, 0.0]
    along = others @ unit
    assert abs(along.max() - ARROW_SHORTEST * size) <= tol  # 0.5 N drawn a third as long as 40 N
    across = np.linalg.norm(others - np.outer(along, unit), axis=1)
    for off_axis in (np.linalg.norm(near_origin[:, :2], axis=1), across):  # the shafts' surfaces: as thick
        assert abs(off_axis[off_axis > tol].min() - ARROW_RADIUS * size) <= tol
    hierarchy = window.view.plotter.actors["force_values-labels"].GetMapper().GetInputAlgorithm()
    labels = pv.wrap(hierarchy.GetInputDataObject(0, 0))
    texts = list(labels.point_data["labels"])
    assert texts == ["40 N", "0.5 N"]
    window.view.overlays.show_labels(True, window.q)
    assert "labels-labels" in window.view.plotter.actors
    window.view.overlays.show_labels(False, window.q)
    assert "labels-labels" not in window.view.plotter.actors  # the names go when View › Labels is unchecked
    assert window.view.overlays.show_forces(None) == 0 and "force_values-labels" not in window.view.plotter.actors


def test_a_legend_of_many_series_keeps_to_two_rows(window, qtbot):
    from mbstudio import samples
    from mbstudio.gui.results.plot_view import LEGEND_ROWS
    from mbstudio.jobs import DONE

    window.resize(1280, 800)
    window.document.replace(samples.load("four_bar"), None)
    job = window.run_job("simulation", {"t_end": 0.2, "samples": 21}, "Simulate")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    plots = window.plots.view
    names = sorted(name.split(" [")[0] for name in job.result.data.series)[:12]
    plots.select_series(names[:1])
    qtbot.wait(100)
    one_row = plots.legend.boundingRect().height()
    heights = []
    for height in (420, 200):  # the plots' dock tall, then short: two rows, then one
        window.resizeDocks([window.docks["plots"]], [height], Qt.Orientation.Vertical)
        qtbot.wait(200)
        plots.select_series(names)
        qtbot.wait(100)
        assert len(plots.curves()) == 12
        entries = [label.text for _, label in plots.legend.items]
        columns = plots.legend.columnCount
        rows = -(-len(entries) // columns)
        assert rows == min(LEGEND_ROWS, max(1, plots.canvas.height() // 110)), (rows, plots.canvas.height())
        assert len(entries) == rows * columns
        assert entries[-1] == f"+{12 - len(entries) + 1} more (colours in the list)"
        widths = [label.boundingRect().width() for _, label in plots.legend.items]
        assert columns * (max(widths) + 20) <= plots.canvas.width()  # the legend's columns fit across the plot
        assert plots.legend.boundingRect().height() <= rows * one_row + 1
        heights.append(plots.canvas.height())
    assert heights[0] >= 220 > heights[1]  # so the first had two rows and the second one
    marked = [plots.series.item(i) for i in range(plots.series.count()) if not plots.series.item(i).icon().isNull()]
    assert sorted(item.text() for item in marked) == sorted(plots.selected())  # each curve's colour in the list
    assert plots.plot_item.getAxis("left").labelText == "several units"  # six units side by side did not fit
    if folder := os.environ.get("MBSTUDIO_SCREENSHOTS"):  # how it is looked at
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.window_image().save(str(Path(folder) / "legend_of_twelve.png"))
    plots.select_series(names[:2])
    assert (
        len(plots.legend.items) == 2
        and sum(not plots.series.item(i).icon().isNull() for i in range(plots.series.count())) == 2
    )
