"""The energy balance E + dissipated of a CVODES run: the non-conservative forces' work is integrated with the
motion (the engine's work_rate as one more state), not over the output samples, so the balance holds to the
integration's accuracy however sparse the outputs and however sharp the power (a tyre landing, a stop engaging).
Checked against the power integrated over dense outputs, and against the samples' quadrature where that one is
exact enough."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.kinematics import Mechanism
from mbstudio.model import loads
from mbstudio.simulation.monitors import cumulative_simpson, nonconservative_power
from mbstudio.simulation.run import simulate

from .test_vehicle import column, wheel_on_a_tyre

RAMP = {"speed": 4.0, "profile": [[0.0, 0.0], [10.0, 0.0], [10.1, 0.05], [20.0, 0.05]]}


def thrown_wheel(interpolation: str = "linear"):
    """Thrown up by a 5 cm ramp at 2.125 s, the wheel leaves the road and lands: the tyre's power changes sharply
    (and jumps at the linear ramp's corners)."""
    road = RAMP | {"interpolation": interpolation}
    return loads(json.dumps(wheel_on_a_tyre(road, stiffness=1e5, damping=1500.0)))


def test_the_balance_holds_over_sparse_outputs_where_the_samples_quadrature_failed():
    """41 samples over 4 s: the samples' Simpson rule missed the landing by 0.3 % of the energy; the work
    integrated with the motion keeps the balance to 1e-9."""
    model = thrown_wheel()
    sparse = simulate(model, 4.0, samples=41)
    assert sparse.energy_drift < 1e-8
    balance = column(sparse, "energy_balance")
    assert np.abs(balance - balance[0]).max() < 1e-8 * abs(sparse.total[0])
    stepped = simulate(model, 4.0, samples=41, method="DOP853")  # scipy's methods: the samples' quadrature
    assert stepped.energy_drift > 1e-4  # what the sparse samples cost that route


def test_the_work_is_the_power_integrated_over_dense_outputs():
    """The reference: the tyre's power in numpy (monitors.nonconservative_power, not the traced engine's) at 160 001
    samples, integrated by Simpson's rule, which the contact's kinks slow to h² (40 001 samples: 7e-4 J off); on
    the smooth ramp, since the linear one's corners make the power jump (0.2 J off). At the 41 sparse samples the
    works agree to 1e-6 of the energy."""
    model = thrown_wheel("smooth")
    sparse, dense = simulate(model, 4.0, samples=41), simulate(model, 4.0, samples=160_001)
    mech = Mechanism(model)
    power = nonconservative_power(AppliedForces(mech), dense.t, dense.q, dense.qd)
    reference = -cumulative_simpson(dense.t, power)[::4000]
    assert np.abs(reference).max() > 0.1 * abs(sparse.total[0])  # the tyre took a tenth of the energy at least
    assert column(sparse, "dissipated_energy") == pytest.approx(reference, abs=1e-6 * abs(sparse.total[0]))


@pytest.mark.slow  # the vehicle's engine (10 s cold) and its 10-s drive
def test_the_vehicle_keeps_its_energy_balance_over_its_drive():
    """The drive over the bump: the samples' quadrature left 0.11 of the energy unaccounted for at 201 samples
    (the tyres' and stops' power is sharp); with the work integrated, the balance holds to 1e-8."""
    result = simulate(samples.load("vehicle"), 10.0)
    assert result.energy_drift < 1e-8
    assert np.abs(column(result, "dissipated_energy")).max() > 100.0  # work was done: the check is not empty
