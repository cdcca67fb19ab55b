"""Following one assembly branch along a path of the independent coordinates (continuation).

A closed mechanism has several assembly branches (a four-bar open or crossed, each corner of a suspension
flipped), and a branch can end where the loop equations turn singular (a fold: the lower arm of a suspension
swung until a link is stretched straight). Newton started from a guess lands on whichever solution is nearest,
so a path assembled sample by sample from guesses may step onto another branch, or go on beyond the branch's
end, depending on how many samples there are and how the last digits round. Here each step is a continuation
step that is accepted only when its Newton corrector behaves as it does on one smooth branch:

- the first correction is at most half the predicted step R Δq_ind (the step resolves the branch's curvature),
- every further correction is at most half the one before (Newton contracts: the solution is the one it
  started near, not one it wandered to), and
- the sign of det Φ_q,dep is kept (at a simple fold the two branches that meet have opposite signs).

A rejected step is halved; when the step falls below STEP_FLOOR (in the independent coordinates' own units)
the branch ends there, so the end is found to that resolution whatever the sampling. Batch results (all
samples at once, the fast route) are kept only where each sample passes the same test as a continuation step
from its predecessor (`certified`); the others are followed step by step from the last certified sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STEP_FLOOR = 1e-10  # smallest continuation step (rad or m of the independent coordinates): where the branch ends
FIRST_CORRECTION = 0.5  # the first Newton correction, at most this part of the predicted step
CONTRACTION = 0.5  # each Newton correction at most this part of the one before
CORRECTOR_STEPS = 12
SIGN_FLOOR = 1e-10  # relative σ_min below which det Φ_q,dep has no sign worth comparing
ROUNDING_FLOOR = 1e3  # x the tolerance: a corrector stalled this close to the solution is at float64's rounding


@dataclass
class BranchEnd(Exception):
    """The branch followed ends (or cannot be followed further) before the target: `reached` (n,) is the last
    closed configuration on it, `beyond` (n,) the independent values just past it, still unreachable."""

    reached: np.ndarray
    beyond: np.ndarray


def follow(mech, q: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The configuration (n,) at the independent values `target` (n_ind,) on the branch of the closed
    configuration q (n,), along the straight segment between their independent values; BranchEnd where the
    branch ends on the way (float64 mechanisms)."""
    ind = list(mech.partition.independent)
    q = np.array(q, dtype=float)
    start, total = q[ind].copy(), np.asarray(target, dtype=float) - q[ind]
    size = float(np.abs(total).max(initial=0.0))
    if size == 0.0:
        return q
    done, fraction = 0.0, 1.0
    sign = branch_sign(mech, q)
    while done < 1.0:
        fraction = min(fraction, 1.0 - done)
        values = start + total * (done + fraction) if done + fraction < 1.0 else np.asarray(target, dtype=float)
        trial = _step(mech, q, values, sign)
        if trial is None:
            if fraction * size < STEP_FLOOR:
                raise BranchEnd(q, values)
            fraction /= 2
            continue
        q, done = trial, done + fraction
        fraction *= 2
    return q


def _step(mech, q: np.ndarray, values: np.ndarray, sign: float) -> np.ndarray | None:
    """One continuation step from q to the independent values `values`: the configuration, or None when the
    corrector does not behave as on one smooth branch (see the module's docstring)."""
    ind = list(mech.partition.independent)
    predicted = q + mech.r_matrix(q[None, :])[0] @ (values - q[ind])
    predicted[ind] = values
    floor = ROUNDING_FLOOR * mech.backend.tolerance(mech.length_scale)
    trial, ok = corrected(mech, predicted, FIRST_CORRECTION * float(np.abs(predicted - q).max()) + floor)
    if not ok or branch_sign(mech, trial) != sign:
        return None
    return trial


def corrected(mech, q: np.ndarray, first_limit: float) -> tuple[np.ndarray, bool]:
    """Newton on the dependent coordinates from q (n,): the result, and whether it converged with a first
    correction within `first_limit` and every later one at most CONTRACTION times the one before."""
    dep, rows = list(mech.partition.dependent), list(mech.partition.rows)
    tol = mech.backend.tolerance(mech.length_scale)
    q = q.copy()
    last = np.inf
    for k in range(CORRECTOR_STEPS):
        motion = mech.tree.motion(q[None, :])
        phi = np.asarray(mech.constraints.residual(motion)[0], dtype=float)
        residual = float(np.abs(phi).max(initial=0.0))
        if residual <= tol:
            return q, True
        jac = np.asarray(mech.constraints.jacobian(motion)[0], dtype=float)[np.ix_(rows, dep)]
        try:
            delta = np.linalg.solve(jac, -phi[rows])
        except np.linalg.LinAlgError:
            return q, False
        size = float(np.abs(delta).max())
        if residual <= ROUNDING_FLOOR * tol and size >= CONTRACTION * last:
            return q, True  # stalled at float64's rounding, within reach of the tolerance
        if size > (first_limit if k == 0 else CONTRACTION * last):
            return q, False
        q[dep] += delta
        last = size
    return q, False


def certified(mech, q: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(N,) bool: sample k of the closed configurations q (N, n) is what a continuation step from sample k − 1
    would give (the first sample is certified by its caller): Newton from the predictor contracts onto it
    (its first correction within FIRST_CORRECTION of the predicted step and heading to q_k) on the same side
    of every fold."""
    ind, dep = list(mech.partition.independent), list(mech.partition.dependent)
    ok = np.ones(len(q), bool)
    if len(q) < 2 or not dep:
        return ok
    rows = list(mech.partition.rows)
    R = mech.r_matrix(q[:-1])
    predicted = q[:-1] + (R * (values[1:] - q[:-1, ind])[:, None, :]).sum(axis=2)
    predicted[:, ind] = values[1:]
    motion = mech.tree.motion(predicted)
    phi = np.asarray(mech.constraints.residual(motion), dtype=float)[:, rows]
    jac = np.asarray(mech.constraints.jacobian(motion), dtype=float)[:, rows][:, :, dep]
    try:
        delta = np.linalg.solve(jac, -phi[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        return np.r_[True, np.zeros(len(q) - 1, bool)]
    floor = ROUNDING_FLOOR * mech.backend.tolerance(mech.length_scale)
    first = np.abs(delta).max(axis=1)
    step = np.abs(predicted - q[:-1]).max(axis=1)
    heading = np.abs(predicted[:, dep] + delta - q[1:, dep]).max(axis=1)
    signs = branch_signs(mech, q)
    ok[1:] = (first <= FIRST_CORRECTION * step + floor) & (heading <= CONTRACTION * first + floor)
    ok[1:] &= signs[1:] == signs[:-1]
    return ok


def branch_sign(mech, q: np.ndarray) -> float:
    return float(branch_signs(mech, q[None, :])[0])


def branch_signs(mech, q: np.ndarray) -> np.ndarray:
    """(N,) sign of det Φ_q,dep at closed configurations q (N, n) of a float64 mechanism: constant along an
    assembly branch, opposite on the other branch that meets it at a fold; 0 where the block is singular to
    float64's accuracy (σ_min ≤ SIGN_FLOOR σ_max), where rounding would decide the sign, and where it is not finite
    (a Newton run that diverged: LAPACK's SVD fails on NaN)."""
    rows, dep = list(mech.partition.rows), list(mech.partition.dependent)
    if not dep:
        return np.ones(len(q))
    jac = np.asarray(mech.constraints.jacobian(mech.tree.motion(q)), dtype=float)[:, rows][:, :, dep]
    signs = np.zeros(len(jac))
    finite = np.isfinite(jac).all(axis=(1, 2))
    if finite.any():
        sigma = np.linalg.svd(jac[finite], compute_uv=False)
        signs[finite] = np.where(sigma[:, -1] > SIGN_FLOOR * sigma[:, 0], np.sign(np.linalg.det(jac[finite])), 0.0)
    return signs
