"""Where CVODES stalls (simulation/integrators.py, StepLimit): it is given up after a few times the work the run's
motion has needed per return, not after MAX_STEPS, and the evaluations of the interval it gave up in are counted.
Checked on a right-hand side whose solution reaches a discontinuity that turns it back (ẏ = −sign y + 0.1 cos t:
it chatters at y = 0, where every integrator's steps shrink to nothing), with CasADi's evaluations of it counted by
a callback around it (the same function on the same arguments: the same steps), independently of CVODES' report."""

from __future__ import annotations

import casadi
import numpy as np
import pytest

from mbstudio.simulation import integrators
from mbstudio.simulation.integrators import FLOOR_STEPS, MAX_STEPS, PACE, IntegrationError, StepLimit, integrate

TIMES = np.linspace(0.0, 2.0, 21)
START = 0.15  # y reaches 0 at t ≈ 0.167, in the second piece of the run


class Counted(casadi.Callback):
    """A CasADi function evaluated through Python, counting its evaluations (its derivatives are the function's)."""

    def __init__(self, function: casadi.Function) -> None:
        casadi.Callback.__init__(self)
        self.function, self.count = function, 0
        self.construct("counted", {})

    def get_n_in(self) -> int:
        return self.function.n_in()

    def get_n_out(self) -> int:
        return self.function.n_out()

    def get_sparsity_in(self, i: int) -> casadi.Sparsity:
        return self.function.sparsity_in(i)

    def get_sparsity_out(self, i: int) -> casadi.Sparsity:
        return self.function.sparsity_out(i)

    def has_forward(self, nfwd: int) -> bool:
        return True

    def get_forward(self, nfwd, name, inames, onames, opts) -> casadi.Function:
        return self.function.forward(nfwd)

    def eval(self, args: list) -> list:
        self.count += 1
        return self.function.call(args)


class Chattering:
    """What integrators.py asks of an engine, for ẏ = −sign y + 0.1 cos t; `ode` (DOP853's) counts its calls."""

    n, state_size = 1, 1

    def __init__(self) -> None:
        t, y, tau = (casadi.SX.sym(name) for name in ("t", "y", "tau"))
        self.function = casadi.Function("chatter", [t, y, tau], [-casadi.sign(y) + 0.1 * casadi.cos(t), casadi.SX(0)])
        self.fast_state_equation = Counted(self.function)
        self.ode_calls = 0

    def ode(self, t: float, y: np.ndarray) -> np.ndarray:
        self.ode_calls += 1
        return np.asarray(self.function(t, y, 0.0)[0], dtype=float).ravel()


def _stalled(limit: StepLimit) -> tuple[Chattering, IntegrationError]:
    eng = Chattering()
    with pytest.raises(IntegrationError) as stop:
        integrate(eng, TIMES, np.array([START]), "CVODES", 1e-10, 1e-10, limit=limit)
    return eng, stop.value


@pytest.mark.slow  # 4 s (the README's run is held under 5 minutes)
def test_a_stall_costs_a_few_times_the_runs_own_work_and_ends_where_it_did(monkeypatch):
    """With the limit of 20 000 steps, CVODES evaluated the chattering right-hand side more than 20 000 times
    before DOP853 took the piece; with the run's own limit (the first piece's steps, times PACE), fewer than 4 per
    step allowed. DOP853 takes the piece from its start either way: the run stops at the same time, from the same
    state, with the same message."""
    eng, stop = _stalled(StepLimit())
    # the first piece took a few steps per return: the limit is the floor (a power of two)
    limit = FLOOR_STEPS
    assert eng.fast_state_equation.count < 4 * limit
    monkeypatch.setattr(integrators, "FLOOR_STEPS", MAX_STEPS)  # the fixed limit the runs had
    old, old_stop = _stalled(StepLimit())
    assert old.fast_state_equation.count > MAX_STEPS
    assert (stop.time, str(stop)) == (old_stop.time, str(old_stop)) and np.array_equal(stop.state, old_stop.state)
    assert stop.time == pytest.approx(START / 0.9, rel=0.01)  # where y reaches 0: ẏ ≈ −0.9 there


def test_the_evaluations_of_the_interval_cvodes_gave_up_in_are_counted():
    """CasADi reports nothing of the interval where CVODES gave up (the count was the returns' before it: tens
    where it made thousands). It is counted as one evaluation per step of the limit it ran into: never more than
    were made, and at least the limit."""
    eng, stop = _stalled(StepLimit())
    made = eng.fast_state_equation.count + eng.ode_calls
    assert eng.ode_calls + FLOOR_STEPS <= stop.calls <= made


@pytest.mark.parametrize(
    ("taken", "steps"),
    [
        ([], MAX_STEPS),  # nothing integrated yet: no pace to go by
        ([(646, 98)], FLOOR_STEPS),  # the Delta's long piece: 6.6 steps per return
        ([(646, 98), (143, 1)], 4096),  # and its piece after a crossing: 143 in one return, x PACE = 2288
        ([(143, 1), (646, 98)], 4096),  # it only grows
        ([(14542, 10)], MAX_STEPS),  # the bushed SLA's first piece: 1454 per return
    ],
)
def test_the_limit_follows_the_most_steps_per_return(taken, steps):
    limit = StepLimit()
    for count, returns in taken:
        limit.taken(count, returns)
    assert limit.steps() == steps
    if taken:  # a power of two at least PACE times the most per return, or a bound
        most = max(count / returns for count, returns in taken)
        assert steps in (FLOOR_STEPS, MAX_STEPS) or PACE * most <= steps < 2 * PACE * most
