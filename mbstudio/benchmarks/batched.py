"""Our float64 algorithms on batches of states against Pinocchio called once per state."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..dynamics import forward_dynamics, inverse_dynamics, mass_matrix
from .kernels import symmetric
from .models import pinocchio_model, puma_states
from .registry import benchmark, best_time, row


def _against_pinocchio(
    name: str,
    ours: Callable[[], np.ndarray],
    reference: Callable[[int], np.ndarray],
    states: int,
    reference_name: str,
    finish: Callable = np.array,
) -> dict:
    """Time both; `finish` turns the reference's per-state results into an array comparable with ours,
    outside the timing."""
    ours_time, ours_value = best_time(ours)
    ref_time, ref_value = best_time(lambda: [reference(i) for i in range(states)])
    difference = float(np.abs(ours_value - finish(ref_value)).max())
    return row(
        name,
        ours_time / states,
        ref_time / states,
        states=states,
        max_abs_difference=difference,
        reference_method=f"pinocchio.{reference_name} per state, Python loop",
    )


@benchmark("inverse_dynamics")
def _inverse_dynamics(states: int) -> list[dict]:
    import pinocchio as pin

    mech, q, qd, qdd = puma_states(states)
    model = pinocchio_model(mech)
    data = model.createData()
    return [
        _against_pinocchio(
            "puma560 inverse dynamics",
            lambda: inverse_dynamics(mech, q, qd, qdd),
            lambda i: pin.rnea(model, data, q[i], qd[i], qdd[i]),
            states,
            "rnea",
        )
    ]


@benchmark("mass_matrix")
def _mass_matrix(states: int) -> list[dict]:
    import pinocchio as pin

    mech, q, _, _ = puma_states(states)
    model = pinocchio_model(mech)
    data = model.createData()

    return [
        _against_pinocchio(
            "puma560 mass matrix",
            lambda: mass_matrix(mech, q),
            lambda i: pin.crba(model, data, q[i]),
            states,
            "crba",
            lambda results: symmetric(np.array(results)),  # Pinocchio guarantees only the upper triangle
        )
    ]


@benchmark("forward_dynamics")
def _forward_dynamics(states: int) -> list[dict]:
    import pinocchio as pin

    mech, q, qd, qdd = puma_states(states)
    tau = inverse_dynamics(mech, q, qd, qdd)
    model = pinocchio_model(mech)
    data = model.createData()
    return [
        _against_pinocchio(
            "puma560 forward dynamics",
            lambda: forward_dynamics(mech, q, qd, tau),
            lambda i: pin.aba(model, data, q[i], qd[i], tau[i]),
            states,
            "aba",
        )
    ]
