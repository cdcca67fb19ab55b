"""Parameter studies: one analysis at every point of a grid of model parameters, each point a task on Dask.

    study = Study(model, {"D12": grid("D12=0.30:0.34:21")}, "base_parameters", {"method": "vp", "digits": 50})
    rows = study.run(progress=print)      # one dict per point: the varied values, then the scalar results

A point loads the model's text, sets the varied parameters, runs the analysis and reduces it to scalars
(`ANALYSES`). The analyses and their options are the jobs' (the same names and defaults as the window, the
command line and jobs/options.py); the names studies had before ("basepar", "simulate", "linearize") are still
read, with the defaults they had then (`OLD_NAMES`), and the study says so in its notes. Whatever goes wrong at
a point (it cannot assemble, a singular actuation) stays in that point's row as its `error`, and the study goes
on. The points run on `dask.distributed`: an embedded LocalCluster of worker processes by default (nothing to
start; its connections encrypted and authenticated by a certificate made for it, so that no other user of the
machine can send it work), or any scheduler given by its address (tcp:// or tls://, with Dask's security
configuration for TLS), to scale out. Each row carries its own provenance (the varied model's hash, time taken,
worker, version).

Before the first point, every worker is asked for its mbstudio version: a worker without mbstudio, or with
another version, is named and the study refused (such a worker failed each point it was sent, for ever). While
the study runs, `run` hands the rows so far to `checkpoint` (the first point at once, then every few seconds,
and at the end however the run ends), so a study stopped, cancelled or failed leaves its finished points, the
others listed as not run. The local cluster serves no HTTP pages (Dask's status pages and dashboard) unless
asked for (`dashboard=True`: then on 127.0.0.1 only).
"""

from __future__ import annotations

import itertools
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np

from .. import __version__
from ..model import Model, ModelError, dumps, loads
from .options import (
    BaseParametersOptions,
    LinearizationOptions,
    SimulationOptions,
    options_of,
)
from .tasks import named_trajectory, text_hash

MAX_POINTS = 10_000  # a grid larger than this is a typing mistake more often than a plan


def grid(spec: str) -> tuple[str, np.ndarray]:
    """'NAME=a:b:n' -> (NAME, n equally spaced values from a to b, both included); 'NAME=v' -> one value."""
    name, sep, values = spec.partition("=")
    parts = values.split(":")
    try:
        numbers = [_number(p, float) for p in parts[:2]] + [_number(p, int) for p in parts[2:]]
    except ValueError:
        numbers = []
    if not sep or not name.strip() or len(parts) not in (1, 3) or not numbers:
        raise ModelError("vary", "is not NAME=start:stop:count or NAME=value", spec, "e.g. D12=0.30:0.34:21")
    if not all(math.isfinite(x) for x in numbers[:2]):
        raise ModelError("vary", "needs finite values", spec, "numbers such as 0.3 or -1e-2 (not nan or inf)")
    if len(parts) == 1:
        return name.strip(), np.array(numbers[:1])
    start, stop, count = numbers
    if not 1 <= count <= MAX_POINTS:
        raise ModelError("vary", "needs a count from 1", spec, f"a count up to {MAX_POINTS}")
    return name.strip(), np.linspace(start, stop, count)


def _number(text: str, kind: type[float] | type[int]) -> float:
    """kind(text), without what float() and int() also read: '1_0' (10) and digits of other scripts ('١')."""
    if "_" in text or not text.isascii():
        raise ValueError(text)
    return kind(text)


def grids(specs: Iterable[str]) -> dict[str, np.ndarray]:
    """Several `grid` specifications, each name once (a second one replaced the first, silently)."""
    out: dict[str, np.ndarray] = {}
    for spec in specs:
        name, values = grid(spec)
        if name in out:
            raise ModelError("vary", f"gives {name} a second grid", spec, "each parameter varied once")
        out[name] = values
    return out


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
def _base_parameters(model: Model, options: dict) -> dict:
    """Ranks, ridge depths (log10 σ_r/σ_r+1) and W's condition number σ1/σ_r per route."""
    from ..identification.pipeline import base_parameters

    opts = BaseParametersOptions.from_dict(options)
    trajectory = named_trajectory(model, opts.trajectory)
    run = base_parameters(model, opts.method, opts.digits, opts.samples, opts.eliminate, opts.priority, trajectory)
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
    series = result.data.series
    out = {f"peak {name}": float(np.abs(v).max()) for name, v in series.items() if name.startswith("actuator:")}
    out.update({"max " + n: float(np.max(v)) for n, v in series.items() if n.startswith("constraint_residual")})
    return out


def _simulation(model: Model, options: dict) -> dict:
    """Energies and the loop closure over a simulation from the document's initial state."""
    from ..kinematics import Mechanism
    from ..simulation.run import initial_velocities, simulate

    opts = SimulationOptions.from_dict(options)
    mech = Mechanism(model)
    velocities = initial_velocities(dict(opts.velocities), mech.independent_kinds)
    # a study's point files its outputs, not the run's error estimate: its companion run is saved
    result = simulate(
        mech, opts.t_end, opts.method, opts.rtol, opts.atol, opts.samples, velocities=velocities, error_estimate=False
    )
    total = result.total
    return {
        "peak_kinetic_energy": float(result.kinetic.max()),
        "energy_change": float(abs(total - total[0]).max()),
        "max_constraint_residual": float(result.residual.max()),
        "rhs_evaluations": result.provenance.rhs_evaluations,
    }


def _linearization(model: Model, options: dict) -> dict:
    """The modes about the operating point of the options (LinearizationOptions `at`): the lowest and highest
    natural frequencies, the smallest damping ratio, the largest real part of the eigenvalues (> 0: unstable),
    and where the point lies."""
    from ..linear.linear_model import linearize
    from .tasks import linear_point

    opts = LinearizationOptions.from_dict(options)
    lin = linearize(model, linear_point(model, opts), opts.inputs or None, opts.outputs or None)
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
    "base_parameters": _base_parameters,
    "kinematics": _kinematics,
    "simulation": _simulation,
    "linearization": _linearization,
}
# the names studies had before they took the jobs' (saved scripts, tables), and the defaults they had under them
OLD_NAMES: dict[str, tuple[str, Callable[[dict], dict]]] = {
    "basepar": ("base_parameters", lambda o: {"method": "vp" if o.get("digits") else "dp", "digits": [50]}),
    "simulate": ("simulation", lambda o: {"samples": 101}),
    "linearize": ("linearization", lambda o: {"at": "equilibrium" if o.get("equilibrium", True) else "initial"}),
}


def study_analysis(analysis: str, options: Mapping | None = None) -> tuple[str, dict, list[str]]:
    """The analysis' name, its options in full (jobs/options.py; a ModelError naming the first that no point
    could run with, before any runs) and notes: an old name is read as the new one with the defaults it had."""
    options, notes = dict(options or {}), []
    if analysis in OLD_NAMES:
        new, old_defaults = OLD_NAMES[analysis]
        notes.append(f"'{analysis}' is read as '{new}' (the name of the window and the jobs), with its old defaults")
        options = old_defaults(options) | {k: v for k, v in options.items() if k != "equilibrium"}
        analysis = new
    if analysis not in ANALYSES:
        raise ModelError("analysis", "is not a study analysis", analysis, ", ".join(ANALYSES))
    return analysis, options_of(analysis, options).to_dict(), notes


def evaluate_point(model_text: str, point: dict[str, float], analysis: str, options: dict) -> dict:
    """One point: the varied values, the analysis' scalars, and the point's provenance; never raises."""
    start = time.perf_counter()
    row: dict = dict(point)
    try:
        model = loads(model_text)
        for p in model.parameters:
            p.value = point.get(p.name, p.value)
        text = dumps(loads(dumps(model)))  # validated again with the new values
        name, full, _ = study_analysis(analysis, options)
        row.update(ANALYSES[name](loads(text), full))
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


# ------------------------------------------------------------------------------------------ the cluster
SCHEMES = ("tcp", "tls")
CONNECT_SECONDS = 10  # to reach the scheduler
WORKER_SECONDS = 30  # for a first worker to join it (then for one to come back, while the study runs)
CHECKPOINT_SECONDS = 2.0  # between two writes of the rows so far
NOT_RUN = "not run: the study stopped before this point"
QUIET = {  # no HTTP pages from the scheduler or the workers (their servers answer 404), on no well-known port
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
}


def scheduler_address(text: str) -> str:
    """'tcp://HOST:PORT' or 'tls://HOST:PORT' (tcp:// when no scheme is given; IPv6 hosts in brackets); a
    ModelError for anything else, before any connection is tried."""
    expected = "tcp://HOST:PORT or tls://HOST:PORT, e.g. tcp://192.168.1.10:8786"
    scheme, sep, rest = text.strip().partition("://")
    scheme, rest = (scheme.lower(), rest) if sep else ("tcp", text.strip())
    if scheme not in SCHEMES:
        raise ModelError("--scheduler", f"uses {scheme}://, which MB Studio does not connect through", text, expected)
    found = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5})", rest)
    if found is None or not 1 <= int(found[2]) <= 65535:
        raise ModelError("--scheduler", "is not an address", text, expected)
    return f"{scheme}://{found[1]}:{int(found[2])}"


def load_security(path: str | Path):
    """Dask's security configuration (TLS certificates, which also authenticate the client) from a YAML file
    in Dask's configuration format (its `distributed.comm` part: require-encryption and tls: ca-file,
    client: cert, key); a ModelError naming the file for what is not there or cannot be read."""
    import dask.config
    import yaml
    from distributed.security import Security  # its configuration's defaults first (see Study.start)

    expected = "distributed: {comm: {tls: {ca-file: CA.pem, client: {cert: CERT.pem, key: KEY.pem}}}}"
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ModelError(f"--security {path}", f"cannot be read: {exc}", expected=expected) from None
    comm = data.get("distributed", {}).get("comm") if isinstance(data, dict) else None
    if not isinstance(comm, dict) or not isinstance(comm.get("tls"), dict):
        raise ModelError(f"--security {path}", "has no distributed.comm.tls section", expected=expected)
    try:
        with dask.config.set(_dotted(comm, "distributed.comm")):
            security = Security()
            context = security.get_connection_args("client")["ssl_context"]  # the certificates read now
    except (OSError, ValueError, TypeError) as exc:  # ssl.SSLError is an OSError
        raise ModelError(f"--security {path}", f"cannot be used: {exc}", expected=expected) from None
    if context is None:  # Dask makes none without both: the connection would fail for want of it
        raise ModelError(f"--security {path}", "lacks tls.ca-file or tls.client.cert", expected=expected)
    return security


def _dotted(tree: dict, prefix: str) -> dict:
    """{'tls': {'client': {'cert': x}}} -> {'prefix.tls.client.cert': x}: keys as dask.config.set takes them
    without replacing their neighbours."""
    out = {}
    for key, value in tree.items():
        name = f"{prefix}.{key}"
        out |= _dotted(value, name) if isinstance(value, dict) else {name: value}
    return out


def worker_version() -> str:
    """Run on each worker by reference: a worker without mbstudio cannot even unpickle it."""
    return __version__


class StudyStopped(Exception):
    """The study stopped before every point was done (no worker left); the points done are kept."""


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
        security: str | Path | None = None,
        dashboard: bool = False,
    ) -> None:
        """`scheduler`: a scheduler's address (None: a local cluster of `workers` processes); `security`: a file
        of Dask's security configuration for it (see `load_security`); `dashboard`: the local cluster serves
        Dask's dashboard (`dashboard_link` says where)."""
        self.analysis, self.options, self.notes = study_analysis(analysis, options)
        self.model_text = dumps(model)
        self.points = points(model, vary)
        self.grid = {name: [float(x) for x in values] for name, values in vary.items()}
        self.scheduler = None if scheduler is None else scheduler_address(scheduler)
        if security is not None and self.scheduler is None:
            raise ModelError("--security", "applies to a --scheduler", str(security), "--scheduler tls://HOST:PORT")
        if self.scheduler and self.scheduler.startswith("tls://") and security is None:
            raise ModelError("--scheduler", "is tls://, which needs the certificates", scheduler, "--security FILE")
        self.security = None if security is None else load_security(security)
        self.workers, self.dashboard = workers, dashboard
        self.client = None
        self.futures: list = []
        self.results: list[dict | None] = [None] * len(self.points)

    def start(self) -> None:
        """Connect (or start the local cluster), check every worker's mbstudio, then submit every point."""
        import dask.config
        import distributed  # noqa: F401  its defaults first: a key set before them would take them away after

        with dask.config.set({} if self.dashboard else QUIET):
            self.client = self._connect()
        try:
            self._check_workers()
        except BaseException:
            self.close()
            raise
        self.futures = [
            None if done is not None else self._submit(p) for p, done in zip(self.points, self.results, strict=True)
        ]

    def _submit(self, point: dict[str, float]):
        return self.client.submit(evaluate_point, self.model_text, point, self.analysis, self.options, pure=False)

    def resume(self, provenance: Mapping, rows: list[dict]) -> int:
        """Take the points a previous run of this same study finished without error (its table's `provenance`
        and `rows`, as written): the same model (by its hash), analysis, options and grid, else nothing is
        taken. The rows are kept as they were written (their columns in that table's units). How many points
        are taken."""
        mine = self.provenance()
        try:
            analysis, options, _ = study_analysis(provenance.get("analysis"), provenance.get("options"))
        except (ModelError, TypeError):  # not a study this version can read: every point is computed
            return 0
        same = (analysis, options) == (mine["analysis"], mine["options"])
        same &= all(provenance.get(key) == mine[key] for key in ("model_hash", "grid"))
        if not same or len(rows) != len(self.points):
            return 0
        for k, row in enumerate(rows):
            if self.results[k] is None and not row.get("error") and row.get("model_hash"):
                self.results[k] = row
        return sum(r is not None for r in self.results)

    def _connect(self):
        from dask.distributed import Client, LocalCluster

        if not self.scheduler:
            security = _temporary_security()
            cluster = LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",  # None means Dask's 8787
                scheduler_kwargs={"dashboard": self.dashboard},
                protocol="tls://" if security else "tcp://",
                security=security,
            )
            return Client(cluster, security=security)
        try:
            return Client(self.scheduler, timeout=f"{CONNECT_SECONDS}s", security=self.security)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:  # unreachable, refused, not Dask, bad TLS
            raise ModelError(
                "--scheduler",
                f"cannot connect to {self.scheduler}: {exc}",
                expected="a running `dask scheduler` there (and for tls://, certificates it accepts)",
            ) from None

    def _check_workers(self) -> None:
        """At least one worker, and mbstudio of this version on each."""
        try:
            self.client.wait_for_workers(1, timeout=WORKER_SECONDS)
        except TimeoutError:
            raise ModelError(
                f"--scheduler {self.scheduler}",
                f"has no worker (none joined within {WORKER_SECONDS} s)",
                expected="`dask worker ADDRESS` started on the machines that compute",
            ) from None
        for address, answer in self.client.run(worker_version, on_error="return").items():
            if isinstance(answer, BaseException):
                reason = "mbstudio is not installed there" if "mbstudio" in str(answer) else "it cannot run mbstudio"
                raise ModelError(f"worker {address}", f"{reason} ({answer})", expected=_installed())
            if answer != __version__:
                raise ModelError(f"worker {address}", f"runs mbstudio {answer}", answer, _installed())

    def poll(self) -> int:
        """Collect finished points; how many are done."""
        for k, future in enumerate(self.futures):
            if self.results[k] is None and future is not None and future.done():
                self.results[k] = self._collect(k, future)
        return sum(r is not None for r in self.results)

    def _collect(self, k: int, future) -> dict:
        if future.status == "finished":
            return future.result()
        # the point was cancelled, or its worker died: the row stays, with what happened
        reason = "cancelled" if future.status == "cancelled" else f"failed on its worker: {future.exception()}"
        return {**self.points[k], "error": reason}

    def run(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
        checkpoint: Callable[[list[dict]], None] | None = None,
    ) -> list[dict]:
        """Start, wait for every point (reporting done/total), close the cluster; the rows in point order.
        `checkpoint(rows)`: the rows so far, as they come (see the module's docstring), last when the run
        ends, whether it finished, was cancelled or stopped (an exception, a signal)."""
        if all(r is not None for r in self.results):  # every point taken from a previous run: nothing to send
            if checkpoint:
                checkpoint(self.rows())
            return self.rows()
        self.start()
        try:
            self._wait(progress, cancel, checkpoint)
        finally:
            try:
                if checkpoint:
                    checkpoint(self.rows())
            finally:
                self.close()
        return self.rows()

    def _wait(self, progress, cancel, checkpoint) -> None:
        done, written, asked = sum(r is not None for r in self.results), None, time.monotonic()
        workers_seen = asked
        while done < len(self.points):
            time.sleep(0.1)
            now, finished = time.monotonic(), self.poll()
            if finished > done:
                done = finished
                if progress:
                    progress(done, len(self.points))
                if checkpoint and (written is None or now - written >= CHECKPOINT_SECONDS):
                    checkpoint(self.rows())
                    written = now
            if cancel and cancel():
                self.cancel()
                return
            if now - asked >= CHECKPOINT_SECONDS:  # a question to the scheduler: not at every turn
                asked = now
                if self.client.scheduler_info(n_workers=1).get("workers"):
                    workers_seen = now
                elif now - workers_seen > WORKER_SECONDS:
                    raise StudyStopped(f"no worker has been connected for {WORKER_SECONDS} s")

    def rows(self) -> list[dict]:
        """Finished points in grid order; a point still missing has an error saying so."""
        return [r if r is not None else {**p, "error": NOT_RUN} for r, p in zip(self.results, self.points, strict=True)]

    def cancel(self) -> None:
        if self.client is not None:
            self.client.cancel([f for f in self.futures if f is not None and not f.done()])

    def close(self) -> None:
        if self.client is not None:
            cluster = self.client.cluster
            self.client.close()
            if cluster is not None and not self.scheduler:
                cluster.close()
            self.client = None

    def provenance(self) -> dict:
        """Where the rows came from. `complete`: every point done without error, so that a rerun has nothing
        left to compute (a failed point is tried again); `points_failed`: the points done with an error."""
        done = [r for r in self.results if r is not None]
        failed = sum(1 for r in done if r.get("error"))
        return {
            "model_hash": text_hash(self.model_text),
            "analysis": self.analysis,
            "options": self.options,
            "grid": self.grid,
            "points": len(self.points),
            "points_done": len(done),
            "points_failed": failed,
            "complete": len(done) == len(self.points) and failed == 0,
            "scheduler": self.scheduler or f"LocalCluster({self.workers} processes)",
            "version": __version__,
            "notes": self.notes,
        }


def _temporary_security():
    """TLS with a certificate made for this cluster only (held in memory): the local cluster's scheduler
    listens on 127.0.0.1, where any user of the machine could otherwise send it code to run. None (plain
    tcp) without the cryptography package that makes the certificate."""
    from distributed.security import Security

    try:
        return Security.temporary()
    except ImportError:
        return None


def _installed() -> str:
    return f"mbstudio {__version__} installed for the Python that runs `dask worker` (pip install mbstudio)"
