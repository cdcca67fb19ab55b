"""The simulation benchmark's reference (io/pinocchio_reference.py), a Pinocchio model of our closed loops built
without our exporter: its constrained accelerations equal ours, and its motions follow ours."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from mbstudio import samples
from mbstudio.benchmarks.models import driven_delta, sprung_sla
from mbstudio.dynamics.engine import engine
from mbstudio.io.pinocchio_reference import ClosedLoopReference
from mbstudio.simulation.run import simulate

MODELS = {"four_bar": lambda: samples.load("four_bar"), "sprung_sla": sprung_sla, "driven_delta": driven_delta}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "driven_delta" else n for n in MODELS]
)
def test_the_reference_accelerations_equal_ours(name):
    model = MODELS[name]()
    eng = engine(model)
    mech, ref = eng.mech, ClosedLoopReference.of(eng.mech)
    rng = np.random.default_rng(2)
    q = mech.assemble(None)[0]
    v_ind = rng.standard_normal(len(eng.independent))
    qd = eng.velocities(q, v_ind)
    y = ref.state(q, qd)
    ours = mech.accelerations(q[None], qd[None], eng.accelerations(0.3, q, v_ind)[None])[0]
    theirs = ref.coordinates(np.concatenate([ref.accelerations(0.3, *np.split(y, 2))] * 2)[None])[0]
    assert np.abs(theirs - ours).max() < 1e-10 * max(1.0, np.abs(ours).max())


def test_the_reference_motion_follows_ours():
    model = sprung_sla()
    ref = ClosedLoopReference.of(engine(model).mech)
    ours = simulate(model, 0.5, "DOP853", rtol=1e-10, atol=1e-12, samples=51)
    times = np.linspace(0, 0.5, 51)
    theirs = solve_ivp(ref.rhs, (0, 0.5), ref.state(ours.q[0]), "DOP853", times, rtol=1e-10, atol=1e-12)
    assert ours.kinetic.max() > 0.1  # it moves
    assert np.abs(ref.coordinates(theirs.y.T) - ours.q).max() < 1e-7
