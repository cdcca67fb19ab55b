"""Scalar back-ends: the same kinematics and dynamics code runs in float64, MPFR (gmpy2) and sympy.

Algorithms work on numpy arrays with a leading batch axis. For float64 these are ordinary float arrays
(vectorised over many samples); for variable precision and symbolic work they are object arrays holding
MPFR numbers (gmpy2 `mpfr`) or sympy expressions, so numpy's elementwise arithmetic, `@` and `np.cross` do the work and
only the few operations below differ between number systems.
"""

from __future__ import annotations

import contextlib
import importlib
import math
from collections.abc import Iterator

import numpy as np

from ..model.expressions import FUNCTIONS


class _Imported:
    """A module imported when first used: sympy takes 0.6 s to import, gmpy2 and mpmath 0.05 s together, which
    every command paid at its start although only the symbolic and variable-precision back-ends need them."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module = None

    def __getattr__(self, attribute: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


sympy = _Imported("sympy")
gmpy2 = _Imported("gmpy2")
mpmath = _Imported("mpmath")


class Float64:
    """IEEE double precision, vectorised over the batch axis."""

    name = "float64"
    dtype = float
    digits = 15

    def __init__(self) -> None:
        self.functions = {name: getattr(math, name) for name in FUNCTIONS}

    def scalar(self, number: float) -> float:
        return float(number)

    def parameter(self, name: str, value: float) -> float:
        return float(value)

    def pi(self):
        return math.pi

    def sin(self, x):
        return np.sin(x)

    def cos(self, x):
        return np.cos(x)

    def cos_sin(self, x) -> tuple:
        return np.cos(x), np.sin(x)

    def sqrt(self, x):
        return np.sqrt(x)

    def tanh(self, x):
        return np.tanh(x)

    def asarray(self, x) -> np.ndarray:
        return np.asarray(x, dtype=float)

    def zeros(self, shape) -> np.ndarray:
        return np.zeros(shape)

    def solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Batched solve of a[k] x[k] = b[k]; b is (N, n) or (N, n, m)."""
        if b.ndim == a.ndim - 1:
            return np.linalg.solve(a, b[..., None])[..., 0]
        return np.linalg.solve(a, b)

    def tolerance(self, scale: float = 1.0) -> float:
        """Residual below which an iterative solution is converged at this precision."""
        return 1e-13 * scale

    def to_float(self, x) -> np.ndarray:
        return np.asarray(x, dtype=float)

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a @ b (a back-end may leave out products it knows to be zero)."""
        return a @ b

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        yield


class _ObjectArrays:
    """Shared by the back-ends whose arrays hold Python objects (mpfr, sympy expressions)."""

    dtype = object

    def __init__(self, lib) -> None:
        self.functions = {name: getattr(lib, name) for name in FUNCTIONS}
        self._sin, self._cos, self._sqrt, self._tanh = (
            np.frompyfunc(getattr(lib, f), 1, 1) for f in ("sin", "cos", "sqrt", "tanh")
        )
        self._zero = self.scalar(0)

    def sin(self, x):
        return self._sin(x)

    def cos(self, x):
        return self._cos(x)

    def cos_sin(self, x) -> tuple:
        return self._cos(x), self._sin(x)

    def sqrt(self, x):
        return self._sqrt(x)

    def tanh(self, x):
        return self._tanh(x)

    def zeros(self, shape) -> np.ndarray:
        out = np.empty(shape, dtype=object)
        out[...] = self._zero
        return out

    def solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Batched solve, one sample at a time in the entries' own arithmetic."""
        vector = b.ndim == a.ndim - 1
        rhs = b[..., None] if vector else b
        out = np.empty(rhs.shape, dtype=object)
        for k in range(a.shape[0]):
            out[k] = self._solve_one(a[k], rhs[k])
        return out[..., 0] if vector else out

    def to_float(self, x) -> np.ndarray:
        return np.asarray(x, dtype=object).astype(float)

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a @ b (a back-end may leave out products it knows to be zero)."""
        return a @ b

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        yield


class VariablePrecision(_ObjectArrays):
    """Shared by the variable-precision back-ends: `digits` significant digits, literals read as decimals,
    Gaussian elimination, and a Newton tolerance a few digits above the working precision."""

    def __init__(self, lib, digits: int) -> None:
        if digits < 15:
            raise ValueError(f"variable precision needs at least 15 digits (got {digits})")
        self.digits = digits
        super().__init__(lib)
        self._scalars = np.frompyfunc(self.scalar, 1, 1)

    def parameter(self, name: str, value: float):
        return self.scalar(value)

    def asarray(self, x) -> np.ndarray:
        arr = np.asarray(x, dtype=object)
        return self._scalars(arr).astype(object) if arr.ndim else self.scalar(arr.item())

    def _solve_one(self, a, b):
        return gauss_solve(a, b)

    def tolerance(self, scale: float = 1.0):
        return self.scalar(10) ** (5 - self.digits) * scale


class MultiPrecision(VariablePrecision):
    """MPFR (gmpy2) at a chosen number of significant digits; every literal is read as the decimal it is.

    numpy's elementwise loops call MPFR directly, several times faster per operation than mpmath's `mpf`
    (building W with mpmath took two thirds of a VP run). The binary precision is mpmath's for the same digits.
    Arithmetic rounds to the working precision only inside `context()`, as mpmath's does inside `workdps`.
    Results are `gmpy2.mpfr`: convert them with `as_mpf` for work in mpmath, whose own conversion of an
    mpfr is not exact."""

    name = "mp"

    def __init__(self, digits: int = 50) -> None:
        self.bits = mpmath.libmp.dps_to_prec(digits)
        super().__init__(gmpy2, digits)
        self._sin_cos = np.frompyfunc(gmpy2.sin_cos, 1, 2)

    def cos_sin(self, x) -> tuple:
        """Both at the cost of one: MPFR computes the sine and cosine together (half the trigonometry of the
        tree's rotations at 500 digits)."""
        sin, cos = self._sin_cos(x)
        return cos, sin

    def scalar(self, number) -> gmpy2.mpfr:
        """An mpfr at the working precision: a float as the shortest decimal that reads back as it (the number
        the user typed), an mpmath mpf exactly."""
        with gmpy2.context(precision=self.bits):
            if isinstance(number, float):
                return gmpy2.mpfr(repr(float(number)))  # float(): numpy 2 writes np.float64(x)
            if isinstance(number, mpmath.mpf):
                return mpf_to_mpfr(number)
            return gmpy2.mpfr(number)

    def pi(self):
        with gmpy2.context(precision=self.bits):
            return gmpy2.const_pi()

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        with gmpy2.context(precision=self.bits), mpmath.workdps(self.digits):
            yield


class MpmathPrecision(VariablePrecision):
    """mpmath `mpf` at a chosen number of digits: the pure-Python arithmetic MultiPrecision replaced, kept as
    an independent second library for the same numbers (tests compare the two; `mbstudio bench` times both)."""

    name = "mpmath"

    def __init__(self, digits: int = 50) -> None:
        super().__init__(mpmath, digits)

    def scalar(self, number) -> mpmath.mpf:
        with mpmath.workdps(self.digits):
            if isinstance(number, float):
                return mpmath.mpf(repr(number))
            if isinstance(number, gmpy2.mpfr):
                return mpfr_to_mpf(number)
            return mpmath.mpf(number)

    def pi(self):
        with mpmath.workdps(self.digits):
            return +mpmath.pi

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        with mpmath.workdps(self.digits):
            yield


def mpf_to_mpfr(x: mpmath.mpf) -> gmpy2.mpfr:
    """The mpfr equal to an mpmath mpf (exact when the precision holds its mantissa); non-finite refused."""
    sign, man, exp, _ = x._mpf_
    if not man:
        if x != 0:
            raise ValueError(f"{x} is not a finite number")
        return gmpy2.mpfr(0)
    return times_power_of_two(gmpy2.mpfr(-man if sign else man), exp)


def times_power_of_two(x: gmpy2.mpfr, exp: int) -> gmpy2.mpfr:
    """x · 2^exp, exact; gmpy2 before 2.2 takes only a non-negative shift in mul_2exp."""
    return gmpy2.mul_2exp(x, exp) if exp >= 0 else gmpy2.div_2exp(x, -exp)


def mpfr_to_mpf(x: gmpy2.mpfr) -> mpmath.mpf:
    """The mpmath mpf equal to an mpfr, exactly. mpmath's own conversion of an mpfr is not exact: through a
    decimal string for mpf(x), through a float when an mpf meets an mpfr in arithmetic."""
    man, exp = x.as_mantissa_exp()
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))  # exact, whatever mpmath's precision


def as_mpf(a) -> np.ndarray:
    """An array of variable-precision results (mpfr) as mpmath mpf, exactly, for work in mpmath; other entries
    (mpf already) as they are."""
    a = np.asarray(a, dtype=object)
    out = [mpfr_to_mpf(x) if isinstance(x, gmpy2.mpfr) else x for x in a.ravel()]
    return np.array(out, dtype=object).reshape(a.shape)


class Symbolic(_ObjectArrays):
    """sympy expressions; parameters become symbols of the same name, literals exact rationals."""

    name = "sympy"
    digits = None

    def __init__(self, numeric_parameters: bool = False) -> None:
        self.numeric_parameters = numeric_parameters
        super().__init__(sympy)
        self.functions["atan2"] = _real_atan2

    def scalar(self, number):
        return sympy.Rational(repr(number)) if isinstance(number, float) else sympy.Integer(number)

    def parameter(self, name: str, value: float):
        return self.scalar(value) if self.numeric_parameters else sympy.Symbol(name, real=True)

    def pi(self):
        return sympy.pi

    def asarray(self, x) -> np.ndarray:
        return np.asarray(x, dtype=object)

    def _solve_one(self, a, b):
        return np.array(sympy.Matrix(a).LUsolve(sympy.Matrix(b)), dtype=object)

    def tolerance(self, scale: float = 1.0):
        return 0


Backend = Float64 | MultiPrecision | MpmathPrecision | Symbolic


def positive(x):
    """max(x, 0), elementwise, in any back-end."""
    numeric = isinstance(x, np.ndarray) and x.dtype.kind != "O"
    return (x + (np.abs(x) if numeric else _element_abs(x))) / 2


# |x| of each object: CasADi before 3.8 gives its symbols fabs() but no abs()
_element_abs = np.frompyfunc(lambda e: e.fabs() if hasattr(e, "fabs") else abs(e), 1, 1)


def _real_atan2(y, x):
    """sympy's atan2, kept unevaluated where sympy would write it as -I*log(...): it does so for numbers whose
    sign it cannot decide (atan2(2, tan(sin(1)))), whose value then carries an imaginary part of 1e-249."""
    value = sympy.atan2(y, x)
    return sympy.atan2(y, x, evaluate=False) if value.has(sympy.I) else value


def gauss_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve a x = b (b: n x m) by Gaussian elimination with partial pivoting, in the entries' own arithmetic."""
    n = a.shape[0]
    m = [list(a[i]) + list(b[i]) for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if m[pivot][col] == 0:
            raise ZeroDivisionError("singular matrix")
        m[col], m[pivot] = m[pivot], m[col]
        inv = 1 / m[col][col]
        for r in range(col + 1, n):
            f = m[r][col] * inv
            if f != 0:
                row, prow = m[r], m[col]
                for c in range(col, len(row)):
                    row[c] -= f * prow[c]
    x = [[None] * b.shape[1] for _ in range(n)]
    for r in range(n - 1, -1, -1):
        for c in range(b.shape[1]):
            s = m[r][n + c]
            for k in range(r + 1, n):
                s -= m[r][k] * x[k][c]
            x[r][c] = s / m[r][r]
    return np.array(x, dtype=object)


def make_backend(precision: str | int | None = None) -> Backend:
    """'float64' (default), an integer number of digits for MPFR, or 'sympy'."""
    if precision in (None, "float64", "dp", 15):
        return Float64()
    if precision in ("sympy", "symbolic"):
        return Symbolic()
    return MultiPrecision(int(precision))
