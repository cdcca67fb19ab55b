"""The symbolic equations of motion, one row per non-zero entry of M (upper triangle: M is symmetric), c, g
and, for a closed loop, Φ_q and γ: the group, the entry named by coordinates, the expression (pretty-printed
in the tooltip) and its size in operations, to sort by complexity. The job delivers every text."""

from __future__ import annotations

import html
from collections import Counter

from PySide6.QtWidgets import QWidget

from ...jobs import JobResult
from .table_export import Cell, TablePanel, provenance_text

GROUPS = {
    "mass_matrix": "mass matrix",
    "bias": "Coriolis and centrifugal",
    "gravity": "gravity",
    "constraint_jacobian": "constraint Jacobian",
    "constraint_rhs": "constraint right side",
    "task_mass": "task-space mass matrix M_t [kg]",  # a parallel machine's (jobs.tasks.task_space_eom)
    "task_gravity": "task-space gravity W_t^grav [N]",
    "ik_jacobian": "inverse-kinematics Jacobian J_IK",
    "actuator_mass": "actuator-space mass matrix M_a",
}
SYMMETRY_NOTE = "M is symmetric: only its entries M[i,j] with i ≤ j are listed; zero entries are left out."


class EquationsTable(TablePanel):
    columns = ["group", "entry", "expression", "operations"]
    title = "equations of motion"
    stem = "equations_of_motion"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Run Analysis › Symbolic Equations of Motion to fill this table.", parent)

    def show_result(self, result: JobResult) -> None:
        data = result.data
        records = [_record(e, data.independent_rows) for e in data.entries]
        self.fill(result, records, _summary(result))

    def json_extra(self) -> dict:
        data = self.result.data
        return {
            "coordinates": data.coordinates,
            "constraint_labels": data.constraint_labels,
            "notes": data.notes,
        }


def _record(entry: dict, independent: list[int]) -> list[Cell]:
    ops = entry["ops"]
    latex = f"${entry['latex']}$" if entry["latex"] else f"({ops} operations: too long for a table)"
    return [
        Cell(GROUPS[entry["group"]]),
        Cell(entry["entry"], latex=f"${entry['entry_latex']}$", tip=_constraint(entry, independent)),
        Cell(entry["text"], latex=latex, tip=entry["pretty"] or entry["text"]),
        Cell(str(ops), number=ops),
    ]


def _constraint(entry: dict, independent: list[int]) -> str:
    if not entry["constraint"]:
        return ""
    kind = "independent" if entry["row"] in independent else "implied by the independent ones"
    return f"constraint {entry['row'] + 1}: {entry['constraint']} ({kind})"


def _summary(result: JobResult) -> str:
    data = result.data
    counts = Counter(GROUPS[e["group"]] for e in data.entries)
    listed = ", ".join(f"{n} {group}" for group, n in counts.items())
    notes = "".join(f"<br>{html.escape(note)}" for note in data.notes)
    return (
        f"Coordinates {', '.join(data.coordinates)}: {listed} entries. {SYMMETRY_NOTE}{notes}<br>"
        f"{provenance_text(result)}"
    )
