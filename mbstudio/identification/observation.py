"""Exciting trajectories and the observation matrix W: the regressor stacked over the samples of a motion.

The independent coordinates follow a path given as a function `path(times, order)` -> positions (order 0),
velocities (1) or accelerations (2), shape (N, n_ind) in the mechanism's back-end; `FourierPath` is the
usual choice (finite Fourier series). Every step (path, assembly, velocities, accelerations, regressor) is
done in the mechanism's arithmetic, so a Mechanism(model, precision=50) gives W at 50 digits (Iriarte et al. 2017,
section 3: the VP result is right only if every step is done in VP).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..dynamics.regressor import regressor
from ..kinematics.mechanism import Mechanism

Path = Callable[[np.ndarray, int], np.ndarray]


@dataclass
class FourierPath:
    """q_j(t) = base_j + Σ A sin(ω t + φ) over the terms (A, ω, φ) of independent coordinate j.

    Numbers may be floats or decimal strings; they are read by the back-end (a string keeps all its digits
    in variable precision)."""

    mech: Mechanism
    terms: Sequence[Sequence[tuple]]  # per independent coordinate: (amplitude, omega[, phase]) terms
    base: Sequence | None = None  # default: the document's initial values of the independent coordinates

    def __call__(self, times, order: int = 0) -> np.ndarray:
        """Positions (order 0), velocities (1) or accelerations (2) at `times`, shape (N, n_ind)."""
        b = self.mech.backend
        with b.context():
            t = b.asarray(list(times))
            ind = list(self.mech.partition.independent)
            base = self.mech.tree.initial_coordinates()[ind] if self.base is None else b.asarray(list(self.base))
            out = b.zeros((len(t), len(ind)))
            for j, terms in enumerate(self.terms):
                if order == 0:
                    out[:, j] = base[j]
                for term in terms:
                    amp, omega, phase = (b.asarray(x) for x in (*term, 0.0)[:3])
                    angle = omega * t + phase
                    wave = b.cos(angle) if order == 1 else b.sin(angle) * (-1 if order == 2 else 1)
                    out[:, j] = out[:, j] + amp * omega**order * wave
            return out


def branch_guide(mech: Mechanism, positions: np.ndarray) -> np.ndarray | None:
    """float64 coordinates (N, n) closing the loops along a path of independent `positions` (N, n_ind), on the
    assembly branch of the document's initial configuration (None for a tree): where the working precision's
    Newton starts."""
    if not mech.partition.dependent:
        return None
    return mech.float64.assemble_path(mech.backend.to_float(positions))


def sample_states(
    mech: Mechanism, times, path: Path, guide: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Assembled coordinates, velocities and accelerations (N, n) at `times` along `path`. `guide`: the
    branch_guide of these times, when the caller has it for a longer path."""
    b = mech.backend
    with b.context():
        positions = path(times, 0)
        if not mech.partition.dependent:
            q = b.zeros((len(positions), mech.n))
            q[:, list(mech.partition.independent)] = positions
        else:
            # follow the assembly branch in float64, then close every sample at the working precision
            guess = branch_guide(mech, positions) if guide is None else guide
            q = guess if mech.float64 is mech else mech.assemble(positions, guess=guess)
        qd = mech.velocities(q, path(times, 1))
        qdd = mech.accelerations(q, qd, path(times, 2))
        return q, qd, qdd


def observation_matrix(mech: Mechanism, times, path: Path, guide: np.ndarray | None = None) -> np.ndarray:
    """W (N·n_ind, 10·nb): the regressor of every sample stacked, sample by sample, with W φ the stacked
    generalized forces of the independent coordinates; columns as `model.inertial_parameter_names()`."""
    K = regressor(mech, *sample_states(mech, times, path, guide))
    return K.reshape(-1, K.shape[-1])
