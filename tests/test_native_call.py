"""The call path from Python into compiled functions (numerics/native_call.py): the extension's `name`, `name_into`
and `name_rows` give CasADi's own values, the fallback (FastCall) gives the same with the same convention, and
arguments that do not fit are refused with a message before the C reads them."""

from __future__ import annotations

import shutil

import casadi
import numpy as np
import pytest

from mbstudio.numerics.compiled import native_functions
from mbstudio.numerics.native_call import calls

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def _function() -> casadi.Function:
    """(t, x (3)) -> (y (3), M (2, 3) in column order, an empty output): every kind of argument the engine has."""
    t, x = casadi.SX.sym("t"), casadi.SX.sym("x", 3)
    y = casadi.vertcat(casadi.sin(t) * x[0], x[1] * x[2], t + x[2])
    M = casadi.horzcat(x[:2], t * x[1:], casadi.vertcat(x[0] * x[1], 1.0))
    return casadi.Function("probe", [t, x], [y, M, casadi.SX(0, 1)])


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The extension's calls and the fallback's, for the same function."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MBSTUDIO_CACHE", str(tmp_path_factory.mktemp("cache")))
        compiled = native_functions([_function()])
    if not compiled.compiled or compiled.calls["probe"].__class__.__name__ == "function":
        pytest.skip("no extension here (Python's or numpy's headers missing)")
    return {"extension": compiled.calls, "fallback": calls({"probe": _function()})}


def _expected(t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y, M, _ = _function()(t, x)
    return np.asarray(y).ravel(), np.asarray(M)


STATES = np.random.default_rng(1).uniform(-2, 2, (7, 4))


@pytest.mark.parametrize("route", ["extension", "fallback"])
def test_new_arrays_and_the_callers_buffers_hold_casadis_values(both, route):
    call, into = both[route]["probe"], both[route]["probe_into"]
    for t, *x in STATES:
        x = np.array(x)
        y, M = _expected(t, x)
        got_y, got_M, empty = call(t, x)
        assert got_y.shape == (3,) and got_M.shape == (2, 3) and empty.shape == (0,)
        np.testing.assert_array_equal(got_y, y)
        np.testing.assert_array_equal(got_M, M)
        out_y, out_M = np.full(3, np.nan), np.full((2, 3), np.nan, order="F")
        into(np.array([t]), x, out_y, out_M, np.empty(0))
        np.testing.assert_array_equal(out_y, y)
        np.testing.assert_array_equal(out_M, M)


@pytest.mark.parametrize("route", ["extension", "fallback"])
def test_rows_evaluate_every_row_as_one_call_would(both, route):
    rows = both[route]["probe_rows"]
    t, x = np.ascontiguousarray(STATES[:, 0]), np.ascontiguousarray(STATES[:, 1:])
    out_y, out_M = np.full((len(t), 3), np.nan), np.full((len(t), 6), np.nan)
    rows(t, x, out_y, out_M, np.empty((len(t), 0)))
    for k in range(len(t)):
        y, M = _expected(t[k], x[k])
        np.testing.assert_array_equal(out_y[k], y)
        np.testing.assert_array_equal(out_M[k].reshape(2, 3, order="F"), M)
    # an input of one row's size (or a float for a one-number input) is held for every row
    held_y = np.full((len(t), 3), np.nan)
    rows(0.5, x[2], held_y, np.empty((len(t), 6)), np.empty(0))
    for k in range(len(t)):
        np.testing.assert_array_equal(held_y[k], _expected(0.5, x[2])[0])


@pytest.mark.parametrize("route", ["extension", "fallback"])
def test_rows_are_refused_in_memory_that_is_not_row_after_row(both, route):
    rows = both[route]["probe_rows"]
    t, x = STATES[:, 0].copy(), STATES[:, 1:].copy()
    with pytest.raises(ValueError, match="probe_rows"):  # column order would mix the rows
        rows(t, x, np.empty((len(t), 3), order="F"), np.empty((len(t), 6)), np.empty(0))
    with pytest.raises(ValueError, match="probe_rows"):  # a row of 4 numbers where y has 3
        rows(t, x, np.empty((len(t), 4)), np.empty((len(t), 6)), np.empty(0))


def test_arguments_that_do_not_fit_are_refused_by_name(both):
    call, into = both["extension"]["probe"], both["extension"]["probe_into"]
    x = np.arange(3.0)
    with pytest.raises(ValueError, match="probe: argument 2 takes 3 float64 values"):
        call(0.1, np.arange(4.0))
    with pytest.raises(ValueError, match="probe: argument 2 takes 3 float64 values"):
        call(0.1, np.arange(3, dtype=np.float32))
    with pytest.raises(ValueError, match="probe: argument 2"):
        call(0.1, x.astype(">f8"))  # another byte order
    with pytest.raises(ValueError, match="probe: argument 2 takes 3 float64 values .* not numpy.ndarray"):
        call(0.1, np.arange(6.0)[::2])  # not contiguous
    with pytest.raises(TypeError, match="probe_into takes 5 arguments"):
        into(0.1, x, np.empty(3))
    readonly = np.empty(3)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="probe_into: output 1 takes 3 float64 values"):
        into(0.1, x, readonly, np.empty((2, 3), order="F"), np.empty(0))
    assert float(call(0.1, memoryview(x))[0][2]) == 2.1  # any float64 buffer serves
