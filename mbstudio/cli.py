"""The `mbstudio` command: a summary of a model by default, sub-commands for headless work."""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__, samples
from .commands import COMMANDS
from .model import AssemblyError, ModelError, load
from .report import check_report, format_report


def build_parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mbstudio", description="MB Studio: mechanism analysis.")
    parser.add_argument("--version", action="version", version=f"mbstudio {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        if name == command:
            _module(name).add_arguments(p)
    return parser


def default_parser() -> argparse.ArgumentParser:
    """`mbstudio [FILE]`: no sub-command."""
    lines = "\n".join(f"  {name:12s} {text}" for name, text in COMMANDS.items())
    parser = argparse.ArgumentParser(prog="mbstudio", formatter_class=argparse.RawDescriptionHelpFormatter,
                                     description="MB Studio: mechanism analysis.",
                                     epilog=f"sub-commands (mbstudio COMMAND --help):\n{lines}")
    parser.add_argument("--version", action="version", version=f"mbstudio {__version__}")
    parser.add_argument("file", nargs="?", help="a model (.mbs); default: the SLA suspension sample")
    return parser


def _module(name: str):
    return importlib.import_module(f"mbstudio.commands.{name}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv and argv[0] in COMMANDS:
            args = build_parser(argv[0]).parse_args(argv)
            return _module(args.command).run(args)
        args = default_parser().parse_args(argv)
        model = samples.load() if args.file is None else load(args.file)
        print(format_report(check_report(model)))
        return 0
    except (ModelError, AssemblyError, FileNotFoundError) as exc:
        print(f"mbstudio: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
