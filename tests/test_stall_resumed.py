"""A stall is not integrated twice (simulation/integrators.py, StepLimit.stalled): where CVODES gave up in a piece of
one check interval, DOP853 took it and the watch (simulation/charts.py) stopped DOP853 inside it with the coordinates
kept, the run resumed there goes on with DOP853 to the piece's end instead of letting CVODES stall again before the
same singular configuration. The retried CVODES never gave the motion (it gave up and DOP853 went on from the same
state), so the samples are the same bits, with fewer evaluations."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.simulation import integrators
from mbstudio.simulation.integrators import FLOOR_STEPS, StepLimit
from mbstudio.simulation.run import simulate


def _counted_run(monkeypatch) -> tuple[object, int]:
    """The free Delta's 2 s, and how many times CVODES gave up in it."""
    gave_up, build = [0], integrators._chunk_integrator

    class Counted:
        def __init__(self, solver) -> None:
            self.solver = solver

        def __call__(self, **arguments):
            try:
                return self.solver(**arguments)
            except RuntimeError:
                gave_up[0] += 1
                raise

        def stats(self) -> dict:
            return self.solver.stats()

    monkeypatch.setattr(integrators, "_chunk_integrator", lambda *a, **k: Counted(build(*a, **k)))
    return simulate(samples.load("delta_3rus"), 2.0), gave_up[0]


@pytest.mark.slow  # the free Delta's engines of three coordinate choices and its crossing's, built cold
def test_the_free_delta_resumed_inside_a_stall_moves_the_same_with_fewer_evaluations(monkeypatch):
    now, stalls = _counted_run(monkeypatch)
    with monkeypatch.context() as without:  # nothing remembered: CVODES tried again from every resumed state
        without.setattr(StepLimit, "stalled", property(lambda self: None, lambda self, value: None), raising=False)
        before, stalls_before = _counted_run(without)
    assert np.array_equal(now.q, before.q) and np.array_equal(now.qd, before.qd)
    assert now.provenance.charts == before.provenance.charts and now.notes == before.notes
    assert stalls_before - stalls >= 2  # at t = 1.2944 and 1.7715 s, each inside the interval it stalled in before
    # each retry ran into the step limit: at least FLOOR_STEPS evaluations saved apiece
    saved = before.provenance.rhs_evaluations - now.provenance.rhs_evaluations
    assert saved >= (stalls_before - stalls) * FLOOR_STEPS
