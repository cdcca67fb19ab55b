"""Müller's (2021) limbs on native threads (dynamics/pkm/native.py) against the whole machine as one native function
(`CompiledMachine.serial`): the same coordinates and efforts to 1e-13 at one state on one to three threads, over a
batch and along a path; and the reason given where the driver cannot be built. The Delta runs by default (two
seconds, once its C is cached), the other machines with the slow checks."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mbstudio import benchmarks, samples
from mbstudio.dynamics.pkm import ParallelMachine
from mbstudio.dynamics.pkm.compiled import CompiledMachine
from mbstudio.dynamics.pkm.native import NativeMachine, NativeUnavailable
from mbstudio.numerics import compiled as compiled_module
from mbstudio.numerics.compiled import FastCall

from .conftest import slow_for

TOLERANCE = 1e-13


@functools.cache
def machine(name: str) -> CompiledMachine:
    return CompiledMachine(ParallelMachine(samples.load(name)))


def native(name: str) -> NativeMachine:
    try:
        return NativeMachine(machine(name))
    except NativeUnavailable as exc:
        pytest.skip(str(exc))


def states(pkm: ParallelMachine, count: int):
    """Every limb's coordinates 1e-4 off the solution (the Newton steps have work to do), the platform origins,
    velocities and accelerations, by rows."""
    rng = np.random.default_rng(3)
    x = pkm.position0[pkm.axes] + 0.05 * rng.uniform(-1, 1, (count, len(pkm.axes)))
    v, a = (rng.uniform(-1, 1, x.shape) for _ in range(2))
    q = np.concatenate(pkm.inverse_kinematics(x), axis=1) + 1e-4
    return q, pkm.positions(x), v, a


@pytest.mark.parametrize("name", slow_for(["delta_3rr2rrr", "irsbot2", "delta_3rus"], set()))
def test_native_threads_give_the_serial_function(name):
    parallel, fast = native(name), machine(name)
    serial = FastCall(fast.serial)
    q, x, v, a = states(fast.pkm, 4)
    expected = [serial(*state) for state in zip(q, x, v, a, strict=True)]
    for k, (q_k, u_k) in enumerate(expected):
        for parallel.threads in (1, 2, 3):
            q_solved, u = parallel(q[k], x[k], v[k], a[k])
            assert np.abs(q_solved - q_k).max() <= TOLERANCE and np.abs(u - u_k).max() <= TOLERANCE
    parallel.threads = 2
    q_batch, u_batch = parallel.batch(q, x, v, a)
    assert np.abs(q_batch - [e[0] for e in expected]).max() <= TOLERANCE
    assert np.abs(u_batch - [e[1] for e in expected]).max() <= TOLERANCE
    q_path, u_path = parallel.path(q[0], x, v, a)  # each state from the one before
    previous = q[0]
    for k in range(len(x)):
        previous, u_k = serial(previous, x[k], v[k], a[k])
        assert np.abs(q_path[k] - previous).max() <= TOLERANCE and np.abs(u_path[k] - u_k).max() <= TOLERANCE


def test_arguments_of_the_wrong_shape_are_refused_before_the_c_reads_them():
    parallel = native("delta_3rr2rrr")
    q, x, v, a = states(machine("delta_3rr2rrr").pkm, 3)
    with pytest.raises(ValueError, match="q has shape"):
        parallel.path(q, x, v, a)  # a path starts from one state's coordinates
    with pytest.raises(ValueError, match="v has shape"):
        parallel.batch(q, x, v[:2], a)


def test_without_a_compiler_the_reason_is_given_and_the_bench_keeps_the_serial_function(monkeypatch):
    fast = machine("delta_3rr2rrr")
    monkeypatch.setattr(compiled_module.shutil, "which", lambda name: None)
    with pytest.raises(NativeUnavailable, match="OpenMP"):
        NativeMachine(fast)
    u = np.zeros((2, 3))
    serial = ((np.add, 1.0, 2.0), u[0], (np.add, 3.0, 4.0), u)  # the serial function's calls and efforts
    rows = benchmarks.pkm._pkm_native(fast, 2, (np.zeros((2, 18)), *np.zeros((3, 2, 3))), serial)
    assert [r[0] for r in rows] == [
        "1 state: native 2 threads / serial",
        "path: native 2 threads / 1 thread",
        "2: native 2 threads / serial",
    ]
    assert all(r[1] == r[2] and "serial only" in r[-1]["reference_method"] for r in rows)
