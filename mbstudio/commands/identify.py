"""`mbstudio identify MODEL --data LOG.csv [--validate LOG2.csv] [--json OUT] [--csv OUT] [--friction viscous,coulomb]
[--digits N] [--cutoff HZ] [--physical] [--hold-unexcited]`: the base inertial parameters (and joint friction) of
a real mechanism from a measured log of positions and actuator forces, with standard deviations, validated on a
second log (docs/identification.md)."""

from __future__ import annotations

import argparse
import sys

from ..identification.identify import DEFAULT_DIGITS, FRICTION, Identification, identify
from ..io.csv_text import write_output
from ..io.identification_table import identification_text
from ..jobs.options import MAX_DIGITS
from ..model import check_outputs, load
from .excite import _positive
from .json_option import STDOUT, add_json_file, json_file
from .progress import progress_printer

_progress = progress_printer()  # in place on a terminal, one line per step elsewhere


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--data", required=True, metavar="LOG.csv", help="the log to identify from")
    parser.add_argument("--validate", metavar="LOG2.csv", help="a second log: the predicted forces against it")
    parser.add_argument(
        "--friction",
        type=_friction,
        default=[],
        metavar="KINDS",
        help="friction of each actuated joint to identify: viscous, coulomb or viscous,coulomb (it replaces the "
        "model's joint friction on those joints, which is otherwise taken as known)",
    )
    parser.add_argument(
        "--digits",
        type=_digits,
        default=DEFAULT_DIGITS,
        metavar="N",
        help=f"precision deciding the base parameters (default {DEFAULT_DIGITS})",
    )
    parser.add_argument(
        "--cutoff",
        type=_positive,
        metavar="HZ",
        help="one low-pass cut-off for the positions and the rows (default: from the motion; the rows' band "
        "narrowed where the rebuilt accelerations would limit the fit)",
    )
    parser.add_argument("--physical", action="store_true", help="also a physically consistent estimate")
    parser.add_argument(
        "--hold-unexcited",
        action="store_true",
        help="hold base parameters the log does not excite at the model's values instead of stopping",
    )
    add_json_file(parser, "the results")
    parser.add_argument("--csv", metavar="OUT", help="write the parameter table as CSV to OUT")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _friction(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in FRICTION]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"{text!r}: friction is {' and/or '.join(FRICTION)}, separated by commas")
    return kinds


def _digits(text: str) -> int:
    if not text.isdigit() or not 16 <= int(text) <= MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"{text!r}: digits must be a whole number from 16 to {MAX_DIGITS}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    inputs = [args.file, args.data] + ([args.validate] if args.validate else [])
    check_outputs([json_file(args), args.csv], inputs)  # before the work, not after
    model = load(args.file)
    try:
        result = identify(
            model,
            args.data,
            args.validate,
            args.friction,
            args.digits,
            args.cutoff,
            args.physical,
            args.hold_unexcited,
            progress=None if args.quiet else _progress,
        )
    except ValueError as exc:  # ModelError: the log, an option or the model, named
        print(f"mbstudio identify: error: {exc}", file=sys.stderr)
        return 2
    document = result.to_json()
    for path, fmt in ((json_file(args), "json"), (args.csv, "csv")):
        if path:
            write_output(path, identification_text(document, fmt))
    if args.json == STDOUT:
        print(identification_text(document, "json").rstrip())
    else:
        print(format_identification(result))
    return 0


def format_identification(result: Identification) -> str:
    """The log and filter, the rank, each base parameter with its standard deviation, friction, validation."""
    log, s = result.observations.log, result.settings
    lines = [
        f"{result.model_name}  (sha256 {result.model_hash[:16]}…)",
        *(f"note: {note}" for note in result.notes),
        f"log {log.source}: {len(log.t)} samples at {log.rate:.6g} Hz; cut-off {s.cutoff_hz:.4g} Hz "
        f"(Butterworth order {s.order}, zero phase), every {s.decimation} kept: {result.estimate.samples} samples",
        f"cut-off: {s.rule}",
        f"rank {result.rank} ({_decided(result)}); {result.estimate.method}, "
        f"cond {result.estimate.condition:.3g} (columns scaled)",
        *level_lines(result.precision_levels),
        "",
        f"{'base parameter':40s} {'value':>14s} {'std':>11s} {'rel. std':>9s} {'model':>14s}",
    ]
    for row in result.rows():
        shown = row["expression"] if len(row["expression"]) <= 40 else row["expression"][:39] + "…"
        std = "held" if row["held"] else f"{row['std']:.3g}"
        rel = "" if row["held"] else f"{row['relative_std']:.3g} %"
        lines.append(f"{shown:40s} {row['value']:14.6g} {std:>11s} {rel:>9s} {row['model_value']:14.6g}")
    for f in result.friction:
        rel = "" if f["relative_std"] is None else f"{f['relative_std']:.3g} %"
        lines.append(f"{f['name']:40s} {f['value']:14.6g} {f['std']:11.3g} {rel:>9s}")
    if result.held:
        lines.append(f"held at the model's values (not excited by the log): {', '.join(result.held)}")
    lines += adequacy_lines(result.adequacy)
    if result.validation is not None:
        v = result.validation
        per = ", ".join(f"{k} {100 * x:.3g} %" for k, x in v.relative_rms.items() if x is not None)
        floor = "" if v.overall_floor is None else f"; noise floor {100 * v.overall_floor:.3g} %"
        lines.append(f"validation on {v.source}: relative RMS error {100 * v.overall:.3g} % ({per}){floor}")
    if result.physical is not None:
        p = result.physical
        state = "consistent" if p["consistent"] else "NOT consistent"
        lines.append(
            f"physically consistent estimate ({p['solver']}, {p['status']}, {state}): "
            f"{p['distance_sigma']:.3g} standard deviations from the least-squares one"
        )
    return "\n".join(lines)


def adequacy_lines(report: dict) -> list[str]:
    """Each coordinate's training residual against its noise floor; the coordinates the model does not explain,
    and what the log says of the known force elements."""
    per = report.get("coordinates", {})
    if not per:
        return []
    shown = ", ".join(
        f"{name} {x['residual_rms']:.3g}/{x['noise_floor']:.3g}" if x["noise_floor"] is not None else f"{name} ?"
        for name, x in per.items()
    )
    lines = [f"training residual / noise floor per coordinate (RMS): {shown}"]
    if report["unexplained"]:
        worst = ", ".join(f"{n} ({per[n]['ratio']:.3g}×)" for n in report["unexplained"])
        lines.append(
            f"WARNING: the model does not explain the log at {worst}: the residual is more than "
            f"{report['misfit_ratio']:g} times the noise, and the standard deviations below that level mean little"
        )
    check = report.get("known_forces")
    if check and check.get("separable") and check["contradicted"]:
        elements = check["elements"]
        shares = ", ".join(f"{n} {elements[n]['share']:.3g} ± {elements[n]['std']:.2g}" for n in check["contradicted"])
        fits = "leaves the noise only" if check["explained"] else "still leaves more than the noise"
        lines.append(
            f"the log contradicts the model's known force element(s) (their share of the log, 1 in the model): "
            f"{shares}; fitting their share {fits}. Correct them in the model, or identify the joints' friction "
            "(--friction viscous,coulomb replaces the document's joint friction)"
        )
    return lines


def _decided(result: Identification) -> str:
    by = result.precision_levels.get("decided_by", "variable precision")
    if by == "data":
        return "decided on the log, double precision"
    return f"variable precision, {result.base.digits} digits"


LOG_LEVELS = (("double precision", "double"), ("above the noise", "noise"))


def level_lines(levels: dict) -> list[str]:
    """The ridges at each level of precision: variable precision on the model, double precision and the noise on the
    log; what decided the rank and what it grouped."""
    if not levels:
        return []
    vp, log = levels["variable_precision"], levels["log"]
    ridge = vp["ridge"]
    depth = "∞" if ridge["log10_depth"] is None else f"{ridge['log10_depth']:.1f}"
    state = "evident" if ridge["evident"] else "not evident"
    lines = [
        f"  ridges: variable precision ({vp['digits']} digits) after σ{ridge['index']}, {depth} decades ({state}); "
        + "; ".join(_log_level(name, log[key]) for name, key in LOG_LEVELS)
    ]
    if levels.get("grouped"):
        depth = levels["variable_precision"]["gap_at_data_rank"]
        lines.append(
            f"  grouped (separated only below the log's precision, {depth:.1f} decades down in variable precision): "
            + ", ".join(levels["grouped"])
        )
    return lines


def _log_level(name: str, level: dict) -> str:
    gap = "" if level["gap"] is None else f", gap {level['gap']:.1f} decades"
    tolerance = "" if level["log10_tolerance"] is None else f" at 10^{level['log10_tolerance']:.1f}"
    return f"{name} on the log{tolerance}: rank {level['rank']}{gap}"
