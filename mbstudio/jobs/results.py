"""What each analysis's job returns, as a frozen class the window, the commands and the exporters read by
attribute (`result.data.summary`), beside its provenance in `JobResult`.

A result crosses a process boundary (jobs/runner.py pickles it), so its fields are plain data: numbers, strings,
lists, dicts, numpy arrays, and the computing layer's own result objects where they are already plain data
(`SuspensionCurves`). Adding an analysis: one class here, built by its task in jobs/tasks.py (docs/architecture.md,
"Adding an analysis"). Tasks not yet moved here still return a dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class EquilibriumResult:
    """Analysis › Equilibrium: the point found (linear/equilibrium.py `OperatingPoint.to_dict`), every
    coordinate's value there, and what the window says of it (held forces, neutral directions, stability)."""

    point: dict[str, Any]
    values: dict[str, float]
    summary: str


@dataclass(frozen=True)
class CodeResult:
    """The equations as source files (C, a numpy module) or an FMU: {file name: text or bytes}."""

    files: dict[str, str | bytes]


@dataclass(frozen=True)
class ImportResult:
    """A mechanism read from a URDF or MJCF file: its .mbs text and what the import changed or left out."""

    model: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EngineResult:
    """The compiled engine of a model revision: whether it runs as native code (else CasADi's interpreter)."""

    native: bool


@dataclass(frozen=True)
class SuspensionResult:
    """A suspension corner's kinematic curves (simulation/suspension.py `SuspensionCurves`)."""

    curves: Any


@dataclass(frozen=True)
class WorkspaceResult:
    """A parallel machine's workspace map over a plane of platform positions (Müller 2021)."""

    axes: list[str]  # the two task coordinates of the plane
    first: np.ndarray  # the grid along axes[0], m
    second: np.ndarray  # along axes[1], m
    fixed: dict[str, float]  # the other task coordinates' values, m
    values: dict[str, np.ndarray]  # quantity -> (len(second), len(first)), NaN where out of reach
    computed: np.ndarray  # False where a cancelled map did not get to
    labels: dict[str, str]  # quantity -> its name as shown
    units: dict[str, str]  # quantity -> its unit
    platform: str
    sized: bool  # the grid was fitted to the reachable set
    cancelled: bool
