"""A run is a function of its inputs (docs/architecture.md): the same model, options and start give the same samples
from the command line and from Python, in any process, with the engine cache cold or warm, with or without progress
reporting; the coordinates a closed-loop run integrates in are chosen from its state alone (simulation/charts.py).
And a run says how accurate it is (`check_accuracy`), checked here against a tight reference of our own (no
independent route integrates these loops over 2 s; test_engine.py checks the first 0.6 s of the Delta against
Pinocchio with rigid contacts)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.kinematics import Mechanism
from mbstudio.simulation.run import simulate, state_difference

ROOT = Path(__file__).resolve().parents[1]
# what two runs that should be the same may differ by, relative to the state's scale (the arithmetic is the same, so
# they are the same bits; the bound allows another order of the same operations in a future CasADi)
SAME = 1e-10
PYTHON_RUN = """
import json, sys
import numpy as np
from mbstudio import samples
from mbstudio.simulation.run import simulate
try:
    r = simulate(samples.load(sys.argv[1]), float(sys.argv[2]))
except RuntimeError as error:
    print(json.dumps({"error": str(error)}))
else:
    np.savez(sys.argv[3], q=r.q, qd=r.qd)
    print(json.dumps({"charts": r.provenance.charts, "calls": r.provenance.rhs_evaluations}))
"""


def _environment(cache: Path) -> dict:
    return {**os.environ, "MBSTUDIO_CACHE": str(cache), "PYTHONPATH": str(ROOT)}


def _from_python(name: str, t_end: float, cache: Path, out: Path) -> dict:
    """A run in a new Python process: its states (q, q̇) or its error."""
    out = out.with_suffix(".npz")
    done = subprocess.run(
        [sys.executable, "-c", PYTHON_RUN, name, str(t_end), str(out)],
        capture_output=True, text=True, env=_environment(cache), check=True,
    )  # fmt: skip
    run = json.loads(done.stdout.strip().splitlines()[-1])
    if "error" not in run:
        data = np.load(out)
        run["states"] = np.hstack([data["q"], data["qd"]])
    return run


def _from_the_command_line(name: str, t_end: float, cache: Path, out: Path) -> dict:
    """A run of `mbstudio simulate` in a new process, with its progress on: its states (q, q̇) or its error."""
    done = subprocess.run(
        [sys.executable, "-m", "mbstudio.cli", "simulate", str(samples.path(name)), "--t-end", str(t_end),
         "--out", str(out)],
        capture_output=True, text=True, env=_environment(cache),
    )  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr.rsplit("mbstudio simulate: ", 1)[-1].strip()}  # after the progress
    provenance = json.loads(Path(f"{out}.json").read_text())["provenance"]
    _, table = exact_table(out)
    n = len(Mechanism(samples.load(name)).coordinates)
    states = table[:, 1 : 1 + 2 * n]
    return {"charts": provenance["charts"], "calls": provenance["rhs_evaluations"], "states": states}


def _same_runs(runs: list[dict]) -> None:
    """Equal samples (within SAME of the state's scale), equal coordinate choices, equal evaluation counts; or
    the same error, at the same time, from every run."""
    first = runs[0]
    if "error" in first:
        assert all(run.get("error") == first["error"] for run in runs), [r.get("error") for r in runs]
        return
    scale = np.abs(first["states"]).max()
    for run in runs[1:]:
        assert np.abs(run["states"] - first["states"]).max() <= SAME * scale
        assert json.loads(json.dumps(run["charts"])) == json.loads(json.dumps(first["charts"]))
        assert run["calls"] == first["calls"]


@pytest.mark.slow  # four processes, two of which compile the engines of every coordinate choice (a minute each)
@pytest.mark.parametrize("name", ["delta_3rr2rrr", "delta_3rus"])
def test_a_delta_moves_the_same_from_the_command_line_and_from_python_cold_and_cached(name, tmp_path):
    """They ended 0.27 rad apart: the command line's progress cut CVODES into 50 restarted pieces where Python ran
    one, and the coordinates were changed where the steps happened to stall. Each entry point runs in a new process
    with an empty cache, then in another with the cache the first one filled."""
    runs = []
    for first, second in ((_from_the_command_line, _from_python), (_from_python, _from_the_command_line)):
        cache = tmp_path / f"cache_{len(runs)}"
        cache.mkdir()
        runs.append(first(name, 2.0, cache, tmp_path / f"cold_{len(runs)}.csv"))
        runs.append(second(name, 2.0, cache, tmp_path / f"cached_{len(runs)}.csv"))
    _same_runs(runs)
    if name == "delta_3rr2rrr":  # its 2 s, with the coordinates changed on the way, where no stall stops it
        assert "error" not in runs[0] and len(runs[0]["charts"]) >= 2


def test_progress_and_the_entry_point_change_nothing_computed(tmp_path):
    """The same bits with and without progress and cancel (the command line and the window ask for them, Python
    need not), and from `mbstudio simulate`: a closed loop whose coordinates are watched at every check point."""
    model = samples.load("four_bar")
    plain = simulate(model, 2.0)
    watched = simulate(model, 2.0, progress=lambda fraction: None, cancel=lambda: False)
    assert np.array_equal(plain.q, watched.q) and np.array_equal(plain.qd, watched.qd)
    assert plain.provenance.rhs_evaluations == watched.provenance.rhs_evaluations
    out = tmp_path / "run.csv"
    assert main(["simulate", str(samples.path("four_bar")), "--t-end", "2", "--out", str(out)]) == 0
    header, table = exact_table(out)
    assert np.array_equal(table[:, [header.index(f"{c} [rad]") for c in plain.coordinates]], plain.q)


def exact_table(path: Path) -> tuple[list[str], np.ndarray]:
    """A CSV file's header and numbers, each read by float() (the shortest repr round-trips exactly; pandas 2.2's
    default parser, our lowest version, may differ by an ulp)."""
    with open(path, newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    return header, np.array([[float(v) for v in row] for row in rows])


def test_the_accuracy_is_reported_in_the_summary_the_provenance_and_the_result(tmp_path, capsys):
    """`--check-accuracy` runs the motion again at a tenth of the tolerances: the difference is printed, filed
    beside the CSV and set on the result, and it is what the run's error is against a tight reference (rtol
    1e-13): within a factor RELIABLE either way."""
    out = tmp_path / "run.csv"
    path = str(samples.path("double_pendulum"))
    assert main(["simulate", path, "--t-end", "2", "--out", str(out), "--quiet", "--check-accuracy"]) == 0
    assert "note: accuracy: the coordinates and rates differ by" in capsys.readouterr().out
    filed = json.loads((tmp_path / "run.csv.json").read_text())["provenance"]["accuracy"]
    model = samples.load("double_pendulum")
    run = simulate(model, 2.0, check_accuracy=True)
    assert run.provenance.accuracy == filed
    error = state_difference(run, simulate(model, 2.0, rtol=1e-13, atol=1e-15, error_estimate=False))
    assert filed / RELIABLE <= error <= RELIABLE * filed
    assert simulate(model, 2.0).provenance.accuracy is None  # only on request: it doubles the time


# the estimate from one run at a tenth of the tolerances: the error of a run falls about tenfold with the tolerances
# (1.1 x the difference where it falls as the tolerance, measured 0.6-2.5 x on the samples and the Delta); the
# reference's own error (1e-13) is far below
RELIABLE = 4.0


@pytest.mark.slow  # the Delta's 2 s three times, one of them at rtol 1e-13
def test_the_tight_reference_settles_the_falling_delta_within_its_reported_accuracy():
    """Which motion is right: the default run agrees with a run at rtol 1e-13 as closely as its reported accuracy
    says, over 0.6 s (before it passes near a singular configuration) and over 2 s, after it has passed near such
    configurations three times, where a change of 1e-10 rad/s in its start moves it by radians at 2 s: the
    accuracy reached there is what float64 and the tolerances allow, and the run says so."""
    model = samples.load("delta_3rr2rrr")
    tame = simulate(model, 0.6, check_accuracy=True)
    assert (
        state_difference(tame, simulate(model, 0.6, rtol=1e-13, atol=1e-15, error_estimate=False))
        <= RELIABLE * tame.provenance.accuracy
    )
    run = simulate(model, 2.0, check_accuracy=True)
    reference = simulate(model, 2.0, rtol=1e-13, atol=1e-15, error_estimate=False)
    assert state_difference(run, reference) <= RELIABLE * run.provenance.accuracy
    assert any("the motion is sensitive" in note for note in run.notes)
    nudged = simulate(model, 2.0, rtol=1e-13, atol=1e-15, velocities=np.array([1e-10, 0.0, 0.0]), error_estimate=False)
    assert state_difference(nudged, reference) > 1e4 * 1e-10  # the physics, not the integrator
