"""Integrating the compiled engine's state equation y = (q, q̇_ind) (dynamics/engine.py).

Two families, both with the loops closed inside every evaluation:
- scipy's solve_ivp (RK45, DOP853, Radau, BDF): one native call per right-hand side; the implicit methods get
  the exact Jacobian ∂ẏ/∂y from automatic differentiation. Outputs by the integrator's dense output.
- SUNDIALS CVODES, from our own compiled driver (cvodes_driver.py: Adams) or through CasADi's
  integrator (BDF, or where the driver cannot be had) ("CVODES": Adams–Moulton with fixed-point
  iteration, for the non-stiff motions of most mechanisms; "CVODES-BDF": BDF with Newton on the exact Jacobian,
  for stiff springs): the stepping itself is native, which is where the time went once the right-hand side was
  compiled. The run is cut
  into pieces at fixed times of [0, t_end] (a grid of CHUNKS), whatever the caller asks for, so that a run with
  progress and cancel (the window, the command line) computes the same as one without (Python): the first piece
  spans one interval of the grid, and each next one as many as the steps of the last suggest for about
  STEPS_PER_PIECE steps, so that a short or smooth run is a few pieces (each piece restarts the multistep
  formula and costs a call: 22 of them were most of a 1e-9-s run's cost and a third of a 2-s four-bar's steps)
  while a long one still reports its progress every few thousand steps. Each piece integrates over a normalised
  time τ ∈ [0, 1] with t = t₀ + h τ, so that equal pieces share one integrator. Where CVODES gives up in a piece
  (near a singular configuration, say), DOP853 integrates that piece, or near a crossing of one (crossing.py) CVODES
  in parts (`_Parts`), and either goes on or stops where the motion must.
A model with contact pairs is first cut into legs none of which can step over a touch-down (contact_watch.py).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator

import casadi
import numpy as np

from ..dynamics.engine import Engine
from ..dynamics.stiff_jacobian import stiff_rhs
from .contact_watch import pair_watch
from .serial_integrator import SerialIntegrator

CVODES = {"CVODES": "adams", "CVODES-BDF": "bdf"}
SCIPY = ("RK45", "DOP853", "Radau", "BDF")
# Every CVODES run is cut at the same fixed times, whether progress or cancel is asked for or not (each piece
# restarts the multistep formula, so the pieces are part of what the run computes, never of how it is started):
# pieces of whole intervals of a grid of CHUNKS on [0, t_end], as many as the last piece's steps suggest for
# STEPS_PER_PIECE (a count of the computation, so the same in any process), between which progress and cancel are
# honoured. Within them CVODES returns at CHECKS equal points of [0, t_end] (and at the outputs), where the
# coordinates' conditioning is checked (charts.py), and takes at most a number of steps between two returns set by
# the run's own history (`StepLimit`): a stall is given up after a few times the work the motion has needed
CHUNKS = 20
STEPS_PER_PIECE = 2000
CHECKS = 200
MAX_STEPS = 20_000
PACE = 16  # CVODES may take this many times (to twice, rounded up) the most steps per return of the pieces so far ...
FLOOR_STEPS = 1024  # ... and at least this many between two returns
SMALLEST_STEP = 1e-6  # of a piece near crossings, or a part (_Parts): its steps shrink below it where it stalls
HALVINGS = 12  # ... and parts are halved down to 2^-HALVINGS of the piece
FINE = 64  # points a check interval: where a watch's fall between two points watched is placed (`_Parts.root`)
EARLY = 16  # a closed loop's piece with more check points is watched as CVODES returns them, after this many (`_Early`)
GROWTH = 2  # ... and after GROWTH times as many again. Each watch costs a run ~0.15 ms (a 0.01-s SLA run: 2.55 ms
# so, 2.30 at four times, 1.97 unwatched), but it ends a falling piece early (the linear Delta's 2 s: 9 216 evaluations
# so, 11 693 at four times, 14 313 unwatched)
STALL_CALLS = 20_000  # scipy: this many evaluations without time advancing by STALL_FRACTION of the run
STALL_FRACTION = 1e-6
CHART_REASON = "the coordinates in use lose conditioning here"
# BDF's Newton iterations stop where their estimated error is below this fraction of the step's error test (SUNDIALS'
# default 0.1): with a tenth, iterates short of convergence passed on solo12's trot, whose error at t = 2 s from an
# rtol-1e-10 run was 1e-5 (median of seven runs about rtol 1e-6) and 7e-5 with the Newton Jacobian of trees
# (dynamics/stiff_jacobian.py); with a hundredth 2e-6, for 8 % more evaluations
BDF_CONVERGENCE = 0.01
CROSSING_REASON = "the loop equations lose rank here"
_DRIVER = [True]  # False inside `through_casadi()`


class IntegrationError(RuntimeError):
    """The integrator stopped before the end; `time` and `state` are the last point reached (for CVODES, the
    start of the failing piece)."""

    def __init__(
        self,
        reached: float,
        message: str,
        state: np.ndarray | None = None,
        outputs: np.ndarray | None = None,
        calls: int = 0,
    ) -> None:
        self.time, self.state, self.reason = reached, state, message
        self.calls = calls  # the right-hand-side evaluations made up to the stop
        self.outputs = np.empty((0, 0)) if outputs is None else outputs  # the states at the output times reached
        super().__init__(f"the integration stopped at t = {reached:.6g} s: {message}")


class StepLimit:
    """The most steps CVODES may take between two returns in a run's next piece. Where the coordinates in use turn
    singular between two check points CVODES cannot stop there, and stalls until this limit (then DOP853 takes the
    piece, or near a crossing CVODES in parts, `_Parts`, and the watch decides); 20 000 steps of such a stall cost the
    Delta 0.4 s each. So the limit is MAX_STEPS only until a piece has been integrated, then PACE times the most steps
    per return of any piece of the run (its steps over its intervals between check points), rounded up to a power of
    two (so 16 to 32 times), at least FLOOR_STEPS: a piece's first return, after the restart, takes a few times the
    mean (up to 8 on the Delta's short pieces); at 8 to 16 times, at least 512, the vehicle's 10-s drive gave a piece
    up to DOP853 (0.72 s of CPU, not 0.15), while the Deltas ran no faster (their stalls end by SMALLEST_STEP). A piece
    that runs into the limit is not lost: CVODES integrates it again up to the last check point it had passed
    (`StepLimit.stalled`). It follows the run's own history, never the machine's or the entry point's, so it is the same
    however the run is started; it only grows, so that it takes few values (each its own integrator)."""

    def __init__(self) -> None:
        self.most = 0.0
        # (engine, time) where CVODES's steps last stalled with that engine's coordinates (or the end of the piece
        # where it gave up, where that is unknown): the run's pieces with them end at a check point before it, and
        # the one with it is integrated in parts or by DOP853 (where the watch stopped DOP853 inside it and the run
        # resumed with the same coordinates too), where CVODES would stall again
        self.stalled: tuple[Engine, float] | None = None

    def steps(self) -> int:
        if not self.most:
            return MAX_STEPS
        return min(MAX_STEPS, max(FLOOR_STEPS, 1 << (math.ceil(PACE * self.most) - 1).bit_length()))

    def taken(self, steps: int, returns: int) -> None:
        self.most = max(self.most, steps / max(returns, 1))


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
    limit: StepLimit | None = None,
) -> tuple[np.ndarray, int, np.ndarray | None]:
    """The states y (K, n + n_ind) at the output times (from t0, the time of y0), the number of right-hand-side
    evaluations, and for `work_scale` > 0 (an energy of the model, J) the work W (K,) of the non-conservative
    forces from t0: the engine's work_rate integrated by CVODES as one more state, W / work_scale, held to the
    same tolerances as the others. None without `work_scale`, from scipy's methods, or where DOP853 took over:
    the caller then integrates the power over the outputs.

    `checkpoint(t)` is called as time advances; it raises to stop the run (cancel); it changes nothing computed.
    `watch.margin(t, y)` (simulation/charts.py) ends the run with an IntegrationError where it falls below zero: an
    event of scipy's methods, checked at the fixed check points of a CVODES run (and by DOP853 where CVODES gives
    up). The error's `calls` counts the evaluations up to there. `limit`: the run's step limit, carried over the
    calls of one run; without it MAX_STEPS throughout (a tree: no coordinates turn singular between check points).

    An ensemble: y0 (M, n + n_ind) gives states (K, M, n + n_ind). CVODES integrates the M runs as one system
    whose right-hand side is the compiled function mapped over the runs (one native call for all of them);
    scipy's methods integrate them one after the other."""
    y0 = np.asarray(y0, dtype=float)
    checkpoint = checkpoint or _never
    if y0.ndim == 2:
        return (*_ensemble(eng, times, y0, method, rtol, atol, checkpoint), None)
    pairs = pair_watch(eng)  # a model with contact pairs: cut into legs that cannot step over a touch-down
    if pairs is not None:

        def leg(at: np.ndarray, y: np.ndarray, start: float, watched: bool) -> tuple:
            chart = watch if watched else None  # the root's trials go unwatched
            return _single(eng, method, rtol, atol, checkpoint, at, y, start, chart, work_scale, limit)

        return pairs.integrate(leg, times, y0, t0, IntegrationError)
    return _single(eng, method, rtol, atol, checkpoint, times, y0, t0, watch, work_scale, limit)


def _single(eng, method, rtol, atol, checkpoint, times, y0, t0, watch, work_scale, limit):
    """One run of `integrate`'s, from y0 at t0 to times[-1]."""
    if method in CVODES:
        multistep = CVODES[method]
        return _cvodes(
            eng, times, y0, multistep, rtol, atol, checkpoint, t0=t0, watch=watch, work_scale=work_scale, limit=limit
        )
    return (*_scipy(eng, times, y0, method, rtol, atol, checkpoint, t0, watch), None)


def _ensemble(eng, times, y0, method, rtol, atol, checkpoint) -> tuple[np.ndarray, int]:
    runs, size = y0.shape
    if method not in CVODES:
        results = [_scipy(eng, times, y, method, rtol, atol, checkpoint) for y in y0]
        return np.stack([y for y, _ in results], axis=1), sum(calls for _, calls in results)
    try:
        y, calls, _ = _cvodes(eng, times, y0.ravel(), CVODES[method], rtol, atol, checkpoint, runs)
    except IntegrationError:  # one run met a singular configuration: find which, each on its own
        return _ensemble(eng, times, y0, "DOP853", rtol, atol, checkpoint)
    return y.reshape(len(times), runs, size), calls


def _scipy(
    eng, times, y0, method, rtol, atol, checkpoint, t0: float = 0.0, watch=None, t_end: float = 0.0
) -> tuple[np.ndarray, int]:
    """`t_end`: the run's end, where `times` end a piece of it (the stall's measure is a fraction of the run)."""
    from scipy.integrate import solve_ivp  # 0.3 s to import: for the runs that use it

    calls, mark, stalled_at = 0, t0, np.inf
    # the native calls take contiguous float64 only: a state handed over from a CVODES piece may be a strided view
    y0 = np.ascontiguousarray(y0, dtype=float)

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        """Also notes when the steps have shrunk to nothing (a singular configuration ahead)."""
        nonlocal calls, mark, stalled_at
        calls += 1
        if checkpoint:
            checkpoint(t)
        if calls % STALL_CALLS == 0:
            if t - mark < STALL_FRACTION * (t_end or times[-1]):
                stalled_at = min(stalled_at, t)
            mark = t
        return eng.ode(t, np.ascontiguousarray(y, dtype=float))

    def stall(t: float, y: np.ndarray) -> float:
        """A terminal event crossing zero where the stall was noticed, so the outputs reached are kept."""
        return -1.0 if stalled_at == np.inf else t - stalled_at

    stall.terminal = True
    events = [stall] if watch is None else [stall, _terminal(watch.margin)]

    def jacobian(t: float, y: np.ndarray) -> np.ndarray:
        return eng.state_jacobian(t, np.ascontiguousarray(y, dtype=float))

    implicit = {"jac": jacobian} if method in ("Radau", "BDF") else {}
    solution = solve_ivp(rhs, (t0, times[-1]), y0, method, times, rtol=rtol, atol=atol, events=events, **implicit)
    t, y = np.asarray(solution.t), np.asarray(solution.y)  # lists when the first step already fails
    if solution.status != 0:
        fired = next((k for k, at in enumerate(solution.t_events) if len(at)), None)
        reason = ("the steps shrank to nothing", CHART_REASON)[fired] if fired is not None else solution.message
        last = solution.y_events[fired][0] if fired is not None else (y[:, -1] if t.size else y0)
        reached = solution.t_events[fired][0] if fired is not None else (t[-1] if t.size else t0)
        raise IntegrationError(reached, reason, last, y.T if t.size else np.empty((0, len(y0))), calls)
    return y.T, calls


def _terminal(margin: Callable[[float, np.ndarray], float]) -> Callable[[float, np.ndarray], float]:
    def event(t: float, y: np.ndarray) -> float:
        return margin(t, y)

    event.terminal, event.direction = True, -1
    return event


def _never(t: float) -> None:
    pass


def _cvodes(
    eng, times, y0, multistep, rtol, atol, checkpoint, runs=1, t0=0.0, watch=None, work_scale=0.0, limit=None
) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Piece by piece from t0 (`_piece`); an output at t0 is the initial state itself. `runs` > 1: y0 holds the
    runs one after the other. `work_scale` > 0: the work of the non-conservative forces too, from 0 at t0. The
    evaluations of a piece CVODES gave up are counted too: those of its returns before (CasADi reports them) and
    those of the interval where it gave up (`evaluations_lost`). `limit`: the run's StepLimit (MAX_STEPS without).
    `watch`: an IntegrationError at the first check point where its margin is below zero, with the outputs up to
    there."""
    out, work = np.empty((len(times), len(y0))), np.zeros(len(times)) if work_scale else None
    done = int(np.searchsorted(times, t0, side="right"))  # outputs at t0
    out[:done] = y0
    y, start, calls, carried, span = np.asarray(y0, dtype=float), t0, 0, 0.0, 1
    try:
        while start < times[-1]:
            watched = _watched_span(watch, span)
            closely = not watched and _watched_closely(watch, limit)  # a cautious piece, on past its check points
            end, checks = _watched_until(watch, start, *_piece(start, times[-1], int(closely) or watched), times[-1])
            end, checks, again = _short_of_stall(limit, eng, start, end, checks, times[-1])
            checkpoint(start)
            upto = int(np.searchsorted(times, end, side="right"))
            marks, outputs, checked = _returns(times[done:upto], checks, start, end)
            near, fine = bool(limit and watch is not None and watch.crossings), None
            # once the run has crossed, a cautious piece (one check interval, or one watched at each: near the next
            # crossing) returns at the fine grid's points too (a longer one's stall is placed at its check points)
            if near and watch.crossed and (len(checks) <= 1 or closely):
                marks, outputs, checked, fine = _finer(marks, outputs, checked, start, end, times[-1])
            chunk = functools.partial(_chunk_integrator, eng, marks, multistep, rtol, atol, runs, work_scale)
            if near:  # a stall near crossings ends within a few steps
                chunk = functools.partial(chunk, smallest=SMALLEST_STEP)
            x0 = np.append(y, [0.0] if work_scale else [])
            returned_at = start + (end - start) * np.asarray(marks)  # the times of CVODES' returns
            early = None
            if closely or _early(watch, limit, checked):
                early = _Early(watch, checked, returned_at[checked], len(y0), every=closely)
            try:
                if again:
                    raise _GaveUp(0, limit.stalled[1])
                solver, reached, tried = _solved(chunk, _limits(limit), x0, [start, end - start], early)
                stats = solver.stats()
                calls += tried + int(stats.get("nfevals", 0))
            except _GaveUp as failure:  # near a singular configuration, say: integrated in parts, or by DOP853
                calls += failure.calls
                if runs > 1:
                    raise IntegrationError(start, "CVODES gave up", y) from None
                if limit and not again and start < failure.stalled < end:  # cut short of the stall, from the start
                    limit.stalled = (eng, failure.stalled)
                    cut = _before_stall(failure, returned_at, checks, times[-1])
                    if cut is None:  # integrated again up to the last check point before it
                        continue
                elif limit and watch is not None and watch.crossings:  # near crossings: in parts, watched at their ends
                    parts = _Parts(eng, times, out, (multistep, rtol, atol), checkpoint, watch, limit)
                    y, more, start, done = parts.integrate(done, start, end, y, failure.stalled)
                    calls, work, span = calls + more, None, int(start == end)
                    continue
                else:
                    if limit and not again:  # where it stalled unknown: CVODES would stall again in the piece
                        limit.stalled = (eng, end)
                    piece = (times[done:upto], end, y, start, out[:done])
                    rest, more = _dop853_piece(eng, piece, rtol, atol, checkpoint, watch, times[-1])
                    out[done:upto], y, calls, work = rest[: upto - done], rest[-1], calls + more, None
                    start, done, span = end, upto, 1
                    continue
                # the piece up to the last check point before the stall, as CVODES returned it there
                end, reached, stats = cut
                checks = checks[checks <= end + 1e-12 * times[-1]]
                upto = int(np.searchsorted(times, end, side="right"))
                outputs, checked = outputs[: upto - done], checked[: len(checks)]
            intervals = 1 + int(np.count_nonzero(checks < end - 1e-12 * times[-1]))  # between its check points
            if early is not None and (early.fall is not None or early.error):  # ended where the watch fell
                intervals = max(1, int(np.count_nonzero(checked < len(reached))))
            span = _next_span(int(stats.get("nsteps", 0)), (end - start) * CHUNKS / times[-1])
            if limit:  # per interval between check points (the outputs asked for change nothing computed)
                limit.taken(int(stats.get("nsteps", 0)), intervals)
            states = np.ascontiguousarray(reached[:, : len(y0)])
            made = int(np.count_nonzero(outputs < len(states)))  # all, but where the watch ended the piece early
            out[done : done + made] = states[outputs[:made]]
            if work is not None:  # each piece's integral starts from 0 at its start
                work[done : done + made] = carried + work_scale * reached[outputs[:made], -1]
            if watch is not None:
                checked = checked[checked < len(states)]
                at = returned_at[checked]
                fall = _first_fall(watch, at, states[checked]) if early is None else early.rest(at, states[checked])
                if fall is not None and watch.fell == "near":
                    # near a crossing: the run goes on from that check point, watched more closely (crossing.py)
                    if work is not None:
                        carried += work_scale * reached[checked[fall], -1]
                    y, start = states[checked][fall], at[fall]
                    done, span = int(np.searchsorted(times, start, side="right")), 0
                    continue
                if fall is not None:
                    parts = (
                        _Parts(eng, times, out, (multistep, rtol, atol), checkpoint, watch, limit) if limit else None
                    )
                    fine = None if fine is None else fine[fine < len(states)]
                    grid = None if fine is None else (returned_at[fine], states[fine])
                    _stop(watch, fall, at, states[checked], (start, y), parts, (times, out), grid)
            if work is not None:
                carried += work_scale * reached[-1, -1]
            y, start, done = states[-1], end, upto
    except IntegrationError as error:
        error.calls += calls
        raise
    return out, calls, work


def _first_fall(watch, at: np.ndarray, states: np.ndarray) -> int | None:
    """The watch's first fall among the check points (times `at`, states), going on past each fall of the chart
    where the watch keeps its coordinates without a restart (`watch.kept`: near crossings, a decision that can only
    keep them)."""
    fall = watch.first_fall(at, states)
    while fall is not None and watch.fell == "chart" and watch.kept(at[fall], states[fall]):
        more = watch.first_fall(at[fall + 1 :], states[fall + 1 :])
        fall = None if more is None else fall + 1 + more
    return fall


def _early(watch, limit: StepLimit | None, checked: np.ndarray) -> bool:
    """Whether a piece is watched as CVODES returns (`_Early`): a closed loop's (the crossings' watch), far from
    crossings (near them its pieces are short), with more than EARLY check points, through our driver."""
    closed = watch is not None and getattr(watch, "start", None) is not None
    return bool(closed and limit and not watch.crossings and len(checked) > EARLY and _DRIVER[0])


def _watched_closely(watch, limit: StepLimit | None) -> bool:
    """Whether a cautious piece (`_watched_span` 0) of a run that has crossed goes on to the end of the grid's
    interval, watched at each of its check points as CVODES returns them (`_Early`), rather than ending at the first:
    after a crossing the rank value is watched rising for three check points, and on the way to the next one
    falling, each point a restart of Adams' formula at order one (about 50 evaluations a check interval where the
    run's own pace is 10: the free Delta's 2 s made 9 394, 8 695 so). Not while near a crossing (the watch may then
    end the piece before its next check point: crossing.py's `until`)."""
    return bool(limit and watch is not None and getattr(watch, "crossed", False) and not watch.near)


class _Early:
    """A long piece's check points watched as CVODES returns them: after its EARLY-th, and after each GROWTH times as
    far on, the points returned since are handed to the watch (`_first_fall`, as after the piece), and where it falls
    CVODES ends the piece there, not integrating the rest in vain (the Delta 3R[2US]'s piece from 0.02 to 1 s, its
    watch falling near a crossing at 0.24 s: 800 evaluations). The same states (CVODES' steps up to there are the
    piece's, its stop time the same) and the same decisions (the watch decides at each point alone). `every`: after
    each check point (`_watched_closely`)."""

    def __init__(self, watch, checked: np.ndarray, at: np.ndarray, size: int, every: bool = False) -> None:
        self.watch, self.checked, self.at, self.size = watch, checked, at, size
        self.seen, self.fall = 0, None  # check points handed to the watch; where it fell among them
        self.error: Exception | None = None  # what the watch raised, raised again where it decides (`rest`)
        batches = np.arange(CHECKS) if every else EARLY * GROWTH ** np.arange(8) - 1  # more than CHECKS
        self.batches = checked[batches[batches < len(checked) - 1]]  # the returns after which it is watched

    def watch_of(self, solver) -> dict:
        """The keyword of our driver's piece (`cvodes_driver.Piece`) that watches it; none for CasADi's."""
        from .cvodes_driver import Piece, Watch

        return {"watch": Watch(self.batches, self.check)} if isinstance(solver, Piece) else {}

    def check(self, returned: np.ndarray) -> bool:
        """Whether the watch falls at the check points among the states `returned` not handed to it yet."""
        upto = int(np.searchsorted(self.checked, len(returned)))
        if upto <= self.seen:  # handed over already (a try before at a lower step limit)
            return False
        states = np.ascontiguousarray(returned[self.checked[self.seen : upto], : self.size])
        try:
            fall = _first_fall(self.watch, self.at[self.seen : upto], states)
        except Exception as error:  # noqa: BLE001 - not through CVODES (a RuntimeError there is a give-up)
            self.error = error
            return True
        if fall is not None:
            self.fall = self.seen + fall
        self.seen = upto
        return fall is not None

    def rest(self, at: np.ndarray, states: np.ndarray) -> int | None:
        """The fall among the piece's check points (times `at`, states): where the watch fell while CVODES returned,
        else among those not handed to it yet."""
        if self.error is not None:
            raise self.error
        if self.fall is not None:
            return self.fall
        fall = _first_fall(self.watch, at[self.seen :], states[self.seen :])
        return None if fall is None else self.seen + fall


class _GaveUp(RuntimeError):
    """CVODES gave up in a piece, after `calls` evaluations, where its steps had reached time `stalled` (inf where
    unknown), with the states at its returns before (`returned`, or None) and its counts there (`stats`)."""

    def __init__(self, calls: int, stalled: float = math.inf, returned=None, stats: dict | None = None) -> None:
        self.calls, self.stalled = calls, stalled
        self.returned, self.stats = returned, stats or {}  # the states at the returns made, the counts there
        super().__init__(f"CVODES gave up after {calls} evaluations")


def _before_stall(failure: _GaveUp, returned_at: np.ndarray, checks: np.ndarray, t_end: float):
    """Where CVODES gave up in a piece past some of its check points (`checks`; it had returned at the times
    `returned_at` up to `failure.stalled`), the piece up to the last of them as CVODES returned it: (that check
    point, the states at the returns up to it, the counts), so that it is not integrated again up to there (the
    Delta 3R[2US]'s stall at 1.29 s: 422 evaluations); None where the returns are not known (CasADi's integrator
    reports none) or no check point was passed."""
    passed = checks[checks <= failure.stalled + 1e-12 * t_end]
    if failure.returned is None or not len(passed):
        return None
    index = int(np.argmin(np.abs(returned_at - passed[-1])))  # the check point's return
    if index >= len(failure.returned):
        return None
    return float(passed[-1]), np.asarray(failure.returned[: index + 1]), failure.stats


def _limits(limit: StepLimit | None) -> tuple[int, ...]:
    """The step limits a piece is integrated with, in turn, each where the one before ran into its limit: the
    run's (MAX_STEPS without a StepLimit); for a run's first piece (no history yet: MAX_STEPS) FLOOR_STEPS
    first, the limit of most next pieces, so that they share its integrator (a first run in a process builds each,
    about 1 ms). A limit changes nothing computed until it is reached: the piece is integrated again only where
    the first limit was, and then computes what the last alone would have."""
    if limit is None:
        return (MAX_STEPS,)
    return tuple(dict.fromkeys((FLOOR_STEPS, MAX_STEPS))) if not limit.most else (limit.steps(),)


def _solved(
    chunk: Callable[[int], casadi.Function], limits: tuple[int, ...], x0: np.ndarray, p: list[float], early=None
):
    """CVODES over a piece (`chunk(steps)`: its integrator at that step limit; `p` = (t₀, h)) at each of the
    `limits` in turn until one reaches the end (`_limits`): that integrator, the states at its returns, and the
    evaluations of the tries before it; _GaveUp (with every evaluation made) where CVODES gives up otherwise, or
    at the last limit. A try that gives up before its limit gives up where the next would, at the same step.
    `early` (an `_Early`): the piece's watch as our driver returns, which may end it at a fall."""
    tried = 0
    for steps in limits:
        solver = chunk(steps)
        watched = early.watch_of(solver) if early is not None else {}
        try:
            return solver, np.asarray(solver(x0=x0, p=p, **watched)["xf"]).T, tried
        except RuntimeError as failure:
            tried += int(solver.stats().get("nfevals", 0)) + evaluations_lost(failure, steps)
            if steps == limits[-1] or "CV_TOO_MUCH_WORK" not in str(failure):
                returned = getattr(failure, "returned", None)  # our driver's returns before (CasADi's: none)
                raise _GaveUp(tried, _stalled(solver, p), returned, solver.stats()) from None


def _stalled(solver: casadi.Function, p: list[float]) -> float:
    """The time CVODES's steps had reached in a piece (`p` = (t₀, h)) where it gave up, past every return it had
    made (inf where not reported): every check point up to it was returned."""
    reached = solver.stats().get("tcur", math.nan)
    return p[0] + p[1] * reached if math.isfinite(reached) else math.inf


def evaluations_lost(failure: RuntimeError, steps: int) -> int:
    """The evaluations of the return interval where CVODES gave up: our driver's count of them (`lost`); CasADi's
    integrator reports none, so where it ran into the step limit, one per step it took there (each step evaluates
    the right-hand side at least once: a lower bound), else none known."""
    if hasattr(failure, "lost"):
        return failure.lost
    return steps if "CV_TOO_MUCH_WORK" in str(failure) else 0


def _stop(
    watch, fall: int, at: np.ndarray, states: np.ndarray, start: tuple, parts: _Parts | None, outputs, grid=None
) -> None:
    """The IntegrationError where the watch's margin fell at the check point `fall` (times `at`, states), with
    the outputs (times, states) reached: there for the chart's fall; for the loop equations' loss of rank, where
    the margin fell since the check point before (or the piece's `start`: time, state), located on a closed loop's
    `parts` (`_Parts.root`; crossing.py: where a crossing begins is the state's, not a check point's), on the piece's
    own returns at the fine grid's points where it has them (`grid`: times, states)."""
    t, y, reason, calls = at[fall], states[fall], CHART_REASON, 0
    if watch.fell == "rank" and parts is not None:
        before = start if fall == 0 else (at[fall - 1], states[fall - 1])
        if grid is None:
            t, y, calls = parts.root(before, (t, y), rank=True)
        else:
            t, y = parts.first_below(before[0], *grid, (t, y), rank=True)
        reason = CROSSING_REASON
    times, out = outputs
    raise IntegrationError(t, reason, y, out[: int(np.searchsorted(times, t, side="right"))], calls)


class _Parts:
    """A closed loop's piece near a crossing (crossing.py) where CVODES gave up (the coordinates in use turning singular
    inside it, say), integrated by CVODES in parts: a part that gives up is halved, one that reaches its end is followed
    by one as long, and the watch (charts.py) is checked at the run's check points and at each part's end, so that the
    run stops (IntegrationError) at the first where its margin is below zero, before the coordinates turn singular:
    where they would, the steps shrink below SMALLEST_STEP of the part and CVODES gives up within a few of them. Each
    part's end is decided from the run's states alone, as the pieces' are. Below 2^-HALVINGS of the piece, DOP853 takes
    the rest (and scipy's import, 0.3 s, is paid only there)."""

    def __init__(self, eng: Engine, times, out, options, checkpoint, watch, limit: StepLimit) -> None:
        self.eng, self.times, self.out, self.checkpoint, self.watch, self.limit = (
            eng,
            times,
            out,
            checkpoint,
            watch,
            limit,
        )
        self.multistep, self.rtol, self.atol = options
        t_end = times[-1]
        self.checks, self.near = t_end * np.arange(1, CHECKS) / CHECKS, 1e-12 * t_end

    @property
    def fine(self) -> bool:
        """Whether the parts return at the fine grid's points (`_part`): once the run has crossed."""
        return self.watch.crossed

    def integrate(
        self, done: int, start: float, end: float, y: np.ndarray, stalled: float = math.inf
    ) -> tuple[np.ndarray, int, float, int]:
        """From y at `start` (the outputs up to `done` filled) to `end`, or to the check point where the watch
        asks to be watched more closely (crossing.py): the state, the evaluations, the time reached and the outputs
        filled up to there. `stalled`: where CVODES's steps had reached in the piece where it gave up (`_stalled`):
        a part ends at the last check point before it, rather than halving from `start` down to it (each halving
        integrating again what the one before had), and is halved only past it."""
        width = (end - start) / 2
        smallest, t, calls = (end - start) * 2.0**-HALVINGS, start, 0
        while t < end:
            stop = self._stop(t, end, width, stalled)
            self.checkpoint(t)
            try:
                y, done, calls, reached = self._part(done, t, stop, y, calls)
            except _GaveUp as failure:
                # where its steps reached a point of the fine grid before (`_part` returns there), the next part
                # ends at it (`_stop`); else the part is halved
                known = self.fine and t + self.near < failure.stalled < stalled
                calls, width = calls + failure.calls, width if known else width / 2
                stalled = failure.stalled if t < failure.stalled < stalled else stalled
                if width < smallest:
                    return (*self._dop853(done, t, end, y, calls), end, int(np.searchsorted(self.times, end, "right")))
                continue
            t = reached
            if self.watch.fell == "near":  # the run goes on from there watched more closely (crossing.py)
                break
        return y, calls, t, done

    def _stop(self, t: float, end: float, width: float, stalled: float) -> float:
        """Where the part from t ends: `width` on, or `end` if that is within reach, but at the last check point
        before `stalled` (where CVODES's steps had reached where it gave up: it stalled after), where one is; once
        the run has crossed, at the last point of the fine grid before it (the parts return there: `_part`), not
        halved down to it (the Delta 3R[2US]'s three give-ups before a switch at 1.79 s, a millisecond each)."""
        stop = end if end - (t + width) <= self.near else t + width
        if self.fine:
            before = _fine_points(t, min(stalled, stop), self.times[-1])
        else:
            before = self.checks[(self.checks > t + self.near) & (self.checks <= min(stalled + self.near, stop))]
        return float(before[-1]) if stalled <= stop and len(before) else stop

    def _part(self, done: int, t: float, stop: float, y: np.ndarray, calls: int):
        """One part: the state at its end, the outputs filled, the evaluations; _GaveUp where CVODES gives up, an
        IntegrationError where the watch's margin falls below zero (where `root` places its fall)."""
        times = self.times
        checks = self.checks[(self.checks > t + self.near) & (self.checks <= stop + self.near)]
        stop, checks = _watched_until(self.watch, t, stop, checks, times[-1])
        upto = int(np.searchsorted(times, stop, side="right"))
        # once the run has crossed, returning at the fine grid's points too: where a fall or a stall is, within one
        fine = _fine_points(t, stop - 2 * self.near, self.times[-1]) if self.fine else np.empty(0)
        marks, outputs, returned = _returns(times[done:upto], np.concatenate([checks, fine, [stop]]), t, stop)
        checked, fine_at = np.append(returned[: len(checks)], returned[-1]), returned[len(checks) : -1]
        _, reached, tried = _solved(self._chunk(marks), (self.limit.steps(),), y, [t, stop - t])
        states = np.ascontiguousarray(reached)
        self.out[done:upto] = states[outputs]
        at, watched = t + (stop - t) * np.asarray(marks)[checked], states[checked]
        # the run's check points as every piece's (the watch remembers their margins), then the part's end
        fall = self.watch.first_fall(at[: len(checks)], watched[: len(checks)])
        if fall is not None and self.watch.fell == "near":  # watched more closely from there
            return watched[fall], int(np.searchsorted(times, at[fall], side="right")), calls + tried, at[fall]
        if fall is None and (len(checks) or self.watch.margin(stop, states[-1]) >= 0):
            return states[-1], upto, calls + tried, stop
        fall = len(at) - 1 if fall is None else fall
        # where the margin fell between the last point watched before (the part's start or a check point) and there
        # (on the part's own returns at the fine grid's points where it has them, without integrating again)
        before = (t, y) if fall == 0 else (at[fall - 1], watched[fall - 1])
        if self.fine:
            (root, state), more = self.first_below(before[0], fine, states[fine_at], (at[fall], watched[fall])), 0
        else:
            root, state, more = self.root(before, (at[fall], watched[fall]))
        reached_outputs = self.out[: int(np.searchsorted(times, root, side="right"))]
        reason = CROSSING_REASON if self.watch.crossing_at(state) else CHART_REASON
        raise IntegrationError(root, reason, state, reached_outputs, calls + tried + more)

    def root(self, before: tuple[float, np.ndarray], fall: tuple[float, np.ndarray], rank: bool = False) -> tuple:
        """The first point of the run's fine grid (FINE points a check interval: fixed times of [0, t_end], as the
        check points are) past `before` (time, state: the watch's margin ≥ 0) where the watch's margin (`rank`: the
        loop equations' alone, crossing.py) is below zero, else `fall` (time, state: the margin below zero): its
        time, the state there and the evaluations. The states at the grid's points come from one integration by
        CVODES from `before` (its interpolation at its returns) and their margins from one batch, so that where the
        fall is placed is the state's, within 1 / FINE of a check interval past the margin's root, never where the
        run's pieces happened to end. (Locating the root itself to 1e-12 of the run's span, each trial integrated
        from `before` by the Illinois variant of regula falsi, took six or seven integrations a fall: a third of the
        Delta 3R[2US]'s pieces; the crossing's entry a step past it changes nothing it does, its damping acting far
        below ENTER.) Where CVODES gives up on the way (the coordinates in use turning singular short of the fall),
        the fall's own point."""
        (t0, y0), (b, yb) = before, fall
        grid = _fine_points(t0, b, self.times[-1])
        grid = grid[grid < b - self.near]
        if not len(grid):
            return b, yb, 0
        marks = (*np.round((grid - t0) / (b - t0), 12).tolist(), 1.0)
        try:
            solver, reached, tried = _solved(self._chunk(marks), (self.limit.steps(),), y0, [t0, b - t0])
        except _GaveUp as failure:
            return b, yb, failure.calls
        calls = tried + int(solver.stats().get("nfevals", 0))
        return (*self.first_below(t0, grid, np.ascontiguousarray(reached[:-1]), fall, rank), calls)

    def first_below(self, after: float, grid: np.ndarray, states: np.ndarray, fall: tuple, rank: bool = False) -> tuple:
        """(time, state) of the first of the grid's points (`states` there) strictly between `after` and the fall
        where the watch's margin (`rank`: the loop equations' alone) is below zero, else `fall` (time, state); their
        margins in one batch."""
        inside = (grid > after + self.near) & (grid < fall[0] - self.near)
        grid, states = grid[inside], states[inside]
        if not len(grid):
            return fall
        margins = self.watch.rank_margins(states) if rank else self.watch.margins(states)
        below = np.flatnonzero(margins < 0)
        return (float(grid[below[0]]), states[below[0]]) if len(below) else fall

    def _chunk(self, marks: tuple[float, ...]) -> Callable[[int], casadi.Function]:
        options = (self.multistep, self.rtol, self.atol, 1, 0.0)
        return functools.partial(_chunk_integrator, self.eng, marks, *options, smallest=SMALLEST_STEP)

    def _dop853(self, done: int, t: float, end: float, y: np.ndarray, calls: int) -> tuple[np.ndarray, int]:
        upto = int(np.searchsorted(self.times, end, side="right"))
        piece = (self.times[done:upto], end, y, t, self.out[:done])
        try:
            rest, more = _dop853_piece(
                self.eng, piece, self.rtol, self.atol, self.checkpoint, self.watch, self.times[-1]
            )
        except IntegrationError as error:
            error.calls += calls
            raise
        self.out[done:upto] = rest[: upto - done]
        return rest[-1], calls + more


def _dop853_piece(eng, piece, rtol, atol, checkpoint, watch, t_end: float) -> tuple[np.ndarray, int]:
    """DOP853 over one piece (its outputs, end, starting state and time, the states at the outputs before it)
    where CVODES gave up: the states at the outputs and at the end (last), and the evaluations; an
    IntegrationError keeps the outputs before the piece too."""
    outputs, end, y, start, before = piece
    try:
        return _scipy(eng, np.union1d(outputs, [end]), y, "DOP853", rtol, atol, checkpoint, start, watch, t_end)
    except IntegrationError as error:
        error.outputs = np.concatenate([before, error.outputs.reshape(-1, len(y))])
        raise


def _short_of_stall(
    limit: StepLimit | None, eng: Engine, start: float, end: float, checks: np.ndarray, t_end: float
) -> tuple[float, np.ndarray, bool]:
    """A piece from `start` to `end` (its check points `checks`) cut short of where CVODES stalled before in the
    same coordinates (`StepLimit.stalled`), which it would reach again: it ends at the last check point before the
    stall; where none is, at the first past it, and CVODES is not tried (True): its parts or DOP853 take it."""
    near = 1e-12 * t_end
    if limit is None or limit.stalled is None or limit.stalled[0] is not eng:
        return end, checks, False
    stall = limit.stalled[1]
    if not start + near < stall <= end + near:
        return end, checks, False
    before = checks[checks <= stall + near]
    if len(before):
        return float(before[-1]), before, False
    after = checks[checks > stall + near][:1]
    return (float(after[0]) if len(after) else end), after, True


def _watched_until(watch, start: float, end: float, checks: np.ndarray, t_end: float) -> tuple[float, np.ndarray]:
    """Where a piece from `start` to `end` (the run's check points `checks` in it) ends, and its check points:
    sooner where the watch asks for it (crossing.py: near a crossing)."""
    return (end, checks) if watch is None else watch.until(start, end, t_end, checks)


def _next_span(steps: int, intervals: float) -> int:
    """The grid intervals of the next piece after one of `steps` steps over `intervals` of them (a fraction for a
    piece after a cautious one): about STEPS_PER_PIECE steps at the same pace, at least one interval."""
    return max(1, int(STEPS_PER_PIECE * intervals / max(steps, 1)))


def _watched_span(watch, span: int) -> int:
    """`span` intervals of the grid, fewer where the watch's margin, extrapolated, would fall below zero within
    them (charts.py: its fall seen before the integrator stalls): 0 (a cautious piece, to the next check point)
    where it would within one."""
    if watch is None:
        return span
    per_interval = CHECKS // CHUNKS
    while span > 1 and not watch.steady(span * per_interval):
        span //= 2
    return span if watch.steady(per_interval) else 0


def _piece(start: float, t_end: float, span: int) -> tuple[float, np.ndarray]:
    """The piece of a run from `start`: its end and the check points in it, at fixed times of [0, t_end] (`span`
    intervals of a grid of CHUNKS, and CHECKS equal check points) whatever the start, so that a run resumed where
    new coordinates were chosen ends its pieces on the others' grid. `span` 0 (the coordinates' conditioning
    falling fast): the piece ends at the next check point, so that the watch sees it before the integrator
    stalls."""
    grid = CHUNKS if span else CHECKS
    ends = t_end * np.arange(1, grid + 1) / grid
    ends[-1] = t_end  # exactly: the last output
    end = ends[min(np.searchsorted(ends, start + 1e-12 * t_end, side="right") + max(span, 1) - 1, grid - 1)]
    checks = t_end * np.arange(1, CHECKS) / CHECKS
    return end, checks[(checks > start + 1e-12 * t_end) & (checks <= end)]


def _returns(outputs: np.ndarray, checks: np.ndarray, start: float, end: float):
    """Where CVODES returns in a piece, on its normalised time (rounded, so that equal pieces hit one cached
    integrator): at the outputs, the check points and the end; and where the outputs and the check points lie
    among the returns."""
    outputs, checks = (np.round((np.asarray(t, float) - start) / (end - start), 12) for t in (outputs, checks))
    marks = distinct(np.concatenate([outputs, checks, [1.0]]))
    return tuple(marks), np.searchsorted(marks, outputs), np.searchsorted(marks, checks)


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted: np.unique's, without its import of numpy.ma (20 ms of a process's first run)."""
    values = np.sort(values)
    return values[np.append(True, values[1:] != values[:-1])]


def _finer(marks: tuple, outputs: np.ndarray, checked: np.ndarray, start: float, end: float, t_end: float):
    """`_returns`' returns with the points of the run's fine grid (FINE a check interval) inside the piece added,
    and where those lie among them: near crossings, where a stall or a fall of the watch's margin is then known
    within a point (`_Parts`, `_stop`) without integrating again. CVODES steps past them to its stop time at the
    piece's end; its first step is guessed from the first, a fine step in, as a crossing's is (crossing.py)."""
    fine = np.round((_fine_points(start, end, t_end) - start) / (end - start), 12)
    fine = fine[fine < 1.0]
    finer = distinct(np.concatenate([marks, fine]))
    points = np.asarray(marks)
    return (
        tuple(finer.tolist()),
        np.searchsorted(finer, points[outputs]),
        np.searchsorted(finer, points[checked]),
        np.searchsorted(finer, fine),
    )


def _fine_points(t0: float, b: float, t_end: float) -> np.ndarray:
    """The points of the run's fine grid (FINE a check interval: fixed times of [0, t_end]) in (t0, b]."""
    spacing, near = t_end / (CHECKS * FINE), 1e-12 * t_end
    grid = spacing * np.arange(math.floor(t0 / spacing), math.ceil(b / spacing) + 1)
    return grid[(grid > t0 + near) & (grid <= b + near)]


@functools.lru_cache(maxsize=16)
def _chunk_integrator(
    eng: Engine,
    grid: tuple[float, ...],
    multistep: str,
    rtol: float,
    atol: float,
    runs: int,
    work_scale: float = 0.0,
    steps: int = MAX_STEPS,
    smallest: float = 0.0,
):
    """The CVODES integrator of `_chunk_dae` returning at `grid` (normalised time), at most `steps` steps between
    two returns: for Adams, our own driver of CVODES on the engine's compiled function where it can be
    had (cvodes_driver.py: the same states bit for bit, without CasADi's cost per evaluation), else
    CasADi's integrator."""
    if multistep == "adams" and _DRIVER[0]:
        from . import cvodes_driver  # ctypes: for the runs that use it

        problem = cvodes_driver.problem(eng, work_scale, runs)
        if problem is not None:
            return cvodes_driver.Piece(problem, grid, multistep, rtol, atol, steps, smallest)
    options = {
        "reltol": rtol,
        "abstol": atol,
        "linear_multistep_method": multistep,
        "nonlinear_solver_iteration": "functional" if multistep == "adams" else "newton",
        "max_num_steps": steps,
        **({"min_step_size": smallest} if smallest else {}),
        # where CVODES gives up, DOP853 takes the piece or the run stops with a message of its own: SUNDIALS' and
        # CasADi's (one line per failed evaluation near a singular configuration) said nothing a person could use
        "show_eval_warnings": False,
        "disable_internal_warnings": True,
    }
    if multistep == "bdf":  # Newton's iterations stop at a hundredth of the error test's tolerance, not a tenth
        options["nonlin_conv_coeff"] = BDF_CONVERGENCE
    dae = _chunk_dae(eng, multistep, runs, work_scale)
    return SerialIntegrator(casadi.integrator("chunk", "cvodes", dae, 0.0, list(grid), options))


def driving() -> bool:
    """Whether CVODES' Adams pieces go through our driver (False inside `through_casadi()`)."""
    return _DRIVER[0]


@contextlib.contextmanager
def through_casadi() -> Iterator[None]:
    """Every CVODES piece integrated inside the block through CasADi's integrator, not our driver: the same states,
    for `mbstudio bench` to time the two side by side. Not for concurrent runs."""
    _chunk_integrator.cache_clear()
    _DRIVER[0] = False
    try:
        yield
    finally:
        _DRIVER[0] = True
        _chunk_integrator.cache_clear()


@functools.lru_cache(maxsize=8)
def _chunk_dae(eng: Engine, multistep: str, runs: int, work_scale: float) -> casadi.Function:
    """dy/dτ = h f(t₀ + h τ, y) on the normalised time; p = (t₀, h): one function for every piece of a run (each
    grid and step limit its own integrator; building this graph was a third of an integrator's cost). MX
    symbols call the engine's SX function as one node, so building it costs milliseconds whatever the model's
    size; for an ensemble the function is mapped over the runs' columns. `work_scale` > 0: the power of the
    non-conservative forces over `work_scale` as one more state."""
    size = eng.state_size
    tau, y, p = casadi.MX.sym("tau"), casadi.MX.sym("y", size * runs), casadi.MX.sym("p", 2)
    work = casadi.MX.sym("work", int(work_scale > 0))
    stiff = stiff_rhs(eng) if multistep == "bdf" and runs == 1 else None  # (t, y): its Jacobian compiled
    if multistep == "adams":
        function = eng.fast_work_rate if work_scale else eng.fast_state_equation
    else:  # BDF differentiates it
        function = stiff or (eng.work_rate if work_scale else eng.state_equation)
    mapped = function.map(runs) if runs > 1 else function
    states = casadi.reshape(y, size, runs)
    outputs = mapped(p[0] + p[1] * tau, states, *([] if stiff else [casadi.DM.zeros(eng.n)]))
    y_dot = casadi.reshape(outputs[0], size * runs, 1)
    # the work as one more state, not as CVODES' quadrature: CasADi evaluates a quadrature's right-hand side in a
    # call of its own, which cost the vehicle's drive 60 % more; scaled to the model's energies, so that its error
    # test asks no more of it than of the coordinates (in joules the vehicle's steps were 9 % more)
    rate = casadi.vertcat(y_dot, outputs[1] / work_scale) if work_scale else y_dot
    none = casadi.MX(0, 1)  # no algebraic states, controls, quadratures or events
    inputs, outputs = [tau, casadi.vertcat(y, work), none, p, none], [p[1] * rate, none, none, none]
    options = _undifferentiated(len(outputs)) if multistep == "adams" else {}
    return casadi.Function("chunk_dae", inputs, outputs, casadi.dyn_in(), casadi.dyn_out(), options)


def _undifferentiated(outputs: int) -> dict:
    """CVODES' set-up forms the Jacobian even where Adams' fixed-point iteration never asks for it (finite
    differences through the engine's function): declared undifferentiated, it is empty, which made a first run's
    integrators cost a third (~0.4 ms less each). BDF's Newton iteration needs it."""
    return {"is_diff_out": [False] * outputs}
