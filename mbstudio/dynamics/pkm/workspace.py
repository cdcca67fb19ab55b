"""Maps over a plane of platform positions (Müller 2021, sec. 8): at every reachable grid
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
COARSE = 17  # points per axis of the pass that finds where in the limbs' reach the reachable set lies


@dataclass
class WorkspaceMap:
    """Grid `first` (n1,) along `axes[0]` by `second` (n2,) along `axes[1]` (m), the other task coordinate at
    `fixed`; each quantity (n2, n1), NaN where unreachable or not computed (`computed` (n2, n1) False: a
    cancelled map)."""

    axes: tuple[str, str]
    first: np.ndarray
    second: np.ndarray
    fixed: dict[str, float]
    values: dict[str, np.ndarray] = field(default_factory=dict)
    computed: np.ndarray | None = None

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


def reach_box(
    pkm: ParallelMachine, plane: list[str], fixed: dict[str, float] | None = None
) -> dict[str, tuple[float, float]] | None:
    """The smallest box on the plane of task coordinates `plane` (the other task coordinates at `fixed`, default
    the document's pose) holding every platform position within reach of every limb (limb_reach: the exact
    box of the intersection of the limbs' discs in the plane); None when a limb's reach is unbounded or no
    position is within reach of all."""
    axes = [TASK_COORDINATES.index(n) for n in plane]
    level = np.array(pkm.position0, float)
    for name, value in (fixed or {}).items():
        level[TASK_COORDINATES.index(name)] = value
    off = [k for k in range(3) if k not in axes]
    discs = []
    for ball in limb_reach(pkm):
        if ball is None:
            return None
        centre, radius = ball
        height = float(np.linalg.norm(centre[off] - level[off]))
        if height >= radius:
            return None
        discs.append((centre[axes], float(np.sqrt(radius**2 - height**2))))
    corners = _disc_extremes(discs) + _circle_crossings(discs)
    scale = max(r for _, r in discs)
    inside = [p for p in corners if all(np.linalg.norm(p - c) <= r + 1e-9 * scale for c, r in discs)]
    if not inside:
        return None
    points = np.array(inside)
    return {name: (float(points[:, k].min()), float(points[:, k].max())) for k, name in enumerate(plane)}


def _disc_extremes(discs: list[tuple[np.ndarray, float]]) -> list[np.ndarray]:
    """The points of each disc furthest along ±each axis."""
    return [c + sign * r * e for c, r in discs for e in np.eye(2) for sign in (1, -1)]


def _circle_crossings(discs: list[tuple[np.ndarray, float]]) -> list[np.ndarray]:
    """Where the discs' circles cross, pair by pair."""
    out = []
    for i, (a, ra) in enumerate(discs):
        for b, rb in discs[i + 1 :]:
            d = float(np.linalg.norm(b - a))
            if d == 0 or d > ra + rb or d < abs(ra - rb):
                continue
            along = (ra**2 - rb**2 + d**2) / (2 * d)
            u = (b - a) / d
            across = np.sqrt(max(ra**2 - along**2, 0.0)) * np.array([-u[1], u[0]])
            out += [a + along * u + across, a + along * u - across]
    return out


def workspace_map(
    pkm: ParallelMachine,
    grid: dict[str, tuple[float, float, int]],
    at: dict[str, float] | None = None,
    progress: Callable[[float, str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> WorkspaceMap:
    """The map over `grid` {task coordinate: (low, high, points)} (two of them; sized_grid fits one to the
    reachable set), the others at `at` (default: the document's pose). A cancelled map keeps NaN where it did
    not get to."""
    names, axes, fixed, x = _grid_points(pkm, grid, at)
    values = {key: np.full(len(x), np.nan) for key in QUANTITIES}
    computed = np.zeros(len(x), bool)
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
        computed[chunk] = True
    shape = (len(axes[1]), len(axes[0]))
    shaped = {k: v.reshape(shape) for k, v in values.items()}
    return WorkspaceMap(tuple(names), axes[0], axes[1], fixed, shaped, computed.reshape(shape))


def sized_grid(
    pkm: ParallelMachine, points: int = 41, plane: list[str] | None = None, at: dict[str, float] | None = None
) -> dict[str, tuple[float, float, int]]:
    """A grid of `points` per axis on the plane (default: the first two task coordinates) that holds the
    reachable set: the limbs' reach box (reach_box), cut down to the positions a first COARSE x COARSE pass
    over it reaches and one of its cells beyond them, so the map's edge is never the workspace's. Where a
    limb's reach is unbounded, default_grid."""
    plane = list(plane or pkm.task_names[:2])
    _check_plane(pkm, plane)
    box = reach_box(pkm, plane, at)
    if box is None:
        return default_grid(pkm, points, plane)
    coarse = {name: (*box[name], COARSE) for name in plane}
    _, axes, _, x = _grid_points(pkm, coarse, at)
    reached = np.concatenate([_reach(pkm, x[i : i + CHUNK])[1] for i in range(0, len(x), CHUNK)])
    reached = reached.reshape(len(axes[1]), len(axes[0]))
    grid = {name: (*box[name], points) for name in plane}
    if reached.any():
        for k, name in enumerate(plane):
            hit = np.flatnonzero(reached.any(axis=k))  # rows follow the second coordinate, columns the first
            low, high = max(hit[0] - 1, 0), min(hit[-1] + 1, COARSE - 1)
            grid[name] = (float(axes[k][low]), float(axes[k][high]), points)
    return grid


def _check_plane(pkm: ParallelMachine, names: list[str]) -> None:
    if len(names) != 2 or len(set(names)) != 2 or any(n not in pkm.task_names for n in names):
        raise ModelError("grid", "must vary two task coordinates", names, " and ".join(pkm.task_names))


def _grid_points(
    pkm: ParallelMachine, grid: dict[str, tuple[float, float, int]], at: dict[str, float] | None
) -> tuple[list[str], list[np.ndarray], dict[str, float], np.ndarray]:
    """The grid's names and axes, the other task coordinates' values, and every grid point's task coordinates
    (rows: the first axis varying fastest)."""
    names = list(grid)
    _check_plane(pkm, names)
    axes = [np.linspace(*grid[n]) for n in names]
    fixed = {n: float(pkm.position0[TASK_COORDINATES.index(n)]) for n in pkm.task_names if n not in names}
    fixed |= {n: float(v) for n, v in (at or {}).items() if n in fixed}
    mesh = np.meshgrid(*axes)
    x = np.zeros((mesh[0].size, len(pkm.axes)))
    for j, name in enumerate(pkm.task_names):
        x[:, j] = mesh[names.index(name)].ravel() if name in names else fixed[name]
    return names, axes, fixed, x


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


def limb_reach(pkm: ParallelMachine) -> list[tuple[np.ndarray, float] | None]:
    """Per limb, a ball that holds every platform position the limb can reach: its centre (3,) in the ground
    frame and its radius, the lengths of the links on its chain from the ground to the platform added up (the
    joints turn about points fixed in both bodies they join, so no pose takes the platform further); None for
    a limb with a sliding joint without limits of travel."""
    out = []
    for instance in pkm.limbs:
        tree, m = instance.model.mech.tree, instance.mount
        chain = _chain(tree, instance.model.body)
        radius = _chain_length(tree, chain)
        start = np.asarray(chain[0].before.origin, float)  # the first joint's centre, in the limb's ground frame
        centre = m.origin + m.rotation @ start - pkm.rotation0 @ m.platform_origin
        out.append(None if radius is None else (centre, radius))
    return out


def _chain(tree, body: int) -> list:
    """The tree's links from the ground to `body`, in order."""
    by_child = {link.child: link for link in tree.links}
    chain = []
    while body != 0:
        chain.append(by_child[body])
        body = chain[-1].parent
    return chain[::-1]


def _chain_length(tree, chain: list) -> float | None:
    """The distance between consecutive joint centres on each body of the chain, the last to the platform's
    origin, and the travel of every sliding joint; None when a sliding joint has no limits."""
    total = 0.0
    for link, following in zip(chain, [*chain[1:], None], strict=True):
        end = np.zeros(3) if following is None else np.asarray(following.before.origin, float)
        total += float(np.linalg.norm(end - np.asarray(link.after.origin, float)))
        for primitive in link.primitives:
            if primitive.kind == "T":
                travel = _travel(tree, primitive.coordinate)
                if travel is None:
                    return None
                total += travel
    return total


def _travel(tree, index: int) -> float | None:
    """The largest distance a sliding coordinate can take its body from where its joint frames meet."""
    name = tree.coordinates[index]
    coordinate = next(c for j in tree.model.joints for c in j.coordinates if c.name == name)
    if coordinate.min is None or coordinate.max is None:
        return None
    return max(abs(float(coordinate.min)), abs(float(coordinate.max)))
