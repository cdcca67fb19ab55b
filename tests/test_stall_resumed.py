"""Where CVODES gives up near a crossing of a singular configuration (simulation/integrators.py, _Parts), the piece is
integrated by CVODES in parts, each halved where it gives up, the watch (simulation/crossing.py) checked at their ends:
the free Delta runs its 2 s through its five crossings without DOP853 (whose scipy import alone cost 0.3 s), and a
run remembers nothing of its parts that could make it depend on how it was resumed. (Far from crossings, DOP853 takes
such a piece, StepLimit.stalled remembering it for the run resumed inside it.)"""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.simulation import integrators
from mbstudio.simulation.run import simulate


@pytest.mark.slow  # the free Delta's engines of three coordinate choices and its crossing's, built cold
def test_the_free_delta_crosses_its_stalls_in_cvodes_parts_without_dop853(monkeypatch):
    gave_up, parts = [0], integrators._Parts.integrate

    def counted(self, *arguments):
        gave_up[0] += 1
        return parts(self, *arguments)

    def refused(*arguments, **options):
        raise AssertionError("DOP853 took a piece of the free Delta")

    monkeypatch.setattr(integrators._Parts, "integrate", counted)
    monkeypatch.setattr(integrators, "_dop853_piece", refused)
    run = simulate(samples.load("delta_3rus"), 2.0, error_estimate=False)
    assert run.t[-1] == 2.0 and len(run.provenance.crossings) == 5
    assert gave_up[0] >= 1  # CVODES gave up near the crossings (measured: 4 pieces), each integrated in parts
    assert np.isfinite(run.q).all()
