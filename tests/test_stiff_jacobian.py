"""BDF's compiled Jacobian (dynamics/stiff_jacobian.py) against the engine's traced graph differentiated by CasADi
(an independent evaluation of the same derivative), and a stiff run with it against the ball's own mechanics."""

from __future__ import annotations

import casadi
import numpy as np
import pytest

from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.stiff_jacobian import stiff_rhs
from mbstudio.simulation.run import simulate

from .test_contact import G, ball, column

ROUNDING = 1e3 * np.finfo(float).eps  # the two evaluations' operations differ: a thousand ulps of the scale


def test_the_compiled_jacobian_is_the_traced_graphs_derivative():
    """A ball pressed into the ground while moving: every entry of ∂ẏ/∂y from the compiled jac_rhs equals the
    traced graph's to rounding of the Jacobian's scale, and the right-hand sides agree to rounding of theirs."""
    model = ball(0.099, dissipation=0.5)
    eng = engine(model)
    rhs = stiff_rhs(eng)
    if rhs is None:
        pytest.skip("no C compiler: the traced Jacobian serves")
    y = eng.pack(np.array([0.01, -0.02, 0.099, 0.1, -0.2, 0.3]), np.array([0.3, -0.2, -0.5, 1.0, 2.0, -1.5]))
    derivative = np.asarray(casadi.Function("d", [t := casadi.MX.sym("t"), x := casadi.MX.sym("y", len(y))],
                                            [casadi.jacobian(rhs(t, x)[0], x)])(0.1, y))  # fmt: skip
    traced = eng.state_jacobian(0.1, y)
    assert np.abs(derivative - traced).max() <= ROUNDING * np.abs(traced).max()
    y_dot = np.asarray(rhs(0.1, y)[0]).ravel()
    assert np.abs(y_dot - eng.ode(0.1, y)).max() <= ROUNDING * np.abs(y_dot).max()


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
