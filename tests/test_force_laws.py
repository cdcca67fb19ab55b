"""The force-law registry (mbstudio/dynamics/force_laws): every element type of the document has a law, a type
has one law, and a new kind of element is its document class plus one law class registered, here in the test
module and not in the product. A cubic spring-damper so added moves a double pendulum whose energy balance
E + dissipated holds, E including the new law's potential; the same balance with a wrong potential fails, so the
check can tell."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.force_laws import LAWS, CoordinateLaw, all_laws, law_class, register
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.io.mjcf_export import mjcf_text
from mbstudio.kinematics import Mechanism
from mbstudio.model import document, dumps, loads
from mbstudio.model.document import FORCE_ELEMENTS, ForceMeasure
from mbstudio.model.errors import ModelError
from mbstudio.model.fileformat import to_dict
from mbstudio.simulation.run import simulate

STIFFNESS, DAMPING = 4.0, 0.05  # N m / rad^3, N m s / rad


@dataclass
class CubicSpring:
    """A test element: τ = −k x³ − c ẋ on one coordinate, V = k x⁴ / 4."""

    name: str
    coordinate: str
    stiffness: float = 0.0
    damping: float = 0.0
    type: ClassVar[str] = "cubic_spring"


class CubicSpringLaw(CoordinateLaw):
    type = CubicSpring.type

    def effort(self, t, x, v):
        k, c = self.forces.value(self.element.stiffness), self.forces.value(self.element.damping)
        return -k * x * x * x - c * v

    def coordinate_potential(self, x):
        return self.forces.value(self.element.stiffness) * x * x * x * x / 4


@pytest.fixture
def cubic_spring(monkeypatch, tmp_path):
    """The new element in the document's types and its law in the registry, for this test only; engines compiled
    into a folder of the test's own, so that no library built from another version of this law is served."""
    monkeypatch.setitem(FORCE_ELEMENTS, CubicSpring.type, CubicSpring)
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))
    register(CubicSpringLaw)
    yield CubicSpring
    del LAWS[CubicSpring.type]


def test_every_element_type_of_the_document_has_a_law():
    assert set(document.FORCE_ELEMENTS) | {"compliant_stop"} == set(all_laws())
    for kind, cls in document.FORCE_ELEMENTS.items():
        assert LAWS[kind].type == cls.type == kind


def test_a_type_has_one_law_and_an_unknown_type_is_named():
    with pytest.raises(ValueError, match="'actuator' already has the law ActuatorLaw"):
        register(type("Other", (CoordinateLaw,), {"type": "actuator"}))
    stranger = CubicSpring("strange", "theta1")
    with pytest.raises(ModelError, match=r"force 'strange'.*no force law.*cubic_spring.*expected.*actuator"):
        law_class(stranger)


def every_law() -> Mechanism:
    """The double pendulum with one element of each law acting on it (two of some: constant and timed), and a
    compliant stop on its elbow."""
    model = samples.load("double_pendulum")
    data = to_dict(model)
    data["ground"]["points"] = {"anchor": [0.3, 0.0, 0.5]}
    data["bodies"][1]["points"]["mid"] = [0.5, 0.1, 0.0]
    data["ground"]["frames"]["mount"] = {"origin": [1.0, -0.2, 0.1], "z": [0.0, 0.2, 1.0]}
    elbow = data["joints"][1]["coordinates"][0]
    elbow |= {"min": -0.5, "max": 0.4, "stop": {"type": "compliant", "stiffness": 1e4, "damping": 30.0}}
    data["forces"] = [
        {"type": "joint_spring_damper", "name": "js", "coordinate": "theta1", "stiffness": 3.0, "damping": 0.2,
         "rest": 0.1},
        {"type": "joint_spring_damper", "name": "servo", "coordinate": "theta2", "stiffness": 2.0, "rest": "sin(t)"},
        {"type": "joint_friction", "name": "jf", "coordinate": "theta2", "viscous": 0.05, "coulomb": 0.3},
        {"type": "actuator", "name": "constant", "coordinate": "theta1", "formula": "0.7*L"},
        {"type": "actuator", "name": "table", "coordinate": "theta1", "table": [[0, 0.0], [1, 2.0]]},
        {"type": "spring_damper", "name": "sd", "body1": "0", "point1": "anchor", "body2": "2", "point2": "mid",
         "stiffness": 50.0, "damping": 2.0, "length": 0.4},
        {"type": "point_force", "name": "weight", "body": "2", "point": "tip", "force": [1.0, 0.5, -2.0]},
        {"type": "point_force", "name": "gust", "body": "1", "point": "tip", "force": ["sin(t)", 0.0, 0.0]},
        {"type": "tyre", "name": "foot", "body": "2", "point": "tip", "stiffness": 1e4, "damping": 10.0,
         "radius": 0.5},
        {"type": "bushing", "name": "bush", "body1": "0", "frame1": "mount", "body2": "2", "frame2": "pivot",
         "stiffness": [40.0, 30.0, 20.0, 2.0, 3.0, 4.0], "damping": [1.0, 1.0, 1.0, 0.1, 0.1, 0.1],
         "preload": [1.0, 0.0, 0.0, 0.0, 0.0, 0.5]},
        {"type": "contact", "name": "toe", "body": "2", "point": "tip", "radius": 0.5, "stiffness": 1e5,
         "dissipation": 0.2, "friction": 0.5, "plane_normal": [-0.05, 0.0, 1.0]},
        {"type": "contact_pair", "name": "knock", "body1": "0", "point1": "anchor", "body2": "2", "point2": "mid",
         "radius1": 0.6, "radius2": 0.6, "stiffness": 1e5, "dissipation": 0.2, "friction": 0.5},
        {"type": "magic_formula_tyre", "name": "wheel", "body": "2", "point": "tip", "stiffness": 1e4,
         "radius": 0.5, "tir": str(samples.FOLDER / "passenger_car_205_55R16.tir")},
        {"type": "path_driver", "name": "driver", "coordinate": "theta2", "body": "2", "path": [[0, 0], [2, 1]],
         "preview": 0.5, "gain": 0.3, "stiffness": 2.0, "damping": 0.1},
        {"type": "circle_driver", "name": "rounder", "coordinate": "theta1", "body": "2", "centre_y": 1.0,
         "radius": 1.2, "preview": 0.5, "gain": 0.3, "stiffness": 2.0, "damping": 0.1},
        {"type": "speed_controller", "name": "cruise", "body": "2", "coordinates": ["theta1", "theta2"], "speed": 1.5,
         "gain": 4.0, "radius": 0.3},
    ]  # fmt: skip
    return Mechanism(loads(json.dumps(data)))


def test_each_law_at_rest_is_minus_the_gradient_of_its_potential():
    """Q_e(q, q̇ = 0) = −∂V_e/∂q for every law with a potential (central differences, step h: truncation
    O(h²) and rounding O(ε V / h), both far below the tolerance), and no potential for the timed ones."""
    mech = every_law()
    forces = AppliedForces(mech)
    assert {type(law).__name__ for law in forces.laws} == {law.__name__ for law in all_laws().values()}
    # the elbow 0.05 rad past its upper stop, the lower rod's tip 6.5 cm into the ground under its tyre
    q = np.array([[np.pi / 2, 0.45]])
    h, zero = 1e-6, np.zeros_like(q)
    timed = set()
    for law in forces.laws:
        if not law.has_potential:
            timed.add(law.name)
            assert law.potential(q, mech.motion(q)) is None
            continue
        rest = np.asarray(forces.of_law(law, 0.0, q, zero), float)[0]
        gradient = np.zeros(mech.n)
        for k in range(mech.n):
            step = np.zeros_like(q)
            step[0, k] = h
            up, down = (float(np.asarray(law.potential(x, mech.motion(x)), float)[0]) for x in (q + step, q - step))
            gradient[k] = (up - down) / (2 * h)
        scale = max(np.abs(rest).max(), 1.0)
        assert rest == pytest.approx(-gradient, abs=1e-6 * scale), law.name
    assert timed == {"servo", "jf", "table", "gust", "wheel", "driver", "rounder", "cruise"}
    for name, push in (("foot", 1e4 * (0.5 - np.sin(0.45))), ("stop:theta2", 1e4 * 0.05)):  # both pressed
        law = next(law for law in forces.laws if law.name == name)
        assert np.abs(np.asarray(forces.of_law(law, 0.0, q, zero))).max() > push / 2


def pendulum_with(element) -> Mechanism:
    model = samples.load("double_pendulum")
    model.forces.append(element)
    model.measures.append(ForceMeasure("twisting", element.name))
    return Mechanism(loads(dumps(model)))  # through the file's text: the new type is read back by its table


def test_a_law_registered_outside_the_product_moves_a_model_and_keeps_its_energy_balance(cubic_spring):
    mech = pendulum_with(cubic_spring("twist", "theta2", stiffness=STIFFNESS, damping=DAMPING))
    result = simulate(mech, 2.0, samples=201)  # CVODES on the compiled engine: the law is traced like the others
    theta2 = result.q[:, mech.coordinates.index("theta2")]
    assert np.abs(theta2).max() > 0.3  # the spring is wound well into its cubic range
    balance = next(v for name, _, v in result.monitors if name == "energy_balance")
    scale = max(abs(float(result.total[0])), float(np.abs(result.kinetic).max()))
    # run.py's tolerances (rtol 1e-10) keep the balance of the conservative samples below 1e-7 of E over 2 s
    assert np.abs(balance - balance[0]).max() < 1e-7 * scale
    # the law's potential is in E: a wrong one (k x⁴ / 2) breaks the balance by far more than the tolerance
    wrong = balance + STIFFNESS * theta2**4 / 4
    assert np.abs(wrong - wrong[0]).max() > 1e-3 * scale
    # the dampers took energy out: −∫ c ẋ² dt < 0 of power, so dissipated rises
    dissipated = next(v for name, _, v in result.monitors if name == "dissipated_energy")
    assert dissipated[-1] > 1e3 * 1e-7 * scale
    # the force measure reads the law: τ = −k x³ − c ẋ at the samples
    rate = result.qd[:, mech.coordinates.index("theta2")]
    twist = next(v for name, _, v in result.measures if name == "twisting.force")
    assert twist == pytest.approx(-STIFFNESS * theta2**3 - DAMPING * rate, rel=1e-12, abs=1e-12 * STIFFNESS)


def test_a_new_law_without_a_file_form_is_left_out_of_exports_with_a_note(cubic_spring):
    mech = pendulum_with(cubic_spring("twist", "theta2", stiffness=STIFFNESS))
    forces = AppliedForces(mech)
    assert [type(law).__name__ for law in forces.laws] == ["CubicSpringLaw"]
    notes = mjcf_text(mech.model)[1]
    assert "force element 'twist' (cubic_spring) has no MJCF form and is left out" in notes
