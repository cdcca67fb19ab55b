"""Runs of models whose force laws own states (force_laws/base.py: `ForceLaw.states`, a tyre's relaxed slips).

The compiled engine integrates them at the end of its state y (dynamics/engine.py); a run's result then carries them
as columns named '<element>.<state>' (`SimulationResult.law_states`) and their names in its provenance. Its series
are computed in numpy at the forces those states give (simulation/run.py's `law_state_result`), since the engine's
compiled series take (t, q, q̇, q̈) alone; the dissipated energy is the work integrated with the motion, as for any
compiled run in one piece.
"""

from __future__ import annotations

import numpy as np

from ..dynamics.force_laws.base import states_refused
from ..dynamics.forces import AppliedForces
from .measures import measure_columns


def refuse_law_states(forces: AppliedForces, what: str) -> None:
    """A ModelError naming the force laws' states, which `what` does not carry."""
    raise states_refused([name for name, _ in forces.state_names], what)


def with_law_states(result, mech, forces: AppliedForces, z: np.ndarray, work: np.ndarray | None):
    """The result of a motion (its series at the forces the states z (K, count) give) with its measures reading the
    states, the states as columns and, with the `work` integrated with the motion, the energy balance from it."""
    t, q, qd, qdd = result.t, result.q, result.qd, result.qdd
    if mech.model.measures:  # again, reading each law's own states
        own = {law.name: forces.states_of(law, z, len(t)) for law in forces.laws if law.states}
        result.measures = measure_columns(mech, t, q, qd, qdd, law_states=own)
    result.law_states = [(name, unit, z[:, k]) for k, (name, unit) in enumerate(forces.state_names)]
    if work is not None:  # the balance from the work integrated with the motion, not from the samples' power
        total = result.kinetic + result.potential
        kept = {name: (unit, values) for name, unit, values in result.monitors}
        kept["dissipated_energy"] = ("J", -work)
        kept["energy_balance"] = ("J", total - work)
        result.monitors = [(name, unit, values) for name, (unit, values) in kept.items()]
    return result
