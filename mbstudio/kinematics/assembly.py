"""Assembly: Newton-Raphson on the loop equations for the dependent coordinates, with step halving."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.errors import AssemblyError
from ..numerics.backends import VariablePrecision


@dataclass
class AssemblyReport:
    converged: np.ndarray  # (N,) bool
    iterations: int
    residual: np.ndarray  # (N,) float: max |Φ| after the last step
    worst_row: np.ndarray  # (N,) index of the largest residual row
    # (N,) bool: closed, but on another assembly branch than the guess's (see Mechanism.assemble)
    branch_changed: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.branch_changed is None:
            self.branch_changed = np.zeros(len(self.converged), bool)


STALLED = 8  # Newton steps without halving a sample's best residual: it is not converging from there
ROUNDING_FLOOR = 1e3  # x the tolerance: a sample that stops improving this close has reached float64's rounding


def newton(mech, q: np.ndarray, max_iterations: int = 50, tol=None) -> tuple[np.ndarray, AssemblyReport]:
    """Solve Φ(q) = 0 for q[:, dependent], starting from q (N, n); other columns are kept.

    A sample is converged when max |Φ| ≤ tol (by default the back-end's tolerance at the mechanism's length
    scale), or when it stops falling within ROUNDING_FLOOR times that: where float64 rounds (a large machine,
    another BLAS) the tolerance cannot always be met, and whether it is met by a hair must not decide whether
    the mechanism closes. A sample that has not halved its best residual in STALLED steps is given up."""
    b = mech.backend
    dep = list(mech.partition.dependent)
    tol = b.tolerance(mech.length_scale) if tol is None else tol
    q = q.copy()
    # the motion of the samples `moved` at their current q: each step's Jacobian reuses the motion the last
    # step's residual was computed from (a third of a variable-precision assembly)
    moved = np.arange(len(q))
    motion = mech.tree.motion(q)
    phi = mech.constraints.residual(motion)
    norm = _norm(phi)
    best, since = b.to_float(norm).copy(), np.zeros(len(q), int)
    floor = np.zeros(len(q), bool)  # stopped improving within ROUNDING_FLOOR of the tolerance
    iterations = 0
    while iterations < max_iterations and dep:
        active = (b.to_float(norm) > float(tol)) & ~floor & (since < STALLED)
        if not active.any():
            break
        iterations += 1
        idx = np.nonzero(active)[0]  # a subset of `moved`: converged samples stay converged
        step = _newton_step(mech, motion.take(np.searchsorted(moved, idx)), phi[idx])
        before = b.to_float(norm[idx])
        q[idx], norm[idx], phi[idx], motion = _damped_step(mech, q[idx], step, dep, norm[idx])
        moved = idx
        after = b.to_float(norm[idx])
        floor[idx] = (after >= before / 2) & (after <= ROUNDING_FLOOR * float(tol))
        halved = after <= best[idx] / 2
        since[idx] = np.where(halved, 0, since[idx] + 1)
        best[idx] = np.minimum(best[idx], after)
    if dep and isinstance(b, VariablePrecision) and len(q):
        # The tolerance sits a few digits above the working precision so that rounding cannot stall the loop;
        # one more (quadratically converging) step takes every sample down to the precision itself.
        polished = q.copy()
        polished[:, dep] = q[:, dep] + _newton_step(mech, mech.tree.motion(q), phi)
        new_phi = mech.constraints.residual(mech.tree.motion(polished))
        better = b.to_float(_norm(new_phi)) <= b.to_float(norm)
        q[better], phi[better], norm[better] = polished[better], new_phi[better], _norm(new_phi)[better]
    report = AssemblyReport(
        (b.to_float(norm) <= float(tol)) | floor,
        iterations,
        b.to_float(norm),
        np.argmax(np.abs(b.to_float(phi)), axis=1) if phi.shape[1] else np.zeros(len(q), int),
    )
    return q, report


def _newton_step(mech, motion, phi):
    """The Newton correction of the dependent coordinates, from the non-redundant constraint rows, at the
    configuration whose motion state is `motion`."""
    dep, rows = list(mech.partition.dependent), list(mech.partition.rows)
    J = mech.constraints.jacobian(motion)[:, rows][:, :, dep]
    try:
        return mech.backend.solve(J, -phi[:, rows])
    except (np.linalg.LinAlgError, ZeroDivisionError) as exc:
        raise AssemblyError(
            "the loop equations are singular here: the mechanism is at a singular configuration or cannot close"
        ) from exc


def _damped_step(mech, q, step, dep, norm):
    """Take the Newton step, halving it (per sample) while the residual grows; the new q, max |Φ|, Φ and
    motion state."""
    scale = np.ones(len(q))
    for _ in range(12):
        trial = q.copy()
        trial[:, dep] = q[:, dep] + step * mech.backend.asarray(scale)[:, None]
        motion = mech.tree.motion(trial)
        phi = mech.constraints.residual(motion)
        new = _norm(phi)
        worse = mech.backend.to_float(new) > 2 * mech.backend.to_float(norm)
        if not worse.any():
            return trial, new, phi, motion
        scale[worse] /= 2
    return trial, new, phi, motion


def _norm(phi: np.ndarray) -> np.ndarray:
    if phi.shape[1] == 0:
        return np.zeros(phi.shape[0], dtype=phi.dtype)
    return np.abs(phi).max(axis=1)
