"""The `mbstudio` command line: check for every sample, JSON keys, errors for bad files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from mbstudio import __version__, samples
from mbstudio.cli import main

EXPECTED = {  # name: (dof, loops)
    "sla_suspension": (2, 3),
    "four_bar": (1, 1),
    "slider_crank": (1, 1),
    "double_pendulum": (2, 0),
    "puma560": (6, 0),
    "delta_3rr2rrr": (3, 5),
    "gripper": (4, 0),
    "balloon": (9, 0),
}


def test_every_expected_sample_is_bundled():
    assert set(EXPECTED) <= set(samples.names())


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "delta_3rr2rrr" else n for n in sorted(EXPECTED)]
)  # the Delta (7 s) with the slow checks; test_redundant_constraints_are_reported_for_the_delta covers it
def test_check_json_for_each_sample(name, capsys):
    assert main(["check", str(samples.path(name)), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in (
        "bodies",
        "joints",
        "loops",
        "dof_grubler",
        "dof_jacobian",
        "independent_coordinates",
        "assembled",
        "residual",
    ):
        assert key in report
    dof, loops = EXPECTED[name]
    assert (report["dof_jacobian"], report["loops"]) == (dof, loops)
    assert len(report["independent_coordinates"]) == dof
    assert report["assembled"] is True
    assert report["residual"] < 1e-12
    assert "engine_build_seconds" not in report and isinstance(report["engine_native"], bool)  # check builds nothing


def test_sla_counts(capsys):
    main(["check", str(samples.path("sla_suspension")), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["dof_grubler"] == 2 and report["dof_jacobian"] == 2 and report["loops"] == 3
    assert report["independent_coordinates"] == ["theta1", "theta2"]
    assert report["inertial_parameters"] == 70
    assert report["redundant_constraints"] == []


@pytest.mark.slow  # builds the Delta's engine: 28 s on a fresh machine
def test_redundant_constraints_are_reported_for_the_delta(capsys):
    main(["check", str(samples.path("delta_3rr2rrr")), "--json"])
    report = json.loads(capsys.readouterr().out)
    # 25 loop equations of rank 13 on 16 tree coordinates: mobility 3, 12 redundant equations
    assert len(report["redundant_constraints"]) == 12
    assert report["dof_grubler"] == -9


def test_invalid_file_gives_a_clear_message_and_nonzero_exit(tmp_path, capsys):
    bad = tmp_path / "bad.mbs"
    bad.write_text('{"format": "mbstudio", "schema_version": 1,\n "bodies": [}\n')
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 2" in err and "column" in err


def test_newer_schema_is_refused(tmp_path, capsys):
    newer = tmp_path / "newer.mbs"
    newer.write_text(json.dumps({"format": "mbstudio", "schema_version": 99}))
    assert main(["check", str(newer)]) == 2
    assert "newer MB Studio" in capsys.readouterr().err


def test_default_command_summarises_the_sla_sample(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "SLA" in out and "independent loops: 3" in out and "degrees of freedom: 2" in out


def test_version_from_the_installed_entry_point():
    out = subprocess.run([sys.executable, "-m", "mbstudio.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"mbstudio {__version__}"


def test_kinematics_writes_the_series_the_window_plots(tmp_path, capsys):
    import csv

    from mbstudio.jobs.tasks import kinematics
    from mbstudio.model import dumps

    sla = str(samples.path("sla_suspension"))
    assert main(["kinematics", sla, "--samples", "21", "--out", str(tmp_path / "k.csv")]) == 0
    assert main(["kinematics", sla, "--samples", "21", "--out", str(tmp_path / "k.json")]) == 0
    assert "actuator:theta1 [N m]" in capsys.readouterr().out
    rows = list(csv.reader(line for line in (tmp_path / "k.csv").read_text().splitlines() if line[:1] != "#"))
    data = json.loads((tmp_path / "k.json").read_text())
    job = kinematics(dumps(samples.load()), {"samples": 21}, lambda f, m: None, lambda: False).data.series
    column = rows[0].index("actuator:theta1 [N m]")
    assert [float(r[column]) for r in rows[1:]] == list(job["actuator:theta1 [N m]"])  # every digit
    assert data["series"]["actuator:theta1 [N m]"] == list(job["actuator:theta1 [N m]"])


def test_kinematics_refuses_a_bad_output_name_and_an_unknown_trajectory(tmp_path, capsys):
    sla = str(samples.path("sla_suspension"))
    assert main(["kinematics", sla, "--out", str(tmp_path / "k.xlsx")]) == 2
    assert "must end in .csv or .json" in capsys.readouterr().err
    assert main(["kinematics", sla, "--trajectory", "nope"]) == 2
    assert "'nope'" in capsys.readouterr().err and not (tmp_path / "k.xlsx").exists()
    from mbstudio.model import save
    from mbstudio.model.document import Harmonic, Trajectory

    model = samples.load()
    model.trajectories[0] = Trajectory("dependent", {"hub_a": [Harmonic(0.1, 2.0)]}, 1.0, 11)
    save(model, tmp_path / "dependent.mbs")
    assert main(["kinematics", str(tmp_path / "dependent.mbs")]) == 2  # it would be ignored: refused instead
    assert "trajectory 'dependent'" in capsys.readouterr().err


def test_check_calls_a_suspension_a_closed_loop_mechanism_not_a_parallel_machine(capsys):
    """The SLA's upright is carried by three chains but turns as the wheel travels: no platform."""
    assert main(["check", str(samples.path("sla_suspension")), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pkm"] is None and report["carried_body"]["body"] == "7"
    assert main(["check", str(samples.path("sla_suspension"))]) == 0
    text = capsys.readouterr().out
    assert "parallel machine: no (a closed-loop mechanism: body '7'" in text and "turns with the mechanism" in text
    assert "got [[" not in text and "platform '7'" not in text
    assert main(["check", str(samples.path("delta_3rus"))]) == 0  # a declared platform is still a machine
    assert "parallel machine: platform 'p' (declared), 3 limbs" in capsys.readouterr().out


def test_linearize_lists_the_equilibria_it_finds_and_takes_a_stable_one(capsys):
    """The slider-crank's crank hangs down (stable, undamped) or stands up (unstable, λ = ±6.06 1/s): both are
    listed, the hanging one used, which the pose-only search missed; no number prints as -0."""
    assert main(["linearize", str(samples.path("slider_crank"))]) == 0
    text = capsys.readouterr().out
    listed = [line for line in text.splitlines() if line.startswith("    theta1 = ")]
    assert len(listed) == 2 and sum("UNSTABLE" in line for line in listed) == 1
    used = next(line for line in listed if line.endswith("<- used"))
    assert "stable, not damped" in used and "a nearer one is unstable" in text
    angle = float(used.split("theta1 = ")[1].split(":")[0])
    assert abs(np.sin(angle) + 1) < 1e-9  # the crank pointing down (−π/2 up to turns): gravity along −z
    assert "marginal, oscillation" in text and "unstable, real" not in text  # the modes of the one used
    assert " -0 " not in text and " -0\n" not in text


def test_linearize_of_the_four_bar_prints_no_negative_zero(capsys):
    assert main(["linearize", str(samples.path("four_bar"))]) == 0
    text = capsys.readouterr().out
    assert "UNSTABLE" in text and "<- used" in text
    assert not any(word in ("-0", "-0j", "+-0j") for word in text.split())


def test_every_sub_command_help_has_a_description_and_an_example_that_parses(capsys):
    from mbstudio.cli import build_parser
    from mbstudio.commands import COMMANDS, COMPUTING, EXAMPLES

    for name, summary in COMMANDS.items():
        with pytest.raises(SystemExit):
            main([name, "--help"])
        text = capsys.readouterr().out
        assert f"\n{summary[0].upper()}{summary[1:]}.\n" in text and f"example:\n  {EXAMPLES[name]}" in text
        assert ("--quiet" in text) == (name in COMPUTING), name
        example = EXAMPLES[name].split()
        assert example[:2] == ["mbstudio", name]
        args = build_parser(name).parse_args(example[1:])  # its options are the command's own
        assert args.command == name
    assert not COMMANDS["identify"].endswith("second")  # a summary that ends its sentence


def test_command_line_errors_have_one_format_without_a_usage_dump(tmp_path, capsys):
    four_bar = str(samples.path("four_bar"))
    cases = [
        (["check"], "mbstudio check: error: the following arguments are required: file; expected what"),
        (["kinematics", four_bar, "--out", "x.txt"], "mbstudio kinematics: error: --out: must end in .csv or .json"),
        (["linearize", four_bar, "--at", "theta9=1"], "mbstudio linearize: error: at: 'theta9' is not an independent"),
        (["kinematics", four_bar, "--units", "furlong"], "mbstudio kinematics: error: --units: names an unknown"),
    ]
    for argv, start in cases:
        if argv == ["check"]:  # argparse's own errors end the program
            with pytest.raises(SystemExit):
                main(argv)
        else:
            assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(start) and "usage:" not in err and err.count("\n") == 1, err


def test_quiet_is_taken_by_every_computing_command_and_silences_its_notes(tmp_path, capsys):
    four_bar = str(samples.path("four_bar"))
    assert main(["linearize", four_bar, "--at", "theta1=0.1,theta1_dot=2"]) == 0
    captured = capsys.readouterr()
    assert "theta1_dot read as d_theta1" in captured.err and "velocities: d_theta1 = 2" in captured.out
    assert main(["linearize", four_bar, "--at", "theta1=0.1,theta1_dot=2", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "velocities: d_theta1 = 2" in captured.out
    assert main(["check", four_bar, "--quiet"]) == 0 and "Four-bar" in capsys.readouterr().out


def test_progress_writes_a_line_where_it_says_something_new():
    import io

    from mbstudio.commands.progress import progress_printer

    log = io.StringIO()
    progress = progress_printer(log)
    for fraction in (0.01, 0.02, 0.03, 0.2, 0.21, 1.0, 0.01):  # the last: the next run's start
        progress(fraction)
    progress(0.02, "another message")
    lines = ["  1.0 %", " 20.0 %", "100.0 %", "  1.0 %", "  2.0 %  another message"]
    assert log.getvalue().splitlines() == lines


def test_progress_off_a_terminal_is_one_line_per_step(tmp_path):
    import io

    from mbstudio.commands.progress import progress_printer

    log = io.StringIO()
    progress = progress_printer(log)
    for k in range(1, 4):
        progress(k / 3, f"step {k}")
    assert log.getvalue().splitlines() == [" 33.3 %  step 1", " 66.7 %  step 2", "100.0 %  step 3"]
    out = tmp_path / "b.json"
    run = subprocess.run(
        [sys.executable, "-m", "mbstudio.cli", "basepar", str(samples.path("four_bar")), "--method", "dp"]
        + ["--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0 and "\r" not in run.stderr and len(run.stderr.splitlines()) >= 3
    assert "the routes agree" in run.stdout and f"written to {out}" in run.stdout  # the table, and the file
    assert json.loads(out.read_text())["parameter_names"]


def test_import_and_export_print_one_json_object_with_json(tmp_path, capsys):
    pytest.importorskip("yourdfpy")
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm"><link name="base"/><link name="arm"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="5" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint></robot>'
    )
    out = tmp_path / "arm.mbs"
    assert main(["import", str(urdf), "-o", str(out), "--fixed-base", "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert (report["bodies"], report["coordinates"], report["loops"]) == (1, 1, 0) and captured.err == ""
    assert "triangle inequality" in report["notes"][0]  # 5 > 1 + 1
    assert main(["export", str(out), "--urdf", str(tmp_path / "back.urdf"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == [str(tmp_path / "back.urdf")]


def test_kinematics_json_prints_what_its_json_file_holds(tmp_path, capsys):
    out = tmp_path / "k.json"
    argv = ["kinematics", str(samples.path("four_bar")), "--samples", "5", "--units", "deg"]
    assert main([*argv, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text()) and len(printed["t"]) == 5
    assert printed["provenance"]["units"] == "deg,m" and "theta1 [deg]" in printed["series"]
