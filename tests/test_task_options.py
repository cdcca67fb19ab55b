"""The analyses' options (jobs/options.py): one class per job, whose defaults the window's dialogs, the command
line, the menus and parameter studies all take, and whose reading of a plain dict refuses what a job could not
run with, naming the option, the value and what is valid."""

from __future__ import annotations

import argparse
import math
from dataclasses import asdict

import pytest

from mbstudio import samples
from mbstudio.commands import basepar
from mbstudio.jobs.options import (
    OPTIONS,
    BaseParametersOptions,
    LinearizationOptions,
    SimulationOptions,
    defaults,
    options_class,
    options_of,
    register,
    tasks,
)
from mbstudio.jobs.study import Study, grids, study_analysis
from mbstudio.jobs.tasks import TASKS
from mbstudio.model import ModelError


def test_every_task_has_an_options_class_and_its_defaults_read_back():
    assert set(tasks()) == set(TASKS)
    for task in tasks():
        cls = options_class(task)
        defaults = asdict(cls())
        assert options_of(task, defaults) == cls() and options_of(task, {}) == cls()
        assert options_of(task, {name: None for name in defaults}) == cls()  # None: the default, as QSettings gives


def test_the_defaults_are_the_tasks_own():
    from mbstudio.identification.identify import DEFAULT_DIGITS
    from mbstudio.simulation.run import ATOL, RTOL
    from mbstudio.simulation.suspension import POINTS, TRAVEL

    simulation = SimulationOptions()
    assert (simulation.t_end, simulation.method, simulation.samples) == (1.0, "auto", 201)
    assert (simulation.rtol, simulation.atol) == (RTOL, ATOL)
    assert options_of("suspension_report").to_dict() == {"measure": None, "travel": TRAVEL, "points": POINTS}
    assert options_of("identification").digits == DEFAULT_DIGITS


def test_the_window_the_command_line_and_the_menus_start_from_the_same_defaults():
    pytest.importorskip("PySide6")
    from mbstudio.gui.jobs.job_options import DEFAULTS
    from mbstudio.gui.menus import ANALYSES

    assert {task: defaults(task) for task in tasks()} == DEFAULTS
    parser = argparse.ArgumentParser()
    basepar.add_arguments(parser)
    args = parser.parse_args(["model.mbs"])
    assert (args.method, args.digits) == (BaseParametersOptions().method, BaseParametersOptions().digits)
    assert "30 and 50 Digits" in dict((name, text) for name, text, *_ in ANALYSES)["basepar_all"]
    for _, _, task, options in ANALYSES:
        options_of(task, options)  # every quick run's options are the task's


def test_a_bad_option_is_refused_with_its_name_value_and_what_is_valid():
    cases = [
        ("simulation", {"t_end": math.nan}, "t_end: is not a finite positive time .got nan.; expected a simulated"),
        ("simulation", {"t_end": True}, "t_end: is not a finite positive time"),
        ("simulation", {"method": "Euler"}, "method: is not a choice .got 'Euler'.; expected auto, CVODES"),
        (
            "simulation",
            {"samples": 1},
            "samples: is not a whole number in range .got 1.; expected a whole number from 2",
        ),
        ("simulation", {"dt": 0.1}, "'dt': is not an option of simulation; expected t_end, method"),
        ("base_parameters", {"digits": [50, 30]}, "digits: 50, 30 do not rise"),
        ("base_parameters", {"digits": [8]}, "digits: 8 is out of range; expected whole numbers from 16 to 1000"),
        ("base_parameters", {"method": "exact"}, "method: is not a choice .got 'exact'.; expected all, dp, vp"),
        ("linearization", {"at": "rest"}, "at: is not a choice"),
        ("linearization", {"schedule": {"name": "theta1"}}, "schedule: has no 'from'"),
        ("identification", {"digits": 12}, "digits: is not a whole number in range .got 12."),
        ("workspace", {"points": 1000}, "points: is not a whole number in range .got 1000.; expected a whole number"),
    ]
    for task, options, message in cases:
        with pytest.raises(ModelError, match=message):
            options_of(task, options)
    with pytest.raises(ModelError, match="task: has no options .got 'nope'."):
        options_of("nope")


def test_one_precision_is_a_list_of_one_and_the_options_are_frozen():
    options = BaseParametersOptions.from_dict({"digits": 40})
    assert options.digits == [40] and options.to_dict()["digits"] == [40]
    with pytest.raises(AttributeError):
        options.method = "dp"
    assert LinearizationOptions().to_dict()["hold"] is not LinearizationOptions().to_dict()["hold"]


def test_a_study_takes_the_jobs_names_and_reads_the_old_ones_with_their_old_defaults():
    assert study_analysis("simulation", {"t_end": 2.0})[1] == SimulationOptions(t_end=2.0).to_dict()
    for old, new, default in (
        ("simulate", "simulation", {"samples": 101}),
        ("basepar", "base_parameters", {"method": "dp", "digits": [50]}),
        ("linearize", "linearization", {"at": "equilibrium"}),
    ):
        analysis, options, notes = study_analysis(old)
        assert analysis == new and options == options_of(new, default).to_dict()
        assert notes == [f"'{old}' is read as '{new}' (the name of the window and the jobs), with its old defaults"]
    assert study_analysis("basepar", {"digits": 50})[1]["method"] == "vp"  # as before: digits asked for VP
    assert study_analysis("linearize", {"equilibrium": False})[1]["at"] == "initial"
    with pytest.raises(ModelError, match="'t_end': is not an option of kinematics"):
        study_analysis("kinematics", {"t_end": 1.0})  # every point would have ignored it


def test_a_table_written_under_an_old_name_is_resumed_by_the_same_study():
    model = samples.load("double_pendulum")
    study = Study(model, grids(["L=0.5:1.5:3"]), "base_parameters", {"method": "vp", "digits": 50})
    rows = [{"L": x, "vp_rank": 6, "model_hash": "h", "error": ""} for x in (0.5, 1.0, 1.5)]
    old = study.provenance() | {"analysis": "basepar", "options": {"digits": 50}}  # VP at 50 digits, then too
    assert study.resume(old, rows) == 3
    other = Study(model, grids(["L=0.5:1.5:3"]), "simulation")
    old = other.provenance() | {"analysis": "simulate", "options": {}}  # run at 101 samples, now 201 by default
    assert other.resume(old, rows) == 0
    assert Study(model, grids(["L=0.5:1.5:3"]), "simulate").resume(old, rows) == 3


def test_an_analysis_registers_a_frozen_dataclass_of_its_own():
    """How a new analysis adds its options (docs/architecture.md, "Adding an analysis"): a frozen dataclass
    beside its computation, registered under the task's name; the window and the jobs then read it."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class RigOptions:
        travel: float = 0.08
        points: int = 33

        def __post_init__(self) -> None:
            if not 0 < self.travel < 1:
                raise ModelError("travel", "is out of range", self.travel, "a length from 0 to 1 m")

    try:
        register("rig_test", RigOptions)
        assert defaults("rig_test") == {"travel": 0.08, "points": 33}
        assert options_of("rig_test", {"points": 11}) == RigOptions(points=11)
        with pytest.raises(ModelError, match="'load': is not an option of rig_test; expected travel, points"):
            options_of("rig_test", {"load": 1})
        with pytest.raises(ModelError, match="travel: is out of range"):
            options_of("rig_test", {"travel": 2.0})
        with pytest.raises(TypeError, match="must be a frozen dataclass"):
            register("rig_test", dataclass(type("Loose", (), {"__annotations__": {"x": int}, "x": 1})))
    finally:
        OPTIONS.pop("rig_test", None)
