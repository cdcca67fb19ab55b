"""`mbstudio check FILE [--json]`."""

from __future__ import annotations

import argparse

from ..dynamics.pkm.report import format_pkm, pkm_report
from ..io.json_text import json_text
from ..model import load
from ..report import check_report, format_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    model = load(args.file)
    report = check_report(model)
    if report["assembled"]:
        report |= _engine(model)
    report["pkm"] = pkm_report(model)
    text = format_report(report) + "\n" + format_pkm(report["pkm"])
    if report.get("engine_build_seconds") is not None:
        text += f"\nengine: built in {report['engine_build_seconds']:.2f} s ({_kind(report)})"
    elif "engine" in report:
        text += f"\nengine: {report['engine']} (simulation uses the numpy path)"
    print(json_text(report).rstrip() if args.json else text)  # strict: a NaN residual is "nan"
    return 0 if report["assembled"] else 1


def _engine(model) -> dict:
    """The compiled engine's build (tracing and compiling, or loading the compiled C from the cache)."""
    from ..dynamics.engine import TooLarge, engine

    try:
        eng = engine(model)
    except TooLarge as exc:
        return {"engine_build_seconds": None, "engine_native": False, "engine": f"not built: {exc}"}
    return {"engine_build_seconds": eng.build_seconds, "engine_native": eng.native}


def _kind(report: dict) -> str:
    return "native C" if report["engine_native"] else "CasADi virtual machine: no C compiler found"
