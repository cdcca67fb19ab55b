"""The engine's C cut into units compiled in parallel, long-lived values kept in memory (numerics/translation_units.py):
the same bits as the C compiled whole, checked on a function small enough to compile in a moment by lowering the
thresholds."""

from __future__ import annotations

import shutil

import casadi
import numpy as np
import pytest

from mbstudio.numerics import translation_units as units
from mbstudio.numerics.compiled import native_functions

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def _long_lived() -> casadi.Function:
    """A recursion whose first values are used again at its end (as the articulated inertias are), and outputs."""
    x = casadi.SX.sym("x", 3)
    values = [casadi.sin(x[0]), casadi.cos(x[1]), x[2] * x[0]]
    for k in range(60):
        values.append(values[-1] * values[-2] - values[-3] / (1 + values[-1] ** 2) + 0.1 * k)
    late = [values[k] * values[-1 - k] for k in range(5)]
    return casadi.Function("long_lived", [x], [casadi.vertcat(*late), values[-1]])


def _generated(function: casadi.Function, folder) -> str:
    generator = casadi.CodeGenerator("long_lived.c", {"with_header": False})
    generator.add(function)
    generator.generate(f"{folder}/")
    return (folder / "long_lived.c").read_text()


def test_the_cut_library_gives_the_bits_of_the_whole_one(tmp_path, monkeypatch):
    function = _long_lived()
    rng = np.random.default_rng(0)
    states = rng.uniform(-1, 1, (20, 3))
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "whole"))
    whole = native_functions([function]).calls["long_lived"]
    expected = [np.concatenate([np.ravel(v) for v in whole(s)]) for s in states]

    monkeypatch.setattr(units, "SPLIT_CHARS", 0)
    monkeypatch.setattr(units, "SPAN", 3)
    monkeypatch.setattr(units, "PIECE", 20)  # pieces of 20 statements
    monkeypatch.setattr(units, "UNIT_CHARS", 1500)  # a few pieces per unit
    main, parts = units.translation_units(_generated(function, tmp_path))
    pieces = main.count("  mbpiece_f0_")  # the calls of the function's pieces, in order
    assert pieces > 4 and 1 < len(parts) < pieces  # cut into pieces, grouped into units
    assert all("s[" in part for part in parts)  # values used across pieces kept in memory
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "cut"))
    native = native_functions([function])
    assert native.compiled
    cut = [np.concatenate([np.ravel(v) for v in native.calls["long_lived"](s)]) for s in states]
    np.testing.assert_array_equal(cut, expected)
    reference = [np.concatenate([np.ravel(np.asarray(v)) for v in function(s)]) for s in states]
    np.testing.assert_allclose(cut, reference, rtol=1e-14, atol=1e-14)  # and CasADi's own evaluation


def test_code_that_is_not_casadis_straight_line_form_is_left_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(units, "SPLIT_CHARS", 0)
    assert units.translation_units("int main(void) { return 0; }\n") == ("int main(void) { return 0; }\n", [])
    x = casadi.MX.sym("x", 2)
    inner = _long_lived()
    outer = casadi.Function("long_lived", [x], [inner(casadi.vertcat(x, 1.0))[0] * 2])  # a call: not straight-line
    text = _generated(outer, tmp_path)
    main, parts = units.translation_units(text)
    assert len(parts) == 1 and "casadi_f1(" in main  # the scalar graph is cut, its MX caller kept whole
    assert "mbpiece_f1_0(arg, res, s);" in main and "mbpiece_f0" not in main
