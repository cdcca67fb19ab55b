"""The runs of an ensemble as a CSV table (`mbstudio simulate --ensemble runs.csv`): one row per run, a column
per input — an independent coordinate's initial value (its name), its initial velocity (`d_<name>`) or a model
parameter (its name), each column once; `<name>_dot`, the spelling of other programs, is read as `d_<name>` with
a note. Lines starting with '#' are comments; a column left empty keeps the
document's value. The file is UTF-8 text (a byte-order mark is allowed); anything else is named as such."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..model import Model, ModelError
from ..model.typed_numbers import rate_spelled_otherwise

MAX_RUNS = 10_000


def read_runs(
    path: str | Path, model: Model, independent: list[str], notes: list[str] | None = None
) -> tuple[dict, list[dict[str, float]]]:
    """The keyword arguments of simulate_ensemble (initial, velocities, parameters) and each run's inputs; what
    was read otherwise than written is appended to `notes`."""
    rows = _rows(path)
    if len(rows) < 2:
        raise ModelError(str(path), "has no runs", expected="a header line, then one line per run")
    header, body = [_rate_name(h.strip(), independent, notes) for h in rows[0]], rows[1:]
    if len(body) > MAX_RUNS:
        raise ModelError(str(path), f"has {len(body)} runs", expected=f"at most {MAX_RUNS}")
    parameters = {p.name for p in model.parameters}
    valid = [*independent, *(f"d_{c}" for c in independent), *sorted(parameters)]
    unknown = [h for h in header if h not in valid]
    if unknown:
        raise ModelError(f"{path}: column {unknown[0]!r}", "is not an input of this model", expected=", ".join(valid))
    twice = next((h for k, h in enumerate(header) if h in header[:k]), None)
    if twice is not None:  # the last one would win, silently
        raise ModelError(f"{path}: column {twice!r}", "appears twice in the header", expected="each input once")
    runs = [_row(path, header, row, line) for line, row in enumerate(body, start=2)]
    return _arguments(runs, independent, parameters), runs


def _rate_name(column: str, independent: list[str], notes: list[str] | None) -> str:
    """`theta1_dot` as `d_theta1` for an independent coordinate theta1, said in `notes`."""
    name = rate_spelled_otherwise(column, independent)
    if name is None:
        return column
    if notes is not None:
        notes.append(f"column '{column}' read as 'd_{name}' (a rate is d_NAME in mbstudio's tables)")
    return f"d_{name}"


def _rows(path: str | Path) -> list[list[str]]:
    """The file's non-empty CSV rows, comment lines left out; a ModelError for a file that cannot be read, is
    not UTF-8 text or not CSV."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelError(str(path), f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ModelError(
            f"{path}, line {line}",
            f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            expected="a CSV file saved as UTF-8 (in a spreadsheet: CSV UTF-8)",
        ) from None
    lines = (line for line in text.splitlines() if not line.lstrip().startswith("#"))
    try:
        return [r for r in csv.reader(lines) if r]
    except csv.Error as exc:  # a NUL character, a field longer than the csv module allows
        raise ModelError(str(path), f"is not a readable CSV table: {exc}", expected="a header, then rows") from None


def _row(path, header: list[str], row: list[str], line: int) -> dict[str, float]:
    if len(row) != len(header):
        raise ModelError(f"{path}, line {line}", f"has {len(row)} fields", expected=f"{len(header)}, as the header")
    out = {}
    for name, text in zip(header, row, strict=True):
        if not text.strip():
            continue
        try:
            value = float(text)
        except ValueError:
            raise ModelError(f"{path}, line {line}, column {name!r}", "is not a number", text) from None
        if not np.isfinite(value):
            raise ModelError(f"{path}, line {line}, column {name!r}", "is not finite", text, "a finite number")
        out[name] = value
    return out


def _arguments(runs: list[dict], independent: list[str], parameters: set[str]) -> dict:
    """Columns of coordinates and velocities as arrays (a missing value: NaN for the document's, or rest)."""
    arguments: dict = {}
    if any(c in run for run in runs for c in independent):
        arguments["initial"] = [[run.get(c, np.nan) for c in independent] for run in runs]
    if any(f"d_{c}" in run for run in runs for c in independent):
        arguments["velocities"] = [[run.get(f"d_{c}", 0.0) for c in independent] for run in runs]
    if any(p in run for run in runs for p in parameters):
        arguments["parameters"] = [{p: v for p, v in run.items() if p in parameters} for run in runs]
    return arguments
