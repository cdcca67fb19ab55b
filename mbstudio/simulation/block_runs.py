"""Time simulation of a block model (Alazard et al. 2024, section 4): the state is each floating base's
[x'_P; [IP]_b; Θ] (12), each
joint channel's (q, q̇), and the work W_nc of the loads beyond their potentials, integrated alongside so that the
energy balance E(t) − W_nc(t) = E(0) holds to the integrator's tolerance.

The right-hand side — the loads, the algebraic loop solved exactly, eq. (30) — is traced once on CasADi symbols
(numerics/compiled.py) and compiled, then stepped by scipy's solve_ivp (the implicit methods with the exact
Jacobian); `compiled=False` evaluates the same function in numpy, the reference.

    run = simulate_blocks(samples.load("balloon"), 10.0, method="DOP853", rtol=1e-12, atol=1e-12)
    run.q, run.columns()     # the document's coordinates, and the series named as a simulation's
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

import casadi
import numpy as np
from scipy.integrate import solve_ivp

from .. import __version__
from ..dynamics.titop import invariants
from ..dynamics.titop.euler import check_gimbal
from ..dynamics.titop.floating_base import BaseState, state_rates
from ..dynamics.titop.from_document import block_model
from ..dynamics.titop.interconnection import BlockModel
from ..dynamics.titop.states import BlockState
from ..kinematics.mechanism import Mechanism
from ..model import Model, dumps
from ..model.errors import ModelError
from ..model.hashing import model_hash
from ..numerics.compiled import FastCall, Traced, native, symbols, to_sx
from .integrators import SCIPY
from .monitors import monitor_columns
from .run import Clock, motion_columns

NEAR_GIMBAL = 1e-3  # |cos θ| where an integrator that gave up was stopped by the gimbal lock


class Layout:
    """Where each part of the state sits in y (N, size): the bases' 12, then q, q̇, then W_nc."""

    def __init__(self, model: BlockModel) -> None:
        self.bases, self.channels = len(model.floating), len(model.channels)
        self.size = 12 * self.bases + 2 * self.channels + 1

    def state(self, y: np.ndarray) -> BlockState:
        bases = tuple(
            BaseState(y[:, 12 * i : 12 * i + 6], y[:, 12 * i + 6 : 12 * i + 9], y[:, 12 * i + 9 : 12 * i + 12])
            for i in range(self.bases)
        )
        start = 12 * self.bases
        return BlockState(
            y[:, start : start + self.channels], y[:, start + self.channels : start + 2 * self.channels], bases
        )

    def pack(self, state: BlockState) -> np.ndarray:
        """y (N, size) of a state, with W_nc = 0."""
        parts = [x for base in state.bases for x in (base.tw, base.pos, base.euler)]
        return np.concatenate([*parts, state.q, state.qd, np.zeros((state.samples, 1))], axis=-1)

    def theta(self, i: int) -> int:
        """The index of base i's θ in y."""
        return 12 * i + 10


def state_derivative(model: BlockModel, t, y: np.ndarray, solver: str = "condensed") -> np.ndarray:
    """ẏ (N, size) of states y (N, size): the bases' [xdot'_P; eq. (30)], the channels' (q̇, q̈), and P_nc."""
    layout = Layout(model)
    state = layout.state(y)
    acc = model.forward_dynamics(state, t, solver)
    kin = model.kinematics(state)
    rates = [state_rates(base, model.backend) for base in state.bases]
    parts = [x for a, (pos_dot, euler_dot) in zip(acc.bases, rates, strict=True) for x in (a, pos_dot, euler_dot)]
    power = invariants.nonconservative_power(model, t, state, kin)
    return np.concatenate([*parts, state.qd, acc.qdd, np.asarray(power)[..., None]], axis=-1)


@dataclass
class BlockRun:
    """A block model's motion at the output times: the coordinates (K, n) in `coordinates` order (a free joint's
    x, y, z, ψ, θ, φ), the block states y (K, size), energies, the work W_nc of the loads beyond their
    potentials, centre of mass and momenta, and where the run came from."""

    t: np.ndarray
    coordinates: list[str]
    units: list[str]
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    y: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    work: np.ndarray
    com: np.ndarray
    momentum: np.ndarray
    angular_momentum: np.ndarray  # about the centre of mass
    provenance: dict

    @property
    def total(self) -> np.ndarray:
        return self.kinetic + self.potential

    def columns(self) -> list[tuple[str, str, np.ndarray]]:
        """The series as (name, unit, values), named as a general simulation's (simulation/run.py and
        monitors.py), so that one can be taken from the other; the dissipated energy is −W_nc."""
        out = motion_columns(
            self.t, self.coordinates, self.units, (self.q, self.qd, self.qdd), self.kinetic, self.potential
        )
        return out + monitor_columns(self.com, self.momentum, self.angular_momentum, self.total, -self.work)


def simulate_blocks(
    model: Model | BlockModel,
    t_end: float,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-12,
    samples: int = 201,
    t_eval: np.ndarray | None = None,
    initial: tuple[np.ndarray, np.ndarray] | None = None,
    velocities: np.ndarray | None = None,
    solver: str = "condensed",
    closure_frequency: float | None = None,
    progress: Callable[[float], None] | None = None,
    cancel=None,
    compiled: bool = True,
) -> BlockRun:
    """Integrate a block model over [0, t_end]. From a document: its blocks, from its assembled initial pose at
    the independent velocities given (default rest). From a BlockModel: `initial` = (q, q̇) in its coordinate
    order. scipy's RK45, DOP853 (default), Radau or BDF (these two with the exact Jacobian, for stiff loop
    closures). Raises ModelError at a floating base's gimbal lock, RuntimeError when the integrator stops."""
    if method not in SCIPY:
        raise ValueError(f"unknown integration method {method!r} for a block model; choose one of {', '.join(SCIPY)}")
    start = time.perf_counter()
    blocks, traced, y0, source = _prepared(model, initial, velocities, closure_frequency)
    _check_start(blocks, y0)
    rhs = _right_hand_side(traced, solver, compiled, blocks)
    times = np.linspace(0.0, t_end, samples) if t_eval is None else np.asarray(t_eval, dtype=float)
    clock = Clock(times[-1], progress, cancel)
    events = [_gimbal_event(Layout(blocks).theta(i)) for i in range(len(blocks.floating))]
    implicit = {"jac": _jacobian(traced, solver)} if method in ("Radau", "BDF") else {}

    reached = [y0]  # the last state evaluated: where a failing integrator was

    def derivative(t: float, y: np.ndarray) -> np.ndarray:
        clock(t)  # progress, and Cancelled when asked
        reached[0] = y
        return rhs(t, y)

    solution = solve_ivp(
        derivative, (0.0, times[-1]), y0, method, times, events=events or None, rtol=rtol, atol=atol, **implicit
    )
    _check_end(blocks, solution, reached[0])
    if progress is not None:
        progress(1.0)
    provenance = {
        "model_hash": source,
        "method": method,
        "rtol": rtol,
        "atol": atol,
        "solver": solver,
        "closure_frequency": closure_frequency,
        "seconds": time.perf_counter() - start,
        "rhs_evaluations": int(solution.nfev),
        "version": __version__,
    }
    return run_series(blocks, solution.t, solution.y.T, solver, provenance)


def _prepared(model, initial, velocities, closure_frequency):
    """(float64 blocks, traced blocks, y0, the model's hash or 'blocks') for a document or a BlockModel."""
    if isinstance(model, BlockModel):
        if initial is None:
            raise ModelError("initial", "a block model built in Python needs its initial state", None, "(q, q̇)")
        traced = BlockModel(model.blocks, model.gravity, model.loads, Traced(), model.name)
        q, qd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in initial)
        return model, traced, Layout(model).pack(model.from_coordinates(q, qd))[0], "blocks"
    mech = Mechanism(model)
    blocks = block_model(mech, closure_frequency=closure_frequency)
    traced = _traced_document(dumps(model), closure_frequency)
    q = mech.assemble(None)
    v = np.zeros((1, len(mech.independent))) if velocities is None else np.atleast_2d(velocities)
    qd = (mech.r_matrix(q) * v[:, None, :]).sum(axis=2)
    order = [mech.coordinates.index(name) for name in blocks.coordinates]
    state = blocks.from_coordinates(q[:, order], qd[:, order])
    return blocks, traced, Layout(blocks).pack(state)[0], model_hash(model)


@functools.lru_cache(maxsize=8)
def _traced_document(text: str, closure_frequency: float | None) -> BlockModel:
    from ..model import loads

    return block_model(Mechanism(loads(text), backend=Traced()), closure_frequency=closure_frequency)


def _right_hand_side(traced: BlockModel, solver: str, compiled: bool, blocks: BlockModel):
    if not compiled:
        return lambda t, y: state_derivative(blocks, t, y[None, :], solver)[0]
    call = FastCall(native(_traced_function(traced, solver)))
    return lambda t, y: call(t, y)[0]


def compiled_right_hand_side(
    model: Model, solver: str = "condensed", closure_frequency: float | None = None
) -> Callable[[float, np.ndarray], np.ndarray]:
    """ẏ(t, y) of a document's block model as simulate_blocks evaluates it: traced and compiled once per model
    revision and solve (for scripts and `mbstudio bench`)."""
    return _right_hand_side(_traced_document(dumps(model), closure_frequency), solver, True, None)


@functools.lru_cache(maxsize=16)
def _traced_function(traced: BlockModel, solver: str) -> casadi.Function:
    """(t, y) -> ẏ on CasADi symbols, once per block model and solver."""
    y_sx, y = symbols("y", Layout(traced).size)
    t = casadi.SX.sym("t")
    y_dot = state_derivative(traced, np.array([t], dtype=object), y[None, :], solver)[0]
    return casadi.Function("titop_rhs", [t, y_sx], [to_sx(y_dot)], ["t", "y"], ["y_dot"])


def _jacobian(traced: BlockModel, solver: str):
    """∂ẏ/∂y, exact from the traced graph and compiled, for the implicit methods (stiff loop closures)."""
    f = _traced_function(traced, solver)
    t, y = casadi.SX.sym("t"), casadi.SX.sym("y", f.size1_in(1))
    call = FastCall(native(casadi.Function("titop_jacobian", [t, y], [casadi.densify(casadi.jacobian(f(t, y), y))])))
    n = f.size1_in(1)
    return lambda t_, y_: call(t_, y_)[0].reshape((n, n), order="F")


def _gimbal_event(index: int):
    """cos θ of a floating base: it changes sign where θ crosses ±90° (the integrated θ is continuous)."""

    def event(t, y):
        return np.cos(y[index])

    event.terminal = True
    return event


def _check_start(blocks: BlockModel, y0: np.ndarray) -> None:
    layout = Layout(blocks)
    for i, k in enumerate(blocks.floating):
        joint = blocks.blocks[k].joint
        check_gimbal(y0[layout.theta(i)], joint.name, joint.coordinates[4], "at the start")


def _check_end(blocks: BlockModel, solution, last: np.ndarray) -> None:
    """A ModelError at a gimbal lock (an event, or an integrator that gave up next to one), a RuntimeError when
    the integrator stopped for another reason."""
    layout = Layout(blocks)
    for i, k in enumerate(blocks.floating):
        joint = blocks.blocks[k].joint
        if solution.status == 1 and len(solution.t_events[i]):
            lock = np.copysign(np.pi / 2, np.sin(solution.y_events[i][0][layout.theta(i)]))  # θ = ±90° there
            check_gimbal(lock, joint.name, joint.coordinates[4], f"at t = {solution.t_events[i][0]:.6g} s")
        if solution.status == -1 and abs(np.cos(last[layout.theta(i)])) < NEAR_GIMBAL:
            reached = solution.t[-1] if solution.t.size else 0.0
            check_gimbal(np.pi / 2, joint.name, joint.coordinates[4], f"after t = {reached:.6g} s")
    if not solution.success:
        reached = solution.t[-1] if solution.t.size else 0.0
        raise RuntimeError(f"the integration stopped at t = {reached:.6g} s: {solution.message}")


def run_series(blocks: BlockModel, t: np.ndarray, y: np.ndarray, solver: str, provenance: dict) -> BlockRun:
    """Every output series from the integrated states y (K, size), in float64, by the block route."""
    layout = Layout(blocks)
    state = layout.state(y)
    kin = blocks.kinematics(state)
    acc = blocks.forward_dynamics(state, t, solver)
    q, qd = blocks.to_coordinates(state)
    com = invariants.centre_of_mass(blocks, kin)
    linear, angular = invariants.momentum(blocks, kin)
    units = ["m" if blocks.is_translation(name) else "rad" for name in blocks.coordinates]
    return BlockRun(
        t,
        list(blocks.coordinates),
        units,
        q,
        qd,
        blocks.accelerations_to_coordinates(state, acc),
        y,
        invariants.kinetic_energy(blocks, kin),
        invariants.potential_energy(blocks, state, kin),
        y[:, -1],
        com,
        linear,
        angular - np.cross(com, linear),
        provenance,
    )
