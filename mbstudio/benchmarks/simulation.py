"""Whole simulations and their right-hand sides against an independent Pinocchio + scipy reference, the engines'
builds (cold, into an empty cache, and loaded from it), and the fixed costs of a run.

The reference (io/pinocchio_reference.py) models the mechanism by hand in Pinocchio: plain joints, the cut joints
as rigid contacts solved by `constraintDynamics`; for a tree, its right-hand side is `pin.aba`. It is integrated by
solve_ivp (DOP853) at the tolerances our runs use by default (simulation/run.py: RTOL, ATOL); ours runs
`simulate` with CVODES, the default, outputs at 201 times included. Both whole runs are timed with their
models made: Pinocchio's model built, our engine loaded and the document's start made (its mechanism, closed
start and inertia check, kept for the process's later runs); a row of its own sets what that costs a document's
first run in a process against building the Pinocchio reference. Targets: whole runs at most 0.5x
the reference's time for the closed loops and 1.0x for the chains and the humanoid; a cold build within 30 s at
100 coordinates; `simulate()`'s fixed cost within 2 ms and its output building within 5 ms for 201 samples of the
SLA.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

import numpy as np

from .. import samples
from .models import driven_delta, spatial_chain, sprung_sla, talos
from .registry import benchmark, best_time, per_call, row

SIMULATED_SECONDS = 2.0
TREE_SECONDS = 1.0  # the chains' and the humanoid's runs (a chaotic chain needs many small steps)
BUILD_TARGET_S = 30.0
LOAD_TARGET_S = 0.1  # a cached engine: no tracing, only the library's load and the model's reading
FIXED_COST_TARGET_S = 2e-3
OUTPUT_TARGET_S = 5e-3
VEHICLE_SECONDS = 10.0  # the vehicle sample's drive over its bump
VEHICLE_TARGET = 1 / 20  # s per simulated s: 20 times real time


@benchmark("simulation")
def _simulation(states: int) -> list[dict]:
    """The four-bar, the sprung SLA and the driven Delta against the Pinocchio reference with rigid contacts;
    the SLA's fixed costs. `states` does not apply."""
    models = {"four_bar": samples.load("four_bar"), "sla_suspension": sprung_sla(), "delta_3rr2rrr": driven_delta()}
    rows = [r for name, model in models.items() for r in _run_rows(name, model, SIMULATED_SECONDS, 0.5)]
    return rows + _fixed_cost_rows("sla_suspension", models["sla_suspension"])


@benchmark("trees")
def _trees(states: int) -> list[dict]:
    """Spatial chains of 25, 50 and 100 links under gravity and Talos' full body (welded base, without its
    joints' friction, its grippers' mimic joints free) against Pinocchio's ABA integrated by solve_ivp. `states`
    does not apply."""
    rows = [r for links in (25, 50, 100) for r in _run_rows(f"chain {links}", spatial_chain(links), TREE_SECONDS, 1.0)]
    with contextlib.suppress(FileNotFoundError):
        model, urdf = talos()
        model.forces = []  # its joints' friction: the reference models springs and actuators only
        model.couplings = []  # its grippers' mimic joints, which Pinocchio's reading of the URDF leaves free
        rows += _run_rows("talos", model, TREE_SECONDS, 1.0, urdf)
    return rows


@benchmark("vehicle")
def _vehicle(states: int) -> list[dict]:
    """The vehicle sample's 10-s drive over its bump (samples/vehicle.mbs: 30 bodies, 12 loops, 47 tree
    coordinates) against the target of 20 times real time, at the default tolerances and at rtol 1e-6 (its
    motion within 3 µm and its tyre loads within 0.1 N of the default's); its engine's build and load. No reference
    simulates it: Pinocchio has no tyres, stops or servos. `states` does not apply."""
    from ..simulation.run import simulate

    model = samples.load("vehicle")
    rows = _build_rows("vehicle", model)[0]
    for label, tolerances in (("default tolerances", {}), ("rtol 1e-6, atol 1e-8", {"rtol": 1e-6, "atol": 1e-8})):
        wall, run = best_time(lambda t=tolerances: simulate(model, VEHICLE_SECONDS, **t), repeat=3)
        rows.append(
            row(
                f"vehicle drive, {label} (s per simulated s)",
                wall / VEHICLE_SECONDS,
                VEHICLE_TARGET,
                target=1.0,
                real_time_factor=VEHICLE_SECONDS / wall,
                rhs_evaluations=run.provenance.rhs_evaluations,
                max_constraint_residual=float(run.residual.max()),
                reference_method="target (20 times real time)",
            )
        )
    return rows


def _run_rows(name: str, model, seconds: float, target: float, urdf=None) -> list[dict]:
    """`urdf`: the file the model was imported from, which Pinocchio then reads itself for the reference (our
    export of the model to Pinocchio differs from it at Talos' grippers)."""
    from scipy.integrate import solve_ivp

    from ..io.pinocchio_reference import ClosedLoopReference
    from ..simulation.run import ATOL, RTOL, clear_starts, simulate

    build_rows, eng = _build_rows(name, model)
    mech = eng.mech
    make = (lambda: ClosedLoopReference.of(mech)) if urdf is None else (lambda: _urdf_reference(mech, urdf))
    ref_setup, reference = best_time(make, repeat=1)
    clear_starts()
    ours_setup, _ = best_time(lambda: simulate(model, 1e-9, samples=2), repeat=1)  # a first run in a process
    rhs = reference.rhs if mech.topology.cut else _tree_rhs(reference)
    q0 = mech.assemble(None)[0]
    y_ref, y_ours = reference.state(q0), np.concatenate([q0, np.zeros(len(eng.independent))])
    ours_rhs, ref_rhs = per_call(lambda: eng.ode(0.1, y_ours)), per_call(lambda: rhs(0.1, y_ref))
    times = np.linspace(0.0, seconds, 201)
    ours_wall, ours = best_time(lambda: simulate(model, seconds, samples=201), repeat=1)
    ref_wall, ref = best_time(
        lambda: solve_ivp(rhs, (0, seconds), y_ref, "DOP853", times, rtol=RTOL, atol=ATOL), repeat=1
    )
    agreement = float(np.abs(reference.coordinates(ref.y.T) - ours.q).max())
    method = "pinocchio.constraintDynamics (rigid contacts)" if mech.topology.cut else "pinocchio.aba"
    return [
        row(f"{name} right-hand side, one state", ours_rhs, ref_rhs, reference_method=f"{method} per call"),
        row(
            f"{name} first run's start (s per document and process)",
            ours_setup,
            ref_setup,
            reference_method="building the Pinocchio reference model; ours: a first simulate() of 1e-9 s",
        ),
        row(
            f"{name} simulation (s per simulated s)",
            ours_wall / seconds,
            ref_wall / seconds,
            target=target,
            dof=mech.n,
            real_time_factor=seconds / ours_wall,
            reference_real_time_factor=seconds / ref_wall,
            rhs_evaluations=ours.provenance.rhs_evaluations,
            reference_rhs_evaluations=int(ref.nfev),
            max_coordinate_difference=agreement,
            max_constraint_residual=float(ours.residual.max()),
            reference_method=f"{method}, solve_ivp DOP853 rtol {RTOL:g} atol {ATOL:g}; ours CVODES, the same",
        ),
        *build_rows,
    ]


def _urdf_reference(mech, urdf):
    """A tree as Pinocchio reads it from its URDF (pin.buildModelFromUrdf), without force elements."""
    import pinocchio as pin

    from ..io.pinocchio_reference import ClosedLoopReference

    model = pin.buildModelFromUrdf(str(urdf))
    ours = np.array([mech.coordinates.index(model.names[j]) for j in range(1, model.njoints)])
    return ClosedLoopReference(model, model.createData(), [], [], None, ours, [], [])


def _tree_rhs(reference):
    """Pinocchio's ABA as a tree's right-hand side (the document's force elements are none on these trees)."""
    import pinocchio as pin

    model, data, n = reference.model, reference.data, reference.model.nq

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        return np.concatenate([y[n:], pin.aba(model, data, y[:n], y[n:], reference.forces(t, y[:n], y[n:]))])

    return rhs


def _build_rows(name: str, model):
    """The engine built cold (into an empty cache: tracing and compiling) and loaded from the cache as a new
    process would (nothing traced); the loaded engine."""
    from ..dynamics import engine as engines

    with _empty_cache():
        engines.clear_engines()
        cold, eng = best_time(lambda: engines.engine(model), repeat=1)
        engines.clear_engines()
        load, eng = best_time(lambda: engines.engine(model), repeat=1)
    rows = [
        row(f"{name} engine build, cold (s per build)", cold, BUILD_TARGET_S, target=1.0, dof=eng.n, native=eng.native),
        row(f"{name} engine load, cached (s per load)", load, LOAD_TARGET_S, target=1.0, native=eng.native),
    ]
    for r in rows:
        r["reference_method"] = "target"
    engines.clear_engines()
    return rows, engines.engine(model)  # from the user's cache again (built there once)


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
    fixed, _ = best_time(lambda: simulate(model, 1e-9, samples=2), repeat=5)
    result = simulate(model, SIMULATED_SECONDS, samples=201)
    eng = engine(model)
    mech, forces = eng.mech, AppliedForces(eng.mech)
    motion = (result.t, result.q, result.qd, result.qdd)
    output, _ = best_time(lambda: compiled_series(eng, mech, forces, *motion), repeat=5)
    return [
        row(f"{name} simulate() fixed cost (s per run)", fixed, FIXED_COST_TARGET_S, target=1.0),
        row(f"{name} output building, 201 samples (s per run)", output, OUTPUT_TARGET_S, target=1.0),
    ]
