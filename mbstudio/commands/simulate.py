"""`mbstudio simulate FILE --t-end T [--method M] [--rtol R] [--atol A] [--samples K] [--out results.csv|.npz]
[--ensemble RUNS.csv] [--check-accuracy] [--no-error-estimate] [--time-budget S]`: integrate the document's motion
from its initial configuration at rest (or each run of an ensemble from its own start and parameters) and print a
summary, with an estimate of the error the run reached."""

from __future__ import annotations

import argparse
import sys

from ..dynamics.engine import canonical_text
from ..io.display_units import UNITS_HELP, DisplayUnits, parse_units
from ..kinematics import Mechanism
from ..model import ModelError, check_outputs, load
from ..model.typed_numbers import rate_spelled_otherwise
from ..model.validation import check_dynamics
from ..simulation.method_choice import AUTO, DEFAULT
from ..simulation.run import ATOL as DEFAULT_ATOL
from ..simulation.run import CONTACT_MODELS, METHODS, Cancelled, initial_velocities, parse_velocities, simulate
from ..simulation.run import RTOL as DEFAULT_RTOL
from ..simulation.starts import document_start, started
from ..simulation.stops import CONTACT_COLUMNS, contact_rows
from .json_option import add_json, say
from .progress import progress_printer

# Bounds a person can reason about; beyond them a run would never end or only report rounding
T_END_MAX = 1e6  # s
SAMPLES_MAX = 1_000_000
RTOL = (1e-14, 0.1)  # below 1e-14 scipy raises it itself: rounding, not accuracy
ATOL = (1e-16, 1.0)
_progress = progress_printer()  # in place on a terminal, one line per step elsewhere


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument(
        "--t-end", type=bounded(0.0, T_END_MAX, "s"), required=True, metavar="T", help="simulated time [s]"
    )
    parser.add_argument(
        "--method",
        choices=(AUTO, *METHODS),
        default=AUTO,
        help="auto (the default): CVODES-BDF for a model with compliant contacts (their friction is stiff), else "
        "CVODES; CVODES (Adams, native stepping on the compiled engine), CVODES-BDF for stiff motions, or scipy's "
        "solve_ivp: explicit RK45, DOP853; implicit Radau, BDF",
    )
    tolerances = (("rtol", RTOL, DEFAULT_RTOL, "relative"), ("atol", ATOL, DEFAULT_ATOL, "absolute"))
    for name, limits, default, what in tolerances:
        help_text = f"{what} tolerance (default {default:g})"
        parser.add_argument(f"--{name}", type=bounded(*limits), default=default, help=help_text)
    parser.add_argument(
        "--samples", type=whole(2, SAMPLES_MAX), default=201, help="equally spaced output times (default 201)"
    )
    parser.add_argument(
        "--velocity",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an independent coordinate's rate at t = 0, in SI or with a unit (theta1=60rpm, or d_theta1=60rpm); "
        "repeat for several; default: from rest",
    )
    parser.add_argument("--out", help="write the time series: .csv ('name [unit]' headers) or .npz")
    parser.add_argument("--contacts", metavar="OUT.csv", help="write the stops' impacts and contacts as a table")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP)
    parser.add_argument(
        "--ensemble",
        metavar="RUNS.csv",
        help="many runs at once: one row per run, columns named after independent coordinates (initial values), "
        "d_<coordinate> (initial velocities) or parameters; the results go to --out, a run column first",
    )
    parser.add_argument(
        "--check-accuracy",
        action="store_true",
        help="run the motion again at a tenth of --rtol and --atol and report the difference, an estimate of the "
        "error reached (the tolerances bound each step's error, not the run's); twice the time",
    )
    parser.add_argument(
        "--no-error-estimate",
        action="store_true",
        help="skip the run at ten times --rtol and --atol from which every run estimates its error (0.6 to 1.3 "
        "times the run's integration; docs/accuracy.md)",
    )
    parser.add_argument(
        "--time-budget",
        type=bounded(0.0, T_END_MAX, "s"),
        metavar="SECONDS",
        help="stop the run once it has taken this long (wall clock), with a message; default: no limit",
    )
    parser.add_argument(
        "--contact",
        choices=CONTACT_MODELS,
        default="compliant",
        help="the contact elements as compliant forces (integrated by --method; the default) or rigid contacts "
        "with restitution (Moreau's time stepping, trees and closed loops; docs/contact.md)",
    )
    parser.add_argument(
        "--step",
        type=bounded(1e-9, 1.0, "s"),
        metavar="H",
        help="--contact rigid: the longest time step [s] (default 0.001)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_json(parser)


def bounded(low: float, high: float, unit: str = ""):
    """An argparse type: a finite number above `low` (exclusive when 0) and at most `high`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (low < value <= high if low == 0 else low <= value <= high):
            limits = f"above {low:g}" if low == 0 else f"from {low:g}"
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: expected {limits} to {high:g} {unit}".strip())
        return value

    return parse


def velocity_pairs(pairs: list[str], kinds: dict[str, str], command: str) -> list[str]:
    """--velocity's NAME=VALUE, NAME the coordinate; d_NAME, the rate's own name, is read as it is meant, and
    NAME_dot, other programs' spelling, too, with a note on stderr."""
    out = []
    for pair in (p for text in pairs for p in text.split(",")):
        name, sep, value = (x.strip() for x in pair.partition("="))
        if name not in kinds and name.startswith("d_") and name[2:] in kinds:
            name = name[2:]
        elif (rate_of := rate_spelled_otherwise(name, kinds)) is not None:
            name = rate_of
            print(f"mbstudio {command}: note: --velocity: {name}_dot read as d_{name}, {name}'s rate", file=sys.stderr)
        out.append(f"{name}{sep}{value}" if sep else pair)
    return out


def whole(low: int, high: int):
    """An argparse type: a whole number from `low` to `high`."""

    def parse(text: str) -> int:
        if not text.strip().isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {low} to {high}")
        return int(text)

    return parse


def _ensemble(args: argparse.Namespace, model, units: DisplayUnits) -> int:
    from ..io.csv_text import write_output
    from ..io.ensemble_table import read_runs
    from ..io.time_series import ensemble_file
    from ..simulation.ensemble import simulate_ensemble

    independent = Mechanism(model).independent
    notes: list[str] = []
    arguments, runs = read_runs(args.ensemble, model, independent, notes)
    for note in notes:
        print(f"mbstudio simulate: note: --ensemble: {note}", file=sys.stderr)
    progress = None if args.quiet else _progress
    try:
        results = simulate_ensemble(
            model,
            args.t_end,
            **arguments,
            method=args.method,
            rtol=args.rtol,
            atol=args.atol,
            samples=args.samples,
            progress=progress,
        )
    except (Cancelled, RuntimeError) as exc:
        print(f"mbstudio simulate: error: {exc}", file=sys.stderr)
        return 1
    if args.out:
        write_output(args.out, ensemble_file(results, runs, args.out.lower().rsplit(".", 1)[1], units))
    seconds = sum(r.provenance.seconds for r in results)
    changes = [float(abs(r.total - r.total[0]).max()) for r in results]
    method = results[0].provenance.method
    lines = [f"{model.name}: {len(results)} runs of {args.t_end:g} s simulated in {seconds:.3g} s, {method}"]
    lines += method_lines(results[0].provenance)
    lines += [
        f"  run {i}: {inputs or 'the document'}; energy change {change:.3g} J"
        for i, (inputs, change) in enumerate(zip(runs, changes, strict=True))
    ]
    if args.out:
        lines.append(f"  {len(results)} runs x {len(results[0].t)} samples written to {args.out}")
    figures = {
        "model": model.name,
        "t_end": args.t_end,
        "method": method,
        "method_reason": results[0].provenance.method_reason,
        "seconds": seconds,
        "runs": [{"inputs": inputs, "energy_change": c} for inputs, c in zip(runs, changes, strict=True)],
        "written": [args.out] if args.out else [],
    }
    say(args, figures, lines)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.out and not args.out.lower().endswith((".csv", ".npz")):
        raise ModelError("--out", "must end in .csv or .npz", args.out, "a name such as run.csv or run.npz")
    if args.contacts and not args.contacts.lower().endswith(".csv"):
        raise ModelError("--contacts", "must end in .csv", args.contacts, "a name such as contacts.csv")
    check_outputs([args.out, args.contacts], [p for p in (args.file, args.ensemble) if p])  # before the work
    units = parse_units(args.units)
    model = load(args.file)
    if args.ensemble:
        return _ensemble(args, model, units)
    text = canonical_text(model)
    if not started(text):  # else passed where its start was filed: validate() evaluated the same values just now
        check_dynamics(model)  # what simulate() checks first, with its message
    mech = document_start(text)[0]  # the run's own start (filed in the engine cache)
    kinds = mech.independent_kinds
    velocities = initial_velocities(parse_velocities(velocity_pairs(args.velocity, kinds, "simulate"), kinds), kinds)
    done: list = []  # the run, once complete: kept when Ctrl-C stops its error estimate or accuracy check
    try:
        result = simulate(
            model,
            args.t_end,
            args.method,
            args.rtol,
            args.atol,
            samples=args.samples,
            velocities=velocities,
            progress=None if args.quiet else _progress,
            check_accuracy=args.check_accuracy,
            error_estimate=not args.no_error_estimate,
            budget=args.time_budget,
            contact=args.contact,
            step=args.step,
            finished=done.append,
        )
    except (Cancelled, RuntimeError) as exc:
        print(f"mbstudio simulate: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if not done:
            raise
        result = done[0]
        result.notes.append(INTERRUPTED)
    _write(args, result, units)
    say(args, _figures(model.name, args, result), _lines(model.name, args, result))
    return 130 if INTERRUPTED in result.notes else 0


INTERRUPTED = (
    "interrupted (Ctrl-C) after the run, in its error estimate or accuracy check: the run is complete, its check is not"
)


def _write(args: argparse.Namespace, result, units: DisplayUnits) -> None:
    """The files asked for; their writers imported only then."""
    if args.out:
        from ..io.time_series import save_simulation

        save_simulation(result, args.out, units)
    if args.contacts:
        from ..io.csv_text import write_output
        from ..io.time_series import contacts_file

        write_output(args.contacts, contacts_file(result))


def _figures(name: str, args: argparse.Namespace, result) -> dict:
    """What --json prints: the run's figures, as the text gives them."""
    p, energy = result.provenance, result.total
    return {
        "model": name,
        "t_end": args.t_end,
        "seconds": p.seconds,
        "cpu_seconds": p.cpu_seconds,
        "real_time_factor": args.t_end / p.seconds,
        "method": p.method,
        "method_reason": p.method_reason,
        "rtol": p.rtol,
        "atol": p.atol,
        "rhs_evaluations": p.rhs_evaluations,
        "residual_max": float(result.residual.max()),
        "energy_start": float(energy[0]),
        "energy_end": float(energy[-1]),
        "energy_change": float(abs(energy - energy[0]).max()),
        "energy_drift": result.energy_drift,
        "error_estimate": p.error_estimate,
        "error_estimate_cpu_seconds": p.error_estimate_cpu_seconds,
        "accuracy": p.accuracy,
        "model_sha256": p.model_hash,
        "version": p.version,
        "charts": [{"from": t, "independent": names} for t, names in p.charts],
        "contacts": len(result.contacts),
        "notes": list(result.notes),
        "written": [path for path in (args.out, args.contacts) if path],
    }


def _lines(name: str, args: argparse.Namespace, result) -> list[str]:
    p, energy = result.provenance, result.total
    lines = [
        f"{name}: {args.t_end:g} s simulated in {p.seconds:.3g} s (real-time factor "
        f"{args.t_end / p.seconds:.3g}; CPU {p.cpu_seconds:.3g} s), {p.method} rtol {p.rtol:g} atol {p.atol:g}, "
        f"{p.rhs_evaluations} right-hand-side evaluations",
        f"  constraint residual max {result.residual.max():.3g}",
        f"  energy: start {energy[0]:.9g} J, end {energy[-1]:.9g} J, largest change "
        f"{abs(energy - energy[0]).max():.3g} J; energy balance drift {result.energy_drift:.2g} of its scale",
        f"  model sha256 {p.model_hash[:16]}…, mbstudio {p.version}",
    ]
    if p.error_estimate is not None:
        text = error_estimate_text(p.error_estimate, args.contact == "rigid")
        lines.insert(3, f"  {text}, {p.error_estimate_cpu_seconds:.2g} s of CPU")
    lines[1:1] = method_lines(p)
    if len(p.charts) > 1:
        changes = "; ".join(f"from t = {t:.6g} s {', '.join(names)}" for t, names in p.charts[1:])
        lines.append(f"  independent coordinates {', '.join(p.charts[0][1])}; {changes}")
    lines += _contact_lines(result.contacts)
    lines += [f"  note: {note}" for note in result.notes]
    if args.out:
        lines.append(f"  {len(result.columns())} columns x {len(result.t)} samples written to {args.out}")
    if args.contacts:
        lines.append(f"  {len(result.contacts)} contacts written to {args.contacts}")
    return lines


def method_lines(p) -> list[str]:
    """Why the run's method was chosen, where the model chose it (Provenance.method_reason), and how to choose
    the plain default instead."""
    if not p.method_reason:
        return []
    return [f"  method {p.method} ({p.method_reason}; --method {DEFAULT} to choose Adams)"]


def error_estimate_text(estimate: float, rigid: bool = False) -> str:
    """The estimate of a run's error, as the summary says it (one digit: an order of magnitude); a rigid run's
    companion takes twice the step, the tolerances not applying to Moreau's steps."""
    companion = "twice the step" if rigid else "ten times the tolerances"
    return f"error estimate {estimate:.1g} of the state's scale (from a run at {companion})"


SHOWN_CONTACTS = 20


def _contact_lines(contacts: list) -> list[str]:
    """The stops' contacts as a table, the first SHOWN_CONTACTS of them."""
    if not contacts:
        return []
    kinds = ", ".join(f"{sum(c.kind == k for c in contacts)} {k}" for k in ("impact", "held", "compliant"))
    lines = [f"  contacts of the stops: {len(contacts)} ({kinds})"]
    rows = [list(CONTACT_COLUMNS), *contact_rows(contacts[:SHOWN_CONTACTS])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(CONTACT_COLUMNS))]
    lines += ["    " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    if len(contacts) > SHOWN_CONTACTS:
        lines.append(f"    ... and {len(contacts) - SHOWN_CONTACTS} more (--contacts OUT.csv writes them all)")
    return lines
