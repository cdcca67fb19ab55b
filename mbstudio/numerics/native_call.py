"""Calling compiled functions from Python with little more than the native code's cost (issue 19, item 3).

CasADi's own call converts every argument and result (25 µs); its buffer interface, as FastCall uses it, still
copies them in and out under a lock (2.5 µs). Where Python's and numpy's headers are found, the library of
compiled functions also gets a small CPython extension (this module writes its C): each function `name` becomes

    name(*inputs) -> array or tuple of arrays   # new arrays, as numpy's and Pinocchio's calls return
    name_into(*inputs, *outputs) -> None         # the caller's own float64 buffers are written

with METH_FASTCALL arguments read through the buffer protocol (no copy: the arrays' memory is passed to the code),
Python floats taken for one-number inputs, and the work arrays static (the interpreter's lock is held, so calls do
not overlap). A dense output of shape (r, c) is an array (r,) when c = 1, else (r, c) in column order (CasADi's).
Without the headers FastCall serves, with the same calling convention (`calls`).
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import sysconfig
from collections.abc import Callable
from pathlib import Path

import casadi
import numpy as np

MODULE_PREFIX = "mbstudio_native_"


@functools.cache
def include_flags() -> tuple[str, ...] | None:
    """-I options for Python's and numpy's headers, or None when either is missing."""
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
        )
        methods.append(f'  {{"{name}", (PyCFunction)(void(*)(void))mb_call_{name}, METH_FASTCALL, NULL}},')
        methods.append(f'  {{"{name}_into", (PyCFunction)(void(*)(void))mb_into_{name}, METH_FASTCALL, NULL}},')
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
    """`name` and `name_into` for each function: the extension's, or FastCall's with the same convention."""
    if extension is not None:
        return {key: getattr(extension, key) for name in functions for key in (name, f"{name}_into")}
    out: dict[str, Callable] = {}
    for name, function in functions.items():
        out[name], out[f"{name}_into"] = _fallback(function)
    return out


def _fallback(function: casadi.Function) -> tuple[Callable, Callable]:
    from .compiled import FastCall

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

    return new, into


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

/* one argument's memory: a float for one number, else a contiguous float64 buffer of exactly nnz numbers */
static int mb_take(const mb_spec* s, PyObject* o, int i, casadi_int nnz, int writable, Py_buffer* view, int* held,
                   double* number, const casadi_real** in, casadi_real** out) {
  *held = 0;
  if (!writable && nnz == 1 && PyFloat_Check(o)) { *number = PyFloat_AS_DOUBLE(o); *in = number; return 0; }
  if (PyObject_GetBuffer(o, view, PyBUF_ANY_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
    return -1;
  *held = 1;
  if (!mb_float64(view) || view->len != (Py_ssize_t)(nnz * sizeof(double))) {
    PyErr_Format(PyExc_ValueError, "%s: %s %d takes %lld float64 values (a contiguous array), not %zd bytes of '%s'",
                 s->name, writable ? "output" : "argument", i + 1, (long long)nnz, view->len,
                 view->format ? view->format : "?");
    return -1;
  }
  if (writable) *out = (casadi_real*)view->buf; else *in = (const casadi_real*)view->buf;
  return 0;
}

static PyObject* mb_run(const mb_spec* s, PyObject* const* args, Py_ssize_t nargs, int into) {
  Py_ssize_t expected = s->n_in + (into ? s->n_out : 0);
  if (nargs != expected) {
    PyErr_Format(PyExc_TypeError, "%s%s takes %zd arguments (%zd given)", s->name, into ? "_into" : "", expected,
                 nargs);
    return NULL;
  }
  Py_buffer views[16]; int held[16]; double numbers[16];
  PyObject* made[16];
  int k, failed = 0, n = s->n_in + s->n_out;
  if (n > 16) { PyErr_SetString(PyExc_ValueError, "too many arguments"); return NULL; }
  for (k = 0; k < n; ++k) { held[k] = 0; made[k] = NULL; }
  for (k = 0; k < s->n_in && !failed; ++k)
    failed = mb_take(s, args[k], k, s->nnz_in[k], 0, &views[k], &held[k], &numbers[k], &mb_arg[k], NULL);
  for (k = 0; k < s->n_out && !failed; ++k) {
    casadi_int r = s->rows_out[k], c = s->cols_out[k];
    if (into) {
      failed = mb_take(s, args[s->n_in + k], k, r * c, 1, &views[s->n_in + k], &held[s->n_in + k], NULL, NULL,
                       &mb_res[k]);
    } else {
      npy_intp dims[2] = {r, c};
      made[k] = c == 1 ? PyArray_SimpleNew(1, dims, NPY_DOUBLE)
                       : PyArray_New(&PyArray_Type, 2, dims, NPY_DOUBLE, NULL, NULL, 0, NPY_ARRAY_F_CONTIGUOUS, NULL);
      if (made[k] == NULL) failed = 1;
      else mb_res[k] = (casadi_real*)PyArray_DATA((PyArrayObject*)made[k]);
    }
  }
  if (!failed && s->f(mb_arg, mb_res, mb_iw, mb_w, 0)) {
    PyErr_Format(PyExc_RuntimeError, "%s: the compiled code returned an error", s->name);
    failed = 1;
  }
  for (k = 0; k < n; ++k) if (held[k]) PyBuffer_Release(&views[k]);
  if (failed) { for (k = 0; k < s->n_out; ++k) Py_XDECREF(made[k]); return NULL; }
  if (into) Py_RETURN_NONE;
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
