"""SUNDIALS CVODES called from our own compiled driver, not through casadi.integrator.

CasADi's CVODES plugin library holds the whole SUNDIALS 2.6 CVODES C interface (CVodeCreate, CVode, CVodeGetDky,
CVodeGetEstLocalErrors, ...; its common library the serial N_Vector). Those symbols are resolved at run time from
the installed plugin (ctypes: dlopen/dlsym), and a small C driver (`DRIVER`, compiled once per machine into the
engine cache) integrates the engine's compiled state equation with them: its right-hand side calls the generated C
function directly, with no CasADi function, MX graph or buffer copy in between, and it returns what CasADi's
integrator does not: the estimated local error of every step.

The driver repeats what CasADi's integrator does with the same options (CasADi 3.7-3.8, casadi/interfaces/sundials):
CVodeCreate(lmm, iter), CVodeInit at τ = 0, CVodeSStolerances(rtol, atol), CVodeSetMaxNumSteps, CVodeSetMinStep
where one is given, the stop time at the grid's end, and a return at each grid point (within 1e-9 of the last
return: that state again). It steps with CV_ONE_STEP and interpolates the returns with CVodeGetDky, which CV_NORMAL
does itself (CVODES 2.6's CVode: a return at tout is CVodeGetDky(tout) after the step that passed it, and the stop
time's adjustment of the next step is made before that step either way), and counts the steps between two returns
as CV_NORMAL does (its `mxstep` test before each step): the same steps, the same states, bit for bit
(tests/test_cvodes_driver.py). Where the plugin, a compiler or the engine's library is missing, `driver()` is None
and CasADi's integrator serves.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import functools
import math
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import casadi
import numpy as np

# SUNDIALS 2.6 (cvodes.h): linear multistep methods, iterations, return flags
CV_ADAMS, CV_BDF = 1, 2
CV_FUNCTIONAL, CV_NEWTON = 1, 2
CV_TOO_MUCH_WORK = -1
FLAG_NAMES = {-1: "CV_TOO_MUCH_WORK", -2: "CV_TOO_MUCH_ACC", -3: "CV_ERR_FAILURE", -4: "CV_CONV_FAILURE"}
# the CVODES functions the driver calls, in the order of its table (`mb_cvodes_bind`)
SYMBOLS = (
    "CVodeCreate",
    "CVodeInit",
    "CVodeSStolerances",
    "CVodeSetUserData",
    "CVodeSetErrHandlerFn",
    "CVodeSetMaxNumSteps",
    "CVodeSetMinStep",
    "CVodeSetStopTime",
    "CVode",
    "CVodeGetDky",
    "CVodeGetIntegratorStats",
    "CVodeGetEstLocalErrors",
    "CVodeGetCurrentTime",
    "CVodeFree",
    "N_VMake_Serial",
    "N_VDestroy_Serial",
    "N_VGetArrayPointer",
)
# the pieces integrated inside a `kept()` block (a context variable: runs in other threads keep their own)
_KEPT: contextvars.ContextVar[list | None] = contextvars.ContextVar("mbstudio_cvodes_pieces", default=None)
COUNTS = 8  # steps, evaluations, error test failures (at the last return), returns made, flag, evaluations in all
RETURN_TOLERANCE = 1e-9  # CasADi's integrator returns the last state again for a grid point this close to the last
_LONG = np.dtype(ctypes.c_long)  # the counts' type (numpy converts a ctypes type anew each time: 8 µs a call)
WATCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_long)  # a piece's watch: the returns made -> 1 to end it there
_UNWATCHED = WATCH()  # the null one


def plugin_names() -> tuple[str, ...]:
    """The file names of CasADi's CVODES plugin on this platform."""
    if sys.platform == "win32":
        return ("casadi_integrator_cvodes.dll", "libcasadi_integrator_cvodes.dll")
    if sys.platform == "darwin":
        return ("libcasadi_integrator_cvodes.dylib",)
    return ("libcasadi_integrator_cvodes.so",)


@functools.cache
def driver() -> ctypes.CDLL | None:
    """The compiled driver bound to CasADi's CVODES, or None where the plugin, one of its symbols or a compiler is
    missing (CasADi's integrator then serves)."""
    table = _symbols(Path(casadi.__file__).parent, plugin_names())
    if table is None:
        return None
    library = _compiled()
    if library is None:
        return None
    try:
        loaded = ctypes.CDLL(str(library))
    except OSError:
        return None
    pointer, number, count = ctypes.c_void_p, ctypes.c_double, ctypes.c_long
    loaded.mb_cvodes_piece.restype = ctypes.c_int
    loaded.mb_cvodes_piece.argtypes = [pointer, pointer, pointer, number, number, pointer, count, number, number]
    loaded.mb_cvodes_piece.argtypes += [count, number, ctypes.c_int, ctypes.c_int, pointer, pointer, pointer, WATCH]
    loaded.mb_cvodes_bind(table)
    driver.table = table  # kept alive with the driver
    return loaded


def _symbols(folder: Path, names: tuple[str, ...]):
    """The addresses of SYMBOLS in the first of the plugin files found in `folder` (its common library is loaded
    with it), as the driver's table; None where none loads or a symbol is missing."""
    for name in names:
        path = folder / name
        if not path.exists():
            continue
        try:
            plugin = ctypes.CDLL(str(path))
            addresses = [ctypes.cast(getattr(plugin, symbol), ctypes.c_void_p).value for symbol in SYMBOLS]
        except (OSError, AttributeError):
            continue
        _symbols.loaded = plugin  # never unloaded while the driver holds its addresses
        return (ctypes.c_void_p * len(SYMBOLS))(*addresses)
    return None


def _compiled() -> Path | None:
    from ..numerics.compiled import built_library, compiled_library  # the engine cache, its compiler and checks

    flags = ("-ffp-contract=off",)  # no fused multiply-adds: t = t₀ + h τ and h f rounded as CasADi's VM rounds them
    built = built_library("cvodes_driver", DRIVER.encode("utf-8"), flags)  # without writing the source (0.6 ms)
    if built is not None:
        return built
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / "cvodes_driver.c"
        source.write_bytes(DRIVER.encode("utf-8"))
        return compiled_library(source, flags)


class Problem:
    """One compiled state equation f(t, y, ...) -> (ẏ, ...) of an engine library, ready for the driver: its address,
    the sizes of the work arrays of its generated C (from CasADi's handle on it; each call of the driver has its own,
    so that runs in other threads never share them) and its inputs after (t, y), held at zero (the generalised forces
    added to the model's, as `_chunk_dae` passes them). `work_scale` > 0: the second output over `work_scale` is one
    more state (the work of the non-conservative forces, integrators.py). `runs` > 1: an ensemble's states one run
    after the other, each evaluated by the function in turn (as CasADi's map does)."""

    def __init__(self, library: Path, function: casadi.Function, work_scale: float = 0.0, runs: int = 1) -> None:
        self.handle = ctypes.CDLL(str(library))
        address = ctypes.cast(getattr(self.handle, function.name()), ctypes.c_void_p).value
        self.held = [np.zeros(function.nnz_in(i)) for i in range(function.n_in())]
        self.inputs = (ctypes.c_void_p * function.n_in())(*(array.ctypes.data for array in self.held))
        self.size = function.nnz_in(1) * runs + int(work_scale > 0)
        self.layout: tuple[int, tuple[int, ...]] | None = None  # set by `problem` from the engine
        sizes = (function.sz_arg(), function.sz_res(), function.sz_iw(), function.sz_w())
        self.spec = _Spec(
            address,
            ctypes.cast(self.inputs, ctypes.c_void_p),
            function.n_in(),
            function.n_out(),
            max(sizes[0], function.n_in()),
            max(sizes[1], function.n_out()),
            max(sizes[2], 1),
            max(sizes[3], 1),
            function.nnz_in(1),
            work_scale,
            runs,
        )


class _Spec(ctypes.Structure):
    _fields_ = [
        ("f", ctypes.c_void_p),
        ("held", ctypes.c_void_p),
        ("n_in", ctypes.c_int),
        ("n_out", ctypes.c_int),
        ("sz_arg", ctypes.c_long),
        ("sz_res", ctypes.c_long),
        ("sz_iw", ctypes.c_long),
        ("sz_w", ctypes.c_long),
        ("n", ctypes.c_long),
        ("work_scale", ctypes.c_double),
        ("runs", ctypes.c_long),
    ]


class Piece:
    """A CVODES integrator over normalised time τ ∈ [0, 1] returning at `grid`, called as CasADi's integrator
    function is (`piece(x0=..., p=(t₀, h))["xf"]`, a RuntimeError naming CVODES' flag where it gives up, `stats()`
    with nsteps, nfevals and netfails at this thread's last call's last return), so that integrators.py uses either.
    The sum over the steps of each state's estimated local error (|CVodeGetEstLocalErrors|, computing it changes no
    step) is kept where a `kept()` block asks for it."""

    def __init__(self, problem: Problem, grid, multistep: str, rtol: float, atol: float, steps: int, smallest: float):
        self.problem, self.grid = problem, np.ascontiguousarray(grid, dtype=float)
        self.lmm, self.iter = (CV_ADAMS, CV_FUNCTIONAL) if multistep == "adams" else (CV_BDF, CV_NEWTON)
        self.rtol, self.atol, self.steps, self.smallest = rtol, atol, steps, smallest
        # the last call's counts, per thread: one cached piece serves the runs of every thread (the window's jobs,
        # an ensemble of threads), and a count read from another thread's call changed the run's next pieces
        self._last = threading.local()

    def __call__(self, x0, p, watch: Watch | None = None) -> dict:
        """`watch`: called as the returns it marks are made (`Watch`); where it says so, the piece ends there, its
        states at the returns made (the same as the whole piece's: CVODES' steps before are the same)."""
        size, marks = self.problem.size, len(self.grid)
        y0 = np.ascontiguousarray(x0, dtype=float).reshape(size)
        out = np.empty((marks, size))
        watched, called = (None, _UNWATCHED) if watch is None else watch.armed(out)
        t0, h = (float(v) for v in np.asarray(p, dtype=float).ravel())
        counts, local_errors = np.zeros(COUNTS, dtype=_LONG), np.zeros(size)
        self._last.counts = counts
        flag = driver().mb_cvodes_piece(
            ctypes.byref(self.problem.spec),
            y0.ctypes.data,
            self.grid.ctypes.data,
            t0,
            h,
            out.ctypes.data,
            marks,
            self.rtol,
            self.atol,
            self.steps,
            self.smallest,
            self.lmm,
            self.iter,
            counts.ctypes.data,
            local_errors.ctypes.data,
            watched,
            called,
        )
        if watch is not None:
            watch.raised()
        kept = _KEPT.get()
        if kept is not None:
            kept.append(Kept(self.problem.layout, local_errors, int(counts[1]), flag))
        if flag < 0:
            failure = RuntimeError(f'CVode returned "{FLAG_NAMES.get(flag, flag)}" (the driver\'s flag {flag})')
            failure.returned = out[: int(counts[3])]  # the states at the returns made before it gave up
            failure.lost = int(counts[5] - counts[1])  # the evaluations since, which stats() (at a return) omits
            raise failure
        return {"xf": (out if watch is None or watch.stopped is None else out[: watch.stopped]).T}

    def stats(self) -> dict:
        """As CasADi's, with `tcur` the time (τ) of the last return, where CasADi's is CVODES' time past it."""
        last = getattr(self._last, "counts", None)  # this thread's last call
        last = np.zeros(COUNTS, dtype=_LONG) if last is None else last
        returned = int(last[3])
        reached = float(self.grid[returned - 1]) if returned else math.nan
        counts = {"nsteps": int(last[0]), "nfevals": int(last[1]), "netfails": int(last[2])}
        return {**counts, "tcur": reached}


class Watch:
    """What a piece's caller watches as CVODES returns (`Piece.__call__`): `check(states)` with the states at the
    returns made, after each of the returns `at` marks (their indices); True ends the piece there. An exception it
    raises is raised again after the driver's call."""

    def __init__(self, at: np.ndarray, check) -> None:
        self.at, self.check, self.error = np.asarray(at), check, None
        self.stopped: int | None = None  # the returns made where `check` ended the piece

    def armed(self, out: np.ndarray):
        """(the marks' flags, the callback) for the driver's call filling `out`."""
        self.stopped = None
        watched = np.zeros(len(out), dtype=np.uint8)
        watched[self.at] = 1

        def called(returned: int) -> int:
            try:
                stop = bool(self.check(out[:returned]))
            except Exception as error:  # noqa: BLE001 - raised again after the driver's call (`raised`)
                self.error, stop = error, True
            self.stopped = returned if stop else None
            return int(stop)

        self.keep = (watched, WATCH(called))  # alive over the call
        return watched.ctypes.data, self.keep[1]

    def raised(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error


@dataclass
class Kept:
    """A piece integrated by the driver: the engine's state layout (Problem.layout), the sum over its steps of each
    state's |estimated local error|, its evaluations up to its last return, and its flag (0: it reached its end)."""

    layout: tuple[int, tuple[int, ...]] | None
    local_errors: np.ndarray
    evaluations: int
    flag: int


@contextlib.contextmanager
def kept() -> Iterator[list[Kept]]:
    """The pieces the driver integrates inside the block, in order."""
    pieces: list[Kept] = []
    token = _KEPT.set(pieces)
    try:
        yield pieces
    finally:
        _KEPT.reset(token)


@functools.lru_cache(maxsize=8)
def problem(eng, work_scale: float = 0.0, runs: int = 1) -> Problem | None:
    """The driver's problem for an engine's state equation (its work rate with `work_scale`; over `runs` runs of an
    ensemble), or None where the engine's functions are not in a compiled library (or the driver cannot be had)."""
    library = getattr(getattr(eng, "compiled", None), "library", None)  # a stand-in engine has none
    if library is None or driver() is None:
        return None
    function = eng.compiled.functions["work_rate" if work_scale else "state_equation"]
    try:
        made = Problem(library, function, work_scale, runs)
    except (OSError, AttributeError):
        return None
    made.layout = _layout(eng) if runs == 1 else None
    return made


def _layout(eng) -> tuple[int, tuple[int, ...]] | None:
    """(n, the independent coordinates) where the engine's state is y = (q, q̇_ind) as they are, so that each
    state's local error is a coordinate's or an independent rate's; None where it carries orientations otherwise."""
    y = np.arange(float(eng.state_size))
    q, qd = eng.unpack(y)
    plain = np.array_equal(q[0], y[: eng.n]) and np.array_equal(qd[0], y[eng.n : eng.n + qd.shape[1]])
    return (eng.n, tuple(eng.independent)) if plain else None


DRIVER = r"""
/* One piece of a CVODES run: the engine's compiled state equation f on normalised time, dy/dτ = h f(t₀ + h τ, y),
   from τ = 0 to 1 with returns at `marks` (mbstudio/simulation/cvodes_driver.py says why each call is made). The
   SUNDIALS 2.6 interface is declared here by hand (no header is installed with CasADi) and bound at run time. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>

typedef long long mb_int;                    /* casadi_int of the generated code */
typedef int (*mb_function)(const double**, double**, mb_int*, double*, int);
typedef void* mb_vector;                     /* an N_Vector: a pointer to SUNDIALS' own structure */
typedef int (*mb_rhs_fn)(double, mb_vector, mb_vector, void*);
typedef void (*mb_error_fn)(int, const char*, const char*, char*, void*);

enum { MB_TSTOP_RETURN = 1, MB_TOO_MUCH_WORK = -1, MB_NOT_BOUND = -100, MB_NO_MEMORY = -101, MB_ONE_STEP = 2 };

static struct {
  void* (*create)(int, int);
  int (*init)(void*, mb_rhs_fn, double, mb_vector);
  int (*tolerances)(void*, double, double);
  int (*user_data)(void*, void*);
  int (*error_handler)(void*, mb_error_fn, void*);
  int (*max_steps)(void*, long);
  int (*min_step)(void*, double);
  int (*stop_time)(void*, double);
  int (*step)(void*, double, mb_vector, double*, int);
  int (*dky)(void*, double, int, mb_vector);
  int (*stats)(void*, long*, long*, long*, long*, int*, int*, double*, double*, double*, double*);
  int (*local_errors)(void*, mb_vector);
  int (*current_time)(void*, double*);
  void (*release)(void**);
  mb_vector (*make)(long, double*);
  void (*destroy)(mb_vector);
  double* (*data)(mb_vector);
} cv;
static int bound = 0;

/* the table's addresses, in the order of cvodes_driver.SYMBOLS */
void mb_cvodes_bind(void** table) {
  memcpy(&cv, table, sizeof cv);
  bound = 1;
}

typedef struct {
  mb_function f;
  const double* const* held;           /* the inputs after (t, y) */
  int n_in, n_out;
  long sz_arg, sz_res, sz_iw, sz_w;    /* the generated function's work arrays */
  long n;             /* the engine's state */
  double work_scale;  /* > 0: one more state, the second output over it */
  long runs;          /* an ensemble's runs, one after the other */
} mb_spec;

typedef struct {
  const mb_spec* spec;
  const double** arg; double** res; mb_int* iw; double* w;  /* this call's own */
  double t0, h;
} mb_problem;

static void mb_silent(int code, const char* module, const char* function, char* message, void* data) {}

/* h f(t₀ + h τ, y), rounded as CasADi's graph of it (integrators._chunk_dae) rounds it */
static int mb_rhs(double tau, mb_vector y, mb_vector ydot, void* data) {
  mb_problem* p = (mb_problem*)data;
  const mb_spec* s = p->spec;
  double t = p->t0 + p->h * tau, power = 0.0;
  double* d = cv.data(ydot);
  int k;
  long i, run;
  for (run = 0; run < s->runs; ++run) {
    p->arg[0] = &t;
    p->arg[1] = cv.data(y) + run * s->n;
    for (k = 2; k < s->n_in; ++k) p->arg[k] = s->held[k];
    p->res[0] = d + run * s->n;
    for (k = 1; k < s->n_out; ++k) p->res[k] = NULL;
    if (s->work_scale > 0 && s->n_out > 1) p->res[1] = &power;
    if (s->f(p->arg, p->res, p->iw, p->w, 0)) return -1;
  }
  for (i = 0; i < s->n * s->runs; ++i) d[i] = p->h * d[i];
  if (s->work_scale > 0) d[s->n * s->runs] = p->h * (power / s->work_scale);
  return 0;
}

static void mb_counts(void* mem, long* counts) {
  long steps = 0, evaluations = 0, setups = 0, failures = 0;
  int q_last, q_now;
  double h0, h_last, h_now, t_now;
  cv.stats(mem, &steps, &evaluations, &setups, &failures, &q_last, &q_now, &h0, &h_last, &h_now, &t_now);
  counts[0] = steps; counts[1] = evaluations; counts[2] = failures;
}

/* The states at `marks` (rows of `out`); counts: steps, evaluations and error test failures at the last return,
   the returns made, the flag (0 or CVODES' failure), the evaluations made in all (where CVODES gave up, those of
   the interval given up too). `errors` (or NULL): the sum over the steps of each state's
   |estimated local error|. `watch` (or NULL): called with the returns made after each mark where `watched` is
   nonzero; where it returns nonzero, the piece ends there (flag 0, fewer returns). Returns the flag. */
int mb_cvodes_piece(const mb_spec* spec, const double* y0, const double* marks, double t0, double h, double* out,
                    long count, double rtol, double atol, long max_steps, double smallest, int lmm, int iter,
                    long* counts, double* errors, const char* watched, int (*watch)(long)) {
  mb_problem p;
  long size = spec->n * spec->runs + (spec->work_scale > 0), since = 0, k = 0, i;
  int flag = 0;
  double reached = 0.0, last = 0.0, tn = 0.0;
  double *state, *returned, *estimate, *stopped;
  mb_vector y, back, local = NULL;
  void* mem;
  if (!bound) return MB_NOT_BOUND;
  memset(counts, 0, 8 * sizeof(long));
  p.spec = spec; p.t0 = t0; p.h = h;
  p.arg = (const double**)malloc(spec->sz_arg * sizeof(double*));
  p.res = (double**)malloc(spec->sz_res * sizeof(double*));
  p.iw = (mb_int*)malloc(spec->sz_iw * sizeof(mb_int));
  p.w = (double*)malloc(spec->sz_w * sizeof(double));
  state = (double*)malloc(4 * size * sizeof(double));
  if (state == NULL || p.arg == NULL || p.res == NULL || p.iw == NULL || p.w == NULL) {
    free(state); free(p.arg); free(p.res); free(p.iw); free(p.w);
    return MB_NO_MEMORY;
  }
  returned = state + size; estimate = returned + size; stopped = estimate + size;
  memcpy(state, y0, size * sizeof(double));
  y = cv.make(size, state);
  back = cv.make(size, returned);
  if (errors) local = cv.make(size, estimate);
  mem = cv.create(lmm, iter);
  if (mem == NULL || y == NULL || back == NULL || (errors && local == NULL)) { flag = MB_NO_MEMORY; goto done; }
  cv.error_handler(mem, mb_silent, NULL);
  cv.user_data(mem, &p);
  cv.init(mem, mb_rhs, 0.0, y);
  cv.tolerances(mem, rtol, atol);
  cv.max_steps(mem, max_steps);
  if (smallest != 0) cv.min_step(mem, smallest);
  cv.stop_time(mem, marks[count - 1]);
  memcpy(returned, y0, size * sizeof(double));
  while (k < count) {
    if (fabs(last - marks[k]) < 1e-9) {  /* the last state again, as CasADi's integrator returns it */
      memcpy(out + k * size, returned, size * sizeof(double));
      last = marks[k++];
      continue;
    }
    if (since >= max_steps) { flag = MB_TOO_MUCH_WORK; break; }  /* CV_NORMAL's mxstep test */
    flag = cv.step(mem, marks[k], back, &reached, MB_ONE_STEP);
    if (flag < 0) break;
    ++since;
    if (errors && cv.local_errors(mem, local) == 0)
      for (i = 0; i < size; ++i) errors[i] += fabs(estimate[i]);
    cv.current_time(mem, &tn);
    if (flag == MB_TSTOP_RETURN) memcpy(stopped, cv.data(back), size * sizeof(double));  /* CVodeGetDky(tstop) */
    while (k < count && (tn >= marks[k] || (flag == MB_TSTOP_RETURN && k == count - 1))) {
      if (flag == MB_TSTOP_RETURN && k == count - 1) {
        memcpy(returned, stopped, size * sizeof(double));
      } else {
        cv.dky(mem, marks[k], 0, back);
        memcpy(returned, cv.data(back), size * sizeof(double));
      }
      memcpy(out + k * size, returned, size * sizeof(double));
      last = marks[k++];
      since = 0;
      mb_counts(mem, counts);
      counts[3] = k;
      if (watch != NULL && watched[k - 1] && watch(k)) { flag = 0; goto done; }
    }
    flag = 0;
  }
done:
  counts[4] = flag;
  if (mem != NULL) {  /* every evaluation made, those after the last return included (where it gave up) */
    long all[3];
    mb_counts(mem, all);
    counts[5] = all[1];
    cv.release(&mem);
  }
  if (y != NULL) cv.destroy(y);
  if (back != NULL) cv.destroy(back);
  if (local != NULL) cv.destroy(local);
  free(state); free(p.arg); free(p.res); free(p.iw); free(p.w);
  return flag;
}
"""
