"""A workbench session, scripted in the real window: a four-bar driven by its crank chosen in the
window, a full slider turn on one branch with a typed value, a coupler-point measure, two simulations with
initial crank speeds, the coupler curve (y against x) and the transmission angle against the crank angle with
the second run overlaid, PNG/SVG/CSV exports and an animated GIF. Each step's screenshot goes to the folder in
MBSTUDIO_SCREENSHOTS when it is set (that is how they are looked at)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pandas
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from mbstudio import samples
from mbstudio.gui.editing.coordinates_panel import typed_value
from mbstudio.gui.results.plot_view import axis_label
from mbstudio.gui.view3d.animation import frame_indices
from mbstudio.jobs import DONE

from ..kinematic_paths import four_bar_branch_side


def shot(window, name: str) -> None:
    folder = os.environ.get("MBSTUDIO_SCREENSHOTS")
    if folder:
        QApplication.processEvents()  # widgets added since the last event loop turn show themselves there
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.window_image().save(str(Path(folder) / name))


def simulate(window, qtbot, speed: float):
    job = window.run_job("simulation", {"t_end": 1.0, "velocities": {"theta1": speed}}, f"crank at {speed} rad/s")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    return job


def test_a_four_bar_session_from_driving_to_animation(window, qtbot, tmp_path, answers):
    window.open_sample("four_bar")
    model = window.document.model
    # the driving coordinate: the rocker first, then back to the crank, chosen in the window
    assert window.choose_driving(["theta3"]) and list(window.coordinates.sliders) == ["theta3"]
    assert not window.choose_driving(["theta2", "theta3"])  # two for one degree of freedom: refused, said why
    assert "cannot drive" in answers["calls"][-1][2] and window.document.model.independent_coordinates == ["theta3"]
    assert window.choose_driving(["theta1"]) and list(window.coordinates.sliders) == ["theta1"]
    assert window.choose_driving(["theta1"], actuated=["theta3"]) and window.document.model.actuated == ["theta3"]
    assert not window.choose_driving(["theta1"], actuated=["theta2", "theta2"])  # twice: refused in words
    assert "lists a coordinate twice" in answers["calls"][-1][2]
    assert window.choose_driving(["theta1"], actuated=[]) and window.document.model.actuated == []
    shot(window, "1_driving.png")
    # a full turn of the crank with the slider, then a typed value in degrees: one branch throughout
    side = four_bar_branch_side(window.mech, window.q[None])
    for theta in np.linspace(0, 2 * np.pi, 37)[1:]:
        assert window.move_coordinate("theta1", float(np.angle(np.exp(1j * theta))))
        assert four_bar_branch_side(window.mech, window.q[None]) == side
    row = window.coordinates.sliders["theta1"]
    row.entry.setText("30°")
    row.entry.editingFinished.emit()
    qtbot.waitUntil(lambda: not window.session.pose.pending_moves)
    assert window.q[0] == pytest.approx(math.radians(30), abs=1e-12)
    window.actions["degrees"].setChecked(True)  # View › Units: the slider shows and takes degrees
    assert row.entry.text() == "30" and row.label.text() == "°"
    row.entry.setText("45")
    row.entry.editingFinished.emit()
    qtbot.waitUntil(lambda: not window.session.pose.pending_moves)
    assert window.q[0] == pytest.approx(math.radians(45), abs=1e-12)
    window.actions["degrees"].setChecked(False)
    row.entry.setText("30°")
    row.entry.editingFinished.emit()
    qtbot.waitUntil(lambda: not window.session.pose.pending_moves)
    theta1 = window.tree.items[("coordinate", _joint_of(model, "theta1"), "theta1")]
    assert theta1.text(1) == f"{math.radians(30):.4g}"  # the tree shows the moved value
    assert window.status["assembly"].text() == "assembled"
    shot(window, "2_moved.png")
    # two runs with initial crank speeds; the second overlaid on the first
    first, second = simulate(window, qtbot, 6.0), simulate(window, qtbot, 9.0)
    plots = window.plots
    labels = [label for label, _ in plots.kept]
    runs = zip(labels, (first, second), (6, 9), strict=True)
    for number, (label, job, speed) in enumerate(runs, start=1):  # each run's error estimate shown
        estimate = job.result.data.error_estimate
        assert 0 < estimate < 1e-6  # the defaults' aim: 1e-6 of the state's scale
        suffix = f", error estimate {estimate:.1g} of the state's scale"
        assert label == f"run {number}: Simulation over 1 s, d_theta1(0) = {speed}{suffix}"
    assert plots.result is second.result
    assert plots.result.data.series["d_theta1 [rad/s]"][0] == pytest.approx(9.0)
    plots.select_series(["coupler_point.z"], x="coupler_point.x")  # the coupler curve in the x-z plane
    plots.overlay([0])
    assert len(plots.view.curves()) == 2  # this run solid, the first dashed
    assert plots.view.plot_item.getAxis("bottom").labelText == "coupler_point.x [m]"
    # the y label whole where the plot is high enough, else its unit, the legend above naming the series
    assert plots.view.plot_item.getAxis("left").labelText in ("coupler_point.z [m]", "[m]")
    assert "coupler_point.z [m] · run 2" in [label.text for _, label in plots.view.legend.items]
    for curve, job in zip(plots.view.curves(), (second, first), strict=True):  # solid: the current run
        x, z = curve.getData()
        assert np.array_equal(z, job.result.data.series["coupler_point.z [m]"])
        assert np.array_equal(x, job.result.data.series["coupler_point.x [m]"])
    assert plots.view.curves()[1].opts["pen"].style() == Qt.PenStyle.DashLine
    plots.seek(50)
    assert "coupler_point.z [m] = " in plots.view.readout.text()
    shot(window, "3_coupler_curve.png")
    # the 3D view's post-processing: labels that follow the pose, the coupler point's trace, ghosted poses
    window.actions["labels"].setChecked(True)
    positions, texts = window.view.overlays.label_positions(window.q)
    assert texts == ["1: crank", "2: coupler", "3: rocker", *(j.name for j in model.joints)]
    rocker_pivot = positions[texts.index("rocker_pivot")]
    assert rocker_pivot == pytest.approx([0.4, 0, 0], abs=1e-12)  # O3, on the ground, L0 from O1
    assert window.show_traces(True) == ["coupler_point"]
    assert window.show_forces(True) == 0 and window.show_forces(False) == 0  # the four-bar has no force element
    assert window.show_ghosts(True) == 6
    shot(window, "3b_traces_ghosts.png")
    assert window.show_ghosts(False) == 0 and window.show_traces(False) == []
    window.actions["labels"].setChecked(False)
    angle = plots.add_plot()
    angle.select_series(["transmission"], x="theta1")
    assert angle.plot_item.getAxis("bottom").labelText == "theta1 [rad]"
    shot(window, "4_transmission.png")
    for fmt in ("png", "svg"):
        assert plots.export_plot(fmt, str(tmp_path / f"angle.{fmt}"))
        assert (tmp_path / f"angle.{fmt}").stat().st_size > 1000
    assert plots.export("csv", str(tmp_path / "run.csv"))
    table = pandas.read_csv(tmp_path / "run.csv")
    assert "coupler_point.x [m]" in table.columns and len(table) == len(second.result.data.t)
    # the animation of the current run, as the 3D view shows it
    export = window.export_animation(str(tmp_path / "motion.gif"), fps=10)
    done = []
    export.finished.connect(lambda ok, message: done.append((ok, message)))
    qtbot.waitUntil(lambda: bool(done), timeout=120_000)
    assert done[0][0], done[0][1]
    frames = iio.imread(tmp_path / "motion.gif", index=None)
    assert len(frames) == len(frame_indices(np.asarray(second.result.data.t), 10)) == 11
    assert np.abs(frames[0].astype(int) - frames[5].astype(int)).max() > 50  # the mechanism moved
    assert np.allclose(window.view.scene.matrix("1"), _drawn(window, "1"))  # back at the document's pose
    shot(window, "5_after_animation.png")


def _joint_of(model, coordinate: str) -> str:
    return next(j.name for j in model.joints if coordinate in [c.name for c in j.coordinates])


def _drawn(window, label: str) -> np.ndarray:
    from mbstudio.gui.view3d.scene import _matrix

    rotation, origin = window.mech.poses(window.q[None])[label]
    return _matrix(rotation[0], origin[0])


def test_typed_values_and_axis_labels():
    assert typed_value("30°", "rad") == pytest.approx(math.pi / 6) and typed_value("30 deg", "rad") == typed_value(
        "30°", "rad"
    )
    assert typed_value("0.5", "rad") == 0.5 and typed_value("25 mm", "m") == pytest.approx(0.025)
    assert typed_value("abc", "rad") is None and typed_value("inf", "m") is None
    assert typed_value("30", "rad", math.pi / 180) == pytest.approx(math.pi / 6)  # shown in degrees
    assert typed_value("25", "m", 1e-3) == pytest.approx(0.025) and typed_value("0.5 m", "m", 1e-3) == 0.5
    assert axis_label(["theta1 [rad]"]) == "theta1 [rad]"
    assert axis_label(["theta1 [rad]", "theta2 [rad]"]) == "[rad]"
    assert axis_label(["theta1 [rad]", "coupler_point.x [m]"]) == "[rad] | [m]"


def click_at(window, world) -> None:
    """A click in the 3D view on the screen point where `world` is drawn."""
    renderer, view = window.view.plotter.renderer, window.view
    renderer.SetWorldPoint(*world, 1.0)
    renderer.WorldToDisplay()
    x, y, _ = renderer.GetDisplayPoint()
    view.plotter.iren.interactor.SetEventPosition(round(x), round(y))
    view._press()
    view._release()


def test_a_four_bar_drawn_by_clicks_in_the_3d_view_closes_without_typing_an_angle(window):
    """Seen from the top, the crank from O1 to B, the rocker from O3 to C and the coupler from B to C are drawn
    by clicking: each link is posed where it is drawn, so the coupler's end lands on the rocker's tip and the
    loop closes at once; one degree of freedom, driven by the crank (the link to the ground that turns fully)."""
    window.new_document()
    window.view.scene.camera("top")
    links = samples.drawn_four_bar()
    (_, b), (_, c) = links[:2]
    for start, end in links:
        window.actions["draw_link"].setChecked(True)
        click_at(window, start)
        click_at(window, end)
        assert not window.actions["draw_link"].isChecked()
    model = window.document.model
    assert [j.type for j in model.joints] == ["revolute"] * 4 and len(model.bodies) == 3
    assert window.status["dof"].text().startswith("DOF 1") and window.status["loops"].text().startswith("loops 1")
    assert window.status["assembly"].text() == "assembled"
    assert all(c.initial in (None, 0.0) for j in model.joints for c in j.coordinates)  # no angle typed
    assert np.abs(window.mech.residual(window.q[None])).max() < 1e-12
    tips = {label: window.mech.points(window.q[None])[(label, "tip")][0] for label in ("1", "2", "3")}
    assert np.abs(tips["3"] - tips["2"]).max() < 1e-12  # the coupler ends on the rocker's tip
    assert np.linalg.norm(tips["1"] - b) < 3e-3 and np.linalg.norm(tips["3"] - c) < 3e-3  # within a pixel or two
    mass = model.body("1").inertia["m"]
    assert mass == pytest.approx(2700 * np.pi * 0.01**2 * np.linalg.norm(tips["1"]), rel=1e-12)  # aluminium rod
    crank = next(c.name for j in model.joints if j.child == "1" for c in j.coordinates)
    assert list(window.coordinates.sliders) == [crank]  # the slider drives the crank
    assert window.move_coordinate(crank, 1.5)
    assert window.document.stack.count() == 4  # three links and the move
    shot(window, "0_drawn_four_bar.png")
