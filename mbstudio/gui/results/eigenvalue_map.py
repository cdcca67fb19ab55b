"""The eigenvalue map: the linear model's eigenvalues in the complex plane (both of each conjugate pair),
the imaginary axis that separates stable from unstable, the selected mode ringed; clicking a point picks
its mode. The job delivers the eigenvalues; this plot only draws them."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

STABILITY_COLORS = {"stable": "#2a70c0", "marginal": "#40a040", "unstable": "#c02020"}


class EigenvalueMap(pg.PlotWidget):
    """`picked(mode index)` when a point is clicked."""

    picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w")
        self.setLabel("bottom", "Re λ [1/s]")
        self.setLabel("left", "Im λ [rad/s]")
        self.showGrid(x=True, y=True, alpha=0.2)
        self.setMinimumWidth(220)
        self.points = pg.ScatterPlotItem(size=10, pen=pg.mkPen("k", width=0.5))
        self.points.sigClicked.connect(self._clicked)
        self.ring = pg.ScatterPlotItem(size=20, pen=pg.mkPen("#d0602a", width=2), brush=None)
        self.addItem(pg.InfiniteLine(0, angle=90, pen=pg.mkPen("#909090", style=pg.QtCore.Qt.PenStyle.DashLine)))
        self.addItem(pg.InfiniteLine(0, angle=0, pen=pg.mkPen("#c0c0c0")))
        self.addItem(self.points)
        self.addItem(self.ring)

    def show_modes(self, modes: list[dict]) -> None:
        spots = []
        for k, mode in enumerate(modes):
            re, im = mode["eigenvalue_real"], mode["eigenvalue_imag"]
            brush = pg.mkBrush(STABILITY_COLORS[mode["stability"]])
            spots += [{"pos": (re, s * im), "data": k, "brush": brush} for s in ((1, -1) if im else (1,))]
        self.points.setData(spots)
        self.ring.setData([])
        self.autoRange(padding=0.15)

    def select(self, k: int, modes: list[dict]) -> None:
        if k < 0:
            self.ring.setData([])
            return
        re, im = modes[k]["eigenvalue_real"], modes[k]["eigenvalue_imag"]
        self.ring.setData(x=np.array([re, re]), y=np.array([im, -im]))

    def clear_modes(self) -> None:
        self.points.setData([])
        self.ring.setData([])

    def _clicked(self, _item, points, _event=None) -> None:
        if len(points):
            self.picked.emit(int(points[0].data()))
