"""BDF's compiled Jacobian (dynamics/stiff_jacobian.py): a tree's against the force elements' derivatives through the
numpy path's mass matrix, a closed loop's against the engine's traced graph differentiated by CasADi, and a stiff
run with it against the ball's own mechanics."""

from __future__ import annotations

import casadi
import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.dynamics.stiff_jacobian import stiff_rhs
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps, loads
from mbstudio.simulation.run import simulate

from .test_contact import CORNER, HALF, G, ball, block, column

ROUNDING = 1e3 * np.finfo(float).eps  # the two evaluations' operations differ: a thousand ulps of the scale


def compiled_jacobian(rhs: casadi.Function, t: float, y: np.ndarray) -> np.ndarray:
    """∂ẏ/∂y as CasADi forms it from the compiled rhs, through its jac_rhs (what CVODES-BDF's Newton matrix gets)."""
    x, time = casadi.MX.sym("y", len(y)), casadi.MX.sym("t")
    return np.asarray(casadi.Function("d", [time, x], [casadi.jacobian(rhs(time, x)[0], x)])(t, y))


def test_a_trees_newton_jacobian_is_the_force_elements_derivative_through_the_mass_matrix():
    """The block on four stiff corner contacts, tilted on Euler angles, pressed in while sliding and turning: the
    acceleration rows of the compiled Jacobian are M⁻¹ ∂Q/∂(q, q̇), with M and Q from the numpy path and ∂Q by
    central differences (an independent route), to the differences' error; the coordinates' rows are exactly
    (0, I); what the exact derivative adds (the inertial and gravity terms) is small beside it; and ẏ is exact."""
    model = block(0.5)
    model.joints[0].type = "free_euler"
    model = loads(dumps(model))
    eng = engine(model)
    rhs = stiff_rhs(eng)
    if rhs is None:
        pytest.skip("no C compiler: the traced Jacobian serves")
    q = np.array([0.01, -0.02, HALF[2] + CORNER - 2e-4, 0.02, -0.03, 0.1])
    qd = np.array([0.3, -0.2, -0.05, 0.4, 0.8, -1.5])
    y, n = eng.pack(q, qd), len(q)
    jacobian = compiled_jacobian(rhs, 0.1, y)
    mech = Mechanism(model)
    forces = AppliedForces(mech)

    def generalized(x: np.ndarray) -> np.ndarray:
        return forces.generalized(np.array([0.1]), x[None, :n], x[None, n:])[0]

    steps = 1e-7 * np.concatenate([np.full(n, mech.length_scale), np.ones(n)])
    differences = np.column_stack(
        [(generalized(y + e) - generalized(y - e)) / (2 * e[k]) for k, e in enumerate(np.diag(steps))]
    )
    expected = np.linalg.solve(mass_matrix(mech, q[None])[0], differences)
    scale = np.abs(expected).max()
    # the differences' error (their steps squared times the contact law's third derivatives, and rounding over the
    # steps) is far below this: measured 1e-10 of the scale
    assert np.abs(jacobian[n:] - expected).max() <= 1e-7 * scale
    assert np.array_equal(jacobian[:n], np.hstack([np.zeros((n, n)), np.eye(n)]))
    exact = eng.state_jacobian(0.1, y)
    left_out = np.abs(jacobian - exact).max()
    assert 0 < left_out <= 1e-3 * scale  # 3.5e-4: gravity's and the block's turning against the contacts' stiffness
    y_dot = np.asarray(rhs(0.1, y)[0]).ravel()
    assert np.abs(y_dot - eng.ode(0.1, y)).max() <= ROUNDING * np.abs(y_dot).max()


def test_a_closed_loops_jacobian_is_the_traced_graphs_derivative():
    """The four-bar (its accelerations from the projected equations, not M⁻¹): every entry of the compiled
    ∂ẏ/∂y equals the traced graph's differentiated by CasADi (an independent evaluation of the same derivative)
    to rounding of the Jacobian's scale."""
    model = samples.load("four_bar")
    eng = engine(model)
    rhs = stiff_rhs(eng)
    if rhs is None:
        pytest.skip("no C compiler: the traced Jacobian serves")
    q = eng.close_loops(eng.mech.tree.initial_coordinates())[0]
    y = eng.pack(q, np.array([2.0]))
    traced = eng.state_jacobian(0.3, y)
    assert np.abs(compiled_jacobian(rhs, 0.3, y) - traced).max() <= ROUNDING * np.abs(traced).max()


def test_a_stiff_run_on_the_compiled_jacobian_keeps_the_balls_mechanics():
    """A ball dropped on a stiff, damped contact by CVODES-BDF: it falls freely until touch-down (z = z₀ − g t²/2),
    comes to rest on the static penetration (m g / k)^(1/n) and its energy only falls."""
    model = ball(0.2, dissipation=5.0)
    result = simulate(model, 1.0, method="CVODES-BDF", samples=101, rtol=1e-8, atol=1e-10)
    z, t = result.q[:, 2], result.t
    before = t < 0.1  # the ball touches at sqrt(2 · 0.1 / g) = 0.143 s
    assert z[before] == pytest.approx(0.2 - G * t[before] ** 2 / 2, abs=1e-7)
    assert column(result, "f.penetration")[-1] == pytest.approx((G / 1e5) ** (1 / 1.5), rel=1e-3)
    energy = result.kinetic + result.potential
    assert np.diff(energy).max() <= 1e-6 * np.abs(energy).max()
