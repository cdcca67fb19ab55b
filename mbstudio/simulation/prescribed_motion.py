"""The forces a prescribed motion needs (inverse dynamics along a path): the drive force of each actuated
coordinate, with the document's force elements acting, and the series that go with them (energies,
constraint residual, joint reactions), in the same form as a simulation's.

    result = prescribed_motion(mech, t, q, qd, qdd)
    result.columns()   # [..., ("actuator:theta1", "N m", values), ...]
"""

from __future__ import annotations

import numpy as np

from ..dynamics.closed_loop import actuated_indices, actuator_forces_on_tree, closed_loop_inverse_dynamics
from ..dynamics.forces import AppliedForces
from ..kinematics.mechanism import Mechanism
from .run import SimulationResult, motion_result


def prescribed_motion(
    mech: Mechanism, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, forces: AppliedForces | None = None
) -> SimulationResult:
    """Series of the motion (q, q̇, q̈) (N, n) at the times t (N,), float64. The drives are the document's
    actuated coordinates (default: the independent ones); the force elements act besides them (an actuator
    element adds to its drive). The reactions are those of the loads including the drives."""
    forces = forces or AppliedForces(mech)
    Q = forces.generalized(t, q, qd)
    ind = list(mech.partition.independent)
    tau = closed_loop_inverse_dynamics(mech, q, qd, qdd[:, ind], Q)
    names = [mech.coordinates[i] for i in actuated_indices(mech)]
    drives = {name: (name, tau[:, k]) for k, name in enumerate(names)}  # columns "actuator:<name>"
    return motion_result(mech, forces, t, q, qd, qdd, Q + actuator_forces_on_tree(mech, tau), drives)
