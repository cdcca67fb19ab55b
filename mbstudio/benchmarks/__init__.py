"""Benchmarks: our timings against a reference implementation, side by side in the same run, one module per
family (registry.py: the rows, their verdicts and the table `mbstudio bench` prints).

    rows = run(["kernels", "sizes"])
    print(format_table(rows))
"""

from __future__ import annotations

from . import basepar, batched, blocks, check, cold_builds, drag, kernels, pkm, simulation, slider, urdf  # noqa: F401
from .registry import BENCHMARKS, Side, benchmark, compare, compared_row, format_table, measure, row, run

__all__ = ["BENCHMARKS", "Side", "benchmark", "compare", "compared_row", "format_table", "measure", "row", "run"]
