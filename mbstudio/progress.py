"""Progress and cancellation of long computations, written once for every analysis that takes them.

A caller passes `progress(fraction, message)` and `cancel` (a threading.Event, or a callable answering "stop
now?"); the computation reports as it goes and raises `Cancelled` where it next polls, so a cancelled run returns
nothing half done. The job runner (jobs/runner.py) and the window pass both; a script may pass neither.

The bottom layer: this module imports nothing from mbstudio (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Protocol

Progress = Callable[[float, str], None]  # progress(fraction done in [0, 1], what is being done)
Cancel = threading.Event | Callable[[], bool]


class PartProgress(Protocol):
    """A job's progress (jobs/runner.py): a Progress that may also carry a part of the result done so far, which
    a job that stops early (cancelled, or failed at the next part) keeps."""

    def __call__(self, fraction: float, message: str, part: object = None, /) -> None: ...


class Cancelled(Exception):
    """The caller asked the computation to stop; the message says where it was."""


def stop_requested(cancel: Cancel | None) -> Callable[[], bool]:
    """`cancel` as a function answering "stop now?": an Event's `is_set`, the callable itself, or never."""
    if cancel is None:
        return lambda: False
    return cancel.is_set if isinstance(cancel, threading.Event) else cancel


class Stages:
    """Progress over a sequence of stages, each a share of the bar in proportion to its weight, and Cancelled
    when asked to stop (polled at every report)."""

    def __init__(self, progress: Progress | None, cancel: Cancel | None, weights: list[float]) -> None:
        self.progress = progress
        self.stopped = stop_requested(cancel)
        total = sum(weights)
        self.shares = [w / total for w in weights]
        self.route = -1
        self.stage = ""

    def start(self, stage: str) -> None:
        self.route += 1
        self.stage = stage
        self.within(0.0, stage)

    def within(self, fraction: float, message: str) -> None:
        """`fraction` of the current stage is done."""
        if self.stopped():
            raise Cancelled(f"cancelled during: {message}")
        done = sum(self.shares[: self.route]) + fraction * (
            self.shares[self.route] if self.route < len(self.shares) else 0.0
        )
        if self.progress is not None:
            self.progress(min(done, 1.0), message)

    def done(self) -> None:
        if self.progress is not None:
            self.progress(1.0, "done")


_BUILDS_SAID: ContextVar[Callable[[str, float], None] | None] = ContextVar("builds_said", default=None)


@contextlib.contextmanager
def builds_said(say: Callable[[str, float], None]) -> Iterator[None]:
    """Within: a compiled library built because no cache holds it yet (seconds to a minute: the first command on a
    new model waits for it) is announced by `say(text, fraction)`, its steps with how far it is (0 to 1), and its
    end with the time it took."""
    token = _BUILDS_SAID.set(say)
    try:
        yield
    finally:
        _BUILDS_SAID.reset(token)


def say_building(text: str, fraction: float) -> None:
    """`text` and how far the build is (0 to 1) to the listener `builds_said` set in this context, if any."""
    say = _BUILDS_SAID.get()
    if say is not None:
        say(text, fraction)
