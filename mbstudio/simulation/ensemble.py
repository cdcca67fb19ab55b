"""Many runs of one mechanism at once: initial conditions and parameter sets.

    results = simulate_ensemble(model, 1.0, initial=[[0.1], [0.2]], velocities=[[0.0], [1.0]])
    results = simulate_ensemble(model, 1.0, parameters=[{"L2": 0.30}, {"L2": 0.32}])

Runs that share their parameters share one compiled engine and are integrated as one system by CVODES, the
compiled right-hand side mapped over the runs (one native call evaluates all of them); each parameter set
gets its own engine, since the engine folds parameter values into its code.

A model with contact pairs is not: its runs are cut into legs at their own states (contact_watch.py: no leg can
carry a shape through another, and each touch-down is located), which one system of all the runs could not follow
without cutting every run at every other's instants. Each of its runs is the run simulated alone, so that it holds
the same guarantee and computes the same samples, bit for bit.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence

import numpy as np

from .. import __version__
from ..dynamics.engine import engine
from ..dynamics.forces import AppliedForces
from ..kinematics.mechanism import Mechanism
from ..model import Model, dumps, loads
from ..model.errors import ModelError
from ..model.hashing import model_hash
from .charts import singularity
from .contact_watch import pair_watch
from .integrators import IntegrationError, integrate
from .method_choice import AUTO, chosen_method
from .run import (
    ATOL,
    METHODS,
    RTOL,
    Clock,
    Provenance,
    SimulationResult,
    compiled_series,
    full_states,
    law_state_result,
    simulate,
)
from .stops import annotate, has_impact_stops

MAX_RUNS = 10_000


def simulate_ensemble(
    model: Model,
    t_end: float,
    initial: Sequence | np.ndarray | None = None,
    velocities: Sequence | np.ndarray | None = None,
    parameters: Sequence[dict[str, float]] | None = None,
    method: str | None = AUTO,
    rtol: float = RTOL,
    atol: float = ATOL,
    samples: int = 201,
    progress: Callable[[float], None] | None = None,
    cancel: threading.Event | Callable[[], bool] | None = None,
) -> list[SimulationResult]:
    """One result per run. `initial` (M, n_ind): the independent coordinates to start from (the loops are
    closed there), default the document's; `velocities` (M, n_ind), default rest; `parameters`: per run, the
    model parameters to change. Sequences of length 1 are used for every run. `method` "auto" (or None) chooses
    from the model as `simulate` does (method_choice.py)."""
    choice = chosen_method(model, method)
    method = choice.method
    if method not in METHODS:
        raise ValueError(f"unknown integration method {method!r}; choose one of {', '.join((AUTO, *METHODS))}")
    if has_impact_stops(model):
        raise ModelError(
            "stops",
            "an ensemble runs as one system, whose impacts cannot cut each run at its own instants",
            "impact stops",
            "one simulation per run (mbstudio simulate, or simulate() in a loop), or compliant stops",
        )
    runs = _runs(model, initial, velocities, parameters)
    times = np.linspace(0.0, t_end, samples)
    clock = Clock(t_end, progress, cancel) if progress or cancel else None
    results: list[SimulationResult | None] = [None] * len(runs)
    for changes, members in _groups(runs).items():
        start = time.perf_counter()
        variant = _with_parameters(model, dict(changes))
        mech = Mechanism(variant)
        eng = engine(variant, mech=mech)
        if pair_watch(eng) is not None:  # each run in its own legs: simulated alone
            _starting_states(mech, [runs[i] for i in members])  # the runs' values checked as the system's are
            for index in members:
                options = {"samples": samples, "cancel": cancel, "error_estimate": False}
                if progress is not None:
                    finished = sum(result is not None for result in results)
                    options["progress"] = functools.partial(_share, progress, finished, len(runs))
                member, velocities = _started(variant, mech, runs[index])
                results[index] = simulate(member, t_end, method, rtol, atol, velocities=velocities, **options)
                results[index].provenance.method_reason = choice.reason
            continue
        starts = eng.pack(*_starting_states(mech, [runs[i] for i in members]))
        try:
            y, calls, _ = integrate(eng, times, starts, method, rtol, atol, clock)
        except IntegrationError as error:
            raise RuntimeError(str(error) + singularity(eng, error.state, starts[0])) from None
        forces = AppliedForces(mech)
        seconds = (time.perf_counter() - start) / len(members)
        for column, index in enumerate(members):
            states = full_states(eng, times, y[:, column])
            if eng.law_states:  # the force laws' own states: the series at the forces they give
                result = law_state_result(mech, forces, times, *states, eng.laws_states(y[:, column]))
            else:
                result = compiled_series(eng, mech, forces, times, *states)
            annotate(result, mech, forces)  # the compliant stops' contacts, the limits passed
            provenance = (model_hash(variant), method, rtol, atol, seconds, __version__, calls // len(members))
            result.provenance = Provenance(*provenance)
            result.provenance.law_states = [name for name, _, _ in result.law_states]
            result.provenance.method_reason = choice.reason
            results[index] = result
    if progress is not None:
        progress(1.0)
    return results


def _share(progress: Callable[[float], None], finished: int, count: int, fraction: float) -> None:
    """The progress of the ensemble where `finished` of its `count` runs are done and the next is at `fraction`."""
    progress((finished + fraction) / count)


def _started(variant: Model, mech: Mechanism, run: tuple) -> tuple:
    """The document of one run simulated alone (its parameters already set: `variant`) with the run's independent
    coordinates as its initial values (NaN: the document's), and the run's velocities (None: rest)."""
    _, q, qd = run
    member = loads(dumps(variant))
    if q is not None:
        coordinates = {c.name: c for joint in member.joints for c in joint.coordinates}
        for name, value in zip(mech.independent, q, strict=True):
            if not np.isnan(value):
                coordinates[name].initial = float(value)
    return member, None if qd is None else np.asarray(qd, dtype=float)


def _runs(model, initial, velocities, parameters) -> list[tuple]:
    """(parameters as sorted items, q_ind or None, q̇_ind or None) per run, the lengths checked."""
    columns = {
        "initial": None if initial is None else np.atleast_2d(np.asarray(initial, dtype=float)),
        "velocities": None if velocities is None else np.atleast_2d(np.asarray(velocities, dtype=float)),
        "parameters": None if parameters is None else list(parameters),
    }
    lengths = {len(v) for v in columns.values() if v is not None} - {1}
    if len(lengths) > 1:
        sizes = {k: len(v) for k, v in columns.items() if v is not None}
        raise ValueError(f"the ensemble's columns have different numbers of runs: {sizes}")
    count = lengths.pop() if lengths else 1
    if count > MAX_RUNS:
        raise ValueError(f"{count} runs: at most {MAX_RUNS} in one ensemble")

    def pick(values, i):
        return None if values is None else values[0 if len(values) == 1 else i]

    return [
        (
            tuple(sorted((pick(columns["parameters"], i) or {}).items())),
            *(pick(columns[c], i) for c in ("initial", "velocities")),
        )
        for i in range(count)
    ]


def _groups(runs: list[tuple]) -> dict[tuple, list[int]]:
    groups: dict[tuple, list[int]] = {}
    for i, (changes, _, _) in enumerate(runs):
        groups.setdefault(changes, []).append(i)
    return groups


def _with_parameters(model: Model, changes: dict[str, float]) -> Model:
    """A copy of the model with the named parameters set; an unknown name is refused by name."""
    variant = loads(dumps(model))
    known = {p.name: p for p in variant.parameters}
    for name, value in changes.items():
        if name not in known:
            raise ModelError(
                "parameters", f"the ensemble names {name!r}, which is not a parameter", name, ", ".join(known)
            )
        known[name].value = float(value)
    return loads(dumps(variant))  # validated again with the new values


def _starting_states(mech: Mechanism, runs: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """(M, n) and (M, n_ind): the loops closed at each run's independent coordinates, and its velocities."""
    k = len(mech.independent)
    document = mech.assemble(None)
    own = document[0, list(mech.partition.independent)]
    wanted = np.array([own if q is None else np.where(np.isnan(q), own, q) for _, q, _ in runs])  # NaN: the document's
    if wanted.shape[1] != k:
        raise ValueError(
            f"initial values: {wanted.shape[1]} per run, the model has {k} ({', '.join(mech.independent)})"
        )
    q = mech.assemble(wanted, guess=np.repeat(document, len(runs), axis=0))
    v = np.array([np.zeros(k) if qd is None else qd for _, _, qd in runs])
    if v.shape[1] != k:
        raise ValueError(f"velocities: {v.shape[1]} per run, the model has {k} ({', '.join(mech.independent)})")
    return q, v
