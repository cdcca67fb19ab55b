"""Base parameters of the three routes side by side, one row per base parameter (named by the parameter
it keeps); short text in the cells, full digits (or the pretty-printed expression) in the tooltips; sortable;
copy and export as text, CSV, LaTeX or JSON. The job delivers every text; this table only lays them out."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ...jobs import JobResult
from .table_export import Cell, TablePanel, code_latex, provenance_text

ROUTES = (("dp", "DP (float64)"), ("vp", "VP"), ("symbolic", "Symbolic"))
NAMES = {"dp": "DP", "vp": "VP", "symbolic": "symbolic"}


class BaseParameterTable(TablePanel):
    columns = ["kept", *(title for _, title in ROUTES)]
    title = "base parameters"
    stem = "base_parameters"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Run Analysis › Base parameters to fill this table.", parent)

    def show_result(self, result: JobResult) -> None:
        self.fill(result, [_record(row) for row in result.data["table"]], _summary(result))

    def json_extra(self) -> dict:
        return {"run": self.result.data["json"]}


def _record(row: dict) -> list[Cell]:
    cells = [Cell(row["kept"], latex=code_latex(row["kept"]))]
    for key, _ in ROUTES:
        cell = row.get(key)
        cells.append(Cell(cell["text"], cell["full"], f"${cell['latex']}$", tip=cell["pretty"]) if cell else Cell(""))
    return cells


def _summary(result: JobResult) -> str:
    data = result.data["json"]
    ranks = ", ".join(f"{NAMES[k]} {v['rank']}" for k, v in data["results"].items())
    verdict = "".join(f" · {NAMES[a]} and {NAMES[b]} {v['verdict']}" for a, b, v in _pairs(data["comparison"]))
    path = data["provenance"]["trajectory"]
    return (  # which samples, as the command line says it: the same trajectory and count give the same ranks
        f"Ranks: {ranks}{verdict}. {result.provenance.precision}; {data['provenance']['samples']} samples of "
        f"trajectory '{path['name']}' ({path['source']}) over {path['duration']:g} s; {provenance_text(result)}"
    )


def _pairs(comparison: dict) -> list[tuple[str, str, dict]]:
    return [(*key.split("_"), value) for key, value in comparison.items() if isinstance(value, dict)]
