"""A TITOP block model: blocks interconnected port to port, a tree hanging from the inertial frame (or from
floating bases), with gravity and loads (Alazard et al. 2024, sections 2-3).

    model = BlockModel(blocks, gravity=[0, -9.81, 0], loads=[...])
    acc = model.forward_dynamics(state)              # the interconnection's algebraic loop, solved exactly
    inv = model.inverse_dynamics(state, acc)         # every acceleration imposed: efforts and reactions

Inverse dynamics with every acceleration imposed has no loop: motions go out from the roots (eq. 32, 35, 65),
wrenches come back (eq. 29, 31, 46, 76, 93), i.e. a recursive Newton-Euler pass (§1.13). Forward dynamics is
the algebraic loop of the forward diagram, affine in the accelerations; loop_solvers.py solves it exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...model.errors import ModelError
from ...numerics.backends import Float64
from . import floating_base
from .blocks import GROUND, Block, Kinematics, child_motion, gravity_term, needed_wrench
from .loop_solvers import condensed, faithful
from .motion import Motion, identity, mv, tmv
from .states import BlockAccelerations, BlockState, InverseDynamics

SOLVERS = ("condensed", "faithful")


class BlockModel:
    """Blocks in an order where every parent comes before its children, gravity in inertial axes, loads."""

    def __init__(self, blocks: Sequence[Block], gravity, loads: Sequence = (), backend=None, name: str = "") -> None:
        self.backend = backend or Float64()
        self.blocks = tuple(blocks)
        self.gravity = self.backend.asarray(gravity)
        self.loads = tuple(loads)
        self.name = name
        for k, block in enumerate(self.blocks):
            joint = block.joint
            if not GROUND <= joint.parent < k:
                raise ModelError(
                    f"joint '{joint.name}'", "its parent block does not come before it", joint.parent, f"-1 to {k - 1}"
                )
            if joint.kind == "floating" and joint.parent != GROUND:
                raise ModelError(
                    f"joint '{joint.name}'", "a floating base hangs from the inertial frame", joint.parent, "-1"
                )
        self.children = [[c for c, b in enumerate(self.blocks) if b.joint.parent == k] for k in range(len(self.blocks))]
        self.channels = [k for k, b in enumerate(self.blocks) if b.joint.dof == 1]
        self.floating = [k for k, b in enumerate(self.blocks) if b.joint.kind == "floating"]
        self.coordinates = [name for b in self.blocks for name in b.joint.coordinates]
        twice = sorted({name for name in self.coordinates if self.coordinates.count(name) > 1})
        if twice:
            raise ModelError("coordinates", "name a coordinate of two blocks", twice, "each coordinate name once")
        self.channel_of = {k: c for c, k in enumerate(self.channels)}
        self._where = {
            b.joint.coordinates[0]: ("channel", self.channel_of[k])
            for k, b in enumerate(self.blocks)
            if k in self.channel_of
        }
        for i, k in enumerate(self.floating):
            self._where |= {name: ("base", i, j) for j, name in enumerate(self.blocks[k].joint.coordinates)}

    # ------------------------------------------------------------------ motions
    def kinematics(self, state: BlockState) -> list[Kinematics]:
        """Every block's motion at its P, from the roots out (accelerations aside)."""
        out: list[Kinematics] = []
        zero, ground = self.backend.zeros((state.samples, 6)), self.inertial_frame(state.samples)
        for k, block in enumerate(self.blocks):
            joint = block.joint
            if joint.kind == "floating":
                base = state.bases[self.floating.index(k)]
                motion = Motion(floating_base.attitude(joint, base.euler, self.backend), base.pos, base.tw)
                out.append(Kinematics(motion, None, zero, gravity_term(motion, self.gravity)))
                continue
            c = self.channel_of.get(k)
            q, qd = (zero[:, 0], zero[:, 0]) if c is None else (state.q[:, c], state.qd[:, c])
            parent = ground if joint.parent == GROUND else out[joint.parent].motion
            point = self.blocks[joint.parent].body.point if joint.parent != GROUND else 0 * joint.port
            out.append(child_motion(block, point, parent, q, qd, self.gravity, self.backend))
        return out

    def motion_of(self, kin: list[Kinematics], block: int) -> Motion:
        """A block's motion at its P; the inertial frame's for GROUND."""
        return kin[block].motion if block != GROUND else self.inertial_frame(len(kin[0].motion.pos))

    def inertial_frame(self, N: int) -> Motion:
        """The inertial frame's motion (N samples): at rest, at the origin, in inertial axes."""
        zero = self.backend.zeros((N, 3))
        return Motion(np.broadcast_to(identity(zero), (N, 3, 3)), zero, self.backend.zeros((N, 6)))

    def propagate(self, kin: list[Kinematics], acc: BlockAccelerations) -> list[np.ndarray]:
        """Every block's xdot'_P = X xdot'_parent + κ + e q̈ (eq. 35, 65), from the roots out."""
        out: list[np.ndarray] = []
        for k, block in enumerate(self.blocks):
            joint = block.joint
            if joint.kind == "floating":
                out.append(acc.bases[self.floating.index(k)])
                continue
            a = kin[k].kappa if joint.parent == GROUND else mv(kin[k].X, out[joint.parent]) + kin[k].kappa
            if k in self.channel_of:
                a = a + joint.e * acc.qdd[:, self.channel_of[k], None]
            out.append(a)
        return out

    # ------------------------------------------------------------------ loads
    def applied(self, t, state: BlockState, kin: list[Kinematics]) -> tuple[np.ndarray, list[np.ndarray]]:
        """The loads' efforts on the channels (N, n_channels) and wrenches at each block's P (N, 6)."""
        efforts = self.backend.zeros((state.samples, len(self.channels)))
        wrenches = [self.backend.zeros((state.samples, 6)) for _ in self.blocks]
        for load in self.loads:
            load.apply(self, t, state, kin, efforts, wrenches)
        return efforts, wrenches

    def coordinate_values(self, state: BlockState, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A coordinate's value and rate (N,): a channel's, or a floating base's (x, y, z, ψ, θ, φ)."""
        where = self._locate(name)
        if where[0] == "channel":
            return state.q[:, where[1]], state.qd[:, where[1]]
        q, qd = self.base_coordinates(state, where[1])
        return q[:, where[2]], qd[:, where[2]]

    def add_coordinate_force(self, state: BlockState, name: str, force, efforts, wrenches) -> None:
        """A generalized force on a coordinate: a channel's effort, or a floating base's wrench."""
        where = self._locate(name)
        if where[0] == "channel":
            efforts[:, where[1]] = efforts[:, where[1]] + force
            return
        k = self.floating[where[1]]
        Q = self.backend.zeros((state.samples, 6))
        Q[:, where[2]] = force
        base = state.bases[where[1]]
        wrenches[k] = wrenches[k] + floating_base.wrench_of_forces(self.blocks[k].joint, base, Q, self.backend)

    def is_translation(self, name: str) -> bool:
        """A coordinate in metres (a prismatic joint's, a floating base's x, y, z), else in radians."""
        where = self._locate(name)
        if where[0] == "base":
            return where[2] < 3
        return self.blocks[self.channels[where[1]]].joint.kind == "prismatic"

    def _locate(self, name: str) -> tuple:
        if name not in self._where:
            raise ModelError("coordinate", "is not a coordinate of the block model", name, ", ".join(self.coordinates))
        return self._where[name]

    # ------------------------------------------------------------------ dynamics
    def inverse_dynamics(
        self, state: BlockState, acc: BlockAccelerations, t=0.0, loads: bool = True
    ) -> InverseDynamics:
        """Every acceleration imposed (the inverse diagram, §3.4 step 11): motions out, wrenches back. With
        `loads` the loads' wrenches act (their efforts are not subtracted: the efforts are the joints' totals)."""
        kin = self.kinematics(state)
        wrenches = self.applied(t, state, kin)[1] if loads else [0] * len(self.blocks)
        a = self.propagate(kin, acc)
        carried = [needed_wrench(b.body, kin[k], a[k]) - wrenches[k] for k, b in enumerate(self.blocks)]
        for k in reversed(range(len(self.blocks))):
            for c in self.children[k]:  # eq. (31): the children's wrenches moved to this P, in these axes
                carried[k] = carried[k] + tmv(kin[c].X, carried[c])
        efforts = self.backend.zeros((state.samples, len(self.channels)))
        for c, k in enumerate(self.channels):  # eq. (46), (76): C_m = −eᵀ W_{A/B,P}
            efforts[:, c] = (self.blocks[k].joint.e * carried[k]).sum(axis=-1)
        return InverseDynamics(efforts, tuple(carried[k] for k in self.floating), [-w for w in carried])

    def forward_dynamics(self, state: BlockState, t=0.0, solver: str = "condensed") -> BlockAccelerations:
        """The accelerations under gravity and the loads, by the chosen solve of the algebraic loop
        (loop_solvers.py): 'condensed' (the default) or 'faithful'."""
        if solver not in SOLVERS:
            raise ModelError("solver", "is not a solver of the algebraic loop", solver, " or ".join(SOLVERS))
        kin = self.kinematics(state)
        efforts, wrenches = self.applied(t, state, kin)
        return (condensed if solver == "condensed" else faithful)(self, kin, efforts, wrenches)

    def mass_matrix(self, state: BlockState) -> tuple[np.ndarray, np.ndarray]:
        """M (N, m, m) and the bias h (N, m) of r(u) = M u + h, r the inverse diagram's efforts and base wrenches
        for the accelerations u = (each base's xdot'_P, q̈) without loads (option B of loop_solvers.py)."""
        size = 6 * len(self.floating) + len(self.channels)
        N = state.samples
        h = self._residual(state, self.backend.zeros((N, size)))
        columns = []
        for j in range(size):
            unit = self.backend.zeros((N, size))
            unit[:, j] = self.backend.scalar(1)
            columns.append(self._residual(state, unit) - h)
        return np.stack(columns, axis=-1), h

    def _residual(self, state: BlockState, u: np.ndarray) -> np.ndarray:
        inv = self.inverse_dynamics(state, self.split(u), loads=False)
        return np.concatenate([*inv.bases, inv.efforts], axis=-1)

    def split(self, u: np.ndarray) -> BlockAccelerations:
        """(each base's xdot'_P, q̈) stacked (N, 6 n_bases + n_channels) as BlockAccelerations."""
        nb = 6 * len(self.floating)
        return BlockAccelerations(u[:, nb:], tuple(u[:, 6 * i : 6 * i + 6] for i in range(len(self.floating))))

    # ------------------------------------------------------------------ coordinates
    def base_coordinates(self, state: BlockState, i: int) -> tuple[np.ndarray, np.ndarray]:
        return floating_base.to_coordinates(self.blocks[self.floating[i]].joint, state.bases[i], self.backend)

    def to_coordinates(self, state: BlockState) -> tuple[np.ndarray, np.ndarray]:
        """q, q̇ (N, n) in the order of `coordinates` (a free joint's x, y, z, ψ, θ, φ for a floating base)."""
        q, qd = [], []
        for k, block in enumerate(self.blocks):
            if block.joint.kind == "floating":
                values, rates = self.base_coordinates(state, self.floating.index(k))
                q.append(values)
                qd.append(rates)
            elif k in self.channel_of:
                q.append(state.q[:, self.channel_of[k], None])
                qd.append(state.qd[:, self.channel_of[k], None])
        return np.concatenate(q, axis=-1), np.concatenate(qd, axis=-1)

    def from_coordinates(self, q: np.ndarray, qd: np.ndarray) -> BlockState:
        """The block state of coordinates and rates (N, n) in the order of `coordinates`."""
        q, qd = np.atleast_2d(q), np.atleast_2d(qd)
        index = {name: i for i, name in enumerate(self.coordinates)}
        bases = []
        for k in self.floating:
            joint = self.blocks[k].joint
            cols = [index[name] for name in joint.coordinates]
            bases.append(floating_base.from_coordinates(joint, q[:, cols], qd[:, cols], self.backend))
        cols = [index[self.blocks[k].joint.coordinates[0]] for k in self.channels]
        return BlockState(q[:, cols], qd[:, cols], tuple(bases))

    def accelerations_from_coordinates(self, state: BlockState, qdd: np.ndarray) -> BlockAccelerations:
        """The block accelerations of coordinate accelerations (N, n) at `state`."""
        qdd = np.atleast_2d(qdd)
        index = {name: i for i, name in enumerate(self.coordinates)}
        bases = tuple(
            floating_base.body_accelerations(
                self.blocks[k].joint, base, qdd[:, [index[n] for n in self.blocks[k].joint.coordinates]], self.backend
            )
            for k, base in zip(self.floating, state.bases, strict=True)
        )
        return BlockAccelerations(qdd[:, [index[self.blocks[k].joint.coordinates[0]] for k in self.channels]], bases)

    def accelerations_to_coordinates(self, state: BlockState, acc: BlockAccelerations) -> np.ndarray:
        """The coordinates' accelerations (N, n), in the order of `coordinates`, of block accelerations."""
        out = []
        for k, block in enumerate(self.blocks):
            if block.joint.kind == "floating":
                i = self.floating.index(k)
                out.append(
                    floating_base.coordinate_accelerations(block.joint, state.bases[i], acc.bases[i], self.backend)
                )
            elif k in self.channel_of:
                out.append(acc.qdd[:, self.channel_of[k], None])
        return np.concatenate(out, axis=-1)
