"""The benchmarks' registry, their rows and the table `mbstudio bench` prints.

A benchmark is a function registered under a short name; it takes the number of states to batch (those that
do not batch states ignore it) and returns rows, one per measured quantity:

    @benchmark("mass_matrix")
    def _mass_matrix(states: int) -> list[dict]:
        ...
        comparison = compare(Side(ours, states_ours), Side(pin.crba, states_theirs))
        return [compared_row("puma560 mass matrix", comparison, states=len(states_ours))]

Every timing goes through `compare` (or `measure` for a row whose reference is a target): the CPU time of the
calling thread, not the wall clock, so that another process's load shows as little as it can; the two sides
interleaved, A B A B ..., so that what load remains falls on both alike; as many samples as give each side
`MIN_SECONDS` in all; the median and the interquartile range per side, and the ratio as the median of the
pairwise ratios with its quartiles. Each side's sample is the same loop over argument tuples made beforehand,
calling the side's function bare, so nothing is wrapped around one side only.

Every row has "name", "ours_s_per_state", "reference_s_per_state" and "ratio" = ours / reference (below 1:
ours is faster), and "verdict": "loss" where ours is slower than the reference, "misses target" where a row
with a target ratio ("target") exceeds it, else "win" (or "meets target"); further keys are free.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

MIN_SECONDS = 0.2  # each side's samples in all, at least
BLOCK_SECONDS = 2e-3  # one sample, at least: calls of a few µs are timed in blocks
LONG_SECONDS = 0.1  # a call this long is timed after one warm-up call, without a second calibration call

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
    out = {"name": name, "ours_s_per_state": ours_s, "reference_s_per_state": reference_s, "ratio": ratio}
    return {**out, **({"target": target} if target is not None else {}), "verdict": _verdict(ratio, target), **extra}


def _verdict(ratio: float, target: float | None) -> str:
    if target is None:
        return "win" if ratio <= 1.0 else "loss"
    return "meets target" if ratio <= target else "misses target"


@dataclass(frozen=True)
class Side:
    """One side of a comparison: each sample calls `call(*a)` for every argument tuple `a` of `args`, nothing
    else; the arguments are made before (outside the timed region, for both sides alike). `setup`, if given,
    runs before each sample, untimed (a cache cleared, a file written). `per_call`: the states (or whatever
    unit the row names) one call covers, a batch's size, by which the times are divided."""

    call: Callable[..., object]
    args: Sequence[tuple] = ((),)
    setup: Callable[[], object] | None = None
    per_call: float = 1


def per_state(args: tuple) -> list[tuple]:
    """One argument tuple per state from arrays (N, ...) by argument, each row contiguous: made before timing."""
    return [tuple(np.ascontiguousarray(a[i]) for a in args) for i in range(len(args[0]))]


@dataclass(frozen=True)
class Timing:
    """Seconds per call of one side: the median and the interquartile range over the samples."""

    median: float
    iqr: float
    samples: int
    calls: float  # per sample (states, where a call covers several)


@dataclass(frozen=True)
class Comparison:
    """Two sides timed in pairs by one clock."""

    ours: Timing
    reference: Timing
    ratio: float  # the median of the samples' pairwise ratios (ours / reference, each pair taken back to back)
    ratio_iqr: tuple[float, float]  # their first and third quartiles
    clock: str


def _quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    q1, median, q3 = np.percentile(np.asarray(values, float), [25, 50, 75])
    return float(q1), float(median), float(q3)


def timing_of(seconds: Sequence[float], calls: float = 1) -> Timing:
    """The median and interquartile range of samples taken otherwise (processes, megabytes), per call."""
    q1, median, q3 = _quartiles([s / calls for s in seconds])
    return Timing(median, q3 - q1, len(seconds), calls)


def _sampler(side: Side, clock: Callable[[], int]) -> Callable[[], float]:
    """A function taking one sample of `side` and returning its seconds; the loop is the same for every side."""
    call, args, setup = side.call, side.args, side.setup

    def sample() -> float:
        if setup is not None:
            setup()
        start = clock()
        for a in args:
            call(*a)
        return (clock() - start) * 1e-9

    return sample


def _calibrated(side: Side, clock: Callable[[], int], block_s: float) -> tuple[Side, float]:
    """`side` with its argument tuples repeated so that one sample takes at least `block_s` (a call of a few µs
    is not timed alone: the clock's own cost and resolution would show), after one untimed warm-up sample."""
    seconds = _sampler(side, clock)()
    if seconds >= LONG_SECONDS or side.setup is not None:  # long, or prepared per sample: the warm-up calibrates
        return side, seconds
    seconds = _sampler(side, clock)()
    if seconds >= block_s:
        return side, seconds
    repeat = math.ceil(block_s / max(seconds, 1e-7))
    side = Side(side.call, list(side.args) * repeat, None, side.per_call)
    return side, _sampler(side, clock)()


def interleave(samplers: Sequence[Callable[[], float]], samples: int) -> list[list[float]]:
    """`samples` rounds of one sample from each sampler in turn (A B A B ...), with the garbage collector paused
    (as timeit does) for every side alike."""
    taken: list[list[float]] = [[] for _ in samplers]
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(samples):
            for sampler, out in zip(samplers, taken, strict=True):
                out.append(sampler())
    finally:
        if enabled:
            gc.enable()
    return taken


def sample_count(seconds: Sequence[float], min_seconds: float, min_samples: int, max_samples: int) -> int:
    """Enough samples for each side to take `min_seconds` in all, within the bounds."""
    needed = max(math.ceil(min_seconds / max(s, 1e-9)) for s in seconds)
    return max(min_samples, min(max_samples, needed))


def compare(
    ours: Side,
    reference: Side,
    min_seconds: float = MIN_SECONDS,
    min_samples: int = 7,
    max_samples: int = 400,
    wall: bool = False,
) -> Comparison:
    """Both sides timed by the CPU time of the calling thread (`wall`: the wall clock, for work spread over
    threads), interleaved, each sample one pass over the side's argument tuples."""
    clock = time.perf_counter_ns if wall else time.thread_time_ns
    (ours, a), (reference, b) = (_calibrated(s, clock, BLOCK_SECONDS) for s in (ours, reference))
    count = sample_count((a, b), min_seconds, min_samples, max_samples)
    a, b = interleave([_sampler(ours, clock), _sampler(reference, clock)], count)
    n_a, n_b = (len(s.args) * s.per_call for s in (ours, reference))
    return comparison_of([x / n_a for x in a], [y / n_b for y in b], "wall" if wall else "thread CPU")


def comparison_of(ours: Sequence[float], reference: Sequence[float], clock: str) -> Comparison:
    """The comparison of interleaved samples (seconds per call, taken in pairs)."""
    q1, ratio, q3 = _quartiles([x / y for x, y in zip(ours, reference, strict=True)])
    return Comparison(timing_of(ours), timing_of(reference), ratio, (q1, q3), clock)


def measure(
    side: Side, min_seconds: float = MIN_SECONDS, min_samples: int = 7, max_samples: int = 400, wall: bool = False
) -> Timing:
    """One side alone (a row whose reference is a target), timed as `compare` times each side."""
    clock = time.perf_counter_ns if wall else time.thread_time_ns
    side, seconds = _calibrated(side, clock, BLOCK_SECONDS)
    count = sample_count((seconds,), min_seconds, min_samples, max_samples)
    return timing_of(interleave([_sampler(side, clock)], count)[0], len(side.args) * side.per_call)


def compared_row(name: str, comparison: Comparison, target: float | None = None, **extra) -> dict:
    """A row of both sides' medians with their spreads (interquartile ranges) and the ratio's; the ratio is the
    median of the pairwise ratios, which the load shared by each pair disturbs least."""
    ours, reference = comparison.ours, comparison.reference
    out = row(name, ours.median, reference.median, target, **extra)
    ratio = {"ratio": comparison.ratio, "ratio_iqr": list(comparison.ratio_iqr)}
    spreads = {"ours_iqr_s": ours.iqr, "reference_iqr_s": reference.iqr, "samples": ours.samples}
    q1, q3 = comparison.ratio_iqr
    # the verdict of the median; "uncertain" where the ratio's quartiles straddle the threshold it is judged by
    uncertain = q1 <= (1.0 if target is None else target) <= q3
    out.update(ratio, **spreads, clock=comparison.clock, verdict=_verdict(comparison.ratio, target))
    return {**out, "verdict_uncertain": uncertain}


def target_row(name: str, timing: Timing, target_s: float, **extra) -> dict:
    """A row of one side's median thread CPU time against a target time (the reference column)."""
    out = row(name, timing.median, target_s, 1.0, reference_method="target", **extra)
    return {**out, "ours_iqr_s": timing.iqr, "samples": timing.samples, "clock": "thread CPU"}


def run(only: list[str] | None = None, states: int = 10_000) -> list[dict]:
    unknown = set(only or []) - set(BENCHMARKS)
    if unknown:
        raise KeyError(f"unknown benchmark(s) {sorted(unknown)}; the benchmarks are: {', '.join(BENCHMARKS)}")
    return [r for name, function in BENCHMARKS.items() if not only or name in only for r in function(states)]


def format_table(rows: list[dict]) -> str:
    """Per-state rows in µs; rows whose name says "(s per ...)" (whole runs, simulated seconds) in s, rows with a
    "unit" (a peak memory's MB) in it. Each time
    is the median with its interquartile range after "±"; the ratio's quartiles follow it, and a "?" after the
    verdict where they straddle the ratio it is judged by (1, or the target)."""
    header = (
        f"{'benchmark':56s} {'ours':>10s} {'±':>8s}    {'reference':>10s} {'±':>8s}    {'ratio':>7s} "
        f"{'q1-q3':>13s} {'target':>6s} {'verdict':15s}"
    )
    lines = [header + f" {'max |diff|':>10s}  reference"]
    for r in rows:
        scale, unit = (1.0, r["unit"]) if "unit" in r else (1.0, "s") if "(s per" in r["name"] else (1e6, "µs")
        ours, ref = scale * r["ours_s_per_state"], scale * r["reference_s_per_state"]
        spread = [f"{scale * r[k]:8.3g}" if k in r else " " * 8 for k in ("ours_iqr_s", "reference_iqr_s")]
        quartiles = "{:6.3f}-{:<6.3f}".format(*r["ratio_iqr"]) if "ratio_iqr" in r else " " * 13
        difference = f"{r['max_abs_difference']:10.1e}" if "max_abs_difference" in r else " " * 10
        target = f"{r['target']:6.2f}" if "target" in r else " " * 6
        verdict = r["verdict"] + (" ?" if r.get("verdict_uncertain") else "")
        lines.append(
            f"{r['name']:56s} {ours:10.4g} {spread[0]} {unit:2s} {ref:10.4g} {spread[1]} {unit:2s} "
            f"{r['ratio']:7.3f} {quartiles} {target} {verdict:15s} {difference}  {r.get('reference_method', '')}"
        )
    return "\n".join(lines)
