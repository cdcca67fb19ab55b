"""A parameter study's rows as a file: Parquet (one typed column per key, the provenance in the schema's
metadata; pandas, polars and Arrow read it) or CSV through the project's one CSV writer (the provenance beside
it)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from ..jobs.study import columns
from ..model import ModelError
from .csv_text import CsvTable, csv_table
from .display_units import SI, DisplayUnits

FORMATS = ("parquet", "csv")


def study_bytes(rows: list[dict], provenance: dict, fmt: str, units: DisplayUnits = SI) -> bytes | CsvTable:
    """The file's contents; a failed point's missing results are empty cells (null in Parquet). The columns
    named with a unit ('peak actuator:theta1 [N m]') in display units."""
    rows = [dict(_shown(k, v, units) for k, v in r.items()) for r in rows]
    provenance = {**provenance, "units": units.spec()}
    names = columns(rows)
    if fmt == "csv":
        cells = ([_cell(r.get(n)) for n in names] for r in rows)
        return csv_table(provenance, names, cells)
    if fmt != "parquet":
        raise ModelError("format", "is not a study file format", fmt, " or ".join(FORMATS))
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist([{n: r.get(n) for n in names} for r in rows])
    table = table.replace_schema_metadata({"provenance": json.dumps(provenance, default=str)})
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def study_format(path: str | Path) -> str:
    """'parquet' or 'csv' from the file's extension, or a ModelError naming it."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ModelError("--out", "must end in .parquet or .csv", str(path), "study.parquet or study.csv")
    return fmt


def _shown(key: str, value, units: DisplayUnits) -> tuple[str, object]:
    shown, size = units.header(key)
    return shown, value / size if isinstance(value, float) and size != 1.0 else value


def _cell(value) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)
