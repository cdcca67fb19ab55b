"""What one Moreau step with rigid contacts needs of a tree, as one compiled function (docs/contact.md).

At the step's midpoint (t, q) with the velocity v at its start and the step h, for every contact sphere of the
model (the same order as its contact elements), in each contact's frame (t1, t2, n) (rigid_contact.contact_frames):

    v_f = v + h M⁻¹ (Q − b)              the free velocity: every force element but the contacts
    W = M⁻¹ Jᵀ,  G = J W                the impulses' effect on v and the Delassus matrix (3m × 3m)
    u_f = J v_f,  u_0 = J v             the points' velocities, free at the step's end and at its start
    a = δ − h/2 (u_f)_n                 the penetration at the step's end without contact forces (active: a ≥ 0)

J stacks the Jacobians (3, n) of the spheres' points nearest their planes. Traced once on scalar symbols (the
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
from ..model import Model, dumps, loads
from ..model.document import Contact
from ..numerics.compiled import Traced, cached_functions, engine_key, symbols, to_sparse_sx
from .force_laws.contact_law import ContactLaw
from .forces import AppliedForces
from .inverse_dynamics import bias_forces
from .mass_matrix import mass_matrix
from .rigid_contact import contact_frames

STEM = "rigid_step"
OUTPUTS = ("v_free", "W", "G", "u_free", "u_start", "ahead")


def rigid_step_terms(model: Model) -> Callable:
    """(t, q, v, h) -> OUTPUTS (arrays; the vectors 1-d) of the model's tree and contact elements, compiled where a
    C compiler is found (else on CasADi's virtual machine), built once per model text on this machine."""
    text = dumps(model)
    key = hashlib.sha256(f"{STEM}\n{engine_key(text)}".encode()).hexdigest()
    return cached_functions(key, STEM, lambda: ([_traced(text)], {})).calls[STEM]


def _traced(text: str) -> casadi.Function:
    mech = Mechanism(loads(text), backend=Traced())
    n = mech.n
    t, h = casadi.SX.sym("t"), casadi.SX.sym("h")
    (q_sx, q), (v_sx, v) = symbols("q", n), symbols("v", n)
    elements = mech.model.forces
    others = AppliedForces(mech, [f for f in elements if not isinstance(f, Contact)])
    times = np.array([t], dtype=object)
    force = others.generalized(times, q[None], v[None])[0] - bias_forces(mech, q[None], v[None])[0]
    st = mech.motion(q[None], v[None])
    depths, rows = [], []
    for law in AppliedForces(mech, elements).laws:
        if isinstance(law, ContactLaw):
            depth, _, J = law.place(st)
            frame = contact_frames(np.asarray(law.plane()[1], float)[None])[0]
            depths.append(depth[0])
            rows += list(frame @ J[0])  # the point's Jacobian in its contact's frame (t1, t2, n)
    J = casadi.densify(to_sparse_sx(np.array(rows, dtype=object).reshape(-1, n))) if rows else casadi.SX(0, n)
    M = casadi.densify(to_sparse_sx(mass_matrix(mech, q[None])[0]))
    solved = casadi.solve(M, casadi.horzcat(to_sparse_sx(force), J.T))
    v_free = v_sx + h * solved[:, 0]
    W = solved[:, 1:]
    u_free = casadi.mtimes(J, v_free)
    ahead = to_sparse_sx(np.array(depths, dtype=object)) - h / 2 * u_free[2::3] if depths else casadi.SX(0, 1)
    outputs = [v_free, W, casadi.mtimes(J, W), u_free, casadi.mtimes(J, v_sx), ahead]
    return casadi.Function(STEM, [t, q_sx, v_sx, h], [casadi.densify(o) for o in outputs], ["t", "q", "v", "h"],
                           list(OUTPUTS), {"cse": True})  # fmt: skip
