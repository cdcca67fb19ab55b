"""The window's contacts: File › Import of a floating robot brings its ground (the notes say so, --no-ground's
option leaves it out), and View › Force Arrows draws solo12's foot forces with its support polygon and centre of
pressure (simulation/contact_results.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from mbstudio.io.example_robots import robots_folder
from mbstudio.jobs import DONE

pytestmark = pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
SOLO = "solo_description/robots/solo12.urdf"


def _import(window, qtbot, **options):
    job = window.import_urdf(str(robots_folder() / SOLO), {"package_paths": [], **options})
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: window.document.model.name == "solo", timeout=5000)
    return job


def contacts(window) -> list:
    return [f for f in window.document.model.forces if f.type == "contact"]


def test_file_import_lands_solo12_on_a_ground_unless_asked_not_to(window, qtbot):
    job = _import(window, qtbot)
    assert sorted(f.body for f in contacts(window)) == ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
    assert any("ground plane" in note for note in job.result.data.notes)
    window.document.stack.setClean()
    _import(window, qtbot, no_ground=True)
    qtbot.waitUntil(lambda: not contacts(window), timeout=5000)


def test_force_arrows_show_the_feet_carrying_the_standing_robot(window, qtbot):
    """solo12 standing at its static penetration: four upward arrows at the feet, the support polygon through
    them and the centre of pressure inside it; a screenshot when MBSTUDIO_SCREENSHOTS names a folder."""
    from mbstudio.io.legged import solo12

    window.document.replace(solo12("stand"), None)
    window.view.scene.camera("isometric")
    assert window.show_forces(True) == 4
    polygon = window.view.plotter.actors["support"].GetMapper().GetInput().GetPoints()
    corners = np.array([polygon.GetPoint(k) for k in range(polygon.GetNumberOfPoints())])
    assert len(corners) == 5  # closed: the first corner again
    centre = np.array(window.view.plotter.actors["pressure_centre"].GetCenter())
    assert (
        corners[:, 0].min() < centre[0] < corners[:, 0].max() and corners[:, 1].min() < centre[1] < corners[:, 1].max()
    )
    folder = os.environ.get("MBSTUDIO_SCREENSHOTS")
    if folder:
        window.resize(1280, 800)  # the size of the tutorial's screenshots
        window.view.scene.camera("contacts")  # as View › Force Arrows turns it, at the new size
        QApplication.processEvents()
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.window_image().save(str(Path(folder) / "solo12_foot_forces.png"))
    assert window.show_forces(False) == 0 and "support" not in window.view.plotter.actors
