"""The sprung SLA suspension's equilibrium and bounce (wheel hop) mode, each against an independent route:
the design position the coil-over's free length was chosen for, √(k_eff / m_eff) from the spring rate, its
motion ratio and the kinetic energy along the mode, and the nonlinear simulation of a small disturbance."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.forces import AppliedForces, gravity_potential, kinetic_energy
from mbstudio.kinematics import Mechanism
from mbstudio.linear.equilibrium import equilibrium
from mbstudio.linear.linear_model import linearize
from mbstudio.linear.modes import modes
from tests.test_linearization import _linear_vs_nonlinear

pytestmark = pytest.mark.slow  # the SLA's engine and its simulations take seconds


@pytest.fixture(scope="module")
def sla():
    model = samples.load("sla_suspension")
    point = equilibrium(model)
    return model, point, linearize(model, point, outputs=["theta1", "alignment.wheel_travel"])


def test_the_hanging_wheel_rests_at_the_design_position(sla):
    """The sample's coil-over free length (0.487041 m, six decimals) was chosen so that the hanging wheel is in
    equilibrium at the design position: it is, within the micrometre that rounding the free length leaves."""
    model, point, lin = sla
    assert point.is_equilibrium and not point.held and not point.neutral_directions()
    assert abs(point.values()["theta1"]) < 5e-6  # rad
    assert abs(lin.y0[1]) < 1e-6  # m of wheel travel
    assert point.values()["damper_s"] == pytest.approx(0.5, abs=1e-6)


def test_the_bounce_frequency_is_the_square_root_of_k_eff_over_m_eff(sla):
    """k_eff = k (dL/dθ₁)² + T₀ d²L/dθ₁² + d²V_g/dθ₁² (spring rate through the motion ratio, the preload over
    the damper's curvature, gravity), by differences of the damper length and the weight's potential along
    closed configurations on the numpy path; m_eff = 2T at θ̇₁ = 1 along the mode's shape (the wheel's spin
    θ₂ follows it a little). |λ| of a damped mode is its undamped natural frequency."""
    model, point, lin = sla
    hop = next(m for m in modes(lin) if m.dominant == "theta1")
    mech = Mechanism(model)
    spring = next(e for e in model.forces if e.name == "coilover")
    h, theta2 = 1e-4, point.values()["theta2"]
    poses = [
        mech.assemble({"theta1": point.q[0] + s * h, "theta2": theta2}, guess=point.q[None])[0] for s in (-1, 0, 1)
    ]
    length = [float(AppliedForces(mech, [spring]).laws[0].line(mech.motion(q))[0][0]) for q in poses]
    weight = [float(gravity_potential(mech, q[None])[0]) for q in poses]
    slope, curvature = (length[2] - length[0]) / (2 * h), (length[2] - 2 * length[1] + length[0]) / h**2
    preload = spring.stiffness * (length[1] - spring.length)
    k_eff = spring.stiffness * slope**2 + preload * curvature + (weight[2] - 2 * weight[1] + weight[0]) / h**2
    ratio = (hop.shape[mech.coordinates.index("theta2")] / hop.shape[0]).real
    m_eff = 2 * float(kinetic_energy(mech, point.q[None], mech.velocities(point.q[None], [[1.0, ratio]]))[0])
    assert abs(hop.eigenvalue) == pytest.approx(np.sqrt(k_eff / m_eff), rel=1e-6)
    assert hop.frequency_hz == pytest.approx(3.84, abs=0.01) and hop.damping == pytest.approx(0.606, abs=1e-3)
    assert hop.stability == "stable" and hop.kind == "oscillation"


def test_a_small_disturbance_of_the_closed_loop_follows_its_linear_model(sla):
    model, point, _ = sla
    assert _linear_vs_nonlinear(model, point) < 1e-3
