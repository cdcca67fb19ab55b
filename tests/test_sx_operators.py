"""SX's operators through SX.binary while an engine is traced (numerics/sx_operators.py): the same graph, hence the
same C, as CasADi's own operators, and the usual operators back afterwards."""

from __future__ import annotations

import threading

import casadi
import numpy as np

from mbstudio import samples
from mbstudio.dynamics.engine import _trace, canonical_text
from mbstudio.numerics.sx_operators import faster_arithmetic


def _c_text(functions: list[casadi.Function], folder) -> str:
    generator = casadi.CodeGenerator("traced.c", {"with_header": False})
    for function in functions:
        generator.add(function)
    generator.generate(f"{folder}/")
    return (folder / "traced.c").read_text()


def test_an_engine_traced_faster_is_the_same_c(tmp_path):
    text = canonical_text(samples.load("sla_suspension"))  # loops, springs, dampers, stops: every kind of term
    usual = _c_text(_trace(text, None)[0], tmp_path)
    with faster_arithmetic():
        faster = _c_text(_trace(text, None)[0], tmp_path)
    assert faster == usual and len(usual) > 10_000


def test_every_operand_gives_what_the_usual_operators_give():
    x, y = casadi.SX.sym("x"), casadi.SX.sym("y")
    cases = [
        lambda: x * y + 2.0 * x - y / 3.0 - (1.5 - x) / y + x * 1.0 - (x - x),
        lambda: -x + (-(x * 0.0)),
        lambda: x * 2 + 3 - x / np.float64(2.0) + sum([x, y]) - 0 * y,  # integers; a numpy scalar: the usual path
        lambda: casadi.vertcat(x * np.array([1.0, 2.0])[0], (np.array([1.0, 2.0]) * x)[1]),
        lambda: casadi.SX([[1, 2], [3, 4]]) * x + casadi.DM([1, 2]).T @ casadi.vertcat(x, y),
    ]
    usual = [str(case()) for case in cases]
    with faster_arithmetic():
        faster = [str(case()) for case in cases]
    assert faster == usual
    assert isinstance(np.array([x, y], dtype=object) * 2.0, np.ndarray)  # numpy still broadcasts


def test_the_usual_operators_are_back_when_the_last_entry_leaves():
    before = {name: getattr(casadi.SX, name) for name in ("__add__", "__mul__", "__neg__", "__rtruediv__")}
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with faster_arithmetic():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    entered.wait(10)
    with faster_arithmetic():
        assert casadi.SX.__mul__ is not before["__mul__"]
    assert casadi.SX.__mul__ is not before["__mul__"]  # the other thread is still inside
    leave.set()
    thread.join()
    assert {name: getattr(casadi.SX, name) for name in before} == before
    assert "__mul__" not in casadi.SX.__dict__  # inherited again, not copied onto SX


def test_to_sx_gives_the_matrix_entry_by_entry_assignment_gives():
    from mbstudio.numerics.compiled import to_sx

    x = casadi.SX.sym("x", 3)
    entries = np.array([[x[0] * 2.0, 0.0, 1], [casadi.SX(0), x[1] - x[2], np.float64(0.5)]], dtype=object)
    for a in (entries, entries[:, 1], entries[:, :0], np.array([x[2]], dtype=object)):
        rows, cols = (a.shape[0], 1) if a.ndim == 1 else a.shape
        expected = casadi.SX(rows, cols)
        for i in range(rows):
            for j in range(cols):
                expected[i, j] = a[i] if a.ndim == 1 else a[i, j]
        built = to_sx(a)
        assert built.shape == (rows, cols) and built.is_dense()
        assert str(built) == str(casadi.densify(expected))
