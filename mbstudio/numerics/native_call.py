"""Calling compiled functions from Python with little more than the native code's cost.

CasADi's own call converts every argument and result (25 µs); its buffer interface, as FastCall uses it, still
copies them in and out under a lock (2.5 µs). Where Python's and numpy's headers are found, the library of
compiled functions also gets a small CPython extension (this module writes its C): each function `name` becomes

    name(*inputs) -> array or tuple of arrays   # new arrays, as numpy's and Pinocchio's calls return
    name_into(*inputs, *outputs) -> None         # the caller's own float64 buffers are written
    name_rows(*inputs, *outputs) -> None         # the same over K rows: arrays (K, size) evaluated row by row

with METH_FASTCALL arguments passed without a copy: a float64 numpy array's memory is taken directly (a few tests),
any other contiguous float64 buffer through the buffer protocol, a Python float for a one-number input; the work
arrays are static (the interpreter's lock is held, so calls do not overlap). A dense output of shape (r, c) is an
array (r,) when c = 1, else (r, c) in column order (CasADi's). In `name_rows` the first output's length gives K, and
an input of one row's size is held the same for every row (the simulation's outputs at all their samples in one
call). Without the headers FastCall serves, with the same calling convention (`calls`).
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path

import casadi
import numpy as np

MODULE_PREFIX = "mbstudio_native_"


@functools.cache
def include_flags() -> tuple[str, ...] | None:
    """-I options for Python's and numpy's headers, or None when either is missing."""
    import sysconfig  # a build's only

    python = sysconfig.get_paths().get("include")
    numpy_include = np.get_include()
    if not python or not (Path(python) / "Python.h").exists():
        return None
    if not (Path(numpy_include) / "numpy" / "arrayobject.h").exists():
        return None
    return ("-DMBSTUDIO_PYTHON", f"-I{python}", f"-I{numpy_include}")


def extension_source(functions: list[casadi.Function], module: str) -> str:
    """The C of the extension module `module` for the functions (appended to CasADi's code of them)."""
    sz_arg = max(f.sz_arg() for f in functions)
    sz_res = max(f.sz_res() for f in functions)
    sz_iw = max(max(f.sz_iw() for f in functions), 1)
    sz_w = max(max(f.sz_w() for f in functions), 1)
    specs, methods = [], []
    for f in functions:
        name = f.name()
        nnz_in = ", ".join(str(f.nnz_in(i)) for i in range(f.n_in()))
        rows = ", ".join(str(f.size1_out(i)) for i in range(f.n_out()))
        cols = ", ".join(str(f.size2_out(i)) for i in range(f.n_out()))
        specs.append(
            f"static const casadi_int mb_nnz_{name}[] = {{{nnz_in}}};\n"
            f"static const casadi_int mb_rows_{name}[] = {{{rows}}};\n"
            f"static const casadi_int mb_cols_{name}[] = {{{cols}}};\n"
            f'static const mb_spec mb_spec_{name} = {{"{name}", {name}, {f.n_in()}, {f.n_out()}, '
            f"mb_nnz_{name}, mb_rows_{name}, mb_cols_{name}}};\n"
            f"static PyObject* mb_call_{name}(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {{\n"
            f"  return mb_run(&mb_spec_{name}, args, nargs, 0);\n}}\n"
            f"static PyObject* mb_into_{name}(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {{\n"
            f"  return mb_run(&mb_spec_{name}, args, nargs, 1);\n}}\n"
            f"static PyObject* mb_many_{name}(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {{\n"
            f"  return mb_run(&mb_spec_{name}, args, nargs, 2);\n}}\n"
        )
        methods.append(f'  {{"{name}", (PyCFunction)(void(*)(void))mb_call_{name}, METH_FASTCALL, NULL}},')
        methods.append(f'  {{"{name}_into", (PyCFunction)(void(*)(void))mb_into_{name}, METH_FASTCALL, NULL}},')
        methods.append(f'  {{"{name}_rows", (PyCFunction)(void(*)(void))mb_many_{name}, METH_FASTCALL, NULL}},')
    return (
        _TEMPLATE.replace("@SZ_ARG@", str(sz_arg))
        .replace("@SZ_RES@", str(sz_res))
        .replace("@SZ_IW@", str(sz_iw))
        .replace("@SZ_W@", str(sz_w))
        .replace("@SPECS@", "".join(specs))
        .replace("@METHODS@", "\n".join(methods))
        .replace("@MODULE@", module)
    )


def load_extension(library: Path, module: str):
    """The extension module inside a verified library, or None when it has none or cannot be loaded."""
    try:
        loader = importlib.machinery.ExtensionFileLoader(module, str(library))
        spec = importlib.util.spec_from_loader(module, loader)
        extension = importlib.util.module_from_spec(spec)
        loader.exec_module(extension)
    except (ImportError, OSError):
        return None
    return extension


def calls(functions: dict[str, casadi.Function], extension=None) -> dict[str, Callable]:
    """`name`, `name_into` and `name_rows` for each function: the extension's, or FastCall's with the same
    convention."""
    if extension is not None:
        return {key: getattr(extension, key) for name in functions for key in (name, f"{name}_into", f"{name}_rows")}
    out: dict[str, Callable] = {}
    for name, function in functions.items():
        out[name], out[f"{name}_into"], out[f"{name}_rows"] = _fallback(function)
    return out


def _fallback(function: casadi.Function) -> tuple[Callable, Callable, Callable]:
    call = FastCall(function)
    shapes = [function.size_out(i) for i in range(function.n_out())]

    def shaped(values: list[np.ndarray]) -> list[np.ndarray]:
        pairs = zip(values, shapes, strict=True)
        return [v if cols == 1 else v.reshape(rows, cols, order="F") for v, (rows, cols) in pairs]

    def new(*inputs):
        values = shaped(call(*inputs))
        return values[0] if len(values) == 1 else tuple(values)

    def into(*arguments) -> None:
        count = function.n_in()
        for out, value in zip(arguments[count:], call(*arguments[:count]), strict=True):
            np.copyto(out.reshape(-1, order="F") if out.ndim > 1 else out, value)

    def rows(*arguments) -> None:
        count, name = function.n_in(), function.name()
        outputs = [_row_view(a, function.nnz_out(i), name) for i, a in enumerate(arguments[count:])]
        inputs = [_row_input(a, function.nnz_in(i)) for i, a in enumerate(arguments[:count])]
        for k in range(next((len(o) for o in outputs if o is not None), 0)):
            for out, value in zip(outputs, call(*(a[k if len(a) > 1 else 0] for a in inputs)), strict=True):
                if out is not None:
                    out[k] = value

    return new, into, rows


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


def _row_input(array, size: int) -> np.ndarray:
    """An input as rows of `size` numbers (one row: held for every row)."""
    return np.asarray(array, dtype=float).reshape(-1, size) if size else np.zeros((1, 0))


def _row_view(array, size: int, name: str) -> np.ndarray | None:
    """The caller's output as rows of `size` numbers, a view that writes the caller's memory (None when empty)."""
    if not (isinstance(array, np.ndarray) and array.dtype == np.float64 and array.flags.c_contiguous):
        raise ValueError(f"{name}_rows: an output takes rows of {size} float64 values (a C-ordered array)")
    if not array.flags.writeable or (size and array.size % size):
        raise ValueError(f"{name}_rows: an output takes rows of {size} float64 values (a writable C-ordered array)")
    return array.reshape(-1, size) if size else None


_TEMPLATE = r"""
#ifdef MBSTUDIO_PYTHON
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

typedef int (*mb_function)(const casadi_real**, casadi_real**, casadi_int*, casadi_real*, int);
typedef struct {
  const char* name; mb_function f; int n_in, n_out;
  const casadi_int *nnz_in, *rows_out, *cols_out;
} mb_spec;

/* the interpreter's lock is held during a call, so one set of work arrays serves every function */
static const casadi_real* mb_arg[@SZ_ARG@];
static casadi_real* mb_res[@SZ_RES@];
static casadi_int mb_iw[@SZ_IW@];
static casadi_real mb_w[@SZ_W@];

static int mb_float64(const Py_buffer* view) {
  const char* f = view->format;
  return f != NULL && (strcmp(f, "d") == 0 || strcmp(f, "<d") == 0 || strcmp(f, "=d") == 0 || strcmp(f, "@d") == 0);
}

/* a numpy array of float64 in this machine's byte order, aligned, contiguous (in rows: C-ordered, row after row)
   and writable when written, of `count` numbers: its memory is taken directly (a few tests, where the buffer
   protocol costs about 0.1 µs an argument); else NULL */
static casadi_real* mb_plain(PyObject* o, Py_ssize_t count, int writable, int rows) {
  if (!PyArray_Check(o)) return NULL;
  PyArrayObject* a = (PyArrayObject*)o;
  if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a) || !PyArray_ISALIGNED(a)) return NULL;
  if (!(PyArray_IS_C_CONTIGUOUS(a) || (!rows && PyArray_IS_F_CONTIGUOUS(a))) || PyArray_SIZE(a) != count) return NULL;
  if (writable && !PyArray_ISWRITEABLE(a)) return NULL;
  return (casadi_real*)PyArray_DATA(a);
}

/* a ValueError naming the function, the argument, what it takes and what was `found` */
static const char* mb_suffix[] = {"", "_into", "_rows"};

static int mb_refuse(const mb_spec* s, int i, Py_ssize_t count, int writable, int mode, const char* found) {
  PyErr_Format(PyExc_ValueError, "%s%s: %s %d takes %zd float64 values (a contiguous%s%s array), not %s", s->name,
               mb_suffix[mode], writable ? "output" : "argument", i + 1, count, mode == 2 ? " C-ordered" : "",
               writable ? " writable" : "", found);
  return -1;
}

/* one argument's memory: a float for a one-number input, else a contiguous float64 array or buffer of `count`
   numbers, or of `single` numbers (in rows, an input held the same for every row; 0 outside rows); `taken` is the
   count found */
static int mb_take(const mb_spec* s, PyObject* o, int i, Py_ssize_t count, Py_ssize_t single, int writable,
                   int mode, Py_buffer* view, int* held, double* number, casadi_real** memory, Py_ssize_t* taken) {
  *held = 0;
  *taken = count;
  if (!writable && PyFloat_Check(o) && (count == 1 || single == 1)) {
    *number = PyFloat_AS_DOUBLE(o); *memory = number; *taken = 1; return 0;
  }
  if ((*memory = mb_plain(o, count, writable, mode == 2)) != NULL) return 0;
  if (single && (*memory = mb_plain(o, single, writable, mode == 2)) != NULL) { *taken = single; return 0; }
  int order = mode == 2 ? PyBUF_C_CONTIGUOUS : PyBUF_ANY_CONTIGUOUS;
  if (PyObject_GetBuffer(o, view, order | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
    PyErr_Clear();  /* the buffer's own words name no function: ours follow */
    return mb_refuse(s, i, count, writable, mode, Py_TYPE(o)->tp_name);
  }
  *held = 1;
  Py_ssize_t given = view->len / (Py_ssize_t)sizeof(double);
  int whole = view->len % (Py_ssize_t)sizeof(double) == 0;
  if (mb_float64(view) && whole && (given == count || (single && given == single))) {
    *memory = (casadi_real*)view->buf; *taken = given; return 0;
  }
  char found[64];
  snprintf(found, sizeof found, "%zd bytes of '%.8s'", view->len, view->format ? view->format : "?");
  return mb_refuse(s, i, count, writable, mode, found);
}

/* the rows of a call over rows: the length of its first output that is not empty, over one row's (0: none) */
static Py_ssize_t mb_rows(const mb_spec* s, PyObject* const* outputs) {
  int k;
  for (k = 0; k < s->n_out; ++k) {
    Py_ssize_t size = s->rows_out[k] * s->cols_out[k], rows = -1;
    if (size == 0) continue;
    Py_buffer view;
    if (PyObject_GetBuffer(outputs[k], &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
      PyErr_Clear();
      return mb_refuse(s, k, size, 1, 2, Py_TYPE(outputs[k])->tp_name);
    }
    if (mb_float64(&view) && view.len % (size * (Py_ssize_t)sizeof(double)) == 0)
      rows = view.len / (size * (Py_ssize_t)sizeof(double));
    else
      PyErr_Format(PyExc_ValueError, "%s_rows: output %d takes rows of %zd float64 values (a contiguous C-ordered "
                   "writable array), not %zd bytes of '%.8s'", s->name, k + 1, size, view.len,
                   view.format ? view.format : "?");
    PyBuffer_Release(&view);
    return rows;
  }
  return 0;
}

/* mode 0: new arrays; 1: into the caller's buffers; 2: into the caller's buffers, once per row (every argument holds
   rows one after the other; an input may hold one row for all) */
static PyObject* mb_run(const mb_spec* s, PyObject* const* args, Py_ssize_t nargs, int mode) {
  Py_ssize_t expected = s->n_in + (mode ? s->n_out : 0), rows = 1, row, taken;
  if (nargs != expected) {
    PyErr_Format(PyExc_TypeError, "%s%s takes %zd arguments (%zd given)", s->name, mb_suffix[mode], expected, nargs);
    return NULL;
  }
  Py_buffer views[16]; int held[16]; double numbers[16];
  PyObject* made[16];
  casadi_real* memory[16];
  Py_ssize_t step[16];
  int k, failed = 0, n = s->n_in + s->n_out;
  if (n > 16) { PyErr_SetString(PyExc_ValueError, "too many arguments"); return NULL; }
  if (mode == 2 && (rows = mb_rows(s, args + s->n_in)) < 0) return NULL;
  for (k = 0; k < n; ++k) { held[k] = 0; made[k] = NULL; }
  for (k = 0; k < s->n_in && !failed; ++k) {
    Py_ssize_t nnz = s->nnz_in[k];
    failed = mb_take(s, args[k], k, nnz * rows, mode == 2 ? nnz : 0, 0, mode, &views[k], &held[k], &numbers[k],
                     &memory[k], &taken);
    step[k] = taken == nnz * rows ? nnz : 0;
  }
  for (k = 0; k < s->n_out && !failed; ++k) {
    casadi_int r = s->rows_out[k], c = s->cols_out[k];
    step[s->n_in + k] = r * c;
    if (mode) {
      failed = mb_take(s, args[s->n_in + k], k, r * c * rows, 0, 1, mode, &views[s->n_in + k],
                       &held[s->n_in + k], NULL, &memory[s->n_in + k], &taken);
    } else {
      npy_intp dims[2] = {r, c};
      made[k] = c == 1 ? PyArray_SimpleNew(1, dims, NPY_DOUBLE)
                       : PyArray_New(&PyArray_Type, 2, dims, NPY_DOUBLE, NULL, NULL, 0, NPY_ARRAY_F_CONTIGUOUS, NULL);
      if (made[k] == NULL) failed = 1;
      else memory[s->n_in + k] = (casadi_real*)PyArray_DATA((PyArrayObject*)made[k]);
    }
  }
  for (row = 0; row < rows && !failed; ++row) {
    for (k = 0; k < s->n_in; ++k) mb_arg[k] = memory[k] + row * step[k];
    for (k = 0; k < s->n_out; ++k) mb_res[k] = memory[s->n_in + k] + row * step[s->n_in + k];
    if (s->f(mb_arg, mb_res, mb_iw, mb_w, 0)) {
      PyErr_Format(PyExc_RuntimeError, "%s: the compiled code returned an error", s->name);
      failed = 1;
    }
  }
  for (k = 0; k < n; ++k) if (held[k]) PyBuffer_Release(&views[k]);
  if (failed) { for (k = 0; k < s->n_out; ++k) Py_XDECREF(made[k]); return NULL; }
  if (mode) Py_RETURN_NONE;
  if (s->n_out == 1) return made[0];
  PyObject* out = PyTuple_New(s->n_out);
  if (out == NULL) { for (k = 0; k < s->n_out; ++k) Py_XDECREF(made[k]); return NULL; }
  for (k = 0; k < s->n_out; ++k) PyTuple_SET_ITEM(out, k, made[k]);
  return out;
}

@SPECS@
static PyMethodDef mb_methods[] = {
@METHODS@
  {NULL, NULL, 0, NULL}
};

static struct PyModuleDef mb_module = {PyModuleDef_HEAD_INIT, "@MODULE@", NULL, -1, mb_methods};

PyMODINIT_FUNC PyInit_@MODULE@(void) {
  import_array();
  return PyModule_Create(&mb_module);
}
#endif
"""
