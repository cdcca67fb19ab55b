"""`mbstudio pkm FILE [--trajectory NAME] [--samples N] [--out efforts.csv]`
`mbstudio pkm FILE --map x[=LOW:HIGH:N] --map y[=LOW:HIGH:N] [--at z=VALUE] --out map.csv`

A parallel machine by Müller's (2021) modular method: its limbs and task space, the task-space equations of motion
at the document's pose; along a platform path (`--trajectory`, the file's `platform.paths`) each limb's
coordinates and the actuator efforts; or over a plane of platform positions (`--map`) the condition number of
M_t, the dynamic manipulability and the condition number of J_IK; an axis given without a range is sized to hold
every platform position within the limbs' reach (N points, 41 by default: AXIS=N). CSV: one header line, the provenance
comment, the rows."""

from __future__ import annotations

import argparse
import time

import numpy as np

from ..dynamics.pkm import ParallelMachine
from ..dynamics.pkm.paths import path_dynamics, platform_path
from ..dynamics.pkm.report import format_pkm, pkm_report
from ..dynamics.pkm.workspace import QUANTITIES, sized_grid, workspace_map
from ..io.csv_text import numeric_table, write_output
from ..io.display_units import UNITS_HELP, parse_units
from ..jobs.tasks import Provenance, text_hash
from ..model import ModelError, check_outputs, dumps, load
from .json_option import add_json, say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs) of a parallel machine")
    parser.add_argument("--trajectory", help="a platform path of the model (its 'platform.paths'; default: none)")
    parser.add_argument("--samples", type=_count, help="equally spaced times along the path (default: its own)")
    parser.add_argument(
        "--map",
        action="append",
        type=_axis,
        metavar="AXIS[=LOW:HIGH:N]",
        help="vary a task coordinate (twice); without a range (AXIS or AXIS=N) it spans every reachable position",
    )
    parser.add_argument("--at", action="append", type=_value, default=[], metavar="AXIS=VALUE", help="fix one")
    parser.add_argument("--out", help="write the path's efforts or the map as CSV")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP)
    add_json(parser)


def _count(text: str) -> int:
    if not text.isdigit() or not 2 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of samples from 2 to 1000000")
    return int(text)


def _axis(text: str) -> tuple[str, tuple[float | None, float | None, int]]:
    """AXIS=LOW:HIGH:N, or AXIS=N and AXIS (41 points), whose range is sized to the reachable set (None)."""
    name, _, span = text.partition("=")
    parts = span.split(":") if span else []
    try:
        if len(parts) == 3:
            values = float(parts[0]), float(parts[1]), int(parts[2])
        elif len(parts) <= 1:
            values = None, None, int(parts[0]) if parts else 41
        else:
            raise ValueError
    except ValueError:
        example = "e.g. x=-0.3:0.3:41"
        raise argparse.ArgumentTypeError(f"{text!r} is not AXIS=LOW:HIGH:N, AXIS=N or AXIS, {example}") from None
    sized = values[0] is None
    if not (2 <= values[2] <= 1000 and (sized or (np.isfinite(values[:2]).all() and values[0] < values[1]))):
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
    report = pkm_report(model, pkm)
    if args.map:
        figures, lines = _map(pkm, args, start)
    elif args.trajectory:
        figures, lines = _path(pkm, args, start)
    else:
        figures, lines = _at_pose(pkm)
    say(args, {"machine": report, **figures}, [format_pkm(report).lstrip(), *lines])
    return 0


def _at_pose(pkm: ParallelMachine) -> tuple[dict, list[str]]:
    """The task-space equations at the document's pose, at rest: (--json's figures, the text's lines)."""
    states = pkm.start
    eq = pkm.equations(states, np.zeros((1, len(pkm.axes))))
    held = pkm.inverse_dynamics(states, np.zeros((1, len(pkm.axes))), np.zeros((1, len(pkm.axes))))
    measures = pkm.mobility_measures(states)
    names = ", ".join(pkm.task_names)
    efforts = ", ".join(f"{n} {u:.6g}" for n, u in zip(pkm.actuated, held.efforts[0], strict=True))
    lines = [
        f"at the document's pose, platform at {np.round(pkm.position0, 6).tolist()} m, task coordinates {names}:",
        f"  M_t [kg] =\n{_matrix(eq.mass[0])}",
        f"  W_t^grav [N] = {np.round(eq.bias[0], 6).tolist()}",
        f"  J_IK [rad/m] =\n{_matrix(eq.ik_jacobian[0])}",
        f"  efforts holding the platform at rest: {efforts}",
        f"  cond(M_t) {measures['mass_condition'][0]:.4g}, dynamic manipulability "
        f"{measures['dynamic_manipulability'][0]:.4g}, cond(J_IK) {measures['jacobian_condition'][0]:.4g}",
    ]
    figures = {
        "platform_position_m": pkm.position0,
        "task_coordinates": list(pkm.task_names),
        "mass_matrix": eq.mass[0],
        "gravity_wrench": eq.bias[0],
        "ik_jacobian": eq.ik_jacobian[0],
        "holding_efforts": dict(zip(pkm.actuated, held.efforts[0], strict=True)),
        **{name: values[0] for name, values in measures.items()},
    }
    return {"at_pose": figures}, lines


def _matrix(m: np.ndarray) -> str:
    return "\n".join("    " + "  ".join(f"{v:12.6g}" for v in row) for row in m)


def _provenance(pkm: ParallelMachine, method: str, options: dict, start: float) -> dict:
    text = dumps(pkm.model)
    return Provenance(text_hash(text), method, "float64", options, time.perf_counter() - start).to_json()


def _path(pkm: ParallelMachine, args: argparse.Namespace, start: float) -> tuple[dict, list[str]]:
    path = platform_path(pkm, args.trajectory)
    result = path_dynamics(pkm, path, args.samples)
    columns = result.columns(pkm)
    lines = [f"platform path '{path.name}': {len(result.t)} samples over {path.duration:g} s"]
    efforts = {name: (unit, values) for name, unit, values in columns if name.startswith("u:")}
    lines += [f"  {n:24s} min {v.min():12.6g}  max {v.max():12.6g}  [{u}]" for n, (u, v) in efforts.items()]
    ranges = {n: {"unit": u, "min": v.min(), "max": v.max()} for n, (u, v) in efforts.items()}
    figures = {"path": {"name": path.name, "samples": len(result.t), "duration": path.duration, "efforts": ranges}}
    if args.out:
        options = {"trajectory": path.name, "samples": len(result.t)}
        provenance = _provenance(pkm, "pkm modular inverse dynamics (Müller 2021)", options, start)
        header, data = [f"{n} [{u}]" for n, u, _ in columns], np.column_stack([c[2] for c in columns])
        write_output(args.out, numeric_table(provenance, header, data, parse_units(args.units)))
        lines.append(f"  {len(columns)} columns x {len(result.t)} samples written to {args.out}")
    return figures | {"written": [args.out] if args.out else []}, lines


def _map(pkm: ParallelMachine, args: argparse.Namespace, start: float) -> tuple[dict, list[str]]:
    grid = dict(args.map)
    if any(low is None for low, _, _ in grid.values()):
        sized = sized_grid(pkm, max(n for _, _, n in grid.values()), list(grid), dict(args.at))
        grid = {name: (*sized[name][:2], n) if low is None else (low, high, n) for name, (low, high, n) in grid.items()}
    found = workspace_map(pkm, grid, dict(args.at))
    reached = found.reachable
    lines = [
        f"workspace map over {found.axes[0]} x {found.axes[1]} ({reached.size} points, {reached.mean():.0%} reachable)"
        + "".join(f", {n} = {v:g} m" for n, v in found.fixed.items())
    ]
    ranges = {key: found.values[key][reached] for key in QUANTITIES}
    ranges = {key: {"min": v.min(), "max": v.max()} for key, v in ranges.items() if v.size}
    lines += [f"  {QUANTITIES[key][0]}: {r['min']:.4g} to {r['max']:.4g}" for key, r in ranges.items()]
    figures = {"map": {"axes": list(found.axes), "points": reached.size, "reachable": reached.mean(), "ranges": ranges}}
    if args.out:
        first, second = np.meshgrid(found.first, found.second)
        header = [f"{found.axes[0]} [m]", f"{found.axes[1]} [m]"] + [f"{k} [{u}]" for k, (_, u) in QUANTITIES.items()]
        data = np.column_stack([first.ravel(), second.ravel(), *(found.values[k].ravel() for k in QUANTITIES)])
        options = {"grid": grid, "at": found.fixed}
        provenance = _provenance(pkm, "pkm workspace map (Müller 2021)", options, start)
        write_output(args.out, numeric_table(provenance, header, data, parse_units(args.units)))
        lines.append(f"  {len(data)} points written to {args.out}")
    return figures | {"written": [args.out] if args.out else []}, lines
