"""Results as CSV text: one plain header line, the provenance as a comment line, then the rows. Every CSV
export (tables, the ridge, time histories, simulations, studies) is written here, so they all read back the
same way: `pandas.read_csv(path, comment="#")` and `numpy.genfromtxt(path, delimiter=",", names=True,
comments="#")` skip the provenance and keep the column names. (The header comes first because genfromtxt
takes the first line for the names even when it is a comment.)"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable


def provenance_line(provenance: dict, comment: str = "#") -> str:
    """`# provenance: {...}` (or with LaTeX's `%`): where the numbers below came from, as one JSON line."""
    return f"{comment} provenance: {json.dumps(provenance, default=str)}\n"


def csv_text(provenance: dict, header: list[str], rows: Iterable[Iterable]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    out.write(provenance_line(provenance))
    writer.writerows(rows)
    return out.getvalue()
