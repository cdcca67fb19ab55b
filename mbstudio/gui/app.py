"""Starting the window: `mbstudio` and `mbstudio FILE`."""

from __future__ import annotations

import sys
from importlib.resources import files

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from .main_window import MainWindow
from .recovery import offer_recovery
from .settings import APPLICATION, ORGANISATION

# the top-level resources/ folder, installed as the package `mbstudio._resources` (see pyproject.toml)
ICON = files("mbstudio._resources") / "mbstudio.svg"


def application() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("MB Studio")
    app.setWindowIcon(QIcon(str(ICON)))
    return app


def run(path: str | None = None) -> int:
    """Open the window on `path` (default: the SLA suspension sample) and run until it closes."""
    app = application()
    window = MainWindow()
    window.show()
    if not offer_recovery(window.document, window) and path is not None:
        window.open_file(path)  # a bad file explains itself in a message box; the sample stays open
    return app.exec()
