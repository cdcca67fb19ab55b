"""`mbstudio check FILE [--json]`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ..dynamics.pkm.report import format_pkm, pkm_report
from ..dynamics.pkm.topology import is_linkage
from ..io.json_text import json_text
from ..model import Model, load
from ..report import check_report, format_report

BIG_MODEL_BYTES = 1_000_000  # a file this large (about 2 000 bodies) is checked with its steps said on stderr
LINKAGE = "  parallel machine: no (one degree of freedom: a linkage, whose coupler its loop drives, not a platform)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    say = _progress() if _size(args.file) >= BIG_MODEL_BYTES else None
    model = _step(say, "reading the model", lambda: load(args.file))
    report = check(model, say)
    text = format_report(report) + "\n" + _machine_text(report)
    if report.get("engine_build_seconds") is not None:
        text += f"\nengine: built in {report['engine_build_seconds']:.2f} s ({_kind(report)})"
    elif "engine" in report:
        text += f"\nengine: {report['engine']} (simulation uses the numpy path)"
    print(json_text(report).rstrip() if args.json else text)  # strict: a NaN residual is "nan"
    return 0 if report["assembled"] else 1


def check(model: Model, say: Callable[[str], None] | None = None) -> dict:
    """The check report of `model`: structure, counts and assembly, the engine's build, the parallel machine.
    `say`: called with each step's text as it begins (a big model's progress)."""
    report = _step(say, f"{len(model.bodies)} bodies: structure, counts and assembly", lambda: check_report(model))
    if report["assembled"]:
        report |= _step(say, "the compiled engine", lambda: _engine(model))
    report["pkm"] = _step(say, "looking for a parallel machine's platform", lambda: pkm_report(model))
    if report["pkm"] is not None and is_linkage(model, report["dof_jacobian"]):
        report["pkm"], report["linkage"] = None, True
    elif _carried_body(report["pkm"]):
        # a body several chains carry, found by the search and not declared, that the task-space model refuses
        # (a suspension's upright turns as it moves): an ordinary closed-loop mechanism, not a parallel machine
        pkm = report["pkm"]
        report["pkm"], report["carried_body"] = None, {"body": pkm["platform"], "why_not": pkm["error"]}
    if say:
        say("done")
    return report


def _carried_body(pkm: dict | None) -> bool:
    return pkm is not None and "limb_count" not in pkm and pkm.get("platform_found") == "detected"


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


def _step(say: Callable[[str], None] | None, text: str, work: Callable):
    if say:
        say(text)
    return work()


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
