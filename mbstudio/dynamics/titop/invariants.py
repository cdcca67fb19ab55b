"""Energy, momentum and centre of mass of a block model, from its blocks' own motions (the block route; the
general tree's are in simulation/monitors.py): Alazard et al.'s (2024) invariants (tests/test_titop_runs.py).

`D_P x'_P = [p; h_P]` is a body's momentum at P (Alazard et al. 2024, section 2): its linear momentum and its angular
momentum about P, in its axes; ½ x'_Pᵀ D_P x'_P its kinetic energy, the same at every point (check 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .motion import cross, dot, mv

if TYPE_CHECKING:
    from .blocks import Kinematics
    from .interconnection import BlockModel, BlockState


def kinetic_energy(model: BlockModel, kin: list[Kinematics]) -> np.ndarray:
    """T = Σ ½ x'_Pᵀ D_P x'_P (N,)."""
    return sum(dot(k.motion.tw, mv(b.body.D, k.motion.tw)) / 2 for b, k in zip(model.blocks, kin, strict=True))


def _centres(model: BlockModel, kin: list[Kinematics]) -> list[np.ndarray]:
    """Each body's centre of mass in inertial coordinates (N, 3)."""
    return [mv(k.motion.R, k.motion.pos + b.body.com - b.body.point) for b, k in zip(model.blocks, kin, strict=True)]


def gravity_potential(model: BlockModel, kin: list[Kinematics]) -> np.ndarray:
    """V_g = −Σ m g·r_B (N,), zero with every centre of mass at the inertial origin."""
    return -sum(b.body.mass * dot(model.gravity, c) for b, c in zip(model.blocks, _centres(model, kin), strict=True))


def potential_energy(model: BlockModel, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
    """Gravity's and the loads' potential energy (N,)."""
    return gravity_potential(model, kin) + sum(load.energy(model, state, kin) for load in model.loads)


def nonconservative_power(model: BlockModel, t, state: BlockState, kin: list[Kinematics]) -> np.ndarray:
    """The power the loads bring in beyond their potential (N,): −(dissipation) for dampers and friction, the
    input of time-varying efforts and forces."""
    return sum((load.power(model, t, state, kin) for load in model.loads), 0 * kin[0].kappa[..., 0])


def centre_of_mass(model: BlockModel, kin: list[Kinematics]) -> np.ndarray:
    """The system's centre of mass (N, 3), inertial."""
    total = sum(b.body.mass for b in model.blocks)
    return sum(b.body.mass * c for b, c in zip(model.blocks, _centres(model, kin), strict=True)) / total


def momentum(model: BlockModel, kin: list[Kinematics]) -> tuple[np.ndarray, np.ndarray]:
    """Linear momentum and angular momentum about the inertial origin (N, 3 each), inertial axes:
    Σ P_{b/i} p and Σ (P_{b/i} h_P + r_P × P_{b/i} p)."""
    linear, angular = 0, 0
    for b, k in zip(model.blocks, kin, strict=True):
        ph = mv(b.body.D, k.motion.tw)
        p, h = mv(k.motion.R, ph[..., :3]), mv(k.motion.R, ph[..., 3:])
        linear = linear + p
        angular = angular + h + cross(mv(k.motion.R, k.motion.pos), p)
    return linear, angular
