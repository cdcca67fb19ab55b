"""The K&C rig's result in the window: the page `mbstudio kc --report` writes (io/kc_report.py draws it; for the
axle roll test io/kc_roll_report.py: roll moment and roll stiffness against the roll), scaled to the panel's width
and scrolled, the figures above it, and Export as PDF, PNG, SVG or CSV (the travel curves, or the roll's; the
command writes the load sweeps beside them). The suspension report's panel shows it (PagePanel)."""

from __future__ import annotations

from ...io.kc_report import kc_bytes, kc_csv, summary_lines
from ...io.kc_roll_report import roll_bytes, roll_csv, roll_summary_lines
from ...simulation.kc_axle_roll import AxleRollTest
from .suspension_panel import PagePanel


class KCPanel(PagePanel):
    placeholder = "Run Analysis › K&C… on a model with a suspension measure set (samples/sla_suspension_bushed.mbs)."
    note_text = "The page as `mbstudio kc --report` writes it, in the suspension measures' units."
    export_title, export_stem = "the K&C report", "kc"

    @property
    def rolled(self) -> bool:
        """The result is the axle roll test's."""
        return isinstance(self.result.data.kc, AxleRollTest)

    def page_bytes(self, fmt: str) -> bytes:
        provenance = self.result.provenance.to_json()
        if self.rolled:
            return roll_bytes(self.result.data.kc, provenance, fmt)
        return kc_bytes(self.result.data.kc, provenance, fmt, self.units)

    def csv(self):
        provenance = self.result.provenance.to_json()
        if self.rolled:
            return roll_csv(self.result.data.kc, provenance, self.units)
        return kc_csv(self.result.data.kc, provenance, units=self.units)

    def summary_text(self) -> str:
        kc = self.result.data.kc
        if self.rolled:
            return f"Axle of corner '{kc.measure}' and its mirror: " + "; ".join(roll_summary_lines(kc)) + "."
        stops = f" Stopped: {'; '.join(kc.stops)}." if kc.stops else ""
        return f"Corner '{kc.measure}' at design: " + "; ".join(summary_lines(kc, self.units)) + "." + stops
