"""`mbstudio import ROBOT.urdf -o ROBOT.mbs [--package-path DIR ...]`: a robot from URDF as a model file."""

from __future__ import annotations

import argparse
import sys

from ..io.urdf_import import import_urdf
from ..model import check_outputs, dumps, write_atomic


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a URDF file")
    parser.add_argument("-o", "--out", required=True, metavar="OUT.mbs", help="the model file to write")
    parser.add_argument(
        "--package-path",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder where package://NAME/... meshes are found as DIR/NAME/... (repeatable; ROS_PACKAGE_PATH and "
        "the folders above the URDF are searched after)",
    )


def run(args: argparse.Namespace) -> int:
    check_outputs([args.out], [args.file])
    result = import_urdf(args.file, args.package_path)
    write_atomic(args.out, dumps(result.model))
    model = result.model
    dof = sum(len(j.coordinates) for j in model.joints)
    print(f"{args.out}: '{model.name}', {len(model.bodies)} bodies, {len(model.joints)} joints, {dof} coordinates")
    for note in result.notes:
        print(f"  note: {note}", file=sys.stderr)
    return 0
