"""Each analysis as a plain top-level function `task(model_text, options, progress, cancel) -> JobResult`.

The model arrives as its .mbs text (a snapshot: later edits in the window do not reach a running job), and
the result leaves as plain data (numbers, strings, numpy arrays) with its provenance, so that it crosses a
process boundary and the window only has to draw it. No Qt here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import mpmath
import numpy as np

from .. import __version__
from ..model import ModelError, loads
from ..model.hashing import text_hash
from ..numerics.backends import sympy  # imported when a symbolic result is shown
from ..progress import Cancel, Cancelled, PartProgress, builds_said, stop_requested
from .options import (
    BaseParametersOptions,
    CCodeOptions,
    EngineOptions,
    EquilibriumOptions,
    IdentificationOptions,
    KinematicsOptions,
    LinearizationOptions,
    SimulationOptions,
    SuspensionReportOptions,
    SymbolicEomOptions,
    TaskSpaceEomOptions,
    UrdfImportOptions,
    WorkspaceOptions,
    options_of,
)
from .results import (
    BaseParametersResult,
    CodeResult,
    EngineResult,
    EquationsResult,
    EquilibriumResult,
    IdentificationResult,
    ImportResult,
    KCRigResult,
    LinearFamilyResult,
    LinearModelResult,
    LogSignals,
    ManoeuvreResult,
    MotionResult,
    SuspensionResult,
    ValidationSignals,
    WorkspaceResult,
)


@dataclass
class Provenance:
    model_hash: str  # sha256 of mbstudio.model.dumps(model), i.e. of the snapshot text
    method: str
    precision: str
    options: dict
    seconds: float
    version: str = __version__

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class JobResult:
    task: str
    title: str
    provenance: Provenance
    data: Any = field(default_factory=dict)  # the task's result class (jobs/results.py); a script's task: any

    @property
    def notes(self) -> list[str]:
        """What the status bar says beside the title (a simulation's limits passed that nothing enforces, …)."""
        notes = self.data.get("notes") if isinstance(self.data, dict) else getattr(self.data, "notes", None)
        return list(notes or [])


# ---------------------------------------------------------------------------------------- kinematics
def kinematics(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """Coordinates, velocities and accelerations along a trajectory (KinematicsOptions), with the drive forces
    that motion needs, the energies, the constraint residual and the joint reactions."""
    from ..identification.observation import sample_states
    from ..identification.pipeline import chosen_trajectory, fourier_path, sample_times
    from ..kinematics import Mechanism
    from ..simulation.prescribed_motion import prescribed_motion

    start = time.perf_counter()
    opts = KinematicsOptions.from_dict(options)
    model = loads(model_text)
    mech = Mechanism(model)
    trajectory, _ = chosen_trajectory(model, named_trajectory(model, opts.trajectory), mech)
    count = opts.samples or trajectory.samples
    times = np.asarray(sample_times(mech, trajectory.duration, count), float)
    progress(0.1, f"assembling {count} samples along '{trajectory.name}'")
    q, qd, qdd = (np.asarray(a, float) for a in sample_states(mech, times, fourier_path(mech, trajectory)))
    progress(0.7, "inverse dynamics")
    series = motion_series(prescribed_motion(mech, times, q, qd, qdd))
    data = MotionResult(times, list(mech.coordinates), q, series, trajectory=trajectory.name)
    return JobResult(
        "kinematics",
        f"Kinematics along '{trajectory.name}'",
        Provenance(text_hash(model_text), "kinematics", "float64", opts.to_dict(), time.perf_counter() - start),
        data,
    )


def named_trajectory(model, name: str | None):
    """The model's trajectory called `name` (None: None), or a ModelError listing the valid names."""
    if name is None:
        return None
    for trajectory in model.trajectories:
        if trajectory.name == name:
            return trajectory
    raise ModelError(
        "trajectory",
        "is not a trajectory of the model",
        name,
        ", ".join(t.name for t in model.trajectories) or "none: add one in the model tree",
    )


def motion_series(result) -> dict[str, np.ndarray]:
    """The plotted series of a motion, 'name [unit]' (body poses are left to the 3D view)."""
    return {f"{name} [{unit}]": values for name, unit, values in result.columns()[1:] if not name.startswith("body")}


# ---------------------------------------------------------------------------------------- simulation
def simulation(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """The document's motion over [0, t_end] from its pose (SimulationOptions), at rest unless velocities are
    given; rigid contacts with contact "rigid" (simulation/rigid_stepping.py); with cross_check, also through
    the block model."""
    from ..kinematics import Mechanism
    from ..simulation.run import COMPANION_SHARE, initial_velocities, simulate

    opts = SimulationOptions.from_dict(options)
    model = loads(model_text)
    mech = Mechanism(model)
    given = dict(opts.velocities)
    velocities = initial_velocities(given, mech.independent_kinds)
    share = 0.5 if opts.cross_check else 1.0  # of the progress bar: the block model's run takes the rest
    run_share = 1.0 - COMPANION_SHARE  # of simulate's own progress: the error estimate's companion run takes the rest
    estimating = []  # not empty once the run is done

    def finished(run) -> None:
        """The run, done, as a part of the job: a job cancelled during the error estimate keeps it."""
        estimating.append(True)
        part = _motion_job(model_text, opts, given, run, stopped=ESTIMATE_STOPPED)
        progress(share * run_share, "the run is done; estimating its error", part)

    def told(f: float) -> None:
        if estimating:
            said = f"estimating the error: {(f - run_share) / COMPANION_SHARE:.0%}"
        else:
            said = f"t = {min(f / run_share, 1.0) * opts.t_end:.3g} s"
        progress(share * f, said)

    result = simulate(
        mech,
        opts.t_end,
        opts.method,
        opts.rtol,
        opts.atol,
        samples=opts.samples,
        velocities=velocities,
        progress=told,
        cancel=cancel,
        contact=opts.contact,
        step=opts.step,
        finished=finished,
    )
    if not opts.cross_check:
        return _motion_job(model_text, opts, given, result)
    progress(0.5, "block model", _motion_job(model_text, opts, given, result, stopped=CROSS_CHECK_STOPPED))
    return _motion_job(model_text, opts, given, result, _cross_check(model, result, velocities, opts, progress, cancel))


# what a simulation job kept when stopped after its run (jobs/runner.py: the result of its last part) says
ESTIMATE_STOPPED = "error estimate cancelled: the job stopped during the run that estimates it"
CROSS_CHECK_STOPPED = "block-model cross-check cancelled: the job stopped during it"


def _motion_job(
    model_text: str, opts, given: dict, result, checked: dict | None = None, stopped: str = ""
) -> JobResult:
    """A simulation job's result from the run `result` (simulation/run.py), with the block model's cross-check;
    `stopped`: what a job stopped at this point missed, in its title and notes."""
    p = result.provenance
    title = f"Simulation over {opts.t_end:g} s" + "".join(f", d_{k}(0) = {v:g}" for k, v in given.items())
    title += f", {len(result.contacts)} contacts of the stops" if result.contacts else ""
    if p.error_estimate is not None:  # simulation/run.py: from a companion run at ten times the tolerances
        title += f", error estimate {p.error_estimate:.1g} of the state's scale"
    if checked is not None:
        failed = checked.get("error")
        title += f", block-model cross-check failed: {failed}" if failed else ", block-model cross-check"
    title += f" ({stopped.partition(':')[0]})" if stopped else ""
    contacts = [c.as_dict() for c in result.contacts]
    data = MotionResult(
        result.t,
        list(result.coordinates),
        result.q,
        motion_series(result),
        _method_note(p) + list(result.notes) + ([stopped] if stopped else []),
        contacts,
        checked,
        error_estimate=p.error_estimate,
    )
    return JobResult(
        "simulation", title, Provenance(text_hash(model_text), p.method, p.precision, opts.to_dict(), p.seconds), data
    )


def _method_note(p) -> list[str]:
    """Why the run's integrator was chosen, where the model chose it (the Simulate dialog's "automatic")."""
    if not p.method_reason:
        return []
    return [f"integrator {p.method}, {p.method_reason} (the Simulate dialog's integrator CVODES chooses Adams)"]


def _last_part(parts: list, options: dict, model_hash: str, seconds: float) -> JobResult:
    """A job that sent whole results as its parts keeps the last one."""
    return parts[-1]


def _cross_check(model, result, velocities, opts: SimulationOptions, progress: PartProgress, cancel: Cancel) -> dict:
    """The same run through the TITOP block model (simulation/cross_check.py): its error series join the
    result's (as 'error:<series>'), its largest errors and provenance go in the data."""
    from ..simulation.cross_check import cross_check

    try:
        check = cross_check(
            model,
            result,
            velocities,
            closure_frequency=opts.closure_frequency,
            progress=lambda f: progress(0.5 + f / 2, f"block model: t = {f * opts.t_end:.3g} s"),
            cancel=cancel,
        )
    except (ModelError, RuntimeError) as exc:  # the simulation stands; the block model's reason is said
        return {"error": str(exc)}
    result.monitors += check.errors
    return {"largest": check.largest(), "provenance": check.run.provenance}


# ---------------------------------------------------------------------------------------- symbolic EOM
# beyond these sizes (sympy.count_ops) an entry gets no pretty form / no LaTeX: both would take seconds each
# (PUMA 560's largest entry has about 10⁵ operations) and no one reads them in a table
PRETTY_LIMIT = 400
LATEX_LIMIT = 2000
ENTRY_NAMES = {"mass_matrix": "M", "bias": "c", "gravity": "g", "constraint_jacobian": "Φq", "constraint_rhs": "γ"}


def symbolic_eom(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """M, c, g (and the constraints of a closed loop) as sympy text, entry by entry ("groups"), and one record
    per non-zero entry with its text, LaTeX, pretty form and size ("entries"; M's upper triangle only)."""
    from ..symbolic.eom import equations_of_motion

    start = time.perf_counter()
    opts = SymbolicEomOptions.from_dict(options)
    eom = equations_of_motion(loads(model_text), progress=progress, cancel=cancel, **opts.to_dict())
    entries = eom_entries(eom, cancel)
    notes = list(eom.notes)
    long = sum(1 for e in entries if not e["latex"])
    if long:
        notes.append(
            f"{long} entries longer than {LATEX_LIMIT} operations have no LaTeX here; "
            "`mbstudio eom` writes them with common subexpressions"
        )
    data = EquationsResult(
        coordinates=[str(c) for c in eom.coordinates],
        entries=entries,
        constraint_labels=list(eom.constraint_labels),
        independent_rows=list(eom.independent_rows),
        notes=notes,
        groups=group_texts(eom, entries),
    )
    return JobResult(
        "symbolic_eom",
        "Symbolic equations of motion",
        Provenance(text_hash(model_text), "symbolic", "exact", opts.to_dict(), time.perf_counter() - start),
        data,
    )


def eom_entries(eom, cancel: Cancel) -> list[dict]:
    """Per non-zero entry (M's upper triangle only): group, row, col (None in a vector), its name and LaTeX
    name, the constraint's label for Φq and γ rows, sympy text, LaTeX and unicode pretty form ("" past the
    limits) and the size (count_ops)."""
    from ..symbolic.export import inertial_latex_name, latex_name, stored_entries

    symbols = {s: latex_name(s.name) for s in eom.coordinates + eom.velocities + eom.geometric}
    symbols |= {s: inertial_latex_name(s.name) for s in eom.inertial}
    out = []
    for group, matrix in eom.groups().items():
        for i, j in stored_entries(matrix, symmetric=group == "mass_matrix"):
            if stop_requested(cancel)():
                raise Cancelled("symbolic equations of motion cancelled while formatting them")
            expr = matrix[i, j]
            ops = int(sympy.count_ops(expr))
            col = None if matrix.cols == 1 else j
            out.append(
                {
                    "group": group,
                    "row": i,
                    "col": col,
                    **_entry_names(eom, group, i, col, symbols),
                    "text": str(expr),
                    "ops": ops,
                    "latex": sympy.latex(expr, symbol_names=symbols) if ops <= LATEX_LIMIT else "",
                    "pretty": sympy.pretty(expr, use_unicode=True) if ops <= PRETTY_LIMIT else "",
                }
            )
    return out


def group_texts(eom, entries: list[dict]) -> dict[str, list[list[str]]]:
    """Every entry of every group as text, from the entries' texts: printing a large expression takes longer
    than deriving it, so each is printed once (M's lower triangle is its upper one)."""
    texts = {(e["group"], e["row"], e["col"] or 0): e["text"] for e in entries}

    def text(group: str, i: int, j: int) -> str:
        key = (group, min(i, j), max(i, j)) if group == "mass_matrix" else (group, i, j)
        return texts.get(key, "0")

    return {
        group: [[text(group, i, j) for j in range(matrix.cols)] for i in range(matrix.rows)]
        for group, matrix in eom.groups().items()
    }


def _entry_names(eom, group: str, i: int, col: int | None, symbols: dict) -> dict:
    """ "M[q1,q2]" and M_{q_{1},q_{2}}: rows and columns by coordinate, constraint rows by number."""
    from ..symbolic.export import LATEX_NAME

    constraint = group.startswith("constraint")
    index = [str(i + 1) if constraint else str(eom.coordinates[i])]
    latex = [str(i + 1) if constraint else symbols[eom.coordinates[i]]]
    if col is not None:
        index.append(str(eom.coordinates[col]))
        latex.append(symbols[eom.coordinates[col]])
    return {
        "entry": f"{ENTRY_NAMES[group]}[{','.join(index)}]",
        "entry_latex": f"{{{LATEX_NAME[group]}}}_{{{','.join(latex)}}}",
        "constraint": eom.constraint_labels[i] if constraint else "",
    }


# ---------------------------------------------------------------------------------------- base parameters
def base_parameters(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """The routes of BaseParametersOptions with the spectra for the ridge panel, one row per
    base parameter and one per standard parameter for the tables, besides the pipeline's own JSON."""
    from ..identification.pipeline import base_parameters as run_pipeline

    start = time.perf_counter()
    opts = BaseParametersOptions.from_dict(options)
    model = loads(model_text)
    run = run_pipeline(
        model,
        method=opts.method,
        digits=opts.digits,
        samples=opts.samples,
        eliminate=opts.eliminate,
        priority=opts.priority,
        trajectory=named_trajectory(model, opts.trajectory),
        progress=progress,
        cancel=cancel,
    )
    data = BaseParametersResult(
        json=run.to_json(),
        spectra=spectra(run),
        table=base_table(run),
        parameters=parameter_roles(run, model),
        parameter_names=run.parameter_names,
    )
    precision = ", ".join(f"{d} digits" for d in run.digits) if run.vp is not None else "float64"
    return JobResult(
        "base_parameters",
        f"Base parameters ({opts.method})",
        Provenance(text_hash(model_text), opts.method, precision, opts.to_dict(), time.perf_counter() - start),
        data,
    )


def spectra(run) -> list[dict]:
    """Per numeric route and precision: log10 σ_i (computed in mpmath, so VP values far below float64's
    range still plot), the log10 tolerance, the rank and the ridge depth."""
    results = ([run.dp] if run.dp is not None else []) + (list(run.vp.results) if run.vp is not None else [])
    out = []
    for r in results:
        label = "DP (float64)" if r.method == "dp" else f"VP {r.digits} digits"
        out.append(
            {
                "label": label,
                "method": r.method,
                "digits": r.digits,
                "log10_sigma": [_log10(s) for s in r.singular_values],
                "singular_values": list(r.singular_values),
                "log10_tolerance": _log10(r.tolerance),
                "rank": r.rank,
                "log10_depth": r.ridge.log10_depth,
                "evident": r.ridge.evident,
            }
        )
    return out


def _log10(text: str) -> float:
    with mpmath.workdps(max(30, len(text))):
        x = abs(mpmath.mpf(text))
        return -math.inf if x == 0 else float(mpmath.log10(x))


def base_table(run) -> list[dict]:
    """One row per base parameter, keyed by the parameter it keeps (φ_b = φ_kept + β φ_eliminated): the
    routes are aligned by that name. Per route: short text, full-digit text and LaTeX."""
    routes = _routes(run) | {"symbolic": None}  # the symbolic cells come from its expressions below
    cells: dict[str, dict[str, dict]] = {}
    for key, result in routes.items():
        if result is not None:
            for kept, entry, expr in _numeric_entries(result):
                cells.setdefault(kept, {})[key] = _numeric_cell(entry, expr)
    if run.symbolic is not None:
        for kept, expr in run.symbolic.base.items():
            cells.setdefault(kept, {})["symbolic"] = {
                "text": str(expr),
                "full": str(expr),
                "pretty": sympy.pretty(expr, use_unicode=True),
                "latex": sympy.latex(expr),
            }
    order = {n: i for i, n in enumerate(run.parameter_names)}
    return [{"kept": kept, **cells[kept]} for kept in sorted(cells, key=order.__getitem__)]


def _kept(names: list[str], eliminated: list[str]) -> list[str]:
    gone = set(eliminated)
    return [n for n in names if n not in gone]


def _numeric_entries(result) -> list[tuple[str, dict, sympy.Expr]]:
    """Per base parameter of a numeric route: the parameter it keeps, its entry and its expression."""
    symbols = {n: sympy.Symbol(n) for n in result.parameter_names}  # names such as "gamma" stay plain symbols
    kept = _kept(result.parameter_names, result.eliminated)
    return [
        (name, entry, sympy.sympify(entry["expression"], locals=symbols))
        for name, entry in zip(kept, result.base_parameters, strict=True)
    ]


def _numeric_cell(entry: dict, expr: sympy.Expr) -> dict:
    """The shown terms (those above β's rounding noise) again with every digit the route computed: a plain
    expression (`*`, ASCII), which CSV and JSON carry and a spreadsheet or sympy reads back."""
    terms = [n if c == "1" else f"{c}*{n}" for n, c in _shown_terms(entry, expr).items()]
    full = "".join(t if i == 0 else f" - {t[1:]}" if t.startswith("-") else f" + {t}" for i, t in enumerate(terms))
    return {"text": entry["expression"], "full": full, "pretty": full, "latex": sympy.latex(expr)}


def _shown_terms(entry: dict, expr: sympy.Expr) -> dict[str, str]:
    """The terms of a numeric base parameter that its expression shows, with full digits."""
    shown = {str(x) for x in expr.free_symbols}
    return {n: c for n, c in entry["terms"].items() if n in shown}


def parameter_roles(run, model) -> list[dict]:
    """One row per standard inertial parameter: its value in the model and, per route that ran, its role:
    "base" (kept), "eliminated" (with {kept parameter: coefficient} it is grouped into) or "no effect" (it is
    eliminated and enters no base parameter)."""
    from ..symbolic.eom import document_values

    values = document_values(model)
    grouped = {
        key: (_symbolic_grouping if key == "symbolic" else _numeric_grouping)(result)
        for key, result in _routes(run).items()
        if result is not None
    }
    rows = []
    for name in run.parameter_names:
        routes = {}
        for key, (kept, into) in grouped.items():
            role = "base" if name in kept else "eliminated" if name in into else "no effect"
            routes[key] = {"role": role, "into": into.get(name, {})}
        rows.append({"name": name, "value": values[name], "routes": routes})
    return rows


def _routes(run) -> dict:
    return {"dp": run.dp, "vp": run.vp.final if run.vp is not None else None, "symbolic": run.symbolic}


Grouping = tuple[set[str], dict[str, dict[str, str]]]  # kept names, {eliminated: {kept it enters: coefficient}}


def _symbolic_grouping(result) -> Grouping:
    into: dict[str, dict[str, str]] = {}
    for kept, column in result.beta.items():
        for name, coefficient in column.items():
            if coefficient != 0:
                into.setdefault(name, {})[kept] = str(coefficient)
    return set(result.base), into


def _numeric_grouping(result) -> Grouping:
    """From the terms each base parameter shows: those below β's rounding noise are zeros."""
    into: dict[str, dict[str, str]] = {}
    entries = _numeric_entries(result)
    for name, entry, expr in entries:
        for term, coefficient in _shown_terms(entry, expr).items():
            if term != name:
                into.setdefault(term, {})[name] = coefficient
    return {name for name, _, _ in entries}, into


# ---------------------------------------------------------------------------------------- compiled engine
def engine_build(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """Trace and compile the model's engine (kept on disk for every process: the window's sliders load its
    assembly from there, simulations start at once)."""
    from ..dynamics.engine import engine

    opts = EngineOptions.from_dict(options)
    progress(0.1, "tracing and compiling the equations")
    with builds_said(lambda text, fraction: progress(0.1 + 0.9 * fraction, text.strip())):  # its steps shown
        eng = engine(loads(model_text), model_text)
    provenance = Provenance(text_hash(model_text), "CasADi", "float64", opts.to_dict(), eng.build_seconds)
    return JobResult("engine", "Compiled engine", provenance, EngineResult(eng.native))


# ---------------------------------------------------------------------------------------- C code
def c_code(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """The equations as C, as a numpy module or compiled into an FMU (CCodeOptions)."""
    from ..io.c_code import c_sources
    from ..io.fmu_export import fmu_archive
    from ..io.numpy_code import numpy_source

    start = time.perf_counter()
    progress(0.1, "tracing the equations and finding the base parameters")
    opts = CCodeOptions.from_dict(options)
    model, stem = loads(model_text), opts.stem
    if opts.language == "numpy":
        files = {f"{stem}.py": numpy_source(model)}
    elif opts.language == "fmu":
        files = {f"{stem}.fmu": fmu_archive(model)[0]}
    else:
        files = c_sources(model, stem)
    provenance = Provenance(text_hash(model_text), "CasADi code generation", "float64", opts.to_dict(), 0.0)
    provenance.seconds = time.perf_counter() - start
    return JobResult("c_code", "C code", provenance, CodeResult(files))


# ---------------------------------------------------------------------------------------- URDF import
def urdf_import(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """A mechanism from the URDF or MJCF file of UrdfImportOptions as model text and the import's notes. The
    window's document (model_text) is not involved."""
    from ..io.imports import file_format, import_mechanism
    from ..model import dumps

    start = time.perf_counter()
    opts = UrdfImportOptions.from_dict(options)
    progress(0.1, f"reading {opts.path}")
    floating, ground = not opts.fixed_base, not opts.no_ground
    result = import_mechanism(opts.path, opts.package_paths, floating, opts.repair_inertias, ground=ground)
    text = dumps(result.model)
    reader = {"URDF": "yourdfpy", "MJCF": "MuJoCo's compiler"}[kind := file_format(opts.path)]
    provenance = Provenance(text_hash(text), f"{kind} import ({reader})", "float64", opts.to_dict(), 0.0)
    provenance.seconds = time.perf_counter() - start
    return JobResult("urdf_import", "URDF import", provenance, ImportResult(text, list(result.notes)))


# ---------------------------------------------------------------------------------------- linear models
def equilibrium(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """The static equilibrium near the document's pose (EquilibriumOptions), with its modes: stable or not,
    neutral directions."""
    from ..io.state_space import summary
    from ..linear.equilibrium import equilibrium as find
    from ..linear.linear_model import linearize

    start = time.perf_counter()
    opts = EquilibriumOptions.from_dict(options)
    model = loads(model_text)
    progress(0.1, "compiling the equations" if not opts.hold else "holding " + ", ".join(opts.hold))
    point = find(model, hold=dict(opts.hold))
    progress(0.8, "its modes")
    data = EquilibriumResult(point.to_dict(), point.values(), summary(model.name, linearize(model, point)))
    provenance = Provenance(text_hash(model_text), "Newton, exact derivatives", "float64", opts.to_dict(), 0.0)
    provenance.seconds = time.perf_counter() - start
    return JobResult("equilibrium", "Equilibrium", provenance, data)


def linearization(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """The linear model about an operating point (LinearizationOptions), its modes with the poses that animate
    them, and its frequency responses for every input/output pair (Bode form). With a `schedule` (a coordinate or
    parameter), a family of them (LPV), each about its own equilibrium or the pose, every member sent as it is
    done so that Cancel keeps them."""
    from ..linear.linear_model import linearize

    start = time.perf_counter()
    opts = LinearizationOptions.from_dict(options)
    model = loads(model_text)
    if opts.schedule:
        return _linear_family(model, opts, progress, text_hash(model_text), start)
    progress(0.1, "compiling the equations and finding the operating point")
    point = linear_point(model, opts)
    progress(0.5, "linearising")
    lin = linearize(model, point, opts.inputs or None, opts.outputs or None)
    progress(0.7, "modes, mode shapes and frequency responses")
    data = linear_data(model, lin)
    provenance = Provenance(text_hash(model_text), lin.provenance["method"], "float64", opts.to_dict(), 0.0)
    provenance.seconds = time.perf_counter() - start
    return JobResult("linearization", f"Linear model about the {point.kind} point", provenance, data)


def linear_point(model, opts: LinearizationOptions):
    """The operating point the options choose (`at`): an equilibrium, the nearest stable one or the pose, or
    a state."""
    from ..linear.equilibria import equilibrium_or_pose
    from ..linear.equilibrium import equilibrium as find
    from ..linear.equilibrium import operating_point

    if opts.at == "equilibrium":
        return find(model, hold=dict(opts.hold))
    if opts.at == "auto":
        return equilibrium_or_pose(model, dict(opts.hold))
    return operating_point(model, "initial", dict(opts.values), dict(opts.velocities))


def linear_data(model, lin) -> LinearModelResult:
    """One linear model as the Modes and Frequency-response panels show it: its document (io/state_space.py),
    modes with the closed poses that animate them, and the Bode form of every input/output pair."""
    from ..io.state_space import model_document, summary
    from ..linear.frequency_response import bode, frequency_grid, frequency_response
    from ..linear.modes import mode_poses, modes

    found = modes(lin)
    w = frequency_grid(lin.eigenvalues)
    magnitude, phase = bode(frequency_response(lin.A, lin.B, lin.C, lin.D, w))
    return LinearModelResult(
        model=model_document(lin),
        summary=summary(model.name, lin),
        note=lin.point.note,
        modes=[m.to_dict() for m in found],
        coordinates=list(lin.point.coordinates),
        poses=np.array([mode_poses(model, lin, m) for m in found]),
        frequency_hz=w / (2 * np.pi),
        magnitude_db=magnitude,
        phase_deg=phase,
    )


def _linear_family(
    model, opts: LinearizationOptions, progress: PartProgress, model_hash: str, start: float
) -> JobResult:
    """Each member's linear_data with its place in the schedule, sent as a part of the result when done."""
    from ..linear.lpv import linear_family, schedule_of

    schedule = opts.schedule
    name, count = schedule["name"], int(schedule["count"])
    values = np.linspace(float(schedule["from"]), float(schedule["to"]), count)
    kind, unit, document_value = schedule_of(model, name)
    header = {"name": name, "kind": kind, "unit": unit, "document_value": document_value}
    parts: list[LinearModelResult] = []

    def send(varied, lin) -> None:
        value = values[len(parts)]
        parts.append(replace(linear_data(varied, lin), schedule={**header, "value": float(value)}))
        progress(len(parts) / count, f"{name} = {value:g} {unit}: {len(parts)} of {count} models", parts[-1])

    progress(0.0, f"compiling the equations for {count} models over {name}")
    signals = opts.inputs or None, opts.outputs or None
    linear_family(model, name, values, opts.at, dict(opts.hold), *signals, each=send)
    return linear_family_result(parts, opts.to_dict(), model_hash, time.perf_counter() - start)


def linear_family_result(parts: list[LinearModelResult], options: dict, model_hash: str, seconds: float) -> JobResult:
    """The family from the members done (all of them, or those of a job that stopped early), with its modes
    followed across the members for the plot against the scheduling parameter."""
    opts = LinearizationOptions.from_dict(options)
    header, count = parts[0].schedule, int(opts.schedule["count"])
    values = np.array([p.schedule["value"] for p in parts])
    family = {
        **{k: header[k] for k in ("name", "kind", "unit")},
        "values": values,
        "count": count,
        "start": int(np.abs(values - header["document_value"]).argmin()),  # the member nearest the document
        "stopped": len(parts) < count,  # cancelled, or failed at the next member
    }
    data = LinearFamilyResult(family, parts, _branches([p.modes for p in parts]))
    method = parts[0].model["provenance"]["method"]
    provenance = Provenance(model_hash, method, "float64", opts.to_dict(), seconds)
    done = f"{len(parts)} of {count}" if family["stopped"] else str(count)
    return JobResult("linearization", f"{done} linear models over {header['name']}", provenance, data)


BRANCH_KEYS = ("frequency_hz", "damping")


def _branches(modes: list[list[dict]]) -> dict:
    """Each mode followed across the members (dynamics/lpv.mode_branches): its label, by the coordinate that
    moves most where it starts, and its natural frequency and damping ratio at every member (NaN where none)."""
    from ..linear.lpv import mode_branches

    eigenvalues = [np.array([complex(m["eigenvalue_real"], m["eigenvalue_imag"]) for m in ms]) for ms in modes]
    order = mode_branches(eigenvalues)
    found = [[ms[k] if k >= 0 else None for k in row] for ms, row in zip(modes, order, strict=True)]
    starts = [next(row[b] for row in found if row[b] is not None) for b in range(order.shape[1])]
    curves = {key: np.array([[m[key] if m else np.nan for m in row] for row in found]) for key in BRANCH_KEYS}
    return {"labels": [f"mode {b + 1} ({mode['dominant']})" for b, mode in enumerate(starts)], **curves}


# ---------------------------------------------------------------------------------------- suspension report
def suspension_report(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """A suspension corner's kinematic curves against wheel travel, and against the steering input where there
    is one (SuspensionReportOptions)."""
    from ..simulation.suspension import suspension_curves

    start = time.perf_counter()
    opts = SuspensionReportOptions.from_dict(options)
    progress(0.1, "solving the poses over the wheel travel")
    curves = suspension_curves(loads(model_text), opts.measure, float(opts.travel), opts.points)
    provenance = Provenance(text_hash(model_text), "parallel wheel travel", "float64", opts.to_dict(), 0.0)
    provenance.seconds = time.perf_counter() - start
    return JobResult(
        "suspension_report", f"Suspension report of '{curves.measure}'", provenance, SuspensionResult(curves)
    )


# ---------------------------------------------------------------------------------------- vehicle handling
def manoeuvre(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """A handling manoeuvre (simulation/manoeuvres.py; options: those of ManoeuvreOptions, speeds a list): the
    time histories of its last run, the manoeuvre's own series where they are time histories (step steer, sine
    with dwell), its figures in the title and the notes, and its table."""
    from ..simulation.manoeuvres import manoeuvre as run

    opts = options_of("manoeuvre", {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()})
    result = run(loads(model_text), opts, lambda f: progress(f, "running"), cancel)
    last = result.runs[-1]
    series = motion_series(last)
    if len(result.columns[0][2]) == len(last.t):  # a time history: the manoeuvre's own series first
        series = {f"{name} [{unit}]": values for name, unit, values in result.columns[1:]} | series
    figures = [f"{name} {value:.4g} {unit}" for name, (value, unit) in result.figures.items()]
    table = [(name, unit, np.asarray(values)) for name, unit, values in result.columns]
    data = ManoeuvreResult(
        last.t, list(last.coordinates), last.q, series, figures, table=table, figures=dict(result.figures)
    )
    p = result.provenance
    title = f"Manoeuvre {result.options.kind}: " + ", ".join(figures[:2])
    provenance = Provenance(text_hash(model_text), p["analysis"], "float64", dict(options), p["seconds"])
    return JobResult("manoeuvre", title, provenance, data)


def kc_rig(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """A suspension corner's kinematics and compliance on a K&C rig (simulation/kc_rig.py KCOptions)."""
    from ..simulation.kc_axle_roll import axle_roll_test
    from ..simulation.kc_rig import kc_analysis

    opts = options_of("kc_rig", options)
    if opts.test == "axle_roll":  # the corner's axle rolled (kc_axle_roll.py)
        test = axle_roll_test(loads(model_text), opts, progress, cancel)
        provenance = Provenance(text_hash(model_text), test.provenance["method"], "float64",
                                test.kc.options.to_dict() | {"track": test.track},
                                test.provenance["seconds"])  # fmt: skip
        return JobResult("kc_rig", f"Axle roll of '{test.measure}'", provenance, KCRigResult(test))
    kc = kc_analysis(loads(model_text), opts, progress, cancel)
    provenance = Provenance(text_hash(model_text), kc.provenance["method"], "float64", kc.options.to_dict(),
                            kc.provenance["seconds"])  # fmt: skip
    return JobResult("kc_rig", f"K&C of '{kc.measure}'", provenance, KCRigResult(kc))


# ---------------------------------------------------------------------------------------- parallel machines
def workspace(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """A parallel machine's workspace map (Müller 2021): cond(M_t), the dynamic manipulability and cond(J_IK) over
    a plane of platform positions (WorkspaceOptions). A cancelled map keeps the points done. Without ranges the
    grid holds the whole reachable set, with a margin of unreachable points (workspace.sized_grid)."""
    from ..dynamics.pkm import ParallelMachine
    from ..dynamics.pkm.workspace import QUANTITIES, sized_grid, workspace_map

    start = time.perf_counter()
    opts = WorkspaceOptions.from_dict(options)
    pkm = ParallelMachine(loads(model_text))
    points, ranges = opts.points, dict(opts.ranges or {})
    plane = list(opts.plane or []) or pkm.task_names[:2]
    if set(plane) <= set(ranges):
        grid = {name: (float(ranges[name][0]), float(ranges[name][1]), points) for name in plane}
    else:
        progress(0.0, "sizing the grid to the platform positions within the limbs' reach")
        grid = sized_grid(pkm, points, plane, opts.at or None)
        grid |= {name: (float(low), float(high), points) for name, (low, high) in ranges.items()}
    found = workspace_map(pkm, grid, opts.at or None, progress, cancel)
    data = WorkspaceResult(
        axes=list(found.axes),
        first=found.first,
        second=found.second,
        fixed=found.fixed,
        values=found.values,
        computed=found.computed,
        labels={k: v[0] for k, v in QUANTITIES.items()},
        units={k: v[1] for k, v in QUANTITIES.items()},
        platform=pkm.platform,
        sized=not set(plane) <= set(ranges),
        cancelled=stop_requested(cancel)(),
    )
    return JobResult(
        "workspace",
        f"Workspace map over {found.axes[0]}, {found.axes[1]}",
        Provenance(
            text_hash(model_text),
            "pkm workspace map (Müller 2021)",
            "float64",
            opts.to_dict(),
            time.perf_counter() - start,
        ),
        data,
    )


def task_space_eom(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """A parallel machine's task-space equations at the document's pose, at rest, for the Equations of motion
    table (Müller 2021, eq. 107-120): M_t, W_t^grav, J_IK and the actuator-space M_a, as numbers, each entry named
    by task coordinates or actuated coordinates."""
    from ..dynamics.pkm import ParallelMachine

    start = time.perf_counter()
    opts = TaskSpaceEomOptions.from_dict(options)
    pkm = ParallelMachine(loads(model_text))
    rest = np.zeros((1, len(pkm.axes)))
    eq = pkm.equations(pkm.start, rest)
    M_a = pkm.actuator_equations(pkm.start, rest)[0][0] if len(pkm.actuated) == len(pkm.axes) else None
    task, act = pkm.task_names, pkm.actuated
    groups = [
        ("task_mass", eq.mass[0], task, task, True),
        ("task_gravity", eq.bias[0][:, None], task, [""], False),
        ("ik_jacobian", eq.ik_jacobian[0], act, task, False),
    ] + ([("actuator_mass", M_a, act, act, True)] if M_a is not None else [])
    entries = [
        _number_entry(group, value[i, j], rows[i], columns[j])
        for group, value, rows, columns, symmetric in groups
        for i in range(len(rows))
        for j in range(i if symmetric else 0, len(columns))
        if abs(value[i, j]) > 1e-12 * np.abs(value).max()  # rounding of an exact zero (symmetry) left out
    ]
    data = EquationsResult(
        coordinates=task,
        entries=entries,
        constraint_labels=[],
        independent_rows=[],
        notes=[
            f"Task space of platform '{pkm.platform}' ({', '.join(task)}) at the document's pose, at rest, by the "
            f"modular method (Müller 2021): numbers, not expressions; actuated {', '.join(act)}."
        ],
    )
    return JobResult(
        "task_space_eom",
        "Task-space equations of motion",
        Provenance(
            text_hash(model_text),
            "pkm task-space EOM (Müller 2021)",
            "float64",
            opts.to_dict(),
            time.perf_counter() - start,
        ),
        data,
    )


def _number_entry(group: str, value: float, row: str, column: str) -> dict:
    """One matrix entry as the Equations of motion table shows it."""
    name = f"{row},{column}" if column else row
    text = f"{value:.10g}"
    return {
        "group": group,
        "entry": f"[{name}]",
        "entry_latex": f"[{name}]",
        "text": text,
        "latex": text,
        "pretty": text,
        "ops": 0,
        "constraint": "",
        "row": 0,
    }


# ---------------------------------------------------------------------------------------- identification
def identification(model_text: str, options: dict, progress: PartProgress, cancel: Cancel) -> JobResult:
    """Base parameters and friction from a measured log (IdentificationOptions): its JSON document, and the
    signals the Identification panel plots (raw and filtered positions and forces, measured and predicted forces
    on the validation log)."""
    from ..identification.identify import identify

    start = time.perf_counter()
    opts = IdentificationOptions.from_dict(options)
    result = identify(
        loads(model_text),
        opts.data,
        opts.validate,
        opts.friction,
        opts.digits,
        opts.cutoff_hz,
        opts.physical,
        opts.hold_unexcited,
        progress=progress,
        cancel=cancel,
    )
    obs, check = result.observations, result.validation
    signals = LogSignals(
        coordinates=obs.log.coordinates,
        actuated=obs.log.actuated,
        units=_log_units(model_text, obs.log.coordinates, obs.log.actuated),
        t=obs.log.t,
        positions=obs.log.positions,
        filtered=obs.filtered,
        forces=obs.log.forces,
        t_kept=obs.t,
        forces_filtered=obs.forces,
        predicted=_predicted(result),
    )
    validation = (
        None if check is None else ValidationSignals(check.t, check.measured, check.predicted, Path(check.source).name)
    )
    data = IdentificationResult(result.to_json(), signals, validation)
    return JobResult(
        "identification",
        f"Identification from {Path(opts.data).name}",
        Provenance(
            text_hash(model_text), result.estimate.method, "float64", opts.to_dict(), time.perf_counter() - start
        ),
        data,
    )


def _log_units(model_text: str, coordinates: list[str], actuated: list[str]) -> dict[str, str]:
    """The SI unit of every plotted signal: each coordinate's position and each actuator's force."""
    from ..kinematics import Mechanism

    mech = Mechanism(loads(model_text))
    revolute = {name: kind == "R" for name, kind in mech.kinds.items()}
    units = {name: "rad" if revolute[name] else "m" for name in coordinates}
    return units | {f"tau_{name}": "N·m" if revolute[name] else "N" for name in actuated}


def _predicted(result) -> np.ndarray:
    from ..identification.identify import predicted_forces

    return predicted_forces(result, result.observations)


TASKS: dict[str, Callable[[str, dict, PartProgress, Cancel], JobResult]] = {
    "kinematics": kinematics,
    "simulation": simulation,
    "symbolic_eom": symbolic_eom,
    "base_parameters": base_parameters,
    "c_code": c_code,
    "engine": engine_build,
    "urdf_import": urdf_import,
    "equilibrium": equilibrium,
    "linearization": linearization,
    "workspace": workspace,
    "suspension_report": suspension_report,
    "kc_rig": kc_rig,
    "task_space_eom": task_space_eom,
    "identification": identification,
    "manoeuvre": manoeuvre,
}
# the result of a job that stopped early (cancelled, or failed), from the parts it sent (progress(…, part))
PARTIAL_RESULTS: dict[str, Callable[[list, dict, str, float], JobResult]] = {
    "linearization": linear_family_result,
    "simulation": _last_part,
}
