"""`mbstudio manoeuvre FILE --kind steady_state|step_steer|sine_with_dwell|double_lane_change [--speed V ...]
[--handwheel DEG] [--duration S] [--speed-gain N_S_PER_M] [--radius M] [--relaxation none|first_order]
[--out results.csv] [--json] [--quiet]`: a handling
manoeuvre on a vehicle with Magic Formula tyres (samples/vehicle_handling.mbs), its speed held by a speed controller
(0 gain: coasting): its figures printed (or as JSON), its table (steady state: one row per speed; the others: the
time history) written as CSV with a provenance sidecar."""

from __future__ import annotations

import argparse
import sys

from ..io.csv_text import csv_table, write_output
from ..model import ModelError, check_outputs, load
from ..model.document import TYRE_RELAXATIONS
from ..simulation.manoeuvres import KINDS, ManoeuvreOptions, manoeuvre
from ..simulation.run import Cancelled
from .json_option import add_json, say
from .progress import progress_printer
from .simulate import bounded

DEFAULTS = ManoeuvreOptions()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a vehicle model file (.mbs) with Magic Formula tyres and a steering input")
    parser.add_argument(
        "--kind",
        choices=KINDS,
        required=True,
        help="steady_state: ISO 4138 at a constant handwheel angle, one run per speed; "
        "step_steer: ISO 7401, the handwheel stepped at the first speed; "
        "sine_with_dwell: FMVSS 126 / UN R140's stability test at the first speed (0.7 Hz, 0.5 s dwell); "
        "double_lane_change: ISO 3888-1's course with a preview driver from the first speed (give --duration 8); "
        "constant_radius: ISO 4138 on a circle of --radius held by a driver, the speed raised from the first "
        "to the last --speed over --duration",
    )
    parser.add_argument(
        "--speed",
        type=bounded(1.0, 100.0, "m/s"),
        action="append",
        metavar="V",
        help="forward speed [m/s]; repeat for several (steady state); default 20",
    )
    parser.add_argument(
        "--handwheel",
        type=bounded(-720.0, 720.0, "deg"),
        default=DEFAULTS.handwheel,
        help=f"handwheel angle [deg], positive turning left (default {DEFAULTS.handwheel:g})",
    )
    parser.add_argument(
        "--duration",
        type=bounded(0.0, 600.0, "s"),
        default=DEFAULTS.duration,
        help=f"each run's length [s] (default {DEFAULTS.duration:g})",
    )
    parser.add_argument(
        "--speed-gain",
        type=float,  # 0 included: ManoeuvreOptions checks the range and names it
        default=DEFAULTS.speed_gain,
        help="the speed controller's gain [N s/m: drive force per m/s of speed error]; 0 lets the car coast "
        f"(default {DEFAULTS.speed_gain:g})",
    )
    parser.add_argument(
        "--radius",
        type=bounded(5.0, 1000.0, "m"),
        default=DEFAULTS.radius,
        help=f"the constant-radius circle's radius [m] (default {DEFAULTS.radius:g})",
    )
    parser.add_argument(
        "--relaxation",
        choices=TYRE_RELAXATIONS,
        help="every tyre's relaxation: none (forces follow the slips at once) or first_order (through the .tir's "
        "relaxation lengths); default: as the model has it",
    )
    parser.add_argument("--out", help="write the table as CSV ('name [unit]' headers; provenance in OUT.csv.json)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_json(parser)


_progress = progress_printer()  # in place on a terminal, one line per step elsewhere


def run(args: argparse.Namespace) -> int:
    try:
        if args.out and not args.out.lower().endswith(".csv"):
            raise ModelError("--out", "is not a .csv file", args.out, "a file name ending in .csv")
        check_outputs([args.out], [args.file])
        model = load(args.file)
        options = ManoeuvreOptions(
            args.kind,
            tuple(args.speed or DEFAULTS.speeds),
            args.handwheel,
            duration=args.duration,
            speed_gain=args.speed_gain,
            radius=args.radius,
            relaxation=args.relaxation or "",
        )
        result = manoeuvre(model, options, progress=None if args.quiet or args.json else _progress)
    except ModelError as exc:
        print(f"mbstudio manoeuvre: error: {exc}", file=sys.stderr)
        return 2
    except (Cancelled, RuntimeError) as exc:
        print(f"mbstudio manoeuvre: error: {exc}", file=sys.stderr)
        return 1
    p = result.provenance
    lines = [
        f"{model.name}: {args.kind}, {p['simulated_seconds']:g} s simulated in {p['seconds']:.3g} s (real-time "
        f"factor {p['real_time_factor']:.3g}; CPU {p['cpu_seconds']:.3g} s)"
    ]
    lines += [f"  {name}: {value:.6g} {unit}" for name, (value, unit) in result.figures.items()]
    lines += [f"  note: {note}" for note in result.notes]
    figures = {k: {"value": v, "unit": u} for k, (v, u) in result.figures.items()}
    if args.out:
        header = [f"{name} [{unit}]" for name, unit, _ in result.columns]
        rows = zip(*(values for _, _, values in result.columns), strict=True)
        write_output(
            args.out, csv_table(p | {"figures": figures}, header, ([f"{x:.12g}" for x in row] for row in rows))
        )
        lines.append(f"  {len(result.columns[0][2])} rows written to {args.out}")
    say(
        args,
        {
            "model": model.name,
            "kind": args.kind,
            "figures": figures,
            "notes": result.notes,
            "written": [args.out] if args.out else [],
        },
        lines,
    )
    return 0
