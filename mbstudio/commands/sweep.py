"""`mbstudio sweep FILE --vary NAME=a:b:n [--vary ...] --analysis base_parameters|kinematics|simulation|linearization
[--digits N] [--samples N] [--t-end T] [--scheduler ADDRESS [--security FILE]] [--workers N] [--dashboard]
--out study.parquet|csv`: one analysis at every point of a grid of model parameters, each point a task on Dask (an
embedded local cluster of processes by default, or the scheduler at ADDRESS), one row per point. The table is
written as points finish, so a study stopped (Ctrl+C, SIGTERM) or failed leaves its finished points in it, the
others listed as not run; run again with the same specification and --out, it computes only the points the table
does not hold without error (the same model hash, analysis, options, grid and units, else every point). Exit 0
when a point has a result, 1 when every point failed (its provenance then says "complete": false)."""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import signal
import sys
from pathlib import Path

from ..io.csv_text import sidecar, write_output
from ..io.display_units import UNITS_HELP, parse_units
from ..io.study_table import study_bytes, study_format, study_units
from ..jobs.study import ANALYSES, NOT_RUN, OLD_NAMES, Study, grids
from ..model import check_outputs, load
from .json_option import add_json, say
from .progress import progress_printer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument(
        "--vary", action="append", required=True, metavar="NAME=a:b:n", help="a parameter's grid (repeatable)"
    )
    parser.add_argument(
        "--analysis",
        choices=[*ANALYSES, *OLD_NAMES],
        required=True,
        metavar="{" + ",".join(ANALYSES) + "}",
        help="what to run at each point, with the window's defaults (the names basepar, simulate and linearize of "
        "earlier versions are read, with the defaults they had)",
    )
    parser.add_argument("--digits", type=_whole, help="base_parameters: variable precision at this many digits")
    parser.add_argument("--method", choices=("dp", "vp", "symbolic", "all"), help="base_parameters: the route(s)")
    parser.add_argument("--samples", type=_whole, help="trajectory samples (base_parameters, kinematics) or outputs")
    parser.add_argument("--t-end", type=_time, help="simulation: simulated time [s] (default 1)")
    parser.add_argument(
        "--scheduler", metavar="ADDRESS", help="a running Dask scheduler: tcp://HOST:PORT, or tls://HOST:PORT"
    )
    parser.add_argument(
        "--security",
        metavar="FILE",
        help="Dask's security configuration for the scheduler (YAML: distributed.comm.tls with ca-file and the "
        "client's cert and key)",
    )
    parser.add_argument("--workers", type=_whole, default=2, help="local cluster processes (default 2)")
    parser.add_argument(
        "--dashboard", action="store_true", help="the local cluster serves Dask's dashboard (on 127.0.0.1, link said)"
    )
    parser.add_argument("--out", required=True, help="the study table: .parquet or .csv")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP)
    add_json(parser)


def _whole(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def _time(text: str) -> float:
    """A finite positive time, refused here: 'nan' once ran every point of a study to the same error."""
    try:
        value = float(text) if "_" not in text and text.isascii() else math.nan
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite positive time in seconds (e.g. 1.0)")
    return value


def run(args: argparse.Namespace) -> int:
    fmt = study_format(args.out)
    check_outputs([args.out], [p for p in (args.file, args.security) if p])  # before the work, not after
    units = parse_units(args.units)
    model = load(args.file)
    vary = grids(args.vary)
    options = {k: v for k, v in vars(args).items() if k in ("digits", "method", "samples", "t_end") and v is not None}
    study = Study(model, vary, args.analysis, options, args.scheduler, args.workers, args.security, args.dashboard)
    heading = f"{model.name}: {study.analysis} at {len(study.points)} points on {study.provenance()['scheduler']}"
    if not args.json:
        print(heading, flush=True)  # before the work: where it runs
        for note in study.notes:
            print(f"  note: {note}")
    _resume(study, args.out, fmt, units)

    named = study_units(model)

    def write(rows: list[dict]) -> None:
        write_output(args.out, study_bytes(rows, study.provenance(), fmt, units, named))

    stop = _StopSignals()
    progress = _progress if not args.dashboard else _with_link(study)
    try:
        with stop:
            rows = study.run(progress=progress, cancel=stop.requested, checkpoint=write)
    except Exception as exc:  # a failed study (a lost scheduler, say) keeps its points; its reason is said
        if not study.futures:
            raise  # nothing started (no worker, another mbstudio): the message is all there is
        return _stopped(study, args.out, f"failed: {exc}", 1)
    if stop.signum is not None:
        return _stopped(study, args.out, f"stopped by {signal.Signals(stop.signum).name}", 128 + stop.signum)
    failed = [r for r in rows if r.get("error")]
    lines = [f"  {len(rows)} rows written to {args.out}; {len(failed)} failed"]
    lines += [f"  failed at {_where(r, vary)}: {r['error']}" for r in failed[:5]]
    figures = {
        "model": model.name,
        "analysis": args.analysis,
        "points": len(rows),
        "failed": [{**{k: r[k] for k in vary}, "error": r["error"]} for r in failed],
        "written": [args.out],
    }
    say(args, figures, lines)
    return 0 if len(failed) < len(rows) else 1  # a study whose every point failed has no result


def _resume(study: Study, out: str, fmt: str, units) -> None:
    """The points an earlier run of the same study (model, analysis, options, grid and units) wrote to `out`
    without error are taken from it, not computed again; anything else in `out` is replaced."""
    if not Path(out).exists():
        return
    try:
        provenance, rows = _previous(out, fmt)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # not a table this command wrote: replaced
        print(f"  {out} cannot be read as a study ({exc}): every point is computed", file=sys.stderr)
        return
    taken = study.resume(provenance, rows) if provenance.get("units") == units.spec() else 0
    if taken:
        print(f"  {taken} of {len(study.points)} points taken from {out}, done by an earlier run of this study")
    else:
        print(f"  {out} holds another study (model, options, grid or units differ): every point is computed")


def _previous(out: str, fmt: str) -> tuple[dict, list[dict]]:
    """A study table's provenance and rows as written: Parquet's typed values, or the CSV's cells as text (an
    empty cell None), which write back unchanged. A CSV whose sidecar names other columns is refused: the pair
    is not from one write."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(out)
        return json.loads(table.schema.metadata[b"provenance"]), table.to_pylist()
    about = json.loads(Path(sidecar(out)).read_text(encoding="utf-8"))
    with open(out, newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    if not lines or lines[0] != about["columns"]:
        raise ValueError(f"its columns are not those {sidecar(out)} names")
    return about["provenance"], [{k: v or None for k, v in zip(lines[0], cells, strict=True)} for cells in lines[1:]]


_say = progress_printer()  # in place on a terminal, one line per step elsewhere


def _progress(done: int, total: int) -> None:
    _say(done / total if total else 1.0, f"{done}/{total} points")


def _with_link(study: Study):
    """The progress, after saying once where the dashboard is."""
    said = False

    def progress(done: int, total: int) -> None:
        nonlocal said
        if not said and study.client is not None:
            print(f"dashboard: {study.client.dashboard_link}", file=sys.stderr)
            said = True
        _progress(done, total)

    return progress


def _stopped(study: Study, out: str, how: str, code: int) -> int:
    """Say what the table holds: the points done, and the first of those not run."""
    if sys.stderr.isatty():
        print(file=sys.stderr)  # ends the progress line rewritten in place
    if not study.futures:  # stopped while the cluster started: no point was sent, no table written
        print(f"mbstudio sweep: the study {how} before its first point; nothing written", file=sys.stderr)
        return code
    rows = study.rows()
    missing = [r for r in rows if r.get("error") == NOT_RUN]
    names = list(study.points[0])
    print(
        f"mbstudio sweep: the study {how}; {len(rows) - len(missing)} of {len(rows)} points done, written to {out} "
        f"with the {len(missing)} not run listed (error '{NOT_RUN}')"
        + "".join(f"\n  not run: {_where(r, names)}" for r in missing[:5])
        + (f"\n  … and {len(missing) - 5} more" if len(missing) > 5 else ""),
        file=sys.stderr,
    )
    return code


def _where(row: dict, names) -> str:
    return ", ".join(f"{k}={row[k]:g}" for k in names)


class _StopSignals:
    """SIGTERM, SIGINT (Ctrl+C) and SIGHUP ask the study to stop: it then writes its table and ends. The handler
    only raises a flag the study's loop reads (an exception raised from it may land in a callback that swallows
    it, Dask's garbage-collection monitor for one); a second signal ends the program at once."""

    SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))

    def __init__(self) -> None:
        self.signum: int | None = None
        self.previous: dict = {}

    def requested(self) -> bool:
        return self.signum is not None

    def _stop(self, signum, frame) -> None:
        self.signum = signum
        for s in self.SIGNALS:
            signal.signal(s, signal.SIG_DFL)

    def __enter__(self) -> _StopSignals:
        with contextlib.suppress(ValueError):  # not the main thread (called from Python in a thread): none caught
            self.previous = {s: signal.signal(s, self._stop) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        for s, handler in self.previous.items():
            signal.signal(s, handler)
