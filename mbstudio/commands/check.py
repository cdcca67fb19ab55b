"""`mbstudio check FILE [--json]`."""

from __future__ import annotations

import argparse
import shutil
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
    text = format_report(report) + "\n" + (LINKAGE if report.get("linkage") else format_pkm(report["pkm"]))
    if "engine" in report:
        text += f"\nengine: {report['engine']}"
    print(json_text(report).rstrip() if args.json else text)  # strict: a NaN residual is "nan"
    return 0 if report["assembled"] else 1


def check(model: Model, say: Callable[[str], None] | None = None) -> dict:
    """The check report of `model`: structure, counts and assembly, what the compiled engine will be, the parallel
    machine. `say`: called with each step's text as it begins (a big model's progress). Nothing is traced or
    compiled: a check answers in seconds, and the first run builds the engine (or loads it from the cache)."""
    report = _step(say, f"{len(model.bodies)} bodies: structure, counts and assembly", lambda: check_report(model))
    if report["assembled"]:
        report |= _engine(model)
    report["pkm"] = _step(say, "looking for a parallel machine's platform", lambda: pkm_report(model))
    if report["pkm"] is not None and is_linkage(model, report["dof_jacobian"]):
        report["pkm"], report["linkage"] = None, True
    if say:
        say("done")
    return report


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


def _engine(model: Model) -> dict:
    """What the compiled engine will be, without building it: too large for it (the numpy path), or native C
    when a C compiler is found (CasADi's virtual machine otherwise), built by the first run."""
    from ..dynamics.engine import fits_engine

    if not fits_engine(model):
        from ..dynamics.engine import MAX_COORDINATES

        coordinates = sum(len(j.coordinates) for j in model.joints)
        reason = f"{coordinates} coordinates: the compiled engine is built for at most {MAX_COORDINATES}"
        return {"engine_native": False, "engine": f"not built: {reason} (simulation uses the numpy path)"}
    native = shutil.which("cc") is not None or shutil.which("gcc") is not None
    kind = "native C" if native else "CasADi virtual machine: no C compiler found"
    return {"engine_native": native, "engine": f"{kind}, built (or loaded from the cache) by the first run"}
