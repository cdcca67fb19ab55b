"""`mbstudio check` on very large models: a planar chain of 20 000 and of 100 000 bodies, from reading
the file to the platform search; the reference is the target time."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from .models import chain_document
from .registry import benchmark, row

CHECK_TARGETS = {20_000: 10.0, 100_000: 60.0}  # bodies: seconds


@benchmark("check")
def _check(states: int) -> list[dict]:
    """Once each (a minute in all); `states` does not apply."""
    from ..model import load
    from ..report import check

    rows = []
    for bodies, target in CHECK_TARGETS.items():
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "chain.mbs"
            path.write_text(json.dumps(chain_document(bodies)))
            start, cpu = time.perf_counter(), time.process_time()
            check(load(path))
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        rows.append(row(f"check {bodies} bodies (s per run)", wall, target, cpu_s=cpu, reference_method="target"))
    return rows
