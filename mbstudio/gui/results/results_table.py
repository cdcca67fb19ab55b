"""Base parameters of the three routes side by side, one row per base parameter (named by the parameter
it keeps); short text in the cells, full digits (or the pretty-printed expression) in the tooltips; sortable;
copy and export as text, CSV, LaTeX or JSON. The job delivers every text; this table only lays them out.

The values stay in SI whatever the window's display units (a unit column names each row's: kg, kg m, kg m^2):
the symbolic column's expressions are in the model's SI symbols, and a base parameter's numeric value must read
the same as its expression beside it."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ...jobs import JobResult
from ...model.document import INERTIA_NAMES
from .table_export import Cell, TablePanel, code_latex, provenance_text

ROUTES = (("dp", "DP (float64)"), ("vp", "VP"), ("symbolic", "Symbolic"))
NAMES = {"dp": "DP", "vp": "VP", "symbolic": "symbolic"}
UNIT = "unit (SI)"
INERTIA_UNITS = dict(zip(INERTIA_NAMES, ["kg", *["kg m"] * 3, *["kg m^2"] * 6], strict=True))
SI_NOTE = "Values in SI (kg, kg m, kg m^2) whatever the display units, as the symbolic expressions are."


def inertial_units(names: list[str]) -> dict[str, str]:
    """The SI unit of each inertial parameter: the names come ten per body, m<label> to Izz<label>."""
    out = {}
    for start in range(0, len(names) - len(INERTIA_NAMES) + 1, len(INERTIA_NAMES)):
        label = names[start][1:]
        block = names[start : start + len(INERTIA_NAMES)]
        if block == [f"{n}{label}" for n in INERTIA_NAMES]:
            out |= {name: INERTIA_UNITS[n] for name, n in zip(block, INERTIA_NAMES, strict=True)}
    return out


class BaseParameterTable(TablePanel):
    columns = ["kept", UNIT, *(title for _, title in ROUTES)]
    title = "base parameters"
    stem = "base_parameters"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Run Analysis › Base parameters to fill this table.", parent)

    def show_result(self, result: JobResult) -> None:
        units = inertial_units(result.data.parameter_names)
        self.fill(result, [_record(row, units) for row in result.data.table], _summary(result))

    def json_extra(self) -> dict:
        return {"run": self.result.data.json}


def _record(row: dict, units: dict[str, str]) -> list[Cell]:
    cells = [Cell(row["kept"], latex=code_latex(row["kept"])), unit_cell(units.get(row["kept"], ""))]
    for key, _ in ROUTES:
        cell = row.get(key)
        cells.append(Cell(cell["text"], cell["full"], f"${cell['latex']}$", tip=cell["pretty"]) if cell else Cell(""))
    return cells


def _summary(result: JobResult) -> str:
    data = result.data.json
    ranks = ", ".join(f"{NAMES[k]} {v['rank']}" for k, v in data["results"].items())
    verdict = "".join(f" · {NAMES[a]} and {NAMES[b]} {v['verdict']}" for a, b, v in _pairs(data["comparison"]))
    path = data["provenance"]["trajectory"]
    return (  # which samples, as the command line says it: the same trajectory and count give the same ranks
        f"Ranks: {ranks}{verdict}. {result.provenance.precision}; {data['provenance']['samples']} samples of "
        f"trajectory '{path['name']}' ({path['source']}) over {path['duration']:g} s. {SI_NOTE} "
        f"{provenance_text(result)}"
    )


def unit_cell(unit: str) -> Cell:
    r"""A unit as shown ('kg m^2') and in LaTeX (kg\,m$^2$)."""
    latex = unit.replace(" ", r"\,").replace("^2", "$^2$")
    return Cell(unit, latex=latex)


def _pairs(comparison: dict) -> list[tuple[str, str, dict]]:
    return [(*key.split("_"), value) for key, value in comparison.items() if isinstance(value, dict)]
