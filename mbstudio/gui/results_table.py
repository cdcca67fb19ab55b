"""Base parameters of the three routes side by side, one row per base parameter (named by the parameter
it keeps); short text in the cells, full digits (or the pretty-printed expression) in the tooltips; sortable;
copy and export as text, CSV or LaTeX. The job delivers every text; this table only lays them out."""

from __future__ import annotations

import csv
import html
import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..jobs import JobResult
from .ridge_panel import STALE_TEXT, menu_button

ROUTES = (("dp", "DP (float64)"), ("vp", "VP"), ("symbolic", "Symbolic"))
NAMES = {"dp": "DP", "vp": "VP", "symbolic": "symbolic"}
MISSING = "—"
FIRST = 2  # the route columns follow "#" (the parameter order, to sort back) and "kept"
MAX_WIDTH = 320  # px per column: the full text is in the tooltip


class BaseParameterTable(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.table = QTableWidget(0, FIRST + len(ROUTES))
        self.table.setHorizontalHeaderLabels(["#", "kept", *(title for _, title in ROUTES)])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.summary = QLabel("Run Analysis › Base parameters to fill this table.")
        self.summary.setWordWrap(True)
        self.stale = QLabel(STALE_TEXT)
        self.stale.setStyleSheet("background: #ffe2b0; color: #804000; padding: 3px;")
        self.stale.hide()
        self.stale.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(menu_button("Copy", [("as text", lambda: self.copy("text")),
                                               ("as LaTeX", lambda: self.copy("latex"))]))
        buttons.addWidget(menu_button("Export", [("CSV…", lambda: self.export("csv")),
                                                 ("LaTeX…", lambda: self.export("tex"))]))
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.stale)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)

    def show_result(self, result: JobResult) -> None:
        self.result = result
        rows = result.data["table"]
        self.table.setSortingEnabled(False)  # filling a sorted table moves rows under the loop
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            number = QTableWidgetItem()
            number.setData(Qt.ItemDataRole.DisplayRole, r + 1)  # sorts as a number
            self.table.setItem(r, 0, number)
            self.table.setItem(r, 1, QTableWidgetItem(row["kept"]))
            for c, (key, _) in enumerate(ROUTES, start=FIRST):
                cell = row.get(key)
                item = QTableWidgetItem(cell["text"] if cell else MISSING)
                if cell:
                    item.setToolTip(f"<pre>{html.escape(cell['full'])}</pre>")
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(True)
        self.table.sortItems(0)
        self.table.resizeColumnsToContents()
        for c in range(FIRST, self.table.columnCount()):
            self.table.setColumnWidth(c, min(self.table.columnWidth(c), MAX_WIDTH))
        self.summary.setText(_summary(result))

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    def rows(self, kind: str = "text") -> list[list[str]]:
        """The table in its shown order, each cell as 'text', 'full' or 'latex'."""
        if self.result is None:
            return []
        by_kept = {row["kept"]: row for row in self.result.data["table"]}
        out = []
        for r in range(self.table.rowCount()):
            row = by_kept[self.table.item(r, 1).text()]
            out.append([row["kept"], *((row[k][kind] if k in row else "") for k, _ in ROUTES)])
        return out

    def copy(self, kind: str) -> str:
        text = latex_table(self.rows("latex")) if kind == "latex" else "\n".join(
            "\t".join(row) for row in [["kept", *(t for _, t in ROUTES)], *self.rows("text")])
        QGuiApplication.clipboard().setText(text)
        return text

    def export(self, fmt: str, path: str | None = None) -> bool:
        if self.result is None:
            return False
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export base parameters", f"base_parameters.{fmt}",
                                                  f"{fmt.upper()} files (*.{fmt})")
            if not path:
                return False
        provenance = json.dumps(self.result.provenance.to_json(), default=str)
        with open(path, "w", newline="", encoding="utf-8") as f:
            if fmt == "csv":
                f.write(f"# provenance: {provenance}\n")
                writer = csv.writer(f)
                writer.writerow(["kept", *(t for _, t in ROUTES)])
                writer.writerows(self.rows("full"))
            else:
                f.write(f"% provenance: {provenance}\n{latex_table(self.rows('latex'))}\n")
        return True


def _summary(result: JobResult) -> str:
    data = result.data["json"]
    ranks = ", ".join(f"{NAMES[k]} {v['rank']}"
                      for k, v in data["results"].items())
    verdict = "".join(f" · {NAMES[a]} and {NAMES[b]} {'agree' if v['agree'] else 'DIFFER'}"
                      for a, b, v in _pairs(data["comparison"]))
    p = result.provenance
    return (f"Ranks: {ranks}{verdict}. {p.precision}; {data['provenance']['samples']} samples; "
            f"{p.seconds:.1f} s; model {p.model_hash[:10]}…; mbstudio {p.version}")


def _pairs(comparison: dict) -> list[tuple[str, str, dict]]:
    return [(*key.split("_"), value) for key, value in comparison.items() if isinstance(value, dict)]


def latex_table(rows: list[list[str]]) -> str:
    head = " & ".join(["kept", *(t for _, t in ROUTES)])
    body = "\n".join(" & ".join([f"\\texttt{{{r[0]}}}", *(f"${c}$" if c else "--" for c in r[1:])]) + r" \\"
                     for r in rows)
    return f"\\begin{{tabular}}{{llll}}\n{head} \\\\\n\\hline\n{body}\n\\end{{tabular}}"
