"""`mbstudio pkm FILE [--trajectory NAME] [--samples N] [--out efforts.csv]`
`mbstudio pkm FILE --map x=LOW:HIGH:N --map y=LOW:HIGH:N [--at z=VALUE] --out map.csv`

A parallel machine by seed 002's modular method: its limbs and task space, the task-space equations of motion
at the document's pose; along a platform path (`--trajectory`, the file's `platform.paths`) each limb's
coordinates and the actuator efforts; or over a plane of platform positions (`--map`) the condition number of
M_t, the dynamic manipulability and the condition number of J_IK. CSV: one header line, the provenance
comment, the rows."""

from __future__ import annotations

import argparse
import time

import numpy as np

from ..dynamics.pkm import ParallelMachine
from ..dynamics.pkm.paths import path_dynamics, platform_path
from ..dynamics.pkm.report import format_pkm, pkm_report
from ..dynamics.pkm.workspace import QUANTITIES, workspace_map
from ..io.csv_text import numeric_table, write_output
from ..io.display_units import UNITS_HELP, parse_units
from ..jobs.tasks import Provenance, text_hash
from ..model import ModelError, check_outputs, dumps, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs) of a parallel machine")
    parser.add_argument("--trajectory", help="a platform path of the model (its 'platform.paths'; default: none)")
    parser.add_argument("--samples", type=_count, help="equally spaced times along the path (default: its own)")
    parser.add_argument(
        "--map", action="append", type=_axis, metavar="AXIS=LOW:HIGH:N", help="vary a task coordinate (twice)"
    )
    parser.add_argument("--at", action="append", type=_value, default=[], metavar="AXIS=VALUE", help="fix one")
    parser.add_argument("--out", help="write the path's efforts or the map as CSV")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP)


def _count(text: str) -> int:
    if not text.isdigit() or not 2 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of samples from 2 to 1000000")
    return int(text)


def _axis(text: str) -> tuple[str, tuple[float, float, int]]:
    try:
        name, span = text.split("=")
        low, high, count = span.split(":")
        values = float(low), float(high), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not AXIS=LOW:HIGH:N, e.g. x=-0.3:0.3:41") from None
    if not (np.isfinite(values[:2]).all() and values[0] < values[1] and 2 <= values[2] <= 1000):
        raise argparse.ArgumentTypeError(f"{text!r}: LOW < HIGH, finite, and 2 to 1000 points")
    return name.strip(), values


def _value(text: str) -> tuple[str, float]:
    try:
        name, value = text.split("=")
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not AXIS=VALUE, e.g. z=-0.9") from None
    if not np.isfinite(number):
        raise argparse.ArgumentTypeError(f"{text!r}: the value must be finite")
    return name.strip(), number


def run(args: argparse.Namespace) -> int:
    if args.out and not (args.trajectory or args.map):
        raise ModelError("--out", "needs --trajectory or --map: there is nothing to write", args.out)
    if args.out and not args.out.lower().endswith(".csv"):
        raise ModelError("--out", "must end in .csv", args.out, "efforts.csv or map.csv")
    check_outputs([args.out], [args.file])  # before the work, not after
    model = load(args.file)
    start = time.perf_counter()
    pkm = ParallelMachine(model)
    print(format_pkm(pkm_report(model, pkm)).lstrip())
    if args.map:
        return _map(pkm, args, start)
    if args.trajectory:
        return _path(pkm, args, start)
    _at_pose(pkm)
    return 0


def _at_pose(pkm: ParallelMachine) -> None:
    """The task-space equations at the document's pose, at rest."""
    states = pkm.start
    eq = pkm.equations(states, np.zeros((1, len(pkm.axes))))
    held = pkm.inverse_dynamics(states, np.zeros((1, len(pkm.axes))), np.zeros((1, len(pkm.axes))))
    measures = pkm.mobility_measures(states)
    names = ", ".join(pkm.task_names)
    print(f"at the document's pose, platform at {np.round(pkm.position0, 6).tolist()} m, task coordinates {names}:")
    print(f"  M_t [kg] =\n{_matrix(eq.mass[0])}")
    print(f"  W_t^grav [N] = {np.round(eq.bias[0], 6).tolist()}")
    print(f"  J_IK [rad/m] =\n{_matrix(eq.ik_jacobian[0])}")
    efforts = ", ".join(f"{n} {u:.6g}" for n, u in zip(pkm.actuated, held.efforts[0], strict=True))
    print(f"  efforts holding the platform at rest: {efforts}")
    print(
        f"  cond(M_t) {measures['mass_condition'][0]:.4g}, dynamic manipulability "
        f"{measures['dynamic_manipulability'][0]:.4g}, cond(J_IK) {measures['jacobian_condition'][0]:.4g}"
    )


def _matrix(m: np.ndarray) -> str:
    return "\n".join("    " + "  ".join(f"{v:12.6g}" for v in row) for row in m)


def _provenance(pkm: ParallelMachine, method: str, options: dict, start: float) -> dict:
    text = dumps(pkm.model)
    return Provenance(text_hash(text), method, "float64", options, time.perf_counter() - start).to_json()


def _path(pkm: ParallelMachine, args: argparse.Namespace, start: float) -> int:
    path = platform_path(pkm, args.trajectory)
    result = path_dynamics(pkm, path, args.samples)
    columns = result.columns(pkm)
    print(f"platform path '{path.name}': {len(result.t)} samples over {path.duration:g} s")
    for name, unit, values in columns:
        if name.startswith("u:"):
            print(f"  {name:24s} min {values.min():12.6g}  max {values.max():12.6g}  [{unit}]")
    if args.out:
        options = {"trajectory": path.name, "samples": len(result.t)}
        provenance = _provenance(pkm, "pkm modular inverse dynamics (seed 002)", options, start)
        header, data = [f"{n} [{u}]" for n, u, _ in columns], np.column_stack([c[2] for c in columns])
        write_output(args.out, numeric_table(provenance, header, data, parse_units(args.units)))
        print(f"  {len(columns)} columns x {len(result.t)} samples written to {args.out}")
    return 0


def _map(pkm: ParallelMachine, args: argparse.Namespace, start: float) -> int:
    grid = dict(args.map)
    found = workspace_map(pkm, grid, dict(args.at))
    reached = found.reachable
    print(
        f"workspace map over {found.axes[0]} x {found.axes[1]} ({reached.size} points, {reached.mean():.0%} reachable)"
        + "".join(f", {n} = {v:g} m" for n, v in found.fixed.items())
    )
    for key, (label, _) in QUANTITIES.items():
        values = found.values[key][reached]
        if values.size:
            print(f"  {label}: {values.min():.4g} to {values.max():.4g}")
    if args.out:
        first, second = np.meshgrid(found.first, found.second)
        header = [f"{found.axes[0]} [m]", f"{found.axes[1]} [m]"] + [f"{k} [{u}]" for k, (_, u) in QUANTITIES.items()]
        data = np.column_stack([first.ravel(), second.ravel(), *(found.values[k].ravel() for k in QUANTITIES)])
        options = {"grid": grid, "at": found.fixed}
        provenance = _provenance(pkm, "pkm workspace map (seed 002)", options, start)
        write_output(args.out, numeric_table(provenance, header, data, parse_units(args.units)))
        print(f"  {len(data)} points written to {args.out}")
    return 0
