"""Closed-loop kinematics checked against independent routes: variable-precision finite differences of
the constraint equations and of assembled positions, and loop closure in float64 and at 50 digits."""

from __future__ import annotations

import functools
import warnings

import mpmath
import numpy as np
import pytest

from mbstudio import samples
from mbstudio.kinematics import Mechanism
from mbstudio.kinematics.mechanism import BranchChangeWarning
from mbstudio.numerics import as_mpf

from .conftest import slow_for
from .kinematic_paths import four_bar_branch_side, independent_path

DIGITS = 50


@functools.cache
def mechanism(name: str, precision=None) -> Mechanism:
    return Mechanism(samples.load(name), precision=precision)


# loops closed by constraint equations (the bushed SLA's loops close through bushings: free joints, no equation)
CLOSED = slow_for([n for n in samples.names() if mechanism(n).topology.loops and mechanism(n).constraints.m], set())
ALL = samples.names()


def random_q(mech: Mechanism, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return mech.tree.initial_coordinates().astype(float) + rng.uniform(-0.3, 0.3, mech.n)


@pytest.mark.parametrize("name", CLOSED)
def test_constraint_jacobian_matches_variable_precision_finite_differences(name):
    fp, mp = mechanism(name), mechanism(name, DIGITS)
    q = random_q(fp, 1)
    analytic_vp = as_mpf(mp.constraint_jacobian(q)[0])
    h = mpmath.mpf("1e-20")
    with mpmath.workdps(DIGITS):
        base = as_mpf(mp.as_batch(q)[0])
        fd = np.empty(analytic_vp.shape, dtype=object)
        for k in range(mp.n):
            plus, minus = base.copy(), base.copy()
            plus[k] += h
            minus[k] -= h
            fd[:, k] = (as_mpf(mp.residual(plus)[0]) - as_mpf(mp.residual(minus)[0])) / (2 * h)
        vp_error = max(abs(x) for x in (fd - analytic_vp).ravel())
    assert vp_error < mpmath.mpf("1e-30")
    # the float64 Jacobian agrees with the 50-digit one to double precision
    np.testing.assert_allclose(fp.constraint_jacobian(q)[0], analytic_vp.astype(float), rtol=0, atol=1e-13)


@pytest.mark.parametrize("name", CLOSED)
def test_loops_close_along_a_trajectory_in_float64(name):
    mech = mechanism(name)
    t = np.linspace(0.0, 20.0, 401)
    q = mech.assemble_path(independent_path(mech, t))
    assert np.abs(mech.residual(q)).max() < 1e-12
    ind = list(mech.partition.independent)
    np.testing.assert_allclose(q[:, ind], independent_path(mech, t), rtol=0, atol=0)


@pytest.mark.parametrize("name", CLOSED)
def test_loops_close_at_50_digits(name):
    fp, mp = mechanism(name), mechanism(name, DIGITS)
    t = [0.7, 3.3]
    guess = fp.assemble_path(independent_path(fp, np.linspace(0, 3.3, 34)))[[7, 33]]
    q = mp.assemble(independent_path(mp, t, dps=DIGITS), guess=guess)
    residual = np.abs(as_mpf(mp.residual(q))).max()  # as mpf: gmpy2 before 2.2 does not compare mpfr with mpf
    assert residual < mpmath.mpf("1e-45")
    # and the float64 assembly is the 50-digit one rounded
    np.testing.assert_allclose(q.astype(float), fp.assemble(independent_path(fp, t), guess=guess), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", CLOSED)
def test_velocities_and_accelerations_match_finite_differences_of_assembled_positions(name):
    """q̇ = R q̇_ind and q̈ = R q̈_ind + term, against central differences at 50 digits of q(t) along a
    path (h = 1e-12: truncation ~1e-24, rounding ~1e-26)."""
    fp, mp = mechanism(name), mechanism(name, DIGITS)
    t0 = 1.9
    guess = fp.assemble_path(independent_path(fp, np.linspace(0, t0, 20)))[-1:]
    with mpmath.workdps(DIGITS):
        h = mpmath.mpf("1e-12")
        times = [mpmath.mpf(repr(t0)) + k * h for k in (-1, 0, 1)]
        q = as_mpf(mp.assemble(independent_path(mp, times, dps=DIGITS), guess=np.repeat(guess, 3, axis=0)))
        qd = as_mpf(mp.velocities(q[1:2], independent_path(mp, times[1:2], 1, dps=DIGITS))[0])
        qdd = as_mpf(mp.accelerations(q[1:2], qd[None, :], independent_path(mp, times[1:2], 2, dps=DIGITS))[0])
        fd_v = (q[2] - q[0]) / (2 * h)
        fd_a = (q[2] - 2 * q[1] + q[0]) / h**2
        assert max(abs(x) for x in fd_v - qd) < mpmath.mpf("1e-20")
        assert max(abs(x) for x in fd_a - qdd) < mpmath.mpf("1e-18")


@pytest.mark.parametrize("name", CLOSED)
def test_r_matrix_spans_the_null_space_of_the_constraint_jacobian(name):
    mech = mechanism(name)
    q = mech.assemble(None)
    J = mech.constraint_jacobian(q)[0]
    R = mech.r_matrix(q)[0]
    assert np.abs(J @ R).max() < 1e-12
    assert np.linalg.matrix_rank(R) == mech.dof


@pytest.mark.parametrize("name", [n for n in ("double_pendulum", "puma560", "four_bar") if n in ALL])
def test_symbolic_forward_kinematics_equals_float64(name):
    """Body origins as sympy expressions in the coordinates and geometric symbols, substituted, equal the
    float64 ones."""
    import sympy

    fp, sym = mechanism(name), mechanism(name, "sympy")
    q_sym = np.array([[sympy.Symbol(c) for c in sym.coordinates]], dtype=object)
    st = sym.tree.motion(q_sym)
    q = random_q(fp, 3)
    values = {sympy.Symbol(c): v for c, v in zip(sym.coordinates, q, strict=True)}
    values.update({sympy.Symbol(p, real=True): v for p, v in fp.model.parameter_values().items()})
    numeric = fp.tree.motion(q[None, :])
    for b in range(len(st.p)):
        got = np.array([float(sympy.sympify(x).subs(values)) for x in st.p[b][0]])
        np.testing.assert_allclose(got, numeric.p[b][0], rtol=0, atol=1e-13)


def test_assembly_keeps_the_branch_of_its_starting_pose():
    """One call per crank angle, as a script or the window makes them: Newton alone jumped to the crossed
    branch for θ1 in [−2.97, −1.40] rad."""
    mech = Mechanism(samples.load("four_bar"))
    q0 = mech.assemble()[0]
    side = four_bar_branch_side(mech, q0[None])
    angles = np.linspace(-np.pi, np.pi, 37)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no BranchChangeWarning
        for theta in angles:
            q = mech.assemble({"theta1": theta})
            assert four_bar_branch_side(mech, q) == side and not mech.last_report.branch_changed.any(), theta
            assert np.abs(q[0, 1:] - q0[1:]).max() < np.pi  # whole turns unwound: the angles a user expects
        batch = mech.assemble({"theta1": angles})
    assert (four_bar_branch_side(mech, batch) == side).all()
    path = mech.assemble_path(angles[:, None])  # continuation along the path: the same poses, whole turns aside
    assert np.abs(np.angle(np.exp(1j * (batch - path)))).max() < 1e-9


def test_a_branch_change_that_cannot_be_avoided_is_reported(monkeypatch):
    mech = Mechanism(samples.load("four_bar"))
    side = four_bar_branch_side(mech, mech.assemble())

    original = mech._homotopy

    def blocked(start, target, steps):  # as if a singular configuration barred the way on this branch
        q, report = original(start, target, steps)
        report.converged[:] = False
        return q, report

    monkeypatch.setattr(mech, "_homotopy", blocked)
    with pytest.warns(BranchChangeWarning, match="at theta1 = -2.5 the loops close only on another assembly branch"):
        q = mech.assemble({"theta1": -2.5})
    assert mech.last_report.branch_changed.all() and four_bar_branch_side(mech, q) == -side
    assert np.abs(mech.residual(q)).max() < 1e-10
