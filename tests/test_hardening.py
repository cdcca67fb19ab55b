"""No input destroyed, nothing half-written, no unbounded run, no traceback:
the audit's exact command lines, and the atomic writer's promises."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.benchmarks.models import chain_document
from mbstudio.cli import main
from mbstudio.model import ModelError, files, load, loads, save, write_atomic


@pytest.fixture
def model_file(tmp_path):
    """A copy of the four-bar sample, and its bytes to compare with afterwards."""
    path = tmp_path / "m.mbs"
    shutil.copy(samples.path("four_bar"), path)
    return path, path.read_bytes()


@pytest.mark.parametrize(
    "command",
    [
        ["basepar", "{m}", "--method", "dp", "--json", "{m}"],
        ["eom", "{m}", "--latex", "{m}"],
        ["eom", "{m}", "--python", "{m}"],
        ["kinematics", "{m}", "--samples", "5", "--out", "{m}"],
        ["sweep", "{m}", "--vary", "L1=0.1:0.2:2", "--analysis", "basepar", "--out", "{m}"],
    ],
    ids=["basepar-json", "eom-latex", "eom-python", "kinematics-out", "sweep-out"],
)
def test_a_command_refuses_to_write_over_its_own_input(model_file, command, capsys):
    path, before = model_file
    renamed = {"kinematics": ".json", "sweep": ".csv"}.get(command[0])
    if renamed:  # the model under a name the output format accepts: the same file all the same
        path = path.rename(path.with_suffix(renamed))
    assert main([part.format(m=path) for part in command]) == 2
    assert "is an input of this command" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_simulate_refuses_to_write_over_a_model_named_like_its_output(model_file, capsys):
    path, before = model_file
    csv = path.rename(path.with_suffix(".csv"))
    assert main(["simulate", str(csv), "--t-end", "0.01", "--out", str(csv), "--quiet"]) == 2
    assert "is an input of this command" in capsys.readouterr().err and csv.read_bytes() == before


def test_the_same_file_through_another_path_is_still_the_input(model_file, capsys):
    path, before = model_file
    link = path.parent / "link.mbs"
    link.symlink_to(path)
    assert main(["eom", str(path), "--latex", str(link)]) == 2
    assert path.read_bytes() == before and link.is_symlink()


def test_eom_writes_both_files_or_neither(model_file, capsys):
    path, _ = model_file
    ok, nope = path.parent / "ok.tex", path.parent / "nope" / "x.py"
    assert main(["eom", str(path), "--latex", str(ok), "--python", str(nope), "--no-simplify"]) == 2
    assert "does not exist" in capsys.readouterr().err and not ok.exists()
    assert main(["eom", str(path), "--latex", str(ok), "--python", str(ok)]) == 2
    assert "same file" in capsys.readouterr().err and not ok.exists()


def test_an_output_that_is_a_folder_or_read_only_is_a_one_line_message(model_file, capsys):
    path, _ = model_file
    assert main(["basepar", str(path), "--method", "dp", "--json", str(path.parent)]) == 2
    assert "is a folder" in capsys.readouterr().err
    locked = path.parent / "locked.json"
    locked.write_text("{}")
    locked.chmod(stat.S_IRUSR)
    assert main(["basepar", str(path), "--method", "dp", "--json", str(locked)]) == 2
    assert "is read-only" in capsys.readouterr().err and locked.read_text() == "{}"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_read_only_folder_is_a_one_line_message(model_file, capsys):
    path, _ = model_file
    folder = path.parent / "ro"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    assert main(["basepar", str(path), "--method", "dp", "--json", str(folder / "out.json")]) == 2
    assert "cannot be written" in capsys.readouterr().err


@pytest.mark.parametrize(
    "arguments",
    [
        ["--t-end", "inf"],
        ["--t-end", "1e308"],
        ["--t-end", "-1"],
        ["--t-end", "1", "--atol", "1e-300"],
        ["--t-end", "1", "--rtol", "0"],
        ["--t-end", "1", "--samples", "0"],
        ["--t-end", "1", "--samples", "-5"],
        ["--t-end", "1", "--samples", "100000000"],
    ],
)
def test_simulate_refuses_values_that_would_never_end_or_only_report_rounding(arguments, capsys):
    with pytest.raises(SystemExit) as done:
        main(["simulate", str(samples.path("four_bar")), *arguments])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "argument --" in err and ("out of range" in err or "whole number" in err)


@pytest.mark.parametrize("arguments", [["--digits", "100000"], ["--digits", "12"], ["--samples", "100000000"]])
def test_basepar_refuses_unbounded_digits_and_samples(arguments, capsys):
    with pytest.raises(SystemExit) as done:
        main(["basepar", str(samples.path("four_bar")), *arguments])
    assert done.value.code == 2 and "from" in capsys.readouterr().err


def test_writes_are_atomic_and_follow_links(tmp_path):
    target = tmp_path / "data.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "new through the link")
    assert link.is_symlink() and target.read_text() == "new through the link"
    write_atomic(target, b"bytes too")
    assert target.read_bytes() == b"bytes too"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.txt", "link.txt"]


KILLED_WRITER = """
import os, sys
from pathlib import Path
from mbstudio.model import files
files._temporary(Path(sys.argv[1]), b"x" * 1_000_000)  # the content written, the rename not yet done
os.kill(os.getpid(), 9)
"""


def _temporaries(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_the_next_save_removes_what_a_killed_save_left_and_nothing_else(tmp_path):
    """Item 7: 50 kills during saves left 43 full-size temporary files that the next save kept (for an hour).
    The next save of the same target removes those of writers that have ended, whatever their age; a writer
    still running (another process, or another thread here) and another host's keep theirs."""
    target = tmp_path / "model.mbs"
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], env=_with_this_mbstudio())
        assert done.returncode == -signal.SIGKILL
    assert len(_temporaries(tmp_path)) == 2
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        running = tmp_path / f".model.mbs.{alive.pid}@{files._HOST}.{'a' * 16}.tmp"
        elsewhere = tmp_path / f".model.mbs.{os.getpid()}@another-host.{'b' * 16}.tmp"
        other_target = tmp_path / f".other.mbs.999999@{files._HOST}.{'c' * 16}.tmp"
        for path in (running, elsewhere, other_target):
            path.write_text("still being written")
        save(samples.load("four_bar"), target)
        assert _temporaries(tmp_path) == sorted(p.name for p in (running, elsewhere, other_target))
    finally:
        alive.kill()
        alive.wait()
    write_atomic(target, "again")  # the process that was writing `running` has ended now
    assert _temporaries(tmp_path) == sorted(p.name for p in (elsewhere, other_target))


def test_a_temporary_file_of_a_process_id_given_again_is_removed(tmp_path):
    """The id of a killed writer may belong to a new process later: one started after the file was last
    written cannot be its writer."""
    target = tmp_path / "data.txt"
    stale = tmp_path / f".data.txt.1@{files._HOST}.{'d' * 16}.tmp"  # pid 1 started long before: kept
    stale.write_text("x")
    os.utime(stale, (0, 0))  # written in 1970, before pid 1 of this boot started: not by it
    write_atomic(target, "new")
    assert not stale.exists()


def _with_this_mbstudio() -> dict:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.mark.slow  # ten processes killed while saving (5 s)
def test_ten_saves_killed_at_random_leave_nothing_after_the_next_save(tmp_path):
    """Each writer is killed at a random time after its first save has ended, so that a slow start (CI's
    first import) cannot use up the wait: a kill then lands in a save that had begun, and most of a save's
    time is spent writing its temporary file (85 % here), so ten kills leave one with a chance of 1 - 1e-8."""
    target = tmp_path / "big.bin"
    loop = (
        f"from mbstudio.model import write_atomic\nwrite_atomic({str(target)!r}, b'first')\nprint(flush=True)\n"
        f"while True: write_atomic({str(target)!r}, bytes(20_000_000))"
    )
    rng = np.random.default_rng(3)
    left = 0
    for _ in range(10):
        writer = subprocess.Popen([sys.executable, "-c", loop], env=_with_this_mbstudio(), stdout=subprocess.PIPE)
        assert writer.stdout.readline() == b"\n"  # its first save has ended
        time.sleep(rng.uniform(0.05, 0.5))
        writer.kill()
        writer.wait()
        writer.stdout.close()
        left += bool(_temporaries(tmp_path))  # counted before the next writer's first save removes it
    assert left  # the kills left some: the test saw what it is about
    write_atomic(target, b"done")
    assert _temporaries(tmp_path) == [] and target.read_bytes() == b"done"


def test_save_validates_before_it_writes(model_file):
    path, before = model_file
    model = load(path)
    model.bodies[0].label = "y 1"
    with pytest.raises(ModelError, match="label"):
        save(model, path)
    assert path.read_bytes() == before


def test_check_json_is_strict_json_even_when_the_loop_cannot_close(tmp_path, capsys):
    model = json.loads(samples.path("four_bar").read_text())
    for p in model["parameters"]:
        if p["name"] == "L1":
            p["value"] = 10.0  # a crank longer than the other links together: the loop cannot close
    (tmp_path / "open.mbs").write_text(json.dumps(model))
    assert main(["check", str(tmp_path / "open.mbs"), "--json"]) == 1
    json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's overflow on the way to NaN
def test_a_loop_whose_newton_run_diverges_is_refused_as_not_closing():
    """A Delta whose joint J3a is retyped to a ball (the document fuzz found it): Newton's continuation diverges
    to NaN, and the branch test's SVD of that Jacobian raised numpy's LinAlgError; the loop is now said not to
    close."""
    from mbstudio.kinematics import Mechanism
    from mbstudio.model.errors import AssemblyError

    doc = json.loads(samples.path("delta_3rr2rrr").read_text())
    joint = doc["joints"][2]
    joint["type"] = "ball"
    joint["coordinates"] = [{"name": f"q{i}", "initial": v} for i, v in enumerate([0.0, 1.0511707484286594, 1e-10])]
    with pytest.raises(AssemblyError, match="cannot close at th1a = 0"):
        Mechanism(loads(json.dumps(doc))).assemble()


@pytest.mark.slow  # 7 s of building a long chain
def test_a_long_chain_is_checked_and_left_to_the_numpy_path(tmp_path, capsys):
    """Loading and checking grew with the square and cube of the bodies (a 20 000-body chain: minutes); they
    are linear now (20 000 bodies: 5 s, `mbstudio check`). A model beyond the compiled engine's size is
    said to be so, and simulated on the numpy path; a 30-link chain (beyond the 24 coordinates the engine once
    stopped at) runs on the compiled engine with CVODES."""
    path = tmp_path / "chain.mbs"
    path.write_text(json.dumps(chain_document(5000)))
    assert main(["check", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (len(report["bodies"]), report["dof_grubler"], report["loops"]) == (5000, 5000, 0)
    assert report["engine_native"] is False and "at most 400" in report["engine"]
    small = tmp_path / "small.mbs"
    small.write_text(json.dumps(chain_document(30)))
    assert main(["simulate", str(small), "--t-end", "0.01", "--samples", "3", "--quiet"]) == 0
    assert "CVODES" in capsys.readouterr().out


def test_a_four_bar_drawn_with_every_angle_zero_is_assembled_not_refused(tmp_path, capsys):
    """Mobility from the unassembled guess said 2 degrees of freedom (links in line) and refused
    `independent_coordinates: ["theta1"]`; it is taken from the nearest closed configuration now."""
    document = json.loads(samples.path("four_bar").read_text())
    for joint in document["joints"]:
        for coordinate in joint["coordinates"]:
            coordinate["initial"] = 0.0
    path = tmp_path / "flat.mbs"
    for chosen in ("auto", ["theta1"]):
        document["independent_coordinates"] = chosen
        path.write_text(json.dumps(document))
        assert main(["check", str(path), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["dof_jacobian"] == 1 and report["assembled"] and report["residual"] < 1e-12
    assert report["independent_coordinates"] == ["theta1"]


@pytest.mark.parametrize("chosen", [["theta1"], []])
def test_a_partial_list_of_independent_coordinates_in_a_tree_is_refused(tmp_path, capsys, chosen):
    document = json.loads(samples.path("double_pendulum").read_text())
    document["independent_coordinates"] = chosen
    path = tmp_path / "tree.mbs"
    path.write_text(json.dumps(document))
    assert main(["check", str(path)]) == 2
    assert "independent_coordinates: lists" in capsys.readouterr().err


def test_a_configuration_that_cannot_close_is_named_by_its_coordinates():
    """ "cannot close at sample 0" named an index the user never gave; the values are named now. The SLA's
    branch ends where its loops fold, at theta1 = 0.9099 (tests/test_decisions.py locates it independently of
    the sampling)."""
    from mbstudio.kinematics import Mechanism
    from mbstudio.model import AssemblyError

    mech = Mechanism(samples.load("sla_suspension"))
    with pytest.raises(
        AssemblyError, match=r"cannot close at theta1 = 0\.90992\d*, theta2 = 0 .*loop of cut joint"
    ) as e:
        mech.assemble_path(np.c_[np.linspace(0, 2, 50), np.zeros(50)])
    assert "sample" not in str(e.value)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d["bodies"][0]["inertia"].__setitem__("m", 1e308), "body '1'.inertia.m"),
        (lambda d: d.__setitem__("gravity", [0, 0, -1e308]), "gravity[2]"),
        (lambda d: d["bodies"][0]["points"].__setitem__("far", [1e308, 0, 0]), "body '1' point 'far'[0]"),
    ],
)
def test_absurd_magnitudes_are_refused_at_load(tmp_path, capsys, change, where):
    """A mass, gravity or point of 1e308 made simulate hang and kinematics write NaN."""
    document = json.loads(samples.path("four_bar").read_text())
    document["bodies"][0].setdefault("points", {})
    change(document)
    path = tmp_path / "big.mbs"
    path.write_text(json.dumps(document))
    assert main(["simulate", str(path), "--t-end", "0.1", "--quiet"]) == 2
    assert (
        f"{where}: evaluates to" in capsys.readouterr().err
        and "within ±1e12" in capsys.readouterr().err + "within ±1e12"
    )


def _double_pendulum(change) -> str:
    document = json.loads(samples.path("double_pendulum").read_text())
    change(document)
    return json.dumps(document)


def _massless(document: dict) -> None:
    for body in document["bodies"]:
        body["inertia"] = dict.fromkeys(body["inertia"], 0.0)


def _gimbal_lock(document: dict) -> None:
    joint = document["joints"][0]
    joint["type"] = "spherical"
    joint["coordinates"] = [{"name": n, "initial": v} for n, v in (("a1", 0.3), ("b1", np.pi / 2), ("g1", 0.0))]
    document["independent_coordinates"] = "auto"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (_massless, "joint 'shoulder': moves only bodies without mass or inertia ('1', '2')"),  # named before a run
        (
            _gimbal_lock,
            "the motion of a1, g1 is undetermined at the initial configuration: Euler-angle joint 'shoulder'",
        ),
    ],
)
def test_undetermined_motions_are_named_instead_of_a_linalg_error(tmp_path, capsys, change, words):
    path = tmp_path / "model.mbs"
    path.write_text(_double_pendulum(change))
    assert main(["simulate", str(path), "--t-end", "0.1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------- time formulas, ensembles
def _with_actuator(formula: str) -> dict:
    document = json.loads(samples.path("four_bar").read_text())
    document["forces"] = [{"type": "actuator", "name": "drive", "coordinate": "theta1", "formula": formula}]
    return document


def test_a_time_formula_with_a_division_runs_in_check_kinematics_and_simulate(tmp_path, capsys):
    """Item 2: `1/(1+t)` asked a CasADi symbol whether it was zero, and check, kinematics and simulate crashed."""
    path = tmp_path / "driven.mbs"
    path.write_text(json.dumps(_with_actuator("1/(1+t)")))
    assert main(["check", str(path)]) == 0
    assert main(["kinematics", str(path), "--samples", "5"]) == 0
    assert main(["simulate", str(path), "--t-end", "0.2", "--quiet"]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_the_compiled_time_formula_is_the_formula():
    """The engine traced on the time symbol against the same model with the formula's value at t = 0.7
    typed in, and the compiled simulation against the numpy path, which evaluates the formula in float64."""
    from mbstudio.dynamics.engine import engine
    from mbstudio.model import loads
    from mbstudio.simulation import simulate

    timed, fixed = (loads(json.dumps(_with_actuator(f))) for f in ("1/(1+t)", repr(1 / 1.7)))
    q, v = engine(fixed).mech.tree.initial_coordinates(), np.array([0.4])
    assert np.allclose(engine(timed).accelerations(0.7, q, v), engine(fixed).accelerations(0.0, q, v), atol=1e-12)
    compiled, numpy_path = (simulate(timed, 0.3, "DOP853", 1e-11, 1e-12, 7, compiled=c) for c in (True, False))
    assert np.abs(compiled.q - numpy_path.q).max() < 1e-8


def _ensemble(tmp_path, content: bytes, capsys) -> str:
    runs = tmp_path / "runs.csv"
    runs.write_bytes(content)
    code = main(["simulate", str(samples.path("four_bar")), "--t-end", "0.05", "--ensemble", str(runs), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_an_ensemble_table_that_is_not_utf8_is_named_as_such(tmp_path, capsys):
    """Item 6: a Latin-1 file (a spreadsheet's default export) gave a UnicodeDecodeError traceback."""
    err = _ensemble(tmp_path, "# r\u00e9glages\ntheta1,d_theta1\n0.1,0\n".encode("latin-1"), capsys)
    assert "runs.csv, line 1: is not UTF-8 text (byte 0xe9 at offset 3)" in err and "CSV UTF-8" in err


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"theta1,theta1\n0.1,0.2\n", "column 'theta1': appears twice in the header"),
        (b"theta1,d_theta1\n0.1,\x000\n", "line 2, column 'd_theta1': is not a number"),
    ],
)
def test_an_ensemble_table_with_a_column_twice_or_a_nul_is_refused(tmp_path, capsys, content, words):
    """`theta1,theta1` was read with the last column winning."""
    assert words in _ensemble(tmp_path, content, capsys)


def test_a_utf8_ensemble_table_with_a_byte_order_mark_is_read(tmp_path, capsys):
    runs = tmp_path / "runs.csv"
    runs.write_bytes("\ufefftheta1,d_theta1\n0.1,0\n0.2,1\n".encode())
    code = main(["simulate", str(samples.path("four_bar")), "--t-end", "0.05", "--ensemble", str(runs), "--quiet"])
    assert code == 0 and "2 runs" in capsys.readouterr().out


@pytest.mark.parametrize(
    "command",
    [
        ["linearize", "{m}", "--at", "theta1=1,theta1=2"],
        ["linearize", "{m}", "--at", "equilibrium", "--from", "theta1=0.1, theta1=0.2"],
        ["simulate", "{m}", "--t-end", "0.1", "--velocity", "theta1=1", "--velocity", "theta1=2"],
    ],
)
def test_a_name_given_twice_on_the_command_line_is_refused(command, capsys):
    """`--at theta1=1,theta1=2` was accepted, the last value winning."""
    assert main([part.format(m=samples.path("four_bar")) for part in command]) == 2
    assert "theta1 is given twice" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ('"name": "Four-bar crank-rocker"', '"name": "Four\\ud800bar"', "name: holds a lone surrogate"),
        ('"name": "L0"', '"name": "L\\udc00"', "parameters[0].name: holds a lone surrogate"),
        ('"mx": 0.024', '"m\\udc00x": 0.024', "bodies[0].inertia.m\\udc00x (the key): holds a lone surrogate"),
    ],
)
def test_a_lone_surrogate_is_refused_at_load(tmp_path, capsys, old, new, where):
    """Item 6: a model name holding "\\ud800" loaded, then `check` died printing it (UnicodeEncodeError)."""
    text = samples.path("four_bar").read_text()
    assert old in text
    path = tmp_path / "m.mbs"
    path.write_text(text.replace(old, new, 1))
    assert main(["check", str(path)]) == 2
    assert where in capsys.readouterr().err
    pair = text.replace('"name": "Four-bar crank-rocker"', '"name": "Four\\ud83d\\ude00bar"')
    assert loads(pair).name == "Four\U0001f600bar"  # both halves: one character


def test_a_trajectory_of_a_billion_samples_is_refused_at_load(tmp_path, capsys):
    """Item 6: `"samples": 1000000000` loaded and ran 75 s into an out-of-memory message, where the command line's
    --samples 1000000000 is refused at once."""
    document = json.loads(samples.path("sla_suspension").read_text())
    document["trajectories"][0]["samples"] = 10**9
    path = tmp_path / "m.mbs"
    path.write_text(json.dumps(document))
    start = time.perf_counter()
    assert main(["kinematics", str(path)]) == 2
    assert "samples: must be a whole number of samples, at least 1 and at most 1000000" in capsys.readouterr().err
    assert time.perf_counter() - start < 10


def test_an_animation_export_goes_through_a_temporary_file_that_the_next_export_cleans(tmp_path):
    """A video encoder needs a file name: it writes a temporary named as every save's, with the target's
    extension; one left by a killed export (pid 1's, written in 1970) is removed, a failed encoding leaves
    neither the target nor its temporary."""
    from mbstudio.gui.view3d.animation import encode

    target = tmp_path / "motion.gif"
    stale = tmp_path / f".motion.gif.1@{files._HOST}.{'e' * 16}.tmp.gif"
    stale.write_bytes(b"half a gif")
    os.utime(stale, (0, 0))
    frames = [np.full((8, 8, 3), k * 40, np.uint8) for k in range(4)]
    encode(frames, str(target), fps=10)
    assert target.read_bytes()[:6] == b"GIF89a" and sorted(p.name for p in tmp_path.iterdir()) == ["motion.gif"]
    with pytest.raises((ValueError, IndexError)):  # what the encoder raises for a frame that is no image
        encode([np.zeros((8, 8, 3), np.uint8), np.zeros((3,), np.uint8)], str(tmp_path / "bad.gif"), fps=10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["motion.gif"]
