"""The `mbstudio` command: the window by default, a text summary without a display, sub-commands for
headless work.

`mbstudio [FILE]` opens the window when it runs as the program (argv read from the command line) and a
display is available (DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM set); otherwise, with `--summary`, or when
main() is called from Python with an explicit argv (as tests do), it prints the summary.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from . import __version__, samples
from .commands import COMMANDS, MODULES
from .model import AssemblyError, ModelError, load


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
    parser = argparse.ArgumentParser(
        prog="mbstudio",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="MB Studio: mechanism analysis.",
        epilog=f"sub-commands (mbstudio COMMAND --help):\n{lines}",
    )
    parser.add_argument("--version", action="version", version=f"mbstudio {__version__}")
    parser.add_argument("file", nargs="?", help="a model (.mbs); default: the SLA suspension sample")
    parser.add_argument("--summary", action="store_true", help="print a text summary instead of opening the window")
    return parser


def _has_display() -> bool:
    return any(os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def _window(path: str | None) -> int:
    from .gui.app import run  # Qt is imported only when the window opens

    return run(path)


def _module(name: str):
    return importlib.import_module(f"mbstudio.commands.{MODULES.get(name, name)}")


def main(argv: list[str] | None = None) -> int:
    interactive = argv is None
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv and argv[0] in COMMANDS:
            args = build_parser(argv[0]).parse_args(argv)
            return _module(args.command).run(args)
        args = default_parser().parse_args(argv)
        if interactive and not args.summary and _has_display():
            return _window(args.file)
        from .report import check_report, format_report  # the kinematics, imported when a summary is asked for

        model = samples.load() if args.file is None else load(args.file)
        print(format_report(check_report(model)))
        return 0
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    except (ModelError, AssemblyError, OSError) as exc:  # OSError: a file that cannot be read or written
        print(f"mbstudio: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("mbstudio: error: not enough memory for this run; ask for fewer samples or digits", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
