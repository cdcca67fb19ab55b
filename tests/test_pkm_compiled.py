"""Müller's (2021) limb nodes compiled (dynamics/pkm/compiled.py) against the batched numpy path they are traced from,
serial and on threads, one state and in batches; the general route compiled; the `pkm` bench rows. Slow: the
nodes and the general route compile to C (15 s on a fresh machine, then cached). The nodes on native threads:
test_pkm_native.py."""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from mbstudio import benchmarks, samples
from mbstudio.dynamics.pkm import ParallelMachine
from mbstudio.dynamics.pkm.compiled import CompiledMachine, general_function

pytestmark = pytest.mark.slow


@functools.cache
def compiled(name: str) -> tuple[ParallelMachine, CompiledMachine]:
    pkm = ParallelMachine(samples.load(name))
    return pkm, CompiledMachine(pkm, iterations=4)


def states(pkm: ParallelMachine, count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = pkm.position0[pkm.axes] + 0.08 * rng.uniform(-1, 1, (count, len(pkm.axes)))
    v, a = (rng.uniform(-1, 1, x.shape) for _ in range(2))
    return x, v, a, pkm.inverse_kinematics(x)


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "irsbot2", "delta_3rus"])
def test_nodes_give_the_numpy_efforts_serially_and_on_threads(name):
    """From each limb's coordinates 1e-4 off, four Newton steps land on the solution; the efforts are the
    batched path's, whether the nodes run one after the other, on threads, or mapped over a batch."""
    pkm, fast = compiled(name)
    x, v, a, limbs = states(pkm, 6)
    expected = pkm.inverse_dynamics(limbs, v, a).efforts
    position = pkm.positions(x)
    with ThreadPoolExecutor(2) as pool:
        for k in range(len(x)):
            guess = [s[k] + 1e-4 for s in limbs]
            for executor in (None, pool):
                u, solved = fast.inverse_dynamics(position[k], v[k], a[k], guess, executor)
                assert np.abs(u - expected[k]).max() < 1e-10
                assert max(np.abs(q - s[k]).max() for q, s in zip(solved, limbs, strict=True)) < 1e-12
        u, _ = fast.inverse_dynamics_batch(position, v, a, limbs, pool)
        assert np.abs(u - expected).max() < 1e-10
    together = np.concatenate([s[0] for s in limbs])
    assert np.abs(np.asarray(fast.serial(together, position[0], v[0], a[0])[1]).ravel() - expected[0]).max() < 1e-10


def test_general_route_compiled_gives_the_modular_efforts():
    pkm, _ = compiled("delta_3rr2rrr")
    x, v, a, limbs = states(pkm, 3, seed=1)
    expected = pkm.inverse_dynamics(limbs, v, a).efforts
    q = pkm.assembled(limbs)
    general = general_function(pkm, iterations=3)
    for k in range(len(x)):
        q_solved, u = general(q[k] + 1e-5, pkm.positions(x)[k], v[k], a[k])
        assert np.abs(np.asarray(u).ravel() - expected[k]).max() < 1e-10
        assert np.abs(np.asarray(q_solved).ravel() - q[k]).max() < 1e-12


def test_bench_rows_compare_the_routes():
    rows = benchmarks.run(["pkm"], states=20)
    assert len(rows) == 8 and all(r["ratio_iqr"][0] <= r["ratio"] <= r["ratio_iqr"][1] for r in rows)
    assert all(r["max_abs_difference"] < 1e-10 for r in rows if "max_abs_difference" in r)
    assert rows[0]["name"] == "delta pkm 1 state: modular / general"
    native = [r for r in rows if "native" in r["name"]]  # the same arithmetic as the serial function
    assert len(native) == 3 and all(r["max_abs_difference"] <= 1e-13 for r in native if "max_abs_difference" in r)
