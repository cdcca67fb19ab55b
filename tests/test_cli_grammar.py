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
    "kc": [FOUR_BAR, "--out", "OUT/kc.csv"],
    "legged": ["--frequency", "fast", "-o", "OUT/solo.mbs"],
    "manoeuvre": [FOUR_BAR, "--kind", "step_steer", "--out", "OUT/m.txt"],
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
    lines = [line for line in run.stderr.splitlines() if re.fullmatch(r" *\d+\.\d %.*", line)]
    said = [line for line in run.stderr.splitlines() if line not in lines]  # a first run on a new model: builds
    building = r"building the compiled .*|\w+ (built|not compiled).*"
    steps = building + r"|  traced .*; compiling its C \.\.\.|  \d+ of \d+ units .*"  # a cold build's own
    assert all(re.fullmatch(steps, line) for line in said), said
    # a short smooth run is a few integrator pieces (simulation/integrators.py): a line at each piece's end
    assert "\r" not in run.stderr and len(lines) >= 3, run.stderr
    fractions = [float(line.split("%")[0]) for line in lines]
    assert fractions == sorted(fractions) and fractions[-1] == 100.0


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
    for spelling, note in (("d_theta1=6", False), ("theta1_dot=6", True)):  # --velocity names the coordinate
        argv = ["simulate", FOUR_BAR, "--t-end", "0.1", "--velocity", spelling, "--out", str(out), "--quiet"]
        assert main(argv[:-1]) == 0 and ("theta1_dot read as d_theta1" in capsys.readouterr().err) == note
        first = out.read_text().splitlines()[1].split(",")
        assert float(first[header.index("d_theta1 [rad/s]")]) == 6.0


def test_eom_json_holds_the_table_of_operations(tmp_path, capsys):
    latex = tmp_path / "eom.tex"
    figures = _json(["eom", FOUR_BAR, "--latex", str(latex), "--json"], capsys)
    assert figures["coordinates"] == 3 and figures["closed_loop"] is True and figures["inertial_symbols"] == 30
    assert figures["matrices"]["mass_matrix"]["shape"] == [3, 3]
    assert figures["ops_before"] == sum(m["ops_before"] for m in figures["matrices"].values())
    assert figures["written"] == {str(latex): len(latex.read_text())}


def test_report_json_holds_each_curve_over_the_travel(tmp_path, capsys):
    out = tmp_path / "report.svg"
    figures = _json(["report", str(samples.path("sla_suspension")), "--out", str(out), "--json"], capsys)
    assert figures["poses"] >= 2 and figures["wheel_travel_m"][0] < 0 < figures["wheel_travel_m"][1]
    camber = figures["curves"]["camber"]
    assert camber["unit"] == "rad" and camber["min"] <= camber["design"] <= camber["max"]
    assert figures["written"] == [str(out)] and out.exists()


def test_pkm_json_holds_the_machine_and_the_task_space_equations(capsys):
    figures = _json(["pkm", str(samples.path("irsbot2")), "--json"], capsys)
    at_pose = figures["at_pose"]
    mass = at_pose["mass_matrix"]
    assert len(mass) == len(at_pose["task_coordinates"]) and all(len(row) == len(mass) for row in mass)
    assert all(abs(mass[i][j] - mass[j][i]) <= 1e-12 * abs(mass[i][i]) for i in range(len(mass)) for j in range(i))
    assert at_pose["mass_condition"] >= 1 and set(at_pose["holding_efforts"]) == {"th1a", "th1b"}
    assert figures["machine"]["platform"]


def test_blocks_json_holds_the_accelerations_and_the_cross_check(capsys):
    balloon = str(samples.path("balloon"))
    described = _json(["blocks", balloon, "--json"], capsys)
    assert described["difference_to_articulated_body_algorithm"] < 1e-9  # the same accelerations two ways
    assert [b["joint"] for b in described["blocks"]] == ["balloon", "slider", "pendulum1", "pendulum2"]
    figures = _json(["blocks", balloon, "--t-end", "0.2", "--json"], capsys)
    assert figures["largest_errors"]["coordinates"]["largest_error"] < 1e-6
    assert set(figures["drifts"]) == {"general", "block model"}


def test_linearize_and_basepar_print_their_json_on_stdout_with_json_alone(tmp_path, capsys):
    linear = _json(["linearize", str(samples.path("slider_crank")), "--json"], capsys)
    assert len(linear["A"]) == len(linear["states"]) and linear["is_equilibrium"]
    out = tmp_path / "model.json"
    assert main(["linearize", str(samples.path("slider_crank")), "--json", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out and json.loads(out.read_text())["A"] == linear["A"]
    base = _json(["basepar", FOUR_BAR, "--method", "dp", "--json", "--quiet"], capsys)
    assert base["parameter_names"] and base["model"] == "Four-bar crank-rocker"


def test_identify_prints_its_json_on_stdout_with_json_alone(tmp_path, capsys):
    """A log made from the double pendulum's own motion, as the tutorial makes one."""
    import pandas as pd

    run = tmp_path / "run.csv"
    assert main(["kinematics", PENDULUM, "--samples", "1001", "--out", str(run)]) == 0
    series = pd.read_csv(run)
    names = {"t [s]": "t [s]", "theta1 [rad]": "theta1 [rad]", "theta2 [rad]": "theta2 [rad]"}
    names |= {f"actuator:theta{k} [N m]": f"tau_theta{k} [N m]" for k in (1, 2)}
    series[list(names)].rename(columns=names).to_csv(tmp_path / "log.csv", index=False)
    capsys.readouterr()
    figures = _json(["identify", PENDULUM, "--data", str(tmp_path / "log.csv"), "--json", "--quiet"], capsys)
    assert figures["rank"] == 6 and len(figures["base_parameters"]) == 6


def test_every_computing_command_takes_json_and_quiet():
    from mbstudio.cli import build_parser
    from mbstudio.commands import COMPUTING

    for name in COMPUTING:
        sub = next(a for a in build_parser(name)._actions if a.dest == "command").choices[name]
        options = {o for action in sub._actions for o in action.option_strings}
        assert {"--json", "--quiet"} <= options, name
