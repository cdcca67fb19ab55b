"""`mbstudio linearize FILE [--equilibrium] [--inputs C1,C2] [--json OUT]`: the linear model about the document's
configuration at rest (or the equilibrium found from it), with its modes."""

from __future__ import annotations

import argparse

import numpy as np

from ..dynamics.linearization import equilibrium, linearize
from ..io.json_text import json_text
from ..model import check_outputs, load, write_atomic


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument(
        "--equilibrium",
        action="store_true",
        help="first find the equilibrium at rest near the document's configuration",
    )
    parser.add_argument("--inputs", help="coordinates whose generalized force is an input (default: independent ones)")
    parser.add_argument("--json", metavar="OUT", help="write A, B, C, D, names, the point and the modes as JSON")


def run(args: argparse.Namespace) -> int:
    check_outputs([args.json], [args.file])
    model = load(args.file)
    point = equilibrium(model) if args.equilibrium else None
    inputs = [c.strip() for c in args.inputs.split(",")] if args.inputs else None
    lin = linearize(model, point, inputs)
    order = np.argsort(lin.frequencies_hz)
    print(f"{model.name}: {'equilibrium' if args.equilibrium else 'document configuration'} at rest")
    print("  " + ", ".join(f"{name} = {lin.q[i]:.6g}" for i, name in enumerate(_coordinates(model))))
    print(f"  states {len(lin.states)}, inputs {', '.join(lin.inputs)}, outputs {', '.join(lin.outputs)}")
    print(f"  {'eigenvalue':>28s} {'frequency [Hz]':>15s} {'damping ratio':>14s}")
    for i in order:
        value = lin.eigenvalues[i]
        print(f"  {value.real:13.6g} {value.imag:+13.6g}j {lin.frequencies_hz[i]:15.6g} {lin.damping_ratios[i]:14.6g}")
    if args.json:
        write_atomic(args.json, json_text(_document(lin)))
    return 0


def _coordinates(model) -> list[str]:
    from ..kinematics import Mechanism

    return Mechanism(model).coordinates


def _document(lin) -> dict:
    values = lin.eigenvalues
    return {
        "A": lin.A,
        "B": lin.B,
        "C": lin.C,
        "D": lin.D,
        "states": lin.states,
        "inputs": lin.inputs,
        "outputs": lin.outputs,
        "q": lin.q,
        "eigenvalues": {"real": values.real, "imag": values.imag},
        "frequencies_hz": lin.frequencies_hz,
        "damping_ratios": lin.damping_ratios,
    }
