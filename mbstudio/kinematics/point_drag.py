"""Dragging a point of a body: the mechanism follows by closed-loop inverse kinematics on its independent
coordinates, by damped least squares, on the assembly branch it starts on.

    drag = PointDrag(mech, "5", local_point)          # a point fixed in body 5, in its axes
    q, error = drag.follow(q, target)                 # a pose nearer the target (world, m), loops closed

Each iteration takes the point's velocity map over the independent coordinates, J = J_P R (3 × k, J_P the
tree's point Jacobian and R = ∂q/∂q_ind), and the step Δq_ind = Jᵀ (J Jᵀ + λ² I)⁻¹ e towards the target: the
least-squares step where J is well conditioned, shortened where it is not (a limb stretched straight, a point
that cannot move along e), so a target out of reach is followed as closely as the mechanism can. The loops are
closed again at every step (on the compiled loop equations when they are built, FastAssembly); a step that
would cross to another assembly branch or leave a coordinate's limits is halved or clipped.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..model.errors import AssemblyError
from .fast_assembly import FastAssembly
from .mechanism import BranchChangeWarning, Mechanism

DAMPING = 0.05  # λ in m per m of the mechanism's length scale: the step's size where J loses rank
ITERATIONS = 4  # per target: the mouse sends the next one within a frame
MAX_STEP = 0.2  # rad, or this times the length scale in m: the largest change of an independent coordinate
HALVINGS = 5


class PointDrag:
    def __init__(self, mech: Mechanism, body: str, local: np.ndarray, fast: FastAssembly | None = None) -> None:
        self.mech, self.body, self.local, self.fast = mech, body, np.asarray(local, float), fast
        self.ind = list(mech.partition.independent)
        self.damping = DAMPING * mech.length_scale
        self.tol = 1e-9 * mech.length_scale
        kinds = [mech.tree.kinds[i] for i in self.ind]
        self.max_step = np.array([MAX_STEP if k == "R" else MAX_STEP * mech.length_scale for k in kinds])
        self.low, self.high = self._limits()

    def _limits(self) -> tuple[np.ndarray, np.ndarray]:
        """The independent coordinates' limits from the document (±inf where none is given)."""
        found = {c.name: (c.min, c.max) for j in self.mech.model.joints for c in j.coordinates}
        names = [self.mech.coordinates[i] for i in self.ind]
        low = np.array([-np.inf if found[n][0] is None else float(found[n][0]) for n in names])
        high = np.array([np.inf if found[n][1] is None else float(found[n][1]) for n in names])
        return low, high

    def point(self, q: np.ndarray) -> np.ndarray:
        """The dragged point in world coordinates (3,) at the pose q (n,)."""
        rotation, origin = (x[0] for x in self.mech.poses(np.asarray(q, float)[None])[self.body])
        return np.asarray(origin + rotation @ self.local, float)

    def follow(self, q: np.ndarray, target: np.ndarray, iterations: int = ITERATIONS) -> tuple[np.ndarray, float]:
        """A closed pose (n,) whose point is nearer `target` (3,), from the closed pose q, and the distance left."""
        q, target = np.array(q, float), np.asarray(target, float)
        error = target - self.point(q)
        for _ in range(iterations):
            if np.linalg.norm(error) <= self.tol:
                break
            moved = self._step(q, error)
            if moved is None:  # no step along the error keeps the loops closed on this branch
                break
            q = moved
            error = target - self.point(q)
        return q, float(np.linalg.norm(error))

    def _step(self, q: np.ndarray, error: np.ndarray) -> np.ndarray | None:
        J = self._velocity_map(q)
        step = J.T @ np.linalg.solve(J @ J.T + self.damping**2 * np.eye(3), error)
        step *= min(1.0, float(np.min(self.max_step / np.maximum(np.abs(step), 1e-300))))
        start = q[self.ind]
        for _ in range(HALVINGS):
            wanted = np.clip(start + step, np.minimum(self.low, start), np.maximum(self.high, start))
            moved = self._assembled(wanted, q)
            if moved is not None:
                return moved
            step /= 2
        return None

    def _velocity_map(self, q: np.ndarray) -> np.ndarray:
        """J = J_P R (3, k): the point's velocity per rate of each independent coordinate."""
        point_jacobian = self.mech.body_jacobian(q[None], self.body, self.local)[0, 3:]
        if self.fast is not None:
            R = self.fast.r_matrix(q)[0].reshape(self.mech.n, len(self.ind), order="F")
        else:
            R = self.mech.r_matrix(q[None])[0]
        return np.asarray(point_jacobian @ R, float)

    def _assembled(self, q_ind: np.ndarray, guess: np.ndarray) -> np.ndarray | None:
        """The closed pose at q_ind on guess's branch, or None."""
        if self.fast is not None:
            try:
                return self.fast.assemble(q_ind, guess)
            except (AssemblyError, np.linalg.LinAlgError):
                return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BranchChangeWarning)
            try:
                q = np.asarray(self.mech.assemble(q_ind[None], guess=guess[None]), float)[0]
            except (AssemblyError, np.linalg.LinAlgError):
                return None
        return None if self.mech.last_report.branch_changed.any() else q
