"""What one Moreau step with rigid contacts needs of a tree, as one compiled function (docs/contact.md).

At the step's midpoint (t, q) with the velocity v at its start and the step h, for every contact sphere of the
model (the same order as its contact elements), in each contact's frame (t1, t2, n) (rigid_contact.contact_frames):

    v_f = v + h M⁻¹ (Q − b)              the free velocity: every force element but the contacts
    W = M⁻¹ Jᵀ,  G = J W                the impulses' effect on v and the Delassus matrix (3m × 3m)
    u_f = J v_f,  u_0 = J v             the points' velocities, free at the step's end and at its start
    a = δ − h/2 (u_f)_n                 the penetration at the step's end without contact forces (active: a ≥ 0)

J stacks the Jacobians (3, n) of the spheres' points nearest their planes. On closed loops M⁻¹ is R (Rᵀ M R)⁻¹ Rᵀ
and the free velocity that of the independent coordinates (`_loop_velocities`), and the loop equations and R are
compiled with them, for closing the loops at each step's end. Traced once on scalar symbols (the
solves by CasADi's symbolic QR of M: straight-line code over n), compiled with the system's C compiler and filed in
the engine cache under the model's text and the traced code's version, so a later process loads it without
tracing: the step's terms of solo12 cost 25 µs, against 0.15 ms on CasADi's virtual machine and 0.8 s to trace.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import casadi
import numpy as np

from ..kinematics import Mechanism
from ..kinematics.coordinates import Partition
from ..kinematics.fast_assembly import FastAssembly
from ..model import Model, dumps, loads
from ..model.document import Contact
from ..numerics.compiled import Native, Traced, cached_functions, engine_key, symbols, to_sparse_sx
from .contact_shapes import point_contacts
from .force_laws.contact_law import ContactLaw
from .forces import AppliedForces
from .inverse_dynamics import bias_forces, inverse_dynamics
from .mass_matrix import mass_matrix
from .rigid_contact import contact_frames

STEM = "rigid_step"
OUTPUTS = ("v_free", "W", "G", "u_free", "u_start", "ahead")


def rigid_step_terms(model: Model, partition: Partition | None = None) -> Callable:
    """(t, q, v, h) -> OUTPUTS (arrays; the vectors 1-d) of the model's tree and contact elements, compiled where a
    C compiler is found (else on CasADi's virtual machine), built once per model text (and, on closed loops, per
    `partition` of the coordinates: the document's by default) on this machine."""
    return _native(model, partition).calls[STEM]


def loop_assembly(mech: Mechanism) -> FastAssembly:
    """A closed-loop mechanism's assembly on compiled loop equations (Newton on the dependent coordinates at given
    independent ones) and its velocity map R, filed with its step's terms."""
    native = _native(mech.model, mech.partition)
    return FastAssembly(mech, native.functions["closure"], native.functions["r_matrix"])


def _native(model: Model, partition: Partition | None) -> Native:
    text = dumps(model)
    chosen = "" if partition is None or not partition.dependent else f"\n{partition}"
    key = hashlib.sha256(f"{STEM}\n{engine_key(text)}{chosen}".encode()).hexdigest()
    return cached_functions(key, STEM, lambda: (_traced(text, partition), {}))


def _traced(text: str, partition: Partition | None) -> list[casadi.Function]:
    mech = Mechanism(loads(text), backend=Traced(), partition=partition)
    n = mech.n
    t, h = casadi.SX.sym("t"), casadi.SX.sym("h")
    (q_sx, q), (v_sx, v) = symbols("q", n), symbols("v", n)
    elements = mech.model.forces
    others = AppliedForces(mech, [f for f in elements if not isinstance(f, Contact)])
    times = np.array([t], dtype=object)
    applied = others.generalized(times, q[None], v[None])[0]
    st = mech.motion(q[None], v[None])
    depths, rows = [], []
    for law in point_contacts(law for law in AppliedForces(mech, elements).laws if isinstance(law, ContactLaw)):
        depth, _, J = law.place(st)
        frame = contact_frames(np.asarray(law.plane()[1], float)[None])[0]
        depths.append(depth[0])
        rows += list(frame @ J[0])  # the point's Jacobian in its contact's frame (t1, t2, n)
    J = casadi.densify(to_sparse_sx(np.array(rows, dtype=object).reshape(-1, n))) if rows else casadi.SX(0, n)
    M = casadi.densify(to_sparse_sx(mass_matrix(mech, q[None])[0]))
    if mech.partition.dependent:
        R = casadi.densify(to_sparse_sx(mech.r_matrix(q[None])[0]))
        v_free, W = _loop_velocities(mech, q, v, v_sx, applied, J, M, R, h)
        extra = _loop_closure(mech, q_sx, q, R)
    else:
        force = applied - bias_forces(mech, q[None], v[None])[0]
        solved = casadi.solve(M, casadi.horzcat(to_sparse_sx(force), J.T))
        v_free, W, extra = v_sx + h * solved[:, 0], solved[:, 1:], []
    u_free = casadi.mtimes(J, v_free)
    ahead = to_sparse_sx(np.array(depths, dtype=object)) - h / 2 * u_free[2::3] if depths else casadi.SX(0, 1)
    outputs = [v_free, W, casadi.mtimes(J, W), u_free, casadi.mtimes(J, v_sx), ahead]
    step = casadi.Function(STEM, [t, q_sx, v_sx, h], [casadi.densify(o) for o in outputs], ["t", "q", "v", "h"],
                           list(OUTPUTS), {"cse": True})  # fmt: skip
    return [step, *extra]


def _loop_velocities(mech: Mechanism, q, v, v_sx, applied, J, M, R, h) -> tuple[casadi.SX, casadi.SX]:
    """The free velocity and M⁻¹ Jᵀ's counterpart of a closed-loop mechanism, stepped in its independent
    coordinates: the loop forces drop out of Rᵀ (M q̈ + b − Q − Jᵀ λ) = 0 with q̈ = R q̈_ind + a
    (dynamics/closed_loop.py), so v_ind,f = v_ind + h q̈_ind with Rᵀ M R q̈_ind = Rᵀ (Q − M a − b), and
    W = R (Rᵀ M R)⁻¹ (J R)ᵀ. Both are mapped by R at the midpoint, so that the contact velocities J v_f lie in
    the range of J R, the only ones any motion on the loops gives."""
    a = mech.acceleration_term(q[None], v[None])
    bias = inverse_dynamics(mech, q[None], v[None], a)[0]  # M a + b
    reduced = casadi.mtimes([R.T, M, R])
    JR = casadi.mtimes(J, R)
    solved = casadi.solve(reduced, casadi.horzcat(casadi.mtimes(R.T, to_sparse_sx(applied - bias)), JR.T))
    v_ind = v_sx[list(mech.partition.independent)]
    return casadi.mtimes(R, v_ind + h * solved[:, 0]), casadi.mtimes(R, solved[:, 1:])


def _loop_closure(mech: Mechanism, q_sx, q, R) -> list[casadi.Function]:
    """What brings a step's end back onto the loops, as the engine's (kinematics/fast_assembly.py): `closure`
    (q) -> (Φ on the partition's rows, its Jacobian by the dependent coordinates) and `r_matrix` (q) -> R."""
    rows, dep = list(mech.partition.rows), list(mech.partition.dependent)
    phi = casadi.densify(to_sparse_sx(mech.residual(q[None])[0][rows]))
    jacobian = casadi.densify(to_sparse_sx(mech.constraint_jacobian(q[None])[0][rows][:, dep]))
    return [casadi.Function("closure", [q_sx], [phi, jacobian], {"cse": True}),
            casadi.Function("r_matrix", [q_sx], [R], {"cse": True})]  # fmt: skip
