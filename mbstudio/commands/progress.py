"""Progress on stderr as the commands report it: on a terminal one line rewritten in place, elsewhere (a log
file, a pipe, CI) one line per step, so that steps do not run together as '2.0 %  4.0 %  6.0 % …'."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

STEP = 0.05  # a line where the fraction has moved by this much since the last, or its message changed, or at the end


def progress_printer(stream: TextIO | None = None) -> Callable[[float, str], None]:
    """A `progress(fraction, message)` that writes to `stream` (default: stderr at the time of each call), where it
    says something new (STEP): a run's 35 check-point reports cost the free Delta's 2 s 3-5 ms of its 90 written
    line by line, where its user reads a few."""
    last: list = [None, None]  # the fraction and message last written

    def progress(fraction: float, message: str = "") -> None:
        if last[0] is not None and message == last[1] and last[0] <= fraction < min(1.0, last[0] + STEP):
            return  # (a fraction below the last's is a new task's start: written)
        last[:] = fraction, message
        out = stream or sys.stderr
        text = f"{100 * fraction:5.1f} %  {message}".rstrip()
        if out.isatty():
            out.write(f"\r{text[:72]:72s}" + ("\n" if fraction >= 1 else ""))
        else:
            out.write(text + "\n")
        out.flush()

    return progress
