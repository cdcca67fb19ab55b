"""Equilibria and linear models (dynamics/linearization.py, `mbstudio linearize`): against a hand-derived
Lagrangian, finite differences of the nonlinear equations, and a model with no equilibrium."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.engine import engine
from mbstudio.dynamics.linearization import equilibrium, linearize
from mbstudio.model import ModelError
from mbstudio.model.document import Actuator, SpringDamper


def _hanging_double_pendulum():
    model = samples.load("double_pendulum")
    for joint in model.joints:
        for coordinate in joint.coordinates:
            coordinate.initial = 0.2
    return model


def test_the_hanging_double_pendulum_has_the_frequencies_of_its_lagrangian():
    """Two uniform rods (m = 1, L = 1, I about the pin = 1/3, centre at L/2), angles from the downward vertical:
    about θ = 0, M = [[8/3, 5/6], [5/6, 1/3]] and K = g [[2, 1/2], [1/2, 1/2]]; ω² are the eigenvalues of M⁻¹K."""
    model = _hanging_double_pendulum()
    q = equilibrium(model)
    assert np.abs(q).max() < 1e-12
    lin = linearize(model, q)
    M = np.array([[8 / 3, 5 / 6], [5 / 6, 1 / 3]])
    K = 9.81 * np.array([[2, 0.5], [0.5, 0.5]])
    expected = np.sort(np.sqrt(np.linalg.eigvals(np.linalg.solve(M, K)).real)) / (2 * np.pi)
    frequencies = np.sort(lin.frequencies_hz)[::2]  # each oscillation is a conjugate pair
    assert np.allclose(frequencies, expected, rtol=1e-10, atol=0)
    assert np.abs(lin.damping_ratios).max() < 1e-12  # no damping in the model


def _sprung_sla():
    model = samples.load("sla_suspension")
    model.forces = [SpringDamper("coilover", "6", "C", "7", "ball", stiffness=30_000.0, damping=900.0, length=0.5)]
    return model


def test_the_state_matrices_are_the_derivatives_of_the_closed_loop_equations():
    model = _sprung_sla()
    q = equilibrium(model)
    eng = engine(model)
    ind, k = eng.independent, len(eng.independent)
    assert np.abs(eng.accelerations(0.0, q, np.zeros(k))).max() < 1e-9
    lin = linearize(model, q, inputs=["theta1", "damper_s"])

    def f(x: np.ndarray, tau: np.ndarray) -> np.ndarray:
        moved = q.copy()
        moved[ind] = q[ind] + x[:k]
        closed = eng.close_loops(moved)[0]
        return np.concatenate([x[k:], eng.accelerations(0.0, closed, x[k:], tau)])

    def central(g, size: int, h: float) -> np.ndarray:
        return np.array([(g(h * e) - g(-h * e)) / (2 * h) for e in np.eye(size)]).T

    zero_tau = np.zeros(eng.n)
    A = central(lambda dx: f(dx, zero_tau), 2 * k, 1e-6)
    columns = [eng.mech.coordinates.index(c) for c in lin.inputs]
    B = central(lambda du: f(np.zeros(2 * k), _spread(du, columns, eng.n)), len(columns), 1e-3)
    assert np.abs(lin.A - A).max() < 1e-5 * np.abs(lin.A).max()
    assert np.abs(lin.B - B).max() < 1e-8 * np.abs(lin.B).max()
    assert (lin.damping_ratios > 0).all()  # the damper damps every mode


def _spread(values: np.ndarray, columns: list[int], n: int) -> np.ndarray:
    out = np.zeros(n)
    out[columns] = values
    return out


def test_no_equilibrium_is_said_so():
    model = _hanging_double_pendulum()
    model.gravity = [0.0, 0.0, 0.0]
    model.forces = [Actuator("push", "theta1", formula="1")]  # a constant torque nothing resists
    with pytest.raises(ModelError, match="equilibrium: none found"):
        equilibrium(model)


def test_the_command_prints_modes_and_writes_json(tmp_path, capsys):
    path = tmp_path / "dp.mbs"
    from mbstudio.model import save

    save(_hanging_double_pendulum(), path)
    out = tmp_path / "lin.json"
    assert main(["linearize", str(path), "--equilibrium", "--json", str(out)]) == 0
    assert "frequency [Hz]" in capsys.readouterr().out
    document = json.loads(out.read_text())
    assert np.array(document["A"]).shape == (4, 4) and document["states"] == [
        "theta1",
        "theta2",
        "d_theta1",
        "d_theta2",
    ]
