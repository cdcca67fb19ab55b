"""Linear models in python-control (linear/control.py): inputs and outputs carry distinct names, so that
`control.interconnect` joins only what the user means to join. A PD loop closed by name around a pendulum
has the closed-loop poles of its characteristic polynomial written by hand."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio.linear.control import control_signal_names
from mbstudio.linear.equilibrium import equilibrium
from mbstudio.linear.linear_model import linearize
from mbstudio.model import Body, Coordinate, Frame, Joint, Model

M, C, I_PIVOT, G = 2.0, 0.4, 0.5, 9.81  # mass, pivot to centre of mass, inertia about the pivot, gravity


def _pendulum() -> Model:
    """A rod on a revolute joint about world z, gravity along -y: it hangs at theta1 = -pi/2."""
    inertia = {"m": M, "mx": M * C, "my": 0.0, "mz": 0.0, "Ixx": 0.01, "Ixy": 0.0, "Ixz": 0.0, "Iyy": I_PIVOT,
               "Iyz": 0.0, "Izz": I_PIVOT}  # fmt: skip
    body = Body("1", "rod", inertia)
    joint = Joint("pivot", "revolute", "0", "1", Frame(), Frame(), [Coordinate("theta1", -1.4)])
    return Model(name="pendulum", gravity=[0.0, -G, 0.0], bodies=[body], joints=[joint])


def test_inputs_on_coordinates_are_named_apart_from_the_outputs():
    names = (["theta1", "push", "2.tip.fz"], ["theta1", "d_theta1", "2.tip.z"], ["theta1"])
    inputs, outputs = control_signal_names(*names)
    assert inputs == ["tau_theta1", "push", "2_tip_fz"] and outputs == ["theta1", "d_theta1", "2_tip_z"]
    # a measure that happens to be named like the renamed input still does not meet it
    inputs, _ = control_signal_names(["theta1"], ["tau_theta1"], ["theta1"])
    assert inputs == ["u_tau_theta1"]


def test_a_pd_loop_closed_by_interconnect_has_the_poles_computed_by_hand():
    control = pytest.importorskip("control")
    model = _pendulum()
    point = equilibrium(model)
    assert point.q[0] == pytest.approx(-np.pi / 2, abs=1e-10)
    plant = linearize(model, point, inputs=["theta1"], outputs=["theta1", "d_theta1"]).state_space()
    assert plant.input_labels == ["tau_theta1"] and plant.output_labels == ["theta1", "d_theta1"]
    kp, kd = 30.0, 4.0
    pd = control.ss([], [], [], [[-kp, -kd]], inputs=["theta1", "d_theta1"], outputs=["tau_theta1"], name="pd")
    closed = control.interconnect([plant, pd], inplist=["pd.theta1"], inputs=["reference"], outlist=["theta1"])
    # I s^2 + kd s + (m g c + kp) = 0 about the hanging pose
    expected = np.roots([I_PIVOT, kd, M * G * C + kp])
    assert np.sort_complex(closed.poles()) == pytest.approx(np.sort_complex(expected), abs=1e-9)
    # and the open plant alone keeps its own poles: the pendulum's ±j sqrt(m g c / I)
    assert np.sort_complex(plant.poles()) == pytest.approx(np.sort_complex(np.roots([I_PIVOT, 0, M * G * C])), abs=1e-9)
