"""The `mbstudio` command: the window by default, a text summary without a display, sub-commands for
headless work.

`mbstudio [FILE]` opens the window when it runs as the program (argv read from the command line) and a
display is available (DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM set); otherwise, with `--summary`, or when
main() is called from Python with an explicit argv (as tests do), it prints the summary.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import importlib
import io
import os
import sys
import threading
from collections.abc import Iterator

from . import __version__
from .commands import COMMANDS, COMPUTING, EXAMPLES, MODULES
from .model.errors import AssemblyError, ModelError
from .progress import builds_said  # without numpy: `mbstudio --help` imports only argparse


class Parser(argparse.ArgumentParser):
    """Errors in the one format of every command's messages, `mbstudio COMMAND: error: WHAT; expected ...`, on
    one line instead of argparse's usage dump (`--help` shows the usage)."""

    def error(self, message: str) -> None:  # argparse's hook: it must not return
        self.exit(2, f"{self.prog}: error: {message}; expected what `{self.prog} --help` lists\n")


def build_parser(command: str) -> argparse.ArgumentParser:
    parser = Parser(prog="mbstudio", description="MB Studio: mechanism analysis.")
    parser.add_argument("--version", action="version", version=f"mbstudio {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in COMMANDS.items():
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text[0].upper() + help_text[1:] + ".",
            epilog=f"example:\n  {EXAMPLES[name]}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if name == command:
            _module(name).add_arguments(p)
            if name in COMPUTING and not _has_option(p, "--quiet"):
                p.add_argument("--quiet", action="store_true", help="no progress or notes on stderr")
    return parser


def _has_option(parser: argparse.ArgumentParser, option: str) -> bool:
    return any(option in action.option_strings for action in parser._actions)


def _run(args: argparse.Namespace) -> int:
    """The command; with --quiet, what it would say on stderr besides an error is dropped (the commands that
    report progress leave it out themselves). A failed command's error lines (`mbstudio COMMAND: …`) still reach
    stderr: a quiet run that fails must say why."""
    if not getattr(args, "quiet", False):
        with builds_said(lambda text, _: print(text, file=sys.stderr, flush=True)):  # the first run on a new model
            return _module(args.command).run(args)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        code = _module(args.command).run(args)
    if code:
        sys.stderr.writelines(line for line in said.getvalue().splitlines(True) if line.startswith("mbstudio "))
    return code


def default_parser() -> argparse.ArgumentParser:
    """`mbstudio [FILE]`: no sub-command."""
    lines = "\n".join(f"  {name:12s} {text}" for name, text in COMMANDS.items())
    parser = Parser(
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


# OpenBLAS' worker threads spin for ~0.1 s waiting for work before they sleep (THREAD_TIMEOUT 2^28 cycles): a
# command pays 25 ms of CPU for it at numpy's import alone, in a process of 0.25 s. They sleep at once instead; a
# large product still runs on every thread. Before numpy is imported; a value the user set stays.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def _is_program() -> bool:
    """Whether this process is the `mbstudio` program (the console script, or `python -m mbstudio.cli`), not a
    Python program that calls main() (a test setting sys.argv, say), whose process must outlive the command."""
    started = sys.modules.get("__main__")
    spec = getattr(started, "__spec__", None)
    return (
        getattr(spec, "name", None) == "mbstudio.cli"
        or os.path.basename(getattr(started, "__file__", "")) == "mbstudio"
    )


@contextlib.contextmanager
def _imports_uncollected(program: bool) -> Iterator[None]:
    """The program's command imported without the garbage collector, which would traverse the growing heap of
    modules again and again (10 ms of a command of 0.2 s), then those objects set aside for good (gc.freeze):
    later collections only look at what the command itself makes. Left as it is when main() is called from
    Python."""
    if not program or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _exit_now(code: int) -> int:
    """The program's end once its command is done, without the interpreter's teardown of every module and object
    (20 ms of a command of 0.2 s): the exit handlers run and the output is flushed first, as at a normal exit.
    A command that left a thread running ends the usual way, which waits for it."""
    if threading.active_count() > 1 or not hasattr(atexit, "_run_exitfuncs"):
        return code
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # closed, or replaced by None
            stream.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    interactive = argv is None
    argv = sys.argv[1:] if argv is None else argv
    command = f"mbstudio {argv[0]}" if argv and argv[0] in COMMANDS else "mbstudio"
    try:
        if argv and argv[0] in COMMANDS:
            program = interactive and _is_program()
            with _imports_uncollected(program):
                args = build_parser(argv[0]).parse_args(argv)
            code = _run(args)
            return _exit_now(code) if program else code
        args = default_parser().parse_args(argv)
        if interactive and not args.summary and _has_display():
            return _window(args.file)
        from . import samples
        from .model import load
        from .report import check_report, format_report  # the kinematics, imported when a summary is asked for

        model = samples.load() if args.file is None else load(args.file)
        print(format_report(check_report(model)))
        return 0
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    except (ModelError, AssemblyError, OSError) as exc:  # OSError: a file that cannot be read or written
        print(f"{command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{command}: error: not enough memory for this run; ask for fewer samples or digits", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
