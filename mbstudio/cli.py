"""The `mbstudio` command: a summary of a model by default, sub-commands for headless work."""

from __future__ import annotations

import argparse
import json
import sys

from . import __version__, samples
from .model import AssemblyError, ModelError, load
from .report import check_report, format_report


def _load(path: str | None):
    return samples.load() if path is None else load(path)


def cmd_check(args) -> int:
    report = check_report(_load(args.file))
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0 if report["assembled"] else 1


def cmd_samples(args) -> int:
    for name in samples.names():
        print(f"{name:20s} {samples.path(name)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mbstudio", description="MB Studio: mechanism analysis.")
    parser.add_argument("--version", action="version", version=f"mbstudio {__version__}")
    parser.add_argument("file", nargs="?", help="a model (.mbs); without a sub-command, summarise it")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("check", help="structure, mobility and assembly of a model")
    p.add_argument("file", help="a model file (.mbs)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("samples", help="list the bundled sample models")
    p.set_defaults(func=cmd_samples)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    # `mbstudio FILE` (no sub-command) must not be mistaken for a sub-command name
    commands = {"check", "samples"}
    if argv and argv[0] not in commands and not argv[0].startswith("-"):
        argv = ["--", *argv]
    args = parser.parse_args(argv)
    try:
        if getattr(args, "func", None):
            return args.func(args)
        print(format_report(check_report(_load(args.file))))
        return 0
    except (ModelError, AssemblyError, FileNotFoundError) as exc:
        print(f"mbstudio: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
