"""Our float64 algorithms on batches of states against Pinocchio called once per state: ours one call on the
whole batch, Pinocchio's bare calls over argument tuples made beforehand (no indexing inside its timed loop)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..dynamics import forward_dynamics, inverse_dynamics, mass_matrix
from .kernels import symmetric
from .models import pinocchio_model, puma_states
from .registry import Side, benchmark, compare, compared_row, per_state


def _against_pinocchio(
    name: str,
    ours: Callable[..., np.ndarray],
    ours_args: tuple,
    reference: Callable,
    their_args: list[tuple],
    reference_name: str,
    finish: Callable = np.array,
) -> dict:
    """Time `ours(*ours_args)` on the batch against `reference(*a)` for each state's tuple, interleaved;
    `finish` turns the reference's per-state results into an array comparable with ours, outside the timing."""
    states = len(their_args)
    ours_value = ours(*ours_args)
    ref_value = finish([reference(*a) for a in their_args])
    comparison = compare(Side(ours, [ours_args], per_call=states), Side(reference, their_args), min_samples=5)
    return compared_row(
        name,
        comparison,
        states=states,
        max_abs_difference=float(np.abs(ours_value - ref_value).max()),
        reference_method=f"pinocchio.{reference_name} per state, bare calls, interleaved",
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
            inverse_dynamics,
            (mech, q, qd, qdd),
            pin.rnea,
            [(model, data, *state) for state in per_state((q, qd, qdd))],
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
            mass_matrix,
            (mech, q),
            pin.crba,
            [(model, data, *state) for state in per_state((q,))],
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
            forward_dynamics,
            (mech, q, qd, tau),
            pin.aba,
            [(model, data, *state) for state in per_state((q, qd, tau))],
            "aba",
        )
    ]
