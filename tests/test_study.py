"""Parameter studies on Dask: the grid, one point, a study on a local cluster and on a separately started
scheduler with two workers, and the files of `mbstudio sweep`."""

from __future__ import annotations

import csv
import json
import socket
import subprocess
import sys
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.identification.pipeline import base_parameters
from mbstudio.jobs.study import Study, evaluate_point, grid, points
from mbstudio.model import ModelError, dumps


def test_a_grid_is_start_stop_count_both_ends_included():
    name, values = grid("D12=0.30:0.34:21")
    assert name == "D12" and len(values) == 21 and values[0] == 0.30 and values[-1] == 0.34
    assert np.allclose(np.diff(values), 0.002)
    assert grid("L1 = 0.2")[1].tolist() == [0.2]
    for bad in ("D12", "D12=a:b:3", "D12=0:1", "D12=0:1:0", "=1:2:3", "D12=0:inf:3"):
        with pytest.raises(ModelError, match="vary"):
            grid(bad)


def test_points_combine_the_grids_and_refuse_a_name_that_is_not_a_parameter():
    model = samples.load("four_bar")
    name = model.parameters[0].name
    grid_points = points(model, {name: np.array([1.0, 2.0]), model.parameters[1].name: np.array([3.0, 4.0, 5.0])})
    assert len(grid_points) == 6 and grid_points[0][name] == 1.0 and grid_points[-1][name] == 2.0
    with pytest.raises(ModelError, match="is not a parameter of the model") as err:
        points(model, {"nope": np.array([1.0])})
    assert name in str(err.value)  # the valid names are listed


def _varied(model, point: dict):
    for p in model.parameters:
        p.value = point.get(p.name, p.value)
    return model


def test_a_point_gives_what_the_analysis_gives_on_the_varied_model():
    model = samples.load("double_pendulum")
    name = model.parameters[0].name
    point = {name: 1.7 * model.parameters[0].value}
    row = evaluate_point(dumps(model), point, "basepar", {"method": "dp"})
    direct = base_parameters(_varied(samples.load("double_pendulum"), point), "dp").dp
    assert row["error"] == "" and row[name] == point[name]
    assert row["dp_rank"] == direct.rank == 6
    assert row["dp_condition"] == pytest.approx(float(direct.sigma[0] / direct.sigma[direct.rank - 1]), rel=1e-12)


def test_a_failed_point_keeps_its_row_and_says_why():
    model = samples.load("four_bar")
    long_crank = {p.name: 10.0 for p in model.parameters[:1]}  # the loop cannot close any more
    row = evaluate_point(dumps(model), long_crank, "kinematics", {"samples": 5})
    assert row["error"] and "peak" not in " ".join(row)
    assert row[model.parameters[0].name] == 10.0 and row["seconds"] >= 0


def _double_pendulum_study(**cluster) -> tuple[Study, list[dict]]:
    model = samples.load("double_pendulum")
    name = model.parameters[0].name
    study = Study(model, {name: np.array([0.5, 1.0, 1.5])}, "basepar", {"method": "dp"}, **cluster)
    return study, study.run()


def test_a_study_on_a_local_cluster_gives_every_point_as_computed_alone():
    study, rows = _double_pendulum_study(workers=2)
    model = samples.load("double_pendulum")
    assert [r[model.parameters[0].name] for r in rows] == [0.5, 1.0, 1.5]
    for point, row in zip(study.points, rows, strict=True):
        alone = evaluate_point(study.model_text, point, "basepar", {"method": "dp"})
        assert row["error"] == "" and row["worker"].startswith("tcp://127.0.0.1")
        assert row["dp_rank"] == alone["dp_rank"] and row["dp_condition"] == pytest.approx(alone["dp_condition"])
    assert study.client is None  # closed after the run


@pytest.mark.slow  # a Dask cluster of its own (10 s); the study and the window's panel run on one in the README run
def test_the_sweep_command_writes_parquet_and_csv_with_provenance(tmp_path, capsys):
    model_path = tmp_path / "pendulum.mbs"
    model_path.write_text(dumps(samples.load("double_pendulum")))
    name = samples.load("double_pendulum").parameters[0].name
    args = ["sweep", str(model_path), "--vary", f"{name}=0.5:1.5:3", "--analysis", "basepar", "--method", "dp"]
    assert main([*args, "--out", str(tmp_path / "study.parquet")]) == 0
    table = pq.read_table(tmp_path / "study.parquet")
    assert table.column(name).to_pylist() == [0.5, 1.0, 1.5] and table.column("dp_rank").to_pylist() == [6, 6, 6]
    provenance = json.loads(table.schema.metadata[b"provenance"])
    assert provenance["analysis"] == "basepar" and provenance["points"] == 3
    assert main([*args, "--out", str(tmp_path / "study.csv")]) == 0
    lines = [line for line in (tmp_path / "study.csv").read_text().splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    assert [float(r[name]) for r in rows] == [0.5, 1.0, 1.5] and {r["dp_rank"] for r in rows} == {"6"}
    assert main([*args, "--out", str(tmp_path / "study.xlsx")]) == 2
    assert "must end in .parquet or .csv" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_separately_started_scheduler_and_two_workers_give_the_local_clusters_results(tmp_path):
    """Issue 12: the SLA's 50-digit base parameters over 21 values of D12, on a LocalCluster and on a `dask
    scheduler` with two `dask worker`s started here (loopback only), give the same table."""
    dask = [sys.executable, "-m", "dask"]  # this interpreter's Dask, so the workers import this mbstudio
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    scheduler = subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"])
    workers = [
        subprocess.Popen([*dask, "worker", address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"])
        for _ in range(2)
    ]
    try:
        model = samples.load("sla_suspension")
        vary = {"D12": grid("D12=0.30:0.34:21")[1]}
        options = {"digits": 50, "samples": 40}
        local = Study(model, vary, "basepar", options, workers=2).run()
        time.sleep(1.0)  # the workers have had time to register with the scheduler
        remote = Study(model, vary, "basepar", options, scheduler=address).run()
    finally:
        for process in [*workers, scheduler]:
            process.terminate()
        for process in [*workers, scheduler]:
            process.wait(timeout=30)
    assert len({r["worker"] for r in remote}) == 2  # both workers took points
    keys = ["D12", "vp_rank", "vp_ridge_depth", "vp_condition", "model_hash", "error"]
    assert [[r[k] for k in keys] for r in local] == [[r[k] for k in keys] for r in remote]
    assert {r["vp_rank"] for r in local} == {41}  # Iriarte et al. (2017), Table 5, at every D12 of the sweep


PENDULUM = """{"format": "mbstudio", "schema_version": 1, "name": "pendulum",
 "parameters": [{"name": "L", "value": 1.0}],
 "bodies": [{"label": "1", "name": "bob", "inertia": {"m": 2, "mx": "2*L", "my": 0, "mz": 0, "Ixx": 0, "Ixy": 0,
   "Ixz": 0, "Iyy": "2*L**2", "Iyz": 0, "Izz": "2*L**2"}}],
 "joints": [{"name": "pivot", "type": "revolute", "parent": "0", "child": "1", "parent_frame": {"z": [0, 1, 0]},
   "child_frame": {"z": [0, 1, 0]}, "coordinates": [{"name": "theta", "initial": 1.2}]}]}"""


@pytest.mark.parametrize("length", [0.5, 2.0])
def test_a_linearize_point_finds_the_hanging_equilibrium_and_the_pendulum_frequency(length):
    row = evaluate_point(PENDULUM, {"L": length}, "linearize", {})
    assert row["error"] == "", row["error"]
    assert row["lowest_frequency_hz"] == pytest.approx(np.sqrt(9.81 / length) / (2 * np.pi), rel=1e-9)
    assert row["at theta"] == pytest.approx(np.pi / 2, abs=1e-9)  # the bob hangs straight down
    assert abs(row["min_damping_ratio"]) < 1e-9 and row["max_real_eigenvalue"] < 1e-9
