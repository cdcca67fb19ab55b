"""The block model as a check on a simulation (Alazard et al. 2024, Fig. 17: responses in black, the errors against an
independent model in red): the same document, initial state, output times and tolerances through the TITOP
blocks, and the difference block − general of every series both routes compute.

    result = simulate(model, 10.0, "DOP853", rtol=1e-12, atol=1e-12)
    check = cross_check(model, result)          # check.errors: ("error:theta1", "rad", values), ...
    result.monitors += check.errors              # the error series go with the run (plots, CSV files)

On a tree the two routes are the same mechanics written twice, so the errors are the integrators' and
rounding's. A closed loop's cut joints are stiff spring-dampers in the block model (closures.py), so there the
errors also hold the closures' compliance, falling as 1/f² with their frequency f.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics.titop.closures import CLOSURE_FREQUENCY
from ..dynamics.titop.from_document import block_model
from ..dynamics.titop.states import InverseDynamics
from ..kinematics.topology import spanning_tree
from ..model import Model
from .block_runs import BlockRun, simulate_blocks
from .integrators import SCIPY
from .run import RATE_PREFIXES, SimulationResult

# the series both routes compute (besides the coordinates, their rates and accelerations)
COMPARED = [
    "kinetic_energy",
    "potential_energy",
    "total_energy",
    *(f"{name}.{a}" for name in ("com", "momentum", "angular_momentum") for a in "xyz"),
]


@dataclass
class CrossCheck:
    """The block run and the error series block − general as (name 'error:<series>', unit, values)."""

    run: BlockRun
    errors: list[tuple[str, str, np.ndarray]]

    def largest(self) -> dict[str, float]:
        """max |error| over the run, per series."""
        return {name: float(np.abs(values).max(initial=0.0)) for name, _, values in self.errors}


def cross_check(
    model: Model,
    result: SimulationResult,
    velocities: np.ndarray | None = None,
    solver: str = "condensed",
    closure_frequency: float | None = None,
    progress=None,
    cancel=None,
) -> CrossCheck:
    """Run the block model of `model` as `result` was run (its times, method or DOP853 after CVODES — Radau for a
    closed loop's stiff closures —, tolerances; `velocities` the independent rates it started from) and take the
    differences. `closure_frequency` (Hz, closed loops only) defaults to CLOSURE_FREQUENCY."""
    closed = bool(spanning_tree(model).cut)
    frequency = (closure_frequency or CLOSURE_FREQUENCY) if closed else None
    p = result.provenance
    method = p.method if p.method in SCIPY else ("Radau" if closed else "DOP853")
    run = simulate_blocks(
        model,
        float(result.t[-1]),
        method,
        p.rtol,
        p.atol,
        t_eval=result.t,
        velocities=velocities,
        solver=solver,
        closure_frequency=frequency,
        progress=progress,
        cancel=cancel,
    )
    return CrossCheck(run, errors(run, result))


def recorded_efforts(model: Model, result: SimulationResult, closure_frequency: float | None = None) -> InverseDynamics:
    """The inverse diagram along a recorded motion (its q, q̇, q̈ at every sample, every acceleration imposed):
    the efforts each joint channel needed, the wrench each floating base needed (zero for a motion its loads
    made) and the joint reactions, with the document's loads acting
    (tests/test_titop_runs.py::test_a_recorded_run_gives_back_its_efforts)."""
    blocks = block_model(model, closure_frequency=closure_frequency)
    order = [result.coordinates.index(c) for c in blocks.coordinates]
    state = blocks.from_coordinates(result.q[:, order], result.qd[:, order])
    return blocks.inverse_dynamics(state, blocks.accelerations_from_coordinates(state, result.qdd[:, order]), result.t)


def errors(run: BlockRun, result: SimulationResult) -> list[tuple[str, str, np.ndarray]]:
    """block − general for every series named alike in both."""
    general = {name: (unit, values) for name, unit, values in result.columns()}
    names = [c for c in run.coordinates if c in result.coordinates]
    wanted = [f"{prefix}{c}" for prefix in RATE_PREFIXES for c in names] + COMPARED
    mine = {name: values for name, _, values in run.columns()}
    return [(f"error:{n}", general[n][0], mine[n] - general[n][1]) for n in wanted if n in general and n in mine]
