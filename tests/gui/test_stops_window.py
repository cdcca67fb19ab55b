"""Joint stops in the window: chosen and edited in the property editor (one undo step each, the model's message on
a bad value), and a run's contacts drawn in the time histories beside the stop's force."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from mbstudio.jobs import DONE
from mbstudio.model import dumps, save
from mbstudio.model.document import CompliantStop

from ..test_stops import model, pendulum
from .test_window import edit_field

THETA1 = ("coordinate", "lower_arm_pivot", "theta1")


def test_a_stop_is_chosen_and_edited_in_the_property_editor_and_undone(window):
    before = dumps(window.document.model)
    window.tree.select(THETA1)
    window.properties.editors["stop"].setCurrentText("compliant")
    stop = window.document.model.joint("lower_arm_pivot").coordinates[0].stop
    assert isinstance(stop, CompliantStop) and window.document.stack.undoText().startswith("Set stop")
    assert window.properties.editors["stop stiffness"].text() == "100000.0"
    edit_field(window, THETA1, "stop engagement", "-0.01")
    assert "stop.engagement" in window.properties.error.text() and "distance > 0" in window.properties.error.text()
    edit_field(window, THETA1, "stop stiffness", "2.5e5")
    assert window.document.model.joint("lower_arm_pivot").coordinates[0].stop.stiffness == 2.5e5
    window.properties.editors["stop"].setCurrentText("impact")
    assert "stop restitution" in window.properties.editors and "stop stiffness" not in window.properties.editors
    for _ in range(3):
        window.document.stack.undo()
    assert dumps(window.document.model) == before


def test_a_run_with_impacts_shows_its_contacts_beside_the_stops_force(window, qtbot, tmp_path):
    save(model(pendulum({"type": "impact", "restitution": 0.5}, low=0.2)), tmp_path / "pendulum.mbs")
    assert window.open_file(str(tmp_path / "pendulum.mbs"))
    job = window.run_job("simulation", {"t_end": 2.0}, "pendulum on its stop")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    assert "19 contacts of the stops" in job.result.title
    view = window.plots.view
    view.select_series(["theta", "stop:theta"])
    assert view.contacts.isVisible() and len(view.contact_marks) == 19
    assert "impact on the min of theta" in view.contact_marks[0].toolTip()
    assert "held on the min of theta, up to 1.949 N m" in view.contact_marks[-1].toolTip()
    view.contacts.setChecked(False)
    assert not view.contact_marks
    view.contacts.setChecked(True)
    folder = os.environ.get("MBSTUDIO_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.window_image().save(str(Path(folder) / "window_pendulum_stop.png"))


@pytest.mark.slow
def test_the_vehicle_drives_over_its_bump_in_the_window(window, qtbot):
    """File › Samples › vehicle, Simulate 10 s: the tyre loads and the coil-overs' stop forces against time, the
    bump and rebound stops' contacts shaded where they press."""
    window.open_sample("vehicle")
    job = window.run_job("simulation", {"t_end": 10.0, "samples": 1001}, "vehicle over the bump")
    qtbot.waitUntil(lambda: not job.running, timeout=600_000)
    assert job.state == DONE, job.error
    view = window.plots.view
    view.select_series(["fl_load.force", "rl_load.force", "stop:fl_damper_s", "stop:rl_damper_s"])
    assert len(view.curves()) == 4 and view.contacts.isVisible()
    pressed = {(c["coordinate"], c["limit"]) for c in job.result.data.contacts}
    assert {(f"{c}_damper_s", side) for c in ("fl", "fr", "rl", "rr") for side in ("min", "max")} <= pressed
    view.x_axis.setCurrentText("t [s]")
    view.plot_item.setXRange(1.8, 3.0)
    window.plots.seek_time(2.05)
    window.resize(1600, 1000)
    qtbot.wait(200)  # Qt sizes the docks when it next handles events: for the window's size, then the dock's
    window.resizeDocks([window.docks["plots"]], [560], Qt.Orientation.Vertical)
    qtbot.wait(200)
    folder = os.environ.get("MBSTUDIO_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.window_image().save(str(Path(folder) / "window_vehicle_drive.png"))
