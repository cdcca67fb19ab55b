"""Analysis › Parameter Study… in the window: a grid of one parameter of the double pendulum, every point's
ranks on a local Dask cluster, the plot of a result against the parameter, and the export."""

from __future__ import annotations

import csv

import numpy as np
import pandas

from mbstudio import samples
from mbstudio.io.display_units import DisplayUnits


def test_a_parameter_study_runs_plots_and_exports(window, qtbot, tmp_path):
    window.open_sample("double_pendulum")
    window.actions["study"].trigger()
    panel = window.study
    assert window.docks["study"].isVisible()
    name = samples.load("double_pendulum").parameters[0].name
    panel.parameter.setCurrentText(name)
    panel.start.setValue(0.5)
    panel.stop.setValue(1.5)
    panel.count.setValue(3)
    panel.add_variation()
    assert panel.variations.count() == 1 and name in panel.variations.item(0).text()
    panel.run()
    assert not panel.run_button.isEnabled()  # the window goes on while the cluster starts
    qtbot.waitUntil(lambda: panel.run_button.isEnabled(), timeout=120_000)
    assert "done; 3 rows, 0 failed" in panel.status.text()
    assert [r[name] for r in panel.rows] == [0.5, 1.0, 1.5] and {r["dp_rank"] for r in panel.rows} == {6}
    assert panel.table.rowCount() == 3
    # the varied parameter names its unit, in the table, the plot's choices and the file
    assert panel.x_choice.currentText() == f"{name} [m]" and panel.y_choice.currentText() == "dp_rank"
    (curve,) = panel.plot.getPlotItem().listDataItems()
    assert list(curve.getData()[0]) == [0.5, 1.0, 1.5]
    window.grab().save(str(tmp_path / "study.png"))
    assert panel.export("csv", str(tmp_path / "study.csv"))
    lines = (tmp_path / "study.csv").read_text().splitlines()
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert [float(r[f"{name} [m]"]) for r in rows] == [0.5, 1.0, 1.5]
    # in mm: the range typed, the table, the plot and the export; the rows stay SI
    window.set_units(DisplayUnits("deg", "mm", "deg", "mm"))
    assert panel.unit.text() == "mm" and (panel.start.value(), panel.stop.value()) == (500.0, 1500.0)
    assert panel.variations.item(0).text() == "L = 500 … 1500 mm (3 values)"
    headers = [panel.table.horizontalHeaderItem(k).text() for k in range(panel.table.columnCount())]
    assert headers[0] == f"{name} [mm]" and panel.x_choice.currentText() == f"{name} [mm]"
    (curve,) = panel.plot.getPlotItem().listDataItems()
    np.testing.assert_allclose(curve.getData()[0], [500.0, 1000.0, 1500.0], rtol=1e-12)
    assert [r[name] for r in panel.rows] == [0.5, 1.0, 1.5]
    assert panel.export("csv", str(tmp_path / "study_mm.csv"))
    table = pandas.read_csv(tmp_path / "study_mm.csv")
    np.testing.assert_allclose(table[f"{name} [mm]"], [500.0, 1000.0, 1500.0], rtol=1e-12)
    assert list(table["dp_rank"]) == [6, 6, 6]


def test_running_with_nothing_to_vary_says_what_to_do(window):
    window.actions["study"].trigger()
    window.study.run()
    assert "Nothing to vary" in window.study.status.text()
    assert window.study.study is None


def test_a_study_that_cannot_start_says_why_and_lets_the_user_run_again(window, qtbot, monkeypatch):
    """A worker without mbstudio, or no scheduler at the address, left the panel on 'starting…' for ever."""
    from mbstudio.jobs.study import Study
    from mbstudio.model import ModelError

    def refuse(study):
        raise ModelError("scheduler", "cannot connect to tcp://10.0.0.1:8786", None, "a running Dask scheduler")

    monkeypatch.setattr(Study, "start", refuse)
    monkeypatch.setattr(Study, "close", lambda study: None)
    window.open_sample("double_pendulum")
    window.actions["study"].trigger()
    panel = window.study
    panel.count.setValue(2)
    panel.add_variation()
    panel.run()
    qtbot.waitUntil(lambda: panel.run_button.isEnabled(), timeout=30_000)
    assert panel.status.text().startswith("the study could not start: scheduler: cannot connect to tcp://10.0.0.1")
    assert not panel.cancel_button.isEnabled()
