"""`mbstudio kc MODEL [--corner NAME] --out kc.csv [--report kc.pdf] [--units deg,mm] [--json] [--quiet]`: a
suspension corner on a K&C rig (simulation/kc_rig.py).

Kinematics over parallel wheel travel (toe, camber, caster, kingpin inclination, scrub radius, mechanical trail,
wheel-centre recession, track change, roll-centre height, anti-dive and anti-squat, motion ratio, wheel rate) and
compliance under a lateral force and a braking force at the contact patch, a traction force at the wheel centre
and an aligning moment (compliance steer and camber, the contact patch's stiffness and displacement), each point
a static equilibrium of the compliant corner with the chassis held. --out writes the travel curves as CSV and each
load sweep beside it (kc.lateral.csv, …), each with its provenance; --report the page (PDF, PNG or SVG); --json
prints the figures at design as JSON instead of text."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.csv_text import write_output
from ..io.display_units import UNITS_HELP, parse_units
from ..io.json_text import json_text
from ..io.kc_report import kc_csv, kc_json, save_kc_report, summary_lines
from ..io.suspension_report import PAGE_UNITS, page_format
from ..jobs.tasks import kc_rig
from ..model import ModelError, check_outputs, dumps, load
from ..simulation.kc_rig import CASES
from .json_option import add_json
from .progress import progress_printer

OPTIONS = {  # flag -> (KCOptions field, help)
    "--travel": ("travel", "wheel travel each way, m (default 0.08)"),
    "--lateral-force": ("lateral_force", "largest lateral force each way, N (default 4000)"),
    "--longitudinal-force": ("longitudinal_force", "largest longitudinal force each way, N (default 4000)"),
    "--aligning-moment": ("aligning_moment", "largest aligning moment each way, N m (default 200)"),
    "--points": ("travel_points", "equilibria over the travel (default 33)"),
    "--load-points": ("load_points", "equilibria over each load sweep (default 21)"),
    "--axle": ("axle", "front or rear, for anti-dive and anti-squat (default front)"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs) with a suspension measure set")
    parser.add_argument("--corner", help="the suspension measure set of the corner (default: the model's first)")
    parser.add_argument("--out", required=True, help="the travel curves as CSV; each load sweep beside it")
    parser.add_argument("--report", help="the page: kc.pdf, kc.png or kc.svg")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP + " (the page: deg,mm)")
    add_json(parser)
    parser.add_argument("--no-gravity", action="store_true", help="leave gravity off the corner's bodies")
    for flag, (_, text) in OPTIONS.items():
        parser.add_argument(flag, help=text)


def options_from(args: argparse.Namespace) -> dict:
    """The KCOptions fields the arguments set (numbers read here; KCOptions checks their ranges)."""
    out: dict = {"measure": args.corner, "gravity": not args.no_gravity}
    for flag, (name, _) in OPTIONS.items():
        text = getattr(args, flag[2:].replace("-", "_"))
        if text is None:
            continue
        if name == "axle":
            out[name] = text
            continue
        try:
            out[name] = int(text) if name.endswith("points") else float(text)
        except ValueError:
            raise ModelError(flag, "is not a number", text, OPTIONS[flag][1]) from None
    return out


def run(args: argparse.Namespace) -> int:
    if not args.out.lower().endswith(".csv"):
        raise ModelError("--out", "must end in .csv", args.out, "kc.csv")
    if args.report:
        page_format(args.report, "--report", "kc.pdf")
    sidecars = [str(Path(args.out).with_suffix(f".{case}.csv")) for case in CASES]
    check_outputs([args.out, *sidecars, args.report], [args.file])  # before the work, not after
    units = parse_units(args.units)
    page = PAGE_UNITS if args.units is None else units
    printer = progress_printer()

    def progress(fraction: float, message: str, *_) -> None:
        if not getattr(args, "quiet", False):
            printer(fraction, message)

    result = kc_rig(dumps(load(args.file)), options_from(args), progress, lambda: False)
    kc, provenance = result.data.kc, result.provenance.to_json()
    if args.json:
        print(json_text(kc_json(kc, provenance)).rstrip())  # strict JSON: a NaN gradient as "nan"
    else:
        print(f"{kc.model}, corner '{kc.measure}': {len(kc.travel.x)} points of travel, {provenance['seconds']:.1f} s")
        print("\n".join(f"  {line}" for line in summary_lines(kc, page)))
        print("\n".join(f"  stopped: {s}" for s in kc.stops))
    say = (lambda text: None) if args.json else print
    write_output(args.out, kc_csv(kc, provenance, units=units))
    say(f"wrote {args.out}")
    for case, path in zip(kc.loads, sidecars, strict=True):
        write_output(path, kc_csv(kc, provenance, case, units))
        say(f"wrote {path}")
    if args.report:
        save_kc_report(kc, provenance, args.report, page)
        say(f"wrote {args.report}")
    return 0
