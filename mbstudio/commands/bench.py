"""`mbstudio bench [--only NAME] [--states N] [--json]`: our timings against Pinocchio's, side by side: the CPU time
of the calling thread, both sides interleaved, each row's medians with their interquartile ranges and the ratio's
quartiles (benchmarks/registry.py)."""

from __future__ import annotations

import argparse
import json
import sys

from .. import benchmarks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        choices=list(benchmarks.BENCHMARKS),
        help=f"run only this benchmark (repeatable): {', '.join(benchmarks.BENCHMARKS)}",
    )
    parser.add_argument("--states", type=int, default=10_000, help="states per batch (default 10000)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        rows = benchmarks.run(args.only, args.states)
    except (ImportError, RuntimeError) as exc:
        print(f"mbstudio bench: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(rows, indent=2) if args.json else benchmarks.format_table(rows))
    return 0
