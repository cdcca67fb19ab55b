"""Müller's (2021) parallel scheme (sec. 8.2, Fig. 13) in native code: the limbs of one state on OpenMP threads, no
Python between them.

Python threads cannot pay at one state: handing a node of a few µs to a CPython thread costs tens of µs. Here the
limbs' C (CasADi's code generator, from the traced steps of `CompiledMachine`) and a small driver written below
are compiled together with OpenMP. Each limb's node is two tasks, its inverse kinematics and then its dynamics
at the solved coordinates, so that L limbs share out evenly among fewer threads (3 limbs on 2 threads: 1.5
nodes' time rather than 2); the threads take the 2L tasks in order from a common counter, each with its work
arrays on its own stack, and the calling thread ends with the platform's term and J_IKᵀ u = Σ W̄ (`gather`).
libgomp keeps its threads spinning for a while between parallel regions, so entering one again costs well
under a microsecond.

    machine = NativeMachine(CompiledMachine(pkm))  # on min(L, cores) threads; or threads=, machine.threads =
    q_solved, u = machine(q, x, v, a)        # one state: the arguments and results of `CompiledMachine.serial`
    q_solved, u = machine.batch(q, x, v, a)  # N independent states by rows, shared out state by state
    q_solved, u = machine.path(q0, x, v, a)  # N states in order, each from the previous one's coordinates

The library is compiled once per machine and cached (numerics/compiled.py: the hash of its C text, renamed into
place). The one-state call is a CasADi external function and the others go through ctypes; both release
Python's lock while they run. Without a C compiler or OpenMP, `NativeMachine` raises `NativeUnavailable` with
the reason, and `CompiledMachine.serial` (one native function) is the route to use.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from pathlib import Path
from string import Template

import casadi
import numpy as np

from ...numerics.compiled import FastCall, compiled_library
from .compiled import CompiledMachine

FLAGS = ("-fopenmp",)

# The driver's C; $-fields are numbers and the names of the functions generated with it, never model text.
DRIVER = Template(r"""
/* MB Studio: the limb nodes of one state on OpenMP threads (mbstudio/dynamics/pkm/native.py). */
#include <sched.h>
#include <stdatomic.h>

#define PKM_LIMBS $limbs
#define PKM_Q $coordinates
#define PKM_DIM $dim
#define PKM_ACT $actuated
#define PKM_NODES $outputs
#define PKM_SZ_ARG $sz_arg
#define PKM_SZ_RES $sz_res
#define PKM_SZ_IW $sz_iw
#define PKM_SZ_W $sz_w
#define PKM_SPINS 4096 /* polls of a flag before the waiting thread yields its core */

typedef int (*pkm_function)(const casadi_real**, casadi_real**, casadi_int*, casadi_real*, int);
static const pkm_function pkm_ik[PKM_LIMBS] = {$ik};
static const pkm_function pkm_dynamics[PKM_LIMBS] = {$dynamics};
static const int pkm_q_at[PKM_LIMBS] = {$q_at};
static const int pkm_out_at[PKM_LIMBS] = {$out_at};
static const casadi_real pkm_mount[PKM_LIMBS][24] = {$mounts};

/* Task t of a state: limb t's inverse kinematics for t < PKM_LIMBS, else limb t - PKM_LIMBS's dynamics at its
   solved coordinates; work arrays on the stack of the thread that runs it. A null argument reads as zeros, as in
   CasADi's calling convention. */
static int pkm_task(int t, const casadi_real* q, const casadi_real* x, const casadi_real* v, const casadi_real* a,
                    casadi_real* q_out, casadi_real* nodes) {
  const casadi_real* arg[PKM_SZ_ARG];
  casadi_real* res[PKM_SZ_RES];
  casadi_int iw[PKM_SZ_IW + 1];
  casadi_real w[PKM_SZ_W + 1];
  int k = t % PKM_LIMBS;
  if (t < PKM_LIMBS) {
    arg[0] = q ? q + pkm_q_at[k] : 0, arg[1] = x, arg[2] = pkm_mount[k], res[0] = q_out + pkm_q_at[k];
    return pkm_ik[k](arg, res, iw, w, 0);
  }
  arg[0] = q_out + pkm_q_at[k], arg[1] = v, arg[2] = a, arg[3] = pkm_mount[k];
  res[0] = nodes + pkm_out_at[k], res[1] = res[0] + PKM_DIM;
  return pkm_dynamics[k](arg, res, iw, w, 0);
}

/* The platform's term and J_IK^T u = sum of the limbs' wrenches. */
static int pkm_efforts(const casadi_real* a, const casadi_real* nodes, casadi_real* u) {
  const casadi_real* arg[PKM_SZ_ARG];
  casadi_real* res[PKM_SZ_RES];
  casadi_int iw[PKM_SZ_IW + 1];
  casadi_real w[PKM_SZ_W + 1];
  arg[0] = a, arg[1] = nodes, res[0] = u;
  return pkm_gather(arg, res, iw, w, 0);
}

/* One thread's share of a state's tasks, taken in order from a common counter; a limb's dynamics wait for its
   kinematics, which an earlier task number has, taken by a thread that waits for nothing, so all finish. */
static int pkm_share(atomic_int* next, atomic_int* solved, const casadi_real* q, const casadi_real* x,
                     const casadi_real* v, const casadi_real* a, casadi_real* q_out, casadi_real* nodes) {
  int failed = 0, t, spins;
  while ((t = atomic_fetch_add(next, 1)) < 2 * PKM_LIMBS) {
    for (spins = 0; t >= PKM_LIMBS && !atomic_load(&solved[t - PKM_LIMBS]); ++spins)
      if (spins > PKM_SPINS) sched_yield(); /* its kinematics' thread lost its core: give it back */
    failed |= pkm_task(t, q, x, v, a, q_out, nodes);
    if (t < PKM_LIMBS) atomic_store(&solved[t], 1);
  }
  return failed;
}

/* One state, its limbs' tasks shared out among `threads` threads (in order on the calling thread for fewer than
   two); 0 when every function succeeded. */
static int pkm_state(const casadi_real* q, const casadi_real* x, const casadi_real* v, const casadi_real* a,
                     casadi_real* q_out, casadi_real* u, int threads) {
  casadi_real nodes[PKM_NODES], coordinates[PKM_Q];
  atomic_int next, solved[PKM_LIMBS];
  int failed = 0, t;
  if (!q_out) q_out = coordinates;
  if (threads < 2) {
    for (t = 0; t < 2 * PKM_LIMBS; ++t) failed |= pkm_task(t, q, x, v, a, q_out, nodes);
    return failed | pkm_efforts(a, nodes, u);
  }
  atomic_init(&next, 0);
  for (t = 0; t < PKM_LIMBS; ++t) atomic_init(&solved[t], 0);
#pragma omp parallel num_threads(threads) reduction(| : failed)
  failed |= pkm_share(&next, solved, q, x, v, a, q_out, nodes);
  return failed | pkm_efforts(a, nodes, u);
}

/* `count` states stored by rows, shared out among `threads` threads a whole state at a time. */
int pkm_many(long count, const casadi_real* q, const casadi_real* x, const casadi_real* v, const casadi_real* a,
             casadi_real* q_out, casadi_real* u, int threads) {
  int failed = 0;
  long i;
#pragma omp parallel for if (threads > 1) num_threads(threads) schedule(static) reduction(| : failed)
  for (i = 0; i < count; ++i)
    failed |= pkm_state(q + i * PKM_Q, x + 3 * i, v + i * PKM_DIM, a + i * PKM_DIM, q_out + i * PKM_Q,
                        u + i * PKM_ACT, 1);
  return failed;
}

/* `count` states of a path in order, each solved from the previous one's coordinates (the first from q), each
   state's limbs shared out among `threads` threads. */
int pkm_path(long count, const casadi_real* q, const casadi_real* x, const casadi_real* v, const casadi_real* a,
             casadi_real* q_out, casadi_real* u, int threads) {
  int failed = 0;
  long i;
  for (i = 0; i < count; ++i, q = q_out, q_out += PKM_Q)
    failed |= pkm_state(q, x + 3 * i, v + i * PKM_DIM, a + i * PKM_DIM, q_out, u + i * PKM_ACT, threads);
  return failed;
}

/* The driver as a CasADi external function, (q, x, v, a, threads) -> (q, u), which CasADi calls without
   Python's lock: dense column vectors, no work arrays. */
static const casadi_int pkm_sparsity[][3] = {{PKM_Q, 1, 1}, {3, 1, 1}, {PKM_DIM, 1, 1}, {1, 1, 1}, {PKM_ACT, 1, 1}};
CASADI_SYMBOL_EXPORT casadi_int pkm_parallel_n_in(void) { return 5; }
CASADI_SYMBOL_EXPORT casadi_int pkm_parallel_n_out(void) { return 2; }
CASADI_SYMBOL_EXPORT const casadi_int* pkm_parallel_sparsity_in(casadi_int i) {
  return i == 0 ? pkm_sparsity[0] : i == 1 ? pkm_sparsity[1] : i < 4 ? pkm_sparsity[2] : pkm_sparsity[3];
}
CASADI_SYMBOL_EXPORT const casadi_int* pkm_parallel_sparsity_out(casadi_int i) {
  return i == 0 ? pkm_sparsity[0] : pkm_sparsity[4];
}
CASADI_SYMBOL_EXPORT int pkm_parallel(const casadi_real** arg, casadi_real** res, casadi_int* iw, casadi_real* w,
                                      int mem) {
  return pkm_state(arg[0], arg[1], arg[2], arg[3], res[0], res[1], arg[4] ? (int)arg[4][0] : 1);
}
""")


class NativeUnavailable(RuntimeError):
    """The native parallel driver cannot be built here (no C compiler, or no OpenMP)."""


class NativeMachine:
    """The machine's inverse dynamics with its limb nodes on native threads: one state (the arguments and
    results of `CompiledMachine.serial`), a batch of independent states, or a path's states in order."""

    def __init__(self, machine: CompiledMachine, threads: int | None = None) -> None:
        self.coordinates = sum(limb.model.n for limb in machine.pkm.limbs)
        self.dim, self.actuated = len(machine.pkm.axes), len(machine.pkm.actuated)
        library = _library(machine)
        self.function = casadi.external("pkm_parallel", str(library))  # (q, x, v, a, threads) -> (q, u)
        self._call = FastCall(self.function, held=1)
        self._c = ctypes.CDLL(str(library))  # the same library, for the batch and path drivers
        for name in ("pkm_many", "pkm_path"):
            getattr(self._c, name).argtypes = [ctypes.c_long] + [ctypes.c_void_p] * 6 + [ctypes.c_int]
        self.threads = threads or min(len(machine.pkm.limbs), os.cpu_count() or 1)

    @property
    def threads(self) -> int:
        """How many threads share out the work of a call (the calling one among them); below 2, it does all."""
        return int(self._call.args[4][0])

    @threads.setter
    def threads(self, count: int) -> None:
        with self._call.lock:
            self._call.args[4][0] = count

    def __call__(self, q, x, v, a) -> list[np.ndarray]:
        """[every limb's coordinates solved from `q` (the previous state's), the actuator efforts] at the task
        position x (3), velocity v and acceleration a (δ_p), the limbs' steps shared out among the threads."""
        return self._call(q, x, v, a)

    def batch(self, q, x, v, a) -> tuple[np.ndarray, np.ndarray]:
        """As the call for N independent states by rows: q (N, n), x (N, 3), v and a (N, δ_p) -> q (N, n),
        u (N, n_act); the states shared out among the threads."""
        return self._run("pkm_many", q, x, v, a, (len(x), self.coordinates))

    def path(self, q, x, v, a) -> tuple[np.ndarray, np.ndarray]:
        """As `batch` for the N states of a path in order, each solved from the previous one's coordinates and
        the first from q (n,): each state's limbs shared out among the threads."""
        return self._run("pkm_path", q, x, v, a, (self.coordinates,))

    def _run(self, name: str, q, x, v, a, q_shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """The C driver `name` on the arguments, their shapes checked first (it reads as many numbers as they
        should hold)."""
        inputs = [np.ascontiguousarray(z, dtype=float) for z in (q, x, v, a)]
        count = len(inputs[1])
        shapes = (q_shape, (count, 3), (count, self.dim), (count, self.dim))
        for label, z, shape in zip(("q", "x", "v", "a"), inputs, shapes, strict=True):
            if z.shape != shape:
                raise ValueError(f"{label} has shape {z.shape} where {shape} is needed")
        q_out, u = np.empty((count, self.coordinates)), np.empty((count, self.actuated))
        pointers = [z.ctypes.data for z in (*inputs, q_out, u)]
        if getattr(self._c, name)(count, *pointers, self.threads) != 0:
            raise RuntimeError("a compiled limb node failed (CasADi's generated code returned an error)")
        return q_out, u


def _library(machine: CompiledMachine) -> Path:
    """The nodes, the gather step and the driver compiled together with OpenMP into a shared library (cached)."""
    functions = [*(f for steps in machine.steps.values() for f in steps), machine.gather()]
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / "pkm_parallel.c"
        generator = casadi.CodeGenerator(source.name, {"with_header": False})
        for function in functions:
            generator.add(function)
        generator.generate(work + os.sep)
        source.write_text(source.read_text(encoding="utf-8") + _driver(machine, functions), encoding="utf-8")
        library = compiled_library(source, FLAGS)
    if library is None:
        raise NativeUnavailable("no C compiler with OpenMP (cc -fopenmp) could build the limbs' parallel driver")
    return library


def _driver(machine: CompiledMachine, functions: list[casadi.Function]) -> str:
    """The driver's C for this machine: its sizes, each limb's steps, offsets and mount frame."""
    pkm, dim = machine.pkm, len(machine.pkm.axes)
    steps = [machine.steps[id(limb.model)] for limb in pkm.limbs]
    sizes = [limb.model.n for limb in pkm.limbs]
    outputs = [dim * (1 + len(limb.model.actuated)) for limb in pkm.limbs]
    return DRIVER.substitute(
        limbs=len(pkm.limbs),
        coordinates=sum(sizes),
        dim=dim,
        actuated=len(pkm.actuated),
        outputs=sum(outputs),
        sz_arg=max(f.sz_arg() for f in functions),
        sz_res=max(f.sz_res() for f in functions),
        sz_iw=max(f.sz_iw() for f in functions),
        sz_w=max(f.sz_w() for f in functions),
        ik=", ".join(ik.name() for ik, _ in steps),
        dynamics=", ".join(dynamics.name() for _, dynamics in steps),
        q_at=", ".join(str(n) for n in np.cumsum([0, *sizes[:-1]])),
        out_at=", ".join(str(n) for n in np.cumsum([0, *outputs[:-1]])),
        mounts=", ".join("{" + ", ".join(repr(float(c)) for c in m) + "}" for m in machine.mounts),
    )
