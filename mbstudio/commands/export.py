"""`mbstudio export FILE --urdf OUT.urdf`: a tree model in another tool's format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..io.urdf_export import urdf_text
from ..model import check_outputs, load, write_atomic


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--urdf", required=True, metavar="OUT.urdf", help="write the tree as URDF")


def run(args: argparse.Namespace) -> int:
    check_outputs([args.urdf], [args.file])
    text, notes = urdf_text(load(args.file), Path(args.file).resolve().parent)
    write_atomic(args.urdf, text)
    print(f"{args.urdf}: written")
    for note in notes:
        print(f"  note: {note}", file=sys.stderr)
    return 0
