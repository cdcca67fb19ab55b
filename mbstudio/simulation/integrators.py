"""Integrating the compiled engine's state equation y = (q, q̇_ind) (dynamics/engine.py).

Two families, both with the loops closed inside every evaluation:
- scipy's solve_ivp (RK45, DOP853, Radau, BDF): one native call per right-hand side; the implicit methods get
  the exact Jacobian ∂ẏ/∂y from automatic differentiation. Outputs by the integrator's dense output.
- SUNDIALS CVODES through CasADi ("CVODES": Adams–Moulton with fixed-point iteration, for the non-stiff
  motions of most mechanisms; "CVODES-BDF": BDF with Newton on the exact Jacobian, for stiff springs): the
  stepping itself is native, which is where the time went once the right-hand side was compiled. With
  progress or cancel asked for, the run is cut into chunks of output times (2 % of the horizon each), between
  which they are honoured; each chunk integrates over a normalised time τ ∈ [0, 1] with t = t₀ + h τ, so
  equally spaced outputs share one integrator. Where CVODES gives up (near a singular configuration, say),
  DOP853 takes over from the last chunk and either goes on or stops where the motion must.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import casadi
import numpy as np

from ..dynamics.engine import Engine

CVODES = {"CVODES": "adams", "CVODES-BDF": "bdf"}
SCIPY = ("RK45", "DOP853", "Radau", "BDF")
CHUNKS = 50  # progress and cancel points of a CVODES run
# CVODES returns at least this often over a run (at points of its own where the outputs are sparser), and takes at
# most MAX_STEPS steps between two returns: a stall (the Delta's steps where its coordinates lose conditioning)
# is given up after 20 000 steps instead of 200 000 (5 s of its 2-s run), while a smooth run may take a million.
# Each return costs about 1 µs (200 of them were 8 % of a 2-sample run of the SLA)
PIECES = 50
MAX_STEPS = 20_000
STALL_CALLS = 20_000  # scipy: this many evaluations without time advancing by STALL_FRACTION of the run
STALL_FRACTION = 1e-6
CHART_REASON = "the coordinates in use lose conditioning here"


class IntegrationError(RuntimeError):
    """The integrator stopped before the end; `time` and `state` are the last point reached (for CVODES, the
    start of the failing chunk)."""

    def __init__(
        self, reached: float, message: str, state: np.ndarray | None = None, outputs: np.ndarray | None = None
    ) -> None:
        self.time, self.state, self.reason = reached, state, message
        self.outputs = np.empty((0, 0)) if outputs is None else outputs  # the states at the output times reached
        super().__init__(f"the integration stopped at t = {reached:.6g} s: {message}")


def integrate(
    eng: Engine,
    times: np.ndarray,
    y0: np.ndarray,
    method: str,
    rtol: float,
    atol: float,
    checkpoint: Callable[[float], None] | None = None,
    t0: float = 0.0,
    watch=None,
    work_scale: float = 0.0,
) -> tuple[np.ndarray, int, np.ndarray | None]:
    """The states y (K, n + n_ind) at the output times (from t0, the time of y0), the number of right-hand-side
    evaluations, and for `work_scale` > 0 (an energy of the model, J) the work W (K,) of the non-conservative
    forces from t0: the engine's work_rate integrated by CVODES as one more state, W / work_scale, held to the
    same tolerances as the others. None without `work_scale`, from scipy's methods, or where DOP853 took over:
    the caller then integrates the power over the outputs.

    `checkpoint(t)` is called as time advances; it raises to stop the run (cancel). Without one, CVODES runs in one
    piece (each chunk restarts its multistep formula at first order). `watch.margin(t, y)` (simulation/charts.py)
    ends the run with an IntegrationError where it falls below zero: an event of scipy's methods, checked between
    CVODES chunks (and by DOP853 where CVODES gives up).

    An ensemble: y0 (M, n + n_ind) gives states (K, M, n + n_ind). CVODES integrates the M runs as one system
    whose right-hand side is the compiled function mapped over the runs (one native call for all of them);
    scipy's methods integrate them one after the other."""
    y0 = np.asarray(y0, dtype=float)
    if y0.ndim == 2:
        return (*_ensemble(eng, times, y0, method, rtol, atol, checkpoint), None)
    if method in CVODES:
        chunks = CHUNKS if checkpoint else 1
        multistep, checkpoint = CVODES[method], checkpoint or _never
        return _cvodes(
            eng, times, y0, multistep, rtol, atol, checkpoint, chunks, t0=t0, watch=watch, work_scale=work_scale
        )
    return (*_scipy(eng, times, y0, method, rtol, atol, checkpoint, t0, watch), None)


def _ensemble(eng, times, y0, method, rtol, atol, checkpoint) -> tuple[np.ndarray, int]:
    runs, size = y0.shape
    if method not in CVODES:
        results = [_scipy(eng, times, y, method, rtol, atol, checkpoint) for y in y0]
        return np.stack([y for y, _ in results], axis=1), sum(calls for _, calls in results)
    chunks = CHUNKS if checkpoint else 1
    try:
        y, calls, _ = _cvodes(eng, times, y0.ravel(), CVODES[method], rtol, atol, checkpoint or _never, chunks, runs)
    except IntegrationError:  # one run met a singular configuration: find which, each on its own
        return _ensemble(eng, times, y0, "DOP853", rtol, atol, checkpoint)
    return y.reshape(len(times), runs, size), calls


def _scipy(eng, times, y0, method, rtol, atol, checkpoint, t0: float = 0.0, watch=None) -> tuple[np.ndarray, int]:
    from scipy.integrate import solve_ivp  # 0.3 s to import: for the runs that use it

    calls, mark, stalled_at = 0, t0, np.inf

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        """Also notes when the steps have shrunk to nothing (a singular configuration ahead)."""
        nonlocal calls, mark, stalled_at
        calls += 1
        if checkpoint:
            checkpoint(t)
        if calls % STALL_CALLS == 0:
            if t - mark < STALL_FRACTION * times[-1]:
                stalled_at = min(stalled_at, t)
            mark = t
        return eng.ode(t, y)

    def stall(t: float, y: np.ndarray) -> float:
        """A terminal event crossing zero where the stall was noticed, so the outputs reached are kept."""
        return -1.0 if stalled_at == np.inf else t - stalled_at

    stall.terminal = True
    events = [stall] if watch is None else [stall, _terminal(watch.margin)]
    implicit = {"jac": eng.state_jacobian} if method in ("Radau", "BDF") else {}
    solution = solve_ivp(rhs, (t0, times[-1]), y0, method, times, rtol=rtol, atol=atol, events=events, **implicit)
    t, y = np.asarray(solution.t), np.asarray(solution.y)  # lists when the first step already fails
    if solution.status != 0:
        fired = next((k for k, at in enumerate(solution.t_events) if len(at)), None)
        reason = ("the steps shrank to nothing", CHART_REASON)[fired] if fired is not None else solution.message
        last = solution.y_events[fired][0] if fired is not None else (y[:, -1] if t.size else y0)
        reached = solution.t_events[fired][0] if fired is not None else (t[-1] if t.size else t0)
        raise IntegrationError(reached, reason, last, y.T if t.size else np.empty((0, len(y0))))
    return y.T, calls


def _terminal(margin: Callable[[float, np.ndarray], float]) -> Callable[[float, np.ndarray], float]:
    def event(t: float, y: np.ndarray) -> float:
        return margin(t, y)

    event.terminal, event.direction = True, -1
    return event


def _never(t: float) -> None:
    pass


def _cvodes(
    eng, times, y0, multistep, rtol, atol, checkpoint, chunks, runs=1, t0=0.0, watch=None, work_scale=0.0
) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Chunk by chunk from t0; an output at t0 is the initial state itself. `runs` > 1: y0 holds the runs one
    after the other. `work_scale` > 0: the work of the non-conservative forces too, from 0 at t0."""
    out, work = np.empty((len(times), len(y0))), np.zeros(len(times)) if work_scale else None
    first = int(np.searchsorted(times, t0, side="right"))  # outputs at t0
    out[:first] = y0
    y, start, calls, carried = np.asarray(y0, dtype=float), t0, 0, 0.0
    for chunk in np.array_split(np.arange(first, len(times)), min(chunks, len(times) - first) or 1):
        if chunk.size == 0:
            continue
        checkpoint(start)
        span = times[chunk[-1]] - start
        grid, asked = _returns((times[chunk] - start) / span, math.ceil(PIECES * span / (times[-1] - t0)))
        solver = _chunk_integrator(eng, grid, multistep, rtol, atol, runs, work_scale)
        try:
            reached = np.asarray(solver(x0=np.append(y, [0.0] if work_scale else []), p=[start, span])["xf"]).T[asked]
            states = reached[:, : len(y0)]
        except RuntimeError:  # near a singular configuration, say: DOP853 goes on, or stops where it must
            if runs > 1:
                raise IntegrationError(start, "CVODES gave up", y) from None
            try:
                rest, more = _scipy(eng, times[chunk[0] :], y, "DOP853", rtol, atol, checkpoint, start, watch)
            except IntegrationError as error:  # the outputs before the failing chunk are kept too
                reached = np.concatenate([out[: chunk[0]], error.outputs.reshape(-1, len(y0))])
                raise IntegrationError(error.time, error.reason, error.state, reached) from None
            out[chunk[0] :] = rest
            return out, calls + more, None
        calls += int(solver.stats().get("nfevals", 0))
        if work_scale:  # each chunk's integral starts from 0 at its start
            work[chunk] = carried + work_scale * reached[:, -1]
            carried = work[chunk[-1]]
        out[chunk], y, start = states, states[-1], times[chunk[-1]]
        if watch is not None and start < times[-1] and watch.margin(start, y) < 0:
            raise IntegrationError(start, CHART_REASON, y, out[: chunk[-1] + 1])
    return out, calls, work


def _returns(grid: np.ndarray, pieces: int) -> tuple[tuple[float, ...], np.ndarray]:
    """Where CVODES returns on a chunk's normalised grid of outputs: at them and at `pieces` equal steps (rounded,
    so that equal grids hit one cached integrator); and where the outputs lie among the returns."""
    outputs = np.round(grid, 12)
    returns = np.union1d(outputs, np.round(np.linspace(0.0, 1.0, pieces + 1)[1:], 12))
    return tuple(returns), np.searchsorted(returns, outputs)


@functools.lru_cache(maxsize=16)
def _chunk_integrator(
    eng: Engine, grid: tuple[float, ...], multistep: str, rtol: float, atol: float, runs: int, work_scale: float = 0.0
):
    """dy/dτ = h f(t₀ + h τ, y) on the normalised grid; p = (t₀, h). MX symbols call the engine's SX function
    as one node, so building it costs milliseconds whatever the model's size; for an ensemble the function
    is mapped over the runs' columns. `work_scale` > 0: the power of the non-conservative forces over
    `work_scale` as one more state."""
    size = eng.state_size
    tau, y, p = casadi.MX.sym("tau"), casadi.MX.sym("y", size * runs), casadi.MX.sym("p", 2)
    work = casadi.MX.sym("work", int(work_scale > 0))
    if multistep == "adams":
        function = eng.fast_work_rate if work_scale else eng.fast_state_equation
    else:  # BDF differentiates it
        function = eng.work_rate if work_scale else eng.state_equation
    mapped = function.map(runs) if runs > 1 else function
    states = casadi.reshape(y, size, runs)
    outputs = mapped(p[0] + p[1] * tau, states, casadi.DM.zeros(eng.n))
    y_dot = casadi.reshape(outputs[0], size * runs, 1)
    options = {
        "reltol": rtol,
        "abstol": atol,
        "linear_multistep_method": multistep,
        "nonlinear_solver_iteration": "functional" if multistep == "adams" else "newton",
        "max_num_steps": MAX_STEPS,
    }
    # the work as one more state, not as CVODES' quadrature: CasADi evaluates a quadrature's right-hand side in a
    # call of its own, which cost the vehicle's drive 60 % more; scaled to the model's energies, so that its error
    # test asks no more of it than of the coordinates (in joules the vehicle's steps were 9 % more)
    rate = casadi.vertcat(y_dot, outputs[1] / work_scale) if work_scale else y_dot
    dae = {"t": tau, "x": casadi.vertcat(y, work), "p": p, "ode": p[1] * rate}
    return casadi.integrator("chunk", "cvodes", dae, 0.0, list(grid), options)
