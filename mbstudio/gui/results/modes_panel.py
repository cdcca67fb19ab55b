"""The Modes panel: the linear model's operating point (said plainly when it is not an equilibrium), a table of
its modes (natural frequency, damping ratio, damped frequency, eigenvalue, stability, the coordinate that moves
most) beside the eigenvalue map; selecting a mode in either asks the window to animate its shape in the 3D
view (`mode_selected`). Of a family (LPV) it shows the member picked with the slider above the table, and the
map holds every member's eigenvalues coloured by the scheduling parameter. Exports: the table as CSV, the
shown model as JSON, .mat or .npz (io/state_space.py), the map as PNG. A selected mode's shape is read out per
unit of the coordinate that moves most, in the window's display units (per 1 deg of theta1: theta2 −0.43 deg),
as are the scheduling parameter and the exported model. The job computes everything (SI); this panel lays it
out."""

from __future__ import annotations

import json
import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from ...io.csv_text import csv_table
from ...io.state_space import state_space_file
from ...jobs import JobResult
from .eigenvalue_map import STABILITY_COLORS, EigenvalueMap
from .linear_panel import LinearPanel, schedule_label, schedule_values, signal_sizes
from .panel_parts import result_layout, save_image, write_export

COLUMNS = ["mode", "natural [Hz]", "damping ratio", "damped [Hz]", "eigenvalue [1/s]", "stability", "moves most"]
# the header on two lines: the columns as narrow as their numbers, so that all seven fit beside the map
HEADERS = ["mode", "natural\n[Hz]", "damping\nratio", "damped\n[Hz]", "eigenvalue\n[1/s]", "stability", "moves\nmost"]
EXPORT_FORMATS = ("csv", "json", "mat", "npz", "png")
PLACEHOLDER = "Run Analysis › Linearise… to see the modes."
HINT = "Select a mode to animate its shape in the 3D view."
SHAPE_PARTS = 6  # the coordinates a shape's readout names, the largest first (the tooltip holds them all)


class ModesPanel(LinearPanel):
    """`mode_selected(index)`: a mode was chosen (-1: none, stop animating)."""

    mode_selected = Signal(int)
    formats = EXPORT_FORMATS
    placeholder = PLACEHOLDER

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.itemSelectionChanged.connect(self._selection)
        self.map = EigenvalueMap()
        self.map.picked.connect(self.select)
        self.map.member_picked.connect(self.member_picked)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(self.table)
        body.addWidget(self.map)
        body.setStretchFactor(0, 3)  # the table's seven columns want the width; the map stays readable small
        body.setStretchFactor(1, 1)
        body.setSizes([760, 240])
        self.stop = QPushButton("Stop")
        self.stop.setToolTip("stop animating the mode and show the document's pose again")
        self.stop.clicked.connect(lambda: self.select(-1))
        buttons = QHBoxLayout()
        self.hint = QLabel(HINT)
        self.hint.setWordWrap(True)
        self.hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons.addWidget(self.hint, 1)
        buttons.addWidget(self.stop)
        buttons.addWidget(self.export_button())
        result_layout(self, self.summary, body, buttons, self.picker)

    @property
    def modes(self) -> list[dict]:
        return self.data.modes if self.result is not None else []

    def show_result(self, result: JobResult) -> None:
        self.select(-1)
        self.take(result)
        self._show_family()
        self._fill()

    def _show_family(self) -> None:
        """A family's eigenvalues on the map, coloured by the scheduling value in its display unit."""
        family = self.family
        if family is None:
            self.map.clear_family()
            return
        members = [m.modes for m in self.result.data.members]
        self.map.show_family(members, schedule_values(family, self.units), schedule_label(family, self.units))

    def redraw(self) -> None:
        self._show_family()
        super().redraw()

    def member_changed(self) -> None:
        """Another member: its modes, the same mode kept selected (and animating) where it has one."""
        rows = self.table.selectionModel().selectedRows()
        self._fill()
        k = rows[0].row() if rows else -1
        self.select(k if k < len(self.modes) else -1)

    def _fill(self) -> None:
        self.summary.setText(self.member_heading() + _headline(self.data.model, self.data.note))
        self.summary.setToolTip(self.data.summary)
        self.table.blockSignals(True)  # the selection is set again by the caller
        self.table.setRowCount(len(self.modes))
        for r, mode in enumerate(self.modes):
            for c, text in enumerate(_row(r, mode)):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight if c < 5 else Qt.AlignmentFlag.AlignLeft)
                if c == 5:
                    item.setForeground(Qt.GlobalColor.black)
                    item.setBackground(_tint(mode["stability"]))
                self.table.setItem(r, c, item)
        self.table.blockSignals(False)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.map.show_modes(self.modes)

    def select(self, k: int) -> None:
        """Select mode k (-1: none): the row, the ring on the map, and `mode_selected`."""
        self.table.blockSignals(True)
        self.table.clearSelection()
        if k >= 0:
            self.table.selectRow(k)
        self.table.blockSignals(False)
        self.map.select(k, self.modes)
        text = shape_text(self.data, k, self.units) if k >= 0 else (HINT, "")
        self.hint.setText(text[0])
        self.hint.setToolTip(text[1])
        self.mode_selected.emit(k)

    def select_none(self) -> None:
        """The document changed: stop animating (its poses may no longer be the document's)."""
        if self.table.selectionModel().hasSelection():
            self.select(-1)

    def _selection(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        self.select(rows[0].row() if rows else -1)

    def clear(self) -> None:
        self.select(-1)
        super().clear()
        self.table.setRowCount(0)
        self.map.clear_modes()

    def export(self, fmt: str, path: str | None = None) -> bool:
        """csv: the modes table; json, mat, npz: the linear model with its modes; png: the eigenvalue map."""
        what = "the modes" if fmt.lower() in ("csv", "png") else "the linear model"
        fmt, path = fmt.lower(), self.export_target(what, "modes", fmt, path)
        if path is None:
            return False
        if fmt == "png":
            provenance = json.dumps(self.provenance(), default=str)
            save_image(self.map, self.map.plotItem, path, fmt, "Eigenvalues", provenance)
            return True
        if fmt == "csv":
            rows = [_row(r, m) for r, m in enumerate(self.modes)]
            return write_export(self, path, csv_table(self.provenance(), COLUMNS, rows))
        document = {**self.in_units(self.data.model), "job": self.provenance()}
        return write_export(self, path, state_space_file(document, fmt))


def shape_text(data: dict, k: int, units) -> tuple[str, str]:
    """Mode k's shape in the independent coordinates, in display units, per unit of the one that moves most: the
    largest few as text, every one in the tooltip. A complex component (a damped mode's phase lag) is its
    magnitude and phase."""
    model, mode = data.model, data.modes[k]
    count = len(model["states"]) // 2  # positions, then velocities
    names = model["states"][:count]
    shown, sizes = signal_sizes(names, model["state_units"][:count], units)
    shape = np.asarray(mode["shape_real"], float) + 1j * np.asarray(mode["shape_imag"], float)
    values = shape[[data.coordinates.index(n) for n in names]] / sizes
    d = names.index(mode["dominant"])
    ratio = values / values[d]
    parts = [f"{n} {_component(r)} {u}" for n, r, u in zip(names, ratio, shown, strict=True)]
    largest = sorted(range(count), key=lambda i: -abs(ratio[i]))[:SHAPE_PARTS]
    head = f"Mode {k + 1}'s shape per 1 {shown[d]} of {mode['dominant']}: "
    more = ", …" if count > SHAPE_PARTS else ""
    return head + ", ".join(parts[i] for i in largest) + more, head + "\n".join(parts)


def _component(z: complex) -> str:
    if abs(z.imag) <= 1e-9 * abs(z):
        return f"{z.real:.4g}"
    return f"{abs(z):.4g}∠{math.degrees(np.angle(z)):.0f}°"


def _row(r: int, mode: dict) -> list[str]:
    re, im = mode["eigenvalue_real"], mode["eigenvalue_imag"]
    eigenvalue = f"{re:.6g}" + (f" ± {abs(im):.6g}j" if im else "")
    damping = "—" if mode["kind"] == "neutral" else f"{mode['damping']:.4g}"
    stability = mode["stability"] + ("" if mode["kind"] == "oscillation" else f" ({mode['kind']})")
    return [
        str(r + 1),
        f"{mode['frequency_hz']:.6g}",
        damping,
        f"{mode['damped_hz']:.6g}",
        eigenvalue,
        stability,
        mode["dominant"],
    ]


def _headline(model: dict, note: str = "") -> str:
    """What the model is about (`note`: how the default point was chosen), its states and signals."""
    what = {"equilibrium": "the equilibrium found", "initial": "the document's pose", "given": "the document's pose"}
    point = (
        "at rest, no acceleration"
        if model["is_equilibrium"]
        else "<b>NOT an equilibrium</b>: its drift is kept with it"
    )
    held = "".join(f"; {n} held by {f:.4g}" for n, f in model["held"].items())
    neutral = f"; {len(model['neutral'])} neutral direction(s)" if model["neutral"] else ""
    return (
        f"About {note or what[model['point_kind']]} ({point}){held}{neutral}. {len(model['states'])} states; "
        f"inputs {', '.join(model['inputs'])}; outputs {', '.join(model['outputs'])}."
    )


def _tint(stability: str):
    from PySide6.QtGui import QColor

    color = QColor(STABILITY_COLORS[stability])
    color.setAlpha(60)
    return color
