"""Benchmarks: our float64 path against a reference implementation, timed side by side in the same run.

A benchmark is a function registered under a short name; it takes the number of states to batch (those that
do not batch states ignore it) and returns rows, one per measured quantity:

    @benchmark("mass_matrix")
    def _mass_matrix(states: int) -> list[dict]:
        ...
        return [row("puma560 mass matrix", ours_seconds / states, reference_seconds / states, states=states)]

Every row has "name", "ours_s_per_state", "reference_s_per_state" and "ratio" = ours / reference (below 1:
ours is faster); further keys are free (`row(..., **extra)`). `run(only=[...])` runs a selection in
registration order and `mbstudio bench` prints the rows as a table or JSON.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from . import samples
from .dynamics import forward_dynamics, inverse_dynamics, mass_matrix
from .kinematics import Mechanism

BENCHMARKS: dict[str, Callable[[int], list[dict]]] = {}


def benchmark(name: str) -> Callable:
    """Register a function `(states: int) -> list[dict]` under `name`."""

    def register(function: Callable[[int], list[dict]]) -> Callable[[int], list[dict]]:
        BENCHMARKS[name] = function
        return function

    return register


def row(name: str, ours_s: float, reference_s: float, **extra) -> dict:
    """One result row; times in seconds per state (or per whatever unit the row names)."""
    return {
        "name": name,
        "ours_s_per_state": ours_s,
        "reference_s_per_state": reference_s,
        "ratio": ours_s / reference_s,
        **extra,
    }


def best_time(function: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """The shortest of `repeat` wall-clock runs (the least disturbed by other load) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def run(only: list[str] | None = None, states: int = 10_000) -> list[dict]:
    unknown = set(only or []) - set(BENCHMARKS)
    if unknown:
        raise KeyError(f"unknown benchmark(s) {sorted(unknown)}; the benchmarks are: {', '.join(BENCHMARKS)}")
    return [r for name, function in BENCHMARKS.items() if not only or name in only for r in function(states)]


def format_table(rows: list[dict]) -> str:
    """Per-state rows in µs; rows whose name says "(s per ...)" (whole runs, simulated seconds) in s."""
    lines = [f"{'benchmark':44s} {'ours':>14s} {'reference':>14s} {'ratio':>7s} {'max |diff|':>10s}  reference"]
    for r in rows:
        scale, unit = (1.0, "s") if "(s per" in r["name"] else (1e6, "µs")
        ours, ref = scale * r["ours_s_per_state"], scale * r["reference_s_per_state"]
        difference = f"{r['max_abs_difference']:10.1e}" if "max_abs_difference" in r else " " * 10
        lines.append(
            f"{r['name']:44s} {ours:11.3f} {unit:2s} {ref:11.3f} {unit:2s} {r['ratio']:7.3f} {difference}  "
            f"{r.get('reference_method', '')}"
        )
    return "\n".join(lines)


def _pinocchio_model(mech: Mechanism):
    """The Pinocchio model built from our document (the one the tests compare against)."""
    from .io.pinocchio import build

    return build(mech)[0]


def _puma_states(states: int):
    mech = Mechanism(samples.load("puma560"))
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-np.pi, np.pi, (states, mech.n)) for _ in range(3))
    return mech, q, qd, qdd


def _against_pinocchio(
    name: str,
    ours: Callable[[], np.ndarray],
    reference: Callable[[int], np.ndarray],
    states: int,
    reference_name: str,
    finish: Callable = np.array,
) -> dict:
    """Time both; `finish` turns the reference's per-state results into an array comparable with ours,
    outside the timing."""
    ours_time, ours_value = best_time(ours)
    ref_time, ref_value = best_time(lambda: [reference(i) for i in range(states)])
    difference = float(np.abs(ours_value - finish(ref_value)).max())
    return row(
        name,
        ours_time / states,
        ref_time / states,
        states=states,
        max_abs_difference=difference,
        reference_method=f"pinocchio.{reference_name} per state, Python loop",
    )


@benchmark("inverse_dynamics")
def _inverse_dynamics(states: int) -> list[dict]:
    import pinocchio as pin

    mech, q, qd, qdd = _puma_states(states)
    model = _pinocchio_model(mech)
    data = model.createData()
    return [
        _against_pinocchio(
            "puma560 inverse dynamics",
            lambda: inverse_dynamics(mech, q, qd, qdd),
            lambda i: pin.rnea(model, data, q[i], qd[i], qdd[i]),
            states,
            "rnea",
        )
    ]


@benchmark("mass_matrix")
def _mass_matrix(states: int) -> list[dict]:
    import pinocchio as pin

    mech, q, _, _ = _puma_states(states)
    model = _pinocchio_model(mech)
    data = model.createData()

    def symmetric(results: list) -> np.ndarray:  # Pinocchio guarantees only the upper triangle
        upper = np.triu(np.array(results))
        return upper + np.swapaxes(np.triu(upper, 1), 1, 2)

    return [
        _against_pinocchio(
            "puma560 mass matrix",
            lambda: mass_matrix(mech, q),
            lambda i: pin.crba(model, data, q[i]),
            states,
            "crba",
            symmetric,
        )
    ]


@benchmark("forward_dynamics")
def _forward_dynamics(states: int) -> list[dict]:
    import pinocchio as pin

    mech, q, qd, qdd = _puma_states(states)
    tau = inverse_dynamics(mech, q, qd, qdd)
    model = _pinocchio_model(mech)
    data = model.createData()
    return [
        _against_pinocchio(
            "puma560 forward dynamics",
            lambda: forward_dynamics(mech, q, qd, tau),
            lambda i: pin.aba(model, data, q[i], qd[i], tau[i]),
            states,
            "aba",
        )
    ]


@benchmark("kernels")
def _kernels(states: int) -> list[dict]:
    """RNEA, CRBA, ABA and the regressor of the PUMA one state at a time: our compiled kernels
    (dynamics/kernels.py) against Pinocchio with plain revolute joints, each called from a Python loop over
    the same states (at most 2 000 of them)."""
    import pinocchio as pin

    from .dynamics.kernels import kernel
    from .io.pinocchio_reference import ClosedLoopReference

    mech, q, qd, qdd = _puma_states(min(states, 2000))
    reference = ClosedLoopReference.of(mech)  # a tree: plain joints, no contacts
    assert np.array_equal(reference.ours, np.arange(mech.n)), "the PUMA's coordinates keep their order"
    model, data = reference.model, reference.data
    tau = inverse_dynamics(mech, q, qd, qdd)
    cases = {
        "inverse_dynamics": ((q, qd, qdd), pin.rnea, "rnea"),
        "mass_matrix": ((q,), lambda m, d, *a: np.triu(pin.crba(m, d, *a)), "crba"),
        "forward_dynamics": ((q, qd, tau), pin.aba, "aba"),
        "regressor": ((q, qd, qdd), pin.computeJointTorqueRegressor, "computeJointTorqueRegressor"),
    }
    geometry = mech.tree.geometry
    phi = (
        np.concatenate([np.asarray(geometry.inertia(mech.model.body(b)), float) for b in mech.tree.body_labels[1:]]),
        np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)]),
    )
    return [
        _one_state_row(name, kernel(mech.model, name), call, args, (model, data), reference_name, phi)
        for name, (args, call, reference_name) in cases.items()
    ]


def _one_state_row(
    name: str, ours: Callable, reference: Callable, args: tuple, model_data: tuple, method: str, phi: tuple
) -> dict:
    """One kernel timed over the states; `phi` = (our inertial parameters, Pinocchio's) for the regressor."""
    count = len(args[0])
    ours_time, ours_values = best_time(lambda: [ours(*(a[i] for a in args)) for i in range(count)])
    ref_time, ref_values = best_time(lambda: [reference(*model_data, *(a[i] for a in args)) for i in range(count)])
    ours_values, ref_values = np.array(ours_values), np.array(ref_values)
    if name == "mass_matrix":  # Pinocchio fills the upper triangle
        ours_values = np.triu(ours_values)
    if name == "regressor":  # the parameters differ (body frames vs joint frames): compare torques Y φ
        ours_values, ref_values = ours_values @ phi[0], ref_values @ phi[1]
    return row(
        f"puma560 {name.replace('_', ' ')}, one state",
        ours_time / count,
        ref_time / count,
        states=count,
        max_abs_difference=float(np.abs(ours_values - ref_values).max()),
        reference_method=f"pinocchio.{method} per state (plain joints), Python loop",
    )


def _sprung_sla():
    """The SLA sample on a suspension spring along its damper (30 kN/m, free at the design length), so that
    it oscillates about the design position instead of falling out of its assembly range."""
    from .model.document import SpringDamper

    model = samples.load("sla_suspension")
    model.forces = [SpringDamper("coilover", "6", "C", "7", "ball", stiffness=30_000.0, length=0.5)]
    return model


def _driven_delta():
    """The Delta sample with its actuators holding it against gravity (the digest's static torque at the
    reference configuration, −3.362259 N m) plus a 0.5 N m, 1 Hz oscillation on each arm, phased by limb."""
    from .model.document import Actuator

    model = samples.load("delta_3rr2rrr")
    model.forces = [
        Actuator(f"motor_{limb}", f"th1{limb}", formula=f"-3.362259 + 0.5*sin(2*pi*t + {k}*2*pi/3)")
        for k, limb in enumerate("abc")
    ]
    return model


@benchmark("simulation")
def _simulation(states: int) -> list[dict]:
    """Ours on the compiled engine against an independent Pinocchio model of the same closed loops
    (io/pinocchio_reference.py: plain joints, rigid contacts, constraintDynamics) integrated by solve_ivp
    (DOP853, rtol 1e-8, atol 1e-10, as ours): per right-hand side at batch size 1, per simulated second
    (ours with CVODES, the default), and the engine's build. `states` does not apply."""
    models = {"four_bar": samples.load("four_bar"), "sla_suspension": _sprung_sla(), "delta_3rr2rrr": _driven_delta()}
    return [r for name, model in models.items() for r in _closed_loop_rows(name, model)]


SIMULATED_SECONDS = 2.0
BUILD_TARGET_S = 10.0  # issue 9: the SLA's engine within 10 s


def _closed_loop_rows(name: str, model) -> list[dict]:
    from scipy.integrate import solve_ivp

    from .dynamics import engine as engines
    from .io.pinocchio_reference import ClosedLoopReference
    from .simulation.run import simulate

    engines._build.cache_clear()  # the build as a new process sees it (the compiled C stays cached on disk)
    build, eng = best_time(lambda: engines.engine(model), repeat=1)
    mech = eng.mech
    reference = ClosedLoopReference.of(mech)
    y_ref = reference.state(mech.assemble(None)[0])
    y_ours = np.concatenate([mech.assemble(None)[0], np.zeros(len(eng.independent))])
    ours_rhs = _per_call(lambda: eng.ode(0.1, y_ours))
    ref_rhs = _per_call(lambda: reference.rhs(0.1, y_ref))
    times = np.linspace(0.0, SIMULATED_SECONDS, 201)
    ours_wall, ours = best_time(lambda: simulate(model, SIMULATED_SECONDS, samples=201), repeat=1)
    ref_wall, ref = best_time(
        lambda: solve_ivp(reference.rhs, (0, SIMULATED_SECONDS), y_ref, "DOP853", times, rtol=1e-8, atol=1e-10),
        repeat=1,
    )
    agreement = float(np.abs(reference.coordinates(ref.y.T) - ours.q).max())
    method = "pinocchio.constraintDynamics (plain joints, rigid contacts)"
    return [
        row(f"{name} right-hand side, one state", ours_rhs, ref_rhs, reference_method=f"{method} per call"),
        row(
            f"{name} simulation (s per simulated s)",
            ours_wall / SIMULATED_SECONDS,
            ref_wall / SIMULATED_SECONDS,
            real_time_factor=SIMULATED_SECONDS / ours_wall,
            reference_real_time_factor=SIMULATED_SECONDS / ref_wall,
            rhs_evaluations=ours.provenance.rhs_evaluations,
            reference_rhs_evaluations=int(ref.nfev),
            max_coordinate_difference=agreement,
            max_constraint_residual=float(ours.residual.max()),
            reference_method=f"{method}, solve_ivp DOP853 rtol 1e-8; ours CVODES",
        ),
        row(
            f"{name} engine build (s per build)",
            build,
            BUILD_TARGET_S,
            native=eng.native,
            reference_method="target (issue 9)",
        ),
    ]


def _per_call(function: Callable[[], object], calls: int = 2000, repeat: int = 3) -> float:
    """Seconds per call, the best of `repeat` loops (Python loop included, as a user's script would pay)."""
    return best_time(lambda: [function() for _ in range(calls)], repeat)[0] / calls


@benchmark("blocks")
def _blocks(states: int) -> list[dict]:
    """TITOP block models (dynamics/titop): the balloon's right-hand side one state at a time, compiled, by the
    condensed and the faithful solves of the algebraic loop, against our engine's state equation at the same
    state; and the PUMA's forward dynamics on a float64 batch (condensed solve) against our articulated-body
    algorithm. The differences are those of the coordinates' accelerations."""
    from .dynamics.engine import engine
    from .dynamics.titop import BlockAccelerations, BlockModel, JointLaw, block_model
    from .simulation.block_runs import Layout, compiled_right_hand_side

    model = samples.load("balloon")
    mech, blocks = Mechanism(model), block_model(model)
    q = mech.assemble(None)
    qd = np.random.default_rng(0).uniform(-1, 1, q.shape)
    order = [mech.coordinates.index(c) for c in blocks.coordinates]
    state = blocks.from_coordinates(q[:, order], qd[:, order])
    y, eng = Layout(blocks).pack(state)[0], engine(model)
    y_engine = np.concatenate([q[0], qd[0]])
    reference = eng.ode(0.0, y_engine)[mech.n :][order]
    rows = []
    for solver in ("condensed", "faithful"):
        rhs = compiled_right_hand_side(model, solver)
        rates = Layout(blocks).state(rhs(0.0, y)[None])  # (q̇, q̈) of the channels, xdot'_P of the balloon
        qdd = blocks.accelerations_to_coordinates(state, BlockAccelerations(rates.qd, (rates.bases[0].tw,)))[0]
        rows.append(
            row(
                f"balloon block right-hand side ({solver}), one state",
                _per_call(lambda rhs=rhs: rhs(0.0, y)),
                _per_call(lambda: eng.ode(0.0, y_engine)),
                max_abs_difference=float(np.abs(qdd - reference).max()),
                reference_method="our engine's state equation (ABA, compiled) per call",
            )
        )
    mech, q, qd, qdd = _puma_states(states)
    arm = block_model(mech.model)
    assert arm.coordinates == mech.coordinates
    tau = inverse_dynamics(mech, q, qd, qdd)
    laws = [JointLaw(c, lambda t, x, v, k=k: tau[:, k]) for k, c in enumerate(mech.coordinates)]
    driven = BlockModel(arm.blocks, arm.gravity, laws)
    arm_state = driven.from_coordinates(q, qd)
    ours, found = best_time(lambda: driven.forward_dynamics(arm_state).qdd)
    reference_time, reference = best_time(lambda: forward_dynamics(mech, q, qd, tau))
    rows.append(
        row(
            "puma560 block forward dynamics (condensed)",
            ours / states,
            reference_time / states,
            states=states,
            max_abs_difference=float(np.abs(found - reference).max()),
            reference_method="our articulated-body algorithm, float64 batch",
        )
    )
    return rows


# ---------------------------------------------------------------------------------------- base parameters
# seconds for one run of each route on the SLA suspension, on a 2-core machine: issue 4, section 7, and for
# variable precision issue 12 (after the move to MPFR)
BASEPAR_TARGETS = {"vp50": 2.0, "vp500": 6.0, "dp": 0.5, "symbolic": 30.0}
BASEPAR_SAMPLES = 100  # of the SLA sample's trajectory, Iriarte et al.'s (2017) eq. (16)


def _basepar_row(key: str, label: str, method: str, digits: int = 50) -> dict:
    """One whole pipeline run (W, SVD or symbolic method, expressions, comparison); the reference is the target."""
    from .identification.pipeline import base_parameters

    model = samples.load("sla_suspension")
    # the best of three: on a shared two-core machine a single run varied by 70 % (2.3 to 3.9 s at 50 digits)
    repeat = 1 if method == "symbolic" else 3
    wall, run = best_time(lambda: base_parameters(model, method, digits, BASEPAR_SAMPLES), repeat=repeat)
    rank = run.vp.final.rank if method == "vp" else getattr(run, method).rank
    return row(
        f"sla {label} (s per run)",
        wall,
        BASEPAR_TARGETS[key],
        seconds=wall,
        target_s=BASEPAR_TARGETS[key],
        within_target=wall <= BASEPAR_TARGETS[key],
        rank=rank,
        samples=BASEPAR_SAMPLES,
        reference_method="target, issue 4 section 7",
    )


def _observation_row(digits: int) -> dict:
    """W of the SLA (the samples of a VP run) at `digits` in MPFR against the same in mpmath, the arithmetic
    MPFR replaced: the before/after ratio of issue 12, measured in one run."""
    from .identification import observation_matrix
    from .identification.pipeline import chosen_trajectory, fourier_path, sample_times
    from .numerics.backends import MpmathPrecision, MultiPrecision

    model = samples.load("sla_suspension")

    def build(backend) -> np.ndarray:
        mech = Mechanism(model, backend=backend)
        trajectory, _ = chosen_trajectory(model, None, mech)
        times = sample_times(mech, trajectory.duration, BASEPAR_SAMPLES)
        return observation_matrix(mech, times, fourier_path(mech, trajectory))

    ours, _ = best_time(lambda: build(MultiPrecision(digits)), repeat=1)
    before, _ = best_time(lambda: build(MpmathPrecision(digits)), repeat=1)
    return row(f"sla W at {digits} digits, MPFR vs mpmath (s per W)", ours, before, samples=BASEPAR_SAMPLES)


@benchmark("basepar_vp50")
def _basepar_vp50(states: int) -> list[dict]:
    """The whole VP pipeline on the SLA at 50 digits, and its W against mpmath; `states` does not apply."""
    return [_basepar_row("vp50", "VP pipeline 50 digits", "vp", 50), _observation_row(50)]


@benchmark("basepar_vp500")
def _basepar_vp500(states: int) -> list[dict]:
    """The whole VP pipeline on the SLA at 500 digits, and its W against mpmath; `states` does not apply."""
    return [_basepar_row("vp500", "VP pipeline 500 digits", "vp", 500), _observation_row(500)]


@benchmark("basepar_dp")
def _basepar_dp(states: int) -> list[dict]:
    """The DP pipeline on the SLA; `states` does not apply."""
    return [_basepar_row("dp", "DP pipeline", "dp")]


@benchmark("basepar_symbolic")
def _basepar_symbolic(states: int) -> list[dict]:
    """The symbolic method on the SLA; `states` does not apply."""
    return [_basepar_row("symbolic", "symbolic method", "symbolic")]


# ---------------------------------------------------------------------------------------- 3D view
SLIDER_TARGET_S = 1 / 25  # a slider step within one frame at 25 frames per second looks smooth
SLIDER_STEPS, SLIDER_STEP_DEG = 50, 0.5


@benchmark("slider")
def _slider(states: int) -> list[dict]:
    """The SLA moved as by the window's first slider: per step, the assembly from the previous pose and the
    scene update with an off-screen render of the view (finished on the OpenGL side); the reference is the
    frame budget. Medians over the steps, which other load on the machine disturbs least. `states` does not
    apply."""
    from .gui.headless import offscreen_plotter
    from .gui.view3d.scene import Scene

    mech = Mechanism(samples.load("sla_suspension"))
    q = mech.assemble(None)
    plotter = offscreen_plotter((800, 600))
    scene = Scene(plotter)
    scene.build(mech, q[0])
    scene.camera("isometric")
    plotter.screenshot(return_img=True)  # the first frame sets the render window up
    step = np.zeros(len(mech.independent))
    step[0] = np.radians(SLIDER_STEP_DEG)
    wanted = q[:, list(mech.partition.independent)]
    assembly, render = [], []
    for _ in range(SLIDER_STEPS):
        wanted = wanted + step
        start = time.perf_counter()
        q = mech.assemble(wanted, guess=q)
        middle = time.perf_counter()
        scene.set_pose(q[0])
        plotter.ren_win.WaitForCompletion()
        assembly.append(middle - start)
        render.append(time.perf_counter() - middle)
    window = plotter.ren_win.GetClassName()
    plotter.close()
    extra = {
        "steps": SLIDER_STEPS,
        "step_deg": SLIDER_STEP_DEG,
        "coordinate": mech.independent[0],
        "target_s": SLIDER_TARGET_S,
        "reference_method": f"frame budget, 25 per second ({window} 800x600)",
    }
    return [
        row(
            f"sla slider {what} (s per step)",
            float(np.median(times)),
            SLIDER_TARGET_S,
            min_s=min(times),
            mean_s=float(np.mean(times)),
            **extra,
        )
        for what, times in (
            ("assembly", assembly),
            ("assembly, compiled", _compiled_slider_steps(mech)),
            ("update + render", render),
        )
    ]


def _compiled_slider_steps(mech: Mechanism) -> list[float]:
    """The same steps on the compiled loop equations the window switches to (kinematics/fast_assembly.py)."""
    from .dynamics.engine import engine
    from .kinematics.fast_assembly import FastAssembly
    from .model import dumps

    text = dumps(mech.model)
    engine(mech.model, text)  # builds, or finds on disk, what the window's background job builds
    fast = FastAssembly.load(mech, text)
    q = mech.assemble(None)[0]
    wanted, times = q[fast.ind].copy(), []
    for _ in range(SLIDER_STEPS):
        wanted[0] += np.radians(SLIDER_STEP_DEG)
        start = time.perf_counter()
        q = fast.assemble(wanted, q)
        mech.poses(q[None])  # what the scene update needs from the model
        times.append(time.perf_counter() - start)
    return times


DRAG_TARGET_S = 1 / 30  # a dragged body following the mouse at 30 updates per second
DRAG_UPDATES, DRAG_RISE = 60, 0.05  # the SLA's wheel centre dragged 50 mm up, in 60 mouse moves


@benchmark("drag")
def _drag(states: int) -> list[dict]:
    """The SLA's wheel centre dragged up in the 3D view (kinematics/point_drag.py): per mouse move, the damped
    least-squares steps of the independent coordinates with the loops closed, on the compiled loop equations and
    on the numpy path, and with the scene update and an off-screen render; the reference is the frame budget of
    30 updates per second. Medians over the moves. `states` does not apply."""
    from .dynamics.engine import engine
    from .gui.headless import offscreen_plotter
    from .gui.view3d.scene import Scene
    from .kinematics.fast_assembly import FastAssembly
    from .kinematics.point_drag import PointDrag
    from .model import dumps

    model = samples.load("sla_suspension")
    mech, text = Mechanism(model), dumps(model)
    engine(model, text)  # what the window's background job builds at the first slider step or drag
    q0 = np.asarray(mech.assemble(None), float)[0]
    local = np.asarray(mech.tree.geometry.point(model.body("3"), "K"), float)
    plotter = offscreen_plotter((800, 600))
    scene = Scene(plotter)
    scene.build(mech, q0)
    scene.camera("isometric")
    plotter.screenshot(return_img=True)  # the first frame sets the render window up

    def render(q: np.ndarray) -> None:
        scene.set_pose(q)
        plotter.ren_win.WaitForCompletion()

    compiled = PointDrag(mech, "3", local, FastAssembly.load(mech, text))
    runs = {
        "compiled": _drag_updates(compiled, q0),
        "numpy path": _drag_updates(PointDrag(mech, "3", local), q0, iterations=1),
        "compiled + render": _drag_updates(compiled, q0, render=render),
    }
    window = plotter.ren_win.GetClassName()
    plotter.close()
    extra = {"updates": DRAG_UPDATES, "rise_m": DRAG_RISE, "reference_method": f"30 per second ({window} 800x600)"}
    return [
        row(f"sla drag, {what} (s per update)", float(np.median(times)), DRAG_TARGET_S, min_s=min(times), **extra)
        for what, times in runs.items()
    ]


def _drag_updates(drag, q: np.ndarray, iterations: int | None = None, render=None) -> list[float]:
    """Seconds per mouse move of a drag of the point DRAG_RISE straight up."""
    from .kinematics.point_drag import ITERATIONS

    start_point, times = drag.point(q), []
    for k in range(1, DRAG_UPDATES + 1):
        target = start_point + np.array([0.0, 0.0, DRAG_RISE * k / DRAG_UPDATES])
        start = time.perf_counter()
        q, _ = drag.follow(q, target, iterations or ITERATIONS)
        if render is not None:
            render(q)
        times.append(time.perf_counter() - start)
    return times


@benchmark("urdf")
def _urdf(states: int) -> list[dict]:
    """Real robots (example-robot-data): imported by us from URDF and run on our compiled kernels one state at a
    time, against Pinocchio's own reading of the same file (pin.buildModelFromUrdf, not our exporter), at the
    same random states (at most 1 000), with the largest difference."""
    import pinocchio as pin

    from .dynamics.kernels import kernel
    from .io.example_robots import ROBOTS, robot_path
    from .io.urdf_import import import_urdf

    rows = []
    for robot in ROBOTS:
        path = robot_path(robot)
        model = import_urdf(path).model
        coordinates = Mechanism(model).coordinates
        pm = pin.buildModelFromUrdf(str(path))
        order = [coordinates.index(pm.names[j]) for j in range(1, pm.njoints)]  # Pinocchio's joints in our order
        rng = np.random.default_rng(0)
        q, qd, qdd = (rng.uniform(-1, 1, (min(states, 1000), len(order))) for _ in range(3))
        theirs = (q[:, order], qd[:, order], qdd[:, order])  # the same states in Pinocchio's order
        tau = inverse_dynamics(Mechanism(model), q, qd, qdd)
        cases = {
            "rnea": ("inverse_dynamics", (q, qd, qdd), pin.rnea, theirs),
            "crba": ("mass_matrix", (q,), lambda m, d, *a: np.triu(pin.crba(m, d, *a)), theirs[:1]),
            "aba": ("forward_dynamics", (q, qd, tau), pin.aba, (theirs[0], theirs[1], tau[:, order])),
        }
        for algorithm, (name, args, call, their_args) in cases.items():
            rows.append(_urdf_row(robot, algorithm, kernel(model, name), args, call, their_args, pm, order))
    return rows


def _urdf_row(robot: str, algorithm: str, ours: Callable, args: tuple, call: Callable, their_args, pm, order) -> dict:
    data, count = pm.createData(), len(args[0])
    ours_time, ours_values = best_time(lambda: [ours(*(a[i] for a in args)) for i in range(count)])
    ref_time, ref_values = best_time(lambda: [call(pm, data, *(a[i] for a in their_args)) for i in range(count)])
    ours_values = np.array(ours_values)
    ours_values = ours_values[:, order][:, :, order] if ours_values.ndim == 3 else ours_values[:, order]
    if algorithm == "crba":
        ours_values = np.triu(ours_values)
    return row(
        f"{robot} {algorithm} (URDF), one state",
        ours_time / count,
        ref_time / count,
        states=count,
        dof=len(order),
        max_abs_difference=float(np.abs(ours_values - np.array(ref_values)).max()),
        reference_method=f"pinocchio.{algorithm} of buildModelFromUrdf, Python loop",
    )


# ---------------------------------------------------------------------------------------- parallel machines
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

    from .dynamics.pkm import ParallelMachine
    from .dynamics.pkm.compiled import CompiledMachine, general_function
    from .dynamics.pkm.general import GeneralRoute
    from .numerics.compiled import FastCall

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
        "general": _per_call(lambda: general(q[0], x[0], v[0], a[0])),
        "modular": _per_call(lambda: serial(together[0], x[0], v[0], a[0])),
    }
    u_general, u_modular = (
        np.asarray(f()[1]).ravel()
        for f in (lambda: general(q[0], x[0], v[0], a[0]), lambda: serial(together[0], x[0], v[0], a[0]))
    )
    workers = min(len(pkm.limbs), os.cpu_count() or 1)
    with ThreadPoolExecutor(workers) as pool:
        one["python threads"] = _per_call(lambda: fast.inverse_dynamics(x[0], v[0], a[0], guess, pool), 500)
        batch = {
            "numpy general": best_time(lambda: route.inverse_dynamics(q, v, a))[0],
            "numpy modular": best_time(lambda: pkm.inverse_dynamics(limbs, v, a))[0],
            # a few ms each, where a thread's hand-over or another process shows: the best of ten
            "nodes serial": best_time(lambda: fast.inverse_dynamics_batch(x, v, a, limbs), 10)[0],
            "python threads": best_time(lambda: fast.inverse_dynamics_batch(x, v, a, limbs, pool), 10)[0],
            "serial": best_time(lambda: serial_map(*(z.T.ravel("F") for z in (together, x, v, a))), 10)[0],
        }
    general_map = FastCall(general_function(pkm).map(count))
    batch["compiled general"] = best_time(lambda: general_map(q.T.ravel("F"), *(z.T.ravel("F") for z in (x, v, a))))[0]
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
    from .dynamics.pkm.native import NativeMachine, NativeUnavailable

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
            _per_call(lambda: machine(q[0], x[0], v[0], a[0]), repeat=5),
            one,
            {"max_abs_difference": float(np.abs(machine(q[0], x[0], v[0], a[0])[1] - u_one).max())},
        ),
        (
            f"path: {name} / 1 thread",
            best_time(lambda: machine.path(start, *path), 10)[0] / count,
            best_time(lambda: one_thread.path(start, *path), 10)[0] / count,
            {"states": count, "max_abs_difference": float(np.abs(path_u[0] - path_u[1]).max())},
        ),
        (
            f"{count}: {name} / serial",
            best_time(lambda: machine.batch(q, x, v, a), 10)[0] / count,
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
