"""Results as CSV text: the provenance as a first comment line, then a header and the rows. Every CSV
export (tables, the ridge, time histories) is written here, so they all read back the same way."""

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
    out.write(provenance_line(provenance))
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()
