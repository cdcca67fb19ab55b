"""`mbstudio kc MODEL [--test corner|axle_roll] [--corner NAME] --out kc.csv [--report kc.pdf] [--units deg,mm]
[--json] [--quiet]`: a suspension corner on a K&C rig (simulation/kc_rig.py).

Kinematics over parallel wheel travel (toe, camber, caster, kingpin inclination, scrub radius, mechanical trail,
wheel-centre recession, track change, roll-centre height, anti-dive and anti-squat, motion ratio, wheel rate) and
compliance under a lateral force and a braking force at the contact patch, a traction force at the wheel centre
and an aligning moment (compliance steer and camber, the contact patch's stiffness and displacement), each point
a static equilibrium of the compliant corner with the chassis held. --out writes the travel curves as CSV and each
load sweep beside it (kc.lateral.csv, …), each with its provenance; --report the page (PDF, PNG or SVG); --json
prints the figures at design as JSON instead of text.

`--test axle_roll` rolls the axle of the corner and its mirror instead (simulation/kc_axle_roll.py): ±--roll deg
over --roll-points at constant axle load, the body free to heave, from the corner's travel sweep (--travel,
--points); --out writes the roll moment, roll stiffness, heave and wheel travels against the roll, --report its page,
--json its figures (roll stiffness at design with and without --tyre-stiffness, the rolls where stops engage)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..io.csv_text import write_output
from ..io.display_units import UNITS_HELP, parse_units
from ..io.json_text import json_text
from ..io.kc_report import kc_csv, kc_json, save_kc_report, summary_lines
from ..io.kc_roll_report import roll_csv, roll_json, roll_summary_lines, save_roll_report
from ..io.suspension_report import PAGE_UNITS, page_format
from ..jobs.tasks import kc_rig
from ..model import ModelError, check_outputs, dumps, load
from ..simulation.kc_rig import CASES, TESTS, KCOptions
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
    "--roll": ("roll", "axle_roll: largest roll each way, deg (default 3)"),
    "--roll-points": ("roll_points", "axle_roll: rolls over the range (default 61)"),
    "--track": ("track", "axle_roll: the axle's track, m (default twice the wheel centre's distance from y = 0)"),
    "--tyre-stiffness": ("tyre_stiffness", "axle_roll: each tyre's vertical stiffness in series, N/m (default rigid)"),
}
ONLY = {  # test -> the flags that apply to it alone
    "corner": ("--lateral-force", "--longitudinal-force", "--aligning-moment", "--load-points"),
    "axle_roll": ("--roll", "--roll-points", "--track", "--tyre-stiffness"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs) with a suspension measure set")
    parser.add_argument("--corner", help="the suspension measure set of the corner (default: the model's first)")
    parser.add_argument("--out", required=True, help="the travel curves as CSV; each load sweep beside it")
    parser.add_argument("--report", help="the page: kc.pdf, kc.png or kc.svg")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP + " (the page: deg,mm)")
    add_json(parser)
    parser.add_argument("--no-gravity", action="store_true", help="leave gravity off the corner's bodies")
    tests = "corner: the corner's K&C (default); axle_roll: the corner and its mirror rolled"
    parser.add_argument("--test", choices=TESTS, default="corner", help=tests)
    for flag, (_, text) in OPTIONS.items():
        parser.add_argument(flag, help=text)


def options_from(args: argparse.Namespace) -> dict:
    """The KCOptions fields the arguments set (numbers read here; KCOptions checks their ranges)."""
    out: dict = {"measure": args.corner, "gravity": not args.no_gravity, "test": args.test}
    for flag, (name, _) in OPTIONS.items():
        text = getattr(args, flag[2:].replace("-", "_"))
        if text is None:
            continue
        other = next((test for test, flags in ONLY.items() if flag in flags and test != args.test), None)
        if other is not None:
            raise ModelError(flag, f"applies to --test {other} only", text, f"--test {other}, or leave {flag} out")
        if name == "axle":
            out[name] = text
            continue
        try:
            out[name] = int(text) if name.endswith("points") else float(text)
        except ValueError:
            raise ModelError(flag, "is not a number", text, OPTIONS[flag][1]) from None
    if "roll" in out:  # typed in deg, its limits shown in deg
        low, high = (math.degrees(v) for v in KCOptions.LIMITS["roll"])
        if not low <= out["roll"] <= high:
            raise ModelError("--roll", "is out of range", args.roll, f"{low:.2g} to {high:.3g} deg")
        out["roll"] = math.radians(out["roll"])
    return out


def run(args: argparse.Namespace) -> int:
    if not args.out.lower().endswith(".csv"):
        raise ModelError("--out", "must end in .csv", args.out, "kc.csv")
    if args.report:
        page_format(args.report, "--report", "kc.pdf")
    rolled = args.test == "axle_roll"
    sidecars = [] if rolled else [str(Path(args.out).with_suffix(f".{case}.csv")) for case in CASES]
    check_outputs([args.out, *sidecars, args.report], [args.file])  # before the work, not after
    units = parse_units(args.units)
    page = PAGE_UNITS if args.units is None else units
    printer = progress_printer()

    def progress(fraction: float, message: str, *_) -> None:
        if not getattr(args, "quiet", False):
            printer(fraction, message)

    result = kc_rig(dumps(load(args.file)), options_from(args), progress, lambda: False)
    if rolled:
        return _write_roll(args, result.data.kc, result.provenance.to_json(), units)
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


def _write_roll(args: argparse.Namespace, test, provenance: dict, units) -> int:
    """The axle roll test's figures on stdout (text or JSON), its curves to --out and its page to --report."""
    if args.json:
        print(json_text(roll_json(test, provenance)).rstrip())
    else:
        print(f"{test.model}, corner '{test.measure}' and its mirror rolled: {len(test.roll.roll)} rolls, "
              f"{provenance['seconds']:.1f} s")  # fmt: skip
        print("\n".join(f"  {line}" for line in roll_summary_lines(test)))
        for stop in test.kc.stops:
            print(f"  stopped: {stop}")
    write_output(args.out, roll_csv(test, provenance, units))
    if args.report:
        save_roll_report(test, provenance, args.report)
    if not args.json:
        print("\n".join(f"wrote {path}" for path in (args.out, args.report) if path))
    return 0
