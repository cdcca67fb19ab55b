"""The coordinates a person expects to drive a linkage: joints to the ground, and among them, for one degree of
freedom, the one that turns furthest (the crank of a Grashof four-bar turns fully, its rocker does not).

The automatic partition picks the best-conditioned columns of Φ_q at the pose, which for a drawn four-bar is
often the coupler's angle: well conditioned, but not what anyone drives. This choice is made once, when a
drawing closes a loop, and written into the document, where the Driving Coordinates dialog shows and changes it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..model import GROUND, JOINT_MOTIONS
from ..model.errors import AssemblyError, ModelError
from .coordinates import numerical_rank, partition
from .mechanism import BranchChangeWarning, Mechanism

SWEEP_STEP = math.radians(5)  # the turning range is measured in steps of this size, half a turn each way


def expected_drivers(mech: Mechanism, q: np.ndarray) -> list[str]:
    """Driving coordinates for the closed pose q (n,): as many as the mechanism's degrees of freedom, joints to
    the ground first; for one degree of freedom the ground coordinate that turns furthest from q (a full turn
    first, the earlier joint on a tie); the rest, where the ground joints cannot drive it, from the others."""
    phi_q = np.asarray(mech.constraint_jacobian(q)[0], float)
    rows = list(mech.partition.rows)
    ground = [
        (c.name, JOINT_MOTIONS[j.type][k].startswith("R"))
        for j in mech.topology.tree
        if GROUND in (j.parent, j.child)
        for k, c in enumerate(j.coordinates)
    ]
    if mech.dof == 1 and len(ground) > 1:  # turning ones first, the furthest first
        ground.sort(key=lambda g: -_turning_steps(mech, phi_q, q, g[0]) if g[1] else 1)
    ground = [name for name, _ in ground]
    others = [name for name in mech.coordinates if name not in ground]
    chosen: list[str] = []
    for name in ground + others:
        if len(chosen) < mech.dof and _can_drive(phi_q[rows], mech.coordinates, [*chosen, name]):
            chosen.append(name)
    return chosen


def _can_drive(phi_q: np.ndarray, names: list[str], chosen: list[str]) -> bool:
    """True when the coordinates not chosen can still be solved from the independent constraint rows."""
    rest = [i for i, name in enumerate(names) if name not in chosen]
    sub = phi_q[:, rest]
    return numerical_rank(np.linalg.svd(sub, compute_uv=False), sub.shape) == len(phi_q)


def _turning_steps(mech: Mechanism, phi_q: np.ndarray, q: np.ndarray, name: str) -> int:
    """How many SWEEP_STEPs coordinate `name` turns from q, each way up to half a turn, with the loops closed on
    q's branch (a rocker stops where the loop no longer closes or where it would cross to the other branch);
    0 when it cannot drive the mechanism alone."""
    try:
        driven = Mechanism(mech.model, partition=partition(phi_q, mech.coordinates, [name]))
    except ModelError:  # it cannot drive the mechanism alone
        return 0
    half = round(math.pi / SWEEP_STEP)
    return sum(_steps_one_way(driven, q, sign, half) for sign in (1, -1))


def _steps_one_way(driven: Mechanism, q: np.ndarray, sign: int, most: int) -> int:
    column = driven.partition.independent[0]
    pose = np.asarray(q, float)[None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BranchChangeWarning)
        for step in range(most):
            target = pose[:, [column]] + sign * SWEEP_STEP
            try:
                pose = driven.assemble(target, guess=pose[0])
            except AssemblyError:
                return step
            if driven.last_report.branch_changed.any():
                return step
    return most
