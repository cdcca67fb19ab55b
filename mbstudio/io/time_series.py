"""Time histories of a job result (kinematics along a trajectory, simulation) as CSV or JSON text, with the
result's provenance; the window's File › Export and `mbstudio kinematics --out` write the same files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from ..jobs import JobResult
from ..model import ModelError, write_atomic
from ..simulation.run import SimulationResult
from .csv_text import csv_text
from .json_text import json_text

FORMATS = ("csv", "json")


def time_series_text(result: JobResult, fmt: str) -> str:
    """CSV: a header of 't [s]' and one column per series, the '# provenance' line, full float64 digits. JSON: the
    provenance, the times and the series by name."""
    t = np.asarray(result.data["t"], float)
    series = {name: np.asarray(values, float) for name, values in result.data["series"].items()}
    provenance = result.provenance.to_json()
    if fmt == "json":
        return json_text(
            {"provenance": provenance, "task": result.task, "title": result.title, "t": t, "series": series}
        )
    if fmt != "csv":
        raise ModelError("format", "is not an export format of time histories", fmt, "csv or json")
    rows = ([repr(float(x)) for x in row] for row in np.column_stack([t, *series.values()]))
    return csv_text(provenance, ["t [s]", *series], rows)


SIMULATION_FORMATS = ("csv", "npz")


def simulation_file(result: SimulationResult, fmt: str) -> bytes:
    """A simulation's every series: CSV ('name [unit]' header, the provenance comment, full float64 digits) or
    NPZ (arrays `data` (K, C), `names`, `units`, and `provenance` as JSON text)."""
    columns = result.columns()
    data = np.column_stack([values for _, _, values in columns])
    provenance = result.provenance.as_dict()
    if fmt == "npz":
        contacts = [c.as_dict() for c in result.contacts]
        return _npz(data, columns, provenance=provenance, contacts=contacts, notes=result.notes)
    if fmt != "csv":
        raise ModelError("format", "is not a format of simulation results", fmt, " or ".join(SIMULATION_FORMATS))
    rows = ([repr(float(x)) for x in row] for row in data)
    return csv_text(provenance, [f"{name} [{unit}]" for name, unit, _ in columns], rows).encode("utf-8")


def contacts_file(result: SimulationResult) -> bytes:
    """The stops' impacts and contacts as CSV (simulation/stops.py: one row each), with the run's provenance."""
    rows = ([repr(v) if isinstance(v, float) else ("" if v is None else str(v)) for v in c.as_dict().values()]
            for c in result.contacts)  # fmt: skip
    header = [f"{name} [{unit}]" if unit else name for name, unit in CONTACT_FIELDS]
    return csv_text(result.provenance.as_dict(), header, rows).encode("utf-8")


# The contact table's columns: the fields of simulation.stops.Contact, with their units.
CONTACT_FIELDS = (
    ("time", "s"),
    ("joint", ""),
    ("coordinate", ""),
    ("limit", ""),
    ("kind", ""),
    ("unit", ""),
    ("impulse", "unit s"),
    ("force", "unit"),
    ("end", "s"),
    ("energy", "J"),
)


def save_simulation(result: SimulationResult, path: str | Path) -> None:
    """Write a simulation atomically, as CSV or NPZ by the file's extension."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in SIMULATION_FORMATS:
        raise ModelError(str(path), "must end in .csv or .npz", expected="results.csv or results.npz")
    write_atomic(path, simulation_file(result, fmt))


def ensemble_file(results: list[SimulationResult], runs: list[dict[str, float]], fmt: str) -> bytes:
    """An ensemble's runs in one file: CSV with a leading `run` column (the runs one after the other), or NPZ
    (`data` (M, K, C), `names`, `units`, `runs` as JSON text: each run's inputs and provenance)."""
    columns = results[0].columns()
    data = np.stack([np.column_stack([values for _, _, values in r.columns()]) for r in results])
    described = [
        {"inputs": inputs, "provenance": r.provenance.as_dict()} for inputs, r in zip(runs, results, strict=True)
    ]
    if fmt == "npz":
        return _npz(data, columns, runs=described)
    if fmt != "csv":
        raise ModelError("format", "is not a format of simulation results", fmt, " or ".join(SIMULATION_FORMATS))
    rows = ([str(run), *(repr(float(x)) for x in row)] for run, block in enumerate(data) for row in block)
    header = ["run", *(f"{name} [{unit}]" for name, unit, _ in columns)]
    return csv_text({"runs": described}, header, rows).encode("utf-8")


def _npz(data: np.ndarray, columns: list, **described) -> bytes:
    """`data`, the columns' `names` and `units`, and each of `described` as JSON text."""
    out = io.BytesIO()
    names, units = (np.array([c[k] for c in columns]) for k in (0, 1))
    np.savez(out, data=data, names=names, units=units, **{k: np.array(json.dumps(v)) for k, v in described.items()})
    return out.getvalue()
