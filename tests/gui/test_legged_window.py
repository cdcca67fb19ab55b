"""solo12 trots from the window: the document `mbstudio legged --gait trot` writes, simulated by Analysis ›
Simulate with CVODES-BDF, its four feet's vertical forces against time in the plots and its force arrows at an
instant where one diagonal pair is in the air; the screenshot of docs/contact.md when MBSTUDIO_SCREENSHOTS names
a folder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from mbstudio.gui.view3d.scene import CONTACTS_VIEW, SIDE_ON
from mbstudio.io.example_robots import robots_folder
from mbstudio.jobs import DONE

pytestmark = pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
FEET = ("FL", "FR", "HL", "HR")


@pytest.mark.slow
def test_the_trot_shows_each_diagonal_pair_unloading_in_turn(window, qtbot):
    """Each foot carries weight in part of the run and none (in the air) in another; at an instant where the
    FL–HR pair is in the air the support polygon is the segment between the other pair's feet."""
    from mbstudio.io.legged import solo12

    model = solo12("trot")
    window.document.replace(model, None)
    options = {"t_end": 2.0, "samples": 401, "method": "CVODES-BDF", "rtol": 1e-6, "atol": 1e-8}
    job = window.run_job("simulation", options, "solo12 trotting")
    qtbot.waitUntil(lambda: not job.running, timeout=600_000)
    assert job.state == DONE, job.error
    series = job.result.data.series
    forces = np.array([series[f"{foot}_FOOT_contact_f.fz [N]"] for foot in FEET])
    weight = sum(float(b.inertia["m"]) for b in model.bodies) * abs(float(model.gravity[2]))
    assert (forces.max(axis=1) > weight / 4).all() and (forces.min(axis=1) == 0.0).all()
    times = np.asarray(job.result.data.t)
    lifted, loaded = forces == 0.0, forces > 0.0
    flight = np.flatnonzero(lifted[0] & lifted[3] & loaded[1] & loaded[2] & (times > 0.5))  # FL, HR in the air
    assert len(flight)
    window.plots.select_series([f"{foot}_FOOT_contact_f.fz" for foot in FEET])
    assert window.show_forces(True) == 4  # an arrow per contact, those in the air of zero length
    camera = window.view.plotter.camera  # turned to see the contacts' forces side-on
    toward = np.array(camera.position) - np.array(camera.focal_point)
    assert np.allclose(toward / np.linalg.norm(toward), CONTACTS_VIEW / np.linalg.norm(CONTACTS_VIEW), atol=1e-12)
    window.plots.seek_time(float(times[flight[0]]))  # the arrows and the polygon follow the shown instant
    polygon = window.view.plotter.actors["support"].GetMapper().GetInput().GetPoints()
    corners = np.unique([polygon.GetPoint(k) for k in range(polygon.GetNumberOfPoints())], axis=0)
    assert len(corners) == 2  # the support polygon is the segment between the loaded pair's feet
    window.view.scene.camera("isometric")  # from a corner that sees the sliding feet's forces side-on
    camera = window.view.plotter.camera
    toward = np.array(camera.position) - np.array(camera.focal_point)
    forces = window.view.scene.forces
    sines = np.linalg.norm(np.cross(forces, toward), axis=1) / np.linalg.norm(forces, axis=1) / np.linalg.norm(toward)
    assert len(forces) == 2 and np.arcsin(sines).min() >= SIDE_ON
    feet = np.array([series[f"{foot}_FOOT_contact_f.{axis} [m]"][flight[0]] for foot in FEET for axis in "xyz"])
    assert np.abs(window.view.scene.viewport(feet.reshape(4, 3))).max() < 1.0  # all four feet in the picture
    window.view.scene.camera("contacts")
    if folder := os.environ.get("MBSTUDIO_SCREENSHOTS"):  # how it is looked at, and the figure of docs/contact.md
        window.resize(1280, 800)  # the size of the tutorial's screenshots
        for _ in range(2):  # Qt lays the docks out when it next handles events: for the window's size, then the plots'
            qtbot.wait(200)
            window.resizeDocks([window.docks["plots"]], [420], Qt.Orientation.Vertical)
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.window_image().save(str(Path(folder) / "solo12_trot_foot_forces.png"))
        for preset in ("contacts", "isometric", "side", "front"):
            window.view.scene.camera(preset)
            window.view.image().save(str(Path(folder) / f"solo12_trot_{preset}.png"))
