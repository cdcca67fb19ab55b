"""Bad MJCF input never crashes the import (hypothesis): our test models with attributes replaced by odd values,
elements dropped or duplicated, and equalities added between random bodies either import as a valid document or
are refused with a ModelError naming the file; never another exception. The same for the export of what imports."""

from __future__ import annotations

import contextlib
import copy
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbstudio.io.mjcf_export import mjcf_text
from mbstudio.io.mjcf_import import import_mjcf
from mbstudio.model import AssemblyError, ModelError

pytest.importorskip("mujoco")
HERE = Path(__file__).parent / "mjcf"
SOURCES = {name: ET.parse(HERE / name).getroot() for name in ("arm.xml", "four_bar.xml")}
FUZZ = settings(
    max_examples=int(os.environ.get("MBSTUDIO_FUZZ_EXAMPLES", 30)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ODD = ["", "nan", "inf", "-inf", "1e308", "-1", "0", "0 0 0", "1 2", "a b c", "1e-300 0 0", "0 0 0 0", "-1e12 3 1"]
ATTRIBUTES = ["pos", "quat", "euler", "axis", "range", "mass", "size", "fromto", "ref", "diaginertia", "damping"]
ATTRIBUTES += ["stiffness", "anchor", "polycoef", "gravity", "fullinertia", "type", "name", "density", "limited"]


@st.composite
def mutated(draw) -> str:
    root = copy.deepcopy(SOURCES[draw(st.sampled_from(sorted(SOURCES)))])
    elements = list(root.iter())
    for _ in range(draw(st.integers(1, 4))):
        element = draw(st.sampled_from(elements))
        action = draw(st.sampled_from(["set", "drop", "copy", "equality"]))
        if action == "set":
            element.set(draw(st.sampled_from(ATTRIBUTES)), draw(st.sampled_from(ODD) | st.text(max_size=12)))
        elif action == "drop":
            for parent in root.iter():
                if element in list(parent):
                    parent.remove(element)
                    break
        elif action == "copy" and element is not root:
            for parent in root.iter():
                if element in list(parent):
                    parent.append(copy.deepcopy(element))  # its text may hold what XML cannot
                    break
        else:
            bodies = [b.get("name") for b in root.iter("body") if b.get("name")]
            if len(bodies) >= 2:
                equality = root.find("equality") or ET.SubElement(root, "equality")
                kind = draw(st.sampled_from(["connect", "weld"]))
                pair = draw(st.permutations(bodies))[:2]
                attributes = {"body1": pair[0], "body2": pair[1]}
                if kind == "connect":
                    attributes["anchor"] = draw(st.sampled_from(ODD[5:]))
                ET.SubElement(equality, kind, attributes)
    return ET.tostring(root, encoding="unicode")


@FUZZ
@given(text=mutated())
def test_mutated_mjcf_imports_or_is_refused_by_name(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "model.xml"
    path.write_text(text)
    try:
        result = import_mjcf(path)
    except ModelError as exc:
        assert str(path) in str(exc) or "model.xml" in str(exc)
        return
    with contextlib.suppress(ModelError, AssemblyError):
        mjcf_text(result.model)


@FUZZ
@given(text=st.text(max_size=200) | st.sampled_from(["<mujoco>", "<mujoco><worldbody/></mujoco>", "<robot/>"]))
def test_text_that_is_not_mjcf_is_refused(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "model.xml"
    path.write_text(text)
    try:
        result = import_mjcf(path)
    except ModelError:
        return
    assert result.model.bodies == []  # an empty world imports as an empty document
