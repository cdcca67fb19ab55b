"""Analysis › Manoeuvre… in the window: the options dialog checks its fields, the manoeuvre runs as a job and the
Time histories panel shows its yaw-rate response, with the figures the Python API gives; the Handling panel draws
the steady-state handling diagram (its line's slope the understeer gradient) and the step steer's response with its
response time and peak marked. Screenshots go to MBSTUDIO_SCREENSHOTS when set."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.gui.jobs.job_options import ManoeuvreDialog
from mbstudio.jobs import DONE
from mbstudio.jobs.results import ManoeuvreResult
from mbstudio.jobs.tasks import JobResult, Provenance
from mbstudio.model import ModelError
from mbstudio.simulation.manoeuvres import ENTRY_TIME, ManoeuvreOptions, manoeuvre

from .test_workbench import shot

OPTIONS = {
    "kind": "step_steer",
    "speeds": [20.0],
    "handwheel": 4.0,
    "duration": 3.0,
    "speed_gain": 2e4,
}  # the tests' engine


@pytest.fixture
def car(window):
    window.document.stack.setClean()
    window.open_sample("vehicle_handling")
    return window


def test_the_manoeuvre_dialog_reads_and_checks_its_fields(car):
    dialog = ManoeuvreDialog(car.document.model, OPTIONS, car)
    assert dialog.ok.isEnabled() and dialog.options() == OPTIONS | {"radius": 40.0}  # the constant radius's default
    dialog.lines["radius"].setText("2")
    assert not dialog.ok.isEnabled() and "radius" in dialog.error.text()
    dialog.lines["radius"].setText("60")
    dialog.kind.setCurrentIndex(dialog.kind.findData("constant_radius"))
    with pytest.raises(ModelError, match="do not make a constant-radius run"):  # one speed, 3 s
        dialog.options()
    dialog.lines["speeds"].setText("4, 8")
    dialog.lines["duration"].setText("20")
    assert dialog.options()["radius"] == 60.0 and dialog.options()["kind"] == "constant_radius"
    dialog.kind.setCurrentIndex(dialog.kind.findData("step_steer"))
    dialog.lines["speeds"].setText("20")
    dialog.lines["duration"].setText("3")
    dialog.lines["speeds"].setText("12, 0.5")
    assert not dialog.ok.isEnabled() and "speeds" in dialog.error.text()
    dialog.lines["speed_gain"].setText("-1")
    assert not dialog.ok.isEnabled() and "speed_gain" in dialog.error.text()
    dialog.lines["speed_gain"].setText("0")
    dialog.lines["speeds"].setText("12, 16; 20")
    dialog.kind.setCurrentIndex(dialog.kind.findData("steady_state"))
    assert dialog.options()["speeds"] == [12.0, 16.0, 20.0] and "3 run(s)" in dialog.hint.text()
    assert dialog.options()["speed_gain"] == 0.0
    dialog.reject()


@pytest.mark.slow
def test_a_step_steer_runs_as_a_job_into_the_time_histories(car, qtbot):
    job = car.run_job("manoeuvre", OPTIONS, "Manoeuvre")
    qtbot.waitUntil(lambda: not job.running, timeout=300_000)
    assert job.state == DONE, job.error
    assert car.plots.result is job.result and car.docks["plots"].isVisible()
    data = job.result.data
    assert "yaw_rate [rad/s]" in data.series and len(data.series["yaw_rate [rad/s]"]) == len(data.t)
    api = manoeuvre(samples.load("vehicle_handling"), ManoeuvreOptions("step_steer", (20.0,), 4.0, duration=3.0))
    (value, unit), (expected, expected_unit) = data.figures["yaw_rate_gain"], api.figures["yaw_rate_gain"]
    assert unit == expected_unit and value == pytest.approx(expected, rel=1e-9)  # pytest 9.2 compares no text in approx


def _drawn(panel) -> dict:
    """The panel's plotted curves by legend name: (x, y) arrays."""
    return {item.name(): item.getData() for item in panel.plot.plotItem.listDataItems()}


def test_the_handling_panel_draws_the_steady_state_diagram_with_the_understeer_gradient(car, tmp_path):
    """A steady-state table (three speeds, understeer angle 0.5 deg/g × a_y + 0.1 deg plus a scatter) drawn as the
    handling diagram: the dashed line's slope is the figure, and it is np.polyfit's line through the points (an
    independent fit); the CSV export writes the table."""
    ay = np.array([0.4, 1.1, 2.0])  # m/s²
    understeer = np.radians(0.5 * ay / 9.81 + 0.1 + np.array([0.002, -0.004, 0.002]))
    slope = float(np.polyfit(ay / 9.81, np.degrees(understeer), 1)[0])
    table = [("speed", "m/s", np.array([12.0, 16.0, 20.0])), ("lateral_acceleration", "m/s^2", ay),
             ("front_steer", "rad", understeer + 0.01), ("rear_steer", "rad", np.zeros(3)),
             ("understeer_angle", "rad", understeer)]  # fmt: skip
    figures = {"understeer_gradient": (slope, "deg/g"), "roll_gradient": (6.8, "deg/g")}
    data = ManoeuvreResult(np.zeros(1), [], np.zeros((1, 0)), {}, table=table, figures=figures)
    options = {"kind": "steady_state", "speeds": [12.0, 16.0, 20.0], "handwheel": 4.0}
    car.handling.show_result(
        JobResult("manoeuvre", "steady", Provenance("h", "manoeuvre", "float64", options, 1.0), data)
    )
    x, y = _drawn(car.handling)[f"K = {slope:.3g} deg/g"]
    fit = np.polyfit(ay / 9.81, np.degrees(understeer), 1)
    assert np.diff(y)[0] / np.diff(x)[0] == pytest.approx(slope, rel=1e-12)
    assert y == pytest.approx(np.polyval(fit, x), abs=1e-12)
    assert "understeer gradient" in car.handling.summary.text()
    car.docks["handling"].show()
    car.docks["handling"].raise_()
    car.resize(1280, 800)
    shot(car, "handling_diagram.png")
    assert car.handling.export("csv", str(tmp_path / "h.csv"))
    assert (tmp_path / "h.csv").read_text().splitlines()[0].startswith("speed [m/s],lateral_acceleration")


def test_the_handling_panel_draws_the_constant_radius_run_while_the_circle_was_held(car):
    """A constant-radius time history (a_y rising with time, the understeer angle 0.4 deg/g × a_y, the car leaving
    the 40 m circle from 16 s: radius error 1 m, over its 0.8 m tolerance) drawn as a handling diagram over the
    readings after ENTRY_TIME and before the circle was lost only, with the figure's line; the summary names both
    gradients and where the circle was lost."""
    t = np.linspace(0.0, 20.0, 41)
    ay = 0.05 * t + 0.3  # m/s²
    understeer = np.radians(0.4 * ay / 9.81)
    table = [("t", "s", t), ("speed", "m/s", 4 + 0.2 * t), ("lateral_acceleration", "m/s^2", ay),
             ("front_steer", "rad", understeer + 0.05), ("rear_steer", "rad", np.zeros_like(t)),
             ("understeer_angle", "rad", understeer), ("radius_error", "m", np.where(t >= 16.0, 1.0, 0.3))]  # fmt: skip
    figures = {"understeer_gradient": (0.4, "deg/g"), "understeer_gradient_from_handwheel": (4.0, "deg/g"),
               "roll_gradient": (6.7, "deg/g"), "fitted_up_to": (1.05 / 9.81, "g"),
               "lateral_acceleration_at_limit": (1.05 / 9.81, "g"), "circle_lost_at_speed": (7.2, "m/s")}  # fmt: skip
    data = ManoeuvreResult(t, [], np.zeros((len(t), 0)), {}, table=table, figures=figures)
    options = {"kind": "constant_radius", "speeds": [4.0, 8.0], "duration": 20.0, "radius": 40.0}
    car.handling.show_result(
        JobResult("manoeuvre", "radius", Provenance("h", "manoeuvre", "float64", options, 1.0), data)
    )
    drawn = _drawn(car.handling)
    x, y = drawn["understeer angle"]
    held = (t >= ENTRY_TIME) & (t < 16.0)
    assert x == pytest.approx(ay[held] / 9.81, abs=1e-15) and len(x) == int(held.sum())
    assert y == pytest.approx(0.4 * x, abs=1e-12)
    summary = car.handling.summary.text()
    assert "constant radius" in summary and "4 deg/g" in summary and "left the circle at 7.2 m/s" in summary


@pytest.mark.slow
def test_a_step_steer_s_yaw_response_is_marked_in_the_handling_panel(car, qtbot):
    """The step steer as a job: the Handling panel comes to the front with the yaw rate, the steady level at the
    figure, and the response-time point at 90 % of the change (the figure's definition, checked on the curve)."""
    job = car.run_job("manoeuvre", OPTIONS, "Manoeuvre")
    qtbot.waitUntil(lambda: not job.running, timeout=300_000)
    assert job.state == DONE, job.error
    assert car.handling.result is job.result and car.docks["handling"].isVisible()
    figures = job.result.data.figures
    drawn = _drawn(car.handling)
    t, r = drawn["yaw rate"]
    steady = figures["steady_yaw_rate"][0]
    before = np.mean(r[t <= OPTIONS.get("step_at", ManoeuvreOptions().step_at)])  # straight running: about 0
    assert drawn["steady yaw rate"][1] == pytest.approx([steady, steady])
    ((_, reached),) = [v for k, v in drawn.items() if k.startswith("response time")]
    assert 0.9 * abs(steady - before) <= abs(reached[0] - before) < abs(steady - before)
    ((_, peak),) = [v for k, v in drawn.items() if k.startswith("peak")]
    assert abs(peak[0] - before) == pytest.approx(np.max(np.abs(r - before)), rel=1e-9)
    car.resize(1280, 800)
    shot(car, "handling_step_steer.png")
