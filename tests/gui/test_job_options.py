"""The analyses' options dialogs: defaults, previous values, inline errors that name the field, the value and
what is valid, OK only while everything is valid, fields that do not apply left out, and ask_options."""

from __future__ import annotations

import inspect

import pytest
from PySide6.QtWidgets import QDialog

from mbstudio import samples
from mbstudio.gui.jobs.job_options import (
    BaseParametersDialog,
    KinematicsDialog,
    SimulationDialog,
    SymbolicEomDialog,
    about,
    ask_options,
    digits_list,
    minimum_samples,
    number,
    parameter_names,
    vp_seconds,
)
from mbstudio.model import ModelError
from mbstudio.symbolic.eom import equations_of_motion


@pytest.fixture
def sla():
    return samples.load("sla_suspension")  # 7 bodies (70 parameters), 2 independent coordinates, 'exciting'


@pytest.fixture
def make(qtbot):
    def build(cls, model, previous=None):
        dialog = cls(model, previous)
        qtbot.addWidget(dialog)
        return dialog

    return build


# ---------------------------------------------------------------------------------------- parsing
def test_digits_are_rising_whole_numbers_in_range():
    assert digits_list(" 30,50 , 80") == [30, 50, 80]
    cases = {
        "30, abc": "digits: 'abc' is not a whole number; expected whole numbers from 16 to 1000",
        "30, 15": "digits: 15 is out of range; expected whole numbers from 16 to 1000",
        "30, 1001": "digits: 1001 is out of range",
        "50, 30": "digits: 50, 30 do not rise",
        "30, 30": "digits: 30, 30 do not rise",
        "30.5": "digits: '30.5' is not a whole number",
        "": "digits: is empty",
    }
    for text, message in cases.items():
        with pytest.raises(ModelError, match=message):
            digits_list(text)


def test_numbers_must_be_finite_and_in_range():
    assert number("rtol", "1e-8", lambda x: 0 < x < 1, "in (0, 1)") == 1e-8
    for text, problem in (
        ("1", "1 is out of range"),
        ("nan", "'nan' is not a number"),
        ("inf", "'inf' is not a number"),
        ("1e-8x", "'1e-8x' is not a number"),
    ):
        with pytest.raises(ModelError, match=f"rtol: {problem}; expected in \\(0, 1\\)"):
            number("rtol", text, lambda x: 0 < x < 1, "in (0, 1)")


def test_parameter_names_are_the_models_each_once(sla):
    valid = sla.inertial_parameter_names()
    assert parameter_names("priority", "mx1, Iyy4 m7", valid) == ["mx1", "Iyy4", "m7"]
    with pytest.raises(
        ModelError,
        match="priority: 'mx9' is not an inertial parameter of this model; expected "
        "inertial parameter names such as m1, mx1, my1",
    ):
        parameter_names("priority", "mx1, mx9", valid)
    with pytest.raises(ModelError, match="eliminate: 'mx1' is listed twice"):
        parameter_names("eliminate", "mx1 Iyy4 mx1", valid)


def test_the_minimum_samples_give_w_as_many_rows_as_parameters():
    assert minimum_samples(70, 2) == 35  # the SLA: 35 samples x 2 rows = 70 rows
    assert minimum_samples(60, 6) == 10  # the PUMA 560
    assert minimum_samples(30, 4) == 8  # rounded up: 8 x 4 = 32 >= 30
    assert minimum_samples(10, 20) == 2 and minimum_samples(0, 0) == 2  # the pipeline's floor


def test_the_vp_estimate_grows_with_samples_digits_and_precisions():
    one = vp_seconds(100, 7, 2, [30])
    assert one == pytest.approx((0.005 * 100 * 7 + 2e-7 * 200 * 70**2) * 1.12)
    assert vp_seconds(200, 7, 2, [30]) == pytest.approx(2 * one)
    assert vp_seconds(100, 7, 2, [30, 30]) == pytest.approx(2 * one)
    assert vp_seconds(100, 7, 2, [570]) == pytest.approx(one * 3.28 / 1.12)
    assert [about(s) for s in (0.2, 17.4, 59.4, 59.6, 300, 3000, 5400)] == [
        "about 1 s",
        "about 17 s",
        "about 59 s",
        "about 1 min",
        "about 5 min",
        "about 50 min",
        "about 1.5 h",
    ]
    # the SLA's default run (200 samples, 30 and 50 digits) measured 15 s on this machine: 28 s was "a few minutes"
    assert about(vp_seconds(200, 7, 2, [30, 50])) == "about 17 s"


# ---------------------------------------------------------------------------------------- base parameters
def test_base_parameter_defaults_on_the_sla(make, sla):
    dialog = make(BaseParametersDialog, sla)
    assert dialog.options() == {"method": "all", "digits": [30, 50], "trajectory": "exciting", "samples": None}
    assert dialog.ok.isEnabled() and dialog.error.text() == ""
    assert dialog.lines["samples"].placeholderText() == "200 (the trajectory's own)"
    # measured: 146 s on a loaded 2-core machine
    assert "VP at 30, 50 digits on 200 samples takes about 17 s" in dialog.hint.text()
    assert not dialog.lines["names"].isEnabled()


def test_bad_digits_are_named_inline_and_disable_ok_until_fixed(make, sla):
    dialog = make(BaseParametersDialog, sla)
    dialog.lines["digits"].setText("30, abc")
    assert not dialog.ok.isEnabled()
    assert dialog.error.text() == (
        "digits: 'abc' is not a whole number; expected whole numbers from 16 to 1000 "
        "separated by commas, rising, e.g. 30, 50"
    )
    assert "border" in dialog.lines["digits"].styleSheet() and dialog.lines["samples"].styleSheet() == ""
    assert dialog.hint.text() == ""
    with pytest.raises(ModelError, match="digits: 'abc'"):
        dialog.options()
    dialog.lines["digits"].setText("30, 80")
    assert dialog.ok.isEnabled() and dialog.error.text() == "" and dialog.lines["digits"].styleSheet() == ""
    assert dialog.options()["digits"] == [30, 80]


def test_samples_must_give_w_enough_rows_and_stay_sane(make, sla):
    dialog = make(BaseParametersDialog, sla)
    dialog.lines["samples"].setText("34")
    assert dialog.validate() == [
        "samples: 34 is out of range; expected a whole number from 35 to 100000: W needs "
        "at least as many rows as the 70 inertial parameters, and each sample gives 2"
    ]
    assert not dialog.ok.isEnabled()
    dialog.lines["samples"].setText("100001")
    assert "100001 is out of range" in dialog.error.text()
    dialog.lines["samples"].setText("35")
    assert dialog.validate() == [] and dialog.options()["samples"] == 35
    assert "on 35 samples" in dialog.hint.text()


def test_a_trajectory_with_too_few_samples_of_its_own_is_reported(make, sla):
    sla.trajectories[0].samples = 20
    dialog = make(BaseParametersDialog, sla)
    assert dialog.validate() == [
        "samples: empty, and 'exciting' has only 20; expected a whole number from 35 to "
        "100000: W needs at least as many rows as the 70 inertial parameters, and each "
        "sample gives 2"
    ]
    dialog.lines["samples"].setText("40")
    assert dialog.ok.isEnabled()


def test_fields_a_route_does_not_use_are_disabled_and_left_out(make, sla):
    dialog = make(BaseParametersDialog, sla)
    dialog.lines["digits"].setText("nonsense")
    dialog.method.setCurrentIndex(dialog.method.findData("dp"))
    assert not dialog.lines["digits"].isEnabled() and dialog.ok.isEnabled()
    assert dialog.options() == {"method": "dp", "trajectory": "exciting", "samples": None}
    dialog.method.setCurrentIndex(dialog.method.findData("symbolic"))
    assert not dialog.lines["samples"].isEnabled() and not dialog.trajectory.isEnabled()
    assert dialog.options() == {"method": "symbolic"}
    assert dialog.hint.text() == ""
    dialog.method.setCurrentIndex(dialog.method.findData("vp"))
    assert not dialog.ok.isEnabled() and dialog.error.text().startswith("digits: 'nonsense'")


def test_eliminated_parameters_by_priority_or_exactly(make, sla):
    dialog = make(BaseParametersDialog, sla)
    dialog.elimination.setCurrentIndex(dialog.elimination.findData("priority"))
    assert dialog.validate() == [
        "priority: is empty; expected inertial parameter names such as m1, mx1, my1, separated by commas"
    ]
    dialog.lines["names"].setText("mx1, Iyy4, bogus")
    assert dialog.validate() == [
        "priority: 'bogus' is not an inertial parameter of this model; expected inertial "
        "parameter names such as m1, mx1, my1, separated by commas"
    ]
    dialog.lines["names"].setText("mx1, Iyy4")
    assert dialog.options()["priority"] == ["mx1", "Iyy4"]
    dialog.elimination.setCurrentIndex(dialog.elimination.findData("eliminate"))
    options = dialog.options()
    assert options["eliminate"] == ["mx1", "Iyy4"] and "priority" not in options


def test_previous_options_come_back_also_as_qsettings_text(make, sla):
    previous = {"method": "vp", "digits": [80, 120], "samples": 300, "trajectory": "exciting", "priority": ["m1"]}
    assert make(BaseParametersDialog, sla, previous).options() == previous
    # QSettings' INI files give lists of strings and a single string for a one-element list
    dialog = make(BaseParametersDialog, sla, {"method": "dp", "digits": ["40", "60"], "eliminate": "m7"})
    dialog.method.setCurrentIndex(dialog.method.findData("all"))
    assert dialog.options() == {
        "method": "all",
        "digits": [40, 60],
        "trajectory": "exciting",
        "samples": None,
        "eliminate": ["m7"],
    }


def test_unknown_previous_choices_fall_back_to_the_defaults(make, sla):
    dialog = make(BaseParametersDialog, sla, {"method": "fast", "trajectory": "deleted since"})
    assert dialog.options()["method"] == "all" and dialog.options()["trajectory"] == "exciting"
    simulation = make(SimulationDialog, sla, {"method": "Euler"})
    assert simulation.options()["method"] == "auto"


def test_without_trajectories_the_default_path_is_used_and_its_samples_shown(make):
    puma = samples.load("puma560")  # 6 independent coordinates, no trajectory: the default path's 50 samples
    dialog = make(BaseParametersDialog, puma)
    assert dialog.trajectory.count() == 1 and not dialog.trajectory.isEnabled()
    assert dialog.options()["trajectory"] is None
    assert dialog.lines["samples"].placeholderText() == "50 (the trajectory's own)"
    dialog.lines["samples"].setText("9")
    assert "from 10 to 100000" in dialog.error.text() and "each sample gives 6" in dialog.error.text()


# ---------------------------------------------------------------------------------------- other tasks
def test_simulation_fields_are_checked(make, sla):
    dialog = make(SimulationDialog, sla)
    assert dialog.options() == {
        "t_end": 1.0,
        "method": "auto",  # chosen from the model: CVODES for the SLA, without contacts
        "rtol": 1e-10,  # the defaults that keep a conservative energy within 1e-7 over 2 s
        "atol": 1e-12,
        "samples": 201,
        "velocities": {},
    }
    assert dialog.hint.text().startswith("Results every 0.005 s.")
    dialog.lines["velocities"].setText("theta1 = 2.5, theta2=-1")
    assert dialog.options()["velocities"] == {"theta1": 2.5, "theta2": -1.0}
    dialog.lines["velocities"].setText("theta_upper = 1")  # dependent on the SLA: not a state of the run
    assert dialog.error.text().startswith("velocities: 'theta_upper' is not an independent coordinate")
    assert "theta1, theta2" in dialog.error.text() and not dialog.ok.isEnabled()
    dialog.lines["velocities"].setText("")
    bad = {
        "t_end": ("0", "t_end: 0 is out of range; expected a time in seconds above 0"),
        "rtol": (
            "1",
            "rtol: 1 is out of range; expected a number from 2.2e-14 (solve_ivp's floor) up to, not including, 1",
        ),
        "atol": ("-1e-10", "atol: -1e-10 is out of range; expected a number above 0"),
        "samples": ("1", "samples: 1 is out of range; expected a whole number from 2 to 100000"),
    }
    for key, (text, message) in bad.items():
        good = dialog.lines[key].text()
        dialog.lines[key].setText(text)
        assert dialog.error.text().startswith(message) and not dialog.ok.isEnabled()
        dialog.lines[key].setText(good)
        assert dialog.ok.isEnabled()
    dialog.lines["rtol"].setText("1e-20")  # below what solve_ivp would use
    assert dialog.error.text().startswith("rtol: 1e-20 is out of range")
    dialog.lines["rtol"].setText("1e-6")
    dialog.lines["t_end"].setText("2.5")
    dialog.method.setCurrentIndex(dialog.method.findData("Radau"))
    assert dialog.options() == {
        "t_end": 2.5,
        "method": "Radau",
        "rtol": 1e-6,
        "atol": 1e-12,
        "samples": 201,
        "velocities": {},
    }
    assert dialog.hint.text() == "Results every 0.0125 s."


def test_symbolic_eom_limits_apply_only_when_simplifying(make, sla):
    dialog = make(SymbolicEomDialog, sla)
    assert dialog.options() == {"simplify": True, "numeric_inertia": False, "size_limit": 400, "trigsimp_limit": 40}
    assert (
        dialog.hint.text() == "Simplifying the coefficients of 7 bodies takes minutes; without simplification, seconds."
    )
    dialog.lines["size_limit"].setText("-1")
    assert dialog.error.text() == "size_limit: -1 is out of range; expected a whole number from 0 to 1000000"
    dialog.simplify.setChecked(False)
    dialog.numeric.setChecked(True)
    assert not dialog.lines["size_limit"].isEnabled() and dialog.ok.isEnabled()
    assert dialog.options() == {"simplify": False, "numeric_inertia": True}
    assert dialog.hint.text() == "Without simplification: seconds, and the longest expressions."
    assert (
        make(SymbolicEomDialog, samples.load("four_bar"))
        .hint.text()
        .startswith("Simplifying the coefficients of 3 bodies takes seconds")
    )
    back = make(SymbolicEomDialog, sla, {"simplify": "false", "numeric_inertia": "true"})  # as QSettings gives
    assert back.options() == {"simplify": False, "numeric_inertia": True}


def test_symbolic_eom_options_are_keyword_arguments_of_equations_of_motion(make, sla):
    """The task passes its options as **options: every key must be a parameter of equations_of_motion."""
    accepted = inspect.signature(equations_of_motion).parameters
    assert set(make(SymbolicEomDialog, sla).options()) <= set(accepted)


def test_kinematics_along_a_chosen_trajectory(make, sla):
    dialog = make(KinematicsDialog, sla)
    assert dialog.options() == {"trajectory": "exciting", "samples": None}
    assert dialog.hint.text() == "200 samples over 20 s along 'exciting': one every 0.101 s."
    dialog.lines["samples"].setText("1")
    assert dialog.error.text().startswith("samples: 1 is out of range; expected a whole number from 2 to 100000")
    dialog.lines["samples"].setText("11")
    assert dialog.options() == {"trajectory": "exciting", "samples": 11}
    assert dialog.hint.text() == "11 samples over 20 s along 'exciting': one every 2 s."
    puma = make(KinematicsDialog, samples.load("puma560"))
    assert puma.options() == {"trajectory": None, "samples": None} and not puma.trajectory.isEnabled()
    assert puma.hint.text().startswith("50 samples over 20 s along the default exciting path")


# ---------------------------------------------------------------------------------------- ask_options
def test_ask_options_returns_the_options_on_ok_and_none_on_cancel(qtbot, monkeypatch, sla):
    def accept(dialog):
        qtbot.addWidget(dialog)
        dialog.lines["digits"].setText("40, 60")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(BaseParametersDialog, "exec", accept)
    assert ask_options("base_parameters", sla, {"method": "vp"}, None) == {
        "method": "vp",
        "digits": [40, 60],
        "trajectory": "exciting",
        "samples": None,
    }

    def cancel(dialog):
        qtbot.addWidget(dialog)
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(SimulationDialog, "exec", cancel)
    assert ask_options("simulation", sla, None, None) is None
    with pytest.raises(ValueError, match="no options dialog for task 'fit'; the tasks are kinematics, simulation"):
        ask_options("fit", sla)
