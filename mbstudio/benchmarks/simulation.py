"""Whole simulations and their right-hand sides against an independent Pinocchio + scipy reference, the first run
in a fresh process, the engines' builds (cold, into an empty cache, and loaded from it), and the fixed costs of a
run.

The reference (io/pinocchio_reference.py) models the mechanism by hand in Pinocchio: plain joints, the cut joints
as rigid contacts solved by `constraintDynamics`; for a tree, its right-hand side is a bare `pin.aba`. Where the
model has force elements both sides compute them (ours compiled, the reference's in Python with Pinocchio's
Jacobians); where it has none, neither does, and each row says which.

Whole runs are compared at matched accuracy, not at equal nominal tolerance (two integrators at the same rtol
reach different errors): a common tight reference, the Pinocchio model integrated by DOP853 at rtol = atol =
1e-13, and each side's tolerance (rtol from 1e-4 down by tenths, atol = rtol / 100) tightened until its largest
coordinate error against it over the 201 output times is at most `ERROR_TARGET`, then refined by bisection
(`_loosest`); the row gives the tolerances
found and the errors. Ours runs `simulate` (CVODES, outputs included; without its error estimate, which the reference
does not make either: it costs 0.6-1.3 times the run, docs/accuracy.md), the reference solve_ivp (DOP853). Every
time is the registry's harness: thread CPU time, the two sides interleaved.

Targets: whole runs at most 0.5x the reference's time for the closed loops and 1.0x for the chains and the
humanoid; a cold build within 30 s at 100 coordinates; `simulate()`'s fixed cost within 2 ms and its output
building within 5 ms for 201 samples of the SLA; a document's first run in a process within 5 ms of its next;
the vehicle at 50 times real time.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

import numpy as np

from .. import samples
from .models import delta_drive, driven_delta, spatial_chain, sprung_sla, talos
from .registry import (
    Side,
    benchmark,
    compare,
    compared_row,
    comparison_of,
    interleave,
    measure,
    row,
    sample_count,
    target_row,
)

SIMULATED_SECONDS = 2.0
TREE_SECONDS = 1.0  # the chains' and the humanoid's runs (a chaotic chain needs many small steps)
CHAIN_LINKS = (6, 12, 25, 50, 100)
ERROR_TARGET = 1e-6  # rad or m: the largest coordinate error over the outputs each side's tolerance must reach
TIGHT_TOLERANCE = 1e-13  # the common reference's rtol and atol (DOP853)
LADDER = tuple(10.0**-k for k in range(4, 13))  # the rtols tried, loosest first; atol = rtol / 100
BISECTIONS = 3  # then within a factor 10^(1/8) = 1.33 of the loosest rtol meeting the target
OUTPUTS = 201
BUILD_TARGET_S = 30.0
LOAD_TARGET_S = 0.1  # a cached engine: no tracing, only the library's load and the model's reading
FIXED_COST_TARGET_S = 2e-3
OUTPUT_TARGET_S = 5e-3
FIRST_RUN_TARGET_S = 5e-3  # what a document's first run in a process may cost over its next
VEHICLE_SECONDS = 10.0  # the vehicle sample's drive over its bump
VEHICLE_TARGET = 1 / 50  # CPU s per simulated s: 50 times real time


def _closed_loops() -> dict:
    """The closed-loop models the `simulation` rows run, their simulated seconds and the reference's actuator
    torques where it is given them as plain functions (`_reference`). The 3-RUS Delta is
    unactuated: it falls under gravity and reaches a singular configuration at 0.27 s, so its run stops at 0.2 s."""
    return {
        "four_bar": (samples.load("four_bar"), SIMULATED_SECONDS, None),
        "sla_suspension": (sprung_sla(), SIMULATED_SECONDS, None),
        "delta_3rr2rrr": (driven_delta(), SIMULATED_SECONDS, delta_drive()),
        "delta_3rus": (samples.load("delta_3rus"), 0.2, None),
    }


def _trees() -> dict:
    """The trees the `trees` rows run: (model, its URDF or None) by name."""
    trees = {f"chain {links}": (spatial_chain(links), None) for links in CHAIN_LINKS}
    with contextlib.suppress(FileNotFoundError):
        model, urdf = talos()
        model.forces = []  # its joints' friction: the reference models springs and actuators only
        model.couplings = []  # its grippers' mimic joints, which Pinocchio's reading of the URDF leaves free
        trees["talos"] = (model, urdf)
    return trees


@benchmark("simulation")
def _simulation(states: int) -> list[dict]:
    """The four-bar, the sprung SLA and both Deltas against the Pinocchio reference with rigid contacts; the
    SLA's fixed costs. `states` does not apply."""
    models = _closed_loops()
    rows = [r for name, (model, t, drive) in models.items() for r in _run_rows(name, model, t, 0.5, drive=drive)]
    rows += [_first_run_extra_row(name, model) for name, (model, _, _) in models.items()]
    return rows + _fixed_cost_rows("sla_suspension", models["sla_suspension"][0])


@benchmark("trees")
def _trees_rows(states: int) -> list[dict]:
    """Spatial chains of 6 to 100 links under gravity and Talos' full body (welded base, without its joints'
    friction, its grippers' mimic joints free) against Pinocchio's ABA integrated by solve_ivp. Talos with a
    floating base is not run: the reference refuses a free joint (Pinocchio holds a quaternion there). `states`
    does not apply."""
    return [r for name, (model, urdf) in _trees().items() for r in _run_rows(name, model, TREE_SECONDS, 1.0, urdf)]


@benchmark("builds")
def _builds(states: int) -> list[dict]:
    """Each simulated model's engine built cold into an empty cache (minutes in all) and loaded from the cache.
    `states` does not apply."""
    models = {k: m for k, (m, *_) in {**_closed_loops(), **_trees()}.items()} | {"vehicle": samples.load("vehicle")}
    return [r for name, model in models.items() for r in _build_rows(name, model)[0]]


@benchmark("vehicle")
def _vehicle(states: int) -> list[dict]:
    """The vehicle sample's 10-s drive over its bump (samples/vehicle.mbs: 30 bodies, 12 loops, 47 tree
    coordinates) against the target of 50 times real time in CPU time, at the default tolerances and at rtol
    1e-6 (its motion within 3 µm and its tyre loads within 0.1 N of the default's), each with its chassis'
    largest error against a run at rtol 1e-13 (the default's must stay within 1e-6); and the default settings as a
    user gets them, with the error estimate's companion run (docs/accuracy.md); and the default tolerances with CVODES
    through CasADi's integrator instead of our driver (simulation/cvodes_driver.py). No reference simulates it:
    Pinocchio has no tyres, stops or servos. `states` does not apply."""
    from ..dynamics.engine import engine
    from ..simulation.integrators import through_casadi
    from ..simulation.run import simulate

    model = samples.load("vehicle")
    coordinates = engine(model).mech.coordinates  # built or loaded before any timing (the `builds` rows time that)
    ride = next(j for j in model.joints if j.name == "ride")  # the chassis' free joint
    chassis = [coordinates.index(c.name) for c in ride.coordinates]
    tight = simulate(model, VEHICLE_SECONDS, rtol=TIGHT_TOLERANCE, atol=TIGHT_TOLERANCE / 100, error_estimate=False)
    settings = (
        ("default tolerances", {"error_estimate": False}),
        ("rtol 1e-6, atol 1e-8", {"rtol": 1e-6, "atol": 1e-8, "error_estimate": False}),
        # what `mbstudio simulate` and the window do: the run and its error estimate's companion run
        ("default settings with the error estimate", {}),
    )
    rows = [_vehicle_row(model, label, options, chassis, tight) for label, options in settings]
    with through_casadi():  # the same run with CVODES through CasADi's integrator, as before our own driver
        rows.append(_vehicle_row(model, "default tolerances, CVODES through CasADi", settings[0][1], chassis, tight))
    return rows


def _vehicle_row(model, label: str, options: dict, chassis: list[int], tight) -> dict:
    """The vehicle's drive at `options`: CPU s per simulated s against the target, and its chassis' error."""
    from ..simulation.run import simulate

    run = simulate(model, VEHICLE_SECONDS, **options)
    drive = Side(functools.partial(simulate, **options), [(model, VEHICLE_SECONDS)])
    timing = measure(drive, min_samples=3, max_samples=10)
    return target_row(
        f"vehicle drive, {label} (s per simulated s)",
        _per_second(timing, VEHICLE_SECONDS),
        VEHICLE_TARGET,
        real_time_factor=VEHICLE_SECONDS / timing.median,
        rhs_evaluations=run.provenance.rhs_evaluations,
        max_constraint_residual=float(run.residual.max()),
        # the chassis' six coordinates (m, rad) against a run at rtol 1e-13 over the outputs
        chassis_error=float(np.abs(run.q[:, chassis] - tight.q[:, chassis]).max()),
    )


def _per_second(timing, seconds: float):
    """A timing per run as one per simulated second."""
    from dataclasses import replace

    return replace(timing, median=timing.median / seconds, iqr=timing.iqr / seconds)


def _reference(mech, urdf=None, drive: dict | None = None):
    """The Pinocchio reference of `mech` (read from `urdf` if given) and its right-hand side, bare: ABA (or
    constraintDynamics) with the force elements' torques only where the model has force elements; and which.
    `drive`: the actuators' torques by coordinate as plain functions of time, in place of the reference's
    evaluation of the document's formulas (our expression evaluator in Python, which no Pinocchio user pays)."""
    import pinocchio as pin

    from ..io.pinocchio_reference import ClosedLoopReference

    reference = ClosedLoopReference.of(mech) if urdf is None else _urdf_reference(mech, urdf)
    if drive is not None:
        names = [mech.coordinates[k] for k in reference.ours]
        actuators = [(names.index(c), torque) for c, torque in drive.items()]
        if sorted(i for i, _ in actuators) != sorted(i for i, _ in reference.actuators):
            raise ValueError(f"the drive's coordinates {sorted(drive)} are not the model's actuated coordinates")
        reference.actuators = actuators
    model, data, n = reference.model, reference.data, reference.model.nq
    forced = bool(reference.springs or reference.actuators)
    zero = np.zeros(model.nv)
    if mech.topology.cut:
        contacts, contact_data, settings = reference.contacts, reference.contact_data, reference.settings

        def accelerations(t, q, v, tau):
            return pin.constraintDynamics(model, data, q, v, tau, contacts, contact_data, settings)
    else:

        def accelerations(t, q, v, tau):
            return pin.aba(model, data, q, v, tau)

    if forced:

        def rhs(t: float, y: np.ndarray) -> np.ndarray:
            q, v = y[:n], y[n:]
            return np.concatenate([v, accelerations(t, q, v, reference.forces(t, q, v))])
    else:

        def rhs(t: float, y: np.ndarray) -> np.ndarray:
            return np.concatenate([y[n:], accelerations(t, y[:n], y[n:], zero)])

    method = "pinocchio.constraintDynamics (rigid contacts)" if mech.topology.cut else "pinocchio.aba"
    forces = (
        "forces on both sides (the reference's springs and actuators in Python)" if forced else "no forces either side"
    )
    return reference, rhs, f"{method}, {forces}"


def _urdf_reference(mech, urdf):
    """A tree as Pinocchio reads it from its URDF (pin.buildModelFromUrdf), without force elements."""
    import pinocchio as pin

    from ..io.pinocchio_reference import ClosedLoopReference

    model = pin.buildModelFromUrdf(str(urdf))
    ours = np.array([mech.coordinates.index(model.names[j]) for j in range(1, model.njoints)])
    return ClosedLoopReference(model, model.createData(), [], [], None, ours, [], [])


def _loosest(error_at: Callable[[float], tuple[float, object]]) -> tuple[float, float, object]:
    """The loosest rtol whose run's error is within ERROR_TARGET, its error and its run: down the ladder by
    tenths, then BISECTIONS halvings of the logarithm between the last rtol that missed and the first that met
    the target (a tenth is too coarse: two sides could differ a hundredfold in error); the tightest rtol of the
    ladder if none meets it."""
    missed = None
    for rtol in LADDER:
        found = (rtol, *error_at(rtol))
        if found[1] <= ERROR_TARGET:
            break
        missed = rtol
    if missed is None or found[1] > ERROR_TARGET:
        return found
    met, missed = math.log10(found[0]), math.log10(missed)
    for _ in range(BISECTIONS):
        middle = (met + missed) / 2
        error, run = error_at(10.0**middle)
        if error <= ERROR_TARGET:
            met, found = middle, (10.0**middle, error, run)
        else:
            missed = middle
    return found


_MATCHED: dict[str, dict] = {}  # by model name: the tolerances found, for the first-run rows of the same process


def _matched(name: str, model, seconds: float, urdf=None, drive: dict | None = None) -> dict:
    """Both sides' tolerances at matched accuracy (see the module's docstring), their errors and runs."""
    from scipy.integrate import solve_ivp

    from ..dynamics.engine import engine
    from ..simulation.run import simulate

    mech = engine(model).mech
    reference, rhs, method = _reference(mech, urdf, drive)
    times = np.linspace(0.0, seconds, OUTPUTS)
    y0 = reference.state(mech.assemble(None)[0])
    tight = TIGHT_TOLERANCE
    exact = reference.coordinates(solve_ivp(rhs, (0, seconds), y0, "DOP853", times, rtol=tight, atol=tight).y.T)

    def ours(rtol: float):
        run = simulate(model, seconds, rtol=rtol, atol=rtol / 100, t_eval=times, error_estimate=False)
        return float(np.abs(run.q - exact).max()), run

    def theirs(rtol: float):
        run = solve_ivp(rhs, (0, seconds), y0, "DOP853", times, rtol=rtol, atol=rtol / 100)
        return float(np.abs(reference.coordinates(run.y.T) - exact).max()), run

    found = {"ours": _loosest(ours), "reference": _loosest(theirs)}
    _MATCHED[name] = {side: rtol for side, (rtol, _, _) in found.items()}
    return {"found": found, "rhs": rhs, "method": method, "times": times, "y0": y0}


def _run_rows(name: str, model, seconds: float, target: float, urdf=None, drive: dict | None = None) -> list[dict]:
    """`urdf`: the file the model was imported from, which Pinocchio then reads itself for the reference (our
    export of the model to Pinocchio differs from it at Talos' grippers)."""
    from scipy.integrate import solve_ivp

    from ..dynamics.engine import engine
    from ..simulation.run import clear_starts, simulate

    eng = engine(model)  # built or loaded before any timing (the `builds` rows time that)
    mech = eng.mech
    plain = functools.partial(simulate, error_estimate=False)  # as the reference: the run, no error estimate
    try:
        _reference(mech, urdf, drive)
    except ValueError as exc:  # what the reference does not model, it refuses
        return _unreferenced_rows(name, model, seconds, str(exc))
    matched = _matched(name, model, seconds, urdf, drive)
    rhs, method = matched["rhs"], matched["method"]
    q0 = mech.assemble(None)[0]
    y_ref, y_ours = matched["y0"], np.concatenate([q0, np.zeros(len(eng.independent))])
    rhs_row = compared_row(
        f"{name} right-hand side, one state",
        compare(Side(eng.ode, [(0.1, y_ours)]), Side(rhs, [(0.1, y_ref)])),
        reference_method=f"{method}; both as the integrator calls them",
    )
    make = functools.partial(_reference, mech, urdf, drive)
    start_row = compared_row(
        f"{name} first run's start (s per document and process)",
        compare(Side(plain, [(model, 1e-9)], setup=clear_starts), Side(make), min_samples=5, max_samples=50),
        reference_method="building the Pinocchio reference model; ours: a first simulate() of 1e-9 s",
    )
    (ours_rtol, ours_error, ours_run), (ref_rtol, ref_error, ref_run) = matched["found"].values()
    times = matched["times"]
    ours = functools.partial(plain, rtol=ours_rtol, atol=ours_rtol / 100, t_eval=times)
    theirs = functools.partial(solve_ivp, rhs, (0, seconds), y_ref, "DOP853", times, rtol=ref_rtol, atol=ref_rtol / 100)
    comparison = compare(Side(ours, [(model, seconds)]), Side(theirs), min_samples=3, max_samples=50)
    run_row = compared_row(
        f"{name} simulation, matched accuracy (s per simulated s)",
        comparison,
        target=target,
        dof=mech.n,
        real_time_factor=seconds / comparison.ours.median,
        reference_real_time_factor=seconds / comparison.reference.median,
        error_target=ERROR_TARGET,
        ours_rtol=ours_rtol,
        ours_error=ours_error,
        reference_rtol=ref_rtol,
        reference_error=ref_error,
        rhs_evaluations=ours_run.provenance.rhs_evaluations,
        reference_rhs_evaluations=int(ref_run.nfev),
        max_constraint_residual=float(ours_run.residual.max()),
        reference_method=(
            f"{method}; solve_ivp DOP853 at rtol {ref_rtol:.2g} (error {ref_error:.1e}); ours CVODES at rtol "
            f"{ours_rtol:.2g} (error {ours_error:.1e}); atol = rtol/100; errors against DOP853 at {TIGHT_TOLERANCE:g}"
        ),
    )
    for key in ("ours_s_per_state", "reference_s_per_state", "ours_iqr_s", "reference_iqr_s"):
        run_row[key] /= seconds
    return [rhs_row, start_row, run_row]


def _first_run_extra_row(name: str, model) -> dict:
    """A document's first run in a process, its start and engine forgotten (a new process reads both from the
    cache), against the same run again, interleaved: the row's figure is the difference of their medians."""
    from ..dynamics.engine import clear_engines
    from ..simulation.run import clear_starts, simulate

    def forget() -> None:
        clear_starts()
        clear_engines()

    run = [(model, 1e-9)]
    plain = functools.partial(simulate, error_estimate=False)  # the run's start, as the reference's
    comparison = compare(Side(plain, run, setup=forget), Side(plain, run), min_samples=5, max_samples=50)
    first, next_ = comparison.ours, comparison.reference
    method = "target; ours: a first simulate() of 1e-9 s minus the next"
    name = f"{name} first run over the next (s per document and process)"
    out = row(name, first.median - next_.median, FIRST_RUN_TARGET_S, 1.0, reference_method=method)
    spread = {"first_s": first.median, "next_s": next_.median, "ours_iqr_s": first.iqr, "reference_iqr_s": next_.iqr}
    return {**out, **spread, "samples": first.samples, "clock": comparison.clock}


def _unreferenced_rows(name: str, model, seconds: float, reason: str) -> list[dict]:
    """Our run alone (default tolerances) where the reference cannot model the mechanism: no ratio, no verdict
    but that."""
    from ..simulation.run import simulate

    plain = functools.partial(simulate, error_estimate=False)
    timing = _per_second(measure(Side(plain, [(model, seconds)]), min_samples=3, max_samples=50), seconds)
    out = row(f"{name} simulation, default tolerances (s per simulated s)", timing.median, float("nan"))
    extra = {"ours_iqr_s": timing.iqr, "samples": timing.samples, "clock": "thread CPU", "simulated_s": seconds}
    return [{**out, **extra, "verdict": "no reference", "reference_method": f"none: {reason}"}]


def _build_rows(name: str, model):
    """The engine built cold (into an empty cache: tracing and compiling), once, by the wall clock (the compiler
    runs in processes of its own, whose CPU time `cpu_s` adds), and loaded from the cache as a new process would
    (nothing traced), by the harness; the loaded engine."""
    from ..dynamics import engine as engines

    with _empty_cache():
        engines.clear_engines()
        wall, cpu = time.perf_counter(), _process_and_children_cpu()
        eng = engines.engine(model)
        wall, cpu = time.perf_counter() - wall, _process_and_children_cpu() - cpu
        load = measure(Side(engines.engine, [(model,)], setup=engines.clear_engines), min_samples=5, max_samples=50)
    cold = row(f"{name} engine build, cold (s per build)", wall, BUILD_TARGET_S, target=1.0, clock="wall")
    rows = [
        {**cold, "cpu_s": cpu, "dof": eng.n, "native": eng.native, "reference_method": "target"},
        target_row(f"{name} engine load, cached (s per load)", load, LOAD_TARGET_S, native=eng.native),
    ]
    engines.clear_engines()
    return rows, engines.engine(model)  # from the user's cache again (built there once)


def _process_and_children_cpu() -> float:
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextlib.contextmanager
def _empty_cache() -> Iterator[str]:
    old = os.environ.get("MBSTUDIO_CACHE")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["MBSTUDIO_CACHE"] = folder
        try:
            yield folder
        finally:
            if old is None:
                os.environ.pop("MBSTUDIO_CACHE", None)
            else:
                os.environ["MBSTUDIO_CACHE"] = old


def _fixed_cost_rows(name: str, model) -> list[dict]:
    """`simulate()` of a run too short to take a step's time (what every run pays besides its steps), and the
    output building of 201 samples as `simulate` does it (the engine's compiled series, the measures and the
    dissipated energy in numpy)."""
    from ..dynamics.engine import engine
    from ..dynamics.forces import AppliedForces
    from ..simulation.run import compiled_series, simulate

    simulate(model, 1e-9, samples=2)  # the engine built or loaded
    fixed = measure(Side(functools.partial(simulate, samples=2, error_estimate=False), [(model, 1e-9)]))
    result = simulate(model, SIMULATED_SECONDS, samples=OUTPUTS)
    eng = engine(model)
    mech, forces = eng.mech, AppliedForces(eng.mech)
    output = measure(Side(compiled_series, [(eng, mech, forces, result.t, result.q, result.qd, result.qdd)]))
    return [
        target_row(f"{name} simulate() fixed cost (s per run)", fixed, FIXED_COST_TARGET_S),
        target_row(f"{name} output building, 201 samples (s per run)", output, OUTPUT_TARGET_S),
    ]


# ---------------------------------------------------------------------------------------- a fresh process
FRESH_SAMPLES = 5  # pairs of processes, at least
_OURS_SCRIPT = """
import json, sys, time
start = time.thread_time_ns()
from mbstudio.model import load
from mbstudio.simulation.run import simulate
imported = time.thread_time_ns()
path, seconds, rtol = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
simulate(load(path), seconds, rtol=rtol, atol=rtol / 100, samples=201, error_estimate=False)
print(json.dumps([imported - start, time.thread_time_ns() - imported]))
"""
# the sprung SLA's reference, as `_reference` makes it (closed loops and a spring: forces on both sides), written
# out so that the process imports what a Pinocchio user's would and our reader of the file, not the bench
_REFERENCE_SCRIPT = """
import json, sys, time
start = time.thread_time_ns()
import numpy as np
import pinocchio as pin
from scipy.integrate import solve_ivp
from mbstudio.io.pinocchio_reference import ClosedLoopReference
from mbstudio.kinematics import Mechanism
from mbstudio.model import load
imported = time.thread_time_ns()
path, seconds, rtol = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
mech = Mechanism(load(path))
ref = ClosedLoopReference.of(mech)
model, data, n, contacts = ref.model, ref.data, ref.model.nq, (ref.contacts, ref.contact_data, ref.settings)
def rhs(t, y):
    q, v = y[:n], y[n:]
    return np.concatenate([v, pin.constraintDynamics(model, data, q, v, ref.forces(t, q, v), *contacts)])
y0 = ref.state(mech.assemble(None)[0])
solve_ivp(rhs, (0, seconds), y0, "DOP853", np.linspace(0, seconds, 201), rtol=rtol, atol=rtol / 100)
print(json.dumps([imported - start, time.thread_time_ns() - imported]))
"""


def _bytecode_cached() -> bool:
    """Whether our modules load from cached bytecode, as an installed wheel's do: an editable install run with
    PYTHONDONTWRITEBYTECODE compiles every module it imports in every process (~0.1 s of CPU of the SLA's run)."""
    from importlib.util import cache_from_source

    from ..simulation import run

    return os.path.exists(cache_from_source(run.__file__))


@benchmark("first_run")
def _first_run(states: int) -> list[dict]:
    """The sprung SLA's first run in a fresh process: ours `load` + `simulate` (its engine loaded from the cache)
    against the reference's `load` + Pinocchio model + solve_ivp, each in a new Python process, interleaved, at
    the tolerances of matched accuracy (found in this process first); the thread CPU time after the imports, and
    the whole process's CPU time (imports included) beside it. `states` does not apply."""
    from ..model import dumps

    model = sprung_sla()
    if "sla_suspension" not in _MATCHED:
        _matched("sla_suspension", model, SIMULATED_SECONDS)
    tolerances = _MATCHED["sla_suspension"]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "sla.mbs")
        with open(path, "w", encoding="utf-8") as out:
            out.write(dumps(model))
        sides = {side: [] for side in tolerances}  # (imports, run, whole process) per sample

        def sampler(side: str) -> Callable[[], float]:
            script = _OURS_SCRIPT if side == "ours" else _REFERENCE_SCRIPT
            argv = [sys.executable, "-c", script, path, str(SIMULATED_SECONDS), repr(float(tolerances[side]))]

            def sample() -> float:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                done = subprocess.run(argv, capture_output=True, text=True)
                if done.returncode:
                    raise RuntimeError(f"the fresh process of the {side} side failed: {done.stderr[-2000:]}")
                out = done.stdout
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                imports, run = (ns * 1e-9 for ns in json.loads(out.splitlines()[-1]))
                sides[side].append((imports, run, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime))
                return run

            return sample

        samplers = [sampler("ours"), sampler("reference")]
        first = [s() for s in samplers]  # the warm-up pair (the engine and the files in the OS's cache)
        count = sample_count(first, 1.0, FRESH_SAMPLES, 2 * FRESH_SAMPLES)
        ours, theirs = interleave(samplers, count)
    medians = {side: np.median(np.array(values[1:]), axis=0) for side, values in sides.items()}
    return [
        compared_row(
            "sla_suspension first run in a fresh process (s per run)",
            comparison_of(ours, theirs, "thread CPU, in the child after its imports"),
            ours_imports_s=float(medians["ours"][0]),
            reference_imports_s=float(medians["reference"][0]),
            ours_process_cpu_s=float(medians["ours"][2]),
            ours_bytecode_cached=_bytecode_cached(),
            reference_process_cpu_s=float(medians["reference"][2]),
            ours_rtol=tolerances["ours"],
            reference_rtol=tolerances["reference"],
            simulated_s=SIMULATED_SECONDS,
            reference_method="a new process: load + Pinocchio model + solve_ivp DOP853; ours load + simulate "
            "(engine cached); tolerances of matched accuracy",
        )
    ]
