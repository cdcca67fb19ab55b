"""The cone complementarity solver (dynamics/rigid_contact.py) on problems whose contacts stick, slide and
separate at once, checked against Coulomb's law itself contact by contact, and its compiled ADMM blocks against
the same blocks on CasADi's virtual machine (the path taken without a C compiler)."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio.dynamics import rigid_contact
from mbstudio.dynamics.rigid_contact import solve_in_frames
from mbstudio.numerics.native_call import calls

TOLERANCE = 1e-10


def problem(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """G = J M⁻¹ Jᵀ of three contacts on a random 12-coordinate body set, a free velocity g pressing the first
    contact in, pushing the second sideways hard and lifting the third, and μ."""
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(9, 12))
    A = rng.normal(size=(12, 12))
    G = J @ np.linalg.solve(A @ A.T + 12 * np.eye(12), J.T)
    g = np.array([0.01, -0.02, -1.0, 3.0, 1.0, -0.5, 0.1, 0.2, 2.0])
    return G, g, np.array([0.8, 0.3, 0.5])


def assert_coulomb(G, g, friction, lam) -> None:
    """Each contact: separating (λ = 0, σ_n ≥ 0), sticking (σ = 0, λ inside its cone) or sliding (σ_n = 0, λ on
    the cone's edge, opposite the slip σ_t), to the solver's tolerance of the forces' and velocities' scales."""
    sigma = (G @ lam + g).reshape(-1, 3)
    forces = lam.reshape(-1, 3)
    scale_f, scale_v = np.abs(lam).max(), np.abs(g).max()
    for (t1, t2, n), (s1, s2, sn), mu in zip(forces, sigma, friction, strict=True):
        tangent, slip = np.hypot(t1, t2), np.hypot(s1, s2)
        assert tangent <= mu * n + 1e-8 * scale_f and n >= -1e-8 * scale_f
        assert n * sn == pytest.approx(0.0, abs=1e-7 * scale_f * scale_v)  # pressing or apart, never both
        if slip > 1e-6 * scale_v:  # sliding: on the edge, against the slip
            assert tangent == pytest.approx(mu * n, abs=1e-7 * scale_f)
            assert t1 * s1 + t2 * s2 == pytest.approx(-tangent * slip, abs=1e-6 * scale_f * scale_v)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_solution_keeps_coulombs_law_at_every_contact(seed):
    G, g, friction = problem(seed)
    lam, used, residual = solve_in_frames(G, g, friction, TOLERANCE, 20000)
    assert used > 0 and residual <= TOLERANCE  # not every point can stick: the iterations ran
    assert_coulomb(G, g, friction, lam)


def test_the_blocks_on_the_virtual_machine_give_the_compiled_result(monkeypatch):
    G, g, friction = problem(0)
    compiled = solve_in_frames(G, g, friction, TOLERANCE, 20000)
    traced = {"admm": rigid_contact._traced_block(3)}
    monkeypatch.setattr(rigid_contact, "_admm_block", lambda m: calls(traced)["admm"])
    uncompiled = solve_in_frames(G, g, friction, TOLERANCE, 20000)
    assert uncompiled[1] == compiled[1]
    assert np.abs(uncompiled[0] - compiled[0]).max() <= 1e3 * np.finfo(float).eps * np.abs(compiled[0]).max()
