"""CasADi's scalar arithmetic at a fifth of its Python cost while an engine is traced.

`x * y` on two SX goes through SWIG's overloaded `times`, which tries every signature in turn (numbers, DM, numpy
arrays: `shape` and array-priority checks in Python) before it reaches SX::binary: about 20 µs a product, most of
the time a 100-link chain's engine takes to trace (270 000 operations). `SX.binary(OP_MUL, x, y)` has one
signature and builds the same node (CasADi's `times` is `binary(OP_MUL, ...)`, and its simplifications, x * 1 -> x,
x - x -> 0, live in the node constructor both reach) in 3 µs, 7 µs with a float operand. While `faster_arithmetic()`
is entered, SX's operators take that path for an SX or float operand (an integer as the float it equals); any other
operand (an array, DM, MX, a numpy scalar) goes the usual way. The graph, its C and its numbers are the same
(tests/test_sx_operators.py compares an engine's generated C).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import casadi

_SX = casadi.SX
_DIRECT = (_SX, float)  # the operand types taken to SX.binary (exact types: no subclass, no numpy scalar)
_EXACT = 2**53  # an integer operand below this in magnitude is the same number as a float (the 0 that starts a sum)


def _binary(op: int, usual: Callable, reflected: bool) -> Callable:
    binary = _SX.binary

    def operator(x, y):
        if type(y) is int and -_EXACT < y < _EXACT:
            y = float(y)
        if type(y) in _DIRECT:
            return binary(op, y, x) if reflected else binary(op, x, y)
        return usual(x, y)

    return operator


def _negation() -> Callable:
    unary, negate = _SX.unary, casadi.OP_NEG

    def operator(x):
        return unary(negate, x)

    return operator


_OPERATORS = {
    "__add__": (casadi.OP_ADD, False),
    "__radd__": (casadi.OP_ADD, True),
    "__sub__": (casadi.OP_SUB, False),
    "__rsub__": (casadi.OP_SUB, True),
    "__mul__": (casadi.OP_MUL, False),
    "__rmul__": (casadi.OP_MUL, True),
    "__truediv__": (casadi.OP_DIV, False),
    "__rtruediv__": (casadi.OP_DIV, True),
}
_lock = threading.Lock()
_entered = 0
_own: dict[str, Callable] = {}  # the operators SX defines itself (the others it inherits)


@contextlib.contextmanager
def faster_arithmetic() -> Iterator[None]:
    """SX's +, -, *, / and unary - through SX.binary / SX.unary while inside (counted: nested and concurrent
    entries restore the usual operators when the last one leaves)."""
    global _entered
    with _lock:
        if _entered == 0:
            _own.update({name: _SX.__dict__[name] for name in (*_OPERATORS, "__neg__") if name in _SX.__dict__})
            for name, (op, reflected) in _OPERATORS.items():
                setattr(_SX, name, _binary(op, getattr(_SX, name), reflected))
            _SX.__neg__ = _negation()
        _entered += 1
    try:
        yield
    finally:
        with _lock:
            _entered -= 1
            if _entered == 0:
                for name in (*_OPERATORS, "__neg__"):
                    if name in _own:
                        setattr(_SX, name, _own[name])
                    else:
                        delattr(_SX, name)
                _own.clear()
