"""A job task for tests/gui/test_estimate_cancel_window.py: the window's simulation job, held up once its run is
done (at the part it sends before its error estimate's companion run) until the test cancels it, so that the
cancel falls inside the error estimate on any machine, however fast the companion run would be."""

from __future__ import annotations

import time

from mbstudio.jobs import tasks

HOLD = 120.0  # s: longer than any test waits; the job's process is ended by the cancel long before


def simulation(model_text: str, options: dict, progress, cancel):
    """Named as the task it runs, so that the window routes its result and keeps its parts as that task's."""

    def held(fraction: float, message: str = "", part: object = None) -> None:
        progress(fraction, message, part)
        if part is not None:
            time.sleep(HOLD)

    return tasks.simulation(model_text, options, held, cancel)
