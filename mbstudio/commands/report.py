"""`mbstudio report FILE --out report.pdf|png|svg [--csv curves.csv] [--measure NAME] [--travel 100mm]
[--points N] [--units deg,mm]`: the suspension report of a model with a suspension measure set.

One page with the corner's kinematic curves against wheel travel (toe, camber, caster, kingpin inclination, scrub
radius, bump steer, motion ratio, the wheel centre's shifts) and against the steering input where the model has
one, in deg and mm (or in --units); with --csv the curves as CSV, SI unless --units, each with its provenance
beside it (a steering sweep goes beside it as NAME.steer.csv)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.csv_text import write_output
from ..io.display_units import SI, UNITS_HELP, parse_units
from ..io.suspension_report import FORMATS, PAGE_UNITS, curves_csv, save_report, shown
from ..jobs.tasks import suspension_report
from ..model import ModelError, check_outputs, dumps, load
from ..simulation.suspension import POINTS, TRAVEL
from .json_option import add_json, say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs) with a suspension measure set")
    parser.add_argument("--out", required=True, help="the page: report.pdf, report.png or report.svg")
    parser.add_argument("--csv", help="the curves against wheel travel as CSV (SI units, named in the header)")
    parser.add_argument("--measure", help="the suspension measure set to report on (default: the model's first)")
    parser.add_argument(
        "--travel", type=_length, default=TRAVEL, help="bump and rebound each way: 100mm, 0.1 (m); default 100 mm"
    )
    parser.add_argument("--points", type=_count, default=POINTS, help=f"poses over the travel (default {POINTS})")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP + " (the page: deg,mm)")
    add_json(parser)


def _length(text: str) -> float:
    number, factor = (text[:-2], 1e-3) if text.strip().endswith("mm") else (text.removesuffix("m"), 1.0)
    try:
        value = float(number) * factor
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a length: 100mm or 0.1 (m)") from None
    if not 0 < value <= 10:
        raise argparse.ArgumentTypeError(f"{text!r}: the travel each way must be above 0 and at most 10 m")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or not 3 <= int(text) <= 10_001:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of poses from 3 to 10001")
    return int(text)


def run(args: argparse.Namespace) -> int:
    if Path(args.out).suffix.lower().lstrip(".") not in FORMATS:
        raise ModelError("--out", "must end in .pdf, .png or .svg", args.out, "report.pdf")
    if args.csv and not args.csv.lower().endswith(".csv"):
        raise ModelError("--csv", "must end in .csv", args.csv, "curves.csv")
    check_outputs([args.out, args.csv], [args.file])  # before the work, not after
    units = parse_units(args.units)
    page = PAGE_UNITS if args.units is None else units
    options = {"measure": args.measure, "travel": args.travel, "points": args.points}
    result = suspension_report(dumps(load(args.file)), options, lambda *_: None, lambda: False)
    curves, provenance = result.data.curves, result.provenance.to_json()
    save_report(curves, provenance, args.out, page)
    written = [args.out]
    if args.csv:
        write_output(args.csv, curves_csv(curves, provenance, units=units))
        written.append(args.csv)
        if curves.steer is not None:
            steer = str(Path(args.csv).with_suffix(".steer.csv"))
            write_output(steer, curves_csv(curves, provenance, "steer", units))
            written.append(steer)
    say(args, {**figures(curves), "written": written}, [summary(curves, page), *(f"wrote {p}" for p in written)])
    return 0


def figures(curves) -> dict:
    """Each curve at the design position and over the travel, in SI, for --json."""
    travel = curves.travel.x
    design = {name: float(value) + 0.0 for name, (_, value) in curves.design.items()}  # + 0.0: no -0
    named = {
        name: {"unit": unit, "design": design.get(name), "min": float(min(v)) + 0.0, "max": float(max(v)) + 0.0}
        for name, (unit, v) in curves.travel.curves.items()
    }
    return {
        "model": curves.model,
        "measure": curves.measure,
        "poses": len(travel),
        "wheel_travel_m": [float(travel[0]), float(travel[-1])],
        "curves": named,
        "stops": list(curves.stops),
        "notes": list(curves.notes),
    }


def summary(curves, units=SI) -> str:
    """Each curve at the design position and over the travel, in `units`' suspension pair."""
    length, x = shown("m", curves.travel.x, units)
    travel = f"wheel travel {x[0]:+.4g} to {x[-1]:+.4g} {length}"
    lines = [f"{curves.model}, corner '{curves.measure}': {len(x)} poses, {travel}"]
    design = curves.design
    for name, (unit, values) in curves.travel.curves.items():
        shown_unit, y = shown(unit, values, units)
        _, at = shown(*design[name], units)
        lines.append(
            f"  {name:20s} {float(at) + 0.0:10.4g} at design, {y.min():10.4g} to {y.max():10.4g} [{shown_unit}]"
        )
    lines += [f"  stopped: {s}" for s in curves.stops] + [f"  not swept: {n}" for n in curves.notes]
    return "\n".join(lines)
