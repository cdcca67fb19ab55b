"""`mbstudio import ROBOT.urdf|MODEL.xml -o OUT.mbs [--package-path DIR ...] [--fixed-base] [--repair-inertias]
[--snap-angles] [--no-ground]`: a
mechanism from URDF or MJCF (told apart by the file's root element) as a model file."""

from __future__ import annotations

import argparse
import sys

from ..io.imports import import_mechanism
from ..io.json_text import json_text
from ..model import check_outputs, dumps, write_atomic


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a URDF file or an MJCF (MuJoCo XML) file")
    parser.add_argument("-o", "--out", required=True, metavar="OUT.mbs", help="the model file to write")
    parser.add_argument(
        "--package-path",
        action="append",
        default=[],
        metavar="DIR",
        help="URDF: a folder where package://NAME/... meshes are found as DIR/NAME/... (repeatable; "
        "ROS_PACKAGE_PATH and the folders above the URDF are searched after)",
    )
    parser.add_argument(
        "--fixed-base",
        action="store_true",
        help="URDF: weld the root link to the ground (by default a root link other than 'world' floats on a free "
        "joint, as Pinocchio's JointModelFreeFlyer places it)",
    )
    parser.add_argument(
        "--repair-inertias",
        action="store_true",
        help="URDF: replace inertias no rigid body can have (a negative principal moment, or one above the sum of "
        "the other two) by the nearest possible ones (by default they are kept as written, with a warning)",
    )
    parser.add_argument(
        "--snap-angles",
        action="store_true",
        help="URDF: make joint origin angles within 1e-5 rad of a multiple of π/4 exact (1.5708 -> π/2); by default "
        "they are kept as written and named in a note",
    )
    parser.add_argument(
        "--no-ground",
        action="store_true",
        help="leave out the ground plane and the contacts a floating robot gets from its collision geometry (by "
        "default it lands on a plane under its lowest collision geometry; the notes state the contact's defaults)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object: the counts and the notes")


def run(args: argparse.Namespace) -> int:
    check_outputs([args.out], [args.file])
    result = import_mechanism(
        args.file, args.package_path, not args.fixed_base, args.repair_inertias, args.snap_angles, not args.no_ground
    )
    write_atomic(args.out, dumps(result.model))
    model = result.model
    dof = sum(len(j.coordinates) for j in model.joints if not j.cut)
    loops = sum(1 for j in model.joints if j.cut)
    closing = f", {loops} loop-closing joints" if loops else ""
    if args.json:
        summary = {"out": args.out, "name": model.name, "bodies": len(model.bodies), "joints": len(model.joints)}
        print(json_text({**summary, "coordinates": dof, "loops": loops, "notes": result.notes}).rstrip())
        return 0
    counts = f"{len(model.bodies)} bodies, {len(model.joints)} joints, {dof} coordinates{closing}"
    print(f"{args.out}: '{model.name}', {counts}")
    for note in result.notes:
        print(f"  note: {note}", file=sys.stderr)
    return 0
