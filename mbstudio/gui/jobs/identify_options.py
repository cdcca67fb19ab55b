"""Analysis › Identify…: the measured log (and a second one to validate on), the friction to identify, the precision
deciding the base parameters, the positions' cut-off, the physically consistent estimate, and whether base
parameters the log does not excite are held at the model's values. The log's columns are read when the job runs
(its messages name the column and row); here only that the files exist."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLineEdit, QPushButton, QWidget

from ...identification.identify import DEFAULT_DIGITS, FRICTION
from ...model import ModelError
from .job_options import MAX_DIGITS, MIN_DIGITS, OptionsDialog, _text, number, whole_number

LOG_FILTER = "Logs (*.csv *.txt);;All files (*)"


def log_path(field: str, text: str, required: bool) -> str | None:
    """An existing file's path; empty is None where the log is optional."""
    text = text.strip()
    if not text:
        if required:
            raise ModelError(field, "is empty", None, "a CSV log: t, the coordinates, tau_<coordinate> columns")
        return None
    if not Path(text).is_file():
        raise ModelError(field, "is not a file", text, "the path of a CSV log")
    return text


class IdentifyDialog(OptionsDialog):
    task, title = "identification", "Identify from a measured log"

    def build(self) -> None:
        self._file_line("data", "log", "positions of the independent coordinates and forces of the actuated ones")
        self._file_line("validate", "validation log", "optional: a second log, the predicted forces against it")
        self.friction = {
            kind: self.check(f"friction_{kind}", f"{kind} friction of each actuated joint") for kind in FRICTION
        }
        self.line("digits", "digits", "the precision deciding the base parameters (variable precision)")
        self.line("cutoff_hz", "cut-off [Hz]", "the positions' low-pass cut-off; empty: 5 × the motion's bandwidth")
        self.physical = self.check("physical", "physically consistent estimate (semi-definite program)")
        self.hold = self.check(
            "hold_unexcited", "hold base parameters the log does not excite at the model's values instead of stopping"
        )
        chosen = self.start.get("friction") or []  # once every field exists: each toggle reads them all
        for kind, box in self.friction.items():
            box.setChecked(kind in chosen)

    def _file_line(self, key: str, label: str, tip: str) -> None:
        editor = QLineEdit(_text(self.start.get(key)))
        editor.setToolTip(tip)
        editor.textChanged.connect(self.refresh)
        browse = QPushButton("Browse…")
        browse.clicked.connect(lambda _=False, e=editor, t=label: self._browse(e, t))
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(editor, 1)
        layout.addWidget(browse)
        self.lines[key] = editor
        self.form.addRow(label, row)

    def _browse(self, editor: QLineEdit, what: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, f"Choose the {what}", editor.text(), LOG_FILTER)
        if path:
            editor.setText(path)

    def read(self) -> dict:
        digits = f"whole number from {MIN_DIGITS} to {MAX_DIGITS}"
        return {
            "data": self.field("data", lambda t: log_path("log", t, True)),
            "validate": self.field("validate", lambda t: log_path("validation log", t, False)),
            "friction": [kind for kind, box in self.friction.items() if box.isChecked()],
            "digits": self.field("digits", lambda t: whole_number("digits", t, MIN_DIGITS, MAX_DIGITS, digits)),
            "cutoff_hz": self.field(
                "cutoff_hz",
                lambda t: number("cut-off", t, lambda v: v > 0, "a frequency in Hz, or empty") if t.strip() else None,
            ),
            "physical": self.physical.isChecked(),
            "hold_unexcited": self.hold.isChecked(),
        }

    def hint_text(self, values: dict) -> str:
        check = " and validates on the second" if values.get("validate") else ""
        return (
            f"Finds the base parameters at {values.get('digits') or DEFAULT_DIGITS} digits, filters the log and "
            f"estimates them by weighted least squares{check}: seconds for a robot arm, a minute for a large "
            "closed loop."
        )
