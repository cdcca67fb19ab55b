"""The check rows of `mbstudio bench` measure the command alone: its peak resident memory is its own, not the
peak of the process that started it (which Linux and macOS carry across exec)."""

from __future__ import annotations

import resource
import sys

from mbstudio import samples
from mbstudio.benchmarks.check import command_usage
from mbstudio.benchmarks.registry import format_table

TOUCHED_MB = 400  # this process's own peak is raised past this before the command starts


def test_a_commands_peak_memory_does_not_count_the_process_that_started_it():
    block = bytearray(TOUCHED_MB * 2**20)
    block[:: resource.getpagesize()] = b"\1" * len(block[:: resource.getpagesize()])  # resident, page by page
    del block
    own_peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024) / 2**20
    code, cpu, peak_mb, out = command_usage(["check", str(samples.path("four_bar"))])
    assert code == 0 and "assembles at the initial configuration: yes" in out and cpu > 0
    # a four-bar's check (Python, numpy and the model code: tens of MB) against a starter that peaked past 400 MB;
    # counted with the starter's pages, the figure would be at least the starter's peak
    assert own_peak_mb >= TOUCHED_MB and 0 < peak_mb < own_peak_mb / 2


def test_the_check_rows_give_the_median_and_spread_of_several_processes(monkeypatch):
    from mbstudio.benchmarks import check

    monkeypatch.setattr(check, "CHECK_TARGETS", {200: 10.0})  # a small chain: the rows, not the big models' figures
    monkeypatch.setattr(check, "CHECK_MEMORY_MB", {200: 500})
    monkeypatch.setattr(check, "POINTS_TARGETS", {100: 1.0})
    cpu, memory, load = check._check(0)
    assert cpu["name"] == "check 200 bodies (s per run, CPU)" and memory["unit"] == "MB"
    assert cpu["samples"] == memory["samples"] == check.CHECK_PROCESSES and load["samples"] >= 3
    assert load["clock"] == "thread CPU" and memory["ours_s_per_state"] == cpu["peak_mb"] > 0 and cpu["wall_s"] > 0
    table = format_table([cpu, memory, load]).splitlines()[1:]  # seconds and megabytes, not microseconds
    assert [line.split()[-6] for line in table] == ["s", "MB", "s"]
    for r in (cpu, memory, load):
        assert r["ours_iqr_s"] >= 0 and r["reference_method"] == "target"
        assert r["verdict"] == ("meets target" if r["ratio"] <= 1 else "misses target")
