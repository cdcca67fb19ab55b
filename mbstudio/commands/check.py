"""`mbstudio check FILE [--json]`."""

from __future__ import annotations

import argparse

from ..io.json_text import json_text
from ..model import load
from ..report import check_report, format_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    report = check_report(load(args.file))
    print(json_text(report).rstrip() if args.json else format_report(report))  # strict: a NaN residual is "nan"
    return 0 if report["assembled"] else 1
