"""`mbstudio linearize FILE [--at auto|equilibrium|initial|NAME=VALUE,...] [--hold ...] [--from ...] [--inputs ...]
[--outputs ...] [--schedule NAME=a:b:n] [--out model.mat|model.json|model.npz] [--units deg,mm]`: the linear
state-space model (A, B, C, D) about an operating point, with its modes; with --schedule, a family of them (LPV).

--at: by default (auto) the equilibrium nearest the document's pose that is not unstable, among those found from the
pose and from starts with one coordinate turned by quarter turns (each listed with its stability), and the pose
itself at rest where none is found, saying which; or always the equilibrium found from the pose, always the pose
itself, or a state given by independent coordinates and their rates (d_NAME), which need not be an equilibrium (the
drift is printed and written). --hold keeps independent coordinates at values while the others settle, --from starts
the search elsewhere than the document's pose (both seek an equilibrium).
The older --equilibrium (= --at equilibrium) and --json OUT (= --out OUT.json) still work.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys

import numpy as np

from ..io.display_units import UNITS_HELP, parse_units
from ..io.state_space import (
    FORMATS,
    family_document,
    in_display_units,
    model_document,
    save_state_space,
    state_space_file,
    summary,
)
from ..kinematics import Mechanism
from ..linear.equilibria import equilibrium_or_pose
from ..linear.equilibrium import OperatingPoint, equilibrium, operating_point, parse_state
from ..linear.linear_model import linearize
from ..linear.lpv import linear_family
from ..linear.modes import modes
from ..model import ModelError, check_outputs, load
from ..model.typed_numbers import coordinate_dimensions, read_pairs
from .json_option import STDOUT, add_json_file, json_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument(
        "--at",
        default="auto",
        metavar="auto|equilibrium|initial|NAME=VALUE,...",
        help="the operating point: auto (default), the equilibrium nearest the document's pose that is not "
        "unstable (the equilibria found are listed with their stability) and the pose at rest where none is found, "
        "saying which; equilibrium, that equilibrium or an error saying why "
        "there is none; initial, the pose at rest; or independent coordinates and rates d_NAME set from the pose "
        "(not an equilibrium in general); values in SI, or with a unit: theta1=5deg,d_theta1=30deg/s",
    )
    parser.add_argument("--equilibrium", action="store_true", help="the same as --at equilibrium")
    parser.add_argument(
        "--from",
        dest="start",
        default="",
        metavar="NAME=VALUE,...",
        help="seek the equilibrium from the pose with these independent coordinates "
        "(Newton finds the equilibrium nearest its start: the balloon's pendulums hanging, say, not inverted)",
    )
    parser.add_argument(
        "--hold",
        default="",
        metavar="NAME=VALUE,...",
        help="independent coordinates held while the others settle (SI, or with a unit: theta1=5deg)",
    )
    parser.add_argument(
        "--inputs",
        help="comma-separated: a coordinate (the generalized force on it), an actuator, BODY.POINT.fx|fy|fz, "
        "BODY.tx|ty|tz (default: the actuators, else the independent coordinates)",
    )
    parser.add_argument(
        "--outputs",
        help="comma-separated: a coordinate, d_NAME (its rate), dd_NAME, BODY.POINT.x|y|z|vx..|ax.., or a "
        "measure's part (default: the independent coordinates)",
    )
    parser.add_argument(
        "--schedule", metavar="NAME=a:b:n", help="a family over a coordinate or parameter, each at its own point"
    )
    parser.add_argument("--out", help="write the model (or family): " + ", ".join(f".{f}" for f in FORMATS))
    add_json_file(parser, "the model (or family)")
    parser.add_argument("--units", metavar="deg,mm", help=UNITS_HELP)


def run(args: argparse.Namespace) -> int:
    outputs = [p for p in (args.out, json_file(args)) if p]
    check_outputs(outputs, [args.file])
    units = parse_units(args.units)
    model = load(args.file)
    kinds = Mechanism(model).independent_kinds
    at = "equilibrium" if args.equilibrium else args.at.strip()
    dimensions = coordinate_dimensions(kinds, kinds)
    hold, start = read_pairs("hold", args.hold, dimensions), read_pairs("from", args.start, dimensions)
    if at == "auto" and start:  # a start for the search: an equilibrium is wanted
        at = "equilibrium"
    if start and at != "equilibrium":
        raise ModelError("--from", "applies to an equilibrium only", at, "--at auto or equilibrium with --from")
    inputs, outs = _names(args.inputs), _names(args.outputs)
    text = io.StringIO()  # what the text says, printed unless --json asks for the model on stdout instead
    with contextlib.redirect_stdout(text):
        if args.schedule:
            document = _family(model, args.schedule, at, hold, inputs, outs)
        else:
            lin = linearize(model, _point(model, at, hold, kinds, start), inputs, outs)
            print(summary(model.name, lin))
            print(found_text(lin.point))
            document = model_document(lin)
    if args.json == STDOUT:
        print(state_space_file(in_display_units(document, units), "json").decode("utf-8").rstrip())
    else:
        print(text.getvalue(), end="")
    if json_file(args) and not args.json.lower().endswith(".json"):
        raise ModelError("--json", "must name a .json file", args.json, "model.json, or use --out")
    for path in outputs:
        save_state_space(in_display_units(document, units), path)
        if args.json != STDOUT:
            print(f"wrote {path}")
    return 0


WORDS = {
    "stable": "stable: every motion about it decays",
    "marginal": "stable, not damped: nothing grows",
    "unstable": "UNSTABLE: a motion about it grows",
}


def found_text(point: OperatingPoint) -> str:
    """The equilibria the default operating point was chosen from, each with its stability; the one used marked."""
    if not point.found:
        return ""
    lines = ["  equilibria found (from the pose, and with each coordinate turned by quarter turns):"]
    used = {n: point.values()[n] for n in point.independent}
    for found in point.found:
        values = ", ".join(f"{n} = {v + 0.0:.6g}" for n, v in found["values"].items()) or "(no coordinates)"
        growth = found["largest_real_eigenvalue"] + 0.0
        mark = "  <- used" if found["values"] == used else ""
        lines.append(f"    {values}: {WORDS[found['stability']]} (largest Re λ {growth:.4g} 1/s){mark}")
    return "\n".join(lines)


def _names(text: str | None) -> list[str] | None:
    return [n.strip() for n in text.split(",")] if text else None


def _point(model, at: str, hold: dict, kinds: dict[str, str], start: dict) -> OperatingPoint:
    if at == "auto":
        return equilibrium_or_pose(model, hold)
    if at == "equilibrium":
        return equilibrium(model, _pose_with(model, start) if start else None, hold=hold)
    if hold:
        raise ModelError("--hold", "applies to an equilibrium only", at, "--at auto or equilibrium with --hold")
    if at == "initial":
        return operating_point(model)
    notes: list[str] = []
    values, velocities = parse_state(at, kinds, notes)
    for note in notes:
        print(f"mbstudio linearize: note: --at: {note}", file=sys.stderr)
    return operating_point(model, "given", values, velocities)


def _pose_with(model, values: dict[str, float]) -> np.ndarray:
    """The document's pose with some independent coordinates set (its loops closed by the search)."""
    mech = Mechanism(model)
    q = mech.assemble(None)[0]
    for name, value in values.items():
        q[mech.coordinates.index(name)] = value
    return q


def _family(model, spec: str, at: str, hold: dict, inputs, outputs) -> dict:
    from ..jobs.study import grid  # NAME=a:b:n, as the parameter studies read it

    name, values = grid(spec.replace("--schedule", "schedule"))
    family = linear_family(model, name, values, at, hold, inputs, outputs)
    about = "its equilibrium" if family.models[0].point.kind == "equilibrium" else "the pose at its value"
    print(f"{model.name}: {len(values)} linear models over {name} ({family.kind}), each about {about}")
    print(f"  {name:>12s} {'lowest [Hz]':>12s} {'its damping':>12s} {'max Re λ':>12s}")
    for value, lin in zip(values, family.models, strict=True):
        oscillating = [m for m in modes(lin) if m.kind == "oscillation"]
        low = oscillating[0] if oscillating else None
        print(
            f"  {value:12.6g} {low.frequency_hz if low else np.nan:12.6g} {low.damping if low else np.nan:12.4g} "
            f"{lin.eigenvalues.real.max():12.4g}"
        )
    return family_document(family)
