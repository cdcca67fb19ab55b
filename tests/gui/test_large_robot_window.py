"""A 50-coordinate robot in a 1280x800 window: Talos (example-robot-data's talos_full_v2, imported on its floating
base with its ground and foot contacts) run for 0.2 s by Analysis › Simulate. The sliders, the time histories, the
feet's contact series (found through the series filter) and the run's error estimate are all on screen and usable;
the screenshot when MBSTUDIO_SCREENSHOTS names a folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint

from mbstudio.gui.results.plot_view import PLOT_MIN_HEIGHT
from mbstudio.io.example_robots import robots_folder
from mbstudio.jobs import DONE

pytestmark = pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
TALOS = "talos_data/robots/talos_full_v2.urdf"


def on_screen(window, widget) -> bool:
    """The widget is shown, with some size, wholly inside the window."""
    corner = widget.mapTo(window, QPoint(0, 0))
    inside = window.rect().contains(corner) and window.rect().contains(corner + QPoint(widget.width(), widget.height()))
    return widget.isVisible() and widget.width() > 20 and widget.height() > 10 and inside


@pytest.mark.slow  # compiling Talos' engine takes a minute on a fresh cache
def test_talos_with_contacts_and_its_run_fit_a_1280x800_window(window, qtbot):
    window.resize(1280, 800)
    job = window.import_urdf(str(robots_folder() / TALOS), {"package_paths": []})
    qtbot.waitUntil(lambda: not job.running, timeout=600_000)
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: window.document.model.name == "talos", timeout=5000)
    assert len(window.mech.coordinates) == 50
    contacts = [f for f in window.document.model.forces if f.type == "contact"]
    feet = sorted(f.name for f in contacts if f.body.startswith("leg_") and f.body.endswith("_6_link"))
    assert len(feet) == 2 and len(contacts) > 2  # the soles, and the meshes of links a fall may bring down
    job = window.run_job("simulation", {"t_end": 0.2, "samples": 41}, "Talos")
    qtbot.waitUntil(lambda: not job.running, timeout=1_800_000)
    assert job.state == DONE, job.error
    qtbot.wait(300)

    sliders = window.coordinates.sliders  # every coordinate a slider; several shown whole, the rest a scroll away
    shown = [
        row
        for row in sliders.values()
        if on_screen(window, row.slider) and row.visibleRegion().boundingRect().height() == row.height()
    ]
    assert len(sliders) == len(window.mech.independent) and len(shown) >= 3
    window.coordinates.filter.setText("leg_left_")
    assert sum(row.isVisibleTo(window.coordinates) for row in sliders.values()) == 6  # the left leg's six joints

    plots = window.plots  # the time histories: curves with room, the feet's forces found by typing
    assert on_screen(window, plots.view.canvas) and plots.view.canvas.height() >= PLOT_MIN_HEIGHT
    plots.view.filter.setText("6_link_contact_f.fz")
    rows = [plots.series.item(i) for i in range(plots.series.count())]
    found = [item.text() for item in rows if not item.isHidden()]
    assert len(found) == 2 and all(name.startswith(tuple(feet)) for name in found)
    plots.select_series([name.split(" [")[0] for name in found])
    assert plots.view.selected() == found

    estimate = job.result.data.error_estimate  # the run's accuracy, in the runs' list, read in full
    assert estimate is not None and 0 < estimate < 1e-3
    (run,) = [plots.runs.item(i) for i in range(plots.runs.count())]
    assert f"error estimate {estimate:.1g} of the state's scale" in run.text()
    assert on_screen(window, plots.runs)
    assert plots.runs.viewport().rect().contains(plots.runs.visualItemRect(run))
    if folder := os.environ.get("MBSTUDIO_SCREENSHOTS"):
        window.coordinates.filter.setText("")
        assert window.show_forces(True) >= 0
        plots.seek_time(0.2)
        qtbot.wait(300)
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.window_image().save(str(Path(folder) / "window_talos_contacts.png"))
