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
import platform
import re
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import casadi
import numpy as np

from ..progress import say_building
from .backends import _ObjectArrays
from .native_cache import CacheRefused, cache_folder, discard, read_sealed, seal, verified, write_sealed
from .native_call import MODULE_PREFIX, calls, extension_source, include_flags, load_extension
from .native_call import FastCall as FastCall  # where the engines' callers import it from

Compiled = Callable[[int, int], None]  # told (units compiled, units) as a library's translation units compile


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

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a @ b for stacks of matrices (N, r, m) @ (N, m, c) without the products whose factor of `a` is zero (a
        float 0, or a symbol CasADi simplified to 0): CasADi drops them anyway (0·x = 0, 0 + x = x), so the graph
        is the same, in a fraction of the operations where `a` is sparse. A closed loop's velocity map is: Rᵀ K
        of Talos' regressor took 3.3 of the 3.9 s its trace took."""
        if a.ndim != 3 or b.ndim != 3 or len(a) != len(b):
            return a @ b
        out = np.empty((len(a), a.shape[1], b.shape[2]), dtype=object)
        for k, (rows, right) in enumerate(zip(a, b, strict=True)):
            for i, row in enumerate(rows):
                kept = [j for j, x in enumerate(row) if not _zero(x)]
                out[k, i] = row[kept] @ right[kept] if kept else row @ right  # the sum in the same order
        return out

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        yield


def _zero(x) -> bool:
    return x.is_zero() if isinstance(x, casadi.SX) else x == 0


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
    if a.size == 0:
        return casadi.SX(rows, cols)
    # one column after the other, then reshaped (CasADi's order): setting entries one by one into a sparse matrix
    # costs in proportion to those already there, 1.7 s for the regressor of a 44-dof humanoid
    entries = [x if isinstance(x, casadi.SX) else casadi.SX(x) for x in a.reshape(rows, cols).ravel(order="F")]
    out = casadi.reshape(casadi.vertcat(*entries), rows, cols)
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

    functions: Mapping[str, casadi.Function]
    calls: dict[str, Callable]
    metadata: dict = field(default_factory=dict)
    traced: list[casadi.Function] | None = None  # when this process traced them
    library: Path | None = None  # the compiled library holding them (simulation/cvodes_driver.py calls into it)

    @property
    def compiled(self) -> bool:
        return all(is_external(f) for f in self.functions.values())


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


# the packages whose code is traced into engines and kernels; code_version follows their imports from there
_TRACED_CODE = ("dynamics", "kinematics", "numerics", "model")


@functools.cache
def code_version() -> str:
    """A hash of the code the engines are traced from and compiled by: every module of the traced packages and
    every module of this package they import, recursively (a module elsewhere that traced code calls is part of
    the engine as much as they are), with CasADi's version and how this machine builds (Python's ABI, the C
    compiler): a changed algorithm is never served from a library built by the old one. Read back from the
    cache while the same files keep their sizes and modification times (`_remembered_version`): the walk and
    hash of them all cost a first run ~25 ms."""
    from .. import __version__

    identity = f"{__version__} casadi {casadi.__version__} {_build_identity()}"
    package = Path(__file__).resolve().parents[1]
    remembered = _remembered_version(identity, package)
    if remembered is not None:
        return remembered
    digest = hashlib.sha256(identity.encode())
    paths = traced_modules()
    for path in paths:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    version = digest.hexdigest()
    with contextlib.suppress(CacheRefused, OSError):
        files = [[path.relative_to(package).as_posix(), *_stamp(path)] for path in paths]
        record = {"identity": identity, "package": str(package), "files": files, "version": version}
        write_sealed(_version_record(package), json.dumps(record).encode())
    return version


def _remembered_version(identity: str, package: Path) -> str | None:
    """The code version last computed here, if the build identity, the package's folder and the traced files'
    sizes and modification times (ns) are all as they were then; else None. A file that changes, or a new
    import in one, changes its stamp; so does a module removed (then it is missing)."""
    try:
        data = read_sealed(_version_record(package))
        record = json.loads(data) if data is not None else {}
        if record.get("identity") != identity or record.get("package") != str(package):
            return None
        same = all(_stamp(package / name) == (size, mtime) for name, size, mtime in record["files"])
        return str(record["version"]) if same else None
    except (CacheRefused, OSError, ValueError, KeyError, TypeError, AttributeError):  # not a record we wrote
        return None


def _version_record(package: Path) -> Path:
    """Where the code version of the package at `package` is remembered: one file per installed copy, so that
    two copies in use on one machine (a checkout beside an installed release) do not each find the other's
    record and walk and hash their files again on every run."""
    return cache_folder() / f"code_version_{hashlib.sha256(str(package).encode()).hexdigest()[:16]}.json"


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def traced_modules() -> list[Path]:
    """The files of the traced packages (subpackages included) and of every module of mbstudio they import,
    at the top or inside a function, followed recursively, with the __init__.py of each package on the way
    (importing a module runs them)."""
    package = Path(__file__).resolve().parents[1]
    sources = {path: path.relative_to(package.parent).with_suffix("").parts for path in package.rglob("*.py")}
    # every module by its name (('mbstudio', 'model', 'files')), x.py before x/__init__.py, and each package's
    # __init__.py by the package's name: one walk of the folder instead of a file test per import (40 ms)
    modules: dict[tuple[str, ...], Path] = {}
    inits = {parts[:-1]: path for path, parts in sources.items() if parts[-1] == "__init__"}
    for path, parts in sorted(sources.items(), key=lambda item: item[1][-1] == "__init__"):
        modules.setdefault(parts[:-1] if parts[-1] == "__init__" else parts, path)
    pending = [path for path, parts in sources.items() if parts[1] in _TRACED_CODE]
    found: set[Path] = set()
    while pending:
        path = pending.pop()
        if path not in found:
            found.add(path)
            name = sources[path]
            pending.extend(_imported(path, name, modules))
            pending.extend(inits[name[:k]] for k in range(1, len(name)) if name[:k] in inits)
    return sorted(found)


# an import statement at the start of a line, indented or not: `from .x import (a, b as c)` or `import a.b`; one
# in a docstring counts too (a module hashed for nothing costs only a rebuild; ast.parse of them all took 0.5 s)
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]*))", re.M
)


def _imported(path: Path, parts: tuple[str, ...], modules: dict[tuple[str, ...], Path]) -> list[Path]:
    """The files of mbstudio that the module at `path` (named `parts`) imports, from `modules` (each module's
    file by its name): `from .x import y` gives x/y.py when y is a module, else x.py or x/__init__.py."""
    here = parts[:-1]  # the package the module is in (for __init__.py: that package itself)
    out = []
    for source, names, modules_named in _IMPORT.findall(path.read_text(encoding="utf-8")):
        if modules_named:
            out += [modules.get(tuple(_name(m).split("."))) for m in modules_named.split(",")]
            continue
        level = len(source) - len(source.lstrip("."))
        base = here[: len(here) - level + 1] if level else ()
        base += tuple(source.lstrip(".").split(".")) if source.strip(".") else ()
        for name in names.strip("()").split(","):
            if _name(name):
                out.append(modules.get((*base, _name(name))) or modules.get(base))
    return [found for found in out if found is not None]


def _name(imported: str) -> str:
    """`a.b as c` -> `a.b`."""
    return imported.split(" as ")[0].strip()


@functools.cache
def _build_identity() -> str:
    """What besides the C text decides a library's bytes and whether this process can load it: the platform,
    Python's ABI (the extension module is built against its headers) and the C compiler (its path, size and
    time, which change when it is upgraded)."""
    compiler = _compiler()
    where = f"{sys.platform} {platform.machine()} {sys.implementation.cache_tag}"
    if compiler is None:
        return f"{where} no compiler"
    program = os.path.realpath(compiler)  # what `cc` links to (it is run by its own name: ccache reads that)
    info = os.stat(program)
    return f"{where} {compiler} {program} {info.st_size} {info.st_mtime_ns}"


def _compiler() -> str | None:
    return shutil.which("cc") or shutil.which("gcc")


def engine_key(text: str, partition=None) -> str:
    """What an engine is filed under: the model's canonical text, the partition (None: the document's) and the
    code version."""
    return hashlib.sha256(f"{code_version()}\n{partition!r}\n{text}".encode()).hexdigest()


def uncompiled_reason() -> str:
    """Why compiled functions are not available on this machine, in a few words for a report: no compiler, or
    the cache refused (its message), else that compiling or loading failed."""
    if _compiler() is None:
        return "no C compiler found"
    try:
        cache_folder()
    except CacheRefused as refused:
        return str(refused)
    return UNKNOWN_FAILURE


UNKNOWN_FAILURE = "the library could not be compiled or loaded"  # with a compiler and a usable cache


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
    from .sx_operators import faster_arithmetic  # a build's only, as translation_units is

    start = time.perf_counter()
    say_building(f"building the compiled {stem} of this model (once: later runs load it from the cache) ...", 0.0)
    with faster_arithmetic():  # the same graph, traced in a fraction of the time
        traced, metadata = build()
    names = [f.name() for f in traced]
    if folder is None:
        return _uncompiled(traced, metadata)
    library, manifest = _filed(folder, key, stem)
    say_building(f"  traced ({_seconds(start)}); compiling its C ...", TRACED)

    def compiled(done: int, units: int) -> None:
        if units > 1:  # a long one's: cut into units compiled in parallel (translation_units.py)
            fraction = TRACED + (1 - TRACED) * done / units
            say_building(f"  {done} of {units} units of C compiled ({_seconds(start)})", fraction)

    with tempfile.TemporaryDirectory() as work:
        source, module = _generate(traced, Path(work) / f"{stem}.c")
        loaded = _compiled_and_loaded(source, names, module, library, compiled)
    say_building(f"{stem} {'built' if loaded else 'not compiled: CasADi evaluates it'} ({_seconds(start)})", 1.0)
    if loaded is None:
        return _uncompiled(traced, metadata)
    with contextlib.suppress(OSError):  # metadata that cannot be written only costs a later trace
        write_sealed(manifest, json.dumps({"functions": names, "metadata": metadata, "module": module}).encode())
    return Native(loaded.functions, loaded.calls, metadata, traced, loaded.library)


TRACED = 0.25  # the part of a cold build said to be done once its functions are traced (a chain's: 1.3 of 5 s)


def _seconds(start: float) -> str:
    return f"{time.perf_counter() - start:.1f} s"


def _filed(folder: Path, key: str, stem: str) -> tuple[Path, Path]:
    """The library and its manifest (the functions' names, the metadata, the extension's name) filed under
    `key`: names the cache makes itself, never read from a file."""
    if not re.fullmatch(r"[a-z_]+", stem) or not re.fullmatch(r"[0-9a-f]{32,}", key):
        raise ValueError(f"not a name for the engine cache: {stem!r}, {key!r}")
    name = f"{stem}_{key[:32]}"
    return folder / f"{name}.so", folder / f"{name}.json"


def _load_filed(folder: Path, key: str, stem: str) -> Native | None:
    library, manifest = _filed(folder, key, stem)
    text = read_sealed(manifest)  # a manifest that fails its checks is removed there
    if text is None:  # none yet: nothing to remove (another process may be filing it this moment)
        return None
    entry = _manifest_entry(text)
    if entry is None:
        discard(manifest)
        return None
    names, module, metadata = entry
    loaded = _loaded(library, names, module)
    if loaded is not None:
        loaded.metadata = metadata
    return loaded


def _manifest_entry(text: bytes) -> tuple[list[str], str | None, dict] | None:
    """(the functions' names, the extension module's name, the metadata) of a manifest, or None when it is not
    one the cache writes."""
    try:
        entry = json.loads(text)
        names, module, metadata = entry["functions"], entry["module"], entry["metadata"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        return None
    extension = re.escape(MODULE_PREFIX) + "[0-9a-f]{20}"
    if not isinstance(metadata, dict) or not (
        module is None or isinstance(module, str) and re.fullmatch(extension, module)
    ):
        return None
    return names, module, metadata


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
    source: Path, names: list[str], module: str | None, library: Path | None = None, done: Compiled | None = None
) -> Native | None:
    """Compiles (or finds) the library and loads the functions; a library that fails to load (a truncated file)
    is removed and built once more; None, with a note, when that fails too. `done(units compiled, units)` after
    each translation unit compiled."""
    flags = include_flags() if module else ()
    for _ in range(2):
        built = compiled_library(source, flags, library, done)
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
    functions = _Handles(library, names)
    try:  # the first handle loads the library; all of them where CasADi's handles make the calls
        functions[names[0]]
        extension = load_extension(library, module) if module else None
        if extension is None:
            functions.made()
    except RuntimeError:
        discard(library)
        return None
    return Native(functions, calls(functions, extension), library=library)


class _Handles(Mapping):
    """CasADi's handles on a loaded library's functions, each made where it is first asked for: the calls from
    Python go through the library's extension module, and a run asks for few handles (CVODES' sizes, a BDF run's
    Jacobian), where making each of a library's, ~0.1 ms apiece, was a tenth of a process's first-run costs."""

    def __init__(self, library: Path, names: list[str]) -> None:
        self.library, self.names, self._made = library, list(names), {}

    def __getitem__(self, name: str) -> casadi.Function:
        if name not in self._made:
            if name not in self.names:
                raise KeyError(name)
            self._made[name] = (_exact if f"jac_{name}" in self.names else _external)(name, self.library)
        return self._made[name]

    def made(self) -> None:
        """Every handle made now."""
        for name in self.names:
            self[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def is_external(function: casadi.Function) -> bool:
    """True for a function loaded from a compiled library (CasADi 3.7's is_a("External") is False even there)."""
    return function.class_name() == "External"


class NativeNote(UserWarning):
    """Compiled code could not be used: the uncompiled path serves, slower but with the same results."""


def _refused(refused: CacheRefused) -> None:
    warnings.warn(f"{refused}. The uncompiled functions serve (slower).", NativeNote, stacklevel=4)
    return None


def compiled_library(
    source: Path, flags: tuple[str, ...] = (), library: Path | None = None, done: Compiled | None = None
) -> Path | None:
    """The C file compiled to a shared library in the cache, named after it and the hash of its text, `flags`
    (extra compiler options) and the code version (how it is cut into units and compiled) unless `library` names
    it, built once per machine; None without a compiler, when compiling fails, or when the cache is refused (with
    a note). `done(units compiled, units)` after each translation unit compiled."""
    compiler = _compiler()
    if compiler is None:
        return None
    try:
        folder = cache_folder()
    except CacheRefused as refused:
        return _refused(refused)
    library = library or _library_name(folder, source.stem, source.read_bytes(), flags)
    if verified(library) or _compile([compiler, *flags], source, library, done):
        return library
    return None


def built_library(stem: str, text: bytes, flags: tuple[str, ...] = ()) -> Path | None:
    """The library `compiled_library` builds from a C file named `stem`.c holding `text`, where it is in the cache
    already and its bytes check (native_cache.verified); else None (then compile it from the file)."""
    if _compiler() is None:
        return None
    try:
        library = _library_name(cache_folder(), stem, text, flags)
    except CacheRefused:
        return None
    return library if verified(library) else None


def _library_name(folder: Path, stem: str, text: bytes, flags: tuple[str, ...]) -> Path:
    """Where a C file's library is filed: its name, the hash of its text, the flags and the code version."""
    key = text + " ".join(flags).encode() + code_version().encode()
    return folder / f"{stem}_{hashlib.sha256(key).hexdigest()[:24]}.so"


def _external(name: str, library: Path) -> casadi.Function:
    # CVODES asks for a Jacobian when it is set up even where it never uses it (Adams, fixed-point iteration):
    # finite differences are declared so that it can be formed; exact derivatives come from the traced graph
    return casadi.external(name, str(library), {"enable_fd": True})


def _exact(name: str, library: Path) -> casadi.Function:
    # a function compiled with its jac_<name>: CasADi derives every derivative from it, but only where finite
    # differences are not enabled (with them it took differences even so, to 1e-4 of solo12's Jacobian)
    return casadi.external(name, str(library))


# -O1 without GCC's dominator optimisations and full redundancy elimination: on the long straight-line functions of
# a 100-link chain these make register allocation take most of a 30-s compile; without them it takes 5 s, and the
# code runs within 5 % as fast (other compilers ignore the options, with a warning). Without its RTL dead-store
# elimination too: a fifth of what is left of the units' compile time (the chain's cold build 10.4 -> 9.2 s of CPU,
# the vehicle's 7.0 -> 5.9, Talos' 5.4 -> 4.8), the chain's state equation 13 % faster and the vehicle's and Talos'
# within 4 %, their series of outputs 5-25 % slower (the chain's 201 samples 2.7 -> 3.4 ms); the same bits
OPTIMISATION = ("-O1", "-fno-tree-dominator-opts", "-fno-tree-fre", "-fno-dse")
# the main unit holds the short functions and CasADi's sparse kernels (products, QR and LDL factorisations), loops
# that -O2 makes 15 % faster on the vehicle's state equation (42 -> 35 µs) for 0.3-1.5 s more of a cold build
MAIN_OPTIMISATION = ("-O2",)


def _compile(compiler: list[str], source: Path, library: Path, done: Compiled | None = None) -> bool:
    """The long functions in units of their own at OPTIMISATION (most of -O2's speed on straight-line code at a
    small part of its compile time), the rest at MAIN_OPTIMISATION, compiled in parallel (translation_units.py).
    Written under a temporary name and renamed, so a concurrent process never loads half a library; private,
    its sha256 in the cache's index (native_cache.seal)."""
    import subprocess  # a build's only: a run from the cache starts no process (nor imports what starts them)

    from .cache_upkeep import keep_within_limit

    partial = library.with_name(f".{library.name}.{os.getpid()}.tmp")
    try:
        with tempfile.TemporaryDirectory() as work:
            objects = _objects(compiler, source, Path(work), done)
            if objects is not None:
                command = [*compiler, "-shared", "-o", str(partial), *map(str, objects), "-lm"]
                if subprocess.run(command, capture_output=True, timeout=600).returncode == 0:
                    seal(partial, library)
                    keep_within_limit()  # the old entries unused longest make room for it (cache_upkeep.py)
                    return True
    except (OSError, subprocess.SubprocessError):
        pass
    partial.unlink(missing_ok=True)
    return False


def _objects(compiler: list[str], source: Path, work: Path, done: Compiled | None = None) -> list[Path] | None:
    """The source's translation units compiled to object files, at most one process per core at a time, with
    `done(units compiled, units)` after each; None when one fails. The long functions' units need no headers
    (translation_units.UNIT_OPTIONS)."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from .translation_units import UNIT_OPTIONS, translation_units

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
    codes = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        running = [pool.submit(subprocess.run, c, capture_output=True, timeout=600) for c in commands]
        for finished in as_completed(running):
            codes.append(finished.result().returncode)
            if done is not None:
                done(len(codes), len(commands))
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
    return np.asarray(_mapped(traced, len(times))(times[None, :])).ravel()


@functools.lru_cache(maxsize=64)
def _mapped(traced: casadi.Function, count: int) -> casadi.Function:
    """The traced formula mapped over `count` times (5x a call repeating by columns), built once: building the map
    took 0.1 ms, a twentieth of the driven Delta's matched-accuracy run, whose three actuators each build it."""
    return traced.map(count)


@functools.lru_cache(maxsize=64)
def _traced_formula(formula, symbols: tuple) -> casadi.Function:
    from ..model.expressions import evaluate  # the model layer imports nothing from here

    t = casadi.SX.sym("t")
    traced = Traced()
    value = evaluate(formula, traced.scalar, {**dict(symbols), "t": t}, traced.functions)
    return casadi.Function("formula", [t], [casadi.SX(value)])
