"""`mbstudio manoeuvre FILE --kind steady_state|step_steer|sine_with_dwell|double_lane_change [--speed V ...]
[--handwheel DEG] [--duration S] [--out results.csv]`: a handling manoeuvre on a vehicle with Magic Formula tyres
(samples/vehicle_handling.mbs): its figures printed, its table (steady state: one row per speed; the others: the
time history) written as CSV with a provenance sidecar."""

from __future__ import annotations

import argparse
import sys

from ..io.csv_text import csv_table, write_output
from ..model import ModelError, check_outputs, load
from ..simulation.manoeuvres import KINDS, ManoeuvreOptions, manoeuvre
from ..simulation.run import Cancelled
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
        "double_lane_change: ISO 3888-1's course with a preview driver from the first speed (give --duration 8)",
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
    parser.add_argument("--out", help="write the table as CSV ('name [unit]' headers; provenance in OUT.csv.json)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _progress(fraction: float) -> None:
    print(f"\r{100 * fraction:5.1f} %", end="" if fraction < 1 else "\n", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    if args.out and not args.out.lower().endswith(".csv"):
        print(f"mbstudio manoeuvre: --out {args.out!r} must end in .csv", file=sys.stderr)
        return 2
    check_outputs([args.out], [args.file])
    model = load(args.file)
    try:
        options = ManoeuvreOptions(
            args.kind, tuple(args.speed or DEFAULTS.speeds), args.handwheel, duration=args.duration
        )
        result = manoeuvre(model, options, progress=None if args.quiet else _progress)
    except ModelError as exc:
        print(f"mbstudio manoeuvre: {exc}", file=sys.stderr)
        return 2
    except (Cancelled, RuntimeError) as exc:
        print(f"mbstudio manoeuvre: {exc}", file=sys.stderr)
        return 1
    p = result.provenance
    print(
        f"{model.name}: {args.kind}, {p['simulated_seconds']:g} s simulated in {p['seconds']:.3g} s (real-time "
        f"factor {p['real_time_factor']:.3g}; CPU {p['cpu_seconds']:.3g} s)"
    )
    for name, (value, unit) in result.figures.items():
        print(f"  {name}: {value:.6g} {unit}")
    if args.out:
        header = [f"{name} [{unit}]" for name, unit, _ in result.columns]
        rows = zip(*(values for _, _, values in result.columns), strict=True)
        provenance = p | {"figures": {k: {"value": v, "unit": u} for k, (v, u) in result.figures.items()}}
        write_output(args.out, csv_table(provenance, header, ([f"{x:.12g}" for x in row] for row in rows)))
        print(f"  {len(result.columns[0][2])} rows written to {args.out}")
    return 0
