"""The eigenvalue map: the linear model's eigenvalues in the complex plane (both of each conjugate pair),
the imaginary axis that separates stable from unstable, the selected mode ringed; clicking a point picks
its mode. For a family (LPV), every member's eigenvalues lie beneath as small dots coloured by the scheduling
parameter (the colour bar under the plot says which value is which), and clicking one picks that member. The
job delivers the eigenvalues; this plot only draws them."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from .panel_parts import plain_units

STABILITY_COLORS = {"stable": "#2a70c0", "marginal": "#40a040", "unstable": "#c02020"}
FAMILY_COLORS = pg.colormap.get("viridis")


def _conjugates(modes: list[dict]) -> list[tuple[int, float, float]]:
    """(mode index, Re λ, Im λ) of every eigenvalue: both of a conjugate pair, once a real one."""
    return [
        (k, m["eigenvalue_real"], s * m["eigenvalue_imag"])
        for k, m in enumerate(modes)
        for s in ((1, -1) if m["eigenvalue_imag"] else (1,))
    ]


class EigenvalueMap(pg.PlotWidget):
    """`picked(mode index)` when a point of the shown model is clicked, `member_picked(member)` when one of
    another member of a family is."""

    picked = Signal(int)
    member_picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w")
        self.setLabel("bottom", "Re λ [1/s]")
        self.setLabel("left", "Im λ [rad/s]")
        self.showGrid(x=True, y=True, alpha=0.2)
        self.setMinimumWidth(220)
        self.family = pg.ScatterPlotItem(size=6, pen=None)
        self.family.sigClicked.connect(lambda _item, points, _event=None: self._emit(self.member_picked, points))
        self.points = pg.ScatterPlotItem(size=10, pen=pg.mkPen("k", width=0.5))
        self.points.sigClicked.connect(lambda _item, points, _event=None: self._emit(self.picked, points))
        self.ring = pg.ScatterPlotItem(size=20, pen=pg.mkPen("#d0602a", width=2), brush=None)
        self.colour_bar: pg.ColorBarItem | None = None
        self.addItem(pg.InfiniteLine(0, angle=90, pen=pg.mkPen("#909090", style=pg.QtCore.Qt.PenStyle.DashLine)))
        self.addItem(pg.InfiniteLine(0, angle=0, pen=pg.mkPen("#c0c0c0")))
        for item in (self.family, self.points, self.ring):
            self.addItem(item)

    def show_modes(self, modes: list[dict]) -> None:
        """The shown model's eigenvalues, in the colours of their stability."""
        brushes = {s: pg.mkBrush(c) for s, c in STABILITY_COLORS.items()}
        self.points.setData(
            [{"pos": (re, im), "data": k, "brush": brushes[modes[k]["stability"]]} for k, re, im in _conjugates(modes)]
        )
        self.ring.setData([])
        if not len(self.family.data):  # a family's view spans every member and stays as members are picked
            self.autoRange(padding=0.15)

    def show_family(self, members: list[list[dict]], values: np.ndarray, label: str) -> None:
        """Every member's eigenvalues coloured by its value of the scheduling parameter (`label`: its name and
        unit, for the colour bar), the view spanning them all."""
        low, high = float(np.min(values)), float(np.max(values))
        colours = FAMILY_COLORS.map((np.asarray(values) - low) / (high - low or 1.0), mode="qcolor")
        self.family.setData(
            [
                {"pos": (re, im), "data": i, "brush": pg.mkBrush(colours[i])}
                for i, modes in enumerate(members)
                for _, re, im in _conjugates(modes)
            ]
        )
        self._colour_bar(low, high, label)
        self.autoRange(padding=0.15)

    def _colour_bar(self, low: float, high: float, label: str) -> None:
        self._remove_colour_bar()
        self.colour_bar = pg.ColorBarItem(
            values=(low, high if high > low else low + 1.0),
            colorMap=FAMILY_COLORS,
            label=label,
            interactive=False,
            orientation="h",
            width=12,
        )
        plain_units(self.colour_bar.axis)
        self.plotItem.layout.addItem(self.colour_bar, 4, 1)

    def clear_family(self) -> None:
        self.family.setData([])
        self._remove_colour_bar()

    def _remove_colour_bar(self) -> None:
        if self.colour_bar is not None:
            self.plotItem.layout.removeItem(self.colour_bar)
            self.colour_bar.setParentItem(None)
            self.colour_bar = None

    def select(self, k: int, modes: list[dict]) -> None:
        if k < 0:
            self.ring.setData([])
            return
        re, im = modes[k]["eigenvalue_real"], modes[k]["eigenvalue_imag"]
        self.ring.setData(x=np.array([re, re]), y=np.array([im, -im]))

    def clear_modes(self) -> None:
        self.points.setData([])
        self.ring.setData([])
        self.clear_family()

    @staticmethod
    def _emit(signal, points) -> None:
        if len(points):
            signal.emit(int(points[0].data()))
