"""Results as CSV files that every reader takes as they are: the header (one name per column, 'name [unit]'
where it has a unit) on the first line and the rows right after it, so `pandas.read_csv(path)`,
`numpy.genfromtxt(path, names=True, delimiter=",")`, a spreadsheet and MATLAB's `readtable` need no options.
Where the numbers came from (the provenance) goes beside the table in `<file>.json`, written with it: both
files or neither. Every CSV export (tables, the ridge, time histories, simulations, studies, commands) is made
here."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model import write_all
from .display_units import SI, DisplayUnits
from .json_text import json_text


@dataclass(frozen=True)
class CsvTable:
    """A table's CSV text and what goes in its sidecar: the column names and the provenance."""

    text: str
    header: list[str]
    provenance: dict

    def files(self, path: str | os.PathLike) -> dict[str, str]:
        """The CSV at `path` and its sidecar at `<path>.json`."""
        about = {"table": Path(path).name, "columns": self.header, "provenance": self.provenance}
        return {str(path): self.text, sidecar(path): json_text(about)}


def csv_table(provenance: dict, header: list[str], rows: Iterable[Iterable]) -> CsvTable:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return CsvTable(out.getvalue(), list(header), provenance)


def float_table(provenance: dict, header: list[str], data, blank: bool = False) -> CsvTable:
    """`csv_table` of `float_cells(data, blank)`, the same text: the rows are joined here, a writer adding nothing
    to cells that hold no separator, quote or line break (a number's repr, or an empty cell in a row of several),
    in two thirds of its time (a simulation's 150 x 201 cells)."""
    cells = float_cells(data, blank)
    if any(len(row) < 2 for row in cells[:1]):  # a lone empty cell is written quoted
        return csv_table(provenance, header, cells)
    table = csv_table(provenance, header, ())
    body = "".join([",".join(row) + "\n" for row in cells])
    return CsvTable(table.text + body, table.header, provenance)


def numeric_table(provenance: dict, header: list[str], data, units: DisplayUnits = SI, blank: bool = False) -> CsvTable:
    """Columns of numbers (`data`: rows × columns, 'name [SI unit]' headers) in display units, full float64
    digits; `blank`: a non-finite number is an empty cell."""
    shown = [units.column(h, c) for h, c in zip(header, np.asarray(data, float).T, strict=True)]
    data = np.column_stack([values for _, values in shown])
    return float_table({**provenance, "units": units.spec()}, [h for h, _ in shown], data, blank)


def float_cells(data, blank: bool = False) -> list[list[str]]:
    """The cells of a table of numbers (rows × columns) with full float64 digits (the shortest text that reads
    back as the same number); `blank`: a non-finite number is an empty cell."""
    data = np.asarray(data, dtype=float)
    rows = [list(map(repr, row)) for row in data.tolist()]  # Python floats: no numpy call per number
    for i, j in zip(*np.nonzero(~np.isfinite(data)), strict=True) if blank else ():
        rows[i][j] = ""
    return rows


def sidecar(path: str | os.PathLike) -> str:
    """Where a table's provenance goes: `run.csv` -> `run.csv.json`."""
    return f"{os.fspath(path)}.json"


def output_files(path: str | os.PathLike, content: str | bytes | CsvTable) -> Mapping[str, str | bytes]:
    """The files one output makes: a CSV table and its sidecar, or the one file of any other format."""
    return content.files(path) if isinstance(content, CsvTable) else {os.fspath(path): content}


def write_output(path: str | os.PathLike, content: str | bytes | CsvTable) -> None:
    """Write an output atomically: a CSV table with its sidecar all or nothing (model/files.py)."""
    write_all(output_files(path, content))


def provenance_line(provenance: dict, comment: str = "%") -> str:
    """`% provenance: {...}`: where the numbers of a LaTeX table came from, as one JSON comment line."""
    return f"{comment} provenance: {json.dumps(provenance, default=str)}\n"
