"""`mbstudio kinematics FILE [--trajectory NAME] [--samples N] [--out series.csv|.json] [--units deg,mm]`: the
mechanism along
a trajectory (the model's first by default, else the default exciting path): coordinates, velocities,
accelerations, the drive forces the motion needs, energies, constraint residual and joint reactions, the
same series the window's Kinematics job plots."""

from __future__ import annotations

import argparse

import numpy as np

from ..io.csv_text import write_output
from ..io.display_units import UNITS_HELP, parse_units
from ..io.time_series import FORMATS, time_series_text
from ..jobs.tasks import kinematics
from ..model import ModelError, check_outputs, dumps, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--trajectory", help="the model's trajectory to follow (default: its first)")
    parser.add_argument("--samples", type=_count, help="equally spaced times (default: the trajectory's own)")
    parser.add_argument("--out", help="write every series: .csv ('name [unit]' headers) or .json")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP)
    parser.add_argument(
        "--json", action="store_true", help="print every series as one JSON object (what --out series.json writes)"
    )


def _count(text: str) -> int:
    if not text.isdigit() or not 2 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of samples from 2 to 1000000")
    return int(text)


def run(args: argparse.Namespace) -> int:
    fmt = (args.out or ".csv").rsplit(".", 1)[-1].lower()
    if fmt not in FORMATS:
        raise ModelError("--out", "must end in .csv or .json", args.out, "series.csv or series.json")
    check_outputs([args.out], [args.file])  # before the work, not after
    units = parse_units(args.units)
    options = {"trajectory": args.trajectory, "samples": args.samples}
    result = kinematics(dumps(load(args.file)), options, lambda fraction, message: None, lambda: False)
    series, t = result.data.series, result.data.t
    if args.json:  # stdout is the JSON object alone; a file asked for is written too
        print(time_series_text(result, "json", units).rstrip())
        if args.out:
            write_output(args.out, time_series_text(result, fmt, units))
        return 0
    print(f"{result.title}: {len(t)} samples over {t[-1]:g} s in {result.provenance.seconds:.3g} s")
    for name, values in series.items():
        if name.startswith(("actuator:", "total_energy", "constraint_residual")):
            name, values = units.column(name, values)
            print(f"  {name:32s} min {np.min(values):12.6g}  max {np.max(values):12.6g}")
    if args.out:
        write_output(args.out, time_series_text(result, fmt, units))
        print(f"  {len(series)} series x {len(t)} samples written to {args.out}")
    return 0
