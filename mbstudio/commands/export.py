"""`mbstudio export FILE --urdf OUT.urdf | --mjcf OUT.xml | --fmu OUT.fmu`: a model in another tool's format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..io.json_text import json_text
from ..model import ModelError, check_outputs, load, write_all


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--urdf", metavar="OUT.urdf", help="write the tree as URDF")
    parser.add_argument("--mjcf", metavar="OUT.xml", help="write the model as MuJoCo's MJCF (loops as equalities)")
    parser.add_argument(
        "--fmu", metavar="OUT.fmu", help="write an FMI 2.0 FMU (Model Exchange and Co-Simulation) for this machine"
    )
    parser.add_argument(
        "--inputs", metavar="NAMES", help="FMU: comma-separated inputs (default: the actuators and point forces)"
    )
    parser.add_argument("--outputs", metavar="NAMES", help="FMU: comma-separated outputs besides q and velocities")
    parser.add_argument("--json", action="store_true", help="print one JSON object: the files written and the notes")


def run(args: argparse.Namespace) -> int:
    outputs = [p for p in (args.urdf, args.mjcf, args.fmu) if p]
    if not outputs:
        raise ModelError("export", "names no format", None, "--urdf OUT.urdf, --mjcf OUT.xml or --fmu OUT.fmu")
    if len(set(outputs)) < len(outputs):
        raise ModelError("--urdf, --mjcf, --fmu", "name the same file", outputs[0], "different files")
    check_outputs(outputs, [args.file])
    model = load(args.file)
    folder = Path(args.file).resolve().parent
    written, notes = {}, []
    if args.urdf:
        from ..io.urdf_export import urdf_text

        written[args.urdf], said = urdf_text(model, folder)
        notes += said
    if args.mjcf:
        from ..io.mjcf_export import mjcf_text

        written[args.mjcf], said = mjcf_text(model, folder)
        notes += said
    if args.fmu:
        from ..io.fmu_export import fmu_archive

        inputs = _names(args.inputs)
        written[args.fmu], said = fmu_archive(model, inputs=inputs, outputs=_names(args.outputs) or [])
        notes += said
    write_all(written)  # every file or none
    if args.json:
        print(json_text({"written": list(written), "notes": list(dict.fromkeys(notes))}).rstrip())
        return 0
    for path in written:
        print(f"{path}: written")
    for note in dict.fromkeys(notes):
        print(f"  note: {note}", file=sys.stderr)
    return 0


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [n.strip() for n in text.split(",") if n.strip()]
