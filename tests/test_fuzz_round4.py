"""Generators for what the fourth fuzz round found (hypothesis; MBSTUDIO_FUZZ_EXAMPLES sets the examples, as in
test_fuzz.py): lone surrogates and bidirectional controls in every text field of a model, numbers written with
underscores, MJCF files naming paths in and out of their folder, formulas in t that grow with time, and the
uniqueness of the inertial symbols checked without listing them."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mbstudio import samples
from mbstudio.model import ModelError, dumps, loads
from mbstudio.model.expressions import evaluate, parse
from mbstudio.model.fileformat import to_dict
from mbstudio.model.names import check_inertial_symbols, check_unique, inertial_names
from mbstudio.model.validation import BIDI_CONTROLS, MAGNITUDE_MAX

FUZZ = settings(
    max_examples=int(os.environ.get("MBSTUDIO_FUZZ_EXAMPLES", 150)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
BIDI = [chr(c) for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]
DOCUMENTS = {name: to_dict(samples.load(name)) for name in ("double_pendulum", "four_bar", "sla_suspension")}
FREE_TEXT = {"description"}  # free text, kept as written (escaped where it is written out)


def _places(node, path=()):
    """Every place of a string in a document: ('value', path) for a string value, ('key', path) for a key."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield "key", (*path, key)
            yield from _places(value, (*path, key))
    elif isinstance(node, list):
        for k, value in enumerate(node):
            yield from _places(value, (*path, k))
    elif isinstance(node, str):
        yield "value", path


def _replace(document, kind: str, path: tuple, text: str) -> None:
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    if kind == "value":
        parent[path[-1]] = text
    else:
        parent[text] = parent.pop(path[-1])


@st.composite
def odd_text_in_a_field(draw):
    name = draw(st.sampled_from(sorted(DOCUMENTS)))
    document = json.loads(json.dumps(DOCUMENTS[name]))
    places = list(_places(document))
    kind, path = draw(st.sampled_from(places))
    old = path[-1] if kind == "key" else _at(document, path)
    mark = draw(st.sampled_from(BIDI + SURROGATES))
    at = draw(st.integers(0, len(old)))
    return document, kind, path, old[:at] + mark + old[at:]


def _at(document, path):
    for step in path:
        document = document[step]
    return document


def _strings(node, free: bool = False):
    """(string, whether it is free text) of a document, keys included."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, free
            yield from _strings(value, free or key in FREE_TEXT)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value, free)
    elif isinstance(node, str):
        yield node, free


@FUZZ
@given(case=odd_text_in_a_field())
def test_a_surrogate_or_bidirectional_control_in_any_text_field_is_refused_or_kept_in_free_text(case):
    """Whatever field it is put in: the model is refused with a ModelError, or it loads and only free text (a
    description) holds it, and it is written back and read again as it was."""
    document, kind, path, text = case
    _replace(document, kind, path, text)
    try:
        model = loads(json.dumps(document))
    except ModelError:
        return
    written = to_dict(model)
    for string, free in _strings(written):
        odd = any(c in string for c in BIDI) or any("\ud800" <= c <= "\udfff" for c in string)
        assert free or not odd, f"{string!r} kept outside free text ({path})"
    assert to_dict(loads(dumps(model))) == written


# numbers Python reads (no integer with a leading zero, which it refuses as it is): 1_0, 2_5.0_1, 0.5_0
NUMBER_WITH_UNDERSCORE = st.from_regex(
    r"\A[1-9][0-9]*(_[0-9]+)+(\.[0-9]+)?\Z|\A[0-9]+\.[0-9]+(_[0-9]+)+\Z", fullmatch=True
)
NUMBER = st.from_regex(r"\A(0|[1-9][0-9]{0,5})(\.[0-9]{1,6})?([eE][+-]?[0-9]{1,2})?\Z", fullmatch=True)


@FUZZ
@given(number=NUMBER_WITH_UNDERSCORE, other=NUMBER, operator=st.sampled_from(["+", "-", "*", "/"]), left=st.booleans())
@example(number="1_0", other="30", operator="/", left=True)
@example(number="0.5_0", other="1", operator="*", left=True)
def test_a_number_with_an_underscore_is_refused_wherever_it_stands(number, other, operator, left):
    text = f"{number} {operator} {other}" if left else f"{other} {operator} {number}"
    with pytest.raises(ModelError, match="with an underscore"):
        parse(text)


@FUZZ
@given(number=NUMBER)
def test_a_number_without_one_is_read_as_written(number):
    assert evaluate(number, float, {}, {}) == float(number)


# ------------------------------------------------------------------------------------------ MJCF

SEGMENTS = ["..", ".", "sub", "deeper", "model"]
ELEMENTS = [
    ("include", "file", None),
    ("mesh", "file", "asset"),
    ("texture", "file", "asset"),
    ("hfield", "file", "asset"),
    ("texture", "fileright", "asset"),
]


@st.composite
def mjcf_references(draw):
    """An MJCF file naming up to three files, by paths made of '..', '.', folder names (and perhaps absolute),
    and perhaps a compiler's mesh folder."""
    references = []
    for _ in range(draw(st.integers(1, 3))):
        parts = draw(st.lists(st.sampled_from(SEGMENTS), max_size=4))
        name = "/".join([*parts, draw(st.sampled_from(["x.xml", "x.stl"]))])
        references.append((draw(st.sampled_from(ELEMENTS)), "/" + name if draw(st.booleans()) and not parts else name))
    meshdir = draw(st.none() | st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3).map("/".join))
    return references, meshdir


def _outside(folder: str, bases: list[str], name: str) -> bool:
    """The rule, independently: absolute, or a place it names from one of `bases` is out of `folder`."""
    if os.path.isabs(name):
        return True
    places = [os.path.normpath(os.path.join(base, name)) for base in bases]
    return any(place != folder and not place.startswith(folder + os.sep) for place in places)


@FUZZ
@given(case=mjcf_references())
@example(case=([(("include", "file", None), "/etc/passwd")], None))
@example(case=([(("mesh", "file", "asset"), "../outside/secret.stl")], None))
def test_mjcf_references_are_refused_exactly_when_they_leave_the_folder(tmp_path_factory, case):
    from mbstudio.io.mjcf_import import confine_files

    pytest.importorskip("lxml")
    references, meshdir = case
    root = Path(os.path.realpath(tmp_path_factory.mktemp("mjcf")))
    folder = root / "model"
    (folder / "sub" / "deeper").mkdir(parents=True)
    head = f'<compiler meshdir="{meshdir}"/>' if meshdir is not None else ""
    assets = "".join(
        f'<{tag} name="a{k}" {attribute}="{name}"/>' for k, ((tag, attribute, parent), name) in enumerate(references)
        if parent
    )  # fmt: skip
    includes = "".join(f'<include file="{name}"/>' for (tag, _, parent), name in references if not parent)
    path = folder / "model.xml"
    path.write_text(f"<mujoco>{head}{includes}<asset>{assets}</asset><worldbody/></mujoco>")
    base = str(folder)
    places = [base] + ([os.path.join(base, meshdir)] if meshdir is not None else [])
    expected = (meshdir is not None and _outside(base, [base], meshdir)) or any(
        _outside(base, [base] if not parent else places, name) for (_, _, parent), name in references
    )
    if any(not parent for (_, _, parent), _ in references) and meshdir is not None:  # includes are checked under it too
        expected = expected or any(_outside(base, places, name) for (_, _, parent), name in references if not parent)
    try:
        confine_files(path)
    except ModelError as refused:
        assert expected, str(refused)
        assert "names a file outside the model's folder" in str(refused)
        return
    assert not expected


# ------------------------------------------------------------------------------------------ time functions

TERMS = st.sampled_from(["t", "1", "2", "0.5", "1e3", "1e12", "10", "1e-6", "(1+t)"])
FUNCTIONS = st.sampled_from(["sin", "cos", "sqrt", "atan"])


@st.composite
def time_formulas(draw, depth: int = 3):
    if depth == 0 or draw(st.booleans()):
        return draw(TERMS)
    kind = draw(st.sampled_from(["binary", "power", "call"]))
    if kind == "call":
        return f"{draw(FUNCTIONS)}({draw(time_formulas(depth - 1))})"
    if kind == "power":
        return f"({draw(time_formulas(depth - 1))})**{draw(st.sampled_from(['2', '10', '1024', 't', '-1', '0.5']))}"
    operator = draw(st.sampled_from(["+", "-", "*", "/"]))
    return f"({draw(time_formulas(depth - 1))}) {operator} ({draw(time_formulas(depth - 1))})"


def _at_zero(formula: str) -> float | None:
    """The formula's value at t = 0 in float64, or None where it has none (a pole, an overflow, a domain)."""
    try:
        value = evaluate(formula, float, {"t": 0.0, "pi": math.pi}, {f: getattr(math, f) for f in FUNCTIONS_USED})
    except (ModelError, ArithmeticError, ValueError):
        return None
    return value if math.isfinite(value) else None


FUNCTIONS_USED = ("sin", "cos", "sqrt", "atan")


@FUZZ
@given(formula=time_formulas())
@example(formula="1e12 * t")
@example(formula="(1+t)**1024")
@example(formula="1 / t")
@example(formula="(t)**-1")
def test_a_formula_in_time_loads_only_with_a_value_at_the_start_within_the_bound(formula):
    """An actuator's formula that grows with time (1e12·t, (1+t)**1024) is bounded at load where it starts, t = 0,
    and during a run by the simulation; here: the load gives a model or a ModelError, and never keeps a formula
    that has no finite value within ±1e12 at t = 0."""
    document = json.loads(json.dumps(DOCUMENTS["double_pendulum"]))
    coordinate = document["joints"][0]["coordinates"][0]["name"]
    document["forces"] = [{"type": "actuator", "name": "drive", "coordinate": coordinate, "formula": formula}]
    try:
        model = loads(json.dumps(document))
    except ModelError:
        return
    value = _at_zero(formula)
    assert value is not None and abs(value) <= MAGNITUDE_MAX
    assert model.forces[0].formula == formula


# ------------------------------------------------------------------------------------------ inertial symbols

LABELS = st.lists(st.sampled_from(["1", "x1", "y", "x", "2", "z2", "xx1", "mx1", "a", "y2", "zz"]), unique=True)
OTHER_NAMES = st.sampled_from(["mx1", "m1", "Ixx1", "q", "mxx1", "my", "Izzz2", "mz2", "mx", "Iyy", "mzz", "Ixxa"])


def _listed(labels, before, after):
    """The rule, as it was checked: every name listed, in order."""
    inertial = [(n, f"body '{b}' (inertial symbol {n})") for b in labels for n in inertial_names(b)]
    try:
        check_unique([*before, *inertial, *after])
    except ModelError as exc:
        return str(exc)
    return None


@FUZZ
@given(labels=LABELS, before=st.lists(OTHER_NAMES, unique=True, max_size=3), after=st.lists(OTHER_NAMES, max_size=3))
def test_inertial_symbols_are_checked_as_if_every_one_were_listed(labels, before, after):
    before_pairs = [(n, f"coordinate '{n}'") for n in before]
    after_pairs = [(n, f"force '{n}'") for n in after]
    try:
        check_inertial_symbols(labels, check_unique(before_pairs), after_pairs)
        found = None
    except ModelError as exc:
        found = str(exc)
    assert found == _listed(labels, before_pairs, after_pairs)


def test_the_bidirectional_controls_refused_are_those_listed():
    import re

    refused = re.compile(f"[{BIDI_CONTROLS}]")
    assert all(refused.fullmatch(c) for c in BIDI)
    assert not refused.search("abc ש ب é — ∑")
