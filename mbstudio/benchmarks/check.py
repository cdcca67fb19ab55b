"""Reading and checking very large models: `mbstudio check` on a planar chain of 20 000 and of 100 000 bodies, from
reading the file to the platform search, each in a process of its own (its CPU time and peak memory, as
`/usr/bin/time -v` gives them), and loading a body of 16 000 and of 100 000 named points (loading was quadratic in
them). The reference is the target time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .models import chain_document
from .registry import benchmark, row

CHECK_TARGETS = {20_000: 10.0, 100_000: 60.0}  # bodies: CPU seconds of the whole command
CHECK_MEMORY_MB = {100_000: 500}  # bodies: peak resident megabytes of the whole command
POINTS_TARGETS = {16_000: 1.0, 100_000: 5.0}  # points of one body: CPU seconds to load


@benchmark("check")
def _check(states: int) -> list[dict]:
    """Once each (a few minutes in all); `states` does not apply."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for bodies, target in CHECK_TARGETS.items():
            path = Path(folder) / f"chain{bodies}.mbs"
            path.write_text(json.dumps(chain_document(bodies)))
            wall, cpu, peak_mb = _command(["check", str(path)])
            name = f"check {bodies} bodies (CPU s per run)"
            rows.append(row(name, cpu, target, wall_s=wall, peak_mb=peak_mb, reference_method="target"))
            if bodies in CHECK_MEMORY_MB:
                memory = f"check {bodies} bodies (peak resident MB)"
                rows.append(row(memory, peak_mb, CHECK_MEMORY_MB[bodies], unit="MB", reference_method="target"))
        for points, target in POINTS_TARGETS.items():
            document = chain_document(2)
            document["bodies"][0]["points"] |= {f"p{i}": [i * 1e-3, 0.0, 0.0] for i in range(points)}
            path = Path(folder) / f"points{points}.mbs"
            path.write_text(json.dumps(document))
            rows.append(
                row(f"load a body of {points} points (CPU s)", _load_cpu(path), target, reference_method="target")
            )
    return rows


def _command(arguments: list[str]) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak resident megabytes of `mbstudio ARGUMENTS` in a process of its own."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "mbstudio.cli", *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"mbstudio {' '.join(arguments)} exited with {child.returncode}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _load_cpu(path: Path) -> float:
    from ..model import load

    start = time.process_time()
    load(path)
    return time.process_time() - start
