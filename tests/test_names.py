"""Text from a model is data, never code: the exact inputs of the audit, refused at
load with a message naming the place, or carried into generated Python and LaTeX only as escaped text."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time

import numpy as np
import pytest

from mbstudio.cli import main
from mbstudio.dynamics import mass_matrix
from mbstudio.gui.script import model_script
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, loads
from mbstudio.model.expressions import parse


def text(document: dict) -> str:
    return json.dumps(document)


def refused(document: dict, *parts: str) -> str:
    with pytest.raises(ModelError) as err:
        loads(text(document))
    for part in parts:
        assert part in str(err.value), str(err.value)
    return str(err.value)


def payload(canary) -> str:
    """One line that would create the canary file if it ever ran as Python."""
    return f'x"""; import pathlib; pathlib.Path({str(canary)!r}).touch(); """'


def test_a_model_name_that_breaks_out_of_a_docstring_is_refused_with_a_newline(four_bar):
    doc = four_bar()
    doc["name"] = 'x"""\nimport os; os.system("touch /tmp/owned")\n"""'
    refused(doc, "name", "one line of printable text")


def test_the_exported_module_holds_the_model_name_only_as_text(four_bar, tmp_path):
    canary = tmp_path / "canary"
    doc = four_bar()
    doc["name"] = payload(canary)
    (tmp_path / "m.mbs").write_text(text(doc))
    assert main(["eom", str(tmp_path / "m.mbs"), "--python", str(tmp_path / "out.py"), "--no-simplify"]) == 0
    spec = importlib.util.spec_from_file_location("generated_eom", tmp_path / "out.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert not canary.exists()
    assert doc["name"] in module.__doc__  # the name is there, as the text it is
    q = [1.0, -0.8, 1.9]
    np.testing.assert_allclose(module.mass_matrix(q), mass_matrix(Mechanism(loads(text(doc))), q)[0], rtol=1e-12)


def test_the_latex_export_keeps_the_model_name_inside_its_comment(four_bar, tmp_path):
    doc = four_bar()
    doc["name"] = r"x \input{/etc/passwd} \write18{touch owned}"
    (tmp_path / "m.mbs").write_text(text(doc))
    assert main(["eom", str(tmp_path / "m.mbs"), "--latex", str(tmp_path / "out.tex"), "--no-simplify"]) == 0
    lines = (tmp_path / "out.tex").read_text().splitlines()
    assert all(line.startswith("%") for line in lines if "input" in line or "write18" in line)


def test_save_as_script_holds_the_model_name_only_as_text(four_bar, tmp_path):
    canary = tmp_path / "canary"
    doc = four_bar()
    doc["name"] = payload(canary)
    model = loads(text(doc))
    script = tmp_path / "rebuild.py"
    script.write_text(model_script(model, str(tmp_path / "rebuilt.mbs")))
    subprocess.run([sys.executable, str(script)], check=True, cwd=tmp_path, timeout=60)
    assert not canary.exists()
    assert loads((tmp_path / "rebuilt.mbs").read_text()).name == doc["name"]


def test_bodies_1_and_y1_would_both_own_my1(four_bar):
    doc = four_bar()
    doc["bodies"][1]["label"] = "y1"
    for joint in doc["joints"]:
        for side in ("parent", "child"):
            joint[side] = "y1" if joint[side] == "2" else joint[side]
    refused(doc, "body 'y1'", "my1", "body '1'")


def test_a_coordinate_named_like_a_parameter_is_refused(four_bar):
    doc = four_bar()
    doc["joints"][1]["coordinates"][0]["name"] = "L1"
    refused(doc, "coordinate 'L1'", "parameter 'L1'")


@pytest.mark.parametrize("name", ["lambda", "numpy", "_p", "t", "class", "double", "q"])
def test_a_parameter_named_like_a_word_of_the_generated_code_is_refused(four_bar, name):
    doc = four_bar()
    doc["parameters"].append({"name": name, "value": 1.0})
    refused(doc, f"parameter '{name}'", "invalid name")


@pytest.mark.parametrize("name", ["lambda", "numpy", "_p"])
def test_a_coordinate_named_like_a_word_of_the_generated_code_is_refused(four_bar, name):
    doc = four_bar()
    doc["joints"][0]["coordinates"][0]["name"] = name
    doc["independent_coordinates"] = [name]
    refused(doc, f"coordinate '{name}'", "invalid name")


def test_a_force_name_that_would_split_a_csv_header_is_refused(four_bar):
    doc = four_bar()
    doc["forces"] = [{"name": "motor,1\nx", "type": "actuator", "coordinate": "theta1", "formula": "1"}]
    refused(doc, "force", "invalid name")


def test_a_velocity_symbol_is_taken_by_its_coordinate(four_bar):
    doc = four_bar()
    doc["parameters"].append({"name": "d_theta1", "value": 1.0})
    refused(doc, "parameter 'd_theta1'", "velocity of coordinate 'theta1'")


def test_a_huge_power_is_refused_before_any_arithmetic(four_bar):
    doc = four_bar()
    doc["bodies"][0]["points"]["B"] = ["(1/3)**100000000", 0, 0]
    start = time.perf_counter()
    refused(doc, "point 'B'", "too high a power")
    assert time.perf_counter() - start < 5  # refused by reading it, not by trying
    doc["parameters"].append({"name": "N", "value": 1e8})
    doc["bodies"][0]["points"]["B"] = ["(1/3)**N", 0, 0]
    refused(doc, "too high a power")


def test_long_and_nested_powers_are_refused_but_ordinary_ones_pass():
    for ok in ("L**2", "x**0.5", "2**-3", "sqrt(2)**3", "x**(2*pi)", "(x**32)**32"):
        parse(ok)
    for bad in ("x**(9**9**9)", "((x**64)**64)", "+".join(["x"] * 500)):
        with pytest.raises(ModelError):
            parse(bad)
