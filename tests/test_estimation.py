"""Estimation of base parameters from simulated noisy forces, and exciting-trajectory optimisation.

The data are W φ + noise, with φ the document's inertial parameters, W from a periodic Fourier trajectory and
the true base parameters φ_b = φ1 + β φ2 from Gautier's method on that W; the noise is Gaussian with a known
standard deviation per coordinate, so the true covariance of each estimator is known in closed form:
(W_bᵀ W_b)⁻¹ W_bᵀ Σ W_b (W_bᵀ W_b)⁻¹ for least squares, (W_bᵀ Σ⁻¹ W_b)⁻¹ for weighted least squares.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.identification import FourierPath, observation_matrix
from mbstudio.identification.estimation import (
    condition_number,
    coordinate_residual_std,
    estimate,
    least_squares,
    weighted_least_squares,
)
from mbstudio.identification.excitation import optimise_excitation
from mbstudio.identification.gautier import gautier_dp
from mbstudio.kinematics import Mechanism

REPETITIONS = 200


@functools.cache
def problem(name: str):
    """(W, base parameters, n_c, true φ_b, noise-free χ) for a sample on a one-period Fourier trajectory."""
    mech = Mechanism(samples.load(name))
    n = len(mech.independent)
    terms = [[(0.4, 1.0 + i), (0.2, 3.0, 0.5 * i)] for i in range(n)]
    W = observation_matrix(mech, np.linspace(0, 2 * np.pi, 100, endpoint=False), FourierPath(mech, terms))
    base = gautier_dp(W, mech.model.inertial_parameter_names())
    phi = np.concatenate([mech.tree.geometry.inertia(b) for b in mech.model.bodies])
    return W, base, n, base.base_map() @ phi, W @ phi


def noise_std(chi: np.ndarray, n: int, relative: float = 0.02) -> np.ndarray:
    """A σ per row: `relative` times the rms force of the row's coordinate."""
    return relative * np.sqrt(np.mean(chi.reshape(-1, n) ** 2, axis=0))[np.arange(len(chi)) % n]


def true_ls_std(Wb: np.ndarray, row_std: np.ndarray) -> np.ndarray:
    G = np.linalg.pinv(Wb)
    return np.sqrt(np.einsum("ij,j,ij->i", G, row_std**2, G))


def true_wls_std(Wb: np.ndarray, row_std: np.ndarray) -> np.ndarray:
    return np.sqrt(np.diag(np.linalg.inv((Wb / row_std[:, None] ** 2).T @ Wb)))


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "gripper", "puma560"])
def test_least_squares_recovers_the_base_parameters_within_the_reported_uncertainty(name):
    W, base, n, phi_b, chi0 = problem(name)
    Wb = W[:, base.kept_indices]
    np.testing.assert_allclose(Wb @ phi_b, chi0, rtol=0, atol=1e-12 * np.abs(chi0).max())
    sigma = np.full(len(chi0), noise_std(chi0, n).mean())  # one level for all coordinates: LS is the right tool
    chi = chi0 + sigma * np.random.default_rng(11).normal(size=len(chi0))
    est = estimate(W, base, chi, n)
    assert est.method == "LS" and est.names == [base.parameter_names[k] for k in base.kept_indices]
    assert est.rows == len(chi) and est.samples == 100 and est.seconds > 0
    assert np.all(np.abs(est.values - phi_b) < 4 * est.std)
    ratio = est.std / true_ls_std(Wb, sigma)
    assert ratio.min() > 1 / 1.5 and ratio.max() < 1.5
    assert est.condition == pytest.approx(np.linalg.cond(Wb), rel=1e-10)
    assert est.residual_norm == pytest.approx(np.linalg.norm(chi - Wb @ est.values))
    np.testing.assert_allclose(est.relative_std, 100 * est.std / np.abs(est.values))


def monte_carlo(Wb, chi0, row_std, solve, seed: int = 5):
    """Estimates and reported standard deviations over REPETITIONS noise draws."""
    rng = np.random.default_rng(seed)
    runs = [solve(Wb, chi0 + row_std * rng.normal(size=len(chi0))) for _ in range(REPETITIONS)]
    return np.array([r.values for r in runs]), np.array([r.std for r in runs])


def test_least_squares_uncertainty_matches_monte_carlo():
    W, base, n, phi_b, chi0 = problem("gripper")
    Wb = W[:, base.kept_indices]
    sigma = np.full(len(chi0), noise_std(chi0, n).mean())
    values, stds = monte_carlo(Wb, chi0, sigma, lambda A, y: least_squares(A, y, n_coordinates=n))
    true = true_ls_std(Wb, sigma)
    spread = values.std(axis=0) / true
    assert spread.min() > 0.8 and spread.max() < 1.2  # 200 draws: the spread is known to about ±5 %
    reported = stds.mean(axis=0) / true
    assert reported.min() > 0.95 and reported.max() < 1.05
    coverage = np.mean(np.abs(values - phi_b) < 2 * stds)
    assert 0.93 < coverage < 0.97  # 95.4 % for a Gaussian


def test_weighted_least_squares_beats_least_squares_on_unequal_noise():
    """Gripper: the palm joint's torques, and so its noise, are 40 times the fingertip's. (The PUMA 560, with a
    10⁴ spread, shows it more strongly but takes minutes on a loaded machine: its 600 × 37 QR is multithreaded.)"""
    W, base, n, phi_b, chi0 = problem("gripper")
    Wb = W[:, base.kept_indices]
    row_std = noise_std(chi0, n)
    ls, _ = monte_carlo(Wb, chi0, row_std, lambda A, y: least_squares(A, y, n_coordinates=n))
    wls, wls_std = monte_carlo(Wb, chi0, row_std, lambda A, y: weighted_least_squares(A, y, n))
    mse_ls, mse_wls = np.mean((ls - phi_b) ** 2, axis=0), np.mean((wls - phi_b) ** 2, axis=0)
    # WLS is the best linear unbiased estimator here: no parameter worse (up to Monte Carlo scatter), and the
    # parameters seen mostly through the quiet finger joints much better
    assert np.all(mse_wls <= 1.1 * mse_ls)
    assert np.median(mse_wls / mse_ls) < 0.3 and mse_wls.sum() < 0.9 * mse_ls.sum()
    true = true_wls_std(Wb, row_std)
    assert np.all(np.abs(wls - phi_b).max(axis=0) < 5 * true)
    reported = wls_std.mean(axis=0) / true
    assert reported.min() > 1 / 1.5 and reported.max() < 1.5


def test_weights_estimated_from_the_residual_and_given_weights():
    W, base, n, phi_b, chi0 = problem("puma560")
    Wb = W[:, base.kept_indices]
    row_std = noise_std(chi0, n)
    chi = chi0 + row_std * np.random.default_rng(3).normal(size=len(chi0))
    np.testing.assert_allclose(coordinate_residual_std(Wb, chi, n), row_std[:n], rtol=0.25)
    estimated = weighted_least_squares(Wb, chi, n)
    given = estimate(W, base, chi, n, coordinate_std=10 * row_std[:n])  # only the ratios matter
    assert estimated.method == "WLS (estimated weights)" and given.method == "WLS (given weights)"
    assert given.sigma == pytest.approx(0.1, rel=0.15)
    np.testing.assert_allclose(given.std, true_wls_std(Wb, row_std), rtol=0.15)
    assert np.all(np.abs(estimated.values - given.values) < given.std)
    assert np.all(np.abs(given.values - phi_b) < 4 * given.std)
    assert given.weighted_condition == pytest.approx(condition_number(Wb / row_std[:, None]))
    assert given.condition == pytest.approx(np.linalg.cond(Wb))


def test_estimation_refuses_what_it_cannot_estimate():
    W, base, n, _, chi0 = problem("gripper")
    with pytest.raises(ValueError, match="linearly dependent"):
        least_squares(W, chi0, n_coordinates=n)  # all columns, not only the base ones
    with pytest.raises(ValueError, match="whole number of samples"):
        weighted_least_squares(W[:-1, base.kept_indices], chi0[:-1], n)
    with pytest.raises(ValueError, match="positive"):
        weighted_least_squares(W[:, base.kept_indices], chi0, n, coordinate_std=[1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="12 columns but 2 names"):
        least_squares(W[:, base.kept_indices], chi0, names=["m1", "mx1"], n_coordinates=n)
    with pytest.raises(ValueError, match="more samples"):
        least_squares(W[:4, base.kept_indices[:4]], chi0[:4], n_coordinates=n)


# ---------------------------------------------------------------------------------------------- excitation


def test_optimised_gripper_trajectory_is_better_conditioned_and_stays_within_limits():
    model = samples.load("gripper")
    limits = {"th1": (-0.5, 0.8), "th2": (-1.0, 0.6)}  # th3, th4: the document's (if any) or free
    for joint in model.joints:
        for c in joint.coordinates:
            c.min, c.max = limits.get(c.name, (None, None))
    mech = Mechanism(model)
    ex = optimise_excitation(mech, base_frequency=1.0, harmonics=3, samples=60, max_amplitude=0.6, max_evaluations=300)
    assert ex.condition_after < 0.6 * ex.condition_before
    path = ex.path(mech)
    W = observation_matrix(mech, ex.times, path)
    assert condition_number(W[:, [model.inertial_parameter_names().index(k) for k in ex.kept]]) == pytest.approx(
        ex.condition_after, rel=1e-9
    )
    q = path(np.linspace(0, 2 * np.pi, 2001), 0)
    for j, name in enumerate(mech.independent):
        lo, hi = limits.get(name, (-np.inf, np.inf))
        assert lo - 1e-12 <= q[:, j].min() and q[:, j].max() <= hi + 1e-12
        assert np.ptp(q[:, j]) <= 2 * 0.6 * 3 + 1e-12  # max_amplitude per term
    assert all(omega == pytest.approx(k + 1.0) for terms in ex.terms for k, (_, omega, _) in enumerate(terms))
    stored = ex.trajectory()
    assert stored.duration == pytest.approx(2 * np.pi) and stored.samples == 60
    assert [[(h.amplitude, h.frequency, h.phase) for h in stored.coordinates[c]] for c in mech.independent] == ex.terms


def test_excitation_rejects_a_start_outside_the_limits():
    model = samples.load("gripper")
    mech = Mechanism(model)
    with pytest.raises(ValueError, match="exceeds its bound"):
        optimise_excitation(mech, 1.0, start=[[(0.9, 1.0)]] * 4, max_amplitude=0.5)
    with pytest.raises(ValueError, match="not inside its limits"):
        optimise_excitation(mech, 1.0, limits={mech.independent[0]: (0.5, 1.0)})
