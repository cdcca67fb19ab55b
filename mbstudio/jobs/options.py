"""Each analysis's options as one frozen class: its names, defaults and limits, written once for the command line,
the window, parameter studies and the Python API.

    options = SimulationOptions.from_dict({"t_end": 2.0})    # the defaults for the rest; a ModelError if bad
    options.samples, options.to_dict()                        # 201, every option as plain data

A job carries its options as a plain dict (it crosses a process boundary, QSettings keeps the window's last ones,
a study's table writes them in its provenance); `from_dict` reads such a dict, missing names taking their default,
and refuses a name the analysis does not take or a value out of its limits with a ModelError that names the
option, the value and what would be valid (docs/architecture.md, principle 8). The text parsers of the window's
fields and of the command line's arguments are here too, so a limit is stated once.

Adding an analysis: a frozen dataclass of its options, registered here (`register` or `@options`), see
docs/architecture.md, "Adding an analysis".
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import Any, TypeVar

from ..model import ModelError

MIN_DIGITS, MAX_DIGITS = 16, 1000  # the pipeline refuses fewer than 16; beyond 1000 a run takes hours
DIGITS_EXPECTED = f"whole numbers from {MIN_DIGITS} to {MAX_DIGITS} separated by commas, rising, e.g. 30, 50"
MAX_SAMPLES = 100_000
BASE_METHODS = ("all", "dp", "vp", "symbolic")
MAX_EXPRESSION_SIZE = 1_000_000  # sympy.count_ops limits of the symbolic EOM


# ---------------------------------------------------------------------------------------- text parsers
def number(field: str, text: str, valid: Callable[[float], bool], expected: str) -> float:
    """A finite float for which `valid` holds, else a ModelError naming `field`, the text and `expected`."""
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ModelError(field, f"{text!r} is not a number", None, expected)
    if not valid(value):
        raise ModelError(field, f"{text} is out of range", None, expected)
    return value


def whole_number(field: str, text: str, low: int, high: int, expected: str | None = None) -> int:
    expected = expected or f"a whole number from {low} to {high}"
    text = text.strip()
    try:
        value = int(text)
    except ValueError:
        raise ModelError(field, f"{text!r} is not a whole number", None, expected) from None
    if not low <= value <= high:
        raise ModelError(field, f"{value} is out of range", None, expected)
    return value


def optional_count(field: str, text: str, low: int, expected: str | None = None) -> int | None:
    """Empty means None (the task's own choice); else a whole number from `low` to MAX_SAMPLES."""
    return whole_number(field, text, low, MAX_SAMPLES, expected) if text.strip() else None


def digits_list(text: str) -> list[int]:
    """'30, 50' -> [30, 50]: the precisions of a ridge study, rising."""
    if not text.strip():
        raise ModelError("digits", "is empty", None, DIGITS_EXPECTED)
    return checked_digits(
        [whole_number("digits", part, MIN_DIGITS, MAX_DIGITS, DIGITS_EXPECTED) for part in text.split(",")]
    )


def checked_digits(digits: list[int]) -> list[int]:
    """Precisions of a ridge study: each from MIN_DIGITS to MAX_DIGITS, rising."""
    for d in digits:
        if isinstance(d, bool) or not isinstance(d, int):
            raise ModelError("digits", f"{d!r} is not a whole number", None, DIGITS_EXPECTED)
        if not MIN_DIGITS <= d <= MAX_DIGITS:
            raise ModelError("digits", f"{d} is out of range", None, DIGITS_EXPECTED)
    if not digits or digits != sorted(set(digits)):
        raise ModelError("digits", f"{', '.join(map(str, digits))} do not rise", None, DIGITS_EXPECTED)
    return digits


# ---------------------------------------------------------------------------------------- value checks
def check_count(name: str, value: object, low: int, high: int, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ModelError(name, "is not a whole number in range", value, f"a whole number from {low} to {high}")


def check_positive(
    name: str, value: object, optional: bool = False, expected: str = "a finite number above 0", what: str = "number"
) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ModelError(name, f"is not a finite positive {what}", value, expected)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ModelError(name, "is not a choice", value, ", ".join(choices))


# ---------------------------------------------------------------------------------------- the registry
T = TypeVar("T")
OPTIONS: dict[str, type] = {}  # task name -> its options: a frozen dataclass


def register(task: str, cls: type[T]) -> type[T]:
    """Make the frozen dataclass `cls` the options of `task`: its fields are the options' names and defaults,
    its __post_init__ refuses values out of their limits with a ModelError. The class may live beside the
    computation, in a lower layer; it needs nothing from here."""
    if not is_dataclass(cls) or not cls.__dataclass_params__.frozen:
        raise TypeError(f"the options of {task} must be a frozen dataclass, not {cls!r}")
    OPTIONS[task] = cls
    return cls


LAZY: dict[str, str] = {}  # task name -> "module:Class" of options living in a module imported on first use


def register_lazy(task: str, where: str) -> None:
    """Register the options of `task` as "package.module:Class", imported when first asked for: the class lives
    beside its computation, whose module a job's process need not import to start."""
    LAZY[task] = where


def options_class(task: str) -> type:
    """The options class of `task` (importing a lazily registered one); a ModelError for a task without."""
    if task not in OPTIONS and task in LAZY:
        module, _, name = LAZY[task].partition(":")
        register(task, getattr(importlib.import_module(module), name))
    if task not in OPTIONS:
        raise ModelError("task", "has no options", task, ", ".join([*OPTIONS, *LAZY]))
    return OPTIONS[task]


def tasks() -> list[str]:
    """Every task with options, those registered lazily included."""
    return list(dict.fromkeys([*OPTIONS, *LAZY]))


def options(task: str) -> Callable[[type[T]], type[T]]:
    """`register` as a class decorator."""
    return lambda cls: register(task, cls)


def read(cls: type[T], data: Mapping[str, Any] | None = None, task: str = "") -> T:
    """The options of a plain dict: missing names take their default, None stands for the default of an option
    whose default is not None (QSettings and the dialogs leave fields that do not apply empty); a name the class
    does not have is refused."""
    data = dict(data or {})
    known = {f.name: f for f in fields(cls)}
    for name in data:
        if name not in known:
            raise ModelError(repr(name), f"is not an option of {task or cls.__name__}", None, ", ".join(known))
    return cls(**{k: v for k, v in data.items() if v is not None or _default(known[k]) is None})


def _default(f) -> object:
    return f.default_factory() if f.default_factory is not MISSING else f.default


def options_of(task: str, data: Mapping[str, Any] | None = None) -> Any:
    """The options of `task` read from `data` (see `read`)."""
    return read(options_class(task), data, task)


def defaults(task: str) -> dict[str, Any]:
    """Every option of `task` at its default, as plain data."""
    return asdict(options_class(task)())


@dataclass(frozen=True)
class TaskOptions:
    """A base for options classes: `check` called on construction, `from_dict` and `to_dict`."""

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise a ModelError naming the first option out of its limits."""

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any] | None = None) -> T:
        return read(cls, data, next((t for t, c in OPTIONS.items() if c is cls), ""))

    def to_dict(self) -> dict[str, Any]:
        """Every option as plain data (lists, dicts, numbers, strings), for a job, QSettings or a table."""
        return asdict(self)


@options("kinematics")
@dataclass(frozen=True)
class KinematicsOptions(TaskOptions):
    trajectory: str | None = None  # a trajectory of the model; None: its first, else the default exciting path
    samples: int | None = None  # None: the trajectory's own

    def check(self) -> None:
        check_count("samples", self.samples, 2, MAX_SAMPLES, optional=True)


def _run():
    from ..simulation import run  # imported by a simulation only: a job's process starts without scipy

    return run


@options("simulation")
@dataclass(frozen=True)
class SimulationOptions(TaskOptions):
    t_end: float = 1.0  # s
    method: str = "auto"  # chosen from the model: CVODES-BDF for compliant contacts, else CVODES (method_choice.py)
    rtol: float = field(default_factory=lambda: _run().RTOL)
    atol: float = field(default_factory=lambda: _run().ATOL)
    samples: int = 201  # output times over [0, t_end], both ends included
    velocities: dict[str, float] = field(default_factory=dict)  # {independent coordinate: rate at t = 0}
    cross_check: bool = False  # also through the TITOP block model
    closure_frequency: float | None = None  # Hz, a closed loop's cut joints in the block model; None: its default
    contact: str = "compliant"  # the contacts: compliant forces, or rigid (time stepping)
    step: float | None = None  # s, the rigid contacts' time step; None: simulation/run.py RIGID_STEP

    def check(self) -> None:
        check_positive("t_end", self.t_end, expected="a simulated time in seconds, e.g. 1.0", what="time")
        check_choice("method", self.method, ("auto", *_run().METHODS))
        check_positive("rtol", self.rtol)
        check_positive("atol", self.atol)
        check_count("samples", self.samples, 2, MAX_SAMPLES)
        check_positive("closure_frequency", self.closure_frequency, optional=True, expected="a frequency above 0 Hz")
        check_choice("contact", self.contact, ("compliant", "rigid"))
        check_positive("step", self.step, optional=True, expected="a time step in seconds above 0")


@options("symbolic_eom")
@dataclass(frozen=True)
class SymbolicEomOptions(TaskOptions):
    simplify: bool = True
    numeric_inertia: bool = False
    size_limit: int = 400  # sympy.count_ops of the coefficients simplified
    trigsimp_limit: int = 40  # of those also trigsimp'ed

    def check(self) -> None:
        check_count("size_limit", self.size_limit, 0, MAX_EXPRESSION_SIZE)
        check_count("trigsimp_limit", self.trigsimp_limit, 0, MAX_EXPRESSION_SIZE)


@options("base_parameters")
@dataclass(frozen=True)
class BaseParametersOptions(TaskOptions):
    method: str = "all"  # the routes: all, dp, vp or symbolic
    digits: list[int] = field(default_factory=lambda: [30, 50])  # VP precision(s): a rising list is a ridge study
    samples: int | None = None  # of the trajectory; None: its own
    trajectory: str | None = None
    eliminate: list[str] | None = None  # exactly these parameters eliminated
    priority: list[str] | None = None  # these first, where possible

    def __post_init__(self) -> None:
        if isinstance(self.digits, int) and not isinstance(self.digits, bool):  # one precision, as a study gives it
            object.__setattr__(self, "digits", [self.digits])
        super().__post_init__()

    def check(self) -> None:
        check_choice("method", self.method, BASE_METHODS)
        if not isinstance(self.digits, list | tuple):
            raise ModelError("digits", "is not a list of whole numbers", self.digits, DIGITS_EXPECTED)
        checked_digits(list(self.digits))
        check_count("samples", self.samples, 2, MAX_SAMPLES, optional=True)


@options("engine")
@dataclass(frozen=True)
class EngineOptions(TaskOptions):
    pass


@options("c_code")
@dataclass(frozen=True)
class CCodeOptions(TaskOptions):
    stem: str = "model"  # the files' name
    language: str = "c"  # c, numpy or fmu
    folder: str = ""  # where the window writes them

    def check(self) -> None:
        check_choice("language", self.language, ("c", "numpy", "fmu"))


@options("urdf_import")
@dataclass(frozen=True)
class UrdfImportOptions(TaskOptions):
    path: str = ""  # the URDF or MJCF file
    package_paths: list[str] = field(default_factory=list)  # where package:// meshes are looked up
    package_folder: str = ""  # the window's field for them
    fixed_base: bool = False  # the root link welded to the ground
    repair_inertias: bool = False  # impossible inertias made possible
    no_ground: bool = False  # no ground plane and contacts for a floating robot


@options("equilibrium")
@dataclass(frozen=True)
class EquilibriumOptions(TaskOptions):
    hold: dict[str, float] = field(default_factory=dict)  # {independent coordinate: value held}
    move: bool = True  # the window moves the document's pose there


LINEAR_POINTS = ("auto", "equilibrium", "initial")


@options("linearization")
@dataclass(frozen=True)
class LinearizationOptions(TaskOptions):
    at: str = "auto"  # the nearest equilibrium that is not unstable, else the pose; equilibrium; initial (a state)
    hold: dict[str, float] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)  # at "initial": coordinates set at values
    velocities: dict[str, float] = field(default_factory=dict)  # at "initial": rates
    inputs: list[str] = field(default_factory=list)  # empty: the actuators, else the independent coordinates
    outputs: list[str] = field(default_factory=list)  # empty: the independent coordinates
    schedule: dict | None = None  # a family (LPV): {"name", "from", "to", "count"}

    def check(self) -> None:
        check_choice("at", self.at, LINEAR_POINTS)
        if self.schedule is not None:
            missing = [k for k in ("name", "from", "to", "count") if k not in self.schedule]
            if missing:
                raise ModelError("schedule", f"has no {missing[0]!r}", self.schedule, "name, from, to and count")


@options("workspace")
@dataclass(frozen=True)
class WorkspaceOptions(TaskOptions):
    plane: list[str] | None = None  # two task coordinates; None: the first two
    ranges: dict[str, list[float]] | None = None  # {coordinate: [low, high]}; None: sized to the reachable set
    points: int = 41  # per axis
    at: dict[str, float] | None = None  # the other task coordinate's value; None: the document's pose

    def check(self) -> None:
        check_count("points", self.points, 2, 401)


def _suspension():
    from ..simulation import suspension

    return suspension


@options("suspension_report")
@dataclass(frozen=True)
class SuspensionReportOptions(TaskOptions):
    measure: str | None = None  # the suspension measure set; None: the first
    travel: float = field(default_factory=lambda: _suspension().TRAVEL)  # m each way
    points: int = field(default_factory=lambda: _suspension().POINTS)  # poses over the travel

    def check(self) -> None:
        check_positive("travel", self.travel, expected="a length above 0 m")
        check_count("points", self.points, 3, 10_001)


@options("task_space_eom")
@dataclass(frozen=True)
class TaskSpaceEomOptions(TaskOptions):
    pass


def _identify():
    from ..identification import identify

    return identify


@options("identification")
@dataclass(frozen=True)
class IdentificationOptions(TaskOptions):
    data: str = ""  # the measured log's path
    validate: str | None = None  # a second log's path
    friction: list[str] = field(default_factory=list)  # viscous, coulomb
    digits: int = field(default_factory=lambda: _identify().DEFAULT_DIGITS)  # deciding the base parameters
    cutoff_hz: float | None = None  # None: 5 × the motion's bandwidth
    physical: bool = False  # a physically consistent estimate
    hold_unexcited: bool = False  # unexcited base parameters held at the model's values

    def check(self) -> None:
        check_count("digits", self.digits, MIN_DIGITS, MAX_DIGITS)
        check_positive("cutoff_hz", self.cutoff_hz, optional=True, expected="a frequency in Hz above 0")


register_lazy("kc_rig", "mbstudio.simulation.kc_rig:KCOptions")
register_lazy("manoeuvre", "mbstudio.simulation.manoeuvres:ManoeuvreOptions")
