"""`mbstudio excite MODEL --duration T --out traj.csv [--harmonics L] [--rate HZ] [--max-amplitude A]
[--max-velocity V] [--max-acceleration A] [--evaluations N]`: an exciting trajectory for identification, a finite
Fourier series of each independent coordinate whose amplitudes and phases minimise the condition number of the
base-parameter observation matrix within the coordinates' position, velocity and acceleration limits; written as
the positions, velocities and accelerations a robot is sent, with the series' coefficients in the provenance."""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from .. import __version__
from ..identification.excitation import optimise_excitation
from ..identification.observation import FourierPath
from ..io.csv_text import CsvTable, csv_table, write_output
from ..kinematics import Mechanism
from ..model import ModelError, check_outputs, load
from ..model.hashing import model_hash
from .json_option import add_json, say

MAX_DURATION = 3600.0
MAX_ROWS = 1_000_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--duration", type=_positive, required=True, metavar="T", help="one period of the motion [s]")
    parser.add_argument("--out", required=True, metavar="traj.csv", help="the trajectory as CSV")
    parser.add_argument("--harmonics", type=_count, default=3, metavar="L", help="harmonics per coordinate (3)")
    parser.add_argument("--rate", type=_positive, default=100.0, metavar="HZ", help="samples per second written (100)")
    parser.add_argument(
        "--max-amplitude",
        type=_positive,
        default=0.5,
        metavar="A",
        help="largest amplitude of a term, rad or m (0.5); the document's coordinate limits also hold",
    )
    parser.add_argument("--max-velocity", type=_positive, metavar="V", help="limit of every |q̇|, rad/s or m/s")
    parser.add_argument("--max-acceleration", type=_positive, metavar="A", help="limit of every |q̈|, rad/s² or m/s²")
    parser.add_argument("--evaluations", type=_count, default=2000, metavar="N", help="optimiser's budget (2000)")
    add_json(parser)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 100_000:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number from 1 to 100000")
    return int(text)


def run(args: argparse.Namespace) -> int:
    check_outputs([args.out], [args.file])
    if args.duration > MAX_DURATION or args.duration * args.rate > MAX_ROWS:
        expected = f"at most {MAX_DURATION:g} s and {MAX_ROWS} rows"
        raise ModelError("--duration", "with --rate gives too many rows", args.duration, expected)
    model = load(args.file)
    mech = Mechanism(model)
    try:
        found = optimise_excitation(
            mech,
            2 * np.pi / args.duration,
            harmonics=args.harmonics,
            max_amplitude=args.max_amplitude,
            max_evaluations=args.evaluations,
            max_velocity=args.max_velocity,
            max_acceleration=args.max_acceleration,
        )
    except ValueError as exc:
        print(f"mbstudio excite: error: {exc}", file=sys.stderr)
        return 2
    write_output(args.out, trajectory_csv(mech, found, args))
    figures = {
        "model": model.name,
        "condition_before": found.condition_before,
        "condition_after": found.condition_after,
        "duration": found.duration,
        "evaluations": found.evaluations,
        "seconds": found.seconds,
        "cpu_seconds": found.cpu_seconds,
        "base_parameters": found.kept,
        "written": [args.out],
    }
    text = (
        f"{model.name}: cond(W_b) {found.condition_before:.4g} -> {found.condition_after:.4g} over "
        f"{found.duration:g} s ({found.evaluations} evaluations, {found.seconds:.1f} s, "
        f"{found.cpu_seconds:.1f} s CPU); "
        f"{len(found.kept)} base parameters; written to {args.out}"
    )
    say(args, figures, [text])
    return 0


def trajectory_csv(mech: Mechanism, found, args: argparse.Namespace) -> CsvTable:
    """t, then each independent coordinate's position, velocity d_<name> and acceleration dd_<name>, SI units."""
    t = np.arange(round(found.duration * args.rate) + 1) / args.rate
    path = FourierPath(mech, found.terms)
    q, qd, qdd = (np.asarray(path(t, order), float) for order in range(3))
    units = ["rad" if mech.tree.kinds[mech.coordinates.index(n)] == "R" else "m" for n in found.coordinates]
    header = ["t [s]"]
    header += [f"{n} [{u}]" for n, u in zip(found.coordinates, units, strict=True)]
    header += [f"d_{n} [{u}/s]" for n, u in zip(found.coordinates, units, strict=True)]
    header += [f"dd_{n} [{u}/s²]" for n, u in zip(found.coordinates, units, strict=True)]
    provenance = {
        "model_hash": model_hash(mech.model),
        "method": "Fourier excitation minimising cond(W_b) (L-BFGS-B, exact gradient on a tree)",
        "terms": {n: terms for n, terms in zip(found.coordinates, found.terms, strict=True)},
        "condition_before": found.condition_before,
        "condition_after": found.condition_after,
        "base_parameters": found.kept,
        "limits": {
            "max_amplitude": args.max_amplitude,
            "max_velocity": args.max_velocity,
            "max_acceleration": args.max_acceleration,
        },
        "version": __version__,
    }
    rows = ([repr(float(x)) for x in row] for row in np.column_stack([t, q, qd, qdd]))
    return csv_table(provenance, header, rows)
