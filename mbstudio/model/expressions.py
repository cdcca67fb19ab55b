"""Geometric expressions: numbers or strings such as "-(D12 + D13)" in named parameters.

An expression is parsed once into a Python AST restricted to arithmetic, parameter names, `pi` and a few
functions, then evaluated over a scalar back-end (float, mpmath at a given precision, or sympy), so the
same document gives float64, variable-precision and symbolic geometry.
"""

from __future__ import annotations

import ast
import math
import operator
import warnings
from collections.abc import Callable, Mapping
from functools import lru_cache

import numpy as np

from .errors import ModelError

FUNCTIONS = ("sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2")
_ARITY = {"atan2": 2}  # the others take one argument
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}

Expr = float | int | str


@lru_cache(maxsize=4096)
def parse(text: str) -> ast.expr:
    """Parse and check an expression string; raise ModelError naming the offending piece."""
    try:
        with warnings.catch_warnings():  # "2and 3" warns (invalid decimal literal): an error here, not noise
            warnings.simplefilter("error", SyntaxWarning)
            tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, SyntaxWarning, ValueError) as exc:
        raise ModelError(
            "expression",
            "is not valid arithmetic",
            text,
            "numbers, parameter names, + - * / ** and sqrt, sin, cos, ...",
        ) from exc
    except (RecursionError, MemoryError):  # the parser's answer to very deep nesting
        raise ModelError("expression", "is nested too deeply", text, "a simpler expression") from None
    for node in ast.walk(tree):
        allowed = (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call, ast.Load, ast.UAdd, ast.USub, *_BINARY)
        if not isinstance(node, allowed):
            raise ModelError(
                "expression",
                f"uses {type(node).__name__}, which is not allowed",
                text,
                "numbers, parameter names, + - * / ** and sqrt, sin, cos, ...",
            )
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool) or not isinstance(node.value, int | float)):
            raise ModelError("expression", "contains a non-numeric constant", text, "numbers")
        if isinstance(node, ast.Constant) and "_" in (ast.get_source_segment(text.strip(), node) or ""):
            # Python reads 1_0 as 10; no other reader of the file (a person, C, LaTeX, JSON) does
            raise ModelError(
                "expression",
                f"writes the number '{ast.get_source_segment(text.strip(), node)}' with an underscore",
                text,
                "numbers written with digits, one decimal point and an exponent (1e-3), without '_'",
            )
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS and not node.keywords
        ):
            raise ModelError("expression", "calls an unknown function", text, ", ".join(FUNCTIONS))
        if isinstance(node, ast.Call) and len(node.args) != _ARITY.get(node.func.id, 1):
            # checked here, as back-ends answer differently (CasADi's atan2(0) returns NotImplemented)
            raise ModelError(
                "expression",
                f"cannot evaluate {node.func.id} here: it takes {_ARITY.get(node.func.id, 1)} argument(s), "
                f"not {len(node.args)}",
                text,
                "sqrt(x), sin(x), ..., atan2(y, x)",
            )
    _check_size(tree, text)
    return tree


# Bounds on what one expression may ask of exact and variable-precision arithmetic, checked before sympy or
# mpmath sees it: "(1/3)**100000000" is a rational of 48 million digits in sympy.
MAX_LENGTH = 1000
MAX_NODES = 400
MAX_POWER = 1024  # the product of the constant exponents along any chain of nested powers


def _check_size(tree: ast.expr, text: str) -> None:
    if len(text) > MAX_LENGTH or sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ModelError(
            "expression", "is too long", f"{text[:40]}…", f"at most {MAX_LENGTH} characters and {MAX_NODES} terms"
        )
    if _power(tree) > MAX_POWER:
        raise ModelError(
            "expression",
            "raises to too high a power",
            text,
            f"constant exponents whose product along nested powers is at most {MAX_POWER}",
        )


def _power(node: ast.AST) -> float:
    """The largest product of constant exponents (in magnitude) along a chain of nested powers below node."""
    inner = max((_power(child) for child in ast.iter_child_nodes(node)), default=1.0)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        exponent = _constant(node.right)
        return max(1.0, abs(exponent)) * _power(node.left) if exponent is not None else inner
    return inner


def _too_high(exponent) -> bool:
    """An exponent whose value is known (a number in any back-end) and beyond MAX_POWER in magnitude; a
    symbol's power stays symbolic and costs nothing."""
    try:
        return abs(float(exponent)) > MAX_POWER
    except (TypeError, ValueError):
        return False


def _constant(node: ast.AST) -> float | None:
    """The value of an exponent written with numbers only (no names), else None."""
    if any(isinstance(n, ast.Name) and n.id != "pi" for n in ast.walk(node)):
        return None
    try:
        return float(_eval(node, "", float, {"pi": math.pi}, {}))
    except (ArithmeticError, ModelError):  # float arithmetic overflows at once where exact arithmetic would not
        return math.inf


def names(value: Expr) -> set[str]:
    """Parameter names an expression uses (functions and `pi` excluded)."""
    return set(_names(value)) if isinstance(value, str) else set()


@lru_cache(maxsize=4096)
def _names(value: str) -> frozenset[str]:
    """`names` of a text, kept: a run asks for its time functions' names each time (walking the tree: 27 µs)."""
    tree = parse(value)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return frozenset({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called - {"pi"})


def evaluate(
    value: Expr, scalar: Callable[[object], object], symbols: Mapping[str, object], functions: Mapping[str, Callable]
) -> object:
    """Evaluate `value` with `scalar(number)` for literals, `symbols[name]` for names (and "pi")."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ModelError("expression", "must be a number or an expression string", value)
    try:
        if not isinstance(value, str):
            return scalar(value)
        return _eval(parse(value), value, scalar, symbols, functions)
    except RecursionError:
        raise ModelError("expression", "is nested too deeply", value, "a simpler expression") from None
    except (OverflowError, ZeroDivisionError) as exc:
        raise ModelError("expression", f"cannot be evaluated: {exc}", value, "a finite real number") from None


def _eval(node, text, scalar, symbols, functions):
    if isinstance(node, ast.Constant):
        return scalar(node.value)
    if isinstance(node, ast.Name):
        if node.id not in symbols:
            raise ModelError(
                "expression",
                f"uses the undefined parameter '{node.id}'",
                text,
                "a name listed in the model's parameters",
            )
        return symbols[node.id]
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, text, scalar, symbols, functions)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        a = _eval(node.left, text, scalar, symbols, functions)
        b = _eval(node.right, text, scalar, symbols, functions)
        if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and isinstance(node.right.value, int):
            b = node.right.value  # keep integer powers exact in every number system (0.5 stays scalar(0.5))
        if isinstance(node.op, ast.Pow) and _too_high(b):
            raise ModelError("expression", "raises to too high a power", text, f"exponents up to {MAX_POWER}")
        if isinstance(node.op, ast.Div) and _numeric_zero(b):
            raise ModelError("expression", "divides by zero", text)
        return _real(_BINARY[type(node.op)](a, b), text)
    args = [_eval(arg, text, scalar, symbols, functions) for arg in node.args]
    if node.func.id == "atan2" and len(args) == 2 and all(_numeric_zero(a) for a in args):
        # IEEE float says 0 and sympy NaN: no number system answers, as the point at the origin has no angle
        raise ModelError("expression", "cannot evaluate atan2 here: atan2(0, 0) is no angle", text)
    if node.func.id == "atan2" and len(args) == 2 and _numeric_zero(args[0]):
        # a zero y may be IEEE's -0 (-(0)**2), which puts atan2(y, -1) at -π in float, MPFR and CasADi and at π in
        # sympy, which has no signed zero: every number system takes it as +0
        args[0] = scalar(0)
    try:
        result = functions[node.func.id](*args)
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        raise ModelError("expression", f"cannot evaluate {node.func.id} here: {exc}", text) from exc
    return _real(result, text)


def _numeric_zero(value) -> bool:
    """A divisor that is the number zero in its back-end (float, MPFR, mpmath, a sympy number, a CasADi constant).
    An expression of a symbol (the time t traced by CasADi) is zero at some of its values at most, and has no
    truth value to ask: refusing it, or asking, would refuse 1/(1+t)."""
    zero = value == 0
    if isinstance(zero, bool | np.bool_):  # numbers, and sympy, whose == compares structure
        return bool(zero)
    is_zero = getattr(value, "is_zero", None)  # CasADi: true only of the constant 0
    return bool(is_zero()) if callable(is_zero) else False


def _real(result, text):
    """Refuse what is not a finite real number, in every number system alike: a complex result (float64's
    negative number to a fractional power), NaN (MPFR's and CasADi's answer to sqrt(-1) or asin(2)), a sympy
    number off the real line (I, zoo, asin(2)), and infinity (an overflow). An expression of symbols passes: it
    has no value yet."""
    if _not_real(result):
        raise ModelError(
            "expression",
            "is not a real number",
            text,
            "a non-negative base for fractional powers and arguments inside each function's domain",
        )
    if _infinite(result):
        raise ModelError("expression", "evaluates to a non-finite number", text, "a finite number")
    return result


def _not_real(value) -> bool:
    if isinstance(value, complex) or getattr(value, "imag", 0) != 0:
        return True
    if getattr(value, "is_number", None) is not None:  # sympy: a number must compare with others
        return bool(value.is_number) and not value.is_comparable
    return _is_true(value != value)  # NaN: floats, MPFR and mpmath numbers


def _infinite(value) -> bool:
    if getattr(value, "is_number", None) is not None:
        return value.is_finite is False
    return _is_true(value == math.inf) or _is_true(value == -math.inf)  # no abs(): CasADi before 3.7.1 has none


def _is_true(comparison) -> bool:
    """A comparison's answer when it is a truth value (an expression of CasADi symbols has none: False)."""
    return isinstance(comparison, bool | np.bool_) and bool(comparison)
