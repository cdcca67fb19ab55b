"""Reading and checking very large models: `mbstudio check` on a planar chain of 20 000 and of 100 000 bodies, from
reading the file to the platform search, each run in a process of its own (its CPU time and peak memory, as
`/usr/bin/time -v` gives them: the median and spread of a few processes), and loading a body of 16 000 and of
100 000 named points (loading was quadratic in them; the harness's thread CPU time). The reference is the target."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .models import chain_document
from .registry import Side, Timing, benchmark, measure, row, target_row, timing_of

CHECK_TARGETS = {20_000: 10.0, 100_000: 60.0}  # bodies: CPU seconds of the whole command
CHECK_MEMORY_MB = {100_000: 500}  # bodies: peak resident megabytes of the whole command
CHECK_PROCESSES = 3  # per size: a median and a spread, within the few minutes the 100 000 bodies take
POINTS_TARGETS = {16_000: 1.0, 100_000: 5.0}  # points of one body: CPU seconds to load


@benchmark("check")
def _check(states: int) -> list[dict]:
    """A few minutes in all; `states` does not apply."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for bodies, target in CHECK_TARGETS.items():
            path = Path(folder) / f"chain{bodies}.mbs"
            path.write_text(json.dumps(chain_document(bodies)))
            walls, cpus, peaks = zip(*(_command(["check", str(path)]) for _ in range(CHECK_PROCESSES)), strict=True)
            cpu, peak = timing_of(cpus), timing_of(peaks)
            extra = {"wall_s": float(np.median(walls)), "peak_mb": peak.median, "clock": "CPU of the process"}
            rows.append(_target_row(f"check {bodies} bodies (s per run, CPU)", cpu, target, **extra))
            if bodies in CHECK_MEMORY_MB:
                memory = f"check {bodies} bodies (peak resident MB)"
                rows.append(_target_row(memory, peak, CHECK_MEMORY_MB[bodies], unit="MB"))
        for points, target in POINTS_TARGETS.items():
            document = chain_document(2)
            document["bodies"][0]["points"] |= {f"p{i}": [i * 1e-3, 0.0, 0.0] for i in range(points)}
            path = Path(folder) / f"points{points}.mbs"
            path.write_text(json.dumps(document))
            timing = measure(Side(_load, [(path,)]), min_samples=3, max_samples=10)
            rows.append(target_row(f"load a body of {points} points (s per load)", timing, target))
    return rows


def _target_row(name: str, timing: Timing, target: float, **extra) -> dict:
    """A row of the median of the processes against its target, with their spread (interquartile range)."""
    out = row(name, timing.median, target, 1.0, reference_method="target", **extra)
    return {**out, "ours_iqr_s": timing.iqr, "samples": timing.samples}


# Linux and macOS keep a process's peak resident memory across exec, so a command started straight from the bench
# reported the bench's own peak where it was the larger (737 MB for a 20 000-body check of 117 MB, the bench having
# peaked at 700 MB; writing the 100 000-body file alone takes it to 300 MB): a small Python starts the command and
# reports the figures of its child alone, the command's stdout beside them.
_STARTER = (
    "import json, os, subprocess, sys; child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, "
    "stderr=subprocess.DEVNULL); out = child.stdout.read(); _, status, usage = os.wait4(child.pid, 0); "
    "print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss, "
    "out.decode()]))"
)
_MAXRSS_UNIT = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, kilobytes elsewhere


def command_usage(arguments: list[str]) -> tuple[int, float, float, str]:
    """Exit code, CPU seconds, peak resident megabytes and stdout of `mbstudio ARGUMENTS` in a process of its own,
    its peak not counting the calling process's."""
    command = [sys.executable, "-m", "mbstudio.cli", *arguments]
    done = subprocess.run([sys.executable, "-c", _STARTER, *command], capture_output=True, text=True, check=True)
    code, cpu, maxrss, out = json.loads(done.stdout)
    return code, cpu, maxrss * _MAXRSS_UNIT / 2**20, out


def _command(arguments: list[str]) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak resident megabytes of `mbstudio ARGUMENTS` in a process of its own."""
    start = time.perf_counter()
    code, cpu, peak_mb, _ = command_usage(arguments)
    if code != 0:
        raise RuntimeError(f"mbstudio {' '.join(arguments)} exited with {code}")
    return time.perf_counter() - start, cpu, peak_mb


def _load(path: Path) -> None:
    from ..model import load

    load(path)
