"""Müller's (2021) modular parallel-machine dynamics on the Delta: modular against general, native threads."""

from __future__ import annotations

import numpy as np

from .. import samples
from .registry import Side, benchmark, measure, row

# ---------------------------------------------------------------------------------------- parallel machines
# Each time is the median of the harness's samples (registry.measure), the routes timed one after the other; the
# CPU time of the calling thread, except where work is shared out to other threads (native or Python): there the
# wall clock, which is what a parallel scheme saves and which other load on the machine disturbs.
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
    one = {
        "general": _seconds(general, q[0], x[0], v[0], a[0]),
        "modular": _seconds(serial, together[0], x[0], v[0], a[0]),
    }
    u_general, u_modular = (
        np.asarray(f()[1]).ravel()
        for f in (lambda: general(q[0], x[0], v[0], a[0]), lambda: serial(together[0], x[0], v[0], a[0]))
    )
    workers = min(len(pkm.limbs), os.cpu_count() or 1)
    with ThreadPoolExecutor(workers) as pool:
        one["python threads"] = _seconds(fast.inverse_dynamics, x[0], v[0], a[0], guess, pool, wall=True)
        batch = {
            "numpy general": _seconds(route.inverse_dynamics, q, v, a),
            "numpy modular": _seconds(pkm.inverse_dynamics, limbs, v, a),
            "nodes serial": _seconds(fast.inverse_dynamics_batch, x, v, a, limbs),
            "python threads": _seconds(fast.inverse_dynamics_batch, x, v, a, limbs, pool, wall=True),
            "serial": _seconds(serial_map, *(z.T.ravel("F") for z in (together, x, v, a))),
        }
    general_map = FastCall(general_function(pkm).map(count))
    batch["compiled general"] = _seconds(general_map, q.T.ravel("F"), *(z.T.ravel("F") for z in (x, v, a)))
    u_batch = fast.inverse_dynamics_batch(x, v, a, limbs)[0]
    difference = float(np.abs(u_batch - route.inverse_dynamics(q, v, a)).max())
    extra = {"threads": workers, "cpu_count": os.cpu_count(), "reference_method": PKM_PAPER}
    one_difference = {"max_abs_difference": float(np.abs(u_modular - u_general).max())}
    per_state = {key: seconds / count for key, seconds in batch.items()}
    batched = {"states": count, "max_abs_difference": difference}
    u_serial = serial_map(*(z.T.ravel("F") for z in (together, x, v, a)))[1].reshape(count, -1)
    serial_times = (one["modular"], u_modular, per_state["serial"], u_serial)
    native = _pkm_native(fast, workers, (together, x, v, a), serial_times)
    cases = (  # name, ours, reference, what else the row says
        ("1 state: modular / general", one["modular"], one["general"], one_difference),
        native[0],
        ("1 state: Python threads / serial", one["python threads"], one["modular"], {}),
        native[1],
        (f"{count} numpy: modular / general", per_state["numpy modular"], per_state["numpy general"], batched),
        (f"{count} compiled: nodes / general", per_state["nodes serial"], per_state["compiled general"], batched),
        native[2],
        (f"{count}: Python threads / serial", per_state["python threads"], per_state["serial"], {"states": count}),
    )
    return [row(f"delta pkm {name}", ours, reference, **{**extra, **more}) for name, ours, reference, more in cases]


def _pkm_native(fast, workers: int, states: tuple, serial: tuple) -> list[tuple]:
    """The rows of the limb nodes on native threads (name, ours, reference, more): one state and the batch
    `states` (every limb's q, x, v, a by rows) against the serial function, whose time and efforts at the first
    state and per state of the batch `serial` holds; and a path of as many states one at a time, natively, each
    from the previous one's coordinates (a circle of 5 cm a second), against the driver on one thread. Without
    OpenMP the reason, in the serial times."""
    from ..dynamics.pkm.native import NativeMachine, NativeUnavailable

    q, x, v, a = states
    (one, u_one, per_state, u_batch), count, name = serial, len(x), f"native {workers} threads"
    try:
        machine = NativeMachine(fast, workers)
    except NativeUnavailable as exc:
        note = {"reference_method": f"serial only: {exc}"}
        names = (f"1 state: {name} / serial", f"path: {name} / 1 thread", f"{count}: {name} / serial")
        return [(names[0], one, one, note), *((n, per_state, per_state, note) for n in names[1:])]
    path = _circle(fast.pkm.position0, 0.05, count)
    start = np.concatenate(fast.pkm.inverse_kinematics(path[0][:1]), axis=1)[0]
    one_thread = NativeMachine(fast, 1)
    path_u = [m.path(start, *path)[1] for m in (machine, one_thread)]
    return [
        (
            f"1 state: {name} / serial",
            _seconds(machine, q[0], x[0], v[0], a[0], wall=True),
            one,
            {"max_abs_difference": float(np.abs(machine(q[0], x[0], v[0], a[0])[1] - u_one).max())},
        ),
        (
            f"path: {name} / 1 thread",
            _seconds(machine.path, start, *path, wall=True) / count,
            _seconds(one_thread.path, start, *path, wall=True) / count,
            {"states": count, "max_abs_difference": float(np.abs(path_u[0] - path_u[1]).max())},
        ),
        (
            f"{count}: {name} / serial",
            _seconds(machine.batch, q, x, v, a, wall=True) / count,
            per_state,
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


def _seconds(call, *args, wall: bool = False) -> float:
    """The median seconds of one bare call `call(*args)` (registry.measure)."""
    return measure(Side(call, [args]), wall=wall).median
