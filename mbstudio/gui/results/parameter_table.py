"""The standard inertial parameters of the model, one row each (Iriarte et al. 2017: order), with the value in the model
and, per route, what became of it: kept as a base parameter, eliminated and grouped into the base parameters
of the kept ones it enters (the coefficients in the tooltip), or without effect on the dynamics. Values in SI, a
unit column naming each row's, as in the base-parameter table."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ...jobs import JobResult
from .results_table import NAMES, ROUTES, SI_NOTE, UNIT, inertial_units, unit_cell
from .table_export import Cell, TablePanel, code_latex, provenance_text

BASE, GROUPED, NO_EFFECT = "base (kept)", "eliminated → grouped into", "no effect"


class ParameterTable(TablePanel):
    columns = ["parameter", "value", UNIT, *(title for _, title in ROUTES)]
    title = "inertial parameters"
    stem = "inertial_parameters"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Run Analysis › Base parameters to fill this table.", parent)

    def show_result(self, result: JobResult) -> None:
        units = inertial_units([row["name"] for row in result.data.parameters])
        self.fill(result, [_record(row, units) for row in result.data.parameters], _summary(result))

    def json_extra(self) -> dict:
        return {"parameters": self.result.data.parameters}


def _record(row: dict, units: dict[str, str]) -> list[Cell]:
    value = row["value"]
    cells = [Cell(row["name"], latex=code_latex(row["name"])), Cell(f"{value:.6g}", repr(value), number=value)]
    cells.append(unit_cell(units.get(row["name"], "")))
    return cells + [_role(row["name"], row["routes"].get(key)) for key, _ in ROUTES]


def _role(name: str, route: dict | None) -> Cell:
    if route is None:
        return Cell("")
    if route["role"] == "base":
        return Cell(BASE)
    if route["role"] == "no effect":
        return Cell(NO_EFFECT)
    into = route["into"]
    tip = "\n".join(
        f"base parameter of {kept}: {kept} + ({coefficient})·{name} + …" for kept, coefficient in into.items()
    )
    latex = r"eliminated $\to$ grouped into " + ", ".join(code_latex(k) for k in into)
    return Cell(f"{GROUPED} {', '.join(into)}", latex=latex, tip=tip)


def _summary(result: JobResult) -> str:
    rows = result.data.parameters
    parts = []
    for key, _ in ROUTES:
        roles = [row["routes"][key]["role"] for row in rows if key in row["routes"]]
        if roles:
            parts.append(
                f"{NAMES[key]}: {roles.count('base')} base, {roles.count('eliminated')} grouped, "
                f"{roles.count('no effect')} without effect"
            )
    return f"{len(rows)} standard parameters. {'; '.join(parts)}. {SI_NOTE} {provenance_text(result)}"
