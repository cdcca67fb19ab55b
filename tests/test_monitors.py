"""The energy balance's running integral (simulation/monitors.cumulative_simpson): exact for parabolas at any
spacing (the rule integrates the parabola through each interval's ends and a neighbour), and the same as scipy's
cumulative_simpson, which it replaces to spare a command scipy.integrate's import."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import cumulative_simpson as scipys

from mbstudio.simulation.monitors import cumulative_simpson, dissipated_energy

RNG = np.random.default_rng(7)
SPACINGS = {
    "equal": lambda k: np.linspace(0.0, 2.0, k),
    "unequal": lambda k: np.concatenate([[0.0], np.cumsum(RNG.uniform(0.01, 0.3, k - 1))]),
}


@pytest.mark.parametrize("spacing", SPACINGS)
@pytest.mark.parametrize("samples", [3, 4, 5, 8, 201])
def test_a_parabola_is_integrated_exactly(spacing, samples):
    t = SPACINGS[spacing](samples)
    integral = cumulative_simpson(t, 3 * t**2 - 2 * t + 1)
    np.testing.assert_allclose(integral, t**3 - t**2 + t, rtol=0, atol=1e-13 * max(1.0, t[-1] ** 3))


@pytest.mark.parametrize("spacing", SPACINGS)
@pytest.mark.parametrize("samples", [3, 4, 7, 202])
def test_any_samples_integrate_as_scipys_rule(spacing, samples):
    t = SPACINGS[spacing](samples)
    f = np.sin(5 * t) + RNG.normal(size=samples)
    expected = scipys(f, x=t, initial=0.0)
    np.testing.assert_allclose(cumulative_simpson(t, f), expected, rtol=0, atol=1e-14 * np.abs(expected).max())
    np.testing.assert_allclose(dissipated_energy(t, f), -expected, rtol=0, atol=1e-14 * np.abs(expected).max())
