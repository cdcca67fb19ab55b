"""The state equation with the Jacobian ∂ẏ/∂y of BDF's Newton iterations compiled beside it.

CVODES-BDF solves each step's implicit equations by Newton iterations on the matrix I − γ ∂ẏ/∂y, and CasADi's
interface to it evaluates the Jacobian at every setup of that matrix (a trot's foot contacts ask for one every
four or five steps); differentiating the engine's graph on CasADi's virtual machine cost solo12 1.8 ms a
Jacobian. Here the state equation is expanded to scalar operations, its Jacobian formed once, and both are
compiled into one library filed in the engine cache: `rhs(t, y) -> (ẏ, P_nc)` and `jac_rhs`, which CasADi finds
by its name and uses for every derivative of `rhs`. The generalized forces τ of the engine's own state equation
are zero here (the integrators pass none).

For a tree (no dependent coordinates) the Jacobian is the one Newton's matrix needs, not the exact one: the rows
of the accelerations are M⁻¹ ∂Q/∂y, the force elements' derivatives (contacts, stiff springs and dampers, PD
gains: the stiff terms) through the mass matrix, and leave out the derivatives of the inertial and gravity terms
(M's dependence on q, the velocity products, gravity), which are of the order of the motion's own rates (|q̇|,
sqrt(g / l)): a step h that resolves the motion makes γ times them small beside I. The rows of the coordinates'
rates (a quaternion's, ω's from q̈), of the force laws' own states and of the power are exact. CVODES' error and
convergence tests decide what a step computes; the matrix only decides how fast its iterations converge
(Hindmarsh et al. 2005): on solo12's trot this one takes 14 055 evaluations where the exact one took 14 030, at a
third of its cost (60 000 operations for 172 000; tests/test_stiff_jacobian.py). Its iterates converge less far
in a step's first iterations, so the integrators stop them at a hundredth of the error test's tolerance
(simulation/integrators.py, BDF_CONVERGENCE). A model with closed loops gets the exact Jacobian: its
accelerations come from the projected equations, not from M⁻¹.

Models whose state is larger than STATES, or whose graph cannot be expanded to scalars, keep the traced
Jacobian: the expanded Jacobian's C grows with the state times the right-hand side, and its compile time with it.
"""

from __future__ import annotations

import functools
import hashlib

import casadi
import numpy as np

from ..kinematics.mechanism import Mechanism
from ..model import loads
from ..numerics.compiled import Traced, cached_functions, engine_key, filed_functions, to_sparse_sx
from .augmented import _backward, _cholesky, _forward
from .engine import _Graph, _Pieces
from .mass_matrix import mass_matrix

STATES = 64  # solo12's floating base and twelve joints: 37 states
OPERATIONS = 400_000  # beyond this the Jacobian's compile takes minutes on a loaded machine: the traced one serves
STEM = "stiff"


@functools.lru_cache(maxsize=8)  # as many as the engines kept (dynamics/engine.py): an edited model's go
def stiff_rhs(eng) -> casadi.Function | None:
    """(t, y) -> (ẏ, P_nc) of the engine at τ = 0, its Newton Jacobian compiled with it; None where the traced
    Jacobian serves (a large state, a graph with operations that have no scalar form, or no compiled library)."""
    if eng.state_size > STATES:
        return None
    key = hashlib.sha256(f"{STEM}\n{engine_key(eng.text, eng.mech.partition)}".encode()).hexdigest()
    found = filed_functions(key, STEM)
    if found is None:
        functions = _traced(eng)
        if functions is None:
            return None
        found = cached_functions(key, STEM, lambda: (functions, {}))
    return found.functions["rhs"] if found.compiled else None


def _traced(eng) -> list[casadi.Function] | None:
    """rhs and jac_rhs on scalar symbols, in the signature CasADi asks of a Jacobian (the inputs, then the
    outputs as empty placeholders; one block per output and input)."""
    t, y = casadi.SX.sym("t"), casadi.SX.sym("y", eng.state_size)
    try:
        outputs = eng.work_rate(t, y, casadi.DM.zeros(eng.n))
    except (RuntimeError, NotImplementedError):  # a node without a scalar form (a sparse factorisation)
        return None
    rhs = casadi.Function("rhs", [t, y], outputs, ["t", "y"], ["y_dot", "power"], {"cse": True})
    pairs = zip(rhs.name_out(), outputs, strict=True)
    placeholders = [casadi.SX.sym(f"out_{name}", casadi.Sparsity(*o.shape)) for name, o in pairs]
    if eng.mech.partition.dependent:
        rates = [casadi.jacobian(outputs[0], x) for x in (t, y)]
    else:
        rates = newton_rates(eng, t, y)
    blocks = [*rates, *(casadi.jacobian(outputs[1], x) for x in (t, y))]
    jac = casadi.Function("jac_rhs", [t, y, *placeholders], blocks, {"cse": True})
    if jac.n_instructions() > OPERATIONS:
        return None
    return [rhs, jac]


def newton_rates(eng, t: casadi.SX, y: casadi.SX) -> list[casadi.SX]:
    """(∂ẏ/∂t, ∂ẏ/∂y) of a tree's state equation with the accelerations' rows M⁻¹ (∂Q/∂t, ∂Q/∂y): the coordinates'
    rates and the laws' states' rates differentiated exactly at the accelerations q̈ the engine computes."""
    mech = Mechanism(loads(eng.text), backend=Traced(), partition=eng.mech.partition)
    pieces, n, size = _Pieces(mech), mech.n, eng.states.size
    a, z = casadi.SX.sym("a", n), y[size:]
    if eng.states.quaternions:
        unpack, rate = _Graph(pieces, mech.partition, casadi.MX, False)._ball_maps()
        q, v = unpack(y[:size])
        rates = rate(y[:size], q, v, v, a)
    else:
        q, v = y[:n], y[n:size]
        rates = casadi.vertcat(v, a)
    if z.numel():
        rates = casadi.vertcat(rates, pieces.law_rates(t, q, v, z))
    forces = pieces.forces(t, q, v, casadi.SX.zeros(n), z)
    mass = mass_matrix(mech, np.array([[q[i] for i in range(n)]], dtype=object))[0]
    lower = _cholesky(mass)
    columns = casadi.horzcat(casadi.jacobian(forces, t), casadi.jacobian(forces, y))  # ∂Q/∂t, then ∂Q/∂y
    solved = np.empty((n, columns.size2()), dtype=object)  # M⁻¹ (∂Q/∂t, ∂Q/∂y), filled by items: SX is no sequence
    for c in range(columns.size2()):
        solved[:, c] = _backward(lower, _forward(lower, [columns[i, c] for i in range(n)]))
    accelerations = to_sparse_sx(solved)
    along = casadi.jacobian(rates, a)
    blocks = [
        casadi.jacobian(rates, t) + casadi.mtimes(along, accelerations[:, 0]),
        casadi.jacobian(rates, y) + casadi.mtimes(along, accelerations[:, 1:]),
    ]
    return [casadi.substitute(b, a, pieces.forward(q, v, forces)) for b in blocks]
