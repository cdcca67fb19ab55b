"""CasADi's integrator functions, called by one thread at a time.

CasADi's CVODES plugin keeps one SUNDIALS memory per integrator function, not one per call: runs of one engine in
four threads at once (an ensemble of threads, a script's pool) crashed the process in CasADi 3.7 and 3.8, and where
they did not, `stats()` gave whichever thread's call ended last, and the run chose its next pieces from another
run's counts. Our own CVODES driver (cvodes_driver.py) has work arrays per call and counts per thread; this wrapper
gives CasADi's integrators, which BDF runs and the crossings still use, the same guarantees: calls one after the
other, and each thread's own last counts.
"""

from __future__ import annotations

import threading

import casadi


class SerialIntegrator:
    """`function` (a CasADi integrator) called as itself (`solver(x0=..., p=...)`), one call at a time; `stats()`
    are this thread's last call's."""

    def __init__(self, function: casadi.Function) -> None:
        self.function = function
        self._lock = threading.Lock()
        self._last = threading.local()

    def __call__(self, **arguments) -> dict:
        with self._lock:
            try:
                return self.function(**arguments)
            finally:  # the counts of a call that gave up too: the run counts its evaluations and where it stalled
                self._last.stats = self.function.stats()

    def stats(self) -> dict:
        return getattr(self._last, "stats", {})
