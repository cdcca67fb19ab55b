"""A mechanism ready for analysis: tree, loop constraints and coordinate partition in one back-end.

mech = Mechanism(model)                 # float64
mech = Mechanism(model, precision=50)   # mpmath, 50 digits
q = mech.assemble({"theta1": 0.2, "theta2": 0.0})
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Mapping

import numpy as np

from ..model.document import Model
from ..model.errors import AssemblyError
from ..numerics.backends import Float64, make_backend
from .assembly import AssemblyReport, newton
from .constraints import LoopConstraints
from .coordinates import Partition, partition
from .path_following import BranchEnd, branch_signs, certified, follow
from .topology import grubler_dof, spanning_tree
from .tree import KinematicTree, MotionState

ASSEMBLY_TOLERANCE = 1e-10  # per length scale: the nearest assembly of the document's pose has closed


class BranchChangeWarning(UserWarning):
    """The loops closed, but only on another assembly branch than the guess's (a four-bar crossed)."""


class Mechanism:
    def __init__(
        self, model: Model, precision: str | int | None = None, backend=None, partition: Partition | None = None
    ) -> None:
        """`partition` imposes the rows and independent coordinates (a simulation re-choosing them where its
        first choice turns singular); by default they are chosen at the document's initial configuration."""
        self.model = model
        self.backend = backend or make_backend(precision)
        self.topology = spanning_tree(model)
        with self.backend.context():
            self.tree = KinematicTree(model, self.backend, self.topology)
            self.constraints = LoopConstraints(self.tree, self.topology.cut, model.couplings)
        self.coordinates = self.tree.coordinates
        self.n = self.tree.n
        # the float64 twin: structure choices, and branch signs, which need no more than float64 (None: this one;
        # not a reference to itself, so that a mechanism is freed as soon as it is dropped, not at the next
        # collection of cycles: a 100 000-body chain's stays alive otherwise beside what the caller builds next)
        self._twin = None if isinstance(self.backend, Float64) else Mechanism(model, partition=partition)
        probe = self.float64
        self.length_scale = probe._length_scale() if probe is not self else self._length_scale()
        self.partition = partition or (probe.partition if probe is not self else self._partition())
        self.last_report: AssemblyReport | None = None

    def with_partition(self, chosen: Partition) -> Mechanism:
        """This mechanism with the coordinates `chosen` (a simulation's switch): its tree, loop equations and length
        scale, which do not depend on the partition, shared rather than built again (1.4 ms on the Delta 3R[2US])."""
        other = copy.copy(self)
        other.partition, other.last_report = chosen, None
        if self._twin is not None:
            other._twin = self._twin.with_partition(chosen)
        return other

    @property
    def float64(self) -> Mechanism:
        return self if self._twin is None else self._twin

    # ------------------------------------------------------------------ structure
    def _length_scale(self) -> float:
        """A characteristic length (largest joint-frame offset, at least 1 m) scaling position tolerances."""
        offsets = [np.abs(link.before.origin).max() for link in self.tree.links]
        return max([1.0, *offsets])

    def _partition(self) -> Partition:
        """Rows and independent coordinates chosen from Φ_q at the initial configuration (float64 only:
        other back-ends take the float64 choice, so every number system solves the same equations)."""
        q0 = self._closed_guess
        motion = self.tree.motion(q0)
        phi_q = self.constraints.jacobian(motion)[0]
        residual = float(np.abs(np.asarray(self.constraints.residual(motion), dtype=float)).max(initial=0.0))
        chosen = None if self.model.independent_coordinates == "auto" else list(self.model.independent_coordinates)
        # closed: Φ_q's exact zeros come out near the residual; not closed (it cannot be): Φ_q where it stands,
        # and the assembly names the loop that does not close
        floor = residual / self.length_scale if residual <= ASSEMBLY_TOLERANCE * self.length_scale else 0.0
        followers = tuple(c.follower for c in self.constraints.couplings)
        return partition(np.asarray(phi_q, dtype=float), self.coordinates, chosen, floor=floor, followers=followers)

    @functools.cached_property
    def _closed_guess(self) -> np.ndarray:
        """The closed configuration nearest the document's initial values (1, n), float64; computed when first
        needed (a mechanism given its partition never needs it to choose one)."""
        return self._nearest_assembly(self.tree.initial_coordinates()[None, :])

    def _nearest_assembly(self, q: np.ndarray, steps: int = 60, weights: np.ndarray | None = None) -> np.ndarray:
        """A closed configuration near q by minimum-norm Gauss-Newton on every coordinate, where the document's
        initial values do not close the loops: the Jacobian of an unassembled guess (a four-bar drawn with
        every angle 0, say) can show freedoms the mechanism does not have. `weights` (n,): how much each
        coordinate resists moving (the steps minimise Σ w_i Δq_i²). A guess where the residual is stationary
        (links in line) is nudged by a fixed pseudo-random 0.1 rad first. q itself when nothing closes."""
        tol = ASSEMBLY_TOLERANCE * self._length_scale()
        start = q
        scale = np.ones(q.shape[-1]) if weights is None else 1 / np.sqrt(np.asarray(weights, float))

        def size(x: np.ndarray) -> float:
            return float(
                np.abs(np.asarray(self.constraints.residual(self.tree.motion(x))[0], dtype=float)).max(initial=0)
            )

        for _ in range(steps):
            phi = np.asarray(self.constraints.residual(self.tree.motion(q))[0], dtype=float)
            if phi.size == 0:
                return q
            if np.abs(phi).max() <= tol:
                return self._polished(q, np.abs(phi).max(), scale)
            J = np.asarray(self.constraints.jacobian(self.tree.motion(q))[0], dtype=float)
            step = (scale * np.linalg.lstsq(J * scale, phi, rcond=1e-10)[0])[None, :]
            trial = next((q - step / 2**k for k in range(8) if size(q - step / 2**k) < np.abs(phi).max()), None)
            q = q + _nudge(q.shape) if trial is None else trial
        return start

    def _polished(self, q: np.ndarray, residual: float, scale: np.ndarray) -> np.ndarray:
        """Gauss-Newton steps from a configuration closed to the assembly tolerance down to the rounding floor
        (while each halves the residual): the rank of Φ_q is decided there, and a residual left at 1e-10 would
        show as singular values of that size."""
        for _ in range(4):
            motion = self.tree.motion(q)
            J = np.asarray(self.constraints.jacobian(motion)[0], dtype=float)
            phi = np.asarray(self.constraints.residual(motion)[0], dtype=float)
            trial = q - (scale * np.linalg.lstsq(J * scale, phi, rcond=1e-10)[0])[None, :]
            size = float(np.abs(np.asarray(self.constraints.residual(self.tree.motion(trial))[0], float)).max())
            if size > residual / 2:
                break
            q, residual = trial, size
        return q

    def assemble_nearest(self, q, keep: Mapping[str, float] | None = None) -> np.ndarray:
        """The closed configuration (n,) nearest the drawn pose q (n,), which need not close: every coordinate
        moves as little as it can, and those in `keep` (name -> priority weight) less still; kept driving
        (independent) coordinates end exactly at their drawn values, on the branch found. Raises AssemblyError
        naming the loop when none is found."""
        weights = np.ones(self.n)
        for name, weight in (keep or {}).items():
            weights[self.coordinates.index(name)] = weight
        drawn = np.asarray(q, float)[None, :]
        closed = self._unwound(self._nearest_assembly(drawn, weights=weights), drawn, every=True)
        if not self.partition.dependent:
            return closed[0]
        # the kept coordinates that drive the mechanism back exactly at their drawn values, on this branch
        exact = closed.copy()
        kept = [
            self.coordinates.index(n) for n in keep or {} if self.coordinates.index(n) in self.partition.independent
        ]
        exact[:, kept] = drawn[:, kept]
        return np.asarray(self.assemble(exact[:, list(self.partition.independent)], guess=closed)[0], float)

    @property
    def independent(self) -> list[str]:
        return [self.coordinates[i] for i in self.partition.independent]

    @property
    def dependent(self) -> list[str]:
        return [self.coordinates[i] for i in self.partition.dependent]

    @property
    def kinds(self) -> dict[str, str]:
        """Each coordinate's joint motion: "R" turns (an angle), "T" shifts (a length)."""
        return dict(zip(self.coordinates, self.tree.kinds, strict=True))

    @property
    def independent_kinds(self) -> dict[str, str]:
        """The independent coordinates' joint motions, in their order (what typed values of them are read by)."""
        kinds = self.kinds
        return {name: kinds[name] for name in self.independent}

    @property
    def dof(self) -> int:
        """Mobility from the rank of the constraint Jacobian."""
        return self.n - self.partition.rank

    @property
    def dof_grubler(self) -> int:
        return grubler_dof(self.model)

    @property
    def redundant_constraints(self) -> list[str]:
        return [self.constraints.labels[r] for r in self.partition.redundant_rows]

    # ------------------------------------------------------------------ evaluation
    def as_batch(self, x) -> np.ndarray:
        """(n,) or (N, n) values -> backend array (N, n)."""
        with self.backend.context():
            arr = self.backend.asarray(x)
        return arr[None, :] if arr.ndim == 1 else arr

    def motion(self, q, qd=None, qdd=None) -> MotionState:
        with self.backend.context():
            return self.tree.motion(*(None if x is None else self.as_batch(x) for x in (q, qd, qdd)))

    def residual(self, q) -> np.ndarray:
        """Φ(q), shape (N, m)."""
        with self.backend.context():
            return self.constraints.residual(self.motion(q))

    def constraint_jacobian(self, q) -> np.ndarray:
        """Φ_q, shape (N, m, n)."""
        with self.backend.context():
            return self.constraints.jacobian(self.motion(q))

    def assemble(
        self, independent: Mapping[str, object] | np.ndarray | None = None, guess=None, strict: bool = True
    ) -> np.ndarray:
        """Coordinates (N, n) closing every loop for the given independent values.

        `independent`: a mapping name -> value(s), or an array (N, n_ind) in the order of `self.independent`;
        None keeps the guess. `guess`: starting coordinates, by default the document's initial values.
        Raises AssemblyError naming the cut joint with the largest residual when a sample does not close.

        The assembly branch is the guess's: where Newton lands on another one (the sign of det Φ_q,dep differs
        from the guess's: a four-bar crossed), the independent coordinates are walked there from the guess by
        continuation instead. Where only another branch closes, the result is kept, flagged in
        `last_report.branch_changed` and a BranchChangeWarning names the values: never silently."""
        b = self.backend
        with b.context():
            q = self._starting_point(independent, guess)
            targets = q.copy()
            q, report = self._newton_or_unconverged(q)
            if self.partition.dependent:
                base = np.broadcast_to(self._continuation_base(guess), q.shape)
                signs, after = self.branch_signs(base), self.branch_signs(q)
                redo = ~report.converged | (after * signs < 0)
                if redo.any():  # only the redone samples need their signs again
                    q, report = self._continue_from(base, targets, q, report, redo)
                    after[redo] = self.branch_signs(q[redo])
                report.branch_changed = report.converged & (after * signs < 0)
                q = self._unwound(q, base)
            self.last_report = report
            if strict and not report.converged.all():
                self._raise(report, targets)
            if report.branch_changed.any():
                warnings.warn(self._branch_message(report, targets), BranchChangeWarning, stacklevel=2)
        return q

    def _unwound(self, q: np.ndarray, base: np.ndarray, every: bool = False) -> np.ndarray:
        """Dependent angles (`every` angle) within π of the starting pose's: Newton may land whole turns away
        (theta2 = -15.04 for -2.48), which is the same pose but not what a user expects to read."""
        columns = range(self.n) if every else self.partition.dependent
        cols = [i for i in columns if i in self.tree.angles]
        if not cols or not isinstance(self.backend, Float64):
            return q
        q = q.copy()
        q[:, cols] -= 2 * np.pi * np.round((q[:, cols] - base[:, cols]) / (2 * np.pi))
        return q

    def branch_signs(self, q) -> np.ndarray:
        """(N,) sign of det Φ_q,dep (the loop equations' rows by the dependent coordinates): constant along an
        assembly branch, opposite on the other branch of a four-bar; 0 at a singular configuration
        (path_following.branch_signs)."""
        if self.float64 is not self:  # a sign: the float64 Jacobian at q rounded gives it (half a VP assembly's)
            return self.float64.branch_signs(self.backend.to_float(self.as_batch(q)))
        return branch_signs(self, np.asarray(self.as_batch(q), dtype=float))

    def _branch_message(self, report: AssemblyReport, q: np.ndarray) -> str:
        k = int(np.nonzero(report.branch_changed)[0][0])
        return (
            f"at {self._where(q, k)} the loops close only on another assembly branch than the starting pose's "
            "(det Φ_q changed sign: the mechanism crossed a singular configuration, or the values lie beyond it)"
        )

    def _newton_or_unconverged(self, q: np.ndarray):
        """Newton from q; a singular start (links in line) counts as not converged, for the continuation."""
        try:
            return newton(self, q)
        except AssemblyError:
            if not self.partition.dependent:
                raise
            count = len(q)
            return q, AssemblyReport(np.zeros(count, bool), 0, np.full(count, np.inf), np.zeros(count, int))

    def _continuation_base(self, guess) -> np.ndarray:
        """Where a continuation starts: the guess, or the closed configuration nearest the document's initial
        values (in float64), which may not close themselves."""
        if guess is not None:
            return self.as_batch(guess)
        if isinstance(self.backend, Float64):
            return self._closed_guess
        return self.tree.initial_coordinates()[None, :]

    def _continue_from(self, base, targets, q, report, redo: np.ndarray, steps: int = 16):
        """For the samples `redo` (Newton did not converge, or closed on another branch), walk the independent
        coordinates from the guess's own values to the targets in small steps with a predictor, following the
        assembly branch; a continuation that fails keeps a sample Newton had closed."""
        bad = np.nonzero(redo)[0]
        current, step_report = self._homotopy(
            np.array(base[bad]), targets[bad][:, list(self.partition.independent)], steps
        )
        better = step_report.converged | ~report.converged[bad]
        bad, current = bad[better], current[better]
        q = q.copy()
        q[bad] = current
        report.converged[bad] = step_report.converged[better]
        report.residual[bad] = step_report.residual[better]
        report.worst_row[bad] = step_report.worst_row[better]
        return q, report

    def _homotopy(self, start: np.ndarray, target: np.ndarray, steps: int):
        """All samples at once: close the loops at `start` (N, n), then move the independent coordinates in
        `steps` equal steps to `target` (N, n_ind), predicting with R and correcting with Newton; a sample
        whose Newton fails stays where it failed, unconverged, while the others go on."""
        ind = list(self.partition.independent)
        current, report = newton(self, start)
        first = current[:, ind].copy()
        for k in range(1, steps + 1):
            going = np.nonzero(report.converged)[0]
            if not len(going):
                break
            values = first[going] + (target[going] - first[going]) * self.backend.scalar(k / steps)
            moved = self._predict(current[going], values - current[going][:, ind])
            moved[:, ind] = values
            try:
                moved, step = newton(self, moved)
            except AssemblyError:  # singular for some sample: those that were going stop here, unconverged
                report.converged[going] = False
                break
            current[going] = moved
            report.converged[going] = step.converged
            report.residual[going], report.worst_row[going] = step.residual, step.worst_row
            report.iterations = max(report.iterations, step.iterations)
        return current, report

    def assemble_path(self, independent: np.ndarray, guess=None) -> np.ndarray:
        """Coordinates (N, n) along a path of independent values (N, n_ind) on the assembly branch of the
        guess (default: the document's initial configuration), followed by continuation (path_following.py):
        the same configurations and the same end of the branch whatever the number of samples. Raises
        AssemblyError at the first value the branch does not reach, located to STEP_FLOOR.

        Fast route: every sample at once by continuation from the guess, kept where each sample is what a
        continuation step from the one before gives (`certified`); from the first that is not, the path is
        followed step by step. In variable precision the float64 path is followed and each sample polished."""
        b = self.backend
        if self.float64 is not self:
            with b.context():
                values = self.as_batch(independent)
                first = None if guess is None else b.to_float(self.as_batch(guess)[:1])
                path = self.float64.assemble_path(b.to_float(values), first)
                return self.assemble(values, guess=b.asarray(path))
        values = np.asarray(self.as_batch(independent), dtype=float)
        start = self._closed_start(guess)
        if not self.partition.dependent:
            q = np.repeat(start[None, :], len(values), axis=0)
            q[:, list(self.partition.independent)] = values
            return q
        q, report = self._homotopy(np.repeat(start[None, :], len(values), axis=0), values, 16)
        q[0] = self._follow(start, values[0])
        k = 1
        while k < len(values):
            ok = certified(self, q[k - 1 :], values[k - 1 :]) & report.converged[k - 1 :]
            bad = np.nonzero(~ok[1:])[0]
            if not len(bad):
                break
            k += int(bad[0])
            followed = self._follow(q[k - 1], values[k])
            if np.abs(followed - q[k]).max() > 1e-9 * self.length_scale and k + 1 < len(values):
                q[k + 1 :], rest = self._homotopy(
                    np.repeat(followed[None, :], len(values) - k - 1, 0), values[k + 1 :], 16
                )
                report.converged[k + 1 :] = rest.converged
            q[k] = followed
            k += 1
        self.last_report = AssemblyReport(
            np.ones(len(q), bool), report.iterations, np.zeros(len(q)), np.zeros(len(q), int)
        )
        return q

    def _closed_start(self, guess) -> np.ndarray:
        """Where a path starts (n,): the guess's first configuration closed by Newton at its own independent
        values, or the closed configuration nearest the document's initial values."""
        if guess is None:
            return np.array(self._closed_guess[0], dtype=float)
        start, report = newton(self, np.array(self.as_batch(guess)[:1], dtype=float))
        if not report.converged[0]:
            self._raise(report, start)
        return start[0]

    def _follow(self, q: np.ndarray, values: np.ndarray) -> np.ndarray:
        """follow() from the closed q (n,) to `values` (n_ind,), its BranchEnd said as an AssemblyError."""
        try:
            return follow(self, q, values)
        except BranchEnd as end:
            raise self._branch_end(end) from None

    def _branch_end(self, end: BranchEnd) -> AssemblyError:
        """Names the first values not reached (to STEP_FLOOR), where the branch ends and the loop that turns
        singular there (the constraint row that the smallest singular value's left vector weighs most). The
        error's `reached` holds the last independent values reached, by name."""
        rows, dep, ind = list(self.partition.rows), list(self.partition.dependent), list(self.partition.independent)
        jac = np.asarray(self.constraint_jacobian(end.reached)[0], dtype=float)[np.ix_(rows, dep)]
        left, sigma, _ = np.linalg.svd(jac)
        row = rows[int(np.argmax(np.abs(left[:, -1])))]
        beyond = ", ".join(f"{name} = {v:.10g}" for name, v in zip(self.independent, end.beyond, strict=True))
        error = AssemblyError(
            f"the mechanism cannot close at {beyond} on the assembly branch followed from the start: loop of cut "
            f"joint '{self.constraints.row_joint[row]}' ({self.constraints.labels[row]}) turns singular there "
            f"(smallest singular value of the loop Jacobian {sigma[-1]:.2g}, largest {sigma[0]:.2g}): the branch "
            "ends, and the configurations beyond it lie on other branches",
            self.constraints.row_joint[row],
        )
        error.reached = dict(zip(self.independent, end.reached[ind].tolist(), strict=True))
        return error

    def _predict(self, q: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """First-order step of all coordinates for a step `delta` (N, n_ind) of the independent ones."""
        return q + (self.r_matrix(q) * delta[:, None, :]).sum(axis=2)

    def _starting_point(self, independent, guess) -> np.ndarray:
        q0 = self.tree.initial_coordinates()[None, :] if guess is None else self.as_batch(guess)
        if independent is None:
            return q0.copy()
        ind = list(self.partition.independent)
        if isinstance(independent, Mapping):
            unknown = set(independent) - set(self.independent)
            if unknown:
                raise KeyError(f"{sorted(unknown)} are not independent coordinates; they are {self.independent}")
            cols = [np.atleast_1d(self.backend.asarray(independent[name])) for name in self.independent]
            values = np.stack(np.broadcast_arrays(*cols), axis=-1)
        else:
            values = self.as_batch(independent)
        N = max(len(values), len(q0))
        q = np.array(np.broadcast_to(q0, (N, self.n)))
        q[:, ind] = values
        return q

    def _raise(self, report: AssemblyReport, q: np.ndarray):
        """Names where: the independent coordinates' values (and which of several configurations)."""
        bad = int(np.nonzero(~report.converged)[0][0])
        row = int(report.worst_row[bad])
        label = self.constraints.labels[row]
        where = self._where(q, bad)
        what = "coupling" if self.constraints.is_coupling(row) else "loop of cut joint"
        raise AssemblyError(
            f"the mechanism cannot close at {where}: {what} "
            f"'{self.constraints.row_joint[row]}' leaves residual {report.residual[bad]:.3g} "
            f"({label}) after {report.iterations} Newton iterations",
            self.constraints.row_joint[row],
            float(report.residual[bad]),
        )

    def _where(self, q: np.ndarray, k: int) -> str:
        """'theta1 = 0.5 (configuration 3 of 10)': the independent values of sample k."""
        values = self.backend.to_float(q[k][list(self.partition.independent)])
        where = ", ".join(f"{name} = {v:.6g}" for name, v in zip(self.independent, values, strict=True))
        return where + (f" (configuration {k + 1} of {len(q)})" if len(q) > 1 else "")

    # ------------------------------------------------------------------ velocity level
    def r_matrix(self, q) -> np.ndarray:
        """R = ∂q/∂q_ind, shape (N, n, n_ind): q̇ = R q̇_ind."""
        b = self.backend
        with b.context():
            q = self.as_batch(q)
            dep, ind, rows = list(self.partition.dependent), list(self.partition.independent), list(self.partition.rows)
            N = len(q)
            R = b.zeros((N, self.n, len(ind)))
            for j, i in enumerate(ind):
                R[:, i, j] = b.scalar(1)
            if dep:
                J = self.constraints.jacobian(self.tree.motion(q))[:, rows]
                R[:, dep, :] = b.solve(J[:, :, dep], -J[:, :, ind])
            return R

    def velocities(self, q, qd_independent) -> np.ndarray:
        """All q̇ (N, n) from the independent velocities (N, n_ind)."""
        with self.backend.context():
            R = self.r_matrix(q)
            return (R * self.as_batch(qd_independent)[:, None, :]).sum(axis=2)

    def acceleration_term(self, q, qd) -> np.ndarray:
        """The part of q̈ not proportional to q̈_ind: q̈ = R q̈_ind + this (N, n); it is zero on independents."""
        b = self.backend
        with b.context():
            q, qd = self.as_batch(q), self.as_batch(qd)
            dep, rows = list(self.partition.dependent), list(self.partition.rows)
            out = b.zeros(q.shape)
            if dep:
                st = self.tree.motion(q, qd)
                J = self.constraints.jacobian(st)[:, rows][:, :, dep]
                out[:, dep] = b.solve(J, -self.constraints.acceleration_bias(st)[:, rows])
            return out

    def accelerations(self, q, qd, qdd_independent, R: np.ndarray | None = None) -> np.ndarray:
        """All q̈ (N, n) from the independent accelerations (N, n_ind); R when the caller has it already."""
        with self.backend.context():
            R = self.r_matrix(q) if R is None else R
            return (R * self.as_batch(qdd_independent)[:, None, :]).sum(axis=2) + self.acceleration_term(q, qd)

    # ------------------------------------------------------------------ bodies
    def poses(self, q) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """World (rotation (N,3,3), origin (N,3)) of every body frame, by label (ground is "0")."""
        st = self.motion(q)
        return {label: (st.R[i], st.p[i]) for i, label in enumerate(self.tree.body_labels)}

    def points(self, q) -> dict[tuple[str, str], np.ndarray]:
        """World positions (N, 3) of every named point, keyed by (body label, point name)."""
        st = self.motion(q)
        out = {}
        for label in self.tree.body_labels:
            i, body = self.tree.index[label], self.model.body(label)
            for name in body.points:
                local = self.tree.geometry.point(body, name)
                out[(label, name)] = st.p[i] + (st.R[i] * local[None, None, :]).sum(axis=2)
        return out

    def body_jacobian(self, q, label: str, point=None) -> np.ndarray:
        """World-frame Jacobian (N, 6, n) of a body, angular rows first, linear rows for the velocity of
        `point` (body coordinates, default the body origin): [ω; v_P] = J q̇."""
        b = self.backend
        with b.context():
            st = self.motion(q)
            i = self.tree.body_index(label)
            local = b.zeros(3) if point is None else b.asarray(point)
            world = st.p[i] + (st.R[i] * local[None, None, :]).sum(axis=2)
            J = b.zeros((len(world), 6, self.n))
            for k in self.tree.support[i]:
                if self.tree.kinds[k] == "R":
                    J[:, :3, k] = st.u[:, k]
            J[:, 3:] = self.tree.point_jacobian(st, i, world)
            return J


def _nudge(shape: tuple[int, ...]) -> np.ndarray:
    """The fixed pseudo-random nudge (±0.1 rad) of a guess where the residual is stationary, drawn only then:
    numpy.random takes 7 ms to import."""
    return np.random.default_rng(0).uniform(-0.1, 0.1, shape)
