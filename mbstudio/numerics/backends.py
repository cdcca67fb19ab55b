"""Scalar back-ends: the same kinematics and dynamics code runs in float64, mpmath and sympy.

Algorithms work on numpy arrays with a leading batch axis. For float64 these are ordinary float arrays
(vectorised over many samples); for variable precision and symbolic work they are object arrays holding
mpmath `mpf` or sympy expressions, so numpy's elementwise arithmetic, `@` and `np.cross` do the work and
only the few operations below differ between number systems.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import mpmath
import numpy as np
import sympy

from ..model.expressions import FUNCTIONS


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

    def sqrt(self, x):
        return np.sqrt(x)

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

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        yield


class _ObjectArrays:
    """Shared by the back-ends whose arrays hold Python objects (mpf, sympy expressions)."""

    dtype = object

    def __init__(self, lib) -> None:
        self.functions = {name: getattr(lib, name) for name in FUNCTIONS}
        self._sin, self._cos, self._sqrt = (np.frompyfunc(getattr(lib, f), 1, 1) for f in ("sin", "cos", "sqrt"))
        self._zero = self.scalar(0)

    def sin(self, x):
        return self._sin(x)

    def cos(self, x):
        return self._cos(x)

    def sqrt(self, x):
        return self._sqrt(x)

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

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        yield


class MultiPrecision(_ObjectArrays):
    """mpmath at a chosen number of significant digits; every literal is read as the decimal it is."""

    name = "mp"

    def __init__(self, digits: int = 50) -> None:
        if digits < 15:
            raise ValueError(f"variable precision needs at least 15 digits (got {digits})")
        self.digits = digits
        super().__init__(mpmath)
        self._mpf = np.frompyfunc(self.scalar, 1, 1)

    def scalar(self, number) -> mpmath.mpf:
        # repr(float) is the shortest decimal that reads back as that float: the number the user typed.
        if isinstance(number, float):
            return mpmath.mpf(repr(number))
        return mpmath.mpf(number)

    def parameter(self, name: str, value: float):
        return self.scalar(value)

    def pi(self):
        return +mpmath.pi

    def asarray(self, x) -> np.ndarray:
        arr = np.asarray(x, dtype=object)
        return self._mpf(arr).astype(object) if arr.ndim else self.scalar(arr.item())

    def _solve_one(self, a, b):
        return gauss_solve(a, b)

    def tolerance(self, scale: float = 1.0):
        return mpmath.mpf(10) ** (5 - self.digits) * scale

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        with mpmath.workdps(self.digits):
            yield


class Symbolic(_ObjectArrays):
    """sympy expressions; parameters become symbols of the same name, literals exact rationals."""

    name = "sympy"
    digits = None

    def __init__(self, numeric_parameters: bool = False) -> None:
        self.numeric_parameters = numeric_parameters
        super().__init__(sympy)

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


Backend = Float64 | MultiPrecision | Symbolic


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
    """'float64' (default), an integer number of digits for mpmath, or 'sympy'."""
    if precision in (None, "float64", "dp", 15):
        return Float64()
    if precision in ("sympy", "symbolic"):
        return Symbolic()
    return MultiPrecision(int(precision))
