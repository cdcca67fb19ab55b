"""Compiled kernels one state at a time against Pinocchio's bare calls, on arms and on trees of every size.

Both sides are timed by the registry's harness (thread CPU time, interleaved) over argument tuples made beforehand,
one per state, each call bare: `pin.crba(model, data, q)` as it is (its upper triangle is compared afterwards,
outside the timing), ours as `kernel(q)`. The targets: RNEA, CRBA and ABA within 1.25x Pinocchio's time on
6-dof arms and 1.0x from 12 dof up."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..dynamics import inverse_dynamics
from .models import puma_states
from .registry import Comparison, Side, benchmark, compare, compared_row, per_state


@benchmark("kernels")
def _kernels(states: int) -> list[dict]:
    """RNEA, CRBA, ABA and the regressor of the PUMA one state at a time: our compiled kernels
    (dynamics/kernels.py) against Pinocchio with plain revolute joints, each called from a Python loop over
    the same states (at most 2 000 of them)."""
    import pinocchio as pin

    from ..dynamics.kernels import kernel
    from ..io.pinocchio_reference import ClosedLoopReference

    mech, q, qd, qdd = puma_states(min(states, 2000))
    reference = ClosedLoopReference.of(mech)  # a tree: plain joints, no contacts
    assert np.array_equal(reference.ours, np.arange(mech.n)), "the PUMA's coordinates keep their order"
    model, data = reference.model, reference.data
    tau = inverse_dynamics(mech, q, qd, qdd)
    cases = {
        "inverse_dynamics": ((q, qd, qdd), pin.rnea, "rnea"),
        "mass_matrix": ((q,), pin.crba, "crba"),
        "forward_dynamics": ((q, qd, tau), pin.aba, "aba"),
        "regressor": ((q, qd, qdd), pin.computeJointTorqueRegressor, "computeJointTorqueRegressor"),
    }
    geometry = mech.tree.geometry
    phi = (
        np.concatenate([np.asarray(geometry.inertia(mech.model.body(b)), float) for b in mech.tree.body_labels[1:]]),
        np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)]),
    )
    return [
        _one_state_row(name, kernel(mech.model, name), call, args, (model, data), reference_name, phi)
        for name, (args, call, reference_name) in cases.items()
    ]


def _one_state_row(
    name: str, ours: Callable, reference: Callable, args: tuple, model_data: tuple, method: str, phi: tuple
) -> dict:
    """One kernel timed over the states; `phi` = (our inertial parameters, Pinocchio's) for the regressor."""
    comparison, ours_values, ref_values = one_state_comparison(ours, args, reference, model_data, args)
    if name == "mass_matrix":  # Pinocchio fills the upper triangle
        ours_values, ref_values = np.triu(ours_values), np.triu(ref_values)
    if name == "regressor":  # the parameters differ (body frames vs joint frames): compare torques Y φ
        ours_values, ref_values = ours_values @ phi[0], ref_values @ phi[1]
    return compared_row(
        f"puma560 {name.replace('_', ' ')}, one state",
        comparison,
        target=1.25,
        states=len(args[0]),
        max_abs_difference=float(np.abs(ours_values - ref_values).max()),
        reference_method=f"pinocchio.{method} per state (plain joints), bare calls, interleaved",
    )


def symmetric(upper: np.ndarray) -> np.ndarray:
    """The symmetric matrices (..., n, n) whose upper triangles Pinocchio's CRBA fills (the rest it leaves)."""
    return np.triu(upper) + np.swapaxes(np.triu(upper, 1), -1, -2)


def one_state_comparison(
    ours: Callable, args: tuple, reference: Callable, leading: tuple, their_args: tuple
) -> tuple[Comparison, np.ndarray, np.ndarray]:
    """`ours(*state)` against `reference(*leading, *state)` over the states of `args` and `their_args` (arrays
    (N, ...) by argument; the same states, each side in its own order), both bare, their argument tuples made
    first; and both sides' results, from an untimed pass."""
    mine = per_state(args)
    theirs = [(*leading, *state) for state in per_state(their_args)]
    values = np.array([ours(*a) for a in mine]), np.array([reference(*a) for a in theirs])
    return compare(Side(ours, mine), Side(reference, theirs)), *values


CHAIN_SIZES = (6, 12, 25, 50, 100)


@benchmark("sizes")
def _sizes(states: int) -> list[dict]:
    """RNEA, CRBA and ABA of spatial chains of 6 to 100 links and of Talos' full body (welded base, 44
    coordinates, and floating, 50, at states whose base is not turned nor turning, where our rotation parameters
    and Pinocchio's quaternion coincide; imported from its URDF by us; Pinocchio reads the file itself, with a
    free flyer for the floating base) one state at a time, ours
    compiled against Pinocchio's bare calls; and our float64 batch of the RNEA over the same states against
    Pinocchio's loop. At most 1 000 states; the largest difference relative to the largest value."""
    from .models import spatial_chain

    count = min(states, 1000)
    rows = []
    for links in CHAIN_SIZES:
        rows += _tree_rows(f"chain {links}", spatial_chain(links), None, count)
    try:
        from .models import talos

        model, path = talos()
    except FileNotFoundError:
        return rows
    floating = talos(floating=True)[0]
    return rows + _tree_rows("talos", model, path, count) + _tree_rows("talos floating", floating, path, count)


def _forward_accuracy(pm, data, theirs: list[np.ndarray], qdd: np.ndarray) -> dict:
    """What two correct forward dynamics may differ by: the mass matrix's largest condition number κ over the
    states (their relative difference may reach about κ ε), and our accelerations' backward error measured with
    Pinocchio's M and bias forces, |M q̈ + h − τ| / |τ|, which rounding keeps near ε whatever κ."""
    import pinocchio as pin

    q, qd, _, tau = theirs
    kappa, backward = 0.0, 0.0
    for k in range(len(q)):
        mass = symmetric(pin.crba(pm, data, q[k]))
        residual = mass @ qdd[k] + pin.nle(pm, data, q[k], qd[k]) - tau[k]
        kappa = max(kappa, float(np.linalg.cond(mass)))
        backward = max(backward, float(np.abs(residual).max() / np.abs(tau[k]).max()))
    return {"condition_number": kappa, "backward_error": backward}


def _urdf_model(mech, urdf) -> tuple:
    """Pinocchio's own reading of the URDF (with a free flyer where our model floats) and, for each of its
    velocity coordinates, the index of ours (a free joint: position, then rotation, in both)."""
    import pinocchio as pin

    if mech.model.joints[0].type == "free":
        pm = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
        return pm, [*range(6), *(mech.coordinates.index(pm.names[j]) for j in range(2, pm.njoints))]
    pm = pin.buildModelFromUrdf(str(urdf))
    return pm, [mech.coordinates.index(pm.names[j]) for j in range(1, pm.njoints)]


def _tree_rows(label: str, model, urdf, count: int) -> list[dict]:
    import pinocchio as pin

    from ..dynamics.kernels import kernel
    from ..io.pinocchio_reference import ClosedLoopReference
    from ..kinematics import Mechanism

    mech = Mechanism(model)
    if urdf is None:
        reference = ClosedLoopReference.of(mech)  # plain revolute joints in our coordinates' order
        pm, order = reference.model, list(reference.ours)
    else:
        pm, order = _urdf_model(mech, urdf)
    floating = pm.nq > pm.nv
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, (count, mech.n)) for _ in range(3))
    if floating:  # the base not turned and not turning: there our rotation parameters (and their rates) and
        q[:, 3:6] = qd[:, 3:6] = 0.0  # Pinocchio's quaternion (and angular velocity) coincide
    tau = inverse_dynamics(mech, q, qd, qdd)
    theirs = [x[:, order] for x in (q, qd, qdd, tau)]
    if floating:
        theirs[0] = np.hstack([q[:, :3], np.tile([0.0, 0.0, 0.0, 1.0], (count, 1)), theirs[0][:, 6:]])
    data = pm.createData()
    cases = {
        "rnea": ("inverse_dynamics", (q, qd, qdd), pin.rnea, theirs[:3]),
        "crba": ("mass_matrix", (q,), pin.crba, theirs[:1]),
        "aba": ("forward_dynamics", (q, qd, tau), pin.aba, (theirs[0], theirs[1], theirs[3])),
    }
    target, rows = (1.25 if mech.n <= 6 else 1.0), []
    for algorithm, (name, args, call, their_args) in cases.items():
        comparison, ours_values, ref_values = one_state_comparison(
            kernel(model, name), args, call, (pm, data), their_args
        )
        ours_values = ours_values[:, order][:, :, order] if ours_values.ndim == 3 else ours_values[:, order]
        if algorithm == "crba":
            ours_values, ref_values = np.triu(ours_values), np.triu(ref_values)
        extra = _forward_accuracy(pm, data, theirs, ours_values) if algorithm == "aba" else {}
        rows.append(
            compared_row(
                f"{label} {algorithm}, one state",
                comparison,
                target=target,
                states=count,
                dof=mech.n,
                max_relative_difference=float(np.abs(ours_values - ref_values).max() / np.abs(ref_values).max()),
                reference_method=f"pinocchio.{algorithm} per state, bare calls, interleaved",
                **extra,
            )
        )
    batch = Side(inverse_dynamics, [(mech, q, qd, qdd)], per_call=count)
    theirs_rnea = [(pm, data, *state) for state in per_state(theirs[:3])]
    rows.append(
        compared_row(
            f"{label} rnea, batch of {count} (float64 numpy)",
            compare(batch, Side(pin.rnea, theirs_rnea), min_samples=5),
            states=count,
            dof=mech.n,
            reference_method="pinocchio.rnea per state, bare calls, interleaved",
        )
    )
    return rows
