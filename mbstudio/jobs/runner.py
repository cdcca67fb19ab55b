"""Jobs in separate processes: Cancel ends the process, so it takes effect at once even inside one long
mpmath or sympy call that never looks at a cancel flag (docs/architecture.md, principle 5). No Qt here: the window
polls `Runner.poll` from a timer; scripts and tests can call `Job.wait`.

The 'spawn' start method gives each job a fresh interpreter: forking a process that runs Qt and VTK
threads copies their locks in whatever state they are in. Spawning re-imports the main script, so a script
that starts jobs keeps its code under `if __name__ == "__main__":`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

import psutil

from ..model import Model, dumps
from .tasks import PARTIAL_RESULTS, TASKS, JobResult, text_hash

RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"
PROGRESS_INTERVAL = 0.05  # s between progress messages: the pipe carries what a person can see ...
PROGRESS_STEP = 0.1  # ... but a step of this part of the job or more is news (a build's "compiling its C", say)
HEARTBEAT_INTERVAL = 0.5  # s: the worker says it is alive this often, unless a native call holds the GIL
HEARTBEAT_TIMEOUT = 5.0  # s without a message or CPU time after which a job is reported as not responding
_context = multiprocessing.get_context("spawn")


def _child(conn: Connection, task: str | Callable, model_text: str, options: dict) -> None:
    """The job's process: run the task, send progress and a heartbeat, then the result or the error."""
    last, lock, finished = [0.0, 0.0], threading.Lock(), threading.Event()  # the last message's time and fraction

    def send(message: tuple) -> None:
        with lock:  # a Connection is not safe to use from two threads at once
            conn.send(message)

    def progress(fraction: float, message: str = "", part: object = None) -> None:
        if part is not None:
            send(("part", part))  # every part goes: a cancelled job's result is made of them
        now = time.monotonic()
        news = fraction >= 1.0 or fraction - last[1] >= PROGRESS_STEP or part is not None  # a part's message too
        if now - last[0] >= PROGRESS_INTERVAL or news:
            last[0], last[1] = now, fraction
            send(("progress", float(fraction), str(message)))

    def heartbeat() -> None:
        while not finished.wait(HEARTBEAT_INTERVAL):
            send(("heartbeat",))

    threading.Thread(target=heartbeat, daemon=True, name="heartbeat").start()
    function = TASKS[task] if isinstance(task, str) else task
    try:
        result = function(model_text, options, progress, lambda: False)
        finished.set()
        send(("done", result))
    except BaseException as exc:  # everything goes back as a message; the process ends either way
        finished.set()
        send(("failed", readable(exc), traceback.format_exc()))
    finally:
        conn.close()


def readable(exc: BaseException) -> str:
    """The exception's own message (our errors are written for people), its class when it has none."""
    text = str(exc).strip()
    return text if text else f"{type(exc).__name__} (no message)"


@dataclass
class Job:
    """One analysis run: its state, progress and, when done, its result or error."""

    id: int
    task: str
    title: str
    options: dict
    model_hash: str
    state: str = RUNNING
    fraction: float = 0.0
    message: str = "starting"
    error: str = ""
    details: str = ""  # the traceback, for "details on request"
    result: JobResult | None = None
    parts: list = field(default_factory=list)  # what the task sent as done: the result of one that stops early
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    heard: float = field(default_factory=time.monotonic)  # when the process last sent anything or used the CPU
    cpu: float = 0.0  # the process's CPU seconds when last looked at
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT
    responding: bool = True
    said: str = "starting"  # the last progress message, shown again when a silent process speaks again
    _process: object = field(default=None, repr=False)
    _conn: Connection | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self.state == RUNNING

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def poll(self) -> bool:
        """Read what the process sent; True when anything changed."""
        if not self.running:
            return False
        changed = False
        try:
            changed = self._read()
        except (EOFError, OSError):
            self._died()
            changed = True
        if self.running and not self._process.is_alive() and not self._conn.poll():
            self._died()
            changed = True
        return self._check_heartbeat() or changed

    def _read(self) -> bool:
        """Take every message already sent; True when there was any."""
        changed = False
        while self.running and self._conn.poll():
            changed = True
            self._receive(self._conn.recv())
        return changed

    def _check_heartbeat(self) -> bool:
        """A process that neither sends nor computes (stopped by a signal, or waiting on something that never
        comes) is reported as not responding, with Cancel still at hand; True when that changed. The CPU time
        it used counts as a word from it: a process that is starting (importing under load takes seconds) or
        inside one long native call that holds the GIL (compiling an engine) cannot run its heartbeat thread,
        but it is working."""
        silent = time.monotonic() - self.heard
        if self.running and silent >= HEARTBEAT_INTERVAL and self._computed():
            self.heard, silent = time.monotonic(), 0.0
        responding = not self.running or silent < self.heartbeat_timeout
        if responding == self.responding:
            return False
        self.responding = responding
        if not self.running:
            return True
        self.message = (
            self.said if responding else f"not responding: no word from its process and no CPU time for {silent:.0f} s"
        )
        return True

    def _computed(self) -> bool:
        """True when the process used CPU time since the last look."""
        try:
            times = psutil.Process(self._process.pid).cpu_times()
        except (psutil.Error, OSError):  # gone: poll sees it end
            return False
        cpu = times.user + times.system
        computed, self.cpu = cpu > self.cpu, cpu
        return computed

    def _died(self) -> None:
        self._process.join(timeout=1.0)
        code = self._process.exitcode
        if code is not None and code < 0:  # ended by a signal: from outside (or the system), not our code
            name = signal.Signals(-code).name if -code in signal.valid_signals() else "unknown"
            self.error = f"the job's process was killed by signal {-code} ({name}) before it finished"
        else:
            self.error = (
                f"the job's process ended without a result (exit code {code}); a script that starts jobs "
                "needs `if __name__ == '__main__':` around its code"
            )
        self._end(FAILED, self.error)

    def _receive(self, message: tuple) -> None:
        kind = message[0]
        self.heard = time.monotonic()
        if kind == "heartbeat":
            return
        if kind == "part":
            self.parts.append(message[1])
        elif kind == "progress":
            self.fraction, self.message = message[1], message[2]
            self.said = self.message
        elif kind == "done":
            self.result, self.fraction = message[1], 1.0
            self._end(DONE, "done")
        else:
            self.error, self.details = message[1], message[2]
            self._keep_parts()
            self._end(FAILED, message[1])

    def _end(self, state: str, message: str) -> None:
        self.state, self.message, self.ended = state, message, time.monotonic()
        self._process.join(timeout=1.0)
        self._conn.close()

    def _keep_parts(self) -> None:
        """A job that stops early (cancelled, or failing at a later part) keeps a result made of the parts it
        sent, where its task can build one from them (tasks.PARTIAL_RESULTS)."""
        build = PARTIAL_RESULTS.get(self.task)
        if self.parts and build is not None:
            self.result = build(self.parts, self.options, self.model_hash, self.elapsed)

    def cancel(self) -> None:
        """End the process now: SIGTERM, and SIGKILL if it is still there after a second; keep its parts."""
        with contextlib.suppress(EOFError, OSError):
            self._read()  # the parts sent so far, and a result that came just before
        if not self.running:
            return
        self._process.terminate()
        with contextlib.suppress(ProcessLookupError):  # a stopped process takes SIGTERM once continued
            os.kill(self._process.pid, signal.SIGCONT)
        self._process.join(timeout=1.0)
        if self._process.is_alive():
            self._process.kill()
        self._keep_parts()
        self._end(CANCELLED, f"cancelled; kept {self.result.title}" if self.result else "cancelled")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (scripts and tests; the window polls instead); True if it ended."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.running:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self._conn.poll(0.1 if left is None else min(0.1, left))
            self.poll()
        return True


class Runner:
    """Starts jobs and keeps them; `poll()` returns the jobs that changed since the last call."""

    def __init__(self, heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> None:
        self.jobs: list[Job] = []
        self.heartbeat_timeout = heartbeat_timeout

    def submit(
        self, task: str | Callable, model: Model | str, options: dict | None = None, title: str | None = None
    ) -> Job:
        """Start `task` (a name in TASKS, or a top-level function with the same signature) on a snapshot of
        `model` (a Model or its .mbs text)."""
        text = model if isinstance(model, str) else dumps(model)
        name = task if isinstance(task, str) else task.__name__
        if isinstance(task, str) and task not in TASKS:
            raise ValueError(f"unknown job {task!r}; the jobs are {', '.join(TASKS)}")
        options = dict(options or {})
        receiver, sender = _context.Pipe(duplex=False)
        process = _context.Process(
            target=_child, args=(sender, task, text, options), daemon=True, name=f"mbstudio-{name}"
        )
        process.start()
        sender.close()  # the child holds the only sending end, so its exit is seen as EOF
        job = Job(
            len(self.jobs) + 1,
            name,
            title or name.replace("_", " "),
            options,
            text_hash(text),
            heartbeat_timeout=self.heartbeat_timeout,
            _process=process,
            _conn=receiver,
        )
        self.jobs.append(job)
        return job

    def poll(self) -> list[Job]:
        return [job for job in self.jobs if job.poll()]

    @property
    def running(self) -> list[Job]:
        return [job for job in self.jobs if job.running]

    def cancel_all(self) -> None:
        for job in self.running:
            job.cancel()
