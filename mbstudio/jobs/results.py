"""What each analysis's job returns, as a frozen class the window, the commands and the exporters read by
attribute (`result.data.summary`), beside its provenance in `JobResult`.

A result crosses a process boundary (jobs/runner.py pickles it), so its fields are plain data: numbers, strings,
lists, dicts, numpy arrays, and the computing layer's own result objects where they are already plain data
(`SuspensionCurves`). Adding an analysis: one class here, built by its task in jobs/tasks.py (docs/architecture.md,
"Adding an analysis").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class EquilibriumResult:
    """Analysis › Equilibrium: the point found (linear/equilibrium.py `OperatingPoint.to_dict`), every
    coordinate's value there, and what the window says of it (held forces, neutral directions, stability)."""

    point: dict[str, Any]
    values: dict[str, float]
    summary: str


@dataclass(frozen=True)
class CodeResult:
    """The equations as source files (C, a numpy module) or an FMU: {file name: text or bytes}."""

    files: dict[str, str | bytes]


@dataclass(frozen=True)
class ImportResult:
    """A mechanism read from a URDF or MJCF file: its .mbs text and what the import changed or left out."""

    model: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EngineResult:
    """The compiled engine of a model revision: whether it runs as native code (else CasADi's interpreter)."""

    native: bool


@dataclass(frozen=True)
class SuspensionResult:
    """A suspension corner's kinematic curves (simulation/suspension.py `SuspensionCurves`)."""

    curves: Any


@dataclass(frozen=True)
class WorkspaceResult:
    """A parallel machine's workspace map over a plane of platform positions (Müller 2021)."""

    axes: list[str]  # the two task coordinates of the plane
    first: np.ndarray  # the grid along axes[0], m
    second: np.ndarray  # along axes[1], m
    fixed: dict[str, float]  # the other task coordinates' values, m
    values: dict[str, np.ndarray]  # quantity -> (len(second), len(first)), NaN where out of reach
    computed: np.ndarray  # False where a cancelled map did not get to
    labels: dict[str, str]  # quantity -> its name as shown
    units: dict[str, str]  # quantity -> its unit
    platform: str
    sized: bool  # the grid was fitted to the reachable set
    cancelled: bool


@dataclass(frozen=True)
class LogSignals:
    """The signals of a measured log as the Identification panel plots them (SI)."""

    coordinates: list[str]  # the logged independent coordinates
    actuated: list[str]  # the coordinates whose forces are logged
    units: dict[str, str]  # each coordinate's position unit and each tau_<coordinate>'s force unit
    t: np.ndarray  # s
    positions: np.ndarray  # (len(t), len(coordinates)), as logged
    filtered: np.ndarray  # the same, low-pass filtered
    forces: np.ndarray  # (len(t), len(actuated)), as logged
    t_kept: np.ndarray  # the samples kept after decimation
    forces_filtered: np.ndarray  # (len(t_kept), len(actuated))
    predicted: np.ndarray  # the estimated model's forces at t_kept


@dataclass(frozen=True)
class ValidationSignals:
    """The measured and predicted forces on the validation log."""

    t: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    file: str  # the validation log's name


@dataclass(frozen=True)
class IdentificationResult:
    """Base parameters and friction from a measured log: the JSON document (identification/identify.py
    `to_json`), the signals, and the check on a second log (None without one)."""

    json: dict[str, Any]
    signals: LogSignals
    validation: ValidationSignals | None


@dataclass(frozen=True)
class MotionResult:
    """A motion in time: a simulation from the document's state, or the kinematics along a trajectory."""

    t: np.ndarray  # s
    coordinates: list[str]  # the columns of q
    q: np.ndarray  # (len(t), len(coordinates))
    series: dict[str, np.ndarray]  # 'name [unit]' -> values at t, as plotted (body poses left to the 3D view)
    notes: list[str] = field(default_factory=list)  # limits passed that nothing enforces, …
    contacts: list[dict] = field(default_factory=list)  # a simulation's contacts of the stops
    cross_check: dict | None = None  # the block model's largest errors and provenance, or why it failed
    trajectory: str | None = None  # kinematics: the trajectory followed
    error_estimate: float | None = None  # a simulation's, of the state's scale (simulation/run.py)


@dataclass(frozen=True)
class EquationsResult:
    """Equations of motion as the Equations of motion table shows them: one record per entry (group, row, col,
    its name and LaTeX name, the constraint's label, text, LaTeX, pretty form, size), symbolic (M, c, g, Φq, γ)
    or numbers (a parallel machine's task-space equations)."""

    coordinates: list[str]
    entries: list[dict[str, Any]]
    constraint_labels: list[str]
    independent_rows: list[int]
    notes: list[str] = field(default_factory=list)
    groups: dict[str, list[list[str]]] = field(default_factory=dict)  # symbolic: every entry's text by group


@dataclass(frozen=True)
class BaseParametersResult:
    """The routes to the base parameters: the pipeline's JSON document, the spectra for the ridge panel, one row
    per base parameter (keyed by the parameter it keeps) and one per standard parameter with its role."""

    json: dict[str, Any]
    spectra: list[dict[str, Any]]
    table: list[dict[str, Any]]
    parameters: list[dict[str, Any]]
    parameter_names: list[str]


@dataclass(frozen=True)
class LinearModelResult:
    """One linear model as the Modes and Frequency-response panels show it: its document (io/state_space.py
    `model_document`), modes with the closed poses that animate them, and the Bode form of every input/output
    pair."""

    model: dict[str, Any]
    summary: str
    note: str  # how the default operating point was chosen
    modes: list[dict[str, Any]]
    coordinates: list[str]  # the columns of each pose
    poses: np.ndarray  # (modes, frames, coordinates)
    frequency_hz: np.ndarray
    magnitude_db: np.ndarray  # (frequencies, outputs, inputs)
    phase_deg: np.ndarray
    schedule: dict[str, Any] | None = None  # a family's member: {name, kind, unit, document_value, value}


@dataclass(frozen=True)
class LinearFamilyResult:
    """Linear models over a scheduling coordinate or parameter (LPV): the schedule ({name, kind, unit, values,
    count, start, stopped}), the members done, and each mode followed across them ({labels, frequency_hz,
    damping})."""

    family: dict[str, Any]
    members: list[LinearModelResult]
    branches: dict[str, Any]


@dataclass(frozen=True)
class KCRigResult:
    """A suspension corner on a K&C rig (simulation/kc_rig.py `KCResult`: its sweeps, compliances and
    provenance), or its axle rolled (simulation/kc_axle_roll.py `AxleRollTest`)."""

    kc: Any


@dataclass(frozen=True)
class ManoeuvreResult(MotionResult):
    """A handling manoeuvre (simulation/manoeuvres.py): its last run as a motion, the manoeuvre's own series
    first where they are time histories; its figures are the notes."""

    table: list[tuple[str, str, np.ndarray]] = field(default_factory=list)  # (name, unit, values) per column
    figures: dict[str, tuple[float, str]] = field(default_factory=dict)  # name -> (value, unit)
