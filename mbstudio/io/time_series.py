"""Time histories of a job result (kinematics along a trajectory, simulation) as CSV or JSON text, with the
result's provenance; the window's File › Export and `mbstudio kinematics --out` write the same files. Each takes
the display units to write in (io/display_units.py; SI by default), and every header names its unit."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Protocol

import numpy as np

from ..model import ModelError
from ..simulation.run import SimulationResult
from .csv_text import CsvTable, csv_table, float_table, numeric_table, write_output
from .display_units import SI, DisplayUnits
from .json_text import json_text

FORMATS = ("csv", "json")


class SeriesData(Protocol):
    """The times `t` and the `series` by name of a motion (jobs.results.MotionResult)."""

    t: np.ndarray
    series: dict[str, np.ndarray]


class SeriesResult(Protocol):
    """What time histories are written from: a job's result (jobs.JobResult; jobs is a layer above io) holding a
    motion."""

    task: str
    title: str
    provenance: JsonProvenance
    data: SeriesData


class JsonProvenance(Protocol):
    def to_json(self) -> dict: ...


def time_series_text(result: SeriesResult, fmt: str, units: DisplayUnits = SI) -> str | CsvTable:
    """CSV: a header of 't [s]' and one column per series, full float64 digits, the provenance beside it. JSON:
    the provenance, the times and the series by name ('name [unit]')."""
    t = np.asarray(result.data.t, float)
    series = result.data.series
    if fmt == "json":
        provenance = {**result.provenance.to_json(), "units": units.spec()}
        shown = dict(units.column(name, values) for name, values in series.items())
        return json_text(
            {"provenance": provenance, "task": result.task, "title": result.title, "t": t, "series": shown}
        )
    if fmt != "csv":
        raise ModelError("format", "is not an export format of time histories", fmt, "csv or json")
    data = np.column_stack([t, *(np.asarray(v, float) for v in series.values())])
    return numeric_table(result.provenance.to_json(), ["t [s]", *series], data, units)


SIMULATION_FORMATS = ("csv", "npz")


def simulation_file(result: SimulationResult, fmt: str, units: DisplayUnits = SI) -> bytes | CsvTable:
    """A simulation's every series: CSV ('name [unit]' header, full float64 digits, the provenance beside it) or
    NPZ (arrays `data` (K, C), `names`, `units`, and `provenance` as JSON text)."""
    columns = shown_columns(result, units)
    data = np.column_stack([values for _, _, values in columns])
    provenance = {**result.provenance.as_dict(), "units": units.spec()}
    if fmt == "npz":
        contacts = [c.as_dict() for c in result.contacts]
        return _npz(data, columns, provenance=provenance, contacts=contacts, notes=result.notes)
    if fmt != "csv":
        raise ModelError("format", "is not a format of simulation results", fmt, " or ".join(SIMULATION_FORMATS))
    return float_table(provenance, [f"{name} [{unit}]" for name, unit, _ in columns], data)


def contacts_file(result: SimulationResult) -> CsvTable:
    """The stops' impacts and contacts as CSV (simulation/stops.py: one row each), the run's provenance beside."""
    rows = ([repr(v) if isinstance(v, float) else ("" if v is None else str(v)) for v in c.as_dict().values()]
            for c in result.contacts)  # fmt: skip
    header = [f"{name} [{unit}]" if unit else name for name, unit in CONTACT_FIELDS]
    return csv_table(result.provenance.as_dict(), header, rows)


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


def save_simulation(result: SimulationResult, path: str | Path, units: DisplayUnits = SI) -> None:
    """Write a simulation atomically, as CSV (with its provenance beside it) or NPZ by the file's extension."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in SIMULATION_FORMATS:
        raise ModelError(str(path), "must end in .csv or .npz", expected="results.csv or results.npz")
    write_output(path, simulation_file(result, fmt, units))


def shown_columns(result, units: DisplayUnits) -> list[tuple[str, str, np.ndarray]]:
    """A result's columns (name, SI unit, values) in display units."""
    out = []
    for name, unit, values in result.columns():
        shown, size = units.unit(unit, name)
        out.append((name, shown, np.asarray(values, float) / size if size != 1.0 else np.asarray(values, float)))
    return out


def ensemble_file(
    results: list[SimulationResult], runs: list[dict[str, float]], fmt: str, units: DisplayUnits = SI
) -> bytes | CsvTable:
    """An ensemble's runs in one file: CSV with a leading `run` column (the runs one after the other; each run's
    inputs and provenance beside it), or NPZ (`data` (M, K, C), `names`, `units`, `runs` as JSON text)."""
    columns = shown_columns(results[0], units)
    data = np.stack([np.column_stack([values for _, _, values in shown_columns(r, units)]) for r in results])
    described = [
        {"inputs": inputs, "provenance": r.provenance.as_dict()} for inputs, r in zip(runs, results, strict=True)
    ]
    if fmt == "npz":
        return _npz(data, columns, runs=described)
    if fmt != "csv":
        raise ModelError("format", "is not a format of simulation results", fmt, " or ".join(SIMULATION_FORMATS))
    rows = ([str(run), *(repr(float(x)) for x in row)] for run, block in enumerate(data) for row in block)
    header = ["run", *(f"{name} [{unit}]" for name, unit, _ in columns)]
    return csv_table({"runs": described, "units": units.spec()}, header, rows)


def _npz(data: np.ndarray, columns: list, **described) -> bytes:
    """`data`, the columns' `names` and `units`, and each of `described` as JSON text."""
    out = io.BytesIO()
    names, units = (np.array([c[k] for c in columns]) for k in (0, 1))
    np.savez(out, data=data, names=names, units=units, **{k: np.array(json.dumps(v)) for k, v in described.items()})
    return out.getvalue()
