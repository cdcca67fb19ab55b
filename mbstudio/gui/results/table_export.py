"""What the result tables share: a panel with the stale banner, a summary, a filter, a sortable table and the
Copy and Export buttons; and one code path that writes a table as tab-separated text, CSV, LaTeX or JSON,
with the result's provenance, atomically.

A table is a list of records, one per row, each a list of `Cell`s: the text shown and copied, the full text
exported (all digits), a complete LaTeX cell, a tooltip, and a number to sort by. What is copied and exported
is what is shown: the rows the filter lets through, in the order they are sorted; the filter goes into the
provenance."""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from ...io.csv_text import CsvTable, csv_table, provenance_line
from ...io.json_text import json_text
from ...jobs import JobResult
from ...model import ModelError
from .panel_parts import FORMAT_NAMES, export_path, menu_button, result_layout, stale_banner, write_export

FORMATS = ("csv", "tex", "json")
MISSING = "—"  # shown for an empty cell; exported as "" (CSV, JSON) and "--" (LaTeX)
SHOWN_CHARS = 160  # a longer cell is shortened on screen; copies and exports hold all of it
TIP_CHARS = 4000  # a tooltip past this is cut: megabyte tooltips freeze the window
MAX_WIDTH = 320  # px per column: the full text is in the tooltip
ANY_COLUMN = "any column"
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


@dataclass
class Cell:
    text: str  # shown (shortened when long) and copied as text
    full: str | None = None  # CSV and JSON; default `text`
    latex: str | None = None  # a complete LaTeX cell (math in $...$); default `full`, escaped
    tip: str = ""  # tooltip, shown preformatted
    number: float | None = None  # sorts as a number and goes to JSON as one

    def value(self, kind: str) -> str:
        """'text', 'full' or 'latex'."""
        if kind == "text":
            return self.text
        full = self.text if self.full is None else self.full
        if kind == "full":
            return full
        if self.latex is not None:
            return self.latex
        return latex_escape(full) if full else "--"


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(c, c) for c in text)


def code_latex(name: str) -> str:
    """A name as typed (a parameter, a coordinate) in LaTeX: typewriter, special characters escaped."""
    return f"\\texttt{{{latex_escape(name)}}}"


def provenance_text(result: JobResult) -> str:
    """The end of a table's summary: where its numbers came from."""
    p = result.provenance
    return f"{p.seconds:.1f} s; model {p.model_hash[:10]}…; mbstudio {p.version}"


def plain_text(columns: list[str], rows: list[list[str]]) -> str:
    return "\n".join("\t".join(row) for row in [columns, *rows])


def latex_tabular(columns: list[str], rows: list[list[str]]) -> str:
    """A tabular with one left-aligned column per column; the cells are LaTeX already."""
    head = " & ".join(latex_escape(c) for c in columns)
    body = "\n".join(" & ".join(row) + r" \\" for row in rows)
    return f"\\begin{{tabular}}{{{'l' * len(columns)}}}\n{head} \\\\\n\\hline\n{body}\n\\end{{tabular}}"


def table_json(provenance: dict, columns: list[str], rows: list[list], extra: dict) -> str:
    return json_text({"provenance": provenance, "columns": columns, "rows": rows} | extra)


class SortItem(QTableWidgetItem):
    """Sorts by its number when both items have one (operation counts, values), else by text."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        mine, theirs = self.data(Qt.ItemDataRole.UserRole), other.data(Qt.ItemDataRole.UserRole)
        if isinstance(mine, int | float) and isinstance(theirs, int | float):
            return mine < theirs
        return self.text() < other.text()  # not super(): PySide6 would call this method again


class TablePanel(QWidget):
    """A result table: subclasses set `columns`, `title` and `stem` and call `fill(records)` from
    `show_result`; column 0 ("#") is the records' own order, to sort back to, and is not exported."""

    columns: list[str] = []
    title = "table"  # in the Save dialog's caption
    stem = "table"  # default file name

    def __init__(self, placeholder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.records: list[list[Cell]] = []
        self.table = QTableWidget(0, 1 + len(self.columns))
        self.table.setHorizontalHeaderLabels(["#", *self.columns])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.placeholder = placeholder
        self.summary = QLabel(placeholder)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stale = stale_banner()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter…")
        self.filter.setClearButtonEnabled(True)
        self.filter.setMinimumWidth(40)  # the result docks share a row; a small screen must still fit
        self.filter.textChanged.connect(self._apply_filter)
        self.scope = QComboBox()
        self.scope.addItems([ANY_COLUMN, *self.columns])
        self.scope.currentIndexChanged.connect(self._apply_filter)
        self.scope.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.scope.setMinimumContentsLength(6)  # long column names show in the open list
        buttons = QHBoxLayout()
        buttons.addWidget(self.filter, 1)
        buttons.addWidget(self.scope)
        buttons.addWidget(
            menu_button("Copy", [("as text", lambda: self.copy("text")), ("as LaTeX", lambda: self.copy("latex"))])
        )
        buttons.addWidget(
            menu_button("Export", [(f"{FORMAT_NAMES[fmt]}…", lambda f=fmt: self.export(f)) for fmt in FORMATS])
        )
        result_layout(self, self.summary, self.table, buttons)

    # ------------------------------------------------------------------ filling
    def fill(self, result: JobResult, records: list[list[Cell]], summary: str) -> None:
        self.result = result
        self.records = records
        self.table.setSortingEnabled(False)  # filling a sorted table moves rows under the loop
        self.table.setRowCount(len(records))
        for r, record in enumerate(records):
            self.table.setItem(r, 0, _item(Cell(str(r + 1), number=r + 1)))
            for c, cell in enumerate(record, start=1):
                self.table.setItem(r, c, _item(cell))
        self.table.setSortingEnabled(True)
        self.table.sortItems(0)
        self.table.resizeColumnsToContents()
        for c in range(1, self.table.columnCount()):
            self.table.setColumnWidth(c, min(self.table.columnWidth(c), MAX_WIDTH))
        self.summary.setText(summary)
        self._apply_filter()

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    def clear(self) -> None:
        """Back to the empty table: another document is open."""
        self.result, self.records = None, []
        self.table.setRowCount(0)
        self.summary.setText(self.placeholder)
        self.stale.hide()

    # ------------------------------------------------------------------ filter
    def set_filter(self, text: str, column: str = ANY_COLUMN) -> None:
        """Show only the rows whose cell in `column` (or any cell) contains `text`, ignoring case."""
        self.scope.setCurrentIndex(self.scope.findText(column) if column in self.columns else 0)
        self.filter.setText(text)
        self._apply_filter()

    def _apply_filter(self) -> None:
        wanted = self.filter.text().strip().lower()
        column = self.scope.currentIndex()  # 0: any column; else the record's column - 1
        for r in range(self.table.rowCount()):
            record = self._record(r)
            cells = record if column == 0 else [record[column - 1]]
            self.table.setRowHidden(r, bool(wanted) and not any(wanted in c.text.lower() for c in cells))

    def _record(self, r: int) -> list[Cell]:
        """The record shown in table row `r`: column 0 holds its number."""
        return self.records[self.table.item(r, 0).data(Qt.ItemDataRole.UserRole) - 1]

    # ------------------------------------------------------------------ copy and export
    def shown(self) -> list[list[Cell]]:
        """The records the filter lets through, in the table's order."""
        return [self._record(r) for r in range(self.table.rowCount()) if not self.table.isRowHidden(r)]

    def rows(self, kind: str = "text") -> list[list[str]]:
        """The shown rows, each cell as 'text', 'full' or 'latex'."""
        return [[cell.value(kind) for cell in record] for record in self.shown()]

    def copy(self, kind: str) -> str:
        """The shown rows to the clipboard as tab-separated text ('text') or a LaTeX tabular ('latex')."""
        text = (
            latex_tabular(self.columns, self.rows("latex"))
            if kind == "latex"
            else plain_text(self.columns, self.rows("text"))
        )
        QGuiApplication.clipboard().setText(text)
        return text

    def provenance(self) -> dict:
        out = self.result.provenance.to_json()
        if self.filter.text().strip():
            out["filter"] = {"text": self.filter.text().strip(), "column": self.scope.currentText()}
        return out

    def json_extra(self) -> dict:
        """More for the JSON file beside provenance, columns and rows (subclasses: the job's own data)."""
        return {}

    def file_text(self, fmt: str) -> str | CsvTable:
        """The shown table as a file in `fmt` ('csv', 'tex' or 'json'), with its provenance (for CSV, beside it)."""
        fmt = fmt.lower()
        if fmt not in FORMATS:
            raise ModelError("export format", "is not known", fmt, ", ".join(FORMATS))
        provenance = self.provenance()
        if fmt == "csv":
            return csv_table(provenance, self.columns, self.rows("full"))
        if fmt == "tex":
            return f"{provenance_line(provenance, '%')}{latex_tabular(self.columns, self.rows('latex'))}\n"
        rows = [
            [cell.value("full") if cell.number is None else cell.number for cell in record] for record in self.shown()
        ]
        return table_json(provenance, self.columns, rows, self.json_extra())

    def export(self, fmt: str, path: str | None = None) -> bool:
        """Write the shown table as `fmt` ('csv', 'tex' or 'json', any case) to `path` (asked for when None),
        atomically. False when there is nothing to write, the dialog was cancelled or the file could not be
        written (then a message says why)."""
        if self.result is None:
            return False
        text = self.file_text(fmt)  # an unknown format raises before the dialog
        path = export_path(self, self.title, self.stem, fmt.lower(), path)
        return path is not None and write_export(self, path, text)


def _item(cell: Cell) -> SortItem:
    shown = cell.text if len(cell.text) <= SHOWN_CHARS else cell.text[:SHOWN_CHARS] + "…"
    item = SortItem(shown or MISSING)
    item.setData(Qt.ItemDataRole.UserRole, cell.number)
    tip = cell.tip or (cell.text if len(cell.text) > SHOWN_CHARS else "")
    if tip:
        if len(tip) > TIP_CHARS:
            tip = f"{tip[:TIP_CHARS]}…\n({len(tip)} characters: copy or export the table for all of them)"
        item.setToolTip(f"<pre>{html.escape(tip)}</pre>")
    return item
