"""`mbstudio sweep FILE --vary NAME=a:b:n [--vary ...] --analysis basepar|kinematics|simulate|linearize [--digits N]
[--samples N] [--t-end T] [--scheduler ADDRESS] [--workers N] --out study.parquet|csv`: one analysis at every
point of a grid of model parameters, each point a task on Dask (an embedded local cluster of processes by
default, or the scheduler at ADDRESS), one row per point."""

from __future__ import annotations

import argparse
import sys

from ..io.csv_text import write_output
from ..io.display_units import UNITS_HELP, parse_units
from ..io.study_table import study_bytes, study_format
from ..jobs.study import ANALYSES, Study, grid
from ..model import check_outputs, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument(
        "--vary", action="append", required=True, metavar="NAME=a:b:n", help="a parameter's grid (repeatable)"
    )
    parser.add_argument("--analysis", choices=list(ANALYSES), required=True, help="what to run at each point")
    parser.add_argument("--digits", type=_whole, help="basepar: variable precision at this many digits")
    parser.add_argument("--method", choices=("dp", "vp", "symbolic", "all"), help="basepar: the route(s)")
    parser.add_argument("--samples", type=_whole, help="trajectory samples (basepar, kinematics) or outputs")
    parser.add_argument("--t-end", type=float, help="simulate: simulated time [s] (default 1)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    parser.add_argument("--workers", type=_whole, default=2, help="local cluster processes (default 2)")
    parser.add_argument("--out", required=True, help="the study table: .parquet or .csv")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP)


def _whole(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def run(args: argparse.Namespace) -> int:
    fmt = study_format(args.out)
    check_outputs([args.out], [args.file])  # before the work, not after
    units = parse_units(args.units)
    model = load(args.file)
    vary = dict(grid(spec) for spec in args.vary)
    options = {k: v for k, v in vars(args).items() if k in ("digits", "method", "samples", "t_end") and v}
    study = Study(model, vary, args.analysis, options, args.scheduler, args.workers)
    print(f"{model.name}: {args.analysis} at {len(study.points)} points on {study.provenance()['scheduler']}")
    rows = study.run(progress=lambda done, total: print(f"\r{done}/{total} points", end="", file=sys.stderr))
    print(file=sys.stderr)
    write_output(args.out, study_bytes(rows, study.provenance(), fmt, units))
    failed = [r for r in rows if r.get("error")]
    print(f"  {len(rows)} rows written to {args.out}; {len(failed)} failed")
    for r in failed[:5]:
        print(f"  failed at {', '.join(f'{k}={r[k]:g}' for k in vary)}: {r['error']}")
    return 0 if rows else 1
