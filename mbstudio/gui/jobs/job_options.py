"""Options dialogs for the analyses: one per job task, each field checked as it is typed.

    options = ask_options("base_parameters", model, previous, window)   # None on Cancel
    if options is not None:
        window.run_job("base_parameters", options)

A dialog starts from `previous` (the options used last time, e.g. kept in QSettings, so values of any type
that QSettings hands back are read as text and checked like typed ones) over the task's DEFAULTS. A bad
value is shown inline, naming the field, the value and what would be valid, and OK stays disabled until
every field is valid. Fields that do not apply (digits when no route runs in variable precision) are
disabled and left out of the options, so the task uses its own default for them. `options()` reads the
widgets only: the dialogs compute nothing but a rough time estimate.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import numpy as np
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...dynamics.titop import CLOSURE_FREQUENCY
from ...identification.identify import DEFAULT_DIGITS, FRICTION
from ...identification.pipeline import default_trajectory
from ...io.display_units import DisplayUnits
from ...jobs.options import (
    MAX_DIGITS,
    MAX_EXPRESSION_SIZE,
    MAX_SAMPLES,
    MIN_DIGITS,
    defaults,
    digits_list,
    number,
    optional_count,
    options_of,
    tasks,
    whole_number,
)
from ...kinematics import Mechanism
from ...linear.lpv import schedule_of
from ...linear.signals import default_inputs, input_signals, output_signals
from ...model import Model, ModelError
from ...model.document import SuspensionMeasure, Trajectory
from ...model.typed_numbers import coordinate_dimensions, of_motion, read_number, read_pairs
from ...model.units import dimension_of, si_unit
from ...simulation.kc_rig import KCOptions
from ...simulation.manoeuvres import ManoeuvreOptions
from ...simulation.method_choice import AUTO, chosen_method
from ...simulation.run import ATOL, RIGID_STEP
from ...simulation.run import METHODS as INTEGRATORS
from ..editing.properties import ERROR_BORDER

DEFAULT_UNITS = DisplayUnits()  # the preferences' defaults: SI, the suspension measures in deg and mm
DEFAULTS: dict[str, dict] = {task: defaults(task) for task in tasks()}  # jobs/options.py
OPERATING_POINTS = {
    "auto": "The nearest equilibrium that is not unstable, else the pose",
    "equilibrium": "Equilibrium near the document's pose",
    "initial": "A state: the document's pose, or the values typed below",
}
MAX_MODELS = 1000  # linear models in a family: a second or less each, so at most minutes
SCHEDULE_KEYS = ("schedule_from", "schedule_to", "schedule_count")
CONTACT_CHOICES = {"compliant": "compliant (Hunt–Crossley forces)", "rigid": "rigid (time stepping, restitution)"}
RTOL_MIN = 100 * float(np.finfo(float).eps)  # solve_ivp raises smaller rtol to this, with a warning
BASE_METHODS = {
    "all": "All three routes (DP, VP, symbolic)",
    "dp": "Double precision (DP)",
    "vp": "Variable precision (VP)",
    "symbolic": "Symbolic",
}
ELIMINATION = {
    "default": "Default (the symbolic route's choice when it runs)",
    "priority": "These first, where possible",
    "eliminate": "Exactly these",
}
# VP cost model on gmpy2, fitted to runs of 100 samples on the SLA suspension (closed loops: 4.45 s at 30 digits,
# 5.74 s at 100), the PUMA 560 (2.34 s) and the four-bar (0.75 s), on this 2-core machine; open chains come out
# up to 2 times faster: building W costs W_SECONDS per sample and body, its SVD SVD_SECONDS per row and squared
# column (what dominates for a hundred parameters and more), both growing with the digits as
# (1 + digits / DIGITS_SCALE).
W_SECONDS, SVD_SECONDS, DIGITS_SCALE = 0.005, 2e-7, 250
# symbolic EOM with simplification, measured: four-bar (3 bodies) 5 s, SLA (7) 71 s, PUMA 560 (6) 218 s;
# without it 0.3 to 5 s
QUICK_SIMPLIFY_BODIES = 3
ERROR_STYLE = f"QLineEdit {ERROR_BORDER}"


# ---------------------------------------------------------------------------------------- parsing (no Qt)
def parameter_names(field: str, text: str, valid: list[str]) -> list[str]:
    """Names separated by commas or spaces, each an inertial parameter of the model, none twice."""
    names = [n for n in re.split(r"[,\s]+", text.strip()) if n]
    expected = f"inertial parameter names such as {', '.join(valid[:3])}, separated by commas"
    if not names:
        raise ModelError(field, "is empty", None, expected)
    known = set(valid)
    for k, name in enumerate(names):
        if name not in known:
            raise ModelError(field, f"{name!r} is not an inertial parameter of this model", None, expected)
        if name in names[:k]:
            raise ModelError(field, f"{name!r} is listed twice", None, "each name once")
    return names


def minimum_samples(parameters: int, independent: int) -> int:
    """The fewest samples whose observation matrix W (`independent` rows per sample) has at least as many
    rows as there are inertial parameters: with fewer, the rank is capped by the rows and too few base
    parameters come out. At least 2 (the pipeline's own floor)."""
    return max(2, -(-parameters // independent) if independent else 2)


def vp_seconds(samples: int, bodies: int, independent: int, digits: list[int]) -> float:
    """Rough wall-clock time of the VP route: every precision of the ridge study (an upper bound: it stops at
    the first stable one)."""
    rows, columns = samples * independent, 10 * bodies
    once = W_SECONDS * samples * bodies + SVD_SECONDS * rows * columns**2
    return sum(once * (1 + d / DIGITS_SCALE) for d in digits)


def about(seconds: float) -> str:
    """The estimate as a person reads it: 'about 17 s', 'about 4 min', 'about 1.5 h'."""
    if seconds < 59.5:
        return f"about {max(1, round(seconds))} s"
    if seconds < 3570:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"


def _shown_numbers(value: object, size: float) -> str:
    """An SI number, or a list of them, as the text of a field in the unit of SI size `size`; anything else
    (QSettings' text) as it is."""
    if isinstance(value, int | float):
        return f"{value / size:.12g}"
    if isinstance(value, list | tuple) and all(isinstance(v, int | float) for v in value):
        return ", ".join(f"{v / size:.12g}" for v in value)
    return _text(value)


def _text(value: object) -> str:
    """A previous value as field text: lists joined by commas, None empty."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def _flag(value: object) -> bool:
    """A bool, also from QSettings' INI text 'true'/'false'."""
    return value.strip().lower() == "true" if isinstance(value, str) else bool(value)


# ---------------------------------------------------------------------------------------- dialogs
class OptionsDialog(QDialog):
    """A form of fields, a hint, the errors and OK/Cancel. Subclasses build the fields (`build`), enable
    those that apply (`sync`), read them (`read`, through `field`) and may give a hint (`hint_text`)."""

    task = ""
    title = ""

    def __init__(
        self,
        model: Model,
        previous: dict | None = None,
        parent: QWidget | None = None,
        units: DisplayUnits = DEFAULT_UNITS,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.title)
        self.model = model
        self.units = units  # values are typed and shown in these; the options are SI
        self.start = DEFAULTS[self.task] | dict(previous or {})
        self.lines: dict[str, QLineEdit] = {}
        self._errors: dict[str, ModelError] = {}
        self.form = QFormLayout()
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b02020;")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.hint)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.build()
        self.refresh()

    @property
    def ok(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    @cached_property
    def mech(self) -> Mechanism:
        return Mechanism(self.model)

    # ------------------------------------------------------------------ building
    def line(self, key: str, label: str, tip: str = "", text: str | None = None) -> QLineEdit:
        editor = QLineEdit(_text(self.start.get(key)) if text is None else text)
        editor.setToolTip(tip)
        editor.textChanged.connect(self.refresh)
        self.lines[key] = editor
        self.form.addRow(label, editor)
        return editor

    def combo(self, key: str, label: str, choices: dict[str, str], current: str | None = None) -> QComboBox:
        """Items shown by text, keyed by `choices`' keys (itemData); an unknown previous value falls back to
        the default, else to the first item."""
        editor = QComboBox()
        for value, text in choices.items():
            editor.addItem(text, value)
        for wanted in (self.start.get(key) if current is None else current, DEFAULTS[self.task].get(key)):
            index = editor.findData(wanted)
            if index >= 0:
                break
        editor.setCurrentIndex(max(index, 0))
        editor.currentIndexChanged.connect(self.refresh)
        self.form.addRow(label, editor)
        return editor

    def path_line(self, key: str, label: str, tip: str, choose: Callable[[QLineEdit], str]) -> QLineEdit:
        """A line for a file or folder with a Browse… button; `choose` asks for it (empty: kept as it is)."""
        editor = QLineEdit(_text(self.start.get(key)))
        editor.setToolTip(tip)
        editor.textChanged.connect(self.refresh)
        browse = QPushButton("Browse…")
        browse.clicked.connect(lambda _=False: editor.setText(choose(editor) or editor.text()))
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(editor, 1)
        layout.addWidget(browse)
        self.lines[key] = editor
        self.form.addRow(label, row)
        return editor

    def pairs_line(self, key: str, label: str, tip: str, quantity: str = "value") -> QLineEdit:
        """A line of NAME = VALUE pairs of independent coordinates' `quantity` ("value" or "rate"), plain numbers
        in the display units (the label names them), or each with its own unit; the previous SI values shown."""
        shown = self._shown(quantity)
        previous = self.start.get(key)
        if isinstance(previous, dict):
            size = {k: shown[k][1] if k in shown else 1.0 for k in previous}  # another name: shown to be refused
            previous = ", ".join(f"{k} = {_shown_numbers(v, size[k])}" for k, v in previous.items())
        units = ", ".join(dict.fromkeys(unit for unit, _ in shown.values()))
        typed = f"; plain numbers in {units}, or each with its unit (e.g. 5 deg, 25 mm)"
        editor = self.line(key, f"{label} [{units}]" if units else label, tip + typed, _text(previous))
        editor.setPlaceholderText(", ".join(f"{n} = … {unit}" for n, (unit, _) in shown.items()))
        return editor

    def pairs(self, key: str, quantity: str = "value") -> dict[str, float] | None:
        """The pairs of line `key` in SI (pairs_line)."""
        kinds = self.mech.independent_kinds
        dimensions = coordinate_dimensions(kinds, kinds, quantity)
        sizes = {name: size for name, (_, size) in self._shown(quantity).items()}
        return self.field(key, lambda t: read_pairs(key, t, dimensions, sizes))

    def _shown(self, quantity: str) -> dict[str, tuple[str, float]]:
        """Each independent coordinate's display unit for `quantity` and its SI size."""
        return {n: self.units.unit(of_motion(quantity, k).si) for n, k in self.mech.independent_kinds.items()}

    def check(self, key: str, label: str, tip: str = "") -> QCheckBox:
        editor = QCheckBox(label)
        editor.setChecked(_flag(self.start.get(key)))
        editor.setToolTip(tip)
        editor.toggled.connect(self.refresh)
        self.form.addRow(editor)
        return editor

    # ------------------------------------------------------------------ reading and checking
    def field(self, key: str, parse: Callable[[str], object]) -> object:
        """The parsed text of line `key`; a ModelError is recorded against the field and gives None."""
        try:
            return parse(self.lines[key].text())
        except ModelError as exc:
            self._errors[key] = exc
            return None

    def _collect(self) -> tuple[dict, dict[str, ModelError]]:
        self._errors = {}
        values = self.read()
        return values, self._errors

    def options(self) -> dict:
        """The options for the task (those that apply: the task takes its defaults for the others, see
        jobs/options.py); raises the first field's ModelError while any field is invalid."""
        values, errors = self._collect()
        if errors:
            raise next(iter(errors.values()))
        options_of(self.task, values)  # the names and limits the task takes
        return values

    def validate(self) -> list[str]:
        """Show the errors inline (red fields, one message each) and enable OK only without any; returns the
        messages."""
        values, errors = self._collect()
        for key, editor in self.lines.items():
            editor.setStyleSheet(ERROR_STYLE if key in errors else "")
        messages = [str(e) for e in errors.values()]
        self.error.setText("\n".join(messages))
        self.ok.setEnabled(not errors)
        self.hint.setText("" if errors else self.hint_text(values))
        return messages

    def refresh(self) -> None:
        self.sync()
        self.validate()

    # ------------------------------------------------------------------ per task
    def build(self) -> None:
        raise NotImplementedError

    def sync(self) -> None:
        """Enable the fields that apply to the current choices."""

    def read(self) -> dict:
        raise NotImplementedError

    def hint_text(self, values: dict) -> str:
        return ""


class _TrajectoryDialog(OptionsDialog):
    """A dialog with a trajectory choice and a number of samples along it (empty: the trajectory's own)."""

    @cached_property
    def trajectories(self) -> list[Trajectory]:
        """The model's trajectories, else the default exciting path the tasks use then."""
        return self.model.trajectories or [default_trajectory(self.mech)]

    def trajectory_fields(self, samples_tip: str) -> None:
        names = {t.name: t.name for t in self.model.trajectories}
        self.trajectory = self.combo("trajectory", "trajectory", names or {None: "default exciting path"})
        self.trajectory.setEnabled(bool(names))  # nothing to choose from: the default path
        self.trajectory.currentIndexChanged.connect(self._placeholder)
        self.line("samples", "samples", samples_tip)
        self._placeholder()

    def chosen(self) -> Trajectory:
        return self.trajectories[max(self.trajectory.currentIndex(), 0)]

    def _placeholder(self) -> None:
        self.lines["samples"].setPlaceholderText(f"{self.chosen().samples} (the trajectory's own)")

    def count(self, values: dict) -> int:
        return values.get("samples") or self.chosen().samples

    def chosen_text(self) -> str:
        return f"'{self.chosen().name}'" if self.model.trajectories else "the default exciting path"


class KinematicsDialog(_TrajectoryDialog):
    task, title = "kinematics", "Kinematics along a trajectory"

    def build(self) -> None:
        self.trajectory_fields("equally spaced times over the trajectory's duration; empty: the trajectory's own")

    def read(self) -> dict:
        return {
            "trajectory": self.trajectory.currentData(),
            "samples": self.field("samples", lambda t: optional_count("samples", t, 2)),
        }

    def hint_text(self, values: dict) -> str:
        t, count = self.chosen(), self.count(values)
        return (
            f"{count} samples over {t.duration:g} s along {self.chosen_text()}: one every "
            f"{t.duration / (count - 1):.3g} s."
        )


def integrator_choices(model: Model) -> dict[str, str]:
    """The Simulate dialog's integrators: "automatic" first (the default), showing what it chooses for this model
    and why (simulation/method_choice.py), then every method by name."""
    choice = chosen_method(model)
    why = f": {choice.reason}" if choice.reason else ""
    return {AUTO: f"automatic ({choice.method}{why})"} | {m: m for m in INTEGRATORS}


class SimulationDialog(OptionsDialog):
    task, title = "simulation", "Simulate"

    def build(self) -> None:
        self.line("t_end", "end time [s]", "the motion is integrated over [0, t_end]")
        tip = "rates of the independent coordinates at t = 0, e.g. theta1 = 360; empty: from rest"
        self.pairs_line("velocities", "initial velocities", tip, "rate")
        self.method = self.combo("method", "integrator", integrator_choices(self.model))
        self.line("rtol", "relative tolerance", "solve_ivp's rtol")
        self.line("atol", "absolute tolerance", "solve_ivp's atol")
        self.line("samples", "output samples", "equally spaced output times over [0, t_end], both ends included")
        self.contact = self.combo("contact", "contacts", CONTACT_CHOICES)
        self.line("step", "rigid contacts' step [s]", "the longest time step of the rigid contacts' stepping",
                  text=_text(self.start.get("step") or RIGID_STEP))  # fmt: skip
        self.cross = self.check(
            "cross_check",
            "cross-check with the TITOP block model (Alazard et al. 2024)",
            "runs the same motion through the block model too and adds the error series block − general (the "
            "paper's Fig. 17), drawn in red under each plotted series",
        )
        self.line(
            "closure_frequency",
            "loop closures [Hz]",
            "closed loops: the block model's cut joints are spring-dampers of this frequency (errors fall as 1/f²)",
            text=_text(self.start.get("closure_frequency") or CLOSURE_FREQUENCY),
        )

    def sync(self) -> None:
        self.lines["closure_frequency"].setEnabled(self.cross.isChecked() and bool(self.mech.topology.cut))
        self.lines["step"].setEnabled(self.contact.currentData() == "rigid")

    def read(self) -> dict:
        return self._motion() | self._rigid() | self._cross_check()

    def _rigid(self) -> dict:
        """{} for compliant contacts (the options of a plain run, as before the rigid model)."""
        if self.contact.currentData() != "rigid":
            return {}
        step = self.field("step", lambda t: number("step", t, lambda x: 0 < x <= 1, "a time step in s, e.g. 0.001"))
        return {"contact": "rigid", "step": step}

    def _cross_check(self) -> dict:
        """{} when unchecked (the options of a plain run, as before the block models)."""
        if not self.cross.isChecked():
            return {}
        if not self.lines["closure_frequency"].isEnabled():
            return {"cross_check": True}
        frequency = self.field(
            "closure_frequency", lambda t: number("closure_frequency", t, lambda x: x > 0, "a frequency above 0 Hz")
        )
        return {"cross_check": True, "closure_frequency": frequency}

    def _motion(self) -> dict:
        return {
            "t_end": self.field(
                "t_end", lambda t: number("t_end", t, lambda x: x > 0, "a time in seconds above 0, e.g. 1.0")
            ),
            "method": self.method.currentData(),
            "rtol": self.field(
                "rtol",
                lambda t: number(
                    "rtol",
                    t,
                    lambda x: RTOL_MIN <= x < 1,
                    f"a number from {RTOL_MIN:.2g} (solve_ivp's floor) up to, not including, 1, e.g. 1e-8",
                ),
            ),
            "atol": self.field(
                "atol", lambda t: number("atol", t, lambda x: x > 0, f"a number above 0, e.g. {ATOL:g}")
            ),
            "samples": self.field("samples", lambda t: whole_number("samples", t, 2, MAX_SAMPLES)),
            "velocities": self.pairs("velocities", "rate"),
        }

    def hint_text(self, values: dict) -> str:
        step = values["t_end"] / (values["samples"] - 1)
        stiff = (
            ""
            if chosen_method(self.model, values["method"], values.get("contact", "compliant")).method
            in ("Radau", "BDF", "CVODES-BDF")
            else " Radau and BDF suit stiff models (stiff springs)."
        )
        blocks = " The block model then runs the same motion (DOP853; Radau with loop closures)."
        blocks *= bool(values.get("cross_check"))
        return f"Results every {step:.3g} s.{stiff}{blocks}"


class SymbolicEomDialog(OptionsDialog):
    task, title = "symbolic_eom", "Symbolic equations of motion"

    def build(self) -> None:
        self.simplify = self.check("simplify", "simplify each coefficient (trigonometric canonical form)")
        self.numeric = self.check(
            "numeric_inertia",
            "substitute the document's inertial values",
            "numbers for m, mx, ..., Izz instead of their symbols",
        )
        self.line("size_limit", "simplify up to [operations]", "coefficients larger than this are kept as they are")
        self.line(
            "trigsimp_limit", "trigsimp up to [operations]", "reduced coefficients up to this size are also trigsimp'ed"
        )

    def sync(self) -> None:
        for key in ("size_limit", "trigsimp_limit"):
            self.lines[key].setEnabled(self.simplify.isChecked())

    def read(self) -> dict:
        out = {"simplify": self.simplify.isChecked(), "numeric_inertia": self.numeric.isChecked()}
        if self.simplify.isChecked():
            for key in ("size_limit", "trigsimp_limit"):
                out[key] = self.field(key, lambda t, k=key: whole_number(k, t, 0, MAX_EXPRESSION_SIZE))
        return out

    def hint_text(self, values: dict) -> str:
        if not values["simplify"]:
            return "Without simplification: seconds, and the longest expressions."
        bodies = len(self.model.bodies)
        takes = "seconds" if bodies <= QUICK_SIMPLIFY_BODIES else "minutes"
        return f"Simplifying the coefficients of {bodies} bodies takes {takes}; without simplification, seconds."


class BaseParametersDialog(_TrajectoryDialog):
    task, title = "base_parameters", "Base inertial parameters"

    def build(self) -> None:
        self.method = self.combo("method", "routes", BASE_METHODS)
        self.line("digits", "VP digits", "one precision, or several rising ones for a ridge study")
        self.trajectory_fields("samples of W along the trajectory; empty: the trajectory's own")
        current = "eliminate" if self.start.get("eliminate") else "priority" if self.start.get("priority") else None
        self.elimination = self.combo("elimination", "eliminated parameters", ELIMINATION, current or "default")
        self.line("names", "parameters", "inertial parameter names, e.g. mx1, Iyy4", _text(self.start.get(current)))

    def routes(self) -> str:
        return self.method.currentData()

    def sync(self) -> None:
        numeric = self.routes() != "symbolic"
        self.lines["digits"].setEnabled(self.routes() in ("all", "vp"))
        self.trajectory.setEnabled(numeric and bool(self.model.trajectories))
        self.lines["samples"].setEnabled(numeric)
        self.lines["names"].setEnabled(self.elimination.currentData() != "default")

    def read(self) -> dict:
        out = {"method": self.routes()}
        if self.lines["digits"].isEnabled():
            out["digits"] = self.field("digits", digits_list)
        if self.lines["samples"].isEnabled():
            out["trajectory"] = self.trajectory.currentData()
            out["samples"] = self.field("samples", self._samples)
        if self.lines["names"].isEnabled():
            key = self.elimination.currentData()
            out[key] = self.field("names", lambda t: parameter_names(key, t, self.model.inertial_parameter_names()))
        return out

    def _samples(self, text: str) -> int | None:
        """At least `minimum_samples`, also when the trajectory's own count is used."""
        parameters, rows = len(self.model.inertial_parameter_names()), len(self.mech.independent)
        low = minimum_samples(parameters, rows)
        why = (
            f"a whole number from {low} to {MAX_SAMPLES}: W needs at least as many rows as the {parameters} "
            f"inertial parameters, and each sample gives {rows}"
        )
        value = optional_count("samples", text, low, why)
        if value is None and self.chosen().samples < low:
            raise ModelError("samples", f"empty, and {self.chosen_text()} has only {self.chosen().samples}", None, why)
        return value

    def hint_text(self, values: dict) -> str:
        if "digits" not in values:
            return ""
        count = self.count(values)
        seconds = vp_seconds(count, len(self.model.bodies), len(self.mech.independent), values["digits"])
        return (
            f"VP at {_text(values['digits'])} digits on {count} samples takes {about(seconds)} "
            "(at most: the ridge study stops at the first stable precision)."
        )


class _LinearDialog(OptionsDialog):
    """Shared by Equilibrium… and Linearise…: the independent coordinates to hold where the others settle."""

    def hold_field(self) -> None:
        tip = (
            "independent coordinates kept at values while the others settle (the force holding each is reported), "
            "e.g. theta1 = 3; empty: none"
        )
        self.pairs_line("hold", "hold coordinates", tip)


class EquilibriumDialog(_LinearDialog):
    task, title = "equilibrium", "Equilibrium"

    def build(self) -> None:
        self.hold_field()
        self.move = self.check("move", "move the document's pose there (an edit you can undo)")

    def read(self) -> dict:
        return {"hold": self.pairs("hold"), "move": self.move.isChecked()}

    def hint_text(self, values: dict) -> str:
        where = "moves the pose there" if values["move"] else "shows it, leaving the pose as it is"
        return f"Newton from the document's pose with exact derivatives; {where}. Neutral directions are reported."


class LinearizeDialog(_LinearDialog):
    task, title = "linearization", "Linearise"

    def build(self) -> None:
        self.at = self.combo("at", "operating point", OPERATING_POINTS)
        self.hold_field()
        self.pairs_line("values", "coordinate values", VALUES_TIP)
        self.pairs_line("velocities", "velocities", VELOCITIES_TIP, "rate")
        inputs = default_inputs(self.model, self.mech.independent)
        self.line("inputs", "inputs", INPUT_TIP, _text(self.start.get("inputs")))
        self.lines["inputs"].setPlaceholderText(", ".join(inputs) + " (default)")
        self.line("outputs", "outputs", OUTPUT_TIP, _text(self.start.get("outputs")))
        self.lines["outputs"].setPlaceholderText(", ".join(self.mech.independent) + " (default)")
        self.schedule_fields()

    def schedule_fields(self) -> None:
        """The scheduling coordinate or parameter of a family, its range (in its display unit) and the number of
        models."""
        previous = self.start.get("schedule")
        previous = previous if isinstance(previous, dict) else {}
        coordinates = {n: of_motion("value", k) for n, k in self.mech.independent_kinds.items()}
        parameters = {p.name: dimension_of(si_unit(p.unit)) for p in self.model.parameters}
        # what a value of each takes: its dimension (None: plain numbers only), its SI unit, its display unit
        self.schedule_dimensions = coordinates | parameters
        si = {n: d.si for n, d in coordinates.items()} | {p.name: si_unit(p.unit) for p in self.model.parameters}
        self.schedule_units = {n: self.units.unit(u, n) if u else ("", 1.0) for n, u in si.items()}
        choices = {"": "none: one linear model"}
        choices |= {n: f"{n} (coordinate, {self.schedule_units[n][0]})" for n in coordinates}
        unit = {n: f", {u}" if u else "" for n, (u, _) in self.schedule_units.items()}
        choices |= {n: f"{n} (parameter{unit[n]})" for n in parameters}
        self.schedule = self.combo("schedule", "schedule (LPV family)", choices, str(previous.get("name", "")))
        self.schedule.setToolTip(SCHEDULE_TIP)
        size = self.schedule_units.get(previous.get("name"), ("", 1.0))[1]
        for key, label, tip in (
            ("schedule_from", "schedule from", "the first value of the scheduling coordinate or parameter"),
            ("schedule_to", "schedule to", "the last value"),
        ):
            shown = _shown_numbers(previous.get(key.removeprefix("schedule_")), size)
            self.line(key, label, tip + "; a plain number in the unit shown, or with its unit", shown)
        tip = f"equally spaced from–to, 2 to {MAX_MODELS}"
        self.line("schedule_count", "number of models", tip, _text(previous.get("count")) or "11")
        self.schedule.currentIndexChanged.connect(self._suggest_range)
        self._name_range_unit()

    def _name_range_unit(self) -> None:
        unit = self.schedule_units.get(self.schedule.currentData(), ("", 1.0))[0]
        for key in ("schedule_from", "schedule_to"):
            label = key.replace("_", " ")
            self.form.labelForField(self.lines[key]).setText(f"{label} [{unit}]" if unit else label)

    def _suggest_range(self) -> None:
        """A range about the document's value of the schedule just chosen: ±0.2 rad, ±10 % of the mechanism's
        size, or ±10 % of a parameter, in the schedule's display unit."""
        self._name_range_unit()
        name = self.schedule.currentData()
        if not name:
            return
        kind, unit, value = schedule_of(self.model, name)
        if kind == "parameter":
            half = 0.1 * abs(value) or 1.0
        else:
            half = 0.2 if unit == "rad" else 0.1 * self.mech.length_scale
        size = self.schedule_units[name][1]
        self.lines["schedule_from"].setText(f"{(value - half) / size:.6g}")
        self.lines["schedule_to"].setText(f"{(value + half) / size:.6g}")

    def sync(self) -> None:
        at, scheduled = self.at.currentData(), bool(self.schedule.currentData())
        self.lines["hold"].setEnabled(at != "initial")  # holding asks for an equilibrium
        for key in ("values", "velocities"):  # a family is about each member's equilibrium or the pose
            self.lines[key].setEnabled(at == "initial" and not scheduled)
        for key in SCHEDULE_KEYS:
            self.lines[key].setEnabled(scheduled)

    def read(self) -> dict:
        out: dict = {"at": self.at.currentData(), "inputs": self._signals("inputs", input_signals)}
        out["outputs"] = self._signals("outputs", output_signals)
        for key, quantity in (("hold", "value"), ("values", "value"), ("velocities", "rate")):
            if self.lines[key].isEnabled():  # as sync() left them: those that apply
                out[key] = self.pairs(key, quantity)
        out["schedule"] = self._schedule()
        name = (out["schedule"] or {}).get("name")
        if name in (out.get("hold") or {}):
            self._errors["hold"] = ModelError(
                "hold", f"holds {name}, the scheduling coordinate", None, f"other coordinates: each model holds {name}"
            )
        return out

    def _schedule(self) -> dict | None:
        """{"name", "from", "to", "count"} of the family; None for one model."""
        name = self.schedule.currentData()
        if not name:
            return None
        dimension, size = self.schedule_dimensions[name], self.schedule_units[name][1]
        low = self.field("schedule_from", lambda t: read_number(t, dimension, "schedule from", size))
        high = self.field("schedule_to", lambda t: read_number(t, dimension, "schedule to", size))
        if low is not None and low == high:
            self._errors["schedule_to"] = ModelError("schedule to", "is the first value", high, "a value ≠ the first")
        count = self.field("schedule_count", lambda t: whole_number("number of models", t, 2, MAX_MODELS))
        return {"name": name, "from": low, "to": high, "count": count}

    def _signals(self, key: str, check: Callable) -> list[str]:
        names = [n.strip() for n in self.lines[key].text().split(",") if n.strip()]
        try:
            check(self.model, names)
        except ModelError as exc:
            self._errors[key] = exc
        return names

    def hint_text(self, values: dict) -> str:
        schedule = values["schedule"]
        if schedule is None:
            return (
                "A, B, C, D in the independent coordinates from exact derivatives; the modes (select one to animate "
                "it) and the frequency response of every input/output pair."
            )
        where = "its equilibrium" if values["at"] == "equilibrium" else "the document's pose"
        return (
            f"{schedule['count']} linear models over {schedule['name']}, each about {where}: the Linear family panel "
            "plots each mode's frequency and damping against it; pick a model there to see its modes and responses."
        )


VALUES_TIP = (
    "independent coordinates set at values, the loops closed from the document's pose, e.g. theta1 = 5: "
    "a state that need not be an equilibrium (its drift is kept with the model); empty: the pose"
)
VELOCITIES_TIP = (
    "rates of independent coordinates, e.g. theta1 = 90: a moving state, not an equilibrium (its "
    "drift is kept with the model); empty: at rest"
)
SCHEDULE_TIP = (
    "a family of linear models (LPV) over a coordinate (held at each value while the others settle) or a model "
    "parameter (each model at its own equilibrium); none: one model"
)
INPUT_TIP = (
    "comma-separated: a coordinate (the generalized force on it), an actuator, BODY.POINT.fx|fy|fz (a force in "
    "world axes), BODY.tx|ty|tz (a torque); empty: the actuators, else the independent coordinates"
)
OUTPUT_TIP = (
    "comma-separated: a coordinate, d_NAME (its rate), dd_NAME (its acceleration), BODY.POINT.x|y|z, .vx.., .ax.., "
    "or a measure's part (e.g. alignment.wheel_travel); empty: the independent coordinates"
)


def span(field: str, text: str, unit: str = "m", size: float = 1.0) -> tuple[float, float] | None:
    """'-300, 300' in `unit` (of SI size `size`) -> (-0.3, 0.3) in m, low below high; empty: None (about the
    document's pose)."""
    if not text.strip():
        return None
    parts = [p for p in re.split(r"[,;\s]+", text.strip()) if p]
    expected = f"two numbers in {unit}, low then high, e.g. -1, 1; empty: about the document's pose"
    if len(parts) != 2:
        raise ModelError(field, f"{text!r} is not two numbers", None, expected)
    low, high = (size * number(field, part, lambda v: abs(v * size) < 1e3, expected) for part in parts)
    if not low < high:
        raise ModelError(field, f"{low / size:g} is not below {high / size:g}", None, expected)
    return low, high


class WorkspaceDialog(OptionsDialog):
    """A parallel machine's workspace map: the plane of platform positions, its ranges, the points per axis
    and where the other task coordinate stays."""

    task, title = "workspace", "Workspace map"

    @cached_property
    def machine(self):
        from ...dynamics.pkm import ParallelMachine

        return ParallelMachine(self.model)

    def build(self) -> None:
        try:
            names = self.machine.task_names
        except ModelError as exc:
            self._unusable = exc
            self.form.addRow(QLabel(f"No workspace map for this model:\n{exc}"))
            return
        self._unusable = None
        pairs = {f"{a},{b}": f"{a} and {b}" for i, a in enumerate(names) for b in names[i + 1 :]}
        previous = ",".join(self.start.get("plane") or [])
        self.plane = self.combo("plane", "plane of platform positions", pairs, previous or None)
        ranges = dict(self.start.get("ranges") or {})
        unit, size = self.units.unit("m")
        tip = "low, high; empty: sized to hold every reachable position"
        for which, name in zip(("first", "second"), self.plane.currentData().split(","), strict=True):
            self.line(which, f"{which} axis range [{unit}]", tip, _shown_numbers(ranges.get(name), size))
        self.line("points", "points per axis", "grid points along each axis (the map has their square)")
        at = _shown_numbers(next(iter(dict(self.start.get("at") or {}).values()), None), size)
        self.line(
            "at", f"other coordinate [{unit}]", "where the task coordinate off the plane stays; empty: the pose", at
        )

    def sync(self) -> None:
        if self._unusable is None:
            self.lines["at"].setEnabled(len(self.machine.task_names) > 2)

    def read(self) -> dict:
        if self._unusable is not None:
            self._errors["model"] = self._unusable
            return {}
        plane = self.plane.currentData().split(",")
        unit, size = self.units.unit("m")
        ranges = {
            name: self.field(which, lambda t, w=which: span(w, t, unit, size))
            for which, name in zip(("first", "second"), plane, strict=True)
        }
        other = [n for n in self.machine.task_names if n not in plane]
        at = self.field(
            "at",
            lambda t: (
                size * number("at", t, lambda v: abs(v * size) < 1e3, f"a position in {unit}") if t.strip() else None
            ),
        )
        return {
            "plane": plane,
            "ranges": {n: list(r) for n, r in ranges.items() if r is not None} or None,
            "points": self.field("points", lambda t: whole_number("points", t, 2, 401)),
            "at": {other[0]: at} if other and at is not None and self.lines["at"].isEnabled() else None,
        }

    def hint_text(self, values: dict) -> str:
        count = values.get("points") or 0
        return f"{count * count} platform positions, each limb's inverse kinematics and the task-space equations."


def suspension_sets(dialog: OptionsDialog, what: str, label: str) -> list[str]:
    """The model's suspension measure sets as the dialog's `measure` choice; none: the dialog says it has no
    `what` and keeps why in `_unusable`."""
    sets = [m.name for m in dialog.model.measures if isinstance(m, SuspensionMeasure)]
    dialog._unusable = None if sets else "the model has no suspension measure set (Add measure › suspension)"
    if sets:
        dialog.measure = dialog.combo("measure", label, {name: name for name in sets})
    else:
        dialog.form.addRow(QLabel(f"No {what} for this model:\n{dialog._unusable}"))
    return sets


class SuspensionReportDialog(OptionsDialog):
    """The suspension report: which measure set, the wheel travel each way (mm) and the number of poses."""

    task, title = "suspension_report", "Suspension report"

    def build(self) -> None:
        if not suspension_sets(self, "suspension report", "measure set"):
            return
        self.travel_unit = self.units.unit("m", "wheel_travel")  # the suspension measures' length unit
        unit, size = self.travel_unit
        shown = _shown_numbers(self.start.get("travel"), size)
        self.line("travel", f"wheel travel each way [{unit}]", "bump and rebound from the design position", shown)
        self.line("points", "poses", "poses over the travel, 3 to 10 001 (41: every 5 mm over ±100 mm)")

    def read(self) -> dict:
        if self._unusable is not None:
            self._errors["model"] = ModelError("measures", self._unusable)
            return {}
        unit, size = self.travel_unit
        travel = self.field(
            "travel", lambda t: number("travel", t, lambda v: 0 < v * size <= 10, f"a length in {unit}")
        )
        return {
            "measure": self.measure.currentData(),
            "travel": None if travel is None else travel * size,
            "points": self.field("points", lambda t: whole_number("points", t, 3, 10_001)),
        }


class ManoeuvreDialog(OptionsDialog):
    """A handling manoeuvre of a vehicle with Magic Formula tyres (docs/vehicle.md): its kind, the speeds (m/s), the
    handwheel angle (deg), each run's length (s) and the speed controller's gain (N s/m, 0 coasts)."""

    task, title = "manoeuvre", "Manoeuvre"

    def build(self) -> None:
        kinds = {"step_steer": "Step steer (ISO 7401)", "steady_state": "Steady-state circular driving (ISO 4138)",
                 "sine_with_dwell": "Sine with dwell (FMVSS 126)",
                 "double_lane_change": "Double lane change (ISO 3888-1), preview driver",
                 "constant_radius": "Constant radius (ISO 4138), speed raised"}  # fmt: skip
        self.kind = self.combo("kind", "manoeuvre", kinds)
        speeds = ", ".join(f"{v:g}" for v in self.start.get("speeds") or [])
        self.line("speeds", "speeds [m/s]", "forward speeds, comma-separated: each a run (steady state)", speeds)
        self.line("handwheel", "handwheel [deg]", "handwheel angle, positive turning left")
        self.line("duration", "each run [s]", "the simulated time of each run")
        self.line("speed_gain", "speed gain [N s/m]", "the speed controller's drive force per m/s of error; 0 coasts")
        tip = "constant radius: the circle's radius (the speed raised from the first to the last speed)"
        self.line("radius", "radius [m]", tip, _text(self.start.get("radius", ManoeuvreOptions.radius)))

    def read(self) -> dict:
        def speeds(text: str) -> list[float]:
            parts = [p for p in text.replace(";", ",").split(",") if p.strip()]
            values = [number("speeds", p, lambda v: 1 <= v <= 100, "speeds from 1 to 100 m/s") for p in parts]
            if not 1 <= len(values) <= 20:
                raise ModelError("speeds", "must list 1 to 20 speeds", text, "e.g. 12, 16, 20")
            return values

        return {
            "kind": self.kind.currentData(),
            "speeds": self.field("speeds", speeds),
            "handwheel": self.field("handwheel", lambda t: number("handwheel", t, lambda v: abs(v) <= 720, "±720")),
            "duration": self.field("duration", lambda t: number("duration", t, lambda v: 0 < v <= 600, "0 to 600 s")),
            "speed_gain": self.field(
                "speed_gain", lambda t: number("speed_gain", t, lambda v: 0 <= v <= 1e6, "0 (coasting) to 1e6 N s/m")
            ),
            "radius": self.field("radius", lambda t: number("radius", t, lambda v: 5 <= v <= 1000, "5 to 1000 m")),
        }

    def hint_text(self, values: dict) -> str:
        runs = len(values.get("speeds") or []) if values.get("kind") == "steady_state" else 1
        return (f"{runs} run(s) of {values.get('duration') or 0:g} s at a held speed; each new steering input and "
                "speed builds its engine the first time (half a minute), then a run takes seconds.")  # fmt: skip


class KCDialog(OptionsDialog):
    """The K&C rig: which test (the corner's K&C, or its axle rolled), which corner, the wheel travel each way (in
    the suspension measures' length unit), the largest loads each way, the points per sweep and the axle; for the
    axle roll the roll each way (the suspension angle unit), its points, the track (empty: the corner's) and the
    tyres' stiffness (empty: rigid) (simulation/kc_rig.py KCOptions, whose limits hold)."""

    task, title = "kc_rig", "K&C rig"
    LOADS = (  # option, label, unit
        ("lateral_force", "lateral force each way", "N"),
        ("longitudinal_force", "longitudinal force each way", "N"),
        ("aligning_moment", "aligning moment each way", "N m"),
    )

    def build(self) -> None:
        if not suspension_sets(self, "K&C", "corner (measure set)"):
            return
        self.test = self.combo("test", "test", {"corner": "corner K&C", "axle_roll": "axle roll (corner and mirror)"})
        self.travel_unit = self.units.unit("m", "wheel_travel")
        unit, size = self.travel_unit
        self.line(
            "travel",
            f"wheel travel each way [{unit}]",
            "bump and rebound",
            _shown_numbers(self.start.get("travel"), size),
        )
        for key, label, load_unit in self.LOADS:
            self.line(key, f"{label} [{load_unit}]", "swept from minus to plus this, through zero")
        self.line(
            "travel_points", "points over the travel", "static equilibria over the travel (odd: the design is one)"
        )
        self.line("load_points", "points per load", "static equilibria over each load sweep")
        self.axle = self.combo("axle", "axle (anti-dive / anti-squat)", {"front": "front", "rear": "rear"})
        self.roll_unit = self.units.unit("rad", "camber")  # the suspension measures' angle unit
        roll_unit, roll_size = self.roll_unit
        self.line("roll", f"roll each way [{roll_unit}]", "axle roll: right side down +, swept from minus to plus",
                  _shown_numbers(self.start.get("roll"), roll_size))  # fmt: skip
        self.line("roll_points", "points over the roll", "axle roll: rolls read from the corner's travel sweep")
        self.line("track", f"track [{unit}]", "axle roll: the wheel centres' distance; empty: twice the corner's "
                  "from y = 0", _shown_numbers(self.start.get("track"), size))  # fmt: skip
        self.line("tyre_stiffness", "tyre stiffness [N/m]", "axle roll: each tyre in series; empty: rigid tyres")

    def sync(self) -> None:
        if self._unusable is not None:
            return
        rolled = self.test.currentData() == "axle_roll"
        for key in self.ROLL:
            self.lines[key].setEnabled(rolled)
        for key in (*(k for k, _, _ in self.LOADS), "load_points"):
            self.lines[key].setEnabled(not rolled)

    ROLL = ("roll", "roll_points", "track", "tyre_stiffness")

    def read(self) -> dict:
        if self._unusable is not None:
            self._errors["model"] = ModelError("measures", self._unusable)
            return {}
        unit, size = self.travel_unit
        out = {"measure": self.measure.currentData(), "axle": self.axle.currentData(), "test": self.test.currentData()}
        travel = self._ranged("travel", size, unit)
        out["travel"] = None if travel is None else travel * size
        out["travel_points"] = self.field("travel_points", lambda t: whole_number("travel_points", t,
                                          *KCOptions.LIMITS["travel_points"]))  # fmt: skip
        if out["test"] == "axle_roll":
            return out | self._roll()
        for key, _, load_unit in self.LOADS:
            out[key] = self._ranged(key, 1.0, load_unit)
        out["load_points"] = self.field("load_points", lambda t: whole_number("load_points", t,
                                        *KCOptions.LIMITS["load_points"]))  # fmt: skip
        return out

    def _roll(self) -> dict:
        """The axle roll's options in SI; an empty track or tyre stiffness is None (the corner's, rigid)."""
        (roll_unit, roll_size), (unit, size) = self.roll_unit, self.travel_unit
        roll = self._ranged("roll", roll_size, roll_unit)
        out = {"roll": None if roll is None else roll * roll_size}
        out["roll_points"] = self.field("roll_points", lambda t: whole_number("roll_points", t,
                                        *KCOptions.LIMITS["roll_points"]))  # fmt: skip
        for key, key_unit, key_size in (("track", unit, size), ("tyre_stiffness", "N/m", 1.0)):
            if self.lines[key].text().strip():
                value = self._ranged(key, key_size, key_unit)
                out[key] = None if value is None else value * key_size
        return out

    def _ranged(self, key: str, size: float, unit: str) -> float | None:
        """A number typed in `unit` (SI size `size`) within KCOptions' limits for `key`."""
        low, high = KCOptions.LIMITS[key]
        expected = f"{low / size:g} to {high / size:g} {unit}"
        return self.field(key, lambda t: number(key, t, lambda v: low <= v * size <= high, expected))

    def hint_text(self, values: dict) -> str:
        if values.get("test") == "axle_roll":
            count = (values.get("travel_points") or 0) + 12  # the sweep, and each load case at its fewest points
            return (f"{count} static equilibria of the corner, the chassis held; the axle of it and its mirror "
                    "rolled from its travel sweep at constant axle load, the body free to heave.")  # fmt: skip
        count = (values.get("travel_points") or 0) + 4 * (values.get("load_points") or 0)
        return f"{count} static equilibria of the compliant corner, the chassis held (about 0.1 s each)."


# ---------------------------------------------------------------------------------------- identification
LOG_FILTER = "Logs (*.csv *.txt);;All files (*)"


def log_path(field: str, text: str, required: bool) -> str | None:
    """An existing file's path; empty is None where the log is optional."""
    text = text.strip()
    if not text:
        if required:
            raise ModelError(field, "is empty", None, "a CSV log: t, the coordinates, tau_<coordinate> columns")
        return None
    if not Path(text).is_file():
        raise ModelError(field, "is not a file", text, "the path of a CSV log")
    return text


class IdentifyDialog(OptionsDialog):
    task, title = "identification", "Identify from a measured log"

    def build(self) -> None:
        self._file_line("data", "log", "positions of the independent coordinates and forces of the actuated ones")
        self._file_line("validate", "validation log", "optional: a second log, the predicted forces against it")
        self.friction = {
            kind: self.check(f"friction_{kind}", f"{kind} friction of each actuated joint") for kind in FRICTION
        }
        self.line("digits", "digits", "the precision deciding the base parameters (variable precision)")
        self.line(
            "cutoff_hz", "cut-off [Hz]", "one cut-off for the positions and the rows; empty: from the motion's spectrum"
        )
        self.physical = self.check("physical", "physically consistent estimate (semi-definite program)")
        self.hold = self.check(
            "hold_unexcited", "hold base parameters the log does not excite at the model's values instead of stopping"
        )
        chosen = self.start.get("friction") or []  # once every field exists: each toggle reads them all
        for kind, box in self.friction.items():
            box.setChecked(kind in chosen)

    def _file_line(self, key: str, label: str, tip: str) -> None:
        def choose(editor: QLineEdit) -> str:
            return QFileDialog.getOpenFileName(self, f"Choose the {label}", editor.text(), LOG_FILTER)[0]

        self.path_line(key, label, tip, choose)

    def read(self) -> dict:
        digits = f"whole number from {MIN_DIGITS} to {MAX_DIGITS}"
        return {
            "data": self.field("data", lambda t: log_path("log", t, True)),
            "validate": self.field("validate", lambda t: log_path("validation log", t, False)),
            "friction": [kind for kind, box in self.friction.items() if box.isChecked()],
            "digits": self.field("digits", lambda t: whole_number("digits", t, MIN_DIGITS, MAX_DIGITS, digits)),
            "cutoff_hz": self.field(
                "cutoff_hz",
                lambda t: number("cut-off", t, lambda v: v > 0, "a frequency in Hz, or empty") if t.strip() else None,
            ),
            "physical": self.physical.isChecked(),
            "hold_unexcited": self.hold.isChecked(),
        }

    def hint_text(self, values: dict) -> str:
        check = " and validates on the second" if values.get("validate") else ""
        return (
            f"Finds the base parameters at {values.get('digits') or DEFAULT_DIGITS} digits, filters the log and "
            f"estimates them by weighted least squares{check}: seconds for a robot arm, a minute for a large "
            "closed loop."
        )


class UrdfImportDialog(OptionsDialog):
    """File › Import of a URDF robot: the folder of its ROS packages (package:// meshes), whether its root link is
    welded to the ground, whether impossible inertias are repaired (docs/urdf.md)."""

    task, title = "urdf_import", "Import a URDF robot"

    def build(self) -> None:
        def choose(editor: QLineEdit) -> str:
            return QFileDialog.getExistingDirectory(self, "Folder holding the robot's ROS packages", editor.text())

        tip = "the folder holding the robot's packages (package:// meshes); empty: ROS_PACKAGE_PATH and the packages "
        self.path_line("package_folder", "ROS packages", tip + "above the file", choose)
        floating = "by default a root link other than 'world' floats on a free joint, as on Pinocchio's free flyer"
        self.fixed = self.check("fixed_base", "weld the root link to the ground (fixed base)", floating)
        kept = "by default they are kept as the file gives them (as Pinocchio reads them) and named in the notes"
        self.repair = self.check("repair_inertias", "repair inertias no rigid body can have", kept)
        ground = "by default a floating robot lands on a ground plane under its lowest collision geometry"
        self.no_ground = self.check("no_ground", "leave out the ground (no contacts)", ground)

    def read(self) -> dict:
        folder = self.field("package_folder", package_folder)
        return {
            "package_paths": [folder] if folder else [],
            "package_folder": folder or "",
            "fixed_base": self.fixed.isChecked(),
            "repair_inertias": self.repair.isChecked(),
            "no_ground": self.no_ground.isChecked(),
        }

    def hint_text(self, values: dict) -> str:
        base = "is welded to the ground" if values.get("fixed_base") else "floats on a free joint"
        kept = "replaced by the nearest possible ones" if values.get("repair_inertias") else "kept as written"
        ground = "no ground" if values.get("no_ground") or values.get("fixed_base") else "a ground plane"
        return (
            f"The root link {base} (a root link named 'world' is the ground), with {ground} under it. Inertias no "
            f"rigid body can have are {kept} and named in the notes."
        )


def package_folder(text: str) -> str | None:
    """An existing folder, or None for an empty field."""
    text = text.strip()
    if text and not Path(text).expanduser().is_dir():
        raise ModelError("ROS packages", "is not a folder", text, "the folder holding the robot's ROS packages")
    return text or None


DIALOGS: dict[str, type[OptionsDialog]] = {
    d.task: d
    for d in (
        KinematicsDialog,
        SimulationDialog,
        SymbolicEomDialog,
        BaseParametersDialog,
        EquilibriumDialog,
        LinearizeDialog,
        WorkspaceDialog,
        SuspensionReportDialog,
        KCDialog,
        IdentifyDialog,
        UrdfImportDialog,
        ManoeuvreDialog,
    )
}


def ask_options(
    task: str,
    model: Model,
    previous: dict | None = None,
    parent: QWidget | None = None,
    units: DisplayUnits = DEFAULT_UNITS,
) -> dict | None:
    """Show the options dialog of `task` starting from `previous` (SI), values typed in `units`; the options (SI)
    on OK, None on Cancel."""
    if task not in DIALOGS:
        raise ValueError(f"no options dialog for task {task!r}; the tasks are {', '.join(DIALOGS)}")
    dialog = DIALOGS[task](model, previous, parent, units)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.options()
