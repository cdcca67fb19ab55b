"""The K&C report: a corner's kinematic curves against wheel travel and its compliance under each load
(simulation/kc_rig.py) on one page, in the units suspension engineers read (deg, mm, kN; compliance steer in
deg/kN, stiffness in N/mm), as PNG, SVG or PDF; each sweep as CSV, in SI with every header naming its unit.
The page's parts (unit conversion, panel style, footer, file bytes) are the suspension report's.

    result = kc_analysis(model)
    save_kc_report(result, provenance, "kc.pdf")
    write_output("kc.csv", kc_csv(result, provenance))              # the travel sweep
    write_output("kc.lateral.csv", kc_csv(result, provenance, "lateral"))
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..model import ModelError, write_atomic
from ..simulation.kc_rig import CASES, KCResult
from .csv_text import CsvTable
from .display_units import SI, DisplayUnits
from .suspension_report import (
    DPI,
    LINE,
    PAGE_UNITS,
    figure_bytes,
    page_footer,
    page_format,
    shown,
    style_axes,
    sweep_csv,
    travel_panel,
    wrap_words,
)

PAGE = (11.69, 16.54)  # in: A3 portrait, kinematics above, compliance below
# travel curve -> (title, sign convention)
TRAVEL_PANELS = {
    "toe": ("toe", "toe-in +"),
    "camber": ("camber", "top outboard +"),
    "caster": ("caster", "kingpin top rearward +"),
    "kingpin_inclination": ("kingpin inclination", "top inboard +"),
    "scrub_radius": ("scrub radius", "kingpin inboard of the contact +"),
    "mechanical_trail": ("mechanical trail", "kingpin ahead of the contact +"),
    "bump_steer": ("bump steer", "toe rate per travel"),
    "motion_ratio": ("motion ratio", "spring over wheel travel"),
    "wheel_rate": ("wheel rate", "vertical load per travel"),
    "vertical_load": ("vertical load", "the rig's, upward +"),
    "wheel_centre_recession": ("wheel-centre recession", "rearward +"),
    "track_change": ("track change (contact patch)", "outboard +"),
    "roll_centre_height": ("roll-centre height", "above the ground +"),
    "anti_braking": ("anti-dive / anti-lift (braking)", "% of the load transfer"),
    "anti_traction": ("anti-lift / anti-squat (traction)", "% of the load transfer"),
}
CASE_TITLES = {
    "lateral": "lateral force at the\ncontact patch",
    "braking": "longitudinal force at the contact\npatch (braking −)",
    "traction": "longitudinal force at the wheel\ncentre (traction +)",
    "aligning": "aligning moment about\nthe vertical",
}
MOVING = {"lateral": "contact", "braking": "contact", "traction": "centre", "aligning": "contact"}


def headline(unit: str, value: float, units: DisplayUnits = PAGE_UNITS) -> tuple[str, float]:
    """A K&C figure as engineers quote it: an angle per kN or kN m, a stiffness in N/mm, in the suspension pair."""
    if unit.startswith("rad/"):
        angle, shown_value = shown("rad", value, units)
        return f"{angle}/k{unit[4:]}", float(shown_value) * 1e3
    if unit == "N/m":
        length, size = shown("m", 1.0, units)
        return f"N/{length}", value / float(size) if np.isfinite(value) else value
    name, shown_value = shown(unit, value, units)
    return name, float(shown_value)


def summary_lines(result: KCResult, units: DisplayUnits = PAGE_UNITS) -> list[str]:
    """The headline figures at design, one per line."""
    lines = []
    for name, (unit, value) in result.summary.items():
        shown_unit, v = headline(unit, value, units)
        lines.append(f"{name.replace('_', ' ')}: {v:.4g} {shown_unit}")
    return lines


def kc_figure(result: KCResult, provenance: dict | None = None, units: DisplayUnits = PAGE_UNITS) -> Figure:
    """The page: the kinematic curves against wheel travel, then per load case toe, camber and the loaded point's
    displacement against the load, with the figures at design; the provenance at the foot."""
    figure = Figure(figsize=PAGE, dpi=DPI, layout="constrained")
    top, bottom = figure.subfigures(2, 1, height_ratios=[1.0, 1.0])
    top.suptitle(_title(result, units), fontsize=11, x=0.01, ha="left")
    panels = list(top.subplots(4, 4).ravel())
    names = [n for n in TRAVEL_PANELS if n in result.travel.curves]
    for axes, name in zip(panels, names, strict=False):
        travel_panel(axes, result.travel, name, None, units, TRAVEL_PANELS)
    for axes in panels[len(names) :]:
        axes.set_axis_off()
    notes = _notes(result) + (f"\n\n{wrap_words(page_footer(provenance), 40)}" if provenance else "")
    panels[-1].text(0, 1, notes, va="top", ha="left", fontsize=6.5, transform=panels[-1].transAxes).set_in_layout(False)
    bottom.suptitle("Compliance at the design height (the chassis held, the wheel centre's height held)",
                    fontsize=10, x=0.01, ha="left")  # fmt: skip
    grid = bottom.subplots(len(CASES), 4)
    for row, case in zip(grid, CASES, strict=True):
        _load_row(row, result, case, units)
    return figure


def _title(result: KCResult, units: DisplayUnits) -> str:
    length, travel = shown("m", result.travel.x, units)
    return (
        f"K&C report: {result.model}, corner '{result.measure}'\n"
        f"Parallel wheel travel {travel.min():+.4g} to {travel.max():+.4g} {length} (bump +), each point a static "
        f"equilibrium of the compliant corner, the chassis held; gravity {'on' if result.options.gravity else 'off'}"
    )


def _load_row(row, result: KCResult, case: str, units: DisplayUnits) -> None:
    sweep, rates = result.loads[case], result.gradients[case]
    per = CASES[case][3]
    x = np.asarray(sweep.x) / 1e3
    where = MOVING[case]
    for axes, name in zip(row[:2], ("toe", "camber"), strict=True):
        unit, y = shown(*sweep.curves[name], units)
        axes.plot(x, y, color=LINE, linewidth=1.6)
        axes.set_title(f"{name} [{unit}]", fontsize=8, loc="left")
    row[0].set_ylabel(CASE_TITLES[case], fontsize=7, color="#606060")
    axes = row[2]
    for axis, style in zip("xyz", ("-", "--", ":"), strict=True):
        unit, y = shown(*sweep.curves[f"{where}_{axis}"], units)
        axes.plot(x, y, style, color=LINE, linewidth=1.4, label=axis)
    axes.legend(fontsize=7, frameon=False)
    axes.set_title(f"{'contact patch' if where == 'contact' else 'wheel centre'} displacement [{unit}]", fontsize=8,
                   loc="left")  # fmt: skip
    for axes in row[:3]:
        axes.set_xlabel(f"{sweep.name} [k{per}]", fontsize=8)
        style_axes(axes)
    row[3].set_axis_off()
    lines = [f"At design, per k{per}:"]
    for name in ("toe", "camber"):
        unit, value = headline(*rates[name], units)
        lines.append(f"  {name}: {value:+.4g} {unit}")
    for axis in "xyz":
        unit, value = rates[f"{where}_{axis}"]
        shown_unit, v = shown("m", value, units)
        lines.append(f"  {where} {axis}: {float(v) * 1e3:+.4g} {shown_unit}/k{per}")
    row[3].text(0, 1, "\n".join(lines), va="top", ha="left", fontsize=8, transform=row[3].transAxes)


def _notes(result: KCResult) -> str:
    o = result.options
    lines = [
        "Dot: the design position. Axes and senses: ISO 8855 (x forward, y left, z up); forces on the wheel from "
        "the ground; toe-in and camber top-outboard positive.",
        f"Anti-dive and anti-squat for a {o.axle} axle: wheelbase {o.wheelbase:g} m, centre of mass {o.cg_height:g} "
        f"m high, {100 * o.brake_front_share:g} % of braking on the front, {100 * o.drive_share:g} % of this "
        "axle's traction driven (docs/kc.md).",
        f"Held by the rig: {', '.join(result.provenance.get('held', [])) or 'nothing'}.",
    ]
    lines += [f"Stopped: {s}" for s in result.stops]
    return "\n\n".join(wrap_words(line, 40) for line in lines)


def kc_bytes(result: KCResult, provenance: dict | None, fmt: str, units: DisplayUnits = PAGE_UNITS) -> bytes:
    title = f"K&C report: {result.model}, corner '{result.measure}'"
    return figure_bytes(lambda: kc_figure(result, provenance, units), title, provenance, fmt)


def save_kc_report(
    result: KCResult, provenance: dict | None, path: str | Path, units: DisplayUnits = PAGE_UNITS
) -> None:
    """The page written atomically to `path`, its format from the suffix (.png, .svg, .pdf)."""
    write_atomic(path, kc_bytes(result, provenance, page_format(path, "--report", "kc.pdf"), units))


def kc_csv(result: KCResult, provenance: dict, sweep: str = "travel", units: DisplayUnits = SI) -> CsvTable:
    """One sweep (the travel, or a load case) as a CSV table: the swept quantity, then each curve, every header
    with its unit (SI unless `units` say otherwise), the provenance beside it (io/csv_text.py)."""
    if sweep != "travel" and sweep not in result.loads:
        raise ModelError("sweep", "is not in this K&C result", sweep, "travel, " + ", ".join(result.loads))
    return sweep_csv(result.travel if sweep == "travel" else result.loads[sweep], provenance, units)


def kc_json(result: KCResult, provenance: dict) -> dict:
    """The figures at design (SI), the gradients per case and the provenance, as plain data."""

    def pairs(values: dict) -> dict:
        return {name: {"unit": unit, "value": float(v)} for name, (unit, v) in values.items()}

    return {
        "model": result.model,
        "measure": result.measure,
        "summary": pairs(result.summary),
        "design": pairs(result.design),
        "gradients": {case: pairs(rates) for case, rates in result.gradients.items()},
        "stops": list(result.stops),
        "provenance": provenance,
    }
