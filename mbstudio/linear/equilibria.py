"""The equilibria of a mechanism found from several starts, each with its stability, and the operating point a
linearisation takes by default among them.

    found = equilibria(model)              # nearest the document's pose first: found[0].point, .stability
    point = equilibrium_or_pose(model)     # the nearest one that is not unstable; point.note says which and why

Newton (equilibrium.py) finds the equilibrium nearest its start; from the pose alone a slider-crank's crank may
settle standing up (unstable) while hanging down is as near. Starts with one coordinate turned by quarter turns
find both, and the eigenvalues of the linear model about each say which is stable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..dynamics.engine import Engine, engine
from ..model import Model
from ..model.errors import AssemblyError, ModelError
from .equilibrium import OperatingPoint, equilibrium, operating_point
from .linear_model import linearize


def equilibrium_or_pose(model: Model, hold: Mapping[str, float] | None = None) -> OperatingPoint:
    """The operating point a linearisation takes by default: among the equilibria found (`equilibria`), the one
    nearest the document's pose that is not unstable, else the nearest one (said so); with none found, the pose
    itself at rest (not an equilibrium: its drift is kept). Its `note` says which and why, its `found` lists
    every equilibrium found with its stability. With coordinates to `hold`, the equilibrium near the pose or
    the ModelError saying why there is none."""
    if hold:
        return equilibrium(model, hold=hold)
    found = equilibria(model)
    if not found:
        point = operating_point(model)
        try:
            equilibrium(model)
        except ModelError as exc:
            point.note = f"the document's pose: there is no equilibrium near it ({exc.problem})"
        return point
    settled = [f for f in found if f.stability != "unstable"]
    chosen = (settled or found)[0]
    point = chosen.point
    if chosen is found[0] and chosen.from_pose:
        point.note = f"the equilibrium near the document's pose (found from it; {_largest_move(model, point)})"
    else:
        why = "a nearer one is unstable" if chosen is not found[0] else "none is found from the pose itself"
        point.note = (
            f"the {ADJECTIVES[chosen.stability]} equilibrium nearest the document's pose ({why}; "
            f"{_largest_move(model, point)} from the pose)"
        )
    if not settled:
        point.note += "; every equilibrium found is unstable"
    point.found = [f.to_dict() for f in found]
    return point


@dataclass
class FoundEquilibrium:
    point: OperatingPoint
    stability: str  # "stable" (every motion about it decays), "marginal" (none grows), "unstable"
    growth: float  # the largest Re λ of the linear model about it, 1/s
    distance: float  # from the document's pose, in radians and lengths over the mechanism's size
    from_pose: bool  # Newton found it from the document's pose itself

    def to_dict(self) -> dict:
        values = self.point.values()
        return {
            "values": {n: values[n] for n in self.point.independent},
            "stability": self.stability,
            "largest_real_eigenvalue": self.growth,
        }


def equilibria(model: Model) -> list[FoundEquilibrium]:
    """The distinct equilibria found from the document's pose and, for up to SEARCHED independent coordinates,
    from starts with one of them turned by a quarter, a half and three quarters of a turn (a rotation) or moved
    by ± the mechanism's size (a translation); nearest the pose first, each with its stability (the eigenvalues
    of the linear model about it). A heavy pendulum's two, hanging and inverted, are both found from either."""
    eng = engine(model)
    pose = eng.mech.assemble(None)[0]
    found: list[FoundEquilibrium] = []
    for k, start in enumerate(_starts(eng, pose)):
        try:
            point = equilibrium(model, start)
        except (ModelError, AssemblyError):
            continue
        if not any(_same(eng, point.q, other.point.q) for other in found):
            found.append(_classified(model, eng, point, pose, from_pose=k == 0))
    return sorted(found, key=lambda f: f.distance)


SEARCHED = 4  # independent coordinates up to which equilibria are sought from turned starts (1 + 3k searches)
SAME = 1e-6  # radians, or this times the mechanism's size: two equilibria closer than this are one


def _starts(eng: Engine, pose: np.ndarray) -> list[np.ndarray]:
    starts = [pose]
    if len(eng.independent) > SEARCHED:
        return starts
    for i in eng.independent:
        rotation = eng.mech.tree.kinds[i] == "R"
        for shift in (np.pi / 2, np.pi, -np.pi / 2) if rotation else (eng.mech.length_scale, -eng.mech.length_scale):
            start = pose.copy()
            start[i] += shift
            try:
                starts.append(eng.close_loops(start)[0])
            except AssemblyError:
                continue  # the loops do not close there: no start
    return starts


def _difference(eng: Engine, q: np.ndarray, other: np.ndarray) -> np.ndarray:
    """q − other per coordinate, angles taken the short way round and lengths over the mechanism's size."""
    d = q - other
    rotation = np.array([kind == "R" for kind in eng.mech.tree.kinds])
    d[rotation] = (d[rotation] + np.pi) % (2 * np.pi) - np.pi
    d[~rotation] /= eng.mech.length_scale
    return d


def _same(eng: Engine, q: np.ndarray, other: np.ndarray) -> bool:
    return float(np.abs(_difference(eng, q, other)).max(initial=0.0)) <= SAME


def _classified(
    model: Model, eng: Engine, point: OperatingPoint, pose: np.ndarray, from_pose: bool
) -> FoundEquilibrium:
    values = linearize(model, point).eigenvalues
    growth = float(values.real.max(initial=-np.inf)) if values.size else 0.0
    margin = REAL_PART * max(float(np.abs(values).max(initial=0.0)), 1.0)
    stability = "unstable" if growth > margin else "stable" if growth < -margin else "marginal"
    distance = float(np.linalg.norm(_difference(eng, point.q, pose)))
    return FoundEquilibrium(point, stability, growth, distance, from_pose)


ADJECTIVES = {"stable": "stable", "marginal": "undamped but stable", "unstable": "unstable"}
REAL_PART = 1e-9  # |Re λ| below this fraction of the largest |λ| (or of 1/s): neither growing nor decaying


def _largest_move(model: Model, point: OperatingPoint) -> str:
    """Where the equilibrium lies from the pose: its largest coordinate change, with the unit."""
    mech = engine(model).mech
    change = point.q - operating_point(model).q
    if not change.size:
        return "the pose itself: it has no coordinates"
    k = int(np.abs(change).argmax())
    unit = "rad" if mech.tree.kinds[k] == "R" else "m"
    return f"the largest move {point.coordinates[k]} {change[k]:+.4g} {unit}"
