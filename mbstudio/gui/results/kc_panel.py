"""The K&C rig's result in the window: the page `mbstudio kc --report` writes (io/kc_report.py draws it), scaled to
the panel's width and scrolled, the figures at design above it, and Export as PDF, PNG, SVG or CSV (the travel
curves; the command writes the load sweeps beside them). The suspension report's panel shows it (PagePanel)."""

from __future__ import annotations

from ...io.kc_report import kc_bytes, kc_csv, summary_lines
from .suspension_panel import PagePanel


class KCPanel(PagePanel):
    placeholder = "Run Analysis › K&C… on a model with a suspension measure set (samples/sla_suspension_bushed.mbs)."
    note_text = "The page as `mbstudio kc --report` writes it, in the suspension measures' units."
    export_title, export_stem = "the K&C report", "kc"

    def page_bytes(self, fmt: str) -> bytes:
        return kc_bytes(self.result.data.kc, self.result.provenance.to_json(), fmt, self.units)

    def csv(self):
        return kc_csv(self.result.data.kc, self.result.provenance.to_json(), units=self.units)

    def summary_text(self) -> str:
        kc = self.result.data.kc
        stops = f" Stopped: {'; '.join(kc.stops)}." if kc.stops else ""
        return f"Corner '{kc.measure}' at design: " + "; ".join(summary_lines(kc, self.units)) + "." + stops
