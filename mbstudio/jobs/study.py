"""Parameter studies: one analysis at every point of a grid of model parameters, each point a task on Dask.

    study = Study(model, {"D12": grid("D12=0.30:0.34:21")}, "basepar", {"digits": 50})
    rows = study.run(progress=print)      # one dict per point: the varied values, then the scalar results

A point loads the model's text, sets the varied parameters, runs the analysis and reduces it to scalars
(`ANALYSES`); whatever goes wrong at a point (it cannot assemble, a singular actuation) stays in that point's
row as its `error`, and the study goes on. The points run on `dask.distributed`: an embedded LocalCluster of
worker processes by default (nothing to start), or any scheduler given by its address, to scale out. Each row
carries its own provenance (the varied model's hash, time taken, worker, version).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping

import numpy as np

from .. import __version__
from ..model import Model, ModelError, dumps, loads
from .tasks import text_hash

MAX_POINTS = 10_000  # a grid larger than this is a typing mistake more often than a plan


def grid(spec: str) -> tuple[str, np.ndarray]:
    """'NAME=a:b:n' -> (NAME, n equally spaced values from a to b, both included); 'NAME=v' -> one value."""
    name, sep, values = spec.partition("=")
    parts = values.split(":")
    try:
        numbers = [float(p) for p in parts[:2]] + [int(p) for p in parts[2:]]
    except ValueError:
        numbers = []
    if not sep or not name.strip() or len(parts) not in (1, 3) or not numbers:
        raise ModelError("vary", "is not NAME=start:stop:count or NAME=value", spec, "e.g. D12=0.30:0.34:21")
    if len(parts) == 1:
        return name.strip(), np.array(numbers[:1])
    start, stop, count = numbers
    if not (math.isfinite(start) and math.isfinite(stop)) or not 1 <= count <= MAX_POINTS:
        raise ModelError("vary", "needs finite ends and a count from 1", spec, f"a count up to {MAX_POINTS}")
    return name.strip(), np.linspace(start, stop, count)


def points(model: Model, vary: Mapping[str, np.ndarray]) -> list[dict[str, float]]:
    """Every combination of the varied values (the first name varies slowest); the names must be parameters."""
    known = [p.name for p in model.parameters]
    for name in vary:
        if name not in known:
            raise ModelError("vary", "is not a parameter of the model", name, ", ".join(known) or "(none)")
    count = math.prod(len(v) for v in vary.values())
    if count > MAX_POINTS:
        raise ModelError("vary", f"makes {count} points", list(vary), f"at most {MAX_POINTS} points")
    return [dict(zip(vary, (float(x) for x in values), strict=True)) for values in itertools.product(*vary.values())]


# ------------------------------------------------------------------------------------------ analyses
def _basepar(model: Model, options: dict) -> dict:
    """Ranks, ridge depths (log10 σ_r/σ_r+1) and W's condition number σ1/σ_r per route."""
    from ..identification.pipeline import base_parameters

    method = options.get("method") or ("vp" if options.get("digits") else "dp")
    run = base_parameters(model, method, options.get("digits") or 50, options.get("samples"))
    out: dict[str, float] = {}
    for route, result in (("dp", run.dp), ("vp", run.vp.final if run.vp else None)):
        if result is not None:
            sigma = [float(s) for s in result.sigma]
            out[f"{route}_rank"] = result.rank
            out[f"{route}_ridge_depth"] = result.ridge.log10_depth
            out[f"{route}_condition"] = sigma[0] / sigma[result.rank - 1] if result.rank else math.inf
    if run.symbolic is not None:
        out["symbolic_rank"] = run.symbolic.rank
    return out


def _kinematics(model: Model, options: dict) -> dict:
    """The peak magnitude of every drive force along the trajectory, and the largest constraint residual."""
    from .tasks import kinematics

    result = kinematics(dumps(model), options, lambda *_: None, lambda: False)
    series = result.data["series"]
    out = {f"peak {name}": float(np.abs(v).max()) for name, v in series.items() if name.startswith("actuator:")}
    out.update({"max " + n: float(np.max(v)) for n, v in series.items() if n.startswith("constraint_residual")})
    return out


def _simulate(model: Model, options: dict) -> dict:
    """Energies and the loop closure over a simulation from the document's initial state."""
    from ..simulation.run import simulate

    result = simulate(model, float(options.get("t_end") or 1.0), samples=int(options.get("samples") or 101))
    total = result.total
    return {
        "peak_kinetic_energy": float(result.kinetic.max()),
        "energy_change": float(abs(total - total[0]).max()),
        "max_constraint_residual": float(result.residual.max()),
        "rhs_evaluations": result.provenance.rhs_evaluations,
    }


def _linearize(model: Model, options: dict) -> dict:
    """The modes about the equilibrium found from the document's configuration (options["equilibrium"] false:
    about the document's configuration itself): the lowest and highest natural frequencies, the smallest
    damping ratio, the largest real part of the eigenvalues (> 0: unstable), and where the equilibrium lies."""
    from ..linear.equilibrium import equilibrium
    from ..linear.linear_model import linearize

    point = equilibrium(model) if options.get("equilibrium", True) else None
    lin = linearize(model, point)
    oscillating = lin.frequencies_hz[np.abs(lin.eigenvalues.imag) > 0]
    out = {
        "lowest_frequency_hz": float(oscillating.min()) if oscillating.size else math.nan,
        "highest_frequency_hz": float(oscillating.max()) if oscillating.size else math.nan,
        "min_damping_ratio": float(np.nanmin(lin.damping_ratios, initial=math.inf)),
        "max_real_eigenvalue": float(lin.eigenvalues.real.max()),
    }
    values = lin.point.values()
    out.update({f"at {name}": values[name] for name in lin.point.independent})
    return out


ANALYSES: dict[str, Callable[[Model, dict], dict]] = {
    "basepar": _basepar,
    "kinematics": _kinematics,
    "simulate": _simulate,
    "linearize": _linearize,
}


def evaluate_point(model_text: str, point: dict[str, float], analysis: str, options: dict) -> dict:
    """One point: the varied values, the analysis' scalars, and the point's provenance; never raises."""
    start = time.perf_counter()
    row: dict = dict(point)
    try:
        model = loads(model_text)
        for p in model.parameters:
            p.value = point.get(p.name, p.value)
        text = dumps(loads(dumps(model)))  # validated again with the new values
        row.update(ANALYSES[analysis](loads(text), options))
        row["model_hash"] = text_hash(text)
        row["error"] = ""
    except Exception as exc:  # a failed point keeps its row and says why; the study goes on
        row["error"] = str(exc).strip() or type(exc).__name__
    row["seconds"] = time.perf_counter() - start
    row["worker"] = _worker_name()
    row["version"] = __version__
    return row


def _worker_name() -> str:
    try:
        from dask.distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "local"


# ------------------------------------------------------------------------------------------ the study
class Study:
    """A grid of points of one analysis on a Dask cluster; `start`, then `poll` (the window's timer) or
    `run` (blocking, for scripts and the command line); `cancel` stops what has not finished."""

    def __init__(
        self,
        model: Model,
        vary: Mapping[str, np.ndarray],
        analysis: str,
        options: dict | None = None,
        scheduler: str | None = None,
        workers: int = 2,
    ) -> None:
        if analysis not in ANALYSES:
            raise ModelError("analysis", "is not a study analysis", analysis, ", ".join(ANALYSES))
        self.model_text = dumps(model)
        self.points = points(model, vary)
        self.analysis, self.options = analysis, dict(options or {})
        self.scheduler, self.workers = scheduler, workers
        self.client = None
        self.futures: list = []
        self.results: list[dict | None] = [None] * len(self.points)

    def start(self) -> None:
        from dask.distributed import Client, LocalCluster

        if self.scheduler:
            self.client = Client(self.scheduler, timeout="10s")
        else:
            cluster = LocalCluster(
                n_workers=self.workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            )
            self.client = Client(cluster)
        self.futures = [
            self.client.submit(evaluate_point, self.model_text, p, self.analysis, self.options, pure=False)
            for p in self.points
        ]

    def poll(self) -> int:
        """Collect finished points; how many are done."""
        for k, future in enumerate(self.futures):
            if self.results[k] is None and future.done():
                self.results[k] = self._collect(k, future)
        return sum(r is not None for r in self.results)

    def _collect(self, k: int, future) -> dict:
        if future.status == "finished":
            return future.result()
        # the point was cancelled, or its worker died: the row stays, with what happened
        reason = "cancelled" if future.status == "cancelled" else f"failed on its worker: {future.exception()}"
        return {**self.points[k], "error": reason}

    def run(self, progress: Callable[[int, int], None] | None = None, cancel: Callable[[], bool] | None = None):
        """Start, wait for every point (reporting done/total), close the cluster; the rows in point order."""
        from dask.distributed import as_completed

        self.start()
        try:
            for done, _ in enumerate(as_completed(self.futures), start=1):
                if progress:
                    progress(done, len(self.points))
                if cancel and cancel():
                    self.cancel()
                    break
            self.poll()
        finally:
            self.close()
        return self.rows()

    def rows(self) -> list[dict]:
        """Finished points in grid order; a point still missing has an error saying so."""
        return [
            r if r is not None else {**p, "error": "not run"} for r, p in zip(self.results, self.points, strict=True)
        ]

    def cancel(self) -> None:
        if self.client is not None:
            self.client.cancel([f for f in self.futures if not f.done()])

    def close(self) -> None:
        if self.client is not None:
            cluster = self.client.cluster
            self.client.close()
            if cluster is not None and not self.scheduler:
                cluster.close()
            self.client = None

    def provenance(self) -> dict:
        return {
            "model_hash": text_hash(self.model_text),
            "analysis": self.analysis,
            "options": self.options,
            "points": len(self.points),
            "scheduler": self.scheduler or f"LocalCluster({self.workers} processes)",
            "version": __version__,
        }


def columns(rows: list[dict]) -> list[str]:
    """Every key of every row, in first-seen order (failed rows lack the results)."""
    return list(dict.fromkeys(k for r in rows for k in r))
