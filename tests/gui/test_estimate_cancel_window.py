"""A simulation cancelled during its error estimate keeps its run: the job sends the finished run as a part before
the companion run at ten times the tolerances (simulation/run.py, `finished`), and the cancelled job's result is
that part, plotted, with the status bar saying the estimate was cancelled."""

from __future__ import annotations

import numpy as np

from mbstudio import samples
from mbstudio.jobs import CANCELLED
from mbstudio.model import dumps
from mbstudio.simulation.run import simulate

from .held_estimate import simulation

OPTIONS = {"t_end": 0.5, "samples": 51}


def test_a_cancel_during_the_error_estimate_keeps_the_run_in_the_window(window, qtbot):
    window.document.replace(samples.load("four_bar"), None)
    job = window.jobs.start(simulation, dumps(window.document.model), OPTIONS, "Simulate")
    qtbot.waitUntil(lambda: bool(job.parts), timeout=120_000)  # the run is done; its estimate is held up
    assert job.running and "estimating its error" in job.message
    window.jobs.cancel(job)
    assert job.state == CANCELLED and job.result is not None
    data = job.result.data
    assert window.plots.result is job.result  # shown, as a finished run's
    assert data.error_estimate is None and "error estimate cancelled" in job.result.title
    status = window.statusBar().currentMessage()
    assert "error estimate cancelled" in status and "kept Simulation over 0.5 s" in status
    reference = simulate(samples.load("four_bar"), OPTIONS["t_end"], samples=OPTIONS["samples"], error_estimate=False)
    assert np.array_equal(np.asarray(data.q), reference.q)  # the whole run, the same as one without an estimate
    assert np.array_equal(np.asarray(data.t), reference.t)
