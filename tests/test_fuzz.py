"""Fuzzing the loader: mutated models and mutated text give either a valid model or a ModelError, and a
model that loads can be saved and analysed without any other kind of exception."""

from __future__ import annotations

import ast
import copy
import csv
import importlib.util
import json
import math
import os
import re
import time

import casadi
import gmpy2
import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context, event

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.kinematics import Mechanism
from mbstudio.model import JOINT_MOTIONS, AssemblyError, Model, ModelError, dumps, loads, validate
from mbstudio.model.expressions import FUNCTIONS, evaluate
from mbstudio.model.fileformat import from_dict
from mbstudio.numerics.backends import MultiPrecision, Symbolic
from mbstudio.numerics.compiled import Traced

SAMPLES = {name: samples.path(name).read_text(encoding="utf-8") for name in samples.names()}
# about 10 s in all in the README run; .ci/run hunts longer (MBSTUDIO_FUZZ_EXAMPLES=1500), and 5000 hunts longer still
FUZZ = settings(
    max_examples=int(os.environ.get("MBSTUDIO_FUZZ_EXAMPLES", 150)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

SPECIAL_NUMBERS = [
    0,
    -0.0,
    -1,
    -1e-9,
    1e-300,
    5e-324,
    1e15,
    1e154,
    -1e308,
    1e308,
    10**400,
    -(10**30),
    float("nan"),
    float("inf"),
    float("-inf"),
]
SPECIAL_TEXT = [
    "",
    " ",
    "0",
    "ground",
    "-1",
    "pi",
    "sqrt(-1)",
    "1/0",
    "1e400",
    "2**2000",
    "L1 +",
    "(",
    "nan",
    "auto",
    "revolute",
    "\n",
    "\ud800",
    "é",
    "x" * 200,
]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.sampled_from(SPECIAL_NUMBERS)
    | st.text(max_size=8)
    | st.sampled_from(SPECIAL_TEXT)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def note(text: str) -> None:
    """Tally outcomes (pytest --hypothesis-show-statistics) to see that the fuzzing reaches valid models."""
    if currently_in_test_context():
        event(text)


def outcome(text: str, precision=None) -> Model | None:
    """The property: loads gives a valid model or a ModelError; a model that loads saves canonically and
    round-trips, and building its Mechanism (in float64, or at `precision` digits) and assembling it raise
    nothing but ModelError/AssemblyError."""
    try:
        model = loads(text)
    except ModelError as exc:
        note(f"refused: {exc.problem[:30]}")
        return None
    validate(model)
    out = dumps(model)
    again = loads(out)
    assert again == model
    assert dumps(again) == out
    try:
        Mechanism(model, precision=precision).assemble()
        note("loaded, assembled")
    except (ModelError, AssemblyError) as exc:
        note(f"loaded, then {type(exc).__name__}")
    return model


# ---------------------------------------------------------------- mutations of the parsed document


def slots(node, out: list) -> list:
    """Every (container, key) pair of a JSON tree, depth first."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in list(items):
        out.append((node, key))
        slots(child, out)
    return out


def strings(node, out: set) -> set:
    """Every string in a JSON tree, keys included: candidate names for renamed references."""
    if isinstance(node, str):
        out.add(node)
    elif isinstance(node, dict):
        out.update(node)
        for child in node.values():
            strings(child, out)
    elif isinstance(node, list):
        for child in node:
            strings(child, out)
    return out


def listed(value) -> list:
    return value if isinstance(value, list) else []


def mutate(doc, draw) -> None:
    # format and schema_version are left to the text mutations: here they would hide everything else
    found = [(c, k) for c, k in slots(doc, []) if not (c is doc and k in ("format", "schema_version"))]
    if not found:
        return
    container, key = found[draw(st.integers(0, len(found) - 1))]
    value = container[key]
    # number, rename, retype and independent often keep the model valid: odd mechanisms reach the kinematics
    op = draw(
        st.sampled_from(
            [
                "delete",
                "replace",
                "empty",
                "rename_key",
                "duplicate",
                "number",
                "number",
                "rename",
                "retype",
                "retype",
                "independent",
            ]
        )
    )
    if op == "delete":
        del container[key]
    elif op == "replace":
        container[key] = draw(JSON_VALUES)
    elif op == "number":  # negative, huge, tiny, special, or a plausible-but-odd value
        choice = st.sampled_from(SPECIAL_NUMBERS) | st.floats(-10, 10) | st.integers(-3, 3)
        if isinstance(value, int | float) and not isinstance(value, bool):
            choice = choice | st.just(-value) | st.just(value * (10**300 if isinstance(value, int) else 1e300))
        container[key] = draw(choice)
    elif op == "empty":
        container[key] = draw(st.sampled_from(["", [], {}]))
    elif op == "rename":  # a reference (label, frame, point, coordinate, parameter) pointing elsewhere
        container[key] = draw(st.sampled_from(sorted(strings(doc, set()))))
    elif op == "rename_key" and isinstance(container, dict):
        new = draw(st.sampled_from(sorted(strings(doc, set()))) | st.text(max_size=4))
        items = [(new if k == key else k, v) for k, v in container.items()]
        container.clear()
        container.update(items)
    elif op == "duplicate" and isinstance(container, list):
        container.insert(key, copy.deepcopy(value))
    elif op == "retype":  # change a joint's type, with the right number of fresh coordinates
        joints = doc.get("joints") if isinstance(doc, dict) else None
        if isinstance(joints, list) and joints and isinstance(joints[0], dict):
            joint = joints[draw(st.integers(0, len(joints) - 1))]
            if isinstance(joint, dict):
                joint["type"] = kind = draw(st.sampled_from(sorted(JOINT_MOTIONS)))
                start = draw(st.integers(100, 999))
                joint["coordinates"] = [
                    {"name": f"q{start}_{i}", "initial": draw(st.floats(-2, 2))}
                    for i in range(len(JOINT_MOTIONS[kind]))
                ]
    elif op == "independent" and isinstance(doc, dict):
        coords = [
            c
            for joint in listed(doc.get("joints"))
            if isinstance(joint, dict)
            for c in listed(joint.get("coordinates"))
            if isinstance(c, dict)
        ]
        names = [c["name"] for c in coords if isinstance(c.get("name"), str)]
        doc["independent_coordinates"] = draw(st.just("auto") | st.lists(st.sampled_from(names or ["x"]), max_size=3))


def sources(four_bar) -> dict[str, str]:
    """The texts to mutate: the tests' four-bar (conftest.py) and every sample present."""
    return {"four_bar (tests)": dumps(from_dict(four_bar())), **SAMPLES}


@FUZZ
@given(data=st.data())
def test_mutated_documents_load_as_valid_models_or_raise_model_error(four_bar, data):
    texts = sources(four_bar)
    doc = json.loads(texts[data.draw(st.sampled_from(sorted(texts)), label="source")])
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        mutate(doc, data.draw)
    outcome(json.dumps(doc, indent=data.draw(st.sampled_from([None, 2]))))


# ---------------------------------------------------------------- mutations of the text


@FUZZ
@given(data=st.data())
def test_mutated_text_loads_as_a_valid_model_or_raises_model_error(four_bar, data):
    texts = sources(four_bar)
    text = texts[data.draw(st.sampled_from(sorted(texts)), label="source")]
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        raw = text.encode("utf-8")
        at = data.draw(st.integers(0, len(raw)), label="at")
        edit = data.draw(st.sampled_from(["truncate", "insert", "delete", "replace"]))
        if edit == "truncate":
            raw = raw[:at]
        elif edit == "insert":
            raw = (
                raw[:at]
                + data.draw(st.text(max_size=6) | st.sampled_from(["{", "]", ",", '"', "\\u"])).encode(
                    "utf-8", "surrogatepass"
                )
                + raw[at:]
            )
        elif edit == "delete":
            raw = raw[:at] + raw[at + data.draw(st.integers(1, 20)) :]
        else:
            raw = raw[:at] + data.draw(st.binary(min_size=1, max_size=3)) + raw[at + 1 :]
        text = raw.decode("utf-8", errors="replace")
    outcome(text)


# ---------------------------------------------------------------- expressions

ATOMS = st.sampled_from(
    ["0", "1", "2", "0.5", "0.1", "0.99999999999999999", "1e308", "1e-320", "L0", "L1", "L2", "L3", "pi", "10", "x"]
) | st.floats(allow_nan=False, allow_infinity=False).map(repr)


def _compound(inner):
    operators = st.sampled_from(["+", "-", "*", "/", "**"])
    return (
        st.tuples(inner, operators, inner).map(lambda t: f"({t[0]}){t[1]}({t[2]})")
        | st.tuples(st.sampled_from(FUNCTIONS), inner).map(lambda t: f"{t[0]}({t[1]})")
        | st.tuples(inner, inner).map(lambda t: f"atan2({t[0]}, {t[1]})")
        | inner.map(lambda e: f"-{e}")
    )


EXPRESSION = st.recursive(ATOMS, _compound, max_leaves=6) | st.text(
    alphabet="0123456789.+-*/() eLpisqrtcoan2_,", max_size=24
)


@settings(FUZZ, max_examples=FUZZ.max_examples * 2 // 3)
@given(
    expr=EXPRESSION,
    field=st.sampled_from(["Ixx", "mx", "m", "point", "axis", "gravity", "shape"]),
    precision=st.sampled_from([None, None, None, 30]),
)  # 30 digits: slower, so one time in four
def test_random_expressions_evaluate_or_raise_model_error(four_bar, expr, field, precision):
    doc = four_bar()
    if field == "point":
        doc["bodies"][0]["points"]["B"][1] = expr
    elif field == "axis":
        doc["joints"][3]["parent_frame"]["z"][0] = expr
    elif field == "gravity":
        doc["gravity"][0] = expr
    elif field == "shape":
        doc["bodies"][1]["shape"] = {"type": "sphere", "radius": expr}
    else:
        doc["bodies"][2]["inertia"][field] = expr
    outcome(json.dumps(doc), precision)


# One expression through the four number systems: float64, MPFR at 50 digits, sympy (the parameters as symbols,
# given their values afterwards) and CasADi (the parameters as symbols of a compiled function). Each gives a
# finite real number or refuses with a ModelError; where two give numbers and the expression is well conditioned
# (its value barely moves when every number in it moves by 1e-12), the numbers agree.
VALUES = {"a": 0.3, "b": 1.7, "c": -2.2}
LEAVES = st.sampled_from(["0", "1", "2", "3", "10", "0.5", "0.1", "1.25", "1e-3", "a", "b", "c", "pi"])
ARITHMETIC = st.recursive(LEAVES, _compound, max_leaves=10)


def _float64(text: str) -> float:
    return evaluate(text, float, {**VALUES, "pi": math.pi}, {n: getattr(math, n) for n in FUNCTIONS})


def _mpfr(text: str, nudge: int | None = None, digits: int = 50) -> gmpy2.mpfr:
    """At 50 digits (or `digits`); `nudge` k: every literal, parameter and pi x moved to x (1 ± 1e-12) ± 1e-14 (the
    first signs drawn from the seed k, the second + for even k, - for odd, so that a zero moves both ways)."""
    mp = MultiPrecision(digits)
    signs = np.random.default_rng(nudge)
    with mp.context():
        if nudge is None:
            moved = mp.scalar
        else:
            shift = mp.scalar(1e-14) * (1 if nudge % 2 == 0 else -1)
            moved = lambda x: mp.scalar(x) * (1 + mp.scalar(1e-12) * int(signs.choice([-1, 1]))) + shift  # noqa: E731
        symbols = {n: moved(v) for n, v in VALUES.items()} | {"pi": moved(math.pi) if nudge is not None else mp.pi()}
        return evaluate(text, moved, symbols, mp.functions)


def _sympy(text: str) -> gmpy2.mpfr:
    """The exact value with the parameters' decimals put in, to 50 digits; not a finite real number: a
    ModelError."""
    symbolic = Symbolic()
    names = {n: sympy.Symbol(n, real=True) for n in VALUES}
    expr = evaluate(text, symbolic.scalar, {**names, "pi": sympy.pi}, symbolic.functions)
    try:  # atan2(0, zoo) after 1/atan2(0, a) met a = 0.3: sympy's comparisons raise on what has no value
        value = sympy.sympify(expr).subs({names[n]: sympy.Rational(repr(v)) for n, v in VALUES.items()})
    except TypeError:
        raise ModelError("expression", "has no value with these values", text) from None
    number = sympy.N(value, 50, chop=True)  # atan2 substituted is -I*log(...): its 1e-249 imaginary part is 0
    if not (number.is_Number and number.is_real and number.is_finite):  # atan(zoo) is AccumBounds(-pi/2, pi/2)
        raise ModelError("expression", "is not a finite real number with these values", text)
    return gmpy2.mpfr(str(number), 200)


def _casadi(text: str) -> float:
    traced = Traced()
    names = {n: casadi.SX.sym(n) for n in VALUES}
    expr = evaluate(text, traced.scalar, {**names, "pi": traced.pi()}, traced.functions)
    value = float(casadi.Function("f", list(names.values()), [casadi.SX(expr)])(*VALUES.values()))
    if not math.isfinite(value):
        raise ModelError("expression", "is not a finite real number with these values", text)
    return value


def _value(route, text: str):
    """A number, or None when the route refuses with a ModelError (anything else escapes the test)."""
    try:
        value = route(text)
    except ModelError as exc:
        note(f"{getattr(route, '__name__', 'route')}: {exc.problem[:24]}")
        return None
    # finite in its own number system: 2**1024 is an MPFR number beyond float64's range
    assert gmpy2.is_finite(value) if isinstance(value, gmpy2.mpfr) else math.isfinite(value), (text, value)
    return value


def _hidden_zero(text: str) -> bool:
    """Whether a part of the expression is exactly 0 (sympy's value) but not at 50 digits (sin(pi) is 1e-50 there):
    the number systems that round then divide by it, or take atan2(0, it), where sympy cannot."""
    for node in ast.walk(ast.parse(text, mode="eval").body):
        part = ast.unparse(node)
        try:
            exact, rounded = _sympy(part), _mpfr(part)
        except ModelError:
            continue
        if exact == 0 and rounded != 0:
            return True
    return False


def _well_conditioned(text: str, exact) -> bool:
    nudged = [_value(lambda t, k=k: _mpfr(t, nudge=k), text) for k in range(4)]
    return all(v is not None and abs(v - exact) <= 1e-6 * max(1, abs(exact)) for v in nudged)


@FUZZ
@given(text=ARITHMETIC)
@example(text="atan((0)**(c))")  # atan(zoo) once c = -2.2: an interval in sympy, no number
@example(text="atan2(a, tan(sin(1)))")  # the same, once a is substituted
@example(text="atan2(2, tan(sin(1)))")  # sympy wrote it -I*log(...), 1e-249 imaginary: found by CI's fuzz
@example(text="atan2(-(0)**(2), -1)")  # IEEE's -0: -π in float, π in sympy
@example(text="tan(atan2(1, (0)-(0)))")  # a pole: 1.6e16 in float64, zoo in sympy
@example(text="(sin(pi))/(sin(pi))")  # 0/0 exactly, 1 where sin(π) rounds to 1e-16
@example(text="(atan2(sin(pi), 1))/(atan2(sin(pi), a))")  # 0/0 exactly, sympy's 0·x = 0 gives 0
@example(text="(0)*(atan2(0, sin(pi)))")  # atan2(0, 0) exactly
@example(text="atan2(0, (1)/(atan2(0, a)))")  # a division by zero once a has its value
@example(text="(2)**((2)**(10))")  # 2**1024: finite at 50 digits, beyond float64
@example(text="asin(tan(atan2(a, a)))")  # float64 right to 1e-8 only: tan(π/4) = 1 - 1e-16 at asin's branch point
def test_expressions_agree_in_the_four_number_systems(text):
    """Issue 23 item 2: `1/(1+t)` crashed on CasADi symbols (the division-by-zero test asked a symbol for its
    truth); MPFR and CasADi answered sqrt(-1) with NaN and sympy with I where float64 refused."""
    values = {route: _value(route, text) for route in (_float64, _mpfr, _sympy, _casadi)}
    exact = values[_mpfr]
    if exact is None or not _well_conditioned(text, exact):
        note("ill-conditioned or refused at 50 digits")
        return
    scale = max(1, abs(exact))
    # rounding inside the expression may cost digits its inputs do not (asin(tan(atan2(a, a))) sits on asin's
    # branch point at 1, where float64's tan(π/4) = 1 - 1e-16 gives π/2 - 1.5e-8); where it decides the value
    # outright, the exact value is a pole that rounding moved off (tan(atan2(1, 0)): 1e15 at 15 digits, 1e50 at
    # 50, zoo in sympy) and nothing is compared
    rounded = [_value(lambda t, d=d: _mpfr(t, digits=d), text) for d in (15, 16, 17, 18)]
    if any(v is None for v in rounded) or max(abs(v - exact) for v in rounded) > 1e-6 * scale:
        note("decided by rounding: a pole or a branch point")
        return
    note("compared")
    if _hidden_zero(text):  # sympy sees an exact 0 where rounding leaves 1e-50: 0/0, 0·(1/0) or atan2(0, 0)
        note("an exact zero that rounding hides: sympy not compared")
    else:
        with gmpy2.context(precision=200):
            assert values[_sympy] is not None and abs(values[_sympy] - exact) <= 1e-30 * scale, (text, values)
    tolerance = max(1e-9 * scale, 10 * max(abs(v - exact) for v in rounded))  # what rounding costs, at least 1e-9
    for route in (_float64, _casadi):
        if values[route] is not None:  # float64 may overflow where 50 digits do not
            assert abs(values[route] - exact) <= tolerance, (text, values)


def test_a_division_by_an_expression_of_a_symbol_is_left_to_its_values():
    t = casadi.SX.sym("t")
    f = casadi.Function("f", [t], [casadi.SX(evaluate("1/(1+t)", float, {"t": t}, Traced().functions))])
    assert float(f(0.5)) == 1 / 1.5
    for text in ("1/(t-t)", "1/(1-1)"):
        with pytest.raises(ModelError, match="divides by zero"):
            evaluate(text, float, {"t": t}, Traced().functions)


def test_the_unmutated_sources_are_valid(four_bar):
    for name, text in sources(four_bar).items():
        assert outcome(text) is not None, name


# ---------------------------------------------------------------------------------------------- generated code
# Names and free text that try to leave a string literal, a comment or an identifier; CANARY is replaced by
# the path of a file that only running the text as code would create.
ESCAPES = ['"""', "'''", '"', "'", "\n", "\r", "\\", "#", "%", "\u2028", "\x00", "{", "}", "$", ",", ";"]
PAYLOADS = [
    'x"""; __import__("pathlib").Path(CANARY).touch(); """',
    "x'''; __import__('pathlib').Path(CANARY).touch(); '''",
    'x"\n__import__("pathlib").Path(CANARY).touch()\n#',
    "lambda",
    "numpy",
    "_p",
    "t",
    "my1",
    "d_theta1",
    "y1",
    "\\input{CANARY}",
    "*/ int x; /*",
]
FUZZED = st.one_of(
    st.sampled_from(PAYLOADS),
    st.lists(st.sampled_from(ESCAPES + list("abcxyz019_ ")), max_size=8).map("".join),
    st.text(max_size=12),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True),
)
PENDULUM = json.loads(SAMPLES["double_pendulum"])


NAMED = ["parameter", "body label", "joint", "coordinate", "force"]


def _fuzzed_document(data, canary: str) -> dict:
    """The double pendulum with fuzzed free text (model name, descriptions) and one or two fuzzed names, so
    that many cases load and reach the exporters."""
    doc = copy.deepcopy(PENDULUM)
    fuzzed = data.draw(st.sets(st.sampled_from(NAMED), max_size=2), label="fuzzed names")

    def draw(label: str, default: str) -> str:
        if label not in fuzzed and label in NAMED:
            return default
        return data.draw(FUZZED, label=label).replace("CANARY", canary)

    doc["name"], doc["description"] = draw("model name", ""), draw("description", "")
    doc["parameters"].append({"name": draw("parameter", "extra"), "value": 0.5, "description": draw("text", "")})
    old, new = doc["bodies"][0]["label"], draw("body label", doc["bodies"][0]["label"])
    doc["bodies"][0]["label"] = new
    for joint in doc["joints"]:
        joint.update({side: new for side in ("parent", "child") if joint[side] == old})
    joint = doc["joints"][0]
    joint["name"] = draw("joint", joint["name"])
    joint["coordinates"][0]["name"] = draw("coordinate", joint["coordinates"][0]["name"])
    force = {"name": draw("force", "motor"), "type": "actuator", "coordinate": joint["coordinates"][0]["name"]}
    doc["forces"] = [{**force, "formula": "0"}]
    return doc


def _generated_code_is_inert(data, tmp_path_factory) -> None:
    folder = tmp_path_factory.mktemp("generated")
    canary = folder / "canary"
    try:
        doc = _fuzzed_document(data, str(canary))
        text = json.dumps(doc)
    except (UnicodeEncodeError, ValueError):
        return
    start = time.perf_counter()
    try:
        model = loads(text)
    except ModelError:
        event("refused at load")
        return
    event("loaded")
    (folder / "m.mbs").write_text(dumps(model), encoding="utf-8")
    out = folder / "eom.py"
    assert (
        main(["eom", str(folder / "m.mbs"), "--python", str(out), "--latex", str(folder / "eom.tex"), "--no-simplify"])
        == 0
    )
    spec = importlib.util.spec_from_file_location(f"fuzzed_{folder.name}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    M = module.mass_matrix([0.3, -0.2])
    assert M.shape == (2, 2) and np.isfinite(M).all()
    assert not canary.exists(), "text from the model ran as code"
    tex = (folder / "eom.tex").read_text(encoding="utf-8")
    assert all(line.startswith("%") for line in tex.splitlines() if "CANARY" in line or str(canary) in line)
    assert time.perf_counter() - start < 20  # no case may hang


CODEGEN = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


@CODEGEN
@given(data=st.data())
def test_names_and_text_never_run_as_code_in_generated_files(data, tmp_path_factory):
    """Load → check → eom export (Python and LaTeX) → import of the generated module, with fuzzed names and
    text: a ModelError at load, or a module that imports, computes and never runs the text (100 cases here;
    .ci/run runs 2 000)."""
    _generated_code_is_inert(data, tmp_path_factory)


@pytest.mark.slow
@settings(CODEGEN, max_examples=2000)
@given(data=st.data())
def test_names_and_text_never_run_as_code_in_generated_files_2000_cases(data, tmp_path_factory):
    _generated_code_is_inert(data, tmp_path_factory)


# ---------------------------------------------------------------------------------------------- URDF
URDF_ARM = """<?xml version="1.0"?>
<robot name="arm">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base"/>
  <link name="upper"><inertial><mass value="2"/><origin xyz="0.1 0 0" rpy="0 0 0"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0.1 0 0"/><geometry><box size="0.2 0.05 0.05"/></geometry><material name="red"/></visual>
  </link>
  <link name="lower"><inertial><mass value="1"/><inertia ixx="0.005" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><visual><geometry><mesh filename="package://arm/meshes/lower.stl" scale="1 1 1"/></geometry></visual>
  </link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.5" rpy="0.3 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="2" effort="10" velocity="1"/><dynamics damping="0.5" friction="0.1"/>
  </joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/><origin xyz="0.2 0 0"/>
    <axis xyz="0 1 0"/></joint>
</robot>
"""
XML_PIECES = ["<", ">", "&", "&amp;", "&x;", '"', "'", "]]>", "<!--", "<!DOCTYPE r [<!ENTITY x 'y'>]>", "\x00", "é"]
URDF_VALUES = [
    *map(str, SPECIAL_NUMBERS),
    "",
    " ",
    "1 2",
    "1 2 3 4",
    "0 0 0",
    "-1",
    "abc",
    "base",
    "upper",
    "lower",
    "nowhere",
    "floating",
    "planar",
    "prismatic",
    "fixed",
    "/etc/passwd",
    "../../x.stl",
    "package://arm/../../x.stl",
]


def _mutated_urdf(data) -> str:
    text = URDF_ARM
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        edit = data.draw(st.sampled_from(["value", "value", "value", "duplicate", "delete", "insert", "truncate"]))
        values = [(m.start(1), m.end(1)) for m in re.finditer(r'="([^"]*)"', text)]
        if edit == "value" and values:
            start, end = values[data.draw(st.integers(0, len(values) - 1))]
            text = text[:start] + data.draw(st.sampled_from(URDF_VALUES) | st.text(max_size=6)) + text[end:]
        elif edit in ("duplicate", "delete"):
            elements = list(
                re.finditer(r"<(link|joint|material|inertial|visual|axis|limit|origin)\b.*?(/>|</\1>)", text, re.S)
            )
            if elements:
                m = elements[data.draw(st.integers(0, len(elements) - 1))]
                text = text[: m.end()] + (m.group(0) if edit == "duplicate" else "") + text[m.end() :]
                if edit == "delete":
                    text = text[: m.start()] + text[m.end() :]
        else:
            at = data.draw(st.integers(0, len(text)))
            piece = data.draw(st.sampled_from(XML_PIECES) | st.text(max_size=4))
            text = text[:at] if edit == "truncate" else text[:at] + piece + text[at:]
    return text


@FUZZ
@given(data=st.data())
def test_mutated_urdf_imports_as_a_valid_model_or_raises_model_error(data, tmp_path_factory):
    """Issue 23 item 3: a URDF is imported as a valid model, or refused with a ModelError; nothing else, and
    within seconds."""
    from mbstudio.io.urdf_import import import_urdf

    folder = tmp_path_factory.mktemp("urdf")
    path = folder / "robot.urdf"
    path.write_text(_mutated_urdf(data), encoding="utf-8", errors="surrogateescape")
    start = time.perf_counter()
    try:
        result = import_urdf(path, [folder])
    except ModelError as exc:
        note(f"refused: {exc.problem[:30]}")
    else:
        note("imported")
        assert loads(dumps(result.model)) == result.model
    assert time.perf_counter() - start < 20


# ---------------------------------------------------------------------------------------------- ensemble tables
FOUR_BAR_MODEL = loads(SAMPLES["four_bar"])
FOUR_BAR_MECHANISM = Mechanism(FOUR_BAR_MODEL)
CSV_CELLS = st.sampled_from(["theta1", "d_theta1", "L1", "L2", "x", "", " ", "#", '"', '""', ",", "\n", "\r", "\x00"])
CSV_NUMBERS = st.sampled_from([*map(str, SPECIAL_NUMBERS), "1e999", "-0", "0x10", "1_000", "١", "½"]) | st.floats().map(
    repr
)


@FUZZ
@given(
    header=st.lists(CSV_CELLS | st.text(max_size=5), min_size=1, max_size=4),
    rows=st.lists(st.lists(CSV_NUMBERS | CSV_CELLS | st.text(max_size=4), max_size=5), max_size=4),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16", "bytes"]),
    noise=st.binary(max_size=4),
)
@example(header=[""], rows=[["theta1"], ["0"]], encoding="utf-8", noise=b"")  # a blank line before the header
def test_fuzzed_ensemble_tables_are_read_or_refused_with_model_error(header, rows, encoding, noise, tmp_path_factory):
    """Issue 23 items 6 and 8: the runs of an ensemble (`simulate --ensemble`), read or refused by name."""
    from mbstudio.io.ensemble_table import read_runs

    text = "\n".join(",".join(row) for row in [header, *rows]) + "\n"
    raw = noise + text.encode("utf-8", "surrogatepass") if encoding == "bytes" else text.encode(encoding, "replace")
    path = tmp_path_factory.mktemp("runs") / "runs.csv"
    path.write_bytes(raw)
    try:
        arguments, runs = read_runs(path, FOUR_BAR_MODEL, ["theta1"])
    except ModelError as exc:
        note(f"refused: {exc.problem[:30]}")
        return
    note("read")
    assert all(np.isfinite(v) for run in runs for v in run.values())
    header_read = next(r for r in csv.reader(text.lstrip("\ufeff").splitlines()) if r)  # blank lines are skipped
    assert len(set(header_read)) >= 1 and len(arguments) <= 3


# ---------------------------------------------------------------------------------------------- study specifications
GRID_TEXT = st.sampled_from(
    ["L1", "L2", "L0", "L1 ", "x", "", "=", ":", "0", "1", "-1", "3", "10001", "1e308", "nan", "inf"]
)


@FUZZ
@given(
    specs=st.lists(
        st.lists(GRID_TEXT | st.text(max_size=4), min_size=1, max_size=5).map(
            lambda parts: parts[0] + "=" + ":".join(parts[1:]) if len(parts) > 1 else parts[0]
        )
        | st.text(max_size=12),
        min_size=1,
        max_size=3,
    ),
    analysis=st.sampled_from(["basepar", "kinematics", "simulate", "linearize", "nope", ""]),
    scheduler=st.none()
    | st.sampled_from(["tcp://127.0.0.1:8786", "tls://h:1", "inproc://x", "ucx://h:1", "h", ":", "[::1]:1", "a b:1"])
    | st.text(max_size=12),
)
def test_study_specifications_build_a_study_or_raise_model_error(specs, analysis, scheduler):
    """The grids (`--vary`), the analysis and the scheduler's address: a Study (not started) or a ModelError."""
    from mbstudio.jobs.study import MAX_POINTS, Study, grids

    try:
        study = Study(FOUR_BAR_MODEL, grids(specs), analysis, scheduler=scheduler)
    except ModelError as exc:
        note(f"refused: {exc.where[:20]}")
        return
    note("built")
    assert 1 <= len(study.points) <= MAX_POINTS and study.client is None
    assert all(np.isfinite(v) for point in study.points for v in point.values())


@FUZZ
@given(
    text=st.text(max_size=80)
    | st.sampled_from(["distributed: {comm: {tls: {ca-file: 3}}}", "- [", "{", "!!python/object:os.system ls"])
)
def test_security_files_are_read_or_refused_with_model_error(text, tmp_path_factory):
    from mbstudio.jobs.study import load_security

    path = tmp_path_factory.mktemp("security") / "security.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    with pytest.raises(ModelError, match="--security"):
        load_security(path)  # none of these names readable certificates


# ---------------------------------------------------------------------------------------------- measured logs
LOG_HEADERS = st.sampled_from(
    ["t", "t [s]", "t [ms]", "theta1", "theta1 [deg]", "theta1 [mm]", "tau_theta1", "tau_theta1 [N m]",
     "tau_theta1 [N]", "theta2", "x", "", "t [", "theta1 []", "tau_theta1 [furlong]", "t,t"]
)  # fmt: skip


def _permuted_log_header(names: list[str]):
    units = {"t": "s", "theta1": "deg", "tau_theta1": "N m"}
    return st.tuples(*(st.sampled_from([n, f"{n} [{units[n]}]"]) for n in names)).map(list)


@FUZZ
@given(
    header=st.permutations(["t", "theta1", "tau_theta1"]).flatmap(_permuted_log_header)
    | st.lists(LOG_HEADERS | st.text(max_size=6), min_size=1, max_size=4),
    step=st.sampled_from([0.01, 0.01, 0.0, -0.01, 1e-300, 1e300]),
    count=st.integers(0, 12),
    cells=st.lists(CSV_NUMBERS | CSV_CELLS, max_size=6),
    irregular=st.booleans(),
)
def test_fuzzed_measured_logs_are_read_or_refused_with_model_error(header, step, count, cells, irregular):
    """Identification's CSV logs (time, encoder positions, actuator forces with units in the headers): read into
    finite SI arrays or refused by name."""
    from mbstudio.identification.logs import parse_log

    rows = []
    for k in range(count):
        signals = {"t": k * step * (1.5 if irregular and k == count // 2 else 1), "theta1": 0.1 * k, "tau_theta1": 1.0}
        cell = iter(cells)
        rows.append(
            ",".join(repr(signals[h.split(" [")[0]]) if h.split(" [")[0] in signals else next(cell, "") for h in header)
        )
    try:
        log = parse_log("\n".join([",".join(header), *rows]) + "\n", FOUR_BAR_MECHANISM)
    except ModelError as exc:
        note(f"refused: {exc.problem[:30]}")
        return
    note("read")
    assert np.isfinite(log.t).all() and np.isfinite(log.positions).all() and np.isfinite(log.forces).all()
    assert len(log.t) == len(log.positions) == len(log.forces) >= 1
