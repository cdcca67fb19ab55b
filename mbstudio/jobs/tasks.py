"""Each analysis as a plain top-level function `task(model_text, options, progress, cancel) -> JobResult`.

The model arrives as its .mbs text (a snapshot: later edits in the window do not reach a running job), and
the result leaves as plain data (numbers, strings, numpy arrays) with its provenance, so that it crosses a
process boundary and the window only has to draw it. No Qt here.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import mpmath
import numpy as np
import sympy

from .. import __version__
from ..model import loads

Progress = Callable[[float, str], None]
Cancel = Callable[[], bool]


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
    data: dict = field(default_factory=dict)


def text_hash(model_text: str) -> str:
    return hashlib.sha256(model_text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------- kinematics
def kinematics(model_text: str, options: dict, progress: Progress, cancel: Cancel) -> JobResult:
    """Coordinates, velocities and accelerations along the model's first trajectory (else the default
    exciting path), `samples` equally spaced times (default the trajectory's own)."""
    from ..identification.observation import sample_states
    from ..identification.pipeline import default_trajectory, fourier_path, sample_times
    from ..kinematics import Mechanism

    start = time.perf_counter()
    model = loads(model_text)
    mech = Mechanism(model)
    trajectory = model.trajectories[0] if model.trajectories else default_trajectory(mech)
    count = int(options.get("samples") or trajectory.samples)
    times = np.asarray(sample_times(mech, trajectory.duration, count), float)
    path = fourier_path(mech, trajectory)
    progress(0.1, f"assembling {count} samples along '{trajectory.name}'")
    q, qd, qdd = (np.asarray(a, float) for a in sample_states(mech, times, path))
    data = {"t": times, "coordinates": list(mech.coordinates), "q": q,
            "series": _state_series(mech.coordinates, q, qd, qdd), "trajectory": trajectory.name}
    return JobResult("kinematics", f"Kinematics along '{trajectory.name}'",
                     Provenance(text_hash(model_text), "kinematics", "float64", dict(options),
                                time.perf_counter() - start), data)


def _state_series(names: list[str], q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> dict[str, np.ndarray]:
    series = {}
    for suffix, values in (("", q), ("_dot", qd), ("_ddot", qdd)):
        series |= {f"{name}{suffix}": values[:, k] for k, name in enumerate(names)}
    return series


# ---------------------------------------------------------------------------------------- simulation
def simulation(model_text: str, options: dict, progress: Progress, cancel: Cancel) -> JobResult:
    """The document's motion from rest over [0, t_end] (options: t_end, method, rtol, atol, samples)."""
    from ..dynamics.simulation import simulate

    model = loads(model_text)
    opts = {"t_end": 1.0, "method": "DOP853", "rtol": 1e-8, "atol": 1e-10, "samples": 201} | dict(options)
    result = simulate(model, opts["t_end"], opts["method"], opts["rtol"], opts["atol"], samples=opts["samples"],
                      progress=lambda f: progress(f, f"t = {f * opts['t_end']:.3g} s"), cancel=cancel)
    p = result.provenance
    series = {f"{name} [{unit}]": values for name, unit, values in result.columns()[1:]
              if not name.startswith("body")}
    data = {"t": result.t, "coordinates": list(result.coordinates), "q": result.q, "series": series}
    return JobResult("simulation", f"Simulation over {opts['t_end']:g} s",
                     Provenance(text_hash(model_text), p.method, p.precision, opts, p.seconds), data)


# ---------------------------------------------------------------------------------------- symbolic EOM
def symbolic_eom(model_text: str, options: dict, progress: Progress, cancel: Cancel) -> JobResult:
    """M, c, g (and the constraints of a closed loop) as sympy text, entry by entry."""
    from ..symbolic.eom import equations_of_motion

    start = time.perf_counter()
    eom = equations_of_motion(loads(model_text), progress=progress, cancel=cancel, **options)
    groups = {name: [[str(x) for x in matrix.row(i)] for i in range(matrix.rows)]
              for name, matrix in eom.groups().items()}
    data = {"coordinates": [str(c) for c in eom.coordinates], "groups": groups, "notes": list(eom.notes)}
    return JobResult("symbolic_eom", "Symbolic equations of motion",
                     Provenance(text_hash(model_text), "symbolic", "exact", dict(options),
                                time.perf_counter() - start), data)


# ---------------------------------------------------------------------------------------- base parameters
def base_parameters(model_text: str, options: dict, progress: Progress, cancel: Cancel) -> JobResult:
    """The three routes (options: method, digits, samples) with the spectra for the ridge panel and one
    row per base parameter for the table, besides the pipeline's own JSON."""
    from ..identification.pipeline import base_parameters as run_pipeline

    start = time.perf_counter()
    opts = {"method": "all", "digits": [30, 50], "samples": None} | dict(options)
    run = run_pipeline(loads(model_text), method=opts["method"], digits=opts["digits"], samples=opts["samples"],
                       progress=progress, cancel=cancel)
    data = {"json": run.to_json(), "spectra": spectra(run), "table": base_table(run),
            "parameter_names": run.parameter_names}
    precision = ", ".join(f"{d} digits" for d in run.digits) if run.vp is not None else "float64"
    return JobResult("base_parameters", f"Base parameters ({opts['method']})",
                     Provenance(text_hash(model_text), opts["method"], precision, opts,
                                time.perf_counter() - start), data)


def spectra(run) -> list[dict]:
    """Per numeric route and precision: log10 σ_i (computed in mpmath, so VP values far below float64's
    range still plot), the log10 tolerance, the rank and the ridge depth."""
    results = ([run.dp] if run.dp is not None else []) + (list(run.vp.results) if run.vp is not None else [])
    out = []
    for r in results:
        label = "DP (float64)" if r.method == "dp" else f"VP {r.digits} digits"
        out.append({"label": label, "method": r.method, "digits": r.digits,
                    "log10_sigma": [_log10(s) for s in r.singular_values], "singular_values": list(r.singular_values),
                    "log10_tolerance": _log10(r.tolerance), "rank": r.rank,
                    "log10_depth": r.ridge.log10_depth, "evident": r.ridge.evident})
    return out


def _log10(text: str) -> float:
    with mpmath.workdps(max(30, len(text))):
        x = abs(mpmath.mpf(text))
        return -math.inf if x == 0 else float(mpmath.log10(x))


def base_table(run) -> list[dict]:
    """One row per base parameter, keyed by the parameter it keeps (φ_b = φ_kept + β φ_eliminated): the
    routes are aligned by that name. Per route: short text, full-digit text and LaTeX."""
    routes = {"dp": run.dp, "vp": run.vp.final if run.vp is not None else None, "symbolic": None}
    cells: dict[str, dict[str, dict]] = {}
    symbols = {n: sympy.Symbol(n) for n in run.parameter_names}  # names such as "gamma" stay plain symbols
    for key, result in routes.items():
        if result is not None:
            for kept, entry in zip(_kept(result.parameter_names, result.eliminated), result.base_parameters,
                                   strict=True):
                cells.setdefault(kept, {})[key] = _numeric_cell(entry, symbols)
    if run.symbolic is not None:
        for kept, expr in run.symbolic.base.items():
            cells.setdefault(kept, {})["symbolic"] = {"text": str(expr), "full": sympy.pretty(expr, use_unicode=True),
                                                      "latex": sympy.latex(expr)}
    order = {n: i for i, n in enumerate(run.parameter_names)}
    return [{"kept": kept, **cells[kept]} for kept in sorted(cells, key=order.__getitem__)]


def _kept(names: list[str], eliminated: list[str]) -> list[str]:
    gone = set(eliminated)
    return [n for n in names if n not in gone]


def _numeric_cell(entry: dict, symbols: dict) -> dict:
    """The shown terms (those above β's rounding noise) again with every digit the route computed."""
    expr = sympy.sympify(entry["expression"], locals=symbols)
    shown = {str(x) for x in expr.free_symbols}
    full = " + ".join(n if c == "1" else f"{c}·{n}" for n, c in entry["terms"].items() if n in shown)
    return {"text": entry["expression"], "full": full, "latex": sympy.latex(expr)}


TASKS: dict[str, Callable[[str, dict, Progress, Cancel], JobResult]] = {
    "kinematics": kinematics, "simulation": simulation, "symbolic_eom": symbolic_eom,
    "base_parameters": base_parameters}
