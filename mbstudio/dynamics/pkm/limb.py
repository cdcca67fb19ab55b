"""One limb of a parallel machine as a mechanism of its own (Müller 2021, sec. 3.3-3.7, 6.1-6.3): its bodies,
a massless copy of the platform and the joints touching them, in any back-end (batched float64, variable
precision, CasADi symbols for the compiled nodes).

Each fundamental cycle is closed on its own (constraint embedding): its rows of the loop Jacobian G and its
dependent coordinates y form the small block G_y ẏ + G_q q̇ = 0, solved as ẏ = −G_y⁻¹ G_q q̇ (eq. 45), and
the stacked solutions give ϑ̇ = H q̇ (eq. 76-77). The platform twist (ω; v of the platform frame's origin)
is V_p = L_p q̇ with L_p = J_p H (eq. 80). The limb's inverse-kinematics Jacobian F (q̇ = F V_p, eq. 86/91/94)
is the least-squares left inverse of L_p, weighted so that angular rows count per length: exact wherever the
platform twist is one the limb can make (always, in the assembled machine), for equimobile limbs and others
alike, and free of the artificial singularities a fixed choice of rows brings (IRSBot-2, Müller 2021, Example 18).

The limb's equations of motion keep the platform as a massless body (its inertia is the platform node's,
eq. 104): with the platform a leaf this is the paper's limb without platform (eq. 99-101), and limbs whose
cycles pass through the platform (the 3R[2US] Delta) need no special case.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...kinematics.coordinates import Partition, numerical_rank, partition
from ...kinematics.mechanism import Mechanism
from ...kinematics.topology import spanning_tree
from ...kinematics.tree import MotionState
from ...model.document import INERTIA_NAMES, Body, Joint, Model, body_key
from ...model.errors import AssemblyError, ModelError
from ..inverse_dynamics import inverse_dynamics
from ..mass_matrix import mass_matrix
from .topology import Cycle, Limb, fundamental_cycles, is_hybrid

NEWTON_TOL = 1e-13  # per length scale: loop residuals and platform pose errors of a solved limb
NEWTON_ITERATIONS = 40
IK_ITERATIONS = 12  # per substep of the inverse kinematics: Newton from the previous substep's pose needs 3 to 5


@dataclass(frozen=True)
class LocalCycle:
    """A fundamental cycle as the limb's arrays see it: its independent constraint rows, its dependent
    coordinates (as many) and the independent coordinates they depend on (indices into q and into q_ind)."""

    cycle: Cycle
    rows: tuple[int, ...]
    dependent: tuple[int, ...]
    independent: tuple[int, ...]
    columns: tuple[int, ...]  # positions of `independent` among the limb's independent coordinates


def limb_document(model: Model, limb: Limb, platform: str) -> Model:
    """The limb alone: its bodies, the platform without mass, and its joints (the document's cut flags kept
    inside the limb; the platform's joints left to the spanning tree, which must reach the platform)."""
    massless = Body(platform, model.body(platform).name, dict.fromkeys(INERTIA_NAMES, 0.0))
    source = model.body(platform)
    massless.points, massless.frames, massless.shape = source.points, source.frames, source.shape
    joints = [
        Joint(j.name, j.type, j.parent, j.child, j.parent_frame, j.child_frame, j.coordinates, _cut_flag(j, platform))
        for j in limb.joints
    ]
    sub = Model(
        name=f"{model.name}: {limb.name}",
        gravity=model.gravity,
        parameters=model.parameters,
        bodies=[model.body(b) for b in limb.bodies] + [massless],
        joints=joints,
    )
    sub.ground = model.ground
    return sub


def structural_cycles(model: Model, limb: Limb, platform: str) -> list[Cycle]:
    """The limb's fundamental cycles for the spanning tree its limb model would use (graph work only)."""
    return fundamental_cycles(limb, platform, [j.name for j in spanning_tree(limb_document(model, limb, platform)).cut])


def _cut_flag(joint: Joint, platform: str) -> bool | None:
    return None if platform in (body_key(joint.parent), body_key(joint.child)) else joint.cut


class LimbModel:
    """Kinematics and dynamics of one limb in its own frame (the representative limb's, for congruent limbs).

    `actuated`: the limb's actuated coordinates, kept among its independent ones (sec. 5). All arrays are
    batched (N, ...) in the back-end's numbers; q is the limb's tree coordinates (N, n)."""

    def __init__(self, model: Model, limb: Limb, platform: str, actuated: list[str], backend=None) -> None:
        self.limb, self.platform = limb, platform
        self.document = limb_document(model, limb, platform)
        probe = Mechanism(self.document)  # float64: the partition and the cycles' row choice
        self.partition = _actuated_partition(probe, actuated)
        self.mech = Mechanism(self.document, backend=backend, partition=self.partition)
        self.backend = self.mech.backend
        self.n, self.coordinates = self.mech.n, self.mech.coordinates
        self.independent = list(self.partition.independent)
        self.actuated = [self.coordinates.index(name) for name in actuated]
        cut = [j.name for j in self.mech.topology.cut]
        self.cycles = [self._local(c) for c in fundamental_cycles(limb, platform, cut)]
        if not is_hybrid([c.cycle for c in self.cycles]):
            raise ModelError(
                f"{limb.name}",
                "is not hybrid: two of its fundamental cycles share more than one body, so its loops cannot be "
                "closed one at a time",
                [c.cycle.bodies for c in self.cycles],
                "limbs whose loops are arranged in series (Müller 2021, Assumption 1)",
            )
        self.body = self.mech.tree.body_index(platform)
        scale = probe.length_scale
        self.weights = self.backend.asarray([scale**2] * 3 + [1.0] * 3)  # angular rows count per length
        self.tolerance = NEWTON_TOL * scale

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The back-end's batched solve; in float64 a singular sample (a pose out of reach, met by the inverse
        kinematics of a workspace grid) gets the pseudo-inverse's answer instead of stopping the batch."""
        try:
            return self.backend.solve(a, b)
        except np.linalg.LinAlgError:
            column = b.ndim == a.ndim - 1
            x = np.linalg.pinv(a) @ (b[..., None] if column else b)
            return x[..., 0] if column else x

    def _local(self, cycle: Cycle) -> LocalCycle:
        """The cycle's rows (those of its cut joint the partition kept) and coordinates."""
        rows = tuple(r for r in self.partition.rows if self.mech.constraints.row_joint[r] == cycle.cut)
        inside = {
            p.coordinate for link in self.mech.tree.links if link.joint.name in cycle.joints for p in link.primitives
        }
        dependent = tuple(i for i in self.partition.dependent if i in inside)
        independent = tuple(i for i in self.independent if i in inside)
        if len(rows) != len(dependent):
            raise ModelError(
                f"{self.limb.name}, cycle of '{cycle.cut}'",
                f"has {len(rows)} independent loop equations but {len(dependent)} dependent coordinates of its own",
                list(cycle.joints),
                "loops that close on their own coordinates (a hybrid limb)",
            )
        return LocalCycle(cycle, rows, dependent, independent, tuple(self.independent.index(i) for i in independent))

    # ------------------------------------------------------------------ velocity level (eq. 45-47, 76-80)
    def h_matrix(self, q: np.ndarray, jacobian: np.ndarray | None = None) -> np.ndarray:
        """H (N, n, δ_l): ϑ̇ = H q̇, each cycle's block solved on its own."""
        b = self.backend
        G = self.mech.constraint_jacobian(q) if jacobian is None else jacobian
        H = b.zeros((G.shape[0], self.n, len(self.independent)))
        for j, i in enumerate(self.independent):
            H[:, i, j] = b.scalar(1)
        for c in self.cycles:
            if c.dependent:
                block = G[:, list(c.rows)]
                solved = self._solve(block[:, :, list(c.dependent)], -block[:, :, list(c.independent)])
                for k, column in enumerate(c.columns):
                    H[:, list(c.dependent), column] = solved[:, :, k]
        return H

    def acceleration_term(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The part of ϑ̈ not proportional to q̈ (N, n): each cycle's ÿ = −G_y⁻¹ (Ġ ϑ̇) (the Ḣ q̇ of eq. 46)."""
        b = self.backend
        gamma = self.mech.constraints.acceleration_bias(self.mech.motion(q, qd))
        G = self.mech.constraint_jacobian(q)
        out = b.zeros(gamma.shape[:1] + (self.n,))
        for c in self.cycles:
            if c.dependent:
                rows = list(c.rows)
                out[:, list(c.dependent)] = self._solve(G[:, rows][:, :, list(c.dependent)], -gamma[:, rows])
        return out

    def close_cycles(self, q: np.ndarray, steps: int | None = None) -> np.ndarray:
        """Newton on each cycle's dependent coordinates (its own small block), `steps` times, or until every
        loop residual is below the tolerance (float64; AssemblyError naming the cycle when it is not)."""
        q = q.copy()
        constraints = self.mech.constraints
        for _ in range(NEWTON_ITERATIONS if steps is None else steps):
            st = self.mech.motion(q)
            phi, G = constraints.residual(st), constraints.jacobian(st)
            if steps is None and _largest(phi) <= self.tolerance:
                return q
            for c in self.cycles:
                if c.dependent:
                    rows, dep = list(c.rows), list(c.dependent)
                    q[:, dep] = q[:, dep] - self._solve(G[:, rows][:, :, dep], phi[:, rows])
        if steps is None and _largest(self.mech.residual(q)) > self.tolerance:
            raise AssemblyError(f"{self.limb.name}: its loops do not close", self.cycles[0].cycle.cut)
        return q

    def platform_jacobian(self, q: np.ndarray, state: MotionState | None = None) -> np.ndarray:
        """J_p (N, 6, n): (ω; velocity of the platform frame's origin) per tree coordinate rate, limb axes."""
        st = self.mech.motion(q) if state is None else state
        tree = self.mech.tree
        J = self.backend.zeros((len(q), 6, self.n))
        turning = [k for k in tree.support[self.body] if tree.kinds[k] == "R"]
        J[:, :3, turning] = np.swapaxes(st.u[:, turning], 1, 2)
        J[:, 3:] = tree.point_jacobian(st, self.body, st.p[self.body])
        return J

    def forward_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """L_p = J_p H (N, 6, δ_l), the limb's forward-kinematics Jacobian (eq. 80), and H."""
        st = self.mech.motion(q)
        H = self.h_matrix(q, self.mech.constraints.jacobian(st))
        return self.platform_jacobian(q, st) @ H, H

    def ik_jacobian(self, L: np.ndarray) -> np.ndarray:
        """F (N, δ_l, 6) with q̇ = F V_p: the weighted least-squares left inverse of L_p."""
        LtW = np.swapaxes(L, 1, 2) * self.weights[None, None, :]
        return self._solve(LtW @ L, LtW)

    # ------------------------------------------------------------------ position level (eq. 84, 96)
    def platform_pose(self, q: np.ndarray, state: MotionState | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rotation (N, 3, 3) and origin (N, 3) of the platform frame, limb axes."""
        st = self.mech.motion(q) if state is None else state
        return st.R[self.body], st.p[self.body]

    def pose_error(self, q: np.ndarray, position, rotation, state: MotionState | None = None) -> np.ndarray:
        """(N, 6): the small rotation (limb axes) and the displacement that take the platform to the target."""
        R, p = self.platform_pose(q, state)
        S = rotation @ np.swapaxes(R, 1, 2)  # R_target Rᵀ = exp(δθ~) near the target
        half = (S - np.swapaxes(S, 1, 2)) / 2
        error = self.backend.zeros((len(p), 6))
        error[:, 0], error[:, 1], error[:, 2] = half[:, 2, 1], half[:, 0, 2], half[:, 1, 0]
        error[:, 3:] = position - p
        return error

    def ik_step(self, q: np.ndarray, position: np.ndarray, rotation: np.ndarray) -> np.ndarray:
        """One step of eq. (96): Δϑ = H F Δx, then each cycle closed again by one local Newton step."""
        st = self.mech.motion(q)
        H = self.h_matrix(q, self.mech.constraints.jacobian(st))
        F = self.ik_jacobian(self.platform_jacobian(q, st) @ H)
        step = H @ (F @ self.pose_error(q, position, rotation, st)[:, :, None])
        return self.close_cycles(q + step[:, :, 0], steps=1)

    def solve_pose(self, position, rotation, guess: np.ndarray, substeps: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Limb coordinates (N, n) putting the platform frame at `position` (N, 3) with `rotation` (3, 3) or
        (N, 3, 3), from `guess` (N, n), walking there in `substeps` straight steps (float64); and per sample
        the largest pose error or loop residual left (N,), not finite where Newton broke down."""
        q = self.close_cycles(np.array(guess, dtype=float))
        start = self.platform_pose(q)[1]
        rotation = np.broadcast_to(rotation, (len(q), 3, 3))
        with np.errstate(all="ignore"):  # a pose out of reach may overflow; its error says so
            going = np.ones(len(q), bool)  # samples still converging at every substep so far
            for k in range(1, substeps + 1):
                goal = start + (position - start) * (k / substeps)
                for _ in range(IK_ITERATIONS):
                    active = going & ~(np.abs(self.pose_error(q, goal, rotation)).max(axis=1) <= self.tolerance)
                    if not active.any():
                        break
                    q[active] = self.ik_step(q[active], goal[active], rotation[active])
                going &= np.abs(self.pose_error(q, goal, rotation)).max(axis=1) <= self.tolerance
            q = self.close_cycles(q, steps=2)
            errors = np.abs(np.concatenate([self.pose_error(q, position, rotation), self.mech.residual(q)], axis=1))
        return q, np.where(np.isfinite(errors).all(axis=1), errors.max(axis=1, initial=0.0), np.inf)

    def inverse_kinematics(self, position, rotation, guess: np.ndarray, substeps: int = 1) -> np.ndarray:
        """As `solve_pose`, for poses the limb reaches: an AssemblyError naming the limb and the first target
        it does not."""
        q, errors = self.solve_pose(position, rotation, guess, substeps)
        bad = np.nonzero(~(errors <= 1e3 * self.tolerance))[0]
        if len(bad):
            where = np.round(np.asarray(position, float)[bad[0]], 6).tolist()
            raise AssemblyError(
                f"{self.limb.name} cannot put the platform at {where} (limb axes; error {errors[bad[0]]:.3g}, "
                f"sample {bad[0] + 1} of {len(q)}): out of its reach, or past a singular pose"
            )
        return q

    # ------------------------------------------------------------------ dynamics (eq. 101-103, 144)
    def motion_from_platform(self, q, twist, acceleration) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(ϑ̇, ϑ̈, ϑ̈ at zero platform acceleration, B = H F) for platform twists and accelerations (N, 6):
        eq. (87)-(88) with q̈ = F (V̇_p − L̇_p q̇), the platform's velocity-product acceleration from the tree."""
        L, H = self.forward_jacobian(q)
        B = H @ self.ik_jacobian(L)
        qd = _apply(B, twist)
        rest = self.acceleration_term(q, qd)  # ϑ̈ at q̈ = 0
        st = self.mech.motion(q, qd, rest)
        drift = np.concatenate([st.al[self.body], st.a[self.body]], axis=1)
        qdd_rest = rest - _apply(B, drift)
        return qd, qdd_rest + _apply(B, acceleration), qdd_rest, B

    def wrench(self, q, twist, acceleration, gravity) -> tuple[np.ndarray, np.ndarray]:
        """The limb's node (eq. 144): the platform wrench Bᵀ φ (N, 6) its motion needs (φ: the limb tree's
        inverse dynamics under `gravity`, limb axes), and B (N, n, 6)."""
        qd, qdd, _, B = self.motion_from_platform(q, twist, acceleration)
        phi = inverse_dynamics(self.mech, q, qd, qdd, gravity)
        return _apply(np.swapaxes(B, 1, 2), phi), B

    def equations(self, q, twist, gravity) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The limb's share of the task-space equations in platform twists, limb axes: mass matrix Bᵀ M̄ B
        (N, 6, 6) (eq. 108), the bias Bᵀ φ(V̇_p = 0) (N, 6) (the limb's C_t V_t + W_t^grav, eq. 109, 112), and
        B (N, n, 6)."""
        qd, _, qdd_rest, B = self.motion_from_platform(q, twist, self.backend.zeros(twist.shape))
        Bt = np.swapaxes(B, 1, 2)
        bias = _apply(Bt, inverse_dynamics(self.mech, q, qd, qdd_rest, gravity))
        return Bt @ mass_matrix(self.mech, q) @ B, bias, B


def _apply(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A (N, i, j) times x (N, j)."""
    return (A * x[:, None, :]).sum(axis=2)


def _largest(x) -> float:
    return float(np.abs(np.asarray(x, dtype=float)).max(initial=0.0))


def _actuated_partition(mech: Mechanism, actuated: list[str]) -> Partition:
    """The limb's rows and coordinates with its actuated coordinates independent: the dependent ones are the
    best-conditioned columns (pivoted QR) among the others."""
    q0 = mech.assemble_nearest(mech.tree.initial_coordinates())
    phi_q = np.asarray(mech.constraint_jacobian(q0)[0], dtype=float)
    if phi_q.shape[0] == 0:
        return partition(phi_q, mech.coordinates, None)
    import scipy.linalg  # 0.2 s to import: for the machines that need it, not for every `mbstudio check`

    rank = numerical_rank(np.linalg.svd(phi_q, compute_uv=False), phi_q.shape)
    _, _, row_perm = scipy.linalg.qr(phi_q.T, pivoting=True, mode="economic")
    rows = phi_q[sorted(row_perm[:rank])]
    free = [i for i, name in enumerate(mech.coordinates) if name not in actuated]
    _, _, col_perm = scipy.linalg.qr(rows[:, free], pivoting=True, mode="economic")
    dependent = {free[i] for i in col_perm[:rank]}
    chosen = [name for i, name in enumerate(mech.coordinates) if i not in dependent]
    return partition(phi_q, mech.coordinates, chosen)
