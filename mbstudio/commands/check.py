"""`mbstudio check FILE [--json]`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ..dynamics.pkm.report import format_pkm
from ..io.json_text import json_text
from ..model import load
from ..report import check, format_report

BIG_MODEL_BYTES = 1_000_000  # a file this large (about 2 000 bodies) is checked with its steps said on stderr
LINKAGE = "  parallel machine: no (one degree of freedom: a linkage, whose coupler its loop drives, not a platform)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    say = _progress() if _size(args.file) >= BIG_MODEL_BYTES else None
    if say:
        say("reading the model")
    model = load(args.file)
    report = check(model, say)
    text = format_report(report) + "\n" + _machine_text(report)
    if "engine" in report:
        text += f"\nengine: {report['engine']}"
    print(json_text(report).rstrip() if args.json else text)  # strict: a NaN residual is "nan"
    return 0 if report["assembled"] else 1


def _machine_text(report: dict) -> str:
    """What the check says of a parallel machine: its structure, or in words why the model is none."""
    if report.get("linkage"):
        return LINKAGE
    if carried := report.get("carried_body"):
        why = carried["why_not"].split(": ", 1)[-1].split(" (got")[0]
        return (
            f"  parallel machine: no (a closed-loop mechanism: body '{carried['body']}' is carried by several chains, "
            f"but {why})"
        )
    return format_pkm(report["pkm"])


def _progress() -> Callable[[str], None]:
    """Steps on stderr, each with the seconds since the check began."""
    start = time.perf_counter()

    def say(text: str) -> None:
        print(f"check: {time.perf_counter() - start:6.1f} s  {text}", file=sys.stderr, flush=True)

    return say


def _size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0  # load names the file's problem
