"""The block model's state, accelerations and inverse-dynamics results: plain data shared by the
interconnection (interconnection.py) and the solves of its algebraic loop (loop_solvers.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .floating_base import BaseState


@dataclass
class BlockState:
    """q, q̇ (N, n_channels) of the one-degree-of-freedom joints, in the model's channel order, and each
    floating base's state."""

    q: np.ndarray
    qd: np.ndarray
    bases: tuple[BaseState, ...] = ()

    @property
    def samples(self) -> int:
        return len(self.q)


@dataclass
class BlockAccelerations:
    """q̈ (N, n_channels) and each floating base's xdot'_P (N, 6)."""

    qdd: np.ndarray
    bases: tuple[np.ndarray, ...] = ()


@dataclass
class InverseDynamics:
    """The efforts C_m / F_m each joint channel must supply (N, n_channels, eq. 46 and 76), the wrench each
    floating base needs at P (N, 6, its axes; zero when the accelerations are the motion's), and each block's
    wrench on its parent W_{A/B,P} at its P in its axes (the joint reactions)."""

    efforts: np.ndarray
    bases: tuple[np.ndarray, ...]
    reactions: list[np.ndarray]
