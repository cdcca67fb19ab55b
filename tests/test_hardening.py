"""No input destroyed, nothing half-written, no unbounded run, no traceback (issue 14, items 2, 3, 5 and 7):
the audit's exact command lines, and the atomic writer's promises."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.model import ModelError, load, save, write_atomic


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


def test_writes_are_atomic_follow_links_and_clean_up_after_a_crash(tmp_path):
    target = tmp_path / "data.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "new through the link")
    assert link.is_symlink() and target.read_text() == "new through the link"
    stale = tmp_path / f".data.txt.{'a' * 32}.tmp"
    fresh = tmp_path / f".data.txt.{'b' * 32}.tmp"
    stale.write_text("left by a crash")
    fresh.write_text("another write, still running")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    write_atomic(target, b"bytes too")
    assert target.read_bytes() == b"bytes too" and not stale.exists() and fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["data.txt", "link.txt", fresh.name])


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


def _chain(links: int) -> dict:
    """A planar chain of `links` rods on revolute joints, as a document."""
    rod = {"m": 1.0, "mx": 0.5, "my": 0.0, "mz": 0.0, "Ixx": 0.01, "Ixy": 0.0, "Ixz": 0.0, "Iyy": 0.34}
    frame = {"origin": [0, 0, 0], "z": [0, 0, 1], "x": [1, 0, 0]}
    return {
        "format": "mbstudio",
        "schema_version": 1,
        "name": f"chain of {links}",
        "bodies": [
            {"label": str(i), "inertia": {**rod, "Iyz": 0.0, "Izz": 0.34}, "points": {"tip": [1.0, 0.0, 0.0]}}
            for i in range(1, links + 1)
        ],
        "joints": [
            {
                "name": f"j{i}",
                "type": "revolute",
                "parent": str(i - 1),
                "child": str(i),
                "parent_frame": frame if i == 1 else {**frame, "origin": "tip"},
                "child_frame": frame,
                "coordinates": [{"name": f"q{i}", "initial": 0.0}],
            }
            for i in range(1, links + 1)
        ],
    }


@pytest.mark.slow  # 7 s of building a long chain
def test_a_long_chain_is_checked_and_left_to_the_numpy_path(tmp_path, capsys):
    """Loading and checking grew with the square and cube of the bodies (a 20 000-body chain: minutes); they
    are linear now (20 000 bodies: 5 s, `mbstudio check`). A model beyond the compiled engine's size is
    said to be so, and simulated on the numpy path; a 30-link chain (beyond the 24 coordinates the engine once
    stopped at) runs on the compiled engine with CVODES."""
    path = tmp_path / "chain.mbs"
    path.write_text(json.dumps(_chain(5000)))
    assert main(["check", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (len(report["bodies"]), report["dof_grubler"], report["loops"]) == (5000, 5000, 0)
    assert report["engine_build_seconds"] is None and "at most 400" in report["engine"]
    small = tmp_path / "small.mbs"
    small.write_text(json.dumps(_chain(30)))
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
        (_massless, "the motion of theta1, theta2 is undetermined at the initial configuration: no mass moves"),
        (_gimbal_lock, "the motion of a1, g1 is undetermined at the initial configuration: spherical joint 'shoulder'"),
    ],
)
def test_undetermined_motions_are_named_instead_of_a_linalg_error(tmp_path, capsys, change, words):
    path = tmp_path / "model.mbs"
    path.write_text(_double_pendulum(change))
    assert main(["simulate", str(path), "--t-end", "0.1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
