"""The limb nodes of Müller's (2021) parallel scheme (sec. 8.2, Fig. 13) compiled to native code, evaluated one after
the other or concurrently, and the general closed-loop route compiled the same way for comparison.

A node is one limb model's work for one state, traced once on CasADi symbols (docs/architecture.md, principle 1: the
same `limb.py` code as the batched numpy path) in two steps: `iterations` Newton steps of the limb's inverse
kinematics from the previous state's coordinates (eq. 96, the paper uses two), then the limb's inverse dynamics
projected on the task coordinates, F̄ᵀ H̄ᵀ φ (eq. 144), and its rows of J_IK. The mount frame is an input, so
congruent limbs run the one compiled node with their own mounts (frame invariance, sec. 7). The platform's
Newton-Euler equations and J_IKᵀ u = Σ W̄ are a few flops done by the caller (`gather` traces them).

    fast = CompiledMachine(pkm)
    u, states = fast.inverse_dynamics(x, v, a, states)            # nodes one after the other
    u, states = fast.inverse_dynamics(x, v, a, states, parallel)  # nodes on threads (a ThreadPoolExecutor)

The compiled C releases Python's GIL while it runs (CasADi's external functions), so limb nodes on Python
threads overlap, but handing a node to a thread costs more than the node at one state; `native.py` runs the
steps on native threads instead (`mbstudio bench --only pkm` measures all of them against `serial`).
"""

from __future__ import annotations

import functools
from concurrent.futures import Executor

import casadi
import numpy as np

from ...kinematics.mechanism import Mechanism
from ...numerics.compiled import FastCall, Traced, native, symbols, to_sx
from .general import GeneralRoute
from .limb import LimbModel
from .task_space import ParallelMachine, efforts

ITERATIONS = 2  # Newton steps of each limb's inverse kinematics per evaluation, from the previous state (paper)


class CompiledMachine:
    """The machine's limb nodes as native functions, one per limb model (congruent limbs share theirs)."""

    def __init__(self, pkm: ParallelMachine, iterations: int = ITERATIONS) -> None:
        self.pkm, self.iterations = pkm, iterations
        models = {id(limb.model): limb.model for limb in pkm.limbs}
        self.steps = {key: _trace_steps(pkm, model, iterations, k) for k, (key, model) in enumerate(models.items())}
        self.traced = {key: _node(k, *steps) for k, (key, steps) in enumerate(self.steps.items())}
        self.nodes = {key: native(node) for key, node in self.traced.items()}
        self.calls = [FastCall(self.nodes[id(limb.model)]) for limb in pkm.limbs]  # a buffer per limb
        self.mounts = [_mount_values(limb.mount) for limb in pkm.limbs]
        self.platform = pkm.platform_mass, pkm.gravity[pkm.axes]
        self._maps: dict[tuple[int, int], FastCall] = {}

    def node(self, k: int, q, x, v, a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Limb k's node at one state: its coordinates (n,), its wrench on the task coordinates (δ,) and its
        rows of J_IK (n_act, δ)."""
        q, wrench, rows = self.calls[k](q, x, v, a, self.mounts[k])
        return q, wrench, rows.reshape((-1, len(self.pkm.axes)), order="F")

    def inverse_dynamics(self, x, v, a, states: list[np.ndarray], executor: Executor | None = None):
        """Actuator efforts (n_act,) and the limbs' coordinates at one state: task coordinates, velocities and
        accelerations (δ_p,), each limb's coordinates of the previous state (n_l,); the nodes on `executor`'s
        threads, or one after the other without one."""
        jobs = range(len(self.calls))
        if executor is None:
            results = [self.node(k, states[k], x, v, a) for k in jobs]
        else:
            results = list(executor.map(lambda k: self.node(k, states[k], x, v, a), jobs))
        mass, gravity = self.platform
        total = sum(r[1] for r in results) + mass * (np.asarray(a) - gravity)
        rows = {}
        for limb, (_, _, block) in zip(self.pkm.limbs, results, strict=True):
            rows |= {limb.coordinates[i]: block[j] for j, i in enumerate(limb.model.actuated)}
        J = np.array([rows[n] for n in self.pkm.actuated])[None]
        return efforts(J, total[None])[0], [r[0] for r in results]

    def inverse_dynamics_batch(self, x, v, a, states: list[np.ndarray], executor: Executor | None = None):
        """As `inverse_dynamics` for N states at once (x (N, 3), v, a (N, δ_p), states per limb (N, n_l)): each
        limb's node mapped over the states in one native call, the limbs on `executor`'s threads or one after
        the other."""
        count, dim = len(x), len(self.pkm.axes)
        columns = [np.asarray(z, float).T.ravel(order="F") for z in (x, v, a)]

        def limb(k: int):
            mount = np.tile(self.mounts[k], count)
            q, wrench, rows = self._mapped(k, count)(states[k].T.ravel(order="F"), *columns, mount)
            actuated = len(self.pkm.limbs[k].model.actuated)
            return q.reshape(count, -1), wrench.reshape(count, dim), rows.reshape(count, dim, actuated)

        results = (
            list(executor.map(limb, range(len(self.calls)))) if executor else [limb(k) for k in range(len(self.calls))]
        )
        mass, gravity = self.platform
        total = sum(r[1] for r in results) + mass * (np.asarray(a) - gravity)
        rows = {}
        for limb_, (_, _, block) in zip(self.pkm.limbs, results, strict=True):
            rows |= {limb_.coordinates[i]: block[:, :, j] for j, i in enumerate(limb_.model.actuated)}
        J = np.stack([rows[n] for n in self.pkm.actuated], axis=1)
        return efforts(J, total), [r[0] for r in results]

    def _mapped(self, k: int, count: int) -> FastCall:
        """Limb k's node mapped over `count` states, native, with its own buffers (cached per limb and count)."""
        key = (k, count)
        if key not in self._maps:
            node = self.traced[id(self.pkm.limbs[k].model)]
            self._maps[key] = FastCall(native(node.map(count)))
        return self._maps[key]

    @functools.cached_property
    def serial(self) -> casadi.Function:
        """The whole machine as one native function (q of every limb, x, v, a) -> (q of every limb, u): the
        nodes called one after the other inside it, then the platform and J_IKᵀ u = Σ W̄."""
        dim = len(self.pkm.axes)
        sizes = [limb.model.n for limb in self.pkm.limbs]
        q_sx, x_sx, v_sx, a_sx = (casadi.SX.sym(n, s) for n, s in (("q", sum(sizes)), ("x", 3), ("v", dim), ("a", dim)))
        offsets = np.cumsum([0, *sizes])
        outputs, wrenches, blocks = [], [], []
        for k, limb in enumerate(self.pkm.limbs):
            node = self.traced[id(limb.model)]  # its C goes into the whole function's, called L times
            q, wrench, block = node(q_sx[offsets[k] : offsets[k + 1]], x_sx, v_sx, a_sx, self.mounts[k])
            outputs.append(q)
            wrenches.append(wrench)
            blocks.append(block)
        u = _task_efforts(self.pkm, a_sx, wrenches, blocks)
        return native(casadi.Function("pkm_serial", [q_sx, x_sx, v_sx, a_sx], [casadi.vertcat(*outputs), u]))

    def gather(self) -> casadi.Function:
        """The last step of the parallel scheme as a traced function (a (δ_p), every node's outputs one limb
        after the other, wrench then rows) -> u: the platform's term and J_IKᵀ u = Σ W̄, as in `serial`."""
        dim = len(self.pkm.axes)
        a_sx = casadi.SX.sym("a", dim)
        sizes = [dim * (1 + len(limb.model.actuated)) for limb in self.pkm.limbs]
        nodes_sx = casadi.SX.sym("nodes", sum(sizes))
        parts = casadi.vertsplit(nodes_sx, list(np.cumsum([0, *sizes])))
        u = _task_efforts(self.pkm, a_sx, [p[:dim] for p in parts], [p[dim:] for p in parts])
        return casadi.Function("pkm_gather", [a_sx, nodes_sx], [u], ["a", "nodes"], ["u"])


def _task_efforts(pkm: ParallelMachine, a, wrenches: list, blocks: list):
    """u from J_IKᵀ u = Σ W̄ + the platform's Newton-Euler term (symbols): the limbs' wrenches on the task
    coordinates and their rows of J_IK (n_act x δ_p, by columns) as the nodes return them."""
    dim, total, rows = len(pkm.axes), pkm.platform_mass * (a - pkm.gravity[pkm.axes]), {}
    for limb, wrench, block in zip(pkm.limbs, wrenches, blocks, strict=True):
        total = total + wrench
        block = casadi.reshape(block, -1, dim)
        rows |= {limb.coordinates[i]: block[j, :] for j, i in enumerate(limb.model.actuated)}
    J = casadi.vertcat(*(rows[n] for n in pkm.actuated))
    return casadi.solve(J.T, total) if J.shape[0] == dim else J @ casadi.solve(J.T @ J, total)


def _mount_values(mount) -> np.ndarray:
    """A mount as the node's input: R_0 (by columns), t_0, R_p (by columns), t_p."""
    return np.concatenate(
        [mount.rotation.ravel("F"), mount.origin, mount.platform_rotation.ravel("F"), mount.platform_origin]
    )


def _matrix(values: np.ndarray) -> np.ndarray:
    """A 3x3 object array from 9 symbols stored by columns."""
    return values.reshape((3, 3), order="F")


def _trace_steps(pkm: ParallelMachine, model: LimbModel, iterations: int, k: int) -> tuple[casadi.Function, ...]:
    """The two steps of limb model k's node, which the native driver can run on different threads: the inverse
    kinematics (q (n), x (3: the platform origin, ground axes), mount (24)) -> q (n), and the dynamics at the
    solved coordinates (q, v, a (δ_p), mount) -> (wrench on the task coordinates (δ_p), rows of J_IK (n_act x δ_p,
    by columns))."""
    traced = LimbModel(pkm.model, model.limb, pkm.platform, [model.coordinates[i] for i in model.actuated], Traced())
    dim = len(pkm.axes)
    (q_sx, q), (x_sx, x), (v_sx, v), (a_sx, a), (m_sx, m) = (
        symbols(n, s) for n, s in (("q", model.n), ("x", 3), ("v", dim), ("a", dim), ("mount", 24))
    )
    R0, t0, Rp, tp = _matrix(m[:9]), m[9:12], _matrix(m[12:21]), m[21:]
    P = np.zeros((3, dim))
    P[pkm.axes, range(dim)] = 1.0
    target = R0.T @ (x + pkm.rotation0 @ tp - t0)  # eq. (123): C_p' = S_0⁻¹ C_p S_p
    rotation = R0.T @ pkm.rotation0 @ Rp
    state = q[None, :]
    for _ in range(iterations):
        state = traced.ik_step(state, target[None, :], rotation[None])
    ik = casadi.Function(f"pkm_ik_{k}", [q_sx, x_sx, m_sx], [to_sx(state[0])], ["q", "x", "mount"], ["q_solved"])
    twist, accel = (np.concatenate([np.zeros(3), R0.T @ (P @ w)])[None, :] for w in (v, a))
    wrench, B = traced.wrench(q[None, :], twist, accel, R0.T @ pkm.gravity)
    task = (P.T @ R0) @ wrench[0, 3:]
    rows = B[0][traced.actuated][:, 3:] @ R0.T @ P
    names = ["q", "v", "a", "mount"], ["wrench", "rows"]
    dynamics = casadi.Function(f"pkm_dynamics_{k}", [q_sx, v_sx, a_sx, m_sx], [to_sx(task), to_sx(rows)], *names)
    return ik, dynamics


def _node(k: int, ik: casadi.Function, dynamics: casadi.Function) -> casadi.Function:
    """Limb model k's whole node, its two steps inlined: (q, x, v, a, mount) -> (q solved, wrench, rows)."""
    (q, x, mount), (_, v, a, _) = ik.sx_in(), dynamics.sx_in()
    solved = ik(q, x, mount)
    wrench, rows = dynamics(solved, v, a, mount)
    return casadi.Function(
        f"pkm_node_{k}",
        [q, x, v, a, mount],
        [solved, wrench, rows],
        ["q", "x", "v", "a", "mount"],
        ["q_solved", "wrench", "rows"],
    )


def general_function(pkm: ParallelMachine, iterations: int = ITERATIONS) -> casadi.Function:
    """The general closed-loop route as one native function (q (n), x (3), v, a (δ_p)) -> (q, u): `iterations`
    Newton steps on every tree coordinate (the loop equations and the platform's task position together, as
    the general method must), then the efforts of dynamics/closed_loop.py."""
    mech = Mechanism(pkm.model, backend=Traced(), partition=pkm.mech.partition)
    route = GeneralRoute(mech, pkm.platform, pkm.axes, pkm.actuated)
    dim, rows = len(pkm.axes), list(mech.partition.rows)
    (q_sx, q), (x_sx, x), (v_sx, v), (a_sx, a) = (
        symbols(n, s) for n, s in (("q", mech.n), ("x", 3), ("v", dim), ("a", dim))
    )
    state = q[None, :]
    for _ in range(iterations):
        st = mech.motion(state)
        residual = np.concatenate([mech.constraints.residual(st)[0][rows], st.p[route.body][0][pkm.axes] - x[pkm.axes]])
        jacobian = np.concatenate(
            [mech.constraints.jacobian(st)[0][rows], mech.body_jacobian(state, pkm.platform)[0][3:][pkm.axes]]
        )
        state = state - mech.backend.solve(jacobian[None], residual[None])
    u = route.inverse_dynamics(state, v[None, :], a[None, :])[0]
    traced = casadi.Function("pkm_general", [q_sx, x_sx, v_sx, a_sx], [to_sx(state[0]), to_sx(u)])
    return native(traced)
