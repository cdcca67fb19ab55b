"""The K&C axle roll test's page, CSV and JSON (simulation/kc_axle_roll.py): the roll moment and the roll stiffness
against the suspension's roll angle, with the tyres' where the test has them, in deg, kN m and N m/deg; the CSV in
SI (or --units) with every header naming its unit and the provenance beside it.

    save_roll_report(test, provenance, "roll.pdf")
    write_output("roll.csv", roll_csv(test, provenance))
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..model import write_atomic
from ..simulation.kc_axle_roll import STEP, AxleRollTest
from .csv_text import CsvTable
from .display_units import SI, DisplayUnits
from .suspension_report import DESIGN, LINE, figure_bytes, page_footer, page_format, style_axes, sweep_csv, wrap_words

PAGE = (11.69, 5.2)  # in: A4 landscape's width, two panels and the notes


def per_degree(value: float) -> float:
    """A roll stiffness in N m/rad as N m/deg."""
    return value * math.pi / 180


def roll_summary_lines(test: AxleRollTest) -> list[str]:
    """The figures as engineers quote them: stiffness in N m/deg, rolls in deg, travels in mm."""
    f = test.figures
    lines = [
        f"track: {f['track'][1]:.4f} m",
        f"roll stiffness at design: {per_degree(f['roll_stiffness'][1]):.4g} N m/deg",
        f"largest roll stiffness: {per_degree(f['largest_roll_stiffness'][1]):.4g} N m/deg",
    ]
    if test.tyre_stiffness is not None:
        lines.insert(2, f"with the tyres ({test.tyre_stiffness:.4g} N/m): "
                        f"{per_degree(f['roll_stiffness_with_tyres'][1]):.4g} N m/deg")  # fmt: skip
    roll = f["first_stop_roll"][1]
    if math.isnan(roll):
        return lines + ["no stop reached: the stiffness stays within 10 % of the design's"]
    left, right = (f[f"first_stop_{w}_travel"][1] * 1e3 for w in ("left", "right"))
    percent, full = 100 * (STEP - 1), math.degrees(f["largest_stiffness_roll"][1])
    lines.append(f"stiffness up {percent:.0f} % from {math.degrees(roll):.3g} deg of roll (a stop: wheel travels "
                 f"left {left:+.1f} mm, right {right:+.1f} mm); within {percent:.0f} % of the largest from "
                 f"{full:.3g} deg; rolled the other way, the same mirrored")  # fmt: skip
    return lines


def roll_figure(test: AxleRollTest, provenance: dict | None = None) -> Figure:
    """Roll moment and roll stiffness against the suspension's roll (and against the roll with the tyres)."""
    figure = Figure(figsize=PAGE, dpi=100, layout="constrained")
    figure.suptitle(f"K&C axle roll: {test.model}, corner '{test.measure}' and its mirror, {test.track:.4g} m "
                    "apart, the axle load held, the body free to heave", fontsize=10, x=0.01, ha="left")  # fmt: skip
    moment_axes, stiffness_axes, notes = figure.subplots(1, 3, width_ratios=[1.0, 1.0, 0.7])
    r, tyres = test.roll, test.tyre_stiffness is not None
    roll = np.degrees(r.roll)
    moment_axes.plot(roll, r.moment / 1e3, color=LINE, linewidth=1.6, label="suspension roll")
    stiffness_axes.plot(roll, per_degree(r.stiffness), color=LINE, linewidth=1.6, label="suspension")
    if tyres:
        total = np.degrees(r.total_roll)
        moment_axes.plot(total, r.moment / 1e3, "--", color=DESIGN, linewidth=1.4, label="with the tyres")
        stiffness_axes.plot(total, per_degree(r.total_stiffness), "--", color=DESIGN, linewidth=1.4,
                            label="through the tyres")  # fmt: skip
    moment_axes.set_title("roll moment [kN m]", fontsize=9, loc="left")
    stiffness_axes.set_title("roll stiffness [N m/deg]", fontsize=9, loc="left")
    for axes in (moment_axes, stiffness_axes):
        axes.set_xlabel("roll [deg] (right side down +)", fontsize=8)
        axes.legend(fontsize=7, frameon=False)
        style_axes(axes)
    notes.set_axis_off()
    text = "\n".join(wrap_words(line, 44) for line in roll_summary_lines(test))
    if provenance:
        text += f"\n\n{wrap_words(page_footer(provenance), 44)}"
    notes.text(0, 1, text, va="top", ha="left", fontsize=7.5, transform=notes.transAxes)
    return figure


def roll_bytes(test: AxleRollTest, provenance: dict | None, fmt: str) -> bytes:
    title = f"K&C axle roll: {test.model}, corner '{test.measure}'"
    return figure_bytes(lambda: roll_figure(test, provenance), title, provenance, fmt)


def save_roll_report(test: AxleRollTest, provenance: dict | None, path: str | Path) -> None:
    """The page written atomically to `path`, its format from the suffix (.png, .svg, .pdf)."""
    write_atomic(path, roll_bytes(test, provenance, page_format(path, "--report", "roll.pdf")))


def roll_csv(test: AxleRollTest, provenance: dict, units: DisplayUnits = SI) -> CsvTable:
    """The roll, then the moment, stiffness, heave and each wheel's travel (and the tyres' roll and stiffness)."""
    return sweep_csv(test.sweep(), provenance, units)


def roll_json(test: AxleRollTest, provenance: dict) -> dict:
    """The figures (SI), the stops the rig's sweep met and the provenance, as plain data."""
    return {
        "model": test.model,
        "measure": test.measure,
        "test": "axle_roll",
        "figures": {name: {"unit": unit, "value": float(v)} for name, (unit, v) in test.figures.items()},
        "stops": list(test.kc.stops),
        "provenance": provenance,
    }
