"""One command-line grammar: every command's errors in one format, `mbstudio COMMAND: error: WHERE: WHAT (got
…); expected …` on one line; progress written to a pipe as one line per step; `--json` printing one object that
holds the figures the text gives."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from mbstudio import samples
from mbstudio.cli import main

FOUR_BAR = str(samples.path("four_bar"))
PENDULUM = str(samples.path("double_pendulum"))

# each computing command driven with one bad input: an option's value, a name the model lacks, or a model that
# does not suit the command
BAD_INPUTS = {
    "check": ["BAD"],
    "eom": ["BAD"],
    "kinematics": [FOUR_BAR, "--units", "furlong"],
    "simulate": [FOUR_BAR, "--t-end", "1", "--velocity", "zz=3"],
    "basepar": [FOUR_BAR, "--digits", "1"],
    "sweep": [FOUR_BAR, "--vary", "zz=1:2:3", "--analysis", "basepar", "--out", "OUT/s.csv"],
    "linearize": [FOUR_BAR, "--at", "zz=1"],
    "blocks": [FOUR_BAR, "--t-end", "1", "--velocity", "zz=1"],
    "import": ["OUT/missing.urdf", "-o", "OUT/x.mbs"],
    "export": [FOUR_BAR, "--urdf", "OUT/x.urdf"],
    "pkm": [FOUR_BAR],
    "report": [FOUR_BAR, "--out", "OUT/r.pdf"],
    "identify": [FOUR_BAR, "--data", "OUT/missing.csv"],
    "excite": [FOUR_BAR, "--duration", "0", "--out", "OUT/t.csv"],
}


def test_every_computing_command_is_driven_here():
    from mbstudio.commands import COMPUTING

    assert set(BAD_INPUTS) == COMPUTING


@pytest.mark.parametrize("command", sorted(BAD_INPUTS))
def test_a_bad_input_is_one_line_in_the_one_format(command, tmp_path, capsys):
    bad = tmp_path / "bad.mbs"
    bad.write_text('{"format": "mbstudio", "schema_version": 1, "name": "x", "bodies": 3, "joints": []}')
    argv = [command, *(a.replace("OUT", str(tmp_path)).replace("BAD", str(bad)) for a in BAD_INPUTS[command])]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors end the program
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "usage:" not in err, err
    # WHERE names an option, a field or a file; WHAT says what is wrong; then the value found and what would do,
    # in that order, where the message gives them ("must be a list" says what would do itself)
    message = err.removeprefix(f"mbstudio {command}: error: ")
    where, _, what = message.partition(": ")
    assert message != err and where and what.strip(), err
    if "(got " in what and "; expected " in what:
        assert what.index("(got ") < what.index("; expected "), err
    assert not list(tmp_path.glob("OUT*")) and sorted(p.name for p in tmp_path.iterdir()) == ["bad.mbs"]


def _piped(arguments: list[str]) -> subprocess.CompletedProcess:
    """`mbstudio ARGUMENTS` with stdout and stderr through pipes, as a log or CI would read them."""
    command = [sys.executable, "-m", "mbstudio.cli", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_the_progress_of_a_simulation_through_a_pipe_is_one_line_per_step():
    run = _piped(["simulate", FOUR_BAR, "--t-end", "0.5"])
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert "\r" not in run.stderr and len(lines) >= 5
    fractions = [float(line.split("%")[0]) for line in lines]
    assert fractions == sorted(fractions) and fractions[-1] == 100.0
    assert all(re.fullmatch(r" *\d+\.\d %.*", line) for line in lines), lines


def test_the_progress_of_a_sweep_through_a_pipe_is_one_line_per_step(tmp_path):
    out = tmp_path / "study.csv"
    arguments = ["--vary", "L1=0.08:0.12:3", "--analysis", "kinematics", "--samples", "5", "--workers", "1"]
    run = _piped(["sweep", FOUR_BAR, *arguments, "--out", str(out)])
    assert run.returncode == 0, run.stderr
    steps = [line for line in run.stderr.splitlines() if "points" in line]
    assert "\r" not in run.stderr and steps and steps[-1].endswith("3/3 points"), run.stderr
    assert all(re.fullmatch(r" *\d+\.\d %  \d/3 points", line) for line in steps), steps
    assert "3 rows written" in run.stdout


def _json(argv: list[str], capsys) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_simulate_json_holds_the_figures_the_text_gives(tmp_path, capsys):
    out = tmp_path / "run.csv"
    figures = _json(["simulate", FOUR_BAR, "--t-end", "0.5", "--quiet", "--out", str(out), "--json"], capsys)
    assert figures["model"] == "Four-bar crank-rocker" and figures["t_end"] == 0.5 and figures["written"] == [str(out)]
    assert figures["method"] == "CVODES" and figures["rhs_evaluations"] > 0 and len(figures["model_sha256"]) == 64
    # the energy balance of a conservative linkage: its change is within the tolerances' reach of its scale
    assert figures["energy_change"] <= 1e-6 * abs(figures["energy_start"])
    assert figures["residual_max"] < 1e-10 and out.exists()
    text = main(["simulate", FOUR_BAR, "--t-end", "0.5", "--quiet"]) == 0 and capsys.readouterr().out
    assert f"start {figures['energy_start']:.9g} J" in text


def test_an_ensemble_json_has_one_entry_per_run(tmp_path, capsys):
    runs = tmp_path / "runs.csv"
    runs.write_text("theta1,d_theta1\n0.1,0\n0.2,1\n")
    figures = _json(["simulate", FOUR_BAR, "--t-end", "0.2", "--ensemble", str(runs), "--json", "--quiet"], capsys)
    inputs = [{"theta1": 0.1, "d_theta1": 0.0}, {"theta1": 0.2, "d_theta1": 1.0}]
    assert [r["inputs"] for r in figures["runs"]] == inputs
    assert all(r["energy_change"] >= 0 for r in figures["runs"])


def test_excite_json_holds_the_conditioning_it_reached(tmp_path, capsys):
    out = tmp_path / "traj.csv"
    argv = ["excite", PENDULUM, "--duration", "2", "--evaluations", "20", "--out", str(out), "--json"]
    figures = _json(argv, capsys)
    assert 1 <= figures["condition_after"] <= figures["condition_before"]
    assert figures["base_parameters"] and figures["written"] == [str(out)] and out.exists()


def test_sweep_json_holds_the_points_and_failures(tmp_path, capsys):
    out = tmp_path / "study.csv"
    arguments = ["--vary", "L1=0.08:0.12:2", "--analysis", "kinematics", "--samples", "5", "--workers", "1"]
    figures = _json(["sweep", FOUR_BAR, *arguments, "--out", str(out), "--json", "--quiet"], capsys)
    assert figures == {
        "model": "Four-bar crank-rocker",
        "analysis": "kinematics",
        "points": 2,
        "failed": [],
        "written": [str(out)],
    }


def test_a_rate_has_one_name_in_tables_and_on_the_command_line(tmp_path, capsys):
    """d_NAME and dd_NAME, as the model file reserves them: the CSV headers of a run, an ensemble's columns and
    --at; the other spelling, NAME_dot, is read with a note where a name is typed."""
    out = tmp_path / "run.csv"
    assert main(["simulate", FOUR_BAR, "--t-end", "0.2", "--velocity", "theta1=6", "--out", str(out), "--quiet"]) == 0
    header = out.read_text().splitlines()[0].split(",")
    assert {"theta1 [rad]", "d_theta1 [rad/s]", "dd_theta1 [rad/s^2]"} <= set(header)
    assert not any("_dot" in h for h in header)
    assert float(out.read_text().splitlines()[1].split(",")[header.index("d_theta1 [rad/s]")]) == 6.0
    capsys.readouterr()
    runs = tmp_path / "runs.csv"
    runs.write_text("theta1,theta1_dot\n0.1,2\n")
    assert main(["simulate", FOUR_BAR, "--t-end", "0.1", "--ensemble", str(runs), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["runs"][0]["inputs"] == {"theta1": 0.1, "d_theta1": 2.0}
    assert "column 'theta1_dot' read as 'd_theta1'" in captured.err
