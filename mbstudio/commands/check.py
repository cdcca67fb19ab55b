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
    text = format_report(report) + "\n" + (LINKAGE if report.get("linkage") else format_pkm(report["pkm"]))
    if report.get("engine_build_seconds") is not None:
        text += f"\nengine: built in {report['engine_build_seconds']:.2f} s ({_kind(report)})"
    elif "engine" in report:
        text += f"\nengine: {report['engine']} (simulation uses the numpy path)"
    print(json_text(report).rstrip() if args.json else text)  # strict: a NaN residual is "nan"
    return 0 if report["assembled"] else 1


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


def _kind(report: dict) -> str:
    from ..numerics.compiled import uncompiled_reason

    return "native C" if report["engine_native"] else f"CasADi virtual machine: {uncompiled_reason()}"
