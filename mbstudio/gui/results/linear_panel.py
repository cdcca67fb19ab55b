"""What the Modes, Frequency-response and Linear-family panels share: one linearisation job's result (a model, or
a family of them over a scheduling parameter, of which one member is shown), the slider that picks the member,
its stale banner, the display units (Edit › Preferences… › Units) and the start of an export (nothing to export,
the Save dialog)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QWidget

from ...io.display_units import SI, DisplayUnits
from ...io.state_space import in_display_units
from ...jobs import JobResult
from ...jobs.results import LinearFamilyResult, LinearModelResult
from .panel_parts import export_button, export_path, stale_banner


def schedule_unit(family: dict, units: DisplayUnits) -> tuple[str, float]:
    """The scheduling parameter's display unit ('' for none) and its SI size."""
    return units.unit(family["unit"], family["name"]) if family["unit"] else ("", 1.0)


def schedule_values(family: dict, units: DisplayUnits) -> np.ndarray:
    """Every member's scheduling value in its display unit."""
    return np.asarray(family["values"], float) / schedule_unit(family, units)[1]


def schedule_label(family: dict, units: DisplayUnits) -> str:
    """'theta1 [deg]', or the name alone without a unit."""
    unit = schedule_unit(family, units)[0]
    return f"{family['name']} [{unit}]" if unit else family["name"]


def member_text(family: dict, k: int, units: DisplayUnits = SI) -> str:
    """'theta1 = 2.29 deg (model 7 of 11)'."""
    unit = schedule_unit(family, units)[0]
    value = f"{schedule_values(family, units)[k]:.6g}" + (f" {unit}" if unit else "")
    return f"{family['name']} = {value} (model {k + 1} of {len(family['values'])})"


def signal_sizes(names: list[str], si_units: list[str], units: DisplayUnits) -> tuple[list[str], np.ndarray]:
    """Signals' display units and their SI sizes."""
    shown = [units.unit(u, n) for n, u in zip(names, si_units, strict=True)]
    return [u for u, _ in shown], np.array([size for _, size in shown], float)


class MemberPicker(QWidget):
    """A slider over the members of a family, with the scheduling parameter's value; hidden for one model.
    `picked(k)` when the user moves it."""

    picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.family: dict | None = None
        self.units = SI
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setToolTip("the member of the family the Modes and Frequency-response panels show")
        self.slider.valueChanged.connect(self._moved)
        self.label = QLabel()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("model"))
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.label)
        self.hide()

    def show_family(self, family: dict | None, k: int) -> None:
        self.family = family
        self.setVisible(family is not None)
        if family is not None:
            self.slider.blockSignals(True)
            self.slider.setRange(0, len(family["values"]) - 1)
            self.slider.blockSignals(False)
            self.set_member(k)

    def set_member(self, k: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(k)
        self.slider.blockSignals(False)
        self.label.setText(member_text(self.family, k, self.units))

    def _moved(self, k: int) -> None:
        self.label.setText(member_text(self.family, k, self.units))
        self.picked.emit(k)


class LinearPanel(QWidget):
    """`member_picked(k)`: the user picked member k of a family here (the window shows it in every panel)."""

    member_picked = Signal(int)
    formats: tuple[str, ...] = ()
    placeholder = ""  # the summary before any result: which analysis fills the panel

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel(self.placeholder)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result: JobResult | None = None
        self.units = SI  # Edit › Preferences… › Units
        self.member = 0
        self.stale = stale_banner()
        self.picker = MemberPicker()
        self.picker.picked.connect(self.member_picked)

    @property
    def family(self) -> dict | None:
        """The family's schedule (name, kind, unit, values, count, start, stopped); None for one model."""
        if self.result is None or not isinstance(self.result.data, LinearFamilyResult):
            return None
        return self.result.data.family

    @property
    def data(self) -> LinearModelResult:
        """The shown linear model: the result's own, or the picked member's."""
        data = self.result.data
        return data.members[self.member] if isinstance(data, LinearFamilyResult) else data

    def take(self, result: JobResult) -> None:
        """Hold `result`, a family at the member nearest the document's value."""
        self.result = result
        family = self.family
        self.member = family["start"] if family else 0
        self.picker.show_family(family, self.member)

    def show_member(self, k: int) -> None:
        """Show member k of the family (the window calls this on every panel when one is picked)."""
        if self.family is None or k == self.member or not 0 <= k < len(self.family["values"]):
            return
        self.member = k
        self.picker.set_member(k)
        self.member_changed()

    def member_changed(self) -> None:
        """Draw the picked member."""

    def set_units(self, units: DisplayUnits) -> None:
        """Show the result in `units` (it stays SI)."""
        self.units = self.picker.units = units
        if self.result is not None:
            self.redraw()

    def redraw(self) -> None:
        """Draw the result again (in other units)."""
        self.picker.show_family(self.family, self.member)
        self.member_changed()

    def clear(self) -> None:
        """No result (another document): the placeholder; subclasses clear their plots and tables too."""
        self.result = None
        self.picker.show_family(None, 0)
        self.summary.setText(self.placeholder)
        self.stale.hide()

    def member_heading(self) -> str:
        """'theta1 = 0.04 rad (model 7 of 11): ' for a family's member, '' for one model."""
        return f"{member_text(self.family, self.member, self.units)}: " if self.family else ""

    def provenance(self) -> dict:
        """The job's provenance, which member of a family an export holds, and the units it is written in."""
        shown = {"model_shown": member_text(self.family, self.member, self.units)} if self.family else {}
        return {**self.result.provenance.to_json(), **shown, "units": self.units.spec()}

    def in_units(self, document: dict) -> dict:
        """A state-space document as the window shows it: in display units (SI when they are)."""
        return in_display_units(document, self.units)

    def export_button(self):
        return export_button(self.export, self.formats)

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
