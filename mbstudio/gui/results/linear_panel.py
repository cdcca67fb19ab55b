"""What the Modes and Frequency-response panels share: one linearisation job's result, its stale banner, and the
start of an export (nothing to export, the Save dialog)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ...jobs import JobResult
from .panel_parts import export_path, menu_button, stale_banner


class LinearPanel(QWidget):
    formats: tuple[str, ...] = ()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: JobResult | None = None
        self.stale = stale_banner()

    def export_button(self):
        return menu_button("Export", [(f"{f.upper()}…", lambda f=f: self.export(f)) for f in self.formats])

    def set_stale(self, stale: bool) -> None:
        self.stale.setVisible(stale)

    def export_target(self, what: str, stem: str, fmt: str, path: str | None) -> str | None:
        """Where to write `what` as `fmt`: `path`, else the user's choice; None when there is nothing to write
        or the user cancels."""
        if self.result is None:
            return None
        return export_path(self, what, stem, fmt.lower(), path)

    def export(self, fmt: str, path: str | None = None) -> bool:
        raise NotImplementedError
