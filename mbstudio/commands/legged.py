"""`mbstudio legged [--robot solo12] [--gait stand|trot] [--frequency HZ] -o OUT.mbs`: a legged robot from
example-robot-data, imported with its ground and foot contacts, under joint PD control holding its nominal pose
or following a trot (io/legged.py, docs/contact.md); simulate it with `mbstudio simulate OUT.mbs --t-end 2`
(its contacts choose CVODES-BDF)."""

from __future__ import annotations

import argparse

from ..model import check_outputs, dumps, write_atomic
from .json_option import add_json, say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", choices=("solo12",), default="solo12", help="the robot (example-robot-data)")
    parser.add_argument(
        "--gait",
        choices=("stand", "trot"),
        default="stand",
        help="stand: PD hold at the nominal pose; trot: the diagonal pairs lifted in turn by the joints' rests",
    )
    parser.add_argument("--frequency", type=float, default=2.0, metavar="HZ", help="trot: steps of each pair per s")
    parser.add_argument("-o", "--out", required=True, metavar="OUT.mbs", help="the model file to write")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from ..io.legged import solo12

    check_outputs([args.out], [])
    model = solo12(args.gait, args.frequency)
    write_atomic(args.out, dumps(model))
    contacts = sum(f.type == "contact" for f in model.forces)
    figures = {"model": model.name, "gait": args.gait, "bodies": len(model.bodies), "foot_contacts": contacts}
    text = f"{args.out}: '{model.name}' ({args.gait}), {len(model.bodies)} bodies, {contacts} foot contacts"
    say(args, figures | {"written": [args.out]}, [text])
    return 0
