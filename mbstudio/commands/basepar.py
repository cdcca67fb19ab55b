"""`mbstudio basepar FILE --method dp|vp|symbolic|all [--digits N[,N...]] [--samples N] [--eliminate NAMES]
[--json OUT]`: the base inertial parameters by Gautier's method in double and variable precision and by the
symbolic method, side by side with the SVD ridge and where the routes disagree. The defaults and limits are the
window's and the studies' (jobs/options.py BaseParametersOptions)."""

from __future__ import annotations

import argparse
import sys

from ..identification.pipeline import METHODS, BaseParameterRun, base_parameters
from ..io.json_text import json_text
from ..jobs.options import MAX_SAMPLES, BaseParametersOptions, digits_list, whole_number
from ..model import check_outputs, load, write_atomic
from .arguments import argument_type
from .json_option import STDOUT, add_json_file, json_file
from .progress import progress_printer

SHOWN_DIFFERENCES = 10  # β entries listed per disagreeing pair of routes


DEFAULT = BaseParametersOptions()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument(
        "--method", choices=METHODS, default=DEFAULT.method, help=f"which route(s) to run (default {DEFAULT.method})"
    )
    parser.add_argument(
        "--digits",
        type=argument_type(digits_list),
        default=DEFAULT.digits,
        metavar="N[,N...]",
        help="variable precision in decimal digits, from 16 to 1000; a rising list runs a ridge study (default "
        f"{','.join(map(str, DEFAULT.digits))})",
    )
    parser.add_argument(
        "--samples",
        type=argument_type(lambda text: whole_number("samples", text, 2, MAX_SAMPLES)),
        metavar="N",
        help="samples of the exciting trajectory (default: the trajectory's own)",
    )
    parser.add_argument(
        "--eliminate",
        type=_names,
        metavar="NAMES",
        help="comma-separated parameters to eliminate (default: those the symbolic method "
        "eliminates when it runs, as the paper does)",
    )
    add_json_file(parser, "the results")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


_progress = progress_printer()  # in place on a terminal, one line per step elsewhere


def run(args: argparse.Namespace) -> int:
    check_outputs([json_file(args)], [args.file])  # before the work, not after
    model = load(args.file)
    try:
        result = base_parameters(
            model,
            args.method,
            args.digits,
            args.samples,
            args.eliminate,
            progress=None if args.quiet else _progress,
        )
    except ValueError as exc:
        print(f"mbstudio basepar: error: {exc}", file=sys.stderr)
        return 2
    if args.json == STDOUT:
        print(json_text(result.to_json()).rstrip())
        return 0
    print(format_run(result))  # the table in either case: --json OUT adds the file, it does not take the table away
    if args.json:
        write_atomic(args.json, json_text(result.to_json()))
        print(f"written to {args.json}")
    return 0


def format_run(run: BaseParameterRun) -> str:
    """Routes with rank and ridge, then each base parameter's expressions by route, then disagreements."""
    t = run.trajectory
    lines = [
        f"{run.model_name}  (sha256 {run.model_hash[:16]}…, mbstudio {run.version})",
        f"trajectory '{t['name']}' ({t['source']}), {run.samples} samples over {t['duration']:g} s; "
        f"elimination: {run.options['elimination']}",
        "",
    ]
    lines += [_route_line(name, run) for name in ("dp", "vp", "symbolic") if _route(run, name) is not None]
    lines.append("")
    expressions = _expressions(run)
    for kept in run.parameter_names:
        if kept in expressions:
            lines.append(f"{kept}:")
            lines += [f"  {route:9s} {text}" for route, text in expressions[kept].items()]
    lines.append("")
    lines += _comparison_lines(run.comparison)
    return "\n".join(lines)


def _route(run: BaseParameterRun, name: str):
    return {"dp": run.dp, "vp": run.vp, "symbolic": run.symbolic}[name]


def _route_line(name: str, run: BaseParameterRun) -> str:
    seconds = f"{run.seconds[name]:.2f} s"
    if name == "symbolic":
        r = run.symbolic
        return (
            f"symbolic  rank {r.rank}: {len(r.no_effect)} parameter(s) without effect, {len(r.transfers)} "
            f"transfer(s){_symbolic_checks(run)}  ({seconds})"
        )
    results = [run.dp] if name == "dp" else run.vp.results
    ridges = ", ".join(
        f"{r.digits} digits: ridge after σ{r.ridge.index}, depth {r.ridge.log10_depth:.1f}"
        f"{'' if r.ridge.evident else ' (doubtful)'}"
        for r in results
    )
    stable = "" if len(results) == 1 else f"; {'stable' if run.vp.stable else 'not shown stable'}"
    return f"{name:9s} rank {results[-1].rank}: {ridges}{stable}  ({seconds})"


def _symbolic_checks(run: BaseParameterRun) -> str:
    """How the symbolic directions were checked: on the energies, and against VP's W when VP ran."""
    check, null = run.symbolic.check, run.comparison.get("vp_symbolic", {}).get("null_residual")
    text = ""
    if check is not None and check.vp is not None:
        text += f"; each leaves the Lagrangian unchanged to {check.vp:.1g} at {check.digits} digits"
    if null is not None:
        text += f", a null vector of W to {null['max_relative']:.1g} at {null['digits']} digits"
    return text + "".join(f"\n          note: {n}" for n in run.symbolic.notes)


def _expressions(run: BaseParameterRun) -> dict[str, dict[str, str]]:
    """kept parameter -> route -> expression of its base parameter."""
    out: dict[str, dict[str, str]] = {}
    for name, result in (("dp", run.dp), ("vp", run.vp.final if run.vp else None)):
        if result is not None:
            for k, b in zip(result.kept_indices, result.base_parameters, strict=True):
                out.setdefault(run.parameter_names[k], {})[name] = b["expression"]
    if run.symbolic is not None:
        for kept, expr in run.symbolic.base.items():
            out.setdefault(kept, {})["symbolic"] = str(expr)
    return out


def _comparison_lines(comparison: dict) -> list[str]:
    if not comparison or len(comparison) == 1:
        return []
    lines = [
        "the routes agree:"
        if comparison["all_agree"]
        else "the routes agree where they can decide:"
        if comparison["disagreements_explained"]
        else "the routes do not all agree:"
    ]
    for pair, c in comparison.items():
        if not isinstance(c, dict):
            continue
        a, b = pair.split("_")
        lines.append(f"  {a} / {b}: {c['verdict']}")
        for d in c["differences"][:SHOWN_DIFFERENCES]:
            lines.append(
                f"    {d['base_parameter']} coefficient of {d['parameter']}: {a} {d['first']}, {b} {d['second']}"
            )
        if len(c["differences"]) > SHOWN_DIFFERENCES:
            lines.append(f"    … {len(c['differences']) - SHOWN_DIFFERENCES} more")
    return lines
