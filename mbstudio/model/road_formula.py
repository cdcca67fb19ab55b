"""A road surface given as a formula z(x, y) in the model's expression language (docs/file-format.md, road): its
height and exact gradient, by evaluating the formula once on dual numbers a + a_x ε_x + a_y ε_y (forward-mode
differentiation; Griewank and Walther, "Evaluating Derivatives", 2008), over floats or the compiled engine's traced
symbols alike.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ModelError
from .expressions import evaluate

WHERE = "road.formula"


class Dual:
    """A value with its derivatives along x and y; the arithmetic of the expression language on it."""

    __slots__ = ("value", "dx", "dy")

    def __init__(self, value, dx=0.0, dy=0.0) -> None:
        self.value, self.dx, self.dy = value, dx, dy

    def chain(self, value, slope) -> Dual:
        """f(self) with f' = slope at self."""
        return Dual(value, slope * self.dx, slope * self.dy)

    def __add__(self, other):
        other = lift(other)
        return Dual(self.value + other.value, self.dx + other.dx, self.dy + other.dy)

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.value, -self.dx, -self.dy)

    def __pos__(self):
        return self

    def __sub__(self, other):
        return self + -lift(other)

    def __rsub__(self, other):
        return lift(other) + -self

    def __mul__(self, other):
        other = lift(other)
        a, b = self.value, other.value
        return Dual(a * b, a * other.dx + b * self.dx, a * other.dy + b * self.dy)

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = lift(other)
        quotient = self.value / other.value
        return Dual(
            quotient, (self.dx - quotient * other.dx) / other.value, (self.dy - quotient * other.dy) / other.value
        )

    def __rtruediv__(self, other):
        return lift(other) / self

    def __pow__(self, exponent):
        if isinstance(exponent, Dual):
            raise ModelError(WHERE, "has an exponent that depends on x or y", None, "a constant exponent")
        return self.chain(self.value**exponent, exponent * self.value ** (exponent - 1))

    def __rpow__(self, base):
        raise ModelError(WHERE, "has an exponent that depends on x or y", None, "a constant exponent")

    def __eq__(self, other):  # the expression language's checks for zero divisors, NaN and infinity
        return self.value == lift(other).value

    def __ne__(self, other):
        return self.value != lift(other).value

    __hash__ = None


def lift(a) -> Dual:
    return a if isinstance(a, Dual) else Dual(a)


def dual_functions(functions: dict) -> dict:
    """The expression language's functions on dual numbers, from the back-end's own (floats or traced)."""
    sqrt, sin, cos, tan = (functions[name] for name in ("sqrt", "sin", "cos", "tan"))

    def atan2(y, x):
        y, x = lift(y), lift(x)
        r2 = x.value * x.value + y.value * y.value
        value = functions["atan2"](y.value, x.value)
        return Dual(value, (x.value * y.dx - y.value * x.dx) / r2, (x.value * y.dy - y.value * x.dy) / r2)

    def one(f, slope):
        return lambda a: lift(a).chain(f(lift(a).value), slope(lift(a).value, f(lift(a).value)))

    return {
        "sqrt": one(sqrt, lambda a, v: 0.5 / v),
        "sin": one(sin, lambda a, v: cos(a)),
        "cos": one(cos, lambda a, v: -sin(a)),
        "tan": one(tan, lambda a, v: 1 + v * v),
        "asin": one(functions["asin"], lambda a, v: 1 / sqrt(1 - a * a)),
        "acos": one(functions["acos"], lambda a, v: -1 / sqrt(1 - a * a)),
        "atan": one(functions["atan"], lambda a, v: 1 / (1 + a * a)),
        "atan2": atan2,
    }


def formula_height_and_gradient(formula, symbols: dict, x, y, backend) -> tuple:
    """Height, ∂z/∂x and ∂z/∂y (N,) of the formula at positions x, y (N,) (floats, or traced symbols)."""
    functions = dual_functions(backend.functions)
    out = []
    for xi, yi in zip(x, y, strict=True):
        at = {**symbols, "x": Dual(xi, 1.0, 0.0), "y": Dual(yi, 0.0, 1.0)}
        z = lift(evaluate(formula, backend.scalar, at, functions))
        out.append((z.value, z.dx, z.dy))
    return tuple(backend.asarray([o[k] for o in out]) for k in range(3)) if out else (backend.zeros(0),) * 3


def check_formula(formula, symbols: dict) -> None:
    """The formula evaluates to a finite height with a finite gradient at the origin; a ModelError naming it."""
    if formula is None:
        return
    from ..numerics.backends import Float64

    try:
        got = formula_height_and_gradient(formula, {**symbols, "pi": math.pi}, [0.0], [0.0], Float64())
    except ModelError as error:
        raise ModelError(WHERE, error.problem, formula, error.expected) from None
    except (ValueError, ZeroDivisionError, OverflowError) as error:
        raise ModelError(WHERE, f"cannot be evaluated at x = y = 0 ({error})", formula) from None
    if not np.all(np.isfinite(np.asarray(got, float))):
        raise ModelError(WHERE, "is not finite at x = y = 0", formula, "a height z(x, y) in m, finite everywhere")
