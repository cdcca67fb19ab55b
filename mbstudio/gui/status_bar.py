"""The window's status bar, whose messages never run into its permanent indicators (DOF · loops · assembled):
a message longer than the room left of them ends in an ellipsis, the whole of it in the tooltip, and is cut
again to the new room when the window is resized."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QStatusBar, QWidget

GAP = 16  # px between the message's end and the first indicator


class ElidingStatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full = ""  # the message as given
        self.permanent: list[QWidget] = []
        self._timer = QTimer(self)  # the message's own timeout: re-cutting it on a resize must not restart it
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.clearMessage)

    def addPermanentWidget(self, widget: QWidget, stretch: int = 0) -> None:  # Qt's name
        self.permanent.append(widget)
        super().addPermanentWidget(widget, stretch)

    def showMessage(self, text: str, timeout: int = 0) -> None:  # Qt's name
        self.full = text
        self.setToolTip(text)
        super().showMessage(self._fitted(text))
        if timeout > 0:
            self._timer.start(timeout)
        else:
            self._timer.stop()

    def currentMessage(self) -> str:  # Qt's name
        """The message whole, as given (the bar shows it cut to its room)."""
        return self.full if super().currentMessage() else ""

    def shown(self) -> str:
        """The message as the bar draws it."""
        return super().currentMessage()

    def clearMessage(self) -> None:  # Qt's name
        self.full = ""
        self.setToolTip("")
        self._timer.stop()
        super().clearMessage()

    def _fitted(self, text: str) -> str:
        shown = [w.geometry().left() for w in self.permanent if w.isVisible()]
        room = min(shown, default=self.width()) - GAP
        return self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, max(room, 40))

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt's name
        super().resizeEvent(event)
        if self.full:
            super().showMessage(self._fitted(self.full))
