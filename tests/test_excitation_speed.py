"""The exciting-trajectory optimiser's exact gradient on a tree (a 6-dof arm, the PUMA 560).

Independent routes: W_b from the CasADi function against the numpy observation matrix of the same Fourier
path; the adjoint gradient of log10 cond₂(W_b) against central finite differences of the numpy route's
log10 cond₂; the optimised trajectory's limits checked on a fine grid of its own series.
"""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.identification import FourierPath, observation_matrix
from mbstudio.identification.estimation import condition_number
from mbstudio.identification.excitation import TreeCondition, _split, log_condition, optimise_excitation
from mbstudio.identification.gautier import gautier_dp
from mbstudio.kinematics import Mechanism


def puma_problem(harmonics: int = 2, samples_: int = 40):
    """(mech, omegas, times, kept base columns, a random decision vector) on the PUMA 560."""
    mech = Mechanism(samples.load("puma560"))
    omegas = [[0.5 * (k + 1) for k in range(harmonics)] for _ in mech.independent]
    times = np.linspace(0.0, 4 * np.pi, samples_)
    x = np.random.default_rng(7).uniform([0.05] * 12 + [-np.pi] * 12, [0.4] * 12 + [np.pi] * 12)
    W = observation_matrix(mech, times, FourierPath(mech, _split(x, omegas)))
    kept = gautier_dp(W, mech.model.inertial_parameter_names()).kept_indices
    return mech, omegas, times, kept, x


def test_casadi_observation_matrix_is_the_numpy_one():
    mech, omegas, times, kept, x = puma_problem()
    W = observation_matrix(mech, times, FourierPath(mech, _split(x, omegas)))[:, kept]
    traced = TreeCondition(mech, omegas, times, kept).matrix(x)
    assert traced.shape == W.shape
    # both sum the same products in a different order: a few hundred ulps of the largest entry
    np.testing.assert_allclose(traced, W, rtol=0, atol=500 * np.finfo(float).eps * np.abs(W).max())


def test_gradient_of_the_log_condition_equals_finite_differences():
    mech, omegas, times, kept, x = puma_problem()
    value, gradient = TreeCondition(mech, omegas, times, kept)(x)
    assert value == pytest.approx(log_condition(mech, _split(x, omegas), times, kept), rel=1e-9)
    # central differences of the numpy route: truncation ~h² f''', rounding ~ε f / h, both far below 1e-6 |g|
    h = 1e-5
    steps = np.eye(len(x)) * h
    numeric = np.array(
        [
            (
                log_condition(mech, _split(x + e, omegas), times, kept)
                - log_condition(mech, _split(x - e, omegas), times, kept)
            )
            / (2 * h)
            for e in steps
        ]
    )
    assert np.linalg.norm(gradient - numeric) <= 1e-6 * np.linalg.norm(gradient)


@pytest.mark.slow
def test_optimised_puma_trajectory_is_better_conditioned_and_within_its_limits():
    mech = Mechanism(samples.load("puma560"))
    limits = {name: (-1.0, 0.8) for name in mech.independent}  # the sample's joints are unlimited
    ex = optimise_excitation(mech, 2 * np.pi / 10, harmonics=3, samples=100, limits=limits, max_velocity=1.5)
    assert ex.condition_after < 0.1 * ex.condition_before
    path = ex.path(mech)
    W = observation_matrix(mech, ex.times, path)
    names = mech.model.inertial_parameter_names()
    assert condition_number(W[:, [names.index(k) for k in ex.kept]]) == pytest.approx(ex.condition_after, rel=1e-9)
    fine = np.linspace(0.0, ex.duration, 5001)
    q, qd = path(fine, 0), path(fine, 1)
    assert np.all(q >= -1.0 - 1e-12) and np.all(q <= 0.8 + 1e-12)
    assert np.abs(qd).max() <= 1.5 + 1e-12


@pytest.mark.slow
def test_ur5_from_example_robot_data_is_better_conditioned_within_the_file_limits():
    from mbstudio.io.example_robots import robot_path, robots_folder
    from mbstudio.io.urdf_import import import_urdf

    if robots_folder() is None:
        pytest.skip("example-robot-data is not installed")
    mech = Mechanism(import_urdf(robot_path("ur5"), floating_base=False).model)
    ex = optimise_excitation(mech, 2 * np.pi / 10, harmonics=3, samples=100, max_acceleration=4.0)
    assert ex.condition_after < 0.1 * ex.condition_before
    fine = np.linspace(0.0, ex.duration, 5001)
    q, qdd = ex.path(mech)(fine, 0), ex.path(mech)(fine, 2)
    limits = {c.name: (c.min, c.max) for joint in mech.model.joints for c in joint.coordinates}
    for j, name in enumerate(mech.independent):
        assert limits[name][0] - 1e-12 <= q[:, j].min() and q[:, j].max() <= limits[name][1] + 1e-12
    assert np.abs(qdd).max() <= 4.0 + 1e-12


def test_a_closed_loop_is_optimised_without_the_traced_gradient():
    """The four-bar's samples need the assembly: the optimiser falls back to finite differences of the numpy
    route, and the result is still checked against the numpy observation matrix."""
    mech = Mechanism(samples.load("four_bar"))
    ex = optimise_excitation(mech, 1.0, harmonics=2, samples=40, max_amplitude=0.3, max_evaluations=40)
    assert ex.condition_after < ex.condition_before
    W = observation_matrix(mech, ex.times, ex.path(mech))
    names = mech.model.inertial_parameter_names()
    assert condition_number(W[:, [names.index(k) for k in ex.kept]]) == pytest.approx(ex.condition_after, rel=1e-9)
