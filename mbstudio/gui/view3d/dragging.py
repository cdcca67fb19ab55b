"""The window's side of dragging a body in the 3D view (Ctrl + drag): the picked point is followed by closed-loop
inverse kinematics (kinematics/point_drag.py) while the mouse moves, the pose shown but not yet in the document;
on release the pose goes into the document as one undoable step. Mouse moves that arrive while a frame is drawn
are merged, so a slow renderer drops frames instead of lagging behind the mouse."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QObject, QTimer

from ...kinematics import Mechanism
from ...kinematics.fast_assembly import FastAssembly
from ...kinematics.point_drag import ITERATIONS, PointDrag

SETTLE = 20  # iterations towards the last mouse position on release: the kept pose is as near as it goes


class BodyDrag(QObject):
    """`state()` gives the mechanism and the shown pose; `fast()` the compiled assembly if built (and starts its
    build); `show(q)` shows a pose; `commit(text, drag)` puts the shown pose into the document; `say(text)`
    tells the status bar."""

    def __init__(
        self,
        state: Callable[[], tuple[Mechanism, np.ndarray]],
        fast: Callable[[], FastAssembly | None],
        show: Callable[[np.ndarray], None],
        commit: Callable[[str, int], None],
        say: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.state, self.fast, self.show, self.commit, self.say = state, fast, show, commit, say
        self.drag: PointDrag | None = None
        self.target: np.ndarray | None = None  # the latest mouse position not yet followed
        self.last: np.ndarray | None = None  # the latest mouse position
        self.error = 0.0
        self._count = -1  # undo steps of drags: negative ids, apart from the sliders' (editing/commands.PoseEdit)

    def start(self, label: str, point: np.ndarray) -> None:
        mech, q = self.state()
        rotation, origin = (x[0] for x in mech.poses(q[None])[label])
        local = np.asarray(rotation, float).T @ (np.asarray(point, float) - np.asarray(origin, float))
        self.drag, self.target, self.last, self.error = PointDrag(mech, label, local, self.fast()), None, None, 0.0
        self.say(f"Dragging body '{label}': the mechanism follows the point; release to keep the pose")

    def move(self, target: np.ndarray) -> None:
        if self.drag is None:
            return
        if self.target is None:
            QTimer.singleShot(0, self.follow)
        self.target = self.last = np.asarray(target, float)

    def follow(self, iterations: int | None = None) -> None:
        """Follow the latest target: a few damped least-squares steps on the compiled loop equations, one on
        the numpy path (until the background build of the engine finishes)."""
        target, self.target = self.target, None
        if target is None or self.drag is None:
            return
        if self.drag.fast is None:
            self.drag.fast = self.fast()
        _, q = self.state()
        iterations = iterations or (ITERATIONS if self.drag.fast is not None else 1)
        q, self.error = self.drag.follow(q, target, iterations)
        self.show(q)

    def end(self) -> None:
        """The pose nearest the last mouse position goes into the document, one undo step for the whole drag."""
        self.target = self.last
        self.follow(SETTLE)
        drag, self.drag = self.drag, None
        if drag is None or self.last is None:  # pressed and released without a move
            return
        self._count -= 1
        self.commit(f"Drag body '{drag.body}'", self._count)
        off = f"; the point stayed {1e3 * self.error:.1f} mm from the mouse" if self.error > drag.tol else ""
        self.say(f"Dragged body '{drag.body}'{off} (Undo restores the pose)")
