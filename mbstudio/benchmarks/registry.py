"""The benchmarks' registry, their rows and the table `mbstudio bench` prints.

A benchmark is a function registered under a short name; it takes the number of states to batch (those that
do not batch states ignore it) and returns rows, one per measured quantity:

    @benchmark("mass_matrix")
    def _mass_matrix(states: int) -> list[dict]:
        ...
        return [row("puma560 mass matrix", ours_seconds / states, reference_seconds / states, states=states)]

Every row has "name", "ours_s_per_state", "reference_s_per_state" and "ratio" = ours / reference (below 1:
ours is faster), and "verdict": "loss" where ours is slower than the reference, "misses target" where a row
with a target ratio ("target") exceeds it, else "win" (or "meets target"); further keys are free.
"""

from __future__ import annotations

import time
from collections.abc import Callable

BENCHMARKS: dict[str, Callable[[int], list[dict]]] = {}


def benchmark(name: str) -> Callable:
    """Register a function `(states: int) -> list[dict]` under `name`."""

    def register(function: Callable[[int], list[dict]]) -> Callable[[int], list[dict]]:
        BENCHMARKS[name] = function
        return function

    return register


def row(name: str, ours_s: float, reference_s: float, target: float | None = None, **extra) -> dict:
    """One result row; times in seconds per state (or per whatever unit the row names). `target`: the ratio
    the row must not exceed (None: 1, ours at least as fast as the reference)."""
    ratio = ours_s / reference_s
    if target is None:
        verdict = "win" if ratio <= 1.0 else "loss"
    else:
        verdict = "meets target" if ratio <= target else "misses target"
    out = {"name": name, "ours_s_per_state": ours_s, "reference_s_per_state": reference_s, "ratio": ratio}
    return {**out, **({"target": target} if target is not None else {}), "verdict": verdict, **extra}


def best_time(function: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """The shortest of `repeat` wall-clock runs (the least disturbed by other load) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def per_call(function: Callable[[], object], calls: int = 2000, repeat: int = 3) -> float:
    """Seconds per call, the best of `repeat` loops (Python loop included, as a user's script would pay)."""
    return best_time(lambda: [function() for _ in range(calls)], repeat)[0] / calls


def run(only: list[str] | None = None, states: int = 10_000) -> list[dict]:
    unknown = set(only or []) - set(BENCHMARKS)
    if unknown:
        raise KeyError(f"unknown benchmark(s) {sorted(unknown)}; the benchmarks are: {', '.join(BENCHMARKS)}")
    return [r for name, function in BENCHMARKS.items() if not only or name in only for r in function(states)]


def format_table(rows: list[dict]) -> str:
    """Per-state rows in µs; rows whose name says "(s per ...)" (whole runs, simulated seconds) in s."""
    header = f"{'benchmark':52s} {'ours':>14s} {'reference':>14s} {'ratio':>7s} {'target':>6s} {'verdict':13s}"
    lines = [header + f" {'max |diff|':>10s}  reference"]
    for r in rows:
        scale, unit = (1.0, "s") if "(s per" in r["name"] else (1e6, "µs")
        ours, ref = scale * r["ours_s_per_state"], scale * r["reference_s_per_state"]
        difference = f"{r['max_abs_difference']:10.1e}" if "max_abs_difference" in r else " " * 10
        target = f"{r['target']:6.2f}" if "target" in r else " " * 6
        lines.append(
            f"{r['name']:52s} {ours:11.3f} {unit:2s} {ref:11.3f} {unit:2s} {r['ratio']:7.3f} {target} "
            f"{r['verdict']:13s} {difference}  {r.get('reference_method', '')}"
        )
    return "\n".join(lines)
