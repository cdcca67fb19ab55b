"""CVODES called from our own compiled driver (simulation/cvodes_driver.py) against CasADi's integrator of the same
piece (simulation/integrators.py): the same states bit for bit, the same counts, the same give-up; CasADi's path
where the plugin cannot be loaded; the local errors kept without changing a step."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.kinematics import Mechanism
from mbstudio.simulation import cvodes_driver, integrators
from mbstudio.simulation.integrators import _GaveUp, _solved
from mbstudio.simulation.run import simulate, state_difference

pytestmark = pytest.mark.skipif(cvodes_driver.driver() is None, reason="no CVODES plugin or no compiler here")
COUNTS = ("nsteps", "nfevals", "netfails")


def _casadi(eng, work, grid, rtol=1e-10, atol=1e-12, steps=integrators.MAX_STEPS, smallest=0.0):
    """CasADi's integrator of a piece, as integrators.py built every one before the driver."""
    options = {
        "reltol": rtol,
        "abstol": atol,
        "linear_multistep_method": "adams",
        "nonlinear_solver_iteration": "functional",
        "max_num_steps": steps,
        **({"min_step_size": smallest} if smallest else {}),
        "show_eval_warnings": False,
        "disable_internal_warnings": True,
    }
    import casadi

    return casadi.integrator("chunk", "cvodes", integrators._chunk_dae(eng, "adams", 1, work), 0.0, list(grid), options)


def _first_piece(model, monkeypatch) -> tuple:
    """The engine, the work's scale (0: none), and the state and (t₀, h) of the last piece of a 0.5-s run, as the
    run hands them over."""
    seen = []
    made = integrators._chunk_integrator

    def recording(eng, grid, multistep, rtol, atol, runs, work=0.0, *args, **kwargs):
        solver = made(eng, grid, multistep, rtol, atol, runs, work, *args, **kwargs)

        def call(x0, p):
            seen.append((eng, work, np.array(x0, dtype=float), [float(v) for v in p]))
            return solver(x0=x0, p=p)

        call.stats = solver.stats
        return call

    monkeypatch.setattr(integrators, "_chunk_integrator", recording)
    simulate(model, 0.5, error_estimate=False)
    monkeypatch.undo()
    return seen[-1]


def _native(eng, work, grid, rtol=1e-10, atol=1e-12, steps=integrators.MAX_STEPS, smallest=0.0):
    return cvodes_driver.Piece(cvodes_driver.problem(eng, work), grid, "adams", rtol, atol, steps, smallest)


@pytest.mark.parametrize("name", ["four_bar", "sla_suspension", "double_pendulum"])
def test_a_piece_is_what_casadis_integrator_computes_bit_for_bit(name, monkeypatch):
    """The same piece (grid of returns, tolerances, the state at its start, t₀ and h) through both: equal states at
    every return and equal counts of steps, evaluations and failed error tests, with and without a smallest step."""
    eng, work, start, p = _first_piece(samples.load(name), monkeypatch)
    grid = tuple(np.round(np.linspace(0.0, 1.0, 23)[1:], 12))
    for options in ({}, {"rtol": 1e-8, "atol": 1e-10, "smallest": 1e-9}):
        a, b = _casadi(eng, work, grid, **options), _native(eng, work, grid, **options)
        xa = np.asarray(a(x0=start, p=p)["xf"])
        xb = np.asarray(b(x0=start, p=p)["xf"])
        assert np.array_equal(xa, xb)
        assert [a.stats()[k] for k in COUNTS] == [b.stats()[k] for k in COUNTS]
        assert b.stats()["nsteps"] > len(grid)  # a piece of real work, not a return of the start


@pytest.mark.parametrize("name", ["four_bar", "sla_suspension"])
def test_a_run_on_the_driver_is_the_run_on_casadis_integrator(name, monkeypatch):
    """Whole runs (pieces, check points, error estimate) give the same samples bit for bit and count the same
    evaluations, and CasADi's integrator serves where the plugin is missing (a library of another name)."""
    model = samples.load(name)
    native = simulate(model, 2.0)
    with integrators.through_casadi():  # the bench's side by side
        through = simulate(model, 2.0)
    assert np.array_equal(native.q, through.q) and through.provenance.local_error_sum is None
    monkeypatch.setattr(cvodes_driver, "plugin_names", lambda: ("libcasadi_integrator_absent.so",))
    for cached in (cvodes_driver.driver, cvodes_driver.problem, integrators._chunk_integrator):
        cached.cache_clear()
    assert cvodes_driver.driver() is None
    assert cvodes_driver.problem(engine(model)) is None
    fallback = simulate(model, 2.0)
    monkeypatch.undo()
    for cached in (cvodes_driver.driver, cvodes_driver.problem, integrators._chunk_integrator):
        cached.cache_clear()
    assert np.array_equal(native.q, fallback.q) and np.array_equal(native.qd, fallback.qd)
    assert native.provenance.rhs_evaluations == fallback.provenance.rhs_evaluations
    assert native.provenance.error_estimate == fallback.provenance.error_estimate
    assert native.provenance.local_error_sum > 0 and fallback.provenance.local_error_sum is None  # not the driver's


def test_a_stalled_piece_gives_up_as_casadis_integrator_does(monkeypatch):
    """At a step limit too small for the piece both give up with CV_TOO_MUCH_WORK at the same return, counting the
    same evaluations up to the last return reached; through `_solved` the same _GaveUp, where CasADi's integrator
    reports nothing of the interval given up (one evaluation per step of the limit is counted for it, a lower bound)
    and our driver counts every evaluation CVODES made there: at least one per step, at most four (Adams' first
    evaluation and three fixed-point corrections) per step attempted."""
    eng, work, start, _ = _first_piece(samples.load("four_bar"), monkeypatch)
    grid = (*np.round(np.linspace(0.0, 0.01, 11)[1:], 12), 1.0)  # returns close together, then one far
    a, b = _casadi(eng, work, grid, steps=40), _native(eng, work, grid, steps=40)
    for solver in (a, b):
        with pytest.raises(RuntimeError, match="CV_TOO_MUCH_WORK"):
            solver(x0=start, p=[0.0, 2.0])
    assert b.stats()["nfevals"] > 0  # it gave up after the close returns, not at the first
    assert [a.stats()[k] for k in COUNTS] == [b.stats()[k] for k in COUNTS]
    given_up = []
    for made in (_casadi, _native):
        with pytest.raises(_GaveUp) as failure:
            _solved(functools.partial(_at_limit, made, eng, work, grid), (40,), start, [0.0, 2.0])
        given_up.append(failure.value.calls)
    at_return = b.stats()["nfevals"]
    assert given_up[0] == at_return + 40 and given_up[1] > given_up[0]
    attempts = 40 + b.stats()["netfails"]
    assert 40 <= given_up[1] - at_return <= 4 * attempts


def _at_limit(made, eng, work, grid, steps):
    return made(eng, work, grid, steps=steps)


def test_the_local_errors_are_kept_without_changing_a_step(monkeypatch):
    """With the local errors kept, the same states and counts as CasADi's integrator; the errors summed over the
    steps are positive, below the tolerance's share of each step (rtol |y| + atol) times the steps, and finite."""
    eng, work, start, _ = _first_piece(samples.load("four_bar"), monkeypatch)
    grid = tuple(np.round(np.linspace(0.0, 1.0, 11)[1:], 12))
    plain, counted = _casadi(eng, work, grid), _native(eng, work, grid)
    xa = np.asarray(plain(x0=start, p=[0.0, 1.0])["xf"])
    with cvodes_driver.kept() as pieces:
        xb = np.asarray(counted(x0=start, p=[0.0, 1.0])["xf"])
    assert np.array_equal(xa, xb) and [plain.stats()[k] for k in COUNTS] == [counted.stats()[k] for k in COUNTS]
    steps = counted.stats()["nsteps"]
    bound = steps * (1e-10 * np.abs(xa).max(axis=1) + 1e-12)
    (piece,) = pieces
    assert np.all(np.isfinite(piece.local_errors)) and piece.local_errors.max() > 0
    assert np.all(piece.local_errors <= bound)


@pytest.mark.parametrize("name", ["four_bar", "sla_suspension"])
def test_the_local_errors_summed_over_a_smooth_run_are_its_error_within_a_few_times(name):
    """The sum over the steps of the estimated local errors, relative to the state's scale, against the true error
    (the difference from our run at rtol 1e-13, atol 1e-15): measured 0.57 and 1.4 times on these; a sensitive motion
    amplifies its local errors far beyond their sum (docs/accuracy.md), which is why the companion run stays. None
    where the steps were not the driver's (DOP853's)."""
    model = samples.load(name)
    run = simulate(model, 2.0, error_estimate=False)
    tight = simulate(model, 2.0, rtol=1e-13, atol=1e-15, error_estimate=False)
    true = state_difference(tight, run, Mechanism(model).length_scale)
    assert true / 10 <= run.provenance.local_error_sum <= 10 * true
    assert simulate(model, 0.2, "DOP853", error_estimate=False).provenance.local_error_sum is None


def test_an_ensemble_on_the_driver_is_the_ensemble_on_casadis_integrator():
    """Three runs integrated as one system: each run's samples bit for bit, and the same evaluations."""
    from mbstudio.simulation.ensemble import simulate_ensemble

    model, starts = samples.load("four_bar"), [[0.1], [0.2], [0.3]]
    native = simulate_ensemble(model, 1.0, initial=starts)
    with integrators.through_casadi():
        through = simulate_ensemble(model, 1.0, initial=starts)
    for a, b in zip(native, through, strict=True):
        assert np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd)
        assert a.provenance.rhs_evaluations == b.provenance.rhs_evaluations


def test_runs_in_several_threads_at_once_are_the_run_made_alone():
    """The driver's call releases the interpreter's lock, and each call has its own work arrays: runs of one engine
    in four threads at once give the samples of the run made alone."""
    from concurrent.futures import ThreadPoolExecutor

    model = samples.load("four_bar")
    alone = simulate(model, 1.0, error_estimate=False)
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda _: simulate(model, 1.0, error_estimate=False), range(8)))
    assert all(np.array_equal(run.q, alone.q) and np.array_equal(run.qd, alone.qd) for run in runs)


def test_the_drivers_library_is_found_from_its_text_without_writing_it(tmp_path):
    """A process's first run finds the driver's library from its C text (numerics/compiled.py's built_library), the
    library that compiling the file itself files (compiled_library): the same name; another text finds none."""
    from mbstudio.numerics.compiled import built_library, compiled_library

    flags, text = ("-ffp-contract=off",), cvodes_driver.DRIVER.encode("utf-8")
    library = cvodes_driver._compiled()
    source = tmp_path / "cvodes_driver.c"
    source.write_bytes(text)
    assert built_library("cvodes_driver", text, flags) == compiled_library(source, flags) == library
    assert built_library("cvodes_driver", text + b"/* changed */", flags) is None
