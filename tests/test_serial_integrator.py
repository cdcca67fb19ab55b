"""Runs through CasADi's integrators (BDF, the crossings) in several threads at once are the runs made alone:
CasADi's CVODES plugin keeps one memory per integrator, which crashed the process or mixed the threads' counts
(simulation/serial_integrator.py)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.simulation.run import simulate


@pytest.mark.parametrize("name", ["four_bar", pytest.param("irsbot2", marks=pytest.mark.slow)])  # 6 s
def test_casadi_integrated_runs_in_four_threads_are_the_run_made_alone(name):
    """four_bar under CVODES-BDF (every piece through CasADi's integrator), IRSBot-2 under the default CVODES (its
    crossings through CasADi's): eight runs in four threads, bit for bit the run made alone, evaluations included.
    Before the integrators were serialised, 4 of 8 four-bar runs differed and some rounds crashed the process."""
    method = "CVODES-BDF" if name == "four_bar" else "CVODES"
    model = samples.load(name)
    t_end = 1.0 if name == "four_bar" else 0.4

    def run(_):
        return simulate(model, t_end, method=method, error_estimate=False)

    alone = run(None)
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(run, range(8)))
    for other in runs:
        assert np.array_equal(other.q, alone.q) and np.array_equal(other.qd, alone.qd)
        assert other.provenance.rhs_evaluations == alone.provenance.rhs_evaluations
