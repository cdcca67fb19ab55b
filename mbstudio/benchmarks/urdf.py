"""Real robots imported from URDF, our compiled kernels against Pinocchio's own reading of the same files."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..dynamics import inverse_dynamics
from ..kinematics import Mechanism
from .kernels import one_state_comparison
from .registry import benchmark, compared_row


@benchmark("urdf")
def _urdf(states: int) -> list[dict]:
    """Real robots (example-robot-data): imported by us from URDF and run on our compiled kernels one state at a
    time, against Pinocchio's own reading of the same file (pin.buildModelFromUrdf, not our exporter), at the
    same random states (at most 1 000), with the largest difference."""
    import pinocchio as pin

    from ..dynamics.kernels import kernel
    from ..io.example_robots import ROBOTS, robot_path
    from ..io.urdf_import import import_urdf

    rows = []
    for robot in ROBOTS:
        path = robot_path(robot)
        model = import_urdf(path, floating_base=False).model  # welded, as buildModelFromUrdf(path) reads it
        coordinates = Mechanism(model).coordinates
        pm = pin.buildModelFromUrdf(str(path))
        order = [coordinates.index(pm.names[j]) for j in range(1, pm.njoints)]  # Pinocchio's joints in our order
        rng = np.random.default_rng(0)
        q, qd, qdd = (rng.uniform(-1, 1, (min(states, 1000), len(order))) for _ in range(3))
        theirs = (q[:, order], qd[:, order], qdd[:, order])  # the same states in Pinocchio's order
        tau = inverse_dynamics(Mechanism(model), q, qd, qdd)
        cases = {
            "rnea": ("inverse_dynamics", (q, qd, qdd), pin.rnea, theirs),
            "crba": ("mass_matrix", (q,), pin.crba, theirs[:1]),
            "aba": ("forward_dynamics", (q, qd, tau), pin.aba, (theirs[0], theirs[1], tau[:, order])),
        }
        for algorithm, (name, args, call, their_args) in cases.items():
            rows.append(_urdf_row(robot, algorithm, kernel(model, name), args, call, their_args, pm, order))
    return rows


def _urdf_row(robot: str, algorithm: str, ours: Callable, args: tuple, call: Callable, their_args, pm, order) -> dict:
    """Both sides' bare calls, interleaved (kernels.one_state_comparison); Pinocchio's CRBA fills the upper
    triangle, compared afterwards."""
    count = len(args[0])
    comparison, ours_values, ref_values = one_state_comparison(ours, args, call, (pm, pm.createData()), their_args)
    ours_values = ours_values[:, order][:, :, order] if ours_values.ndim == 3 else ours_values[:, order]
    if algorithm == "crba":
        ours_values, ref_values = np.triu(ours_values), np.triu(ref_values)
    return compared_row(
        f"{robot} {algorithm} (URDF), one state",
        comparison,
        states=count,
        dof=len(order),
        target=1.25 if len(order) < 12 else 1.0,  # arms within 1.25x, 12 dof and up within 1.0x
        max_abs_difference=float(np.abs(ours_values - ref_values).max()),
        reference_method=f"pinocchio.{algorithm} of buildModelFromUrdf, bare calls, interleaved",
    )
