"""Maps over a plane of platform positions (seed 002, sec. 8, digest 8.2 item 13): at every reachable grid
point the condition number of M_t, the dynamic manipulability |det(M_t⁻¹ J_IKᵀ)| and the condition number of
J_IK; NaN where some limb cannot put the platform there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...model.document import TASK_COORDINATES
from ...model.errors import ModelError
from .task_space import ParallelMachine

QUANTITIES = {
    "mass_condition": ("condition number of M_t", "1"),
    "dynamic_manipulability": ("dynamic manipulability |det(M_t⁻¹ J_IKᵀ)|", "(m/s²)/(N m) per axis"),
    "jacobian_condition": ("condition number of J_IK", "1"),
}
CHUNK = 400  # grid points per batch: between two progress reports and cancel checks


@dataclass
class WorkspaceMap:
    """Grid `first` (n1,) along `axes[0]` by `second` (n2,) along `axes[1]` (m), the other task coordinate at
    `fixed`; each quantity (n2, n1), NaN where unreachable."""

    axes: tuple[str, str]
    first: np.ndarray
    second: np.ndarray
    fixed: dict[str, float]
    values: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def reachable(self) -> np.ndarray:
        return np.isfinite(self.values["mass_condition"])


def default_grid(
    pkm: ParallelMachine, points: int = 41, plane: list[str] | None = None
) -> dict[str, tuple[float, float, int]]:
    """The plane's task coordinates (default: the first two) about the document's pose, ± 0.8 of the platform's
    distance from the ground origin (about a Delta's reach), `points` per axis."""
    half = 0.8 * max(float(np.linalg.norm(pkm.position0)), pkm.mech.length_scale * 0.1)
    centre = {name: float(pkm.position0[TASK_COORDINATES.index(name)]) for name in pkm.task_names}
    return {name: (centre[name] - half, centre[name] + half, points) for name in plane or pkm.task_names[:2]}


def workspace_map(
    pkm: ParallelMachine,
    grid: dict[str, tuple[float, float, int]],
    at: dict[str, float] | None = None,
    progress: Callable[[float, str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> WorkspaceMap:
    """The map over `grid` {task coordinate: (low, high, points)} (two of them), the others at `at` (default:
    the document's pose). A cancelled map keeps NaN where it did not get to."""
    names = list(grid)
    if len(names) != 2 or any(n not in pkm.task_names for n in names):
        raise ModelError("grid", "must vary two task coordinates", names, " and ".join(pkm.task_names))
    axes = [np.linspace(*grid[n]) for n in names]
    fixed = {n: float(pkm.position0[TASK_COORDINATES.index(n)]) for n in pkm.task_names if n not in names}
    fixed |= {n: float(v) for n, v in (at or {}).items() if n in fixed}
    mesh = np.meshgrid(*axes)
    x = np.zeros((mesh[0].size, len(pkm.axes)))
    for j, name in enumerate(pkm.task_names):
        x[:, j] = mesh[names.index(name)].ravel() if name in names else fixed[name]
    values = {key: np.full(len(x), np.nan) for key in QUANTITIES}
    for first in range(0, len(x), CHUNK):
        if cancel is not None and cancel():
            break
        if progress is not None:
            progress(first / len(x), f"points {first + 1}-{min(first + CHUNK, len(x))} of {len(x)}")
        chunk = slice(first, first + CHUNK)
        states, reached = _reach(pkm, x[chunk])
        if reached.any():
            measured = pkm.mobility_measures([s[reached] for s in states])
            for key, found in measured.items():
                values[key][chunk][reached] = found
    shape = mesh[0].shape
    return WorkspaceMap(tuple(names), axes[0], axes[1], fixed, {k: v.reshape(shape) for k, v in values.items()})


def _reach(pkm: ParallelMachine, x: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Each limb's coordinates at the task coordinates x (N, δ_p), walked from the document's pose, and which
    points every limb reaches."""
    position = pkm.positions(x)
    states, reached = [], np.ones(len(x), bool)
    for k, limb in enumerate(pkm.limbs):
        target, rotation = pkm.limb_target(limb, position)
        start = np.repeat(pkm.start[k], len(x), axis=0)
        q, errors = limb.model.solve_pose(target, rotation, start, substeps=8)
        states.append(q)
        reached &= errors <= 1e3 * limb.model.tolerance
    return states, reached
