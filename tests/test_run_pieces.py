"""How a CVODES run is cut into pieces (simulation/integrators.py) and what the coordinates' watch computes at its
check points (simulation/charts.py, Engine.surely_conditioned): few pieces for a short or smooth run, on the fixed
grid whatever the start; the watch's screen never passing a state the SVD would find below the bound."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.simulation import integrators
from mbstudio.simulation.integrators import CHUNKS, FLOOR_STEPS, MAX_STEPS, STEPS_PER_PIECE, _next_span, _solved
from mbstudio.simulation.run import simulate


def _pieces(monkeypatch) -> list[int]:
    """A list that counts the CVODES pieces of the runs that follow (one call of a chunk integrator each)."""
    calls: list[int] = []
    made = integrators._chunk_integrator

    def counting(*args, **kwargs):
        solver = made(*args, **kwargs)

        def call(**inputs):
            calls.append(1)
            return solver(**inputs)

        call.stats = solver.stats
        return call

    monkeypatch.setattr(integrators, "_chunk_integrator", counting)
    return calls


def test_a_short_run_is_a_few_pieces_and_a_long_one_reports_as_it_goes(monkeypatch):
    """A run of 1e-9 s was 22 restarted pieces (20 of [0, t_end] and the watch's two first check intervals); it is
    now the watch's two, one interval of the grid, and the rest. A run of many steps is still cut into pieces of
    about STEPS_PER_PIECE steps, between which its progress is reported."""
    model = samples.load("four_bar")
    pieces = _pieces(monkeypatch)
    simulate(model, 1e-9, samples=2, error_estimate=False)  # the run's pieces (its error estimate's run has its own)
    assert len(pieces) <= 4
    pieces.clear()
    reports: list[float] = []
    run = simulate(model, 10.0, samples=11, progress=reports.append, error_estimate=False)
    assert run.provenance.rhs_evaluations > 3 * STEPS_PER_PIECE  # at least 1.5 steps per piece's worth
    assert 3 <= len(pieces) <= CHUNKS + 2 and len(reports) >= 3


def test_the_next_piece_spans_the_intervals_its_steps_allow():
    """About STEPS_PER_PIECE steps at the last piece's pace, in whole intervals of the grid, at least one."""
    assert _next_span(STEPS_PER_PIECE, 1.0) == 1
    assert _next_span(STEPS_PER_PIECE // 4, 1.0) == 4
    assert _next_span(10 * STEPS_PER_PIECE, 1.0) == 1
    assert _next_span(0, 0.1) == int(STEPS_PER_PIECE * 0.1)  # no step (a run already at its end): long pieces


@pytest.mark.parametrize("name", ["four_bar", "sla_suspension", "delta_3rr2rrr"])
def test_the_watch_screen_passes_only_states_the_svd_puts_above_the_bound(name):
    """At states near the document's, Engine.surely_conditioned(q, bound) is True only where every state's
    smallest singular value (the SVD's) is at least the bound, and it is True for a bound a little below the
    smallest of them (the screen is a few times cheaper than the SVD only if it passes the common case)."""
    eng = engine(samples.load(name))
    rng = np.random.default_rng(3)
    q0 = eng.mech.assemble(None)[0]
    q = q0 + 0.02 * rng.standard_normal((40, eng.n))
    sigma = eng.smallest_singular_values(q)
    lowest = float(sigma.min())
    assert eng.surely_conditioned(q, 0.9 * lowest)
    assert not eng.surely_conditioned(q, lowest * (1 + 1e-9))
    assert not eng.surely_conditioned(q, 2 * lowest)
    for bound in np.linspace(0.5, 1.5, 11) * lowest:
        if eng.surely_conditioned(q, bound):
            assert (sigma >= bound).all()


def test_the_check_points_loop_blocks_in_one_call_are_each_states():
    """The batched loop blocks (one native call over the check points) are each state's loop_block, bit for bit."""
    eng = engine(samples.load("sla_suspension"))
    q = eng.mech.assemble(None)[0] + 0.01 * np.random.default_rng(1).standard_normal((5, eng.n))
    assert np.array_equal(eng._loop_blocks(q), np.stack([eng.loop_block(x).ravel() for x in q]))


def test_a_short_run_builds_one_integrator_for_the_watchs_pieces_and_one_for_the_rest():
    """The watch's two first pieces span one check interval each: the first (no step history yet) is tried at the
    limit of the second, so both share one integrator, and the rest of the run is the other (each integrator
    built was about 1 ms of a first run in a process)."""
    model = samples.load("four_bar")
    simulate(model, 1e-9, error_estimate=False)  # the engine and the run's start, loaded
    integrators._chunk_integrator.cache_clear()
    simulate(model, 1e-9, error_estimate=False)  # the run's (its error estimate's run, at other tolerances, has two)
    assert integrators._chunk_integrator.cache_info().misses == 2


def test_a_piece_tried_at_a_lower_step_limit_computes_what_the_last_limit_alone_would():
    """A step limit changes nothing computed until it is reached: a piece that fits the trial's limit, and one
    integrated again after running into it, give the states and steps of the last limit alone, bit for bit; the
    evaluations of the failed trial are counted (at least one per step of its limit)."""
    eng = engine(samples.load("four_bar"))
    y0 = eng.pack(eng.mech.assemble(None)[0], np.zeros(len(eng.independent)))
    chunk = functools.partial(integrators._chunk_integrator, eng, (0.25, 0.5, 1.0), "adams", 1e-10, 1e-12, 1, 0.0)
    alone, states, tried = _solved(chunk, (MAX_STEPS,), y0, [0.0, 0.2])
    steps = alone.stats()["nsteps"]
    assert tried == 0 and 3 * 4 < steps < FLOOR_STEPS  # a trial at 4 steps per return runs into it; at the floor not
    for trial, failed in ((FLOOR_STEPS, False), (4, True)):
        solver, again, tried = _solved(chunk, (trial, MAX_STEPS), y0, [0.0, 0.2])
        assert np.array_equal(again, states) and solver.stats()["nsteps"] == steps
        assert (tried >= trial) if failed else (tried == 0)


def test_adams_pieces_give_the_same_bits_without_the_jacobian_cvodes_never_uses(monkeypatch):
    """The chunk's function is declared undifferentiated for Adams (CVODES' set-up formed its Jacobian by finite
    differences, unused by fixed-point iteration): a run gives the bits it gives with that Jacobian formed."""
    from mbstudio.dynamics.engine import clear_engines

    model = samples.load("four_bar")

    def fresh_run():
        clear_engines()
        integrators._chunk_dae.cache_clear()
        integrators._chunk_integrator.cache_clear()
        return simulate(model, 0.05, samples=11, error_estimate=False)

    lean = fresh_run()
    monkeypatch.setattr(integrators, "_undifferentiated", lambda outputs: {})
    formed = fresh_run()
    for a, b in ((lean.q, formed.q), (lean.qd, formed.qd), (lean.qdd, formed.qdd), (lean.total, formed.total)):
        assert np.array_equal(a, b)
    assert lean.provenance.rhs_evaluations == formed.provenance.rhs_evaluations
    assert integrators._chunk_dae(engine(model), "bdf", 1, 0.0).is_diff_out(0)  # BDF's Newton iteration needs it
