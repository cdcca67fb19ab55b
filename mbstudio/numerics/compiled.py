"""The fourth number system (docs/architecture.md, principle 1): CasADi SX symbols in numpy object arrays.

Running the same kinematics and dynamics code once on symbolic coordinates records an expression graph, which
CasADi evaluates natively (`casadi.Function`) one state at a time far faster than numpy can, differentiates
exactly, and can write as C. Model parameters stay Python floats (their values are folded into the graph);
only the arguments of the traced function are symbols. Tests compare every traced result with float64.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import casadi
import numpy as np

from .backends import _ObjectArrays
from .native_cache import CacheRefused, cache_folder, discard, seal, verified, write_private
from .native_call import MODULE_PREFIX, calls, extension_source, include_flags, load_extension
from .native_call import FastCall as FastCall  # where the engines' callers import it from
from .translation_units import UNIT_OPTIONS, translation_units


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


def to_sparse_sx(a: np.ndarray) -> casadi.SX:
    """A 1-D or 2-D object array of SX and floats as one SX matrix whose structural zeros are its entries that are
    zero whatever the arguments (a float 0, or a symbol CasADi simplified to 0): the sparse factorisations of the
    engine's graph (dynamics/engine.py) then see the structure of the loops and of the tree."""
    a = np.asarray(a, dtype=object)
    a = a[:, None] if a.ndim == 1 else a
    rows, cols, values = [], [], []
    for (i, j), x in np.ndenumerate(a):
        if isinstance(x, casadi.SX) and not x.is_zero() or not isinstance(x, casadi.SX) and x != 0:
            rows.append(i)
            cols.append(j)
            values.append(x)
    sparsity = casadi.Sparsity.triplet(a.shape[0], a.shape[1], rows, cols)
    if not values:
        return casadi.SX(sparsity)
    # triplet() sorts by columns: the values follow in the same order
    order = sorted(range(len(values)), key=lambda e: (cols[e], rows[e]))
    return casadi.SX(sparsity, casadi.vertcat(*(casadi.SX(values[e]) for e in order)))


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
@dataclass
class Native:
    """Functions compiled into one library and loaded: CasADi's handles on them (for its integrators, maps and
    derivatives checks) and the calls from Python (numerics/native_call.py: `name`, `name_into`, `name_rows`). Where
    nothing could be compiled, the traced functions themselves, on CasADi's virtual machine."""

    functions: dict[str, casadi.Function]
    calls: dict[str, Callable]
    metadata: dict = field(default_factory=dict)
    traced: list[casadi.Function] | None = None  # when this process traced them

    @property
    def compiled(self) -> bool:
        return all(f.is_a("External") for f in self.functions.values())


def native(function: casadi.Function) -> casadi.Function:
    """The function as C compiled by the system compiler and loaded back (ten times faster than CasADi's
    virtual machine on our graphs); the library is cached under the hash of its C text, so a graph compiles
    once per machine. Without a compiler, with a cache refused (native_cache.py), or when compiling or loading
    fails, the function itself (still correct)."""
    return native_functions([function]).functions[function.name()]


def native_functions(functions: list[casadi.Function]) -> Native:
    """The functions compiled together (cached under the hash of their C text), with their calls from Python."""
    with tempfile.TemporaryDirectory() as work:
        source, module = _generate(functions, Path(work) / f"{functions[0].name()}.c")
        loaded = _compiled_and_loaded(source, [f.name() for f in functions], module)
    return loaded or _uncompiled(functions)


def _uncompiled(functions: list[casadi.Function], metadata: dict | None = None) -> Native:
    by_name = {f.name(): f for f in functions}
    return Native(by_name, calls(by_name), metadata or {}, functions)


# the modules whose code decides what an engine computes: their text is part of its key
_TRACED_CODE = ("dynamics", "kinematics", "numerics", "model")


@functools.cache
def code_version() -> str:
    """A hash of the code the engines are traced from (and of CasADi's version): a changed algorithm is never
    served from a library built by the old one."""
    from .. import __version__

    digest = hashlib.sha256(f"{__version__} casadi {casadi.__version__}".encode())
    root = Path(__file__).resolve().parents[1]
    for package in _TRACED_CODE:
        for path in sorted((root / package).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def engine_key(text: str, partition=None) -> str:
    """What an engine is filed under: the model's canonical text, the partition (None: the document's) and the
    code version."""
    return hashlib.sha256(f"{code_version()}\n{partition!r}\n{text}".encode()).hexdigest()


def filed_functions(key: str, stem: str) -> Native | None:
    """The native functions and metadata filed under `key` on this machine, or None (nothing is traced)."""
    try:
        return _load_filed(cache_folder(), key, stem)
    except CacheRefused:
        return None


def cached_functions(key: str, stem: str, build: Callable[[], tuple[list[casadi.Function], dict]]) -> Native:
    """Native functions filed under `key` (the hash of everything that determines them), with the metadata
    stored with them, loaded without tracing anything when this machine has built them already; else
    `build()` -> (traced functions, metadata) is called and they are compiled into one library and filed. The
    traced ones serve where nothing can be compiled."""
    try:
        folder = cache_folder()
    except CacheRefused as refused:
        folder = _refused(refused)
    if folder is not None:
        found = _load_filed(folder, key, stem)
        if found is not None:
            return found
    traced, metadata = build()
    names = [f.name() for f in traced]
    if folder is None:
        return _uncompiled(traced, metadata)
    library = folder / f"{stem}_{key[:32]}.so"
    with tempfile.TemporaryDirectory() as work:
        source, module = _generate(traced, Path(work) / f"{stem}.c")
        loaded = _compiled_and_loaded(source, names, module, library)
    if loaded is None:
        return _uncompiled(traced, metadata)
    with contextlib.suppress(OSError):  # metadata that cannot be written only costs a later trace
        entry = {"functions": names, "metadata": metadata, "library": library.name, "module": module}
        write_private(library.with_suffix(".json"), json.dumps(entry).encode())
    return Native(loaded.functions, loaded.calls, metadata, traced)


def _load_filed(folder: Path, key: str, stem: str) -> Native | None:
    try:
        entry = json.loads((folder / f"{stem}_{key[:32]}.json").read_text(encoding="utf-8"))
        library, names, module = folder / entry["library"], list(entry["functions"]), entry.get("module")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    loaded = _loaded(library, names, module)
    if loaded is not None:
        loaded.metadata = entry.get("metadata", {})
    return loaded


def _generate(functions: list[casadi.Function], source: Path) -> tuple[Path, str | None]:
    """CasADi's C of the functions, and the CPython extension calling them where the headers exist (its module
    name, unique to the text, else None)."""
    generator = casadi.CodeGenerator(source.name, {"with_header": False})
    for function in functions:
        generator.add(function)
    generator.generate(str(source.parent) + os.sep)
    if include_flags() is None:
        return source, None
    text = source.read_text(encoding="utf-8")
    module = MODULE_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:20]
    source.write_text(text + extension_source(functions, module), encoding="utf-8")
    return source, module


def _compiled_and_loaded(
    source: Path, names: list[str], module: str | None, library: Path | None = None
) -> Native | None:
    """Compiles (or finds) the library and loads the functions; a library that fails to load (a truncated file)
    is removed and built once more; None, with a note, when that fails too."""
    flags = include_flags() if module else ()
    for _ in range(2):
        built = compiled_library(source, flags, library)
        if built is None:
            return None
        loaded = _loaded(built, names, module)
        if loaded is not None:
            return loaded
    warnings.warn(
        f"the compiled library {built} was built but cannot be loaded: the uncompiled functions serve (slower)",
        NativeNote,
        stacklevel=3,
    )
    return None


def _loaded(library: Path, names: list[str], module: str | None) -> Native | None:
    """The functions of a library whose bytes were checked (native_cache.verified), with their calls; a library
    that does not load is removed, so that it is built again."""
    if not verified(library):
        return None
    try:
        functions = {name: _external(name, library) for name in names}
    except RuntimeError:
        discard(library)
        return None
    extension = load_extension(library, module) if module else None
    return Native(functions, calls(functions, extension))


class NativeNote(UserWarning):
    """Compiled code could not be used: the uncompiled path serves, slower but with the same results."""


def _refused(refused: CacheRefused) -> None:
    warnings.warn(f"{refused}. The uncompiled functions serve (slower).", NativeNote, stacklevel=4)
    return None


def compiled_library(source: Path, flags: tuple[str, ...] = (), library: Path | None = None) -> Path | None:
    """The C file compiled to a shared library in the cache, named after it and the hash of its text and
    `flags` (extra compiler options) unless `library` names it, built once per machine; None without a compiler,
    when compiling fails, or when the cache is refused (with a note)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    try:
        folder = cache_folder()
    except CacheRefused as refused:
        return _refused(refused)
    if library is None:
        text = source.read_bytes() + " ".join(flags).encode()  # no flags: the hash of the text alone, as before
        library = folder / f"{source.stem}_{hashlib.sha256(text).hexdigest()[:24]}.so"
    if verified(library) or _compile([compiler, *flags], source, library):
        return library
    return None


def _external(name: str, library: Path) -> casadi.Function:
    # CVODES asks for a Jacobian when it is set up even where it never uses it (Adams, fixed-point iteration):
    # finite differences are declared so that it can be formed; exact derivatives come from the traced graph
    return casadi.external(name, str(library), {"enable_fd": True})


# -O1 without GCC's dominator optimisations and full redundancy elimination: on the long straight-line functions of
# a 100-link chain these make register allocation take most of a 30-s compile; without them it takes 5 s, and the
# code runs within 5 % as fast (other compilers ignore the two options, with a warning)
OPTIMISATION = ("-O1", "-fno-tree-dominator-opts", "-fno-tree-fre")
# the main unit holds the short functions and CasADi's sparse kernels (products, QR and LDL factorisations), loops
# that -O2 makes 15 % faster on the vehicle's state equation (42 -> 35 µs) for 0.3-1.5 s more of a cold build
MAIN_OPTIMISATION = ("-O2",)


def _compile(compiler: list[str], source: Path, library: Path) -> bool:
    """The long functions in units of their own at OPTIMISATION (most of -O2's speed on straight-line code at a
    small part of its compile time), the rest at MAIN_OPTIMISATION, compiled in parallel (translation_units.py).
    Written under a temporary name and renamed, so a concurrent process never loads half a library; private, its
    sha256 beside it (native_cache.seal)."""
    partial = library.with_name(f".{library.name}.{os.getpid()}.tmp")
    try:
        with tempfile.TemporaryDirectory() as work:
            objects = _objects(compiler, source, Path(work))
            if objects is not None:
                command = [*compiler, "-shared", "-o", str(partial), *map(str, objects), "-lm"]
                if subprocess.run(command, capture_output=True, timeout=600).returncode == 0:
                    seal(partial, library)
                    return True
    except (OSError, subprocess.SubprocessError):
        pass
    partial.unlink(missing_ok=True)
    return False


def _objects(compiler: list[str], source: Path, work: Path) -> list[Path] | None:
    """The source's translation units compiled to object files, at most one process per core at a time; None
    when one fails. The long functions' units need no headers (translation_units.UNIT_OPTIONS)."""
    main, parts = translation_units(source.read_text(encoding="utf-8"))
    units = [(work / f"unit{k}.c", text, [compiler[0], *UNIT_OPTIONS, *OPTIMISATION]) for k, text in enumerate(parts)]
    for path, text, _ in units:
        path.write_text(text, encoding="utf-8")
    if parts:
        source = work / source.name
        source.write_text(main, encoding="utf-8")
    units.append((source, main, [*compiler, *MAIN_OPTIMISATION]))
    commands = [
        [*options, "-fPIC", "-c", "-o", str(work / f"{path.stem}.o"), str(path)]
        for path, text, options in sorted(units, key=lambda unit: -len(unit[1]))  # the longest first
    ]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        codes = list(pool.map(lambda c: subprocess.run(c, capture_output=True, timeout=600).returncode, commands))
    return None if any(codes) else [work / f"{path.stem}.o" for path, _, _ in units]


def over_times(symbols: dict, formula, times: np.ndarray) -> np.ndarray:
    """A time formula at many times in one compiled call: traced once on a time symbol (parameters as
    floats), then evaluated on the row of times, which CasADi maps over. 200 output times of the Delta's three
    actuators took 37 ms through the expression evaluator, one time after another; tracing each took 0.5 ms of a
    run's outputs, so the traced formula is kept for the next call."""
    try:
        traced = _traced_formula(formula, tuple(sorted(symbols.items())))
    except TypeError:  # a formula or parameter that cannot be a key: traced for this call only
        traced = _traced_formula.__wrapped__(formula, tuple(sorted(symbols.items())))
    return np.asarray(traced(times[None, :])).ravel()


@functools.lru_cache(maxsize=64)
def _traced_formula(formula, symbols: tuple) -> casadi.Function:
    from ..model.expressions import evaluate  # the model layer imports nothing from here

    t = casadi.SX.sym("t")
    traced = Traced()
    value = evaluate(formula, traced.scalar, {**dict(symbols), "t": t}, traced.functions)
    return casadi.Function("formula", [t], [casadi.SX(value)])
