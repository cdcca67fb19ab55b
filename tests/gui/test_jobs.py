"""Jobs in the real window: the base-parameter analysis of the SLA fills the ridge panel and the table,
an edit makes it stale (and undo current again), Cancel stops a long job within a second, and closing
with a running job asks first."""

from __future__ import annotations

import csv
import json
import time

import pandas
import pytest
import sympy
from PySide6.QtWidgets import QMessageBox

from mbstudio.jobs import CANCELLED, DONE, FAILED, TASKS

from ..test_symbolic_base import table_5
from .conftest import dispose
from .test_window import edit_field

LONG_VP = {"method": "vp", "digits": [500], "samples": 400}


def wait_for(qtbot, job, seconds: float) -> None:
    qtbot.waitUntil(lambda: not job.running, timeout=int(seconds * 1000))


@pytest.fixture(scope="module")
def sla_run(qapp, display, tmp_path_factory):
    """One base-parameter run (all three routes) shared by the tests that only read its result."""
    from PySide6.QtCore import QSettings

    from mbstudio.gui.main_window import MainWindow

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path_factory.mktemp("s")))
    window = MainWindow(persistent=False)
    window.resize(1400, 900)
    window.show()
    job = window.run_job("base_parameters", {"method": "all", "digits": [30, 50], "samples": 40}, "Base parameters")
    deadline = time.monotonic() + 180
    while job.running and time.monotonic() < deadline:
        qapp.processEvents()
        time.sleep(0.02)
    qapp.processEvents()
    yield window, job
    window.jobs.cancel_all()
    dispose(window)


def test_the_base_parameter_job_fills_the_ridge_panel_and_the_table(sla_run):
    window, job = sla_run
    assert job.state == DONE, job.error + job.details
    labels = list(window.ridge.curves)
    assert labels[0] == "DP (float64)" and {"VP 30 digits", "VP 50 digits"} <= set(labels)
    assert window.base_table.table.rowCount() == 41
    assert window.parameter_table.table.rowCount() == 70  # the SLA's 7 bodies × 10
    roles = [row[5] for row in window.parameter_table.rows("text")]  # the VP column
    assert roles.count("base (kept)") == 41 and "VP: 41 base" in window.parameter_table.summary.text()
    row = window.jobs_panel.rows[job.id]
    assert row.state.text() == "done" and row.bar.value() == 1000
    ranks = {s["label"]: s["rank"] for s in job.result.data.spectra}
    assert ranks["VP 50 digits"] == 41
    assert "41" in window.base_table.summary.text()
    assert window.ridge.value_at(1, 2.5).startswith(("DP", "VP")) and "σ_1" in window.ridge.value_at(1, 2.5)
    p = job.result.provenance
    assert p.model_hash == window.jobs.current_hash and p.method == "all" and "50 digits" in p.precision


def test_the_results_export_with_provenance(sla_run, tmp_path):
    window, _ = sla_run
    for fmt in ("PNG", "SVG", "CSV"):
        assert window.ridge.export(fmt, str(tmp_path / f"ridge.{fmt.lower()}"))
        assert (tmp_path / f"ridge.{fmt.lower()}").stat().st_size > 100
    rows = list(csv.reader((tmp_path / "ridge.csv").read_text().splitlines()))  # the header, then the rows
    assert len(rows) == 1 + len(window.document.model.inertial_parameter_names())
    assert "model_hash" in json.loads((tmp_path / "ridge.csv.json").read_text())["provenance"]
    assert window.base_table.export("csv", str(tmp_path / "base.csv"))
    table = pandas.read_csv(tmp_path / "base.csv")  # plain: no options
    assert list(table.columns) == window.base_table.columns and len(table) == 41
    paper = table_5()  # the symbolic column is the paper's Table 5
    names = window.document.model.inertial_parameter_names() + [p.name for p in window.document.model.parameters]
    symbols = {n: sympy.Symbol(n, real=True) for n in names}  # as the transcription spells them
    for kept, unit, *cells in table.itertuples(index=False):
        assert unit in ("kg", "kg m", "kg m^2")
        for cell in (c for c in cells if isinstance(c, str)):  # one plain ASCII expression per cell
            assert cell.isascii() and "\n" not in cell, cell
            sympy.sympify(cell, locals=symbols)
        assert sympy.simplify(sympy.sympify(cells[2], locals=symbols) - paper[kept]) == 0
    assert window.base_table.export("tex", str(tmp_path / "base.tex"))
    assert "\\begin{tabular}" in (tmp_path / "base.tex").read_text()
    assert "mx1" in window.base_table.copy("text") and "\\frac" in window.base_table.copy("latex")
    ridge = json.loads(tmp_export(window, "ridge", ("json",), tmp_path)["json"])  # strict JSON: -inf as text
    by_label = {s["label"]: s for s in ridge["spectra"]}
    assert by_label["VP 50 digits"]["rank"] == 41 and ridge["provenance"]["model_hash"] == window.jobs.current_hash
    assert by_label["VP 50 digits"]["singular_values"] == next(
        s["singular_values"] for s in window.ridge.result.data.spectra if s["label"] == "VP 50 digits"
    )


def test_sorting_keeps_rows_whole(sla_run):
    window, _ = sla_run
    table = window.base_table.table
    table.sortItems(5)
    rows = window.base_table.rows("text")
    by_kept = {r["kept"]: r for r in window.base_table.result.data.table}
    assert all(row[4] == by_kept[row[0]].get("symbolic", {}).get("text", "") for row in rows)
    table.sortItems(0)
    assert [row[0] for row in window.base_table.rows("text")] == list(by_kept)  # back in the parameters' order


def test_an_edit_makes_the_result_stale_and_undo_makes_it_current(sla_run):
    window, job = sla_run
    assert window.ridge.stale.isHidden() and window.base_table.stale.isHidden()
    edit_field(window, ("parameter", "D12"), "value", "0.35")
    assert not window.ridge.stale.isHidden() and not window.base_table.stale.isHidden()
    assert "STALE" in window.jobs_panel.rows[job.id].state.text()
    window.document.stack.undo()
    assert window.ridge.stale.isHidden()
    assert window.jobs_panel.rows[job.id].state.text() == "done"


def test_cancel_stops_a_long_job_within_a_second(window, qtbot):
    job = window.run_job("base_parameters", LONG_VP, "Long VP")
    qtbot.waitUntil(lambda: job.fraction > 0.0 or not job.running, timeout=60000)
    assert job.running
    row = window.jobs_panel.rows[job.id]
    assert row.cancel_button.isVisible()
    start = time.monotonic()
    row.cancel_button.click()
    assert time.monotonic() - start < 1.0
    assert job.state == CANCELLED and not job._process.is_alive()
    assert row.state.text() == "cancelled" and not row.cancel_button.isVisible()


def test_a_failing_job_shows_its_message_and_details_on_request(window, qtbot):
    job = window.run_job("base_parameters", {"method": "vp", "digits": [8]}, "Bad digits")
    wait_for(qtbot, job, 60)
    assert job.state == FAILED
    row = window.jobs_panel.rows[job.id]
    assert "digits: 8 is out of range; expected whole numbers from 16 to 1000" in row.message.text()
    assert row.details.isHidden()
    row.details_button.click()
    assert not row.details.isHidden() and "Traceback" in row.details.toPlainText()


def test_closing_with_a_running_job_asks_first(window, answers):
    job = window.run_job("base_parameters", LONG_VP, "Long VP")
    answers["question"] = QMessageBox.StandardButton.No
    assert not window.close()
    assert answers["calls"][-1][1] == "Jobs are running" and job.running
    answers["question"] = QMessageBox.StandardButton.Yes
    window.document.stack.setClean()
    assert window.close()
    assert job.state == CANCELLED


def test_the_window_routes_every_task_and_a_filed_result_to_its_panels(sla_run):
    """Each task's finished jobs have a handler in the window's table (docs/architecture.md, "The workspace"), and
    the base parameters' result went through it: filed under its model hash and shown in its panels."""
    window, job = sla_run
    assert set(window.session.routes) == set(TASKS)
    assert window.results == {job.model_hash: {"base_parameters": job}}
    assert window.base_table.result is job.result and window.ridge.result is job.result


def test_the_analysis_menu_starts_jobs(window):
    titles = [a.text() for a in window.menuBar().actions()]
    assert "&Analysis" in titles
    window.actions["basepar_symbolic"].trigger()
    job = window.jobs.jobs[-1]
    assert job.task == "base_parameters" and job.options == {"method": "symbolic"}
    window.jobs.cancel_all()


def test_kinematics_along_the_trajectory_plots_animates_and_exports(window, qtbot, monkeypatch, tmp_path, answers):
    from mbstudio import samples
    from mbstudio.model.document import Harmonic, Trajectory

    model = samples.load("sla_suspension")
    model.trajectories[:] = [Trajectory("short", {"theta1": [Harmonic(0.2, 3.0, 0.0)]}, 2.0, 21, "test")]
    window.document.replace(model, None)
    shown = []
    monkeypatch.setattr(window.view, "set_pose", lambda q: shown.append(q))
    job = window.run_job("kinematics", {}, "Kinematics")
    wait_for(qtbot, job, 60)
    assert job.state == DONE, job.error + job.details
    plots = window.plots
    assert "theta1 [rad]" in [plots.series.item(i).text() for i in range(plots.series.count())]
    assert len(plots.view.curves()) == 2  # the independent coordinates, theta1 and theta2
    plots.cursor.setValue(1.0)  # dragging the time cursor moves the mechanism
    assert plots.index == 10 and plots.slider.value() == 10
    assert shown and shown[-1] == pytest.approx(job.result.data.q[10])
    plots.seek(0)
    plots.speed.setCurrentIndex(plots.speed.count() - 1)
    plots.loop.setChecked(False)
    plots.play()
    qtbot.waitUntil(lambda: not plots.timer.isActive(), timeout=5000)  # played to the end, then stopped
    assert plots.index == 20 and plots.play_button.text() == "Play"
    frames = len(shown)
    plots.seek(plots.index - 1)
    assert len(shown) == frames + 1 and plots.index == 19
    exported = tmp_export(window, "plots", ("csv", "json"), tmp_path)
    rows = list(csv.reader(line for line in exported["csv"].splitlines() if line[:1] != "#"))
    assert rows[0][0] == "t [s]" and len(rows) == 1 + 21
    column = rows[0].index("theta1 [rad]")
    assert [float(r[column]) for r in rows[1:]] == list(job.result.data.series["theta1 [rad]"])  # every digit
    data = json.loads(exported["json"])
    assert data["provenance"]["model_hash"] == job.model_hash
    assert data["series"]["theta1 [rad]"][10] == float(rows[11][column])
    assert not window.export_result("plots", "csv", str(tmp_path / "no such folder" / "k.csv"))
    assert answers["calls"][-1][:2] == ("critical", "Export failed")  # said by the panel, for its button too
    window.open_sample("four_bar")  # results belong to their document: another one clears them
    assert plots.result is None and plots.series.count() == 0 and not plots.view.curves()
    assert window.results == {} and window.base_table.result is None and window.ridge.result is None


def tmp_export(window, panel: str, formats, folder) -> dict[str, str]:
    """Export through File › Export's own path (window.export_result) and read the text files back."""
    out = {}
    for fmt in formats:
        path = folder / f"{panel}.{fmt}"
        assert window.export_result(panel, fmt, str(path))
        out[fmt] = path.read_text(encoding="utf-8")
    return out


def test_export_entries_wait_for_a_result(window, answers, tmp_path):
    # each QAction held while its menu is used: PySide6 6.7 deletes the menu when the action's wrapper goes
    file_action = window.menuBar().actions()[0]
    export_action = next(a for a in file_action.menu().actions() if a.text() == "&Export")
    ridge_action = next(a for a in export_action.menu().actions() if a.text() == "SVD &Ridge")
    ridge_menu = ridge_action.menu()
    ridge_menu.aboutToShow.emit()
    assert [a.isEnabled() for a in ridge_menu.actions()] == [False] * 4
    assert not window.export_result("ridge", "csv", str(tmp_path / "r.csv"))
    assert answers["calls"][-1][1] == "Nothing to export" and not (tmp_path / "r.csv").exists()


def test_the_analysis_options_are_asked_for_and_remembered(window, monkeypatch):
    from PySide6.QtWidgets import QDialog

    from mbstudio.gui.jobs import job_options

    asked = []

    def accept(dialog):
        asked.append(dialog.options())
        if len(asked) == 1:
            dialog.lines["t_end"].setText("2.5")  # the user changes the end time, the first time only
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(job_options.OptionsDialog, "exec", accept)
    window.actions["simulate_options"].trigger()
    first = window.jobs.jobs[-1]
    assert first.task == "simulation" and first.options["t_end"] == 2.5 and first.options["method"] == "auto"
    window.jobs.cancel_all()
    window.actions["simulate_options"].trigger()  # the dialog opens on the options of the last run
    assert asked[1]["t_end"] == 2.5 and window.jobs.jobs[-1].options == first.options
    window.jobs.cancel_all()
    monkeypatch.setattr(job_options.OptionsDialog, "exec", lambda dialog: QDialog.DialogCode.Rejected)
    count = len(window.jobs.jobs)
    window.actions["basepar_options"].trigger()
    assert len(window.jobs.jobs) == count  # Cancel starts nothing


def test_options_remembered_before_the_automatic_integrator_are_left_behind(window):
    """A returning user's settings held method CVODES, saved at every run by the old default: the options dialog
    starts from today's defaults (the automatic integrator) instead, and what is kept now is read back."""
    from mbstudio.gui import settings as app_settings

    app_settings.settings().setValue("options/simulation", json.dumps({"t_end": 3.0, "method": "CVODES"}))
    assert app_settings.last_options("simulation") is None
    app_settings.keep_options("simulation", {"t_end": 3.0, "method": "auto"})
    assert app_settings.last_options("simulation") == {"t_end": 3.0, "method": "auto"}


def test_the_equations_of_motion_job_fills_its_table_and_exports(window, qtbot, tmp_path):
    window.open_sample("double_pendulum")
    job = window.run_job("symbolic_eom", {"simplify": True}, "Symbolic equations of motion")
    wait_for(qtbot, job, 120)
    assert job.state == DONE, job.error + job.details
    table = window.eom_table
    assert table.table.rowCount() == 7  # M: 3 entries of the upper triangle, c: 2, g: 2
    assert not window.docks["eom_table"].visibleRegion().isEmpty()  # brought to the front
    data = json.loads(tmp_export(window, "eom_table", ("json",), tmp_path)["json"])
    assert len(data["rows"]) == 7 and data["provenance"]["model_hash"] == job.model_hash


def test_compiling_a_new_models_engine_raises_no_false_alarm(window, qtbot, monkeypatch, tmp_path):
    """Issue 24, item 4: with an empty engine cache the first slider step starts the compile job; the sliders
    go on meanwhile and the job is never shown as not responding, even with a timeout five times shorter than
    the window's (a busy machine made the spawned process's start alone outlast it)."""
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "empty-cache"))
    window.open_sample("slider_crank")
    window.jobs.runner.heartbeat_timeout = 1.0
    alarms = []
    window.jobs.changed.connect(lambda job: alarms.append(job.message) if not job.responding else None)
    name = next(iter(window.coordinates.sliders))
    value = window._values()[name]
    assert window.move_coordinate(name, value + 0.01)  # the first step starts the engine's job
    (job,) = [j for j in window.jobs.jobs if j.task == "engine"]
    while job.running:
        value += 0.01
        assert window.move_coordinate(name, value)
        qtbot.wait(50)
    assert job.state == DONE, job.error
    assert not alarms, alarms[0]
    assert window.move_coordinate(name, value + 0.01) and window.session.pose.fast is not None  # compiled from now on
    assert (tmp_path / "empty-cache" / "engines").is_dir()
