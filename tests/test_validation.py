"""Validation: each kind of bad input is a ModelError that names the body, joint or field, the value found
and what would be valid; a failed load changes nothing."""

from __future__ import annotations

import copy
import json
import math

import mpmath
import pytest
import sympy

from mbstudio.model import ModelError, dumps, loads, validate
from mbstudio.model.expressions import FUNCTIONS, evaluate
from mbstudio.model.fileformat import from_dict
from mbstudio.model.validation import inertia_warnings


def error(data: dict | str) -> str:
    """The message of the ModelError that loading `data` (a dict or text) raises."""
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(ModelError) as info:
        loads(text)
    assert isinstance(info.value, ValueError)
    return str(info.value)


def assert_names(message: str, *parts: str) -> None:
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"


def test_the_base_model_is_valid(four_bar):
    model = loads(json.dumps(four_bar()))
    validate(model)
    assert [b.label for b in model.bodies] == ["1", "2", "3"]
    assert model.coordinate_names() == ["theta1", "theta2", "theta3", "theta4"]


def test_model_error_carries_where_value_and_expected(four_bar):
    d = four_bar()
    d["bodies"][1]["inertia"]["m"] = -2.5
    with pytest.raises(ModelError) as info:
        loads(json.dumps(d))
    e = info.value
    assert (e.where, e.value) == ("body '2'.inertia.m", -2.5)
    assert e.expected and ">= 0" in e.expected
    assert str(e) == f"{e.where}: {e.problem} (got -2.5); expected {e.expected}"


# ---------------------------------------------------------------- the file as a whole


def test_malformed_json_gives_line_and_column(four_bar):
    text = dumps(from_dict(four_bar()))
    lines = text.splitlines(keepends=True)
    assert lines[3] == '  "name": "four-bar",\n'
    lines[3] = '  "name": "four-bar"\n'  # the comma is missing: the error is at the next key, line 5 column 3
    assert_names(error("".join(lines)), "<string>, line 5, column 3", "malformed JSON", "docs/file-format.md")


@pytest.mark.parametrize("text", ["", "{", '{"format": "mbstudio",}', "[1, 2", "nul", '{"a": 1} x'])
def test_truncated_or_broken_json_is_a_model_error_with_position(text):
    assert_names(error(text), "line 1, column", "malformed JSON")


def test_nan_and_infinity_are_not_json(four_bar):
    text = json.dumps(four_bar()).replace('"value": 0.4', '"value": NaN')
    assert_names(error(text), "NaN", "not valid JSON")
    text = json.dumps(four_bar()).replace('"value": 0.4', '"value": -Infinity')
    assert_names(error(text), "-Infinity")


def test_a_number_too_large_for_a_float_is_refused(four_bar):
    text = json.dumps(four_bar()).replace('"value": 0.4', '"value": 1e999')  # JSON reads it as inf
    assert_names(error(text), "parameter 'L0'.value", "not finite", "inf")
    text = json.dumps(four_bar()).replace('"value": 0.4', '"value": 1' + "0" * 400)
    assert_names(error(text), "parameter 'L0'.value", "too large")
    text = json.dumps(four_bar()).replace('"value": 0.4', '"value": 1' + "0" * 5000)
    assert_names(error(text), "malformed JSON", "digits")


def test_deeply_nested_json_is_a_model_error():
    assert_names(error("[" * 100_000), "nested too deeply")


def test_a_repeated_key_is_refused_rather_than_silently_dropped(four_bar):
    text = json.dumps(four_bar()).replace(
        '"points": {"B": ["L1", 0, 0]}', '"points": {"B": ["L1", 0, 0], "B": [0, 0, 0]}'
    )
    assert_names(error(text), "repeats the key 'B'")


def test_a_file_from_a_newer_schema_version_is_refused(four_bar):
    d = four_bar()
    d["schema_version"] = 3
    assert_names(error(d), "schema_version", "newer MB Studio", "(got 3)", "at most 2")


@pytest.mark.parametrize("version", [0, -1, "1", 1.0, True, [1]])
def test_a_schema_version_that_is_not_a_positive_integer_is_refused(four_bar, version):
    d = four_bar()
    d["schema_version"] = version
    assert_names(error(d), "schema_version", "positive integer", repr(version))


def test_a_missing_schema_version(four_bar):
    d = four_bar()
    del d["schema_version"]
    assert_names(error(d), "schema_version", "is missing")


def test_a_file_that_is_not_an_mb_studio_model(four_bar):
    d = four_bar()
    d["format"] = "urdf"
    assert_names(error(d), "format", "not an MB Studio model", "'urdf'", '"mbstudio"')
    assert_names(error("[1, 2, 3]"), "file", "JSON object", "list")


@pytest.mark.parametrize(
    "where, key",
    [
        ((), "bodys"),
        (("bodies", 0), "colour"),
        (("joints", 1), "axis"),
        (("parameters", 2), "units"),
        (("joints", 0, "coordinates", 0), "limit"),
    ],
)
def test_unknown_fields_are_named_with_the_valid_ones(four_bar, where, key):
    d = four_bar()
    node = d
    for k in where:
        node = node[k]
    node[key] = 1
    assert_names(error(d), f"unknown field '{key}'", "expected one of")


def test_wrong_types_name_the_field(four_bar):
    d = four_bar()
    d["joints"][0]["coordinates"][0]["initial"] = "0.1"
    assert_names(error(d), "coordinate 'theta1'.initial", "must be a number", "'0.1'")
    d = four_bar()
    d["bodies"][2]["inertia"]["Iyz"] = [0]
    assert_names(error(d), "body '3'.inertia.Iyz", "number or an expression", "[0]")
    d = four_bar()
    d["gravity"] = [0, -9.81]
    assert_names(error(d), "gravity", "three numbers", "[0, -9.81]")
    d = four_bar()
    d["joints"][3]["cut"] = "yes"
    assert_names(error(d), "joint 'D'.cut", "true or false", "'yes'")
    d = four_bar()
    del d["bodies"][0]["inertia"]["Izz"]
    assert_names(error(d), "body '1'.inertia", "lacks 'Izz'")
    d = four_bar()
    del d["joints"][2]["child"]
    assert_names(error(d), "joint 'C'", "lacks 'child'")


# ---------------------------------------------------------------- names and references


def test_a_joint_naming_an_unknown_body(four_bar):
    d = four_bar()
    d["joints"][1]["child"] = "7"
    assert_names(error(d), "joint 'B'.child", "unknown body", "'7'", "ground, 1, 2, 3")


def test_a_joint_naming_an_unknown_frame(four_bar):
    d = four_bar()
    d["joints"][1]["parent_frame"] = "Bee"
    assert_names(error(d), "joint 'B'.parent_frame", "unknown frame of body '1'", "'Bee'", "one of: B")


def test_a_frame_naming_an_unknown_point(four_bar):
    d = four_bar()
    d["bodies"][0]["frames"]["B"]["origin"] = "C"
    assert_names(error(d), "body '1' frame 'B'.origin", "unknown point", "'C'", "B")


def test_duplicate_body_labels(four_bar):
    d = four_bar()
    d["bodies"][2]["label"] = "2"
    assert_names(error(d), "body '2'", "defined twice", "unique body labels")


def test_duplicate_joint_names(four_bar):
    d = four_bar()
    d["joints"][2]["name"] = "A"
    assert_names(error(d), "joint 'A'", "duplicate name", "unique joint names")


def test_duplicate_parameter_names(four_bar):
    d = four_bar()
    d["parameters"][3]["name"] = "L1"
    assert_names(error(d), "parameter 'L1'", "defined twice")


def test_duplicate_coordinate_names(four_bar):
    d = four_bar()
    d["joints"][2]["coordinates"][0]["name"] = "theta1"
    assert_names(error(d), "joint 'C' coordinate 'theta1'", "defined twice", "unique coordinate names")


@pytest.mark.parametrize("label", ["0", "ground", "", "a b", "3\n", "crank-1"])
def test_invalid_body_labels(four_bar, label):
    d = four_bar()
    d["bodies"][2]["label"] = label
    assert_names(error(d), ".label", "not a valid body label", repr(label), "letters, digits or _")


@pytest.mark.parametrize("name", ["2L", "sin", "pi", "L 1", "L1\n", ""])
def test_invalid_parameter_names(four_bar, name):
    d = four_bar()
    d["parameters"].append({"name": name, "value": 1.0})
    assert_names(error(d), "invalid name", repr(name))


@pytest.mark.parametrize("name", ["1theta", "theta 1", "theta1\n", ""])
def test_invalid_coordinate_names(four_bar, name):
    d = four_bar()
    d["joints"][0]["coordinates"][0]["name"] = name
    d["independent_coordinates"] = "auto"
    assert_names(error(d), "joint 'A' coordinate", "invalid name", repr(name))


@pytest.mark.parametrize("parent, child", [("2", "2"), ("0", "ground"), ("ground", "0")])
def test_a_joint_from_a_body_to_itself(four_bar, parent, child):
    d = four_bar()
    d["joints"][1]["parent"], d["joints"][1]["child"] = parent, child
    d["joints"][1]["parent_frame"] = {"origin": [0, 0, 0]}
    assert_names(error(d), "joint 'B'", "joins a body to itself", repr(parent), "two different bodies")


def test_an_unknown_joint_type(four_bar):
    d = four_bar()
    d["joints"][0]["type"] = "hinge"
    assert_names(error(d), "joint 'A'.type", "unknown joint type", "'hinge'", "revolute", "spherical")


def test_bodies_not_connected_to_the_ground(four_bar):
    d = four_bar()
    extra = copy.deepcopy(d["bodies"][1])
    d["bodies"] += [dict(extra, label="4", name="floating"), dict(extra, label="5", name="other")]
    assert_names(error(d), "body '4'", "not connected to the ground", "'floating'", "joint path")
    # an island of two bodies joined to each other, but not to the rest
    d["joints"].append(
        {
            "name": "E",
            "type": "fixed",
            "parent": "4",
            "child": "5",
            "parent_frame": {"origin": [0, 0, 0]},
            "child_frame": {"origin": [0, 0, 0]},
        }
    )
    assert_names(error(d), "body '4'", "not connected to the ground")


def test_an_unknown_independent_coordinate(four_bar):
    d = four_bar()
    d["independent_coordinates"] = ["theta9"]
    assert_names(
        error(d), "independent_coordinates", "unknown coordinate", "'theta9'", "theta1, theta2, theta3, theta4"
    )


def test_an_independent_coordinate_listed_twice(four_bar):
    d = four_bar()
    d["independent_coordinates"] = ["theta1", "theta1"]
    assert_names(error(d), "independent_coordinates", "twice", "'theta1'")


# ---------------------------------------------------------------- joints and frames


@pytest.mark.parametrize("joint_type, count", [("revolute", 2), ("revolute", 0), ("spherical", 1), ("fixed", 1)])
def test_a_wrong_number_of_joint_coordinates(four_bar, joint_type, count):
    d = four_bar()
    joint = d["joints"][1]
    joint["type"] = joint_type
    joint["coordinates"] = [{"name": f"q{i}"} for i in range(count)]
    dof = {"revolute": 1, "spherical": 3, "fixed": 0}[joint_type]
    assert_names(
        error(d),
        "joint 'B'.coordinates",
        f"a {joint_type} joint has {dof} coordinate(s)",
        repr([f"q{i}" for i in range(count)]),
    )


def test_min_greater_than_max(four_bar):
    d = four_bar()
    d["joints"][3]["coordinates"][0].update(min=1.5, max=-1.5)
    assert_names(error(d), "joint 'D' coordinate 'theta4'", "min greater than max", "[1.5, -1.5]", "min <= max")


def test_min_equal_to_max_is_allowed(four_bar):
    d = four_bar()
    d["joints"][3]["coordinates"][0].update(min=0.5, max=0.5)
    loads(json.dumps(d))


@pytest.mark.parametrize("axis", [[0, 0, 0], [0.0, "L1 - L1", 0], [1e-300, 0, 0]])
def test_a_zero_joint_axis(four_bar, axis):
    d = four_bar()
    d["joints"][2]["child_frame"]["z"] = axis
    assert_names(error(d), "joint 'C'.child_frame.z", "zero axis", repr(axis), "non-zero direction")


def test_a_zero_axis_in_a_named_body_frame_and_on_the_ground(four_bar):
    d = four_bar()
    d["bodies"][0]["frames"]["B"]["z"] = [0, 0, 0]
    assert_names(error(d), "body '1' frame 'B'.z", "zero axis")
    d = four_bar()
    d["ground"] = {"points": {}, "frames": {"F": {"z": [0, 0, 0]}}}
    assert_names(error(d), "ground frame 'F'.z", "zero axis")


@pytest.mark.parametrize("x", [[0, 0, 2], [0, 0, -1], [0, 0, 0]])
def test_an_x_direction_parallel_to_z_or_zero(four_bar, x):
    d = four_bar()
    d["joints"][3]["parent_frame"]["x"] = x
    assert_names(error(d), "joint 'D'.parent_frame.x", "zero or parallel to the z axis", repr(x))


def test_a_direction_too_long_to_normalise(four_bar):
    d = four_bar()
    d["joints"][3]["parent_frame"]["z"] = [1e300, 1e300, 0]
    assert_names(error(d), "joint 'D'.parent_frame.z[0]", "beyond any mechanism's values", "1e+300", "±1e12")


# ---------------------------------------------------------------- inertia


def set_inertia(d, label_index, **values):
    d["bodies"][label_index]["inertia"].update(values)
    return d


def test_a_negative_mass(four_bar):
    d = set_inertia(four_bar(), 1, m=-2.0)
    assert_names(error(d), "body '2'.inertia.m", "negative mass", "-2.0", ">= 0")


def test_a_negative_mass_from_an_expression(four_bar):
    d = set_inertia(four_bar(), 0, m="L1 - L2")
    assert_names(error(d), "body '1'.inertia.m", "negative mass", "'L1 - L2 = -0.25'")


def warning(data: dict) -> str:
    """The inertia warnings of a document that loads (inertias no rigid body can have are warnings, not errors:
    the algorithms need a positive-definite mass matrix, a property of the mechanism, not of one body)."""
    warnings = inertia_warnings(loads(json.dumps(data)))
    assert len(warnings) == 1, warnings
    return warnings[0]


def test_an_inertia_not_positive_semidefinite_loads_with_a_warning(four_bar):
    d = set_inertia(four_bar(), 2, mx=0, Ixx=0.1, Iyy=-0.1, Izz=0.1)
    assert_names(warning(d), "body '3'", "not one a rigid body can have", "-0.1", "one is negative")


def test_an_inertia_possible_about_the_origin_but_not_about_the_centre_of_mass(four_bar):
    """m = 2 at x = 1 m: about the origin Iyy = Izz = 1 and Ixx = 0.2 look fine, but moving them to the centre
    of mass (parallel axes, -m·d² = -2) leaves Iyy = Izz = -1."""
    d = set_inertia(four_bar(), 1, m=2, mx=2, my=0, mz=0, Ixx=0.2, Ixy=0, Ixz=0, Iyy=1, Iyz=0, Izz=1)
    assert_names(warning(d), "body '2'", "one is negative", "[-1.0, -1.0, 0.2]")


def test_an_inertia_violating_the_triangle_inequality(four_bar):
    d = set_inertia(four_bar(), 0, m=1, mx=0, Ixx=1.0, Iyy=0.3, Izz=0.3)
    assert_names(warning(d), "body '1'", "triangle inequality", "[0.3, 0.3, 1.0]", "exceeds the sum of the other two")
    assert inertia_warnings(loads(json.dumps(four_bar()))) == []


def test_a_triangle_violation_hidden_by_products_of_inertia(four_bar):
    """Principal moments, not the diagonal, are what must satisfy the triangle inequality."""
    d = set_inertia(four_bar(), 0, m=1, mx=0, Ixx=0.55, Iyy=0.55, Izz=0.1, Ixy=0.45)
    assert_names(warning(d), "body '1'", "triangle inequality", "[0.1, 0.1, 1.0]")


def test_first_moments_without_mass(four_bar):
    d = set_inertia(four_bar(), 2, m=0, mx=0.1)
    assert_names(error(d), "body '3'.inertia", "zero mass", "[0.1, 0.0, 0.0]")


def test_an_inertia_that_overflows_when_moved_to_the_centre_of_mass(four_bar):
    d = set_inertia(four_bar(), 2, m=1e-200, mx=1e11)  # m x_G within range, x_G = 1e211 m
    assert_names(error(d), "body '3'.inertia", "overflows", "1e-200")


@pytest.mark.parametrize(
    "inertia",
    [
        dict(m=0, mx=0, my=0, mz=0, Ixx=0, Ixy=0, Ixz=0, Iyy=0, Iyz=0, Izz=0),  # massless
        dict(m=3, mx=0, my=0, mz=0, Ixx=0, Ixy=0, Ixz=0, Iyy=0, Iyz=0, Izz=0),  # point mass at the origin
        dict(m=0.3, mx=0.21, my=0, mz=0, Ixx=0, Ixy=0, Ixz=0, Iyy=0.147, Iyz=0, Izz=0.147),  # point mass at 0.7 m
        dict(m=1.2, mx=0, my=0, mz=0, Ixx=0.01, Ixy=0, Ixz=0, Iyy=0.01, Iyz=0, Izz=0.02),  # thin disc (equality)
        dict(m=1, mx=0, my=0, mz=0, Ixx="L1**2/12", Ixy=0, Ixz=0, Iyy="L1**2/12", Iyz=0, Izz=0),  # thin rod
    ],
)
def test_boundary_inertias_typed_with_few_decimals_are_accepted(four_bar, inertia):
    loads(json.dumps(set_inertia(four_bar(), 0, **inertia)))


# ---------------------------------------------------------------- expressions

BAD_EXPRESSIONS = [
    ("L1 *", "is not valid arithmetic"),
    ("L1 +* 2", "is not valid arithmetic"),
    ("", "is not valid arithmetic"),
    ("1\x00", "is not valid arithmetic"),
    ("2and 3", "is not valid arithmetic"),  # Python only warns about "2and"; here it is an error, not noise
    ("exp(L1)", "calls an unknown function"),
    ("__import__('os')", "calls an unknown function"),
    ("sqrt(x=1)", "calls an unknown function"),
    ("L1.real", "uses Attribute, which is not allowed"),
    ("L1 if L2 else L3", "uses IfExp, which is not allowed"),
    ("L1 % 2", "uses Mod, which is not allowed"),
    ("[L1]", "uses List, which is not allowed"),
    ("'a'", "contains a non-numeric constant"),
    ("True", "contains a non-numeric constant"),
    ("1j", "contains a non-numeric constant"),
    ("sqrt(1, 2)", "cannot evaluate sqrt here"),
    ("sqrt(-L1)", "cannot evaluate sqrt here"),
    ("acos(2)", "cannot evaluate acos here"),
    ("1 / (L1 - L1)", "divides by zero"),
    ("0 ** -1", "cannot be evaluated"),
    ("(-L1) ** 0.5", "is not a real number"),
    ("10.0 ** 400", "cannot be evaluated"),
    ("1e308 * 10", "non-finite"),
    ("1" + "0" * 400, "cannot be evaluated"),
    ("1 + " * 3000 + "1", "nested too deeply"),
    ("-" * 100_000 + "1", "nested too deeply"),
]


@pytest.mark.parametrize(
    "expr, problem",
    BAD_EXPRESSIONS,
    ids=[e if len(e) < 30 else f"{e[:8]}...({len(e)} chars)" for e, _ in BAD_EXPRESSIONS],
)
def test_bad_expressions_name_the_field_and_the_text(four_bar, expr, problem):
    d = set_inertia(four_bar(), 1, Ixx=expr)
    assert_names(error(d), "body '2'.inertia.Ixx", problem, repr(expr)[:60])


def test_an_undefined_parameter_in_an_inertia_value(four_bar):
    d = set_inertia(four_bar(), 1, Izz="2*L9**2/3")
    assert_names(error(d), "body '2'.inertia.Izz", "undefined parameter 'L9'", "'2*L9**2/3'", "the model's parameters")


def test_an_undefined_parameter_in_a_point_and_in_a_frame(four_bar):
    d = four_bar()
    d["bodies"][0]["points"]["B"] = ["L", 0, 0]
    assert_names(error(d), "body '1' point 'B'[0]", "undefined parameter 'L'")
    d = four_bar()
    d["joints"][2]["parent_frame"]["origin"] = ["L2", "h", 0]
    assert_names(error(d), "joint 'C'.parent_frame.origin[1]", "undefined parameter 'h'")
    d = four_bar()
    d["gravity"] = [0, 0, "-g"]
    assert_names(error(d), "gravity[2]", "undefined parameter 'g'")


def test_a_function_name_is_not_a_parameter(four_bar):
    d = set_inertia(four_bar(), 1, Ixx="sqrt")
    assert_names(error(d), "body '2'.inertia.Ixx", "undefined parameter 'sqrt'")


def _mp(x):
    return mpmath.mpf(repr(x)) if isinstance(x, float) else mpmath.mpf(x)


def _sym(x):
    return sympy.Rational(repr(x)) if isinstance(x, float) else sympy.Integer(x)


def test_fractional_exponents_are_read_as_the_decimal_written_in_every_number_system():
    """`2**0.1` at 50 digits is 2^(1/10), not 2 to the binary double nearest 0.1; in sympy `L**0.5` is sqrt(L)."""
    with mpmath.workdps(50):
        got = evaluate("2**0.1", _mp, {}, {n: getattr(mpmath, n) for n in FUNCTIONS})
        assert abs(got - mpmath.mpf(2) ** mpmath.mpf("0.1")) < mpmath.mpf("1e-48")
    L = sympy.Symbol("L", positive=True)
    functions = {n: getattr(sympy, n) for n in FUNCTIONS}
    assert evaluate("L**0.5", _sym, {"L": L}, functions) == sympy.sqrt(L)
    assert evaluate("L**2 * L**-1", _sym, {"L": L}, functions) == L


def test_a_complex_result_in_variable_precision_is_a_model_error():
    """In float64 `0.1*3 - 0.3 - 1e-17` is +4.5e-17; read exactly it is -1e-17, and mpmath's sqrt goes complex."""
    expr = "sqrt(0.1*3 - 0.3 - 1e-17)"
    assert evaluate(expr, float, {}, {n: getattr(math, n) for n in FUNCTIONS}) > 0
    with mpmath.workdps(30), pytest.raises(ModelError) as info:
        evaluate(expr, _mp, {}, {n: getattr(mpmath, n) for n in FUNCTIONS})
    assert_names(str(info.value), "is not a real number", expr)


def test_valid_expressions_are_accepted(four_bar):
    d = set_inertia(four_bar(), 1, Ixx="sqrt(L1**2) * atan2(1, 1) / pi * 4 * cos(0) ** 2 * 0.001 + -(-0)")
    validate(loads(json.dumps(d)))


# ---------------------------------------------------------------- shapes


@pytest.mark.parametrize(
    "shape, where, problem",
    [
        ({"type": "blob"}, "shape.type", "not a known shape type"),
        ("box", "shape", "must be an object"),
        ({"type": "box"}, "shape", "lacks 'size'"),
        ({"type": "box", "size": [1, 0, 1]}, "shape.size", "not positive"),
        ({"type": "box", "size": [1, 1]}, "shape.size", "three numbers"),
        ({"type": "sphere", "radius": -0.1}, "shape.radius", "not positive"),
        ({"type": "sphere", "radius": "r"}, "shape.radius", "undefined parameter 'r'"),
        ({"type": "sphere", "radius": 1, "size": [1, 1, 1]}, "shape", "unknown field 'size'"),
        ({"type": "cylinder", "radius": 0.1, "length": 1, "axis": [0, 0, 0]}, "shape.axis", "zero axis"),
        ({"type": "mesh", "file": ""}, "shape.file", "must be a file name"),
        ({"type": "sphere", "radius": 1, "color": "red"}, "shape.color", "is not a colour"),
    ],
)
def test_bad_shapes(four_bar, shape, where, problem):
    d = four_bar()
    d["bodies"][0]["shape"] = shape
    assert_names(error(d), f"body '1'.{where}", problem)


def test_documented_shapes_are_accepted(four_bar):
    d = four_bar()
    d["bodies"][0]["shape"] = {
        "type": "cylinder",
        "radius": "L1/10",
        "length": "L1",
        "axis": [1, 0, 0],
        "origin": ["L1/2", 0, 0],
        "color": "#A0b0C0",
    }
    d["bodies"][1]["shape"] = {"type": "box", "size": ["L2", 0.02, 0.01]}
    d["bodies"][2]["shape"] = {"type": "mesh", "file": "rocker.stl", "origin": [0, 0, 0]}
    model = loads(json.dumps(d))
    assert loads(dumps(model)) == model


# ---------------------------------------------------------------- nothing half-applied


def test_a_failed_load_leaves_the_current_document_untouched(four_bar):
    current = loads(json.dumps(four_bar()))
    before = copy.deepcopy(current)
    bad = four_bar()
    bad["bodies"][0]["name"] = "renamed"  # a change that would be visible if anything were applied
    bad["joints"][0]["parent"] = "1"
    for text in [json.dumps(bad), dumps(current)[:-40], '{"format": "mbstudio", "schema_version": 9}']:
        with pytest.raises(ModelError):
            current = loads(text)
        assert current == before
        assert dumps(current) == dumps(before)


def test_from_dict_does_not_modify_its_input(four_bar):
    data = four_bar()
    data["joints"][1]["child"] = "nobody"
    snapshot = copy.deepcopy(data)
    with pytest.raises(ModelError):
        validate(from_dict(data))
    assert data == snapshot


def test_validate_does_not_modify_the_model(four_bar):
    model = from_dict(four_bar())
    model.bodies[0].inertia["m"] = -1
    before = copy.deepcopy(model)
    with pytest.raises(ModelError):
        validate(model)
    assert model == before


def _with_trajectory(model_dict, coordinates, samples=10, duration=2.0):
    model_dict["trajectories"] = [
        {"name": "exciting", "duration": duration, "samples": samples, "coordinates": coordinates}
    ]
    return json.dumps(model_dict)


def test_trajectory_round_trips(four_bar):
    terms = {"theta1": [{"amplitude": 0.5, "frequency": "sqrt(2)", "phase": 0.1}]}
    text = dumps(loads(_with_trajectory(four_bar(), terms)))
    assert dumps(loads(text)) == text
    harmonic = loads(text).trajectories[0].coordinates["theta1"][0]
    assert (harmonic.amplitude, harmonic.frequency, harmonic.phase) == (0.5, "sqrt(2)", 0.1)


@pytest.mark.parametrize(
    "coordinates, samples, duration, words",
    [
        ({"nope": [{"amplitude": 1, "frequency": 1}]}, 10, 2.0, ["unknown coordinate", "nope"]),
        ({"theta1": [{"amplitude": 1}]}, 10, 2.0, ["lacks 'frequency'"]),
        ({"theta1": [{"amplitude": "Lx", "frequency": 1}]}, 10, 2.0, ["undefined parameter", "Lx"]),
        ({"theta1": []}, 0, 2.0, ["samples", "at least 1"]),
        ({"theta1": []}, 10, -1.0, ["duration", "positive"]),
    ],
)
def test_bad_trajectories_are_named(four_bar, coordinates, samples, duration, words):
    with pytest.raises(ModelError) as info:
        loads(_with_trajectory(four_bar(), coordinates, samples, duration))
    for word in words:
        assert word in str(info.value)
