"""Progress on stderr as the commands report it: on a terminal one line rewritten in place, elsewhere (a log
file, a pipe, CI) one line per step, so that steps do not run together as '2.0 %  4.0 %  6.0 % …'."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO


def progress_printer(stream: TextIO | None = None) -> Callable[[float, str], None]:
    """A `progress(fraction, message)` that writes to `stream` (default: stderr at the time of each call)."""

    def progress(fraction: float, message: str = "") -> None:
        out = stream or sys.stderr
        text = f"{100 * fraction:5.1f} %  {message}".rstrip()
        if out.isatty():
            out.write(f"\r{text[:72]:72s}" + ("\n" if fraction >= 1 else ""))
        else:
            out.write(text + "\n")
        out.flush()

    return progress
