"""TITOP block models against our engine and our articulated-body algorithm."""

from __future__ import annotations

import numpy as np

from .. import samples
from ..dynamics import forward_dynamics, inverse_dynamics
from ..kinematics import Mechanism
from .models import puma_states
from .registry import Side, benchmark, compare, compared_row


@benchmark("blocks")
def _blocks(states: int) -> list[dict]:
    """TITOP block models (dynamics/titop): the balloon's right-hand side one state at a time, compiled, by the
    condensed and the faithful solves of the algebraic loop, against our engine's state equation at the same
    state; and the PUMA's forward dynamics on a float64 batch (condensed solve) against our articulated-body
    algorithm. The differences are those of the coordinates' accelerations."""
    from ..dynamics.engine import engine
    from ..dynamics.titop import BlockAccelerations, BlockModel, JointLaw, block_model
    from ..simulation.block_runs import Layout, compiled_right_hand_side

    model = samples.load("balloon")
    mech, blocks = Mechanism(model), block_model(model)
    q = mech.assemble(None)
    qd = np.random.default_rng(0).uniform(-1, 1, q.shape)
    order = [mech.coordinates.index(c) for c in blocks.coordinates]
    state = blocks.from_coordinates(q[:, order], qd[:, order])
    y, eng = Layout(blocks).pack(state)[0], engine(model)
    y_engine = np.concatenate([q[0], qd[0]])
    reference = eng.ode(0.0, y_engine)[mech.n :][order]
    rows = []
    for solver in ("condensed", "faithful"):
        rhs = compiled_right_hand_side(model, solver)
        rates = Layout(blocks).state(rhs(0.0, y)[None])  # (q̇, q̈) of the channels, xdot'_P of the balloon
        qdd = blocks.accelerations_to_coordinates(state, BlockAccelerations(rates.qd, (rates.bases[0].tw,)))[0]
        rows.append(
            compared_row(
                f"balloon block right-hand side ({solver}), one state",
                compare(Side(rhs, [(0.0, y)]), Side(eng.ode, [(0.0, y_engine)])),
                max_abs_difference=float(np.abs(qdd - reference).max()),
                reference_method="our engine's state equation (ABA, compiled) per call",
            )
        )
    mech, q, qd, qdd = puma_states(states)
    arm = block_model(mech.model)
    assert arm.coordinates == mech.coordinates
    tau = inverse_dynamics(mech, q, qd, qdd)
    laws = [JointLaw(c, lambda t, x, v, k=k: tau[:, k]) for k, c in enumerate(mech.coordinates)]
    driven = BlockModel(arm.blocks, arm.gravity, laws)
    arm_state = driven.from_coordinates(q, qd)
    found, reference = driven.forward_dynamics(arm_state).qdd, forward_dynamics(mech, q, qd, tau)
    ours = Side(driven.forward_dynamics, [(arm_state,)], per_call=states)
    theirs = Side(forward_dynamics, [(mech, q, qd, tau)], per_call=states)
    rows.append(
        compared_row(
            "puma560 block forward dynamics (condensed)",
            compare(ours, theirs, min_samples=5),
            states=states,
            max_abs_difference=float(np.abs(found - reference).max()),
            reference_method="our articulated-body algorithm, float64 batch",
        )
    )
    return rows
