"""`mbstudio blocks FILE`: the document as a TITOP block model (Alazard et al. 2024): its blocks, ports and loads, and
its initial accelerations against the articulated-body algorithm. With `--t-end T`: the document simulated by the
general route and by the block model, and the differences (Alazard et al.'s Fig. 17 cross-check) with the invariant
monitors of both; `--out` writes the simulation's series with the error series."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ..dynamics.titop import CLOSURE_FREQUENCY, GROUND, SOLVERS, BlockModel, block_model
from ..io.display_units import UNITS_HELP, parse_units
from ..io.time_series import save_simulation
from ..kinematics import Mechanism
from ..model import ModelError, check_outputs, load
from ..simulation.cross_check import cross_check
from ..simulation.integrators import SCIPY
from ..simulation.run import Cancelled, initial_velocities, parse_velocities, simulate
from .json_option import add_json, say
from .simulate import ATOL, RTOL, T_END_MAX, bounded, velocity_pairs, whole

GROUPS = {  # the error series, by what they measure
    "coordinates": lambda n, coordinates: n in coordinates,
    "velocities": lambda n, coordinates: n.startswith("d_") and n[2:] in coordinates,
    "accelerations": lambda n, coordinates: n.startswith("dd_") and n[3:] in coordinates,
    "energies": lambda n, coordinates: n.endswith("_energy"),
    "centre of mass, momenta": lambda n, coordinates: n.startswith(("com.", "momentum.", "angular_momentum.")),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument(
        "--solver", choices=SOLVERS, default="condensed", help="the algebraic loop's solve (default condensed)"
    )
    parser.add_argument(
        "--closure-frequency",
        type=bounded(0.0, 1e6, "Hz"),
        default=None,
        metavar="HZ",
        help=f"closed loops: the cut joints' spring-dampers' frequency (default {CLOSURE_FREQUENCY:g} Hz)",
    )
    parser.add_argument(
        "--t-end", type=bounded(0.0, T_END_MAX, "s"), metavar="T", help="cross-check a simulation over [0, T]"
    )
    parser.add_argument("--method", choices=SCIPY, default="DOP853", help="both runs' integrator (default DOP853)")
    parser.add_argument("--rtol", type=bounded(*RTOL), default=1e-10, help="relative tolerance (default 1e-10)")
    parser.add_argument("--atol", type=bounded(*ATOL), default=1e-12, help="absolute tolerance (default 1e-12)")
    parser.add_argument("--samples", type=whole(2, 1_000_000), default=201, help="output times (default 201)")
    parser.add_argument("--velocity", action="append", default=[], metavar="NAME=VALUE", help="a rate at t = 0")
    parser.add_argument("--out", help="with --t-end: the simulation's series and the error series, .csv or .npz")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP)
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    if args.out and not args.out.lower().endswith((".csv", ".npz")):
        raise ModelError("--out", "must end in .csv or .npz", args.out, "run.csv or run.npz")
    check_outputs([args.out], [args.file])
    units = parse_units(args.units)
    model = load(args.file)
    mech = Mechanism(model)
    frequency = (args.closure_frequency or CLOSURE_FREQUENCY) if mech.topology.cut else None
    blocks = block_model(mech, closure_frequency=frequency)
    if args.t_end is None:
        figures, text = describe(blocks, mech, args.solver)
        say(args, figures, [text])
        return 0
    try:
        kinds = mech.independent_kinds
        pairs = velocity_pairs(args.velocity, kinds, "blocks")
        velocities = initial_velocities(parse_velocities(pairs, kinds), kinds)
        result = simulate(
            mech, args.t_end, args.method, args.rtol, args.atol, samples=args.samples, velocities=velocities
        )
        check = cross_check(model, result, velocities, args.solver, frequency)
    except (Cancelled, RuntimeError) as exc:  # a ModelError goes on to the command line's one format
        print(f"mbstudio blocks: error: {exc}", file=sys.stderr)
        return 1
    figures = comparison(model.name, result, check, frequency)
    lines = [summary(figures)]
    if args.out:
        result.monitors += check.errors
        save_simulation(result, args.out, units)
        lines.append(f"  {len(result.columns())} columns x {len(result.t)} samples written to {args.out}")
    say(args, figures | {"written": [args.out] if args.out else []}, lines)
    return 0


def describe(blocks: BlockModel, mech: Mechanism, solver: str) -> tuple[dict, str]:
    """One line per block, the loads, and the initial accelerations against the articulated-body algorithm: (what
    --json prints, the text)."""
    from ..dynamics.closed_loop import closed_loop_forward_dynamics
    from ..dynamics.forces import AppliedForces

    names = {GROUND: "inertial", **{k: b.body.name for k, b in enumerate(blocks.blocks)}}
    rows = [("block", "body", "joint", "kind", "parent", "port (parent axes)", "coordinates")]
    for k, b in enumerate(blocks.blocks):
        port = "(" + ", ".join(f"{float(x):.4g}" for x in b.joint.port) + ")"
        kind, parent = b.joint.kind, names[b.joint.parent]
        rows.append((str(k), b.body.name, b.joint.name, kind, parent, port, " ".join(b.joint.coordinates)))
    widths = [max(len(row[i]) for row in rows) + 2 for i in range(len(rows[0]))]
    lines = [
        f"{mech.model.name}: {len(blocks.blocks)} blocks, {len(blocks.channels)} joint channels, "
        f"{len(blocks.floating)} floating base(s), {len(blocks.loads)} loads"
    ]
    lines += ["  " + "".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines += [f"  load {load.name or '(unnamed)'}: {type(load).__name__}" for load in blocks.loads]
    q = mech.assemble(None)
    qd = np.zeros_like(q)
    order = [mech.coordinates.index(c) for c in blocks.coordinates]
    state = blocks.from_coordinates(q[:, order], qd[:, order])
    found = blocks.accelerations_to_coordinates(state, blocks.forward_dynamics(state, solver=solver))[0]
    relaxed = " (the loop closures start relaxed: the open tree's)" if mech.topology.cut else ""
    lines.append(f"initial accelerations at rest ({solver} solve of the algebraic loop){relaxed}:")
    lines += [f"  dd_{c} = {value:.9g}" for c, value in zip(blocks.coordinates, found, strict=True)]
    figures = {
        "model": mech.model.name,
        "blocks": [
            {
                "body": b.body.name,
                "joint": b.joint.name,
                "kind": b.joint.kind,
                "parent": names[b.joint.parent],
                "port": [float(x) for x in b.joint.port],
                "coordinates": list(b.joint.coordinates),
            }
            for b in blocks.blocks
        ],
        "loads": [load.name for load in blocks.loads],
        "initial_accelerations": {f"dd_{c}": v for c, v in zip(blocks.coordinates, found, strict=True)},
        "solver": solver,
        "difference_to_articulated_body_algorithm": None,
    }
    if not mech.topology.cut:
        Q = AppliedForces(mech).generalized(0.0, q, qd)
        reference = closed_loop_forward_dynamics(mech, q, qd, Q)[0][order]
        figures["difference_to_articulated_body_algorithm"] = difference = float(np.abs(found - reference).max())
        lines.append(f"  against the articulated-body algorithm: max |difference| {difference:.2g}")
    return figures, "\n".join(lines)


def comparison(name: str, result, check, frequency: float | None) -> dict:
    """The largest error per group of series and both routes' invariant drifts (what --json prints)."""
    p = result.provenance
    largest = check.largest()
    groups = {}
    for group, member in GROUPS.items():
        chosen = {n[6:]: v for n, v in largest.items() if member(n[6:], result.coordinates)}
        if chosen:
            worst = max(chosen, key=chosen.get)
            groups[group] = {"series": worst, "largest_error": chosen[worst]}
    drifts = {}
    for route, run in (("general", result), ("block model", check.run)):
        series = {n: v for n, _, v in run.columns()}
        drift = max(np.abs(series[f"com.{a}"] - series[f"com.{a}"][0]).max() for a in "xyz")
        balance = np.abs(series["energy_balance"] - series["energy_balance"][0]).max()
        drifts[route] = {"centre_of_mass_drift_m": float(drift), "energy_balance_drift_J": float(balance)}
    return {
        "model": name,
        "t_end": float(result.t[-1]),
        "method": p.method,
        "rtol": p.rtol,
        "atol": p.atol,
        "closure_frequency": frequency,
        "largest_errors": groups,
        "drifts": drifts,
    }


def summary(figures: dict) -> str:
    """The comparison in words."""
    frequency = figures["closure_frequency"]
    closures = f", loops closed by {frequency:g} Hz spring-dampers" if frequency else ""
    lines = [
        f"{figures['model']}: {figures['t_end']:g} s by the general route and by the block model ({figures['method']} "
        f"rtol {figures['rtol']:g} atol {figures['atol']:g}{closures}); largest |block − general|:"
    ]
    lines += [f"  {g:26s}{e['largest_error']:.3g} ({e['series']})" for g, e in figures["largest_errors"].items()]
    for route, d in figures["drifts"].items():
        lines.append(
            f"  {route}: centre-of-mass drift {d['centre_of_mass_drift_m']:.3g} m, energy balance drift "
            f"{d['energy_balance_drift_J']:.3g} J"
        )
    lines.append("  (the general route's balance integrates the dissipation over the output samples)")
    if frequency:
        lines.append("  (the closures start relaxed: at t = 0 the block model's accelerations are the open tree's)")
    return "\n".join(lines)
