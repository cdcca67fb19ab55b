"""An identification's results as files: JSON (the whole document of `Identification.to_json`) or CSV (one row per
base parameter, then one per friction parameter), each with its provenance; `mbstudio identify --json/--csv` and
the window's Export write the same."""

from __future__ import annotations

from .csv_text import CsvTable, csv_table
from .json_text import json_text

FORMATS = ("csv", "json")
HEADER = ["name", "kept", "expression", "value", "std", "relative_std [%]", "model_value", "physical_value", "held"]


def identification_rows(document: dict) -> list[list]:
    """The CSV rows: base parameters (unit: that of the kept parameter), then friction (value, std)."""
    rows = [
        [
            p["name"],
            p["kept"],
            p["expression"],
            _number(p["value"]),
            _number(p["std"]),
            _number(p["relative_std"]),
            _number(p["model_value"]),
            _number(p.get("physical_value")),
            "held at the model's value" if p["held"] else "",
        ]
        for p in document["base_parameters"]
    ]
    physical = (document.get("physical") or {}).get("friction", {})
    rows += [
        [
            f["name"],
            f["name"],
            f"{f['kind']} friction of {f['coordinate']} [{f['unit']}]",
            _number(f["value"]),
            _number(f["std"]),
            _number(f["relative_std"]),
            "",
            _number(physical.get(f["name"])),
            "",
        ]
        for f in document["friction"]
    ]
    return rows


def _number(x) -> str:
    return "" if x is None else repr(float(x))


def identification_text(document: dict, fmt: str) -> str | CsvTable:
    """The document as JSON text, or as a CSV table (its provenance goes beside it, io/csv_text.py)."""
    if fmt == "json":
        return json_text(document)
    provenance = {"model": document["model"], "model_hash": document["model_hash"], "rank": document["rank"]}
    provenance |= {"filter": document["filter"], **document["provenance"]}
    return csv_table(provenance, HEADER, identification_rows(document))
