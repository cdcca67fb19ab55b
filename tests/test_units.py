"""Units in model files: converted to SI at load (pint), checked against the dimension of their place, saved
back as written; a model written in mm, g and deg gives the outputs of the same model in SI."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.identification.pipeline import base_parameters
from mbstudio.jobs.tasks import kinematics
from mbstudio.linear.linear_model import linearize
from mbstudio.model import JOINT_MOTIONS, ModelError, Parameter, dumps, loads
from mbstudio.model.units import SI_UNITS, Quantity, _conversion, si_unit
from mbstudio.simulation.run import simulate

from .conftest import Perturbation


@pytest.mark.parametrize(
    ("text", "si"),
    [
        ("100 mm", 0.1),
        ("319.6 mm", 0.3196),  # the float a file in metres holds, not 319.6 * 0.001 in binary
        ("30 deg", math.pi / 6),
        ("90 °", math.pi / 2),
        ("1 turn", 2 * math.pi),
        ("1 in", 0.0254),
        ("2 lbf", 2 * 0.45359237 * 9.80665),
        ("1500 rpm", 1500 * 2 * math.pi / 60),
        ("480 g", 0.48),
        ("52 kg*mm^2", 52e-6),
        ("52 kg mm²", 52e-6),
        ("30 N/mm", 30_000.0),
        ("3 N*mm/deg", 0.003 * 180 / math.pi),
        ("1 g0", 9.80665),
        ("36 km/h", 10.0),
        ("-9810 mm/s^2", -9.81),
    ],
)
def test_numbers_with_units_are_their_hand_computed_si_values(text, si):
    number, unit = text.split(" ", 1)
    value = Quantity(float(number), unit)
    assert value == pytest.approx(si, rel=2e-16, abs=0)
    assert float(value) == si or not text.endswith(("mm", "g", "mm^2", "N/mm", "in", "km/h", "mm/s^2"))


def test_the_si_units_known_without_pint_are_pints():
    for unit, known in SI_UNITS.items():
        assert _conversion(unit) == known, unit


def test_decimal_units_give_exactly_the_floats_of_the_si_file():
    for mm, m in ((319.6, 0.3196), (487.041, 0.487041), (0.1, 0.0001), (1e-3, 1e-6)):
        assert float(Quantity(mm, "mm")) == m
    assert float(Quantity(1616, "kg*mm^2")) == 0.001616


def test_a_value_set_in_si_is_written_back_in_its_unit_with_the_fewest_digits():
    assert Quantity.from_si(0.3196, "mm").number == 319.6
    assert Quantity.from_si(0.1, "mm").number == 100 and isinstance(Quantity.from_si(0.1, "mm").number, int)
    assert Quantity.from_si(math.pi / 6, "deg").number == 30
    value = Quantity.from_si(0.123456789, "deg")
    assert float(value) == 0.123456789  # never a rounded value: the SI number survives a save


def four_bar_text() -> str:
    return samples.path("four_bar").read_text()


def _four_bar_in_mm() -> str:
    """The four-bar of the samples, typed by hand in mm, g, kg mm² and deg (the coordinates' initial angles in
    degrees as the shortest decimals that give the file's radians)."""
    data = json.loads(four_bar_text())
    data["gravity"] = {"value": [0, 0, -9810], "unit": "mm/s^2"}
    for p, mm in zip(data["parameters"], (400, 100, 350, 300), strict=True):
        p["value"], p["unit"] = mm, "mm"
    typed = {
        "1": ("480 g", "24 kg*mm", "52 kg*mm^2", "1616 kg*mm^2", "1636 kg*mm^2"),
        "2": ("1680 g", "294 kg*mm", "182 kg*mm^2", "68656 kg*mm^2", "68726 kg*mm^2"),
        "3": ({"value": 1.44, "unit": "kg"}, "216 kg*mm", "156 kg*mm^2", "43248 kg*mm^2", "43308 kg*mm^2"),
    }
    for body in data["bodies"]:
        inertia = body["inertia"]
        inertia["m"], inertia["mx"], inertia["Ixx"], inertia["Iyy"], inertia["Izz"] = typed[body["label"]]
        shape = body["shape"]
        shape["size"] = {"value": [Quantity.from_si(v, "mm").number for v in shape["size"]], "unit": "mm"}
        shape["origin"] = [Quantity.from_si(v, "mm").text() for v in shape["origin"]]
    data["bodies"][1]["points"]["P"] = ["L2/2", "100 mm", 0]
    for joint in data["joints"]:
        for c in joint["coordinates"]:
            c["initial"] = Quantity.from_si(c["initial"], "deg").written()
    data["joints"][0]["coordinates"][0]["min"] = "-180 deg"
    return json.dumps(data)


@pytest.fixture(scope="module")
def four_bars():
    si = loads(four_bar_text())
    si.joints[0].coordinates[0].min = -math.pi
    return si, loads(_four_bar_in_mm())


def test_a_four_bar_typed_in_mm_holds_the_si_numbers(four_bars):
    si, mm = four_bars
    assert mm.parameter_values() == si.parameter_values()
    for a, b in zip(si.bodies, mm.bodies, strict=True):
        assert a.inertia == b.inertia and a.points == b.points
    assert mm.gravity == si.gravity


def _close(a, b, scale=None):
    a, b = np.asarray(a, float), np.asarray(b, float)
    tolerance = 1e-12 * max(1.0, float(np.nanmax(np.abs(a))) if scale is None else scale)
    np.testing.assert_allclose(b, a, rtol=0, atol=tolerance)


def test_the_four_bar_in_mm_moves_simulates_and_linearises_as_in_si(four_bars):
    si, mm = four_bars
    runs = [kinematics(dumps(m), {}, lambda *_: None, lambda: False).data for m in (si, mm)]
    assert list(runs[0].series) == list(runs[1].series)
    for name, values in runs[0].series.items():
        _close(values, runs[1].series[name])
    motions = [simulate(m, 0.5, samples=26) for m in (si, mm)]
    for (name, _, a), (_, _, b) in zip(motions[0].columns(), motions[1].columns(), strict=True):
        _close(a, b), name
    models = [linearize(m) for m in (si, mm)]
    for key in ("A", "B", "C", "D"):
        _close(getattr(models[0], key), getattr(models[1], key))


def test_the_four_bar_in_mm_has_the_base_parameters_of_the_si_one(four_bars):
    si, mm = four_bars
    runs = [base_parameters(m, "dp", samples=40).dp for m in (si, mm)]
    assert runs[0].rank == runs[1].rank
    _close(np.asarray(runs[0].sigma, float), np.asarray(runs[1].sigma, float))
    assert runs[0].eliminated == runs[1].eliminated
    _close(np.asarray(runs[0].beta, float), np.asarray(runs[1].beta, float))


# Each dimension of the format, written in an engineer's unit (the SLA below uses them all)
ENGINEERING = {
    "length": "mm",
    "angle": "deg",
    "mass": "g",
    "moment": "kg*mm",
    "inertia": "kg*mm^2",
    "time": "ms",
    "acceleration": "mm/s^2",
    "rate": "deg/s",
    "stiffness": "N/mm",
    "damping": "N*s/mm",
}
_INERTIA = {"m": "mass", "mx": "moment", "my": "moment", "mz": "moment"}


def _in(kind: str, value, form: str = "text"):
    """A plain number written in the engineering unit of `kind`; expressions stay as they are."""
    if isinstance(value, str):
        return value
    return Quantity.from_si(value, ENGINEERING[kind], form).written()


def sla_in_engineering_units() -> str:
    data = json.loads(samples.path("sla_suspension").read_text())
    data["gravity"] = [_in("acceleration", v) for v in data["gravity"]]
    for p in data["parameters"]:
        if p.get("unit") == "m":
            p["value"], p["unit"] = Quantity.from_si(p["value"], "mm").number, "mm"
    for body in [data.get("ground", {}), *data["bodies"]]:
        for name, v in body.get("inertia", {}).items():
            body["inertia"][name] = _in(_INERTIA.get(name, "inertia"), v)
        for name, point in body.get("points", {}).items():
            body["points"][name] = [_in("length", v, "object") for v in point]
        for frame in body.get("frames", {}).values():
            if isinstance(frame["origin"], list):
                frame["origin"] = [_in("length", v) for v in frame["origin"]]
    for joint in data["joints"]:
        for c, motion in zip(joint["coordinates"], JOINT_MOTIONS[joint["type"]], strict=True):
            for key in ("initial", "min", "max"):
                if key in c:
                    c[key] = _in("angle" if motion[0] == "R" else "length", c[key])
    for t in data["trajectories"]:
        t["duration"] = _in("time", t["duration"])
        for terms in t["coordinates"].values():
            for h in terms:
                h["amplitude"], h["frequency"] = _in("angle", h["amplitude"]), _in("rate", h["frequency"])
                if "phase" in h:
                    h["phase"] = _in("angle", h["phase"])
    spring = data["forces"][0]
    spring["stiffness"], spring["damping"] = _in("stiffness", spring["stiffness"]), _in("damping", spring["damping"])
    spring["length"] = _in("length", spring["length"])
    data["measures"][0]["radius"] = _in("length", data["measures"][0]["radius"])
    return json.dumps(data)


def test_the_sla_written_in_engineering_units_loads_to_the_si_model_and_saves_as_written():
    si = loads(samples.path("sla_suspension").read_text())
    text = sla_in_engineering_units()
    assert '-9810 mm/s^2"' in text and "N*s/mm" in text and "deg/s" in text and " ms" in text
    engineering = loads(text)
    assert engineering.parameter_values() == si.parameter_values()  # mm: exactly the floats of the SI file
    assert [b.points for b in engineering.bodies] == [b.points for b in si.bodies]
    assert engineering.forces == si.forces
    angles = [(c.initial, c.min, c.max) for j in engineering.joints for c in j.coordinates]
    # an angle set in radians and written in degrees comes back within an ulp: not every float is a degree's
    expected = [(c.initial, c.min, c.max) for j in si.joints for c in j.coordinates]
    assert angles == [tuple(v if v is None else pytest.approx(v, rel=3e-16) for v in c) for c in expected]
    saved = dumps(engineering)
    assert dumps(loads(saved)) == saved and loads(saved) == engineering
    assert json.loads(saved)["forces"][0]["stiffness"] == "30 N/mm"
    assert json.loads(saved)["bodies"][0]["points"]["G"]["unit"] == "mm"


def _series(text: str, options: dict) -> dict[str, np.ndarray]:
    data = kinematics(text, options, lambda *_: None, lambda: False).data.series
    return {name: np.asarray(values, float) for name, values in data.items()}


def test_the_sla_in_engineering_units_gives_the_si_kinematics_and_measures():
    """The angles written in degrees come back within an ulp or two of the SI file's radians, so the two runs may
    differ by what a relative change of a few 1e-16 in the inputs does to each series, through its conditioning
    and the rounding inside (summation orders differ between library versions). That is measured, not guessed:
    the SI model with every number moved by 1e-15 N(0, 1), about 5 ulps (three seeds), gives each series' spread;
    the engineering run must stay within 4 times it, plus 16 ulps of the series' scale for the arithmetic itself.
    That scale is at least 1 in SI: the suspension is about a metre across, and its constraint residuals are
    rounding of that size, not of their own."""
    si_text = samples.path("sla_suspension").read_text()
    options = {"trajectory": "wheel_travel", "samples": 41}
    si, engineering = _series(si_text, options), _series(sla_in_engineering_units(), options)
    assert "alignment.camber [rad]" in si and "alignment.scrub_radius [m]" in si
    perturbed = [_series(dumps(Perturbation(seed, 1e-15)(loads(si_text))), options) for seed in (1, 2, 3)]
    for name, values in si.items():
        spread = max(float(np.nanmax(np.abs(p[name] - values))) for p in perturbed)
        tolerance = 4 * spread + 16 * np.finfo(float).eps * max(1.0, np.nanmax(np.abs(values)))
        np.testing.assert_allclose(engineering[name], values, rtol=0, atol=tolerance, err_msg=name)


def test_a_round_trip_keeps_each_form_and_unit_as_written():
    text = _four_bar_in_mm()
    model = loads(text)
    saved = dumps(model)
    assert dumps(loads(saved)) == saved
    data = json.loads(saved)
    assert data["gravity"] == {"value": [0, 0, -9810], "unit": "mm/s^2"}
    assert data["parameters"][1] == {"name": "L1", "value": 100, "unit": "mm", "description": "crank length"}
    assert data["bodies"][0]["inertia"]["m"] == "480 g"
    assert data["bodies"][2]["inertia"]["m"] == {"value": 1.44, "unit": "kg"}
    assert data["bodies"][1]["points"]["P"] == ["L2/2", "100 mm", 0]
    assert data["joints"][0]["coordinates"][0]["min"] == "-180 deg"
    assert '"size": {"value": [100, 30, 20], "unit": "mm"}' in saved  # one line, as typed


def test_a_parameter_changed_in_si_is_saved_in_its_own_unit():
    model = loads(_four_bar_in_mm())
    model.parameters[1].value = 0.125  # a study or the API sets SI values
    model.parameters.append(Parameter("travel", 0.05, "mm"))  # built in Python: the value is SI
    data = json.loads(dumps(model))
    assert data["parameters"][1]["value"] == 125 and data["parameters"][-1]["value"] == 50
    assert loads(dumps(model)).parameter_values()["travel"] == 0.05


def test_the_si_unit_of_a_parameter_names_what_its_value_is_inside():
    assert [si_unit(u) for u in ("mm", "deg", "N/mm", "kg/m^3", None)] == ["m", "rad", "N/m", "kg m^-3", ""]


def _four_bar_with(path: tuple, value) -> str:
    data = json.loads(four_bar_text())
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("path", "value", "where", "words"),
    [
        (("parameters", 1, "unit"), "milimeter", "parameter 'L1'.unit", ["not a unit pint knows", "millimeter"]),
        (("bodies", 0, "inertia", "m"), "480 furlongs", "body '1'.inertia.m", ["a length, where a mass", "kg, g"]),
        (("bodies", 0, "inertia", "m"), "480 bananas", "body '1'.inertia.m", ["not a unit", "mm, in, deg"]),
        (("bodies", 0, "inertia", "Ixx"), "52 kg*mm", "body '1'.inertia.Ixx", ["a moment of inertia"]),
        (("joints", 0, "coordinates", 0, "initial"), "5 mm", "coordinate 'theta1'.initial", ["an angle"]),
        (("ground", "frames", "O1", "z"), ["1 mm", 0, 0], "ground frame 'O1'.z[0]", ["direction", "no unit"]),
        (("gravity",), {"value": [0, 0, -1], "unit": "g"}, "gravity[0]", ["a mass, where an acceleration"]),
        (("bodies", 0, "inertia", "m"), "20 degC", "body '1'.inertia.m", ["offset"]),
        (("bodies", 0, "inertia", "m"), {"value": "2*L1", "unit": "kg"}, "body '1'.inertia.m", ["expression"]),
        (("bodies", 0, "inertia", "m"), {"value": 1, "unit": "kg", "x": 1}, "body '1'.inertia.m", ["'value'"]),
        (("bodies", 0, "inertia", "m"), "1 kg^9", "body '1'.inertia.m", ["scale"]),
        (("bodies", 0, "inertia", "m"), "1 kg; import os", "body '1'.inertia.m", ["not a unit"]),
        (("parameters", 1, "value"), "100 mm", "parameter 'L1'.value", ["its unit goes in 'unit'"]),
        (("parameters", 2, "unit"), "kg", "body '2' frame 'C'.origin[0]", ["a mass (L2 in kg)", "a length"]),
        (("bodies", 1, "points", "P", 1), "L1 + L1*L2", "body '2' point 'P'[1]", ["adds a length and"]),
        (("bodies", 1, "points", "P", 1), "sin(L1)", "body '2' point 'P'[1]", ["takes sin of a length"]),
        (("bodies", 0, "inertia", "my"), "L1*L2 - L1*L2", "body '1'.inertia.my", ["m^2 (L1 in m, L2 in m)"]),
        (("bodies", 0, "inertia", "Izz"), "0.001636 + L1**3 - L1**3", "body '1'.inertia.Izz", ["m^3 (L1 in m)"]),
    ],
)
def test_a_wrong_unit_is_refused_with_its_place_the_text_and_valid_units(path, value, where, words):
    with pytest.raises(ModelError) as error:
        loads(_four_bar_with(path, value))
    assert str(error.value).startswith(where) or error.value.where == where, str(error.value)
    for word in words:
        assert word in str(error.value)


def test_a_mass_moment_may_leave_out_a_unit_mass_as_files_without_units_do():
    model = loads(_four_bar_with(("bodies", 0, "inertia", "mx"), "L1 - L1 + 0.024"))  # a length: 1 kg implied
    assert model.bodies[0].inertia["mx"] == "L1 - L1 + 0.024"
    assert loads(_four_bar_with(("bodies", 0, "inertia", "Iyy"), "L1**2 - L1**2 + 0.001616"))


def test_an_angular_velocity_needs_an_angle_in_its_unit_so_hertz_is_not_taken_for_rad_per_second():
    data = json.loads(samples.path("sla_suspension").read_text())
    data["trajectories"][0]["coordinates"]["theta1"][0]["frequency"] = "3 Hz"
    with pytest.raises(ModelError, match=r"trajectory 'exciting' coordinate 'theta1' term 0.frequency.*Hz"):
        loads(json.dumps(data))
    data["trajectories"][0]["coordinates"]["theta1"][0]["frequency"] = "180 rpm"
    assert loads(json.dumps(data)).trajectories[0].coordinates["theta1"][0].frequency == pytest.approx(6 * math.pi)


def test_a_joint_spring_takes_the_units_of_its_coordinate():
    data = json.loads(four_bar_text())
    data["forces"] = [{"type": "joint_spring_damper", "name": "k", "coordinate": "theta1", "stiffness": "2 N*m/deg"}]
    assert loads(json.dumps(data)).forces[0].stiffness == pytest.approx(2 * 180 / math.pi)
    data["forces"][0]["stiffness"] = "2 N*m"  # per radian, as SI says
    assert loads(json.dumps(data)).forces[0].stiffness == 2
    data["forces"][0]["stiffness"] = "2 N/mm"
    with pytest.raises(ModelError, match="force 'k'.stiffness: is a stiffness, where a rotational stiffness"):
        loads(json.dumps(data))


def test_files_in_si_load_as_before_without_importing_pint():
    text = four_bar_text()
    assert dumps(loads(text)) == text
    assert not any(isinstance(v, Quantity) for v in loads(text).bodies[0].inertia.values())
    script = "import sys; from mbstudio import samples; [samples.load(n) for n in samples.names()]; "
    script += "print('pint' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"  # a second saved at every start on the samples, whose units are SI


def test_quantities_survive_copies_and_pickles_with_what_was_written():
    import copy
    import pickle

    value = Quantity(100, "mm", "object")
    for twin in (copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert (float(twin), twin.number, twin.unit, twin.form) == (0.1, 100, "mm", "object")
    assert repr(value) == "0.1"  # the number back-ends read (variable precision parses repr) is the SI one
