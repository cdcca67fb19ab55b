"""A parameter study's rows as a file: Parquet (one typed column per key, the provenance in the schema's
metadata; pandas, polars and Arrow read it) or CSV through the project's one CSV writer (the provenance beside
it). Every column with a unit names it: the varied parameters their dimension's ('D12 [m]'), the coordinates
of an equilibrium theirs ('at theta1 [rad]'), the results theirs; in display units when asked for."""

from __future__ import annotations

import io
import json
from pathlib import Path

from ..kinematics.mechanism import Mechanism
from ..model import Model, ModelError
from ..model.units import si_unit
from .csv_text import CsvTable, csv_table
from .display_units import SI, DisplayUnits

FORMATS = ("parquet", "csv")
RESULT_UNITS = {"peak_kinetic_energy": "J", "energy_change": "J", "seconds": "s"}  # the analyses' scalars'


def study_units(model: Model) -> dict[str, str]:
    """The SI unit of each study column whose name does not say it: the model's parameters (by their unit's
    dimension; none for a parameter without a unit), the coordinates a linearisation's equilibrium is at
    ('at theta1': rad or m), and the results that have one."""
    out = {p.name: si_unit(p.unit) for p in model.parameters if p.unit}
    tree = Mechanism(model).tree
    out |= {f"at {n}": "rad" if kind == "R" else "m" for n, kind in zip(tree.coordinates, tree.kinds, strict=True)}
    return out | RESULT_UNITS


def columns(rows: list[dict]) -> list[str]:
    """Every key of every row, in first-seen order (failed rows lack the results)."""
    return list(dict.fromkeys(k for r in rows for k in r))


def study_columns(rows: list[dict], units: DisplayUnits = SI, si: dict[str, str] | None = None) -> list[dict]:
    """The rows with every column named with its unit (`si`: study_units) and in display units."""
    return [dict(_shown(k, v, units, si or {}) for k, v in r.items()) for r in rows]


def column_header(key: str, units: DisplayUnits = SI, si: dict[str, str] | None = None) -> tuple[str, float]:
    """A study column's header in display units ('at theta1' -> 'at theta1 [deg]') and the SI size of its unit."""
    named = f"{key} [{si[key]}]" if si and si.get(key) and not key.endswith("]") else key
    return units.header(named)


def study_bytes(
    rows: list[dict], provenance: dict, fmt: str, units: DisplayUnits = SI, si: dict[str, str] | None = None
) -> bytes | CsvTable:
    """The file's contents; a failed point's missing results are empty cells (null in Parquet). The columns
    named with a unit ('peak actuator:theta1 [N m]', or in `si`: study_units) in display units."""
    rows = study_columns(rows, units, si)
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


def _shown(key: str, value, units: DisplayUnits, si: dict[str, str]) -> tuple[str, object]:
    shown, size = column_header(key, units, si)
    return shown, value / size if isinstance(value, float) and size != 1.0 else value


def _cell(value) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)
