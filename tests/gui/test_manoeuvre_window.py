"""Analysis › Manoeuvre… in the window: the options dialog checks its fields, the manoeuvre runs as a job and the
Time histories panel shows its yaw-rate response, with the figures the Python API gives."""

from __future__ import annotations

import pytest

from mbstudio import samples
from mbstudio.gui.jobs.job_options import ManoeuvreDialog
from mbstudio.jobs import DONE
from mbstudio.simulation.manoeuvres import ManoeuvreOptions, manoeuvre

OPTIONS = {"kind": "step_steer", "speeds": [20.0], "handwheel": 4.0, "duration": 3.0}  # the tests' engine


@pytest.fixture
def car(window):
    window.document.stack.setClean()
    window.open_sample("vehicle_handling")
    return window


def test_the_manoeuvre_dialog_reads_and_checks_its_fields(car):
    dialog = ManoeuvreDialog(car.document.model, OPTIONS, car)
    assert dialog.ok.isEnabled() and dialog.options() == OPTIONS
    dialog.lines["speeds"].setText("12, 0.5")
    assert not dialog.ok.isEnabled() and "speeds" in dialog.error.text()
    dialog.lines["speeds"].setText("12, 16; 20")
    dialog.kind.setCurrentIndex(dialog.kind.findData("steady_state"))
    assert dialog.options()["speeds"] == [12.0, 16.0, 20.0] and "3 run(s)" in dialog.hint.text()
    dialog.reject()


@pytest.mark.slow
def test_a_step_steer_runs_as_a_job_into_the_time_histories(car, qtbot):
    job = car.run_job("manoeuvre", OPTIONS, "Manoeuvre")
    qtbot.waitUntil(lambda: not job.running, timeout=300_000)
    assert job.state == DONE, job.error
    assert car.plots.result is job.result and car.docks["plots"].isVisible()
    data = job.result.data
    assert "yaw_rate [rad/s]" in data["series"] and len(data["series"]["yaw_rate [rad/s]"]) == len(data["t"])
    api = manoeuvre(samples.load("vehicle_handling"), ManoeuvreOptions("step_steer", (20.0,), 4.0, duration=3.0))
    assert data["figures"]["yaw_rate_gain"] == pytest.approx(api.figures["yaw_rate_gain"], rel=1e-9)
