"""Müller's (2021) modular parallel-machine dynamics on the Delta: modular against general, native threads."""

from __future__ import annotations

import numpy as np

from .. import samples
from .registry import Side, benchmark, compare, compared_row

# ---------------------------------------------------------------------------------------- parallel machines
# Each row compares two bare calls by the harness (registry.compare: interleaved, medians and spreads), by the CPU
# time of the calling thread, except where either side shares its work out to other threads (native or Python):
# there both by the wall clock, which is what a parallel scheme saves and which other load on the machine disturbs.
PKM_PAPER = "paper (i7-8700, Mathematica C): 2.74 µs serial, 0.97 µs per node on 3 nodes"


@benchmark("pkm")
def _pkm(states: int) -> list[dict]:
    """Müller (2021) on the paper's Delta: the task-space inverse dynamics (inverse kinematics from the previous state,
    two Newton steps, then the efforts) by the modular method (one node per limb, eq. 144) against the general
    closed-loop method, both compiled, one state at a time and over a batch of states (at most 1 000), in numpy
    and compiled; and the parallel scheme against the whole machine as one native function: the limb nodes on
    native threads (OpenMP, one state's limbs shared out; a batch's states shared out) and on Python threads.
    Each row compares two routes of this run; `max_abs_difference` is the largest difference of their efforts."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from ..dynamics.pkm import ParallelMachine
    from ..dynamics.pkm.compiled import CompiledMachine, general_function
    from ..dynamics.pkm.general import GeneralRoute
    from ..numerics.compiled import FastCall

    pkm = ParallelMachine(samples.load("delta_3rr2rrr"))
    fast, general = CompiledMachine(pkm), FastCall(general_function(pkm))
    route = GeneralRoute(pkm.mech, pkm.platform, pkm.axes, pkm.actuated)
    count, rng = min(states, 1000), np.random.default_rng(0)
    x = pkm.position0 + 0.1 * rng.uniform(-1, 1, (count, 3))
    v, a = rng.uniform(-1, 1, (count, 3)), rng.uniform(-1, 1, (count, 3))
    limbs = pkm.inverse_kinematics(x)
    q = pkm.assembled(limbs)
    guess = [s[0] for s in limbs]
    serial, serial_map = FastCall(fast.serial), FastCall(fast.serial.map(count))
    together = np.concatenate(limbs, axis=1)
    serial_one, general_one = (serial, together[0], x[0], v[0], a[0]), (general, q[0], x[0], v[0], a[0])
    u_general, u_modular = (np.asarray(f(*args)[1]).ravel() for f, *args in (general_one, serial_one))
    one_difference = {"max_abs_difference": float(np.abs(u_modular - u_general).max())}
    workers = min(len(pkm.limbs), os.cpu_count() or 1)
    flat = [z.T.ravel("F") for z in (together, x, v, a)]
    serial_batch = (serial_map, *flat)
    u_batch = fast.inverse_dynamics_batch(x, v, a, limbs)[0]
    u_serial = serial_map(*flat)[1].reshape(count, -1)
    batched = {"states": count, "max_abs_difference": float(np.abs(u_batch - route.inverse_dynamics(q, v, a)).max())}
    general_map = FastCall(general_function(pkm).map(count))
    native = _pkm_native(fast, workers, (together, x, v, a), (serial_one, u_modular, serial_batch, u_serial))
    with ThreadPoolExecutor(workers) as pool:
        cases = (  # name, ours, reference (each a bare call: function and arguments), wall clock, states, more
            ("1 state: modular / general", serial_one, general_one, False, 1, one_difference),
            native[0],
            (
                "1 state: Python threads / serial",
                (fast.inverse_dynamics, x[0], v[0], a[0], guess, pool),
                serial_one,
                True,
                1,
            ),
            native[1],
            (
                f"{count} numpy: modular / general",
                (pkm.inverse_dynamics, limbs, v, a),
                (route.inverse_dynamics, q, v, a),
                False,
                count,
                batched,
            ),
            (
                f"{count} compiled: nodes / general",
                (fast.inverse_dynamics_batch, x, v, a, limbs),
                (general_map, q.T.ravel("F"), *flat[1:]),
                False,
                count,
                batched,
            ),
            native[2],
            (
                f"{count}: Python threads / serial",
                (fast.inverse_dynamics_batch, x, v, a, limbs, pool),
                serial_batch,
                True,
                count,
                {"states": count},
            ),
        )
        rows = [_pkm_row(*case) for case in cases]
    for r in rows:
        r.update(threads=workers, cpu_count=os.cpu_count(), reference_method=r.get("reference_method", PKM_PAPER))
    return rows


def _pkm_row(name: str, ours: tuple, reference: tuple, wall: bool, states: int, more: dict | None = None) -> dict:
    """Two bare calls (function, *arguments) compared by the harness, per state of a batch of `states`; by the
    wall clock where either side shares its work out to other threads."""
    sides = (Side(call[0], [call[1:]], per_call=states) for call in (ours, reference))
    return compared_row(f"delta pkm {name}", compare(*sides, wall=wall), **{k: v for k, v in (more or {}).items()})


def _pkm_native(fast, workers: int, states: tuple, serial: tuple) -> list[tuple]:
    """The cases (as `_pkm_row` takes them) of the limb nodes on native threads: one state and the batch
    `states` (every limb's q, x, v, a by rows) against the serial function, whose bare calls at the first state
    and on the batch and their efforts `serial` holds; and a path of as many states one at a time, natively,
    each from the previous one's coordinates (a circle of 5 cm a second), against the driver on one thread.
    Without OpenMP, the serial function against itself, the reason in the row."""
    from ..dynamics.pkm.native import NativeMachine, NativeUnavailable

    q, x, v, a = states
    (one, u_one, batch, u_batch), count, name = serial, len(x), f"native {workers} threads"
    try:
        machine = NativeMachine(fast, workers)
    except NativeUnavailable as exc:
        note = {"reference_method": f"serial only: {exc}"}
        names = (f"1 state: {name} / serial", f"path: {name} / 1 thread", f"{count}: {name} / serial")
        return [(names[0], one, one, False, 1, note), *((n, batch, batch, False, count, note) for n in names[1:])]
    path = _circle(fast.pkm.position0, 0.05, count)
    start = np.concatenate(fast.pkm.inverse_kinematics(path[0][:1]), axis=1)[0]
    one_thread = NativeMachine(fast, 1)
    path_u = [m.path(start, *path)[1] for m in (machine, one_thread)]
    return [
        (
            f"1 state: {name} / serial",
            (machine, q[0], x[0], v[0], a[0]),
            one,
            True,
            1,
            {"max_abs_difference": float(np.abs(machine(q[0], x[0], v[0], a[0])[1] - u_one).max())},
        ),
        (
            f"path: {name} / 1 thread",
            (machine.path, start, *path),
            (one_thread.path, start, *path),
            True,
            count,
            {"states": count, "max_abs_difference": float(np.abs(path_u[0] - path_u[1]).max())},
        ),
        (
            f"{count}: {name} / serial",
            (machine.batch, q, x, v, a),
            batch,
            True,
            count,
            {"states": count, "max_abs_difference": float(np.abs(machine.batch(q, x, v, a)[1] - u_batch).max())},
        ),
    ]


def _circle(start: np.ndarray, radius: float, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities and accelerations (count, 3) of one turn a second about a horizontal circle that
    passes through `start` at time 0, sampled at `count` times."""
    phase = 2 * np.pi * np.linspace(0.0, 1.0, count)[:, None]
    cos, sin, zero, rate = np.cos(phase), np.sin(phase), np.zeros_like(phase), 2 * np.pi
    x = start + radius * np.hstack([cos - 1, sin, zero])
    return x, radius * rate * np.hstack([-sin, cos, zero]), -radius * rate**2 * np.hstack([cos, sin, zero])
