"""Time histories of a job result (kinematics along a trajectory, simulation) as CSV or JSON text, with the
result's provenance; the window's File › Export and `mbstudio kinematics --out` write the same files."""

from __future__ import annotations

import numpy as np

from ..jobs import JobResult
from ..model import ModelError
from .csv_text import csv_text
from .json_text import json_text

FORMATS = ("csv", "json")


def time_series_text(result: JobResult, fmt: str) -> str:
    """CSV: a '# provenance' line, then 't [s]' and one column per series, full float64 digits. JSON: the
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
