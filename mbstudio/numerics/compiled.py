"""The fourth number system (DESIGN.md principle 1): CasADi SX symbols in numpy object arrays.

Running the same kinematics and dynamics code once on symbolic coordinates records an expression graph, which
CasADi evaluates natively (`casadi.Function`) one state at a time far faster than numpy can, differentiates
exactly, and can write as C. Model parameters stay Python floats (their values are folded into the graph);
only the arguments of the traced function are symbols. Tests compare every traced result with float64.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import casadi
import numpy as np

from .backends import _ObjectArrays


class Traced(_ObjectArrays):
    """Records operations on CasADi SX scalars; numbers and parameters are plain floats."""

    name = "casadi"
    digits = 15

    def __init__(self) -> None:
        super().__init__(casadi)

    def scalar(self, number) -> float:
        return float(number)

    def parameter(self, name: str, value: float) -> float:
        return float(value)

    def pi(self) -> float:
        return float(np.pi)

    def asarray(self, x) -> np.ndarray:
        return np.asarray(x, dtype=object)

    def _solve_one(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """A symbolic solve (CasADi's own factorisation, no pivoting decisions on symbols)."""
        x = casadi.solve(to_sx(a), to_sx(b))
        return from_sx(x)

    def tolerance(self, scale: float = 1.0) -> float:
        return 1e-13 * scale

    def to_float(self, x) -> np.ndarray:
        raise TypeError("traced values are symbols: evaluate the compiled function for numbers")

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        yield


def symbols(name: str, n: int) -> tuple[casadi.SX, np.ndarray]:
    """A CasADi vector symbol and its entries as an object array (item assignment keeps numpy from treating
    SX as sequences)."""
    sx = casadi.SX.sym(name, n)
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = sx[i]
    return sx, out


def to_sx(a: np.ndarray) -> casadi.SX:
    """A 1-D or 2-D object array of SX and floats as one SX matrix."""
    a = np.asarray(a, dtype=object)
    rows, cols = (a.shape[0], 1) if a.ndim == 1 else a.shape
    out = casadi.SX(rows, cols)
    for i in range(rows):
        for j in range(cols):
            out[i, j] = a[i] if a.ndim == 1 else a[i, j]
    return casadi.densify(out)  # zeros stored too: compiled outputs are dense buffers of rows x cols


def from_sx(m: casadi.SX) -> np.ndarray:
    """An SX matrix as a 2-D object array of its entries."""
    out = np.empty(m.shape, dtype=object)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            out[i, j] = m[i, j]
    return out


def piecewise_linear(t, xs: np.ndarray, ys: np.ndarray):
    """The table (xs, ys) interpolated linearly at the symbol t, held constant outside it (as numpy.interp):
    y0 plus one ramp per change of slope, each a max() that CasADi differentiates."""
    tc = casadi.fmin(casadi.fmax(t, xs[0]), xs[-1])
    slopes = np.diff(ys) / np.diff(xs) if len(xs) > 1 else np.zeros(1)
    out = ys[0] + slopes[0] * (tc - xs[0])
    for x, change in zip(xs[1:-1], np.diff(slopes), strict=True):
        out = out + change * casadi.fmax(tc - x, 0.0)
    return out


# ---------------------------------------------------------------------------------------- native code
def cache_folder() -> Path:
    """Where compiled engines are kept between runs and processes: $MBSTUDIO_CACHE, else the user's cache."""
    if os.environ.get("MBSTUDIO_CACHE"):
        return Path(os.environ["MBSTUDIO_CACHE"]) / "engines"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mbstudio" / "engines"


def native(function: casadi.Function, key: str | None = None) -> casadi.Function:
    """The function as C compiled by the system compiler and loaded back (ten times faster than CasADi's
    virtual machine on our graphs); the library is cached under the hash of its C text, so a model compiles
    once per machine. Without a compiler, or when compiling fails, the function itself (still correct).
    `key` (a model's hash) also files the library under that key, so `load_native` finds it without tracing."""
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / f"{function.name()}.c"
        generator = casadi.CodeGenerator(source.name, {"with_header": False})
        generator.add(function)
        generator.generate(work + os.sep)
        library = compiled_library(source)
    if library is None:
        return function
    if key is not None:
        index = cache_folder() / "index" / f"{key}_{function.name()}"
        with contextlib.suppress(OSError):  # an index that cannot be written only costs a later trace
            index.parent.mkdir(parents=True, exist_ok=True)
            partial = index.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(library.name, encoding="utf-8")
            os.replace(partial, index)
    return _external(function.name(), library)


def compiled_library(source: Path, flags: tuple[str, ...] = ()) -> Path | None:
    """The C file compiled to a shared library in the cache, named after it and the hash of its text and
    `flags` (extra compiler options), built once per machine; None without a compiler or when compiling fails."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    text = source.read_bytes() + " ".join(flags).encode()  # no flags: the hash of the text alone, as before
    library = cache_folder() / f"{source.stem}_{hashlib.sha256(text).hexdigest()[:24]}.so"
    if library.exists() or _compile([compiler, *flags], source, library):
        return library
    return None


def _external(name: str, library: Path) -> casadi.Function:
    # CVODES asks for a Jacobian when it is set up even where it never uses it (Adams, fixed-point iteration):
    # finite differences are declared so that it can be formed; exact derivatives come from the traced graph
    return casadi.external(name, str(library), {"enable_fd": True})


def load_native(key: str, name: str) -> casadi.Function | None:
    """The compiled function `name` filed under `key` by `native`, or None when it has not been built here."""
    try:
        library = cache_folder() / (cache_folder() / "index" / f"{key}_{name}").read_text(encoding="utf-8").strip()
        return _external(name, library) if library.exists() else None
    except (OSError, RuntimeError):
        return None


def _compile(compiler: list[str], source: Path, library: Path) -> bool:
    """-O1: most of -O2's speed on straight-line code at a third of its compile time. Written under a
    temporary name and renamed, so a concurrent process never loads half a library."""
    partial = library.with_suffix(f".{os.getpid()}.tmp")
    try:
        library.parent.mkdir(parents=True, exist_ok=True)
        command = [*compiler, "-O1", "-shared", "-fPIC", "-o", str(partial), str(source), "-lm"]
        if subprocess.run(command, capture_output=True, timeout=600).returncode == 0:
            os.replace(partial, library)
            return True
    except (OSError, subprocess.SubprocessError):
        pass
    partial.unlink(missing_ok=True)
    return False


class FastCall:
    """Calls a CasADi function through preallocated numpy buffers: about 2.5 µs of overhead per call with three
    arguments (the Panda's RNEA: 3.5 µs in all, 0.9 µs of it native) where the ordinary call, which converts
    every argument and result, costs 25 µs. Arguments are copied in and results copied out, under a lock. The
    last `held` arguments are not passed: they keep what is written in their slots (`args`), for options that
    seldom change (each copy costs about 0.4 µs)."""

    def __init__(self, function: casadi.Function, held: int = 0) -> None:
        self.buffer, self.run = function.buffer()
        self.args = [np.zeros(function.nnz_in(i)) for i in range(function.n_in())]
        self.results = [np.zeros(function.nnz_out(i)) for i in range(function.n_out())]
        for i, a in enumerate(self.args):
            self.buffer.set_arg(i, memoryview(a))
        for i, r in enumerate(self.results):
            self.buffer.set_res(i, memoryview(r))
        self.passed = self.args[: len(self.args) - held]
        self.lock = threading.Lock()

    def __call__(self, *args) -> list[np.ndarray]:
        with self.lock:
            for slot, value in zip(self.passed, args, strict=True):
                slot[:] = value
            self.run()
            return [r.copy() for r in self.results]


def over_times(symbols: dict, formula, times: np.ndarray) -> np.ndarray:
    """A time formula at many times in one compiled call: traced once on a time symbol (parameters as
    floats), then evaluated on the row of times, which CasADi maps over. 200 output times of the Delta's three
    actuators took 37 ms through the expression evaluator, one time after another."""
    from ..model.expressions import evaluate  # the model layer imports nothing from here

    t = casadi.SX.sym("t")
    traced = Traced()
    value = evaluate(formula, traced.scalar, {**symbols, "t": t}, traced.functions)
    return np.asarray(casadi.Function("formula", [t], [casadi.SX(value)])(times[None, :])).ravel()
