"""The suspension report: one page with a corner's kinematic curves against wheel travel (and against the steering
input where the model has one), in the units suspension engineers read (deg, mm), as PNG, SVG or PDF; and the
curves as CSV, in SI with every header naming its unit. Drawn by matplotlib without a window (its Agg, SVG and
PDF back-ends), so the command line, Python and the window make the same page.

    curves = suspension_curves(model)                 # mbstudio.simulation.suspension
    save_report(curves, provenance, "report.pdf")     # or .png, .svg
    write_output("curves.csv", curves_csv(curves, provenance))   # io/csv_text.py: the table and its sidecar
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..model import ModelError, write_atomic
from ..simulation.suspension import SuspensionCurves, Sweep
from .csv_text import CsvTable, numeric_table
from .display_units import SI, DisplayUnits

FORMATS = ("png", "svg", "pdf")
PAGE = (11.69, 8.27)  # in: A4 landscape
DPI = 150  # PNG: a page 1754 pixels wide
# curve -> (title, sign convention)
PANELS = {
    "toe": ("toe", "toe-in +"),
    "camber": ("camber", "top outboard +"),
    "caster": ("caster", "kingpin top rearward +"),
    "kingpin_inclination": ("kingpin inclination", "top inboard +"),
    "scrub_radius": ("scrub radius", "kingpin inboard of the contact +"),
    "bump_steer": ("bump steer", "toe rate per travel"),
    "motion_ratio": ("motion ratio", "damper over wheel travel"),
    "lateral_shift": ("wheel centre, lateral", "outboard +"),
    "longitudinal_shift": ("wheel centre, longitudinal", "forward +"),
}
PAGE_UNITS = DisplayUnits()  # the suspension measures' pair: deg and mm
LINE, DESIGN = "#1f4e99", "#c0392b"


def shown(unit: str, values, units: DisplayUnits = PAGE_UNITS):
    """Values in SI `unit` as the page shows them, every angle and length in the suspension measures' units:
    (unit, values); '–' for a ratio."""
    page = DisplayUnits(
        units.suspension_angle, units.suspension_length, units.suspension_angle, units.suspension_length
    )
    name, size = page.unit(unit)
    return ("–" if name == "1" else name), np.asarray(values, float) / size


def report_figure(curves: SuspensionCurves, provenance: dict | None = None, units: DisplayUnits = PAGE_UNITS) -> Figure:
    """The page: a title with the design position's values, a panel per curve against wheel travel, the
    steering sweep (or what the model has no sweep for) in the last panel, the provenance at the foot."""
    figure = Figure(figsize=PAGE, dpi=DPI, layout="constrained")
    figure.suptitle(_title(curves, units), fontsize=11, x=0.01, ha="left")
    names = [n for n in PANELS if n in curves.travel.curves]
    grid = figure.subplots(3, 4)
    panels = list(grid.ravel())
    first = None
    for axes, name in zip(panels, names, strict=False):
        travel_panel(axes, curves.travel, name, first, units)
        first = first or axes
    rest = panels[len(names) :]
    if curves.steer is not None and rest:
        _steer_panel(rest.pop(0), curves.steer, units)
    for axes in rest:
        axes.set_axis_off()
    if rest:
        text = _notes(curves) + (f"\n\n{page_footer(provenance)}" if provenance else "")
        notes = rest[0].text(0, 1, text, va="top", ha="left", fontsize=8, transform=rest[0].transAxes)
        notes.set_in_layout(False)  # the panels keep their widths
    return figure


def _title(curves: SuspensionCurves, units: DisplayUnits) -> str:
    length, travel = shown("m", curves.travel.x, units)
    design = curves.design
    values = []
    for name in ("toe", "camber", "caster", "kingpin_inclination", "scrub_radius", "motion_ratio"):
        if name in design:
            unit, value = shown(*design[name], units)
            values.append(f"{PANELS[name][0]} {float(value) + 0.0:.2f} {unit}".replace(" –", ""))
    return (
        f"Suspension report: {curves.model}, corner '{curves.measure}'\n"
        f"Parallel wheel travel {travel.min():+.4g} to {travel.max():+.4g} {length} (bump +), driven by "
        f"{curves.driver}, the other coordinates held.\nAt the design position: " + ", ".join(values)
    )


def travel_panel(axes, sweep: Sweep, name: str, share, units: DisplayUnits, panels: dict = PANELS) -> None:
    unit, values = shown(*sweep.curves[name], units)
    length, x = shown("m", sweep.x, units)
    axes.plot(x, values, color=LINE, linewidth=1.6)
    k = int(np.abs(x).argmin())
    axes.plot([x[k]], [values[k]], "o", color=DESIGN, markersize=4)
    title, sense = panels[name]
    axes.set_title(f"{title} [{unit}]", fontsize=9, loc="left")
    axes.set_ylabel(sense, fontsize=7, color="#606060")
    axes.set_xlabel(f"wheel travel [{length}]", fontsize=8)
    style_axes(axes)
    if share is not None:
        axes.sharex(share)


def _steer_panel(axes, sweep: Sweep, units: DisplayUnits) -> None:
    x_unit, x = shown(sweep.unit, sweep.x, units)
    for (name, (unit, values)), style in zip(sweep.curves.items(), ("-", "--"), strict=False):
        shown_unit, y = shown(unit, values, units)
        axes.plot(x, y, style, color=LINE, linewidth=1.4, label=f"{PANELS[name][0]} [{shown_unit}]")
    axes.set_title("steering: toe and camber at the design height", fontsize=9, loc="left")
    axes.set_xlabel(f"{sweep.name} [{x_unit}] (from the document's value)", fontsize=8)
    axes.legend(fontsize=7, frameon=False)
    style_axes(axes)


def style_axes(axes) -> None:
    axes.tick_params(labelsize=7)
    axes.grid(True, color="#dddddd", linewidth=0.6)
    axes.axvline(0.0, color="#999999", linewidth=0.6)


def _notes(curves: SuspensionCurves) -> str:
    lines = ["Dot: the design position (the document's pose)."]
    lines += [f"Stopped: {s}" for s in curves.stops]
    lines += [f"Not swept: {n}" for n in curves.notes]
    lines.append("Senses: SAE J670 / ISO 8855, x forward, y left, z up.")
    return "\n\n".join(wrap_words(line) for line in lines)


def wrap_words(text: str, width: int = 56) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join([*lines, line])


def page_footer(provenance: dict) -> str:
    return (
        f"MB Studio {provenance.get('version', '')}, model sha256 {str(provenance.get('model_hash', ''))[:16]}…,\n"
        f"{provenance.get('method', '')}, {provenance.get('seconds', 0.0):.1f} s"
    )


def report_bytes(
    curves: SuspensionCurves, provenance: dict | None, fmt: str, units: DisplayUnits = PAGE_UNITS
) -> bytes:
    """The page as the bytes of a PNG, SVG or PDF file, the provenance in its metadata."""
    title = f"Suspension report: {curves.model}, corner '{curves.measure}'"
    return figure_bytes(lambda: report_figure(curves, provenance, units), title, provenance, fmt)


def figure_bytes(draw, title: str, provenance: dict | None, fmt: str) -> bytes:
    """The page `draw()` makes as the bytes of a PNG, SVG or PDF file, its title and the provenance in its
    metadata (a format other than those is refused before drawing)."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise ModelError("report", "is written as PNG, SVG or PDF", fmt, ", ".join(FORMATS))
    figure = draw()
    about = str(provenance or "")
    metadata = {
        "png": {"Title": title, "Description": about, "Software": "MB Studio"},
        "svg": {"Title": title, "Description": about, "Date": None},
        "pdf": {"Title": title, "Subject": about, "Creator": "MB Studio", "CreationDate": None},
    }[fmt]
    out = io.BytesIO()
    figure.savefig(out, format=fmt, metadata=metadata)
    return out.getvalue()


def save_report(
    curves: SuspensionCurves, provenance: dict | None, path: str | Path, units: DisplayUnits = PAGE_UNITS
) -> None:
    """The page written atomically to `path`, its format from the suffix (.png, .svg, .pdf)."""
    write_atomic(path, report_bytes(curves, provenance, page_format(path, "--out", "report.pdf"), units))


def page_format(path: str | Path, flag: str, example: str) -> str:
    """A page's format from its file's suffix, or a ModelError naming the option `flag` that gave it."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ModelError(flag, "must end in .png, .svg or .pdf", str(path), example)
    return fmt


def curves_csv(curves: SuspensionCurves, provenance: dict, sweep: str = "travel", units: DisplayUnits = SI) -> CsvTable:
    """A sweep's curves as a CSV table (SI unless `units` say otherwise): the swept quantity, then each curve,
    every header with its unit, the provenance beside it (io/csv_text.py)."""
    data = curves.travel if sweep == "travel" else curves.steer
    if data is None:
        raise ModelError("sweep", "is not in this report", sweep, "travel" + (", steer" if curves.steer else ""))
    return sweep_csv(data, provenance, units)


def sweep_csv(data: Sweep, provenance: dict, units: DisplayUnits = SI) -> CsvTable:
    """The swept quantity, then each curve, every header with its unit, the provenance beside it."""
    names = list(data.curves)
    header = [f"{data.name} [{data.unit}]"] + [f"{name} [{data.curves[name][0]}]" for name in names]
    columns = np.column_stack([data.x, *(data.curves[name][1] for name in names)])
    return numeric_table(provenance, header, columns, units, blank=True)
