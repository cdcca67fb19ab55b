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


COMMANDS = {"check": cmd_check, "samples": cmd_samples}


def build_parser() -> argparse.ArgumentParser:
    """Sub-commands; `mbstudio [FILE]` without one is handled by `default_parser`."""
    parser = argparse.ArgumentParser(prog="mbstudio", description="MB Studio: mechanism analysis.")
    parser.add_argument("--version", action="version", version=f"mbstudio {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="structure, mobility and assembly of a model")
    p.add_argument("file", help="a model file (.mbs)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    sub.add_parser("samples", help="list the bundled sample models")
    return parser


def default_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mbstudio", description="MB Studio: mechanism analysis. Sub-commands: " + ", ".join(COMMANDS))
    parser.add_argument("--version", action="version", version=f"mbstudio {__version__}")
    parser.add_argument("file", nargs="?", help="a model (.mbs); default: the SLA suspension sample")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv and argv[0] in COMMANDS:
            args = build_parser().parse_args(argv)
            return COMMANDS[args.command](args)
        args = default_parser().parse_args(argv)
        print(format_report(check_report(_load(args.file))))
        return 0
    except (ModelError, AssemblyError, FileNotFoundError) as exc:
        print(f"mbstudio: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
