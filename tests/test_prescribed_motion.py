"""Inverse dynamics along a prescribed path, checked two independent ways: the drives' power equals the rate
of change of the energy (the SLA with its coil-over spring, undamped, in the potential), and the drives fed
to the forward dynamics give back the prescribed accelerations."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.closed_loop import actuator_forces_on_tree, closed_loop_forward_dynamics
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.identification.observation import sample_states
from mbstudio.identification.pipeline import default_trajectory, fourier_path
from mbstudio.kinematics import Mechanism
from mbstudio.simulation.prescribed_motion import prescribed_motion


def motion(name: str, count: int, undamped: bool = False):
    model = samples.load(name)
    for element in model.forces if undamped else []:
        element.damping = 0.0  # a damper's loss would be a third term of the balance
    mech = Mechanism(model)
    trajectory = mech.model.trajectories[0] if mech.model.trajectories else default_trajectory(mech)
    t = np.linspace(0.0, 0.5, count)
    q, qd, qdd = sample_states(mech, t, fourier_path(mech, trajectory))
    return mech, t, q, qd, qdd


@pytest.mark.parametrize("name", ["sla_suspension", "four_bar", pytest.param("delta_3rr2rrr", marks=pytest.mark.slow)])
def test_the_drives_power_is_the_rate_of_change_of_the_energy(name):
    mech, t, q, qd, qdd = motion(name, 2001, undamped=True)
    result = prescribed_motion(mech, t, q, qd, qdd)
    energy = result.kinetic + result.potential
    power = sum(values * result.qd[:, mech.coordinates.index(c)] for c, values in result.actuators.values())
    rate = np.gradient(energy, t, edge_order=2)
    scale = np.abs(power).max()
    assert scale > 1e-3  # the path moves the mechanism against its inertia and weight
    assert np.abs(rate - power)[5:-5].max() < 1e-5 * scale  # central differences, h = 0.25 ms
    assert result.residual.max() < 1e-11


def test_the_drives_reproduce_the_prescribed_accelerations():
    mech, t, q, qd, qdd = motion("sla_suspension", 21)
    result = prescribed_motion(mech, t, q, qd, qdd)
    forces = AppliedForces(mech)
    tau = np.column_stack([values for _, values in result.actuators.values()])
    Q = forces.generalized(t, q, qd) + actuator_forces_on_tree(mech, tau)
    ind = list(mech.partition.independent)
    assert closed_loop_forward_dynamics(mech, q, qd, Q) == pytest.approx(qdd[:, ind], abs=1e-9)
    names = [name for name, _, _ in result.columns()]
    assert {"actuator:theta1", "actuator:theta2", "total_energy", "constraint_residual"} <= set(names)
