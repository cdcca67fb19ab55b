"""What a closed loop's run no longer pays for, each with the answer it gave before: a decision that can only keep
the coordinates takes no search (the same decision as the search's) and, near crossings, no restart of the run; the
watch's rank values are not computed where
they are surely above NEAR (the same decisions, the same values remembered), and a crossing integrated by our CVODES
driver gives CasADi's integrator's states bit for bit."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.benchmarks.models import driven_delta
from mbstudio.dynamics.engine import engine
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps
from mbstudio.simulation import charts, crossing, run
from mbstudio.simulation.charts import BETTER, ChartWatch, decided, surely_kept
from mbstudio.simulation.integrators import IntegrationError, integrate, through_casadi
from mbstudio.simulation.run import simulate

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def _decisions(name: str, count: int) -> list:
    """The first `count` stops of the sample's motion where its coordinates' conditioning fell (DOP853 runs watched
    by ChartWatch, as tests/test_decisions.py's), up to the first that changes them, each with the engine in use, the
    model's text and first engine."""
    model = samples.load(name)
    text = dumps(model)
    eng = first = engine(model, text)
    y, t = np.concatenate([Mechanism(model).assemble(None)[0], np.zeros(len(eng.independent))]), 0.0
    times = np.linspace(0, 0.5, 51)
    stops = []
    for _ in range(count):
        with pytest.raises(IntegrationError) as stop:
            integrate(eng, times[times > t], y, "DOP853", 1e-8, 1e-10, None, t, ChartWatch(eng, y))
        stops.append((eng, stop.value, text, first))
        decision = decided(eng, stop.value.time, stop.value.state, text, first.mech.partition)
        if decision.changed:
            break
        eng, y, t = decision.engine, decision.state, decision.time
    return stops


def test_a_decision_that_can_only_keep_the_coordinates_takes_no_search(monkeypatch):
    """The Delta 3R[2US]'s first stops approach its singular configuration: Φ_q's 18th singular value is within
    BETTER of the block in use's, so no choice can be BETTER (interlacing) and `decided` keeps the coordinates
    without the pivoted QR, as the search itself does there, and from a state moved by 1e-13 alike."""
    stops = _decisions("delta_3rus", 2)
    searched = [decided(eng, stop.time, stop.state, text, first.mech.partition) for eng, stop, text, first in stops]
    assert not any(decision.changed for decision in searched)

    def no_search(*args, **kwargs):
        raise AssertionError("the search ran")

    monkeypatch.setattr(charts, "partition", no_search)
    for eng, stop, text, first in stops:
        moved = stop.state * (1 + 1e-13)
        for state in (stop.state, moved):
            assert surely_kept(eng, state, first)
            kept = decided(eng, stop.time, state, text, first.mech.partition, whole=first)
            assert not kept.changed and kept.engine is eng and kept.state is state


def test_a_decision_that_changes_the_coordinates_is_searched():
    """The falling Delta 3RR[2RR]R changes its coordinates near t = 0.27 s (tests/test_decisions.py): there Φ_q's
    rank-th singular value is far above BETTER times the block in use's, so the shortcut must not answer, and the
    search with it changes them as the search without it does."""
    stops = _decisions("delta_3rr2rrr", 10)
    eng, stop, text, first = stops[-1]
    plain = decided(eng, stop.time, stop.state, text, first.mech.partition)
    assert plain.changed and not surely_kept(eng, stop.state, first)
    phi_q = first.loop_jacobians(eng.closed(stop.state[None])[0])[0]
    rank = eng.mech.partition.rank
    whole = np.linalg.svd(phi_q, compute_uv=False)[rank - 1]
    assert whole > BETTER * charts._block_smallest(phi_q, eng.mech.partition)
    shortcut = decided(eng, stop.time, stop.state, text, first.mech.partition, whole=first)
    assert shortcut.changed and shortcut.engine.mech.partition == plain.engine.mech.partition


def test_the_watch_screens_only_rank_values_surely_above_near(monkeypatch):
    """The driven Delta (the bench's) and the free Delta 3R[2US]: at every batch of points the watch checks, each
    value it computes is the exact one's bits, each it leaves out is at least NEAR (ENTER while the watch is near),
    and the screen leaves most out, by the Cholesky factors of Φ_q Φ_qᵀ (Weyl's bound from the last state's where
    the loop equations are redundant): the driven Delta's long pieces and the free Delta's first, whose Φ_q moves
    by many times its rank value between check points."""
    seen = {"left out": 0, "values": 0}
    first_fall = crossing.CrossingWatch.first_fall

    def checked(self, at, states):
        if self.start is not None and len(at):
            exact = self._ratios(states)
            screened, _ = self._screened(states)
            known = np.isfinite(screened)
            assert np.array_equal(screened[known], exact[known])
            assert (exact[~known] >= (crossing.ENTER if self.near else crossing.NEAR)).all()
            seen["left out"] += int((~known).sum())
            seen["values"] += len(at)
        return first_fall(self, at, states)

    monkeypatch.setattr(crossing.CrossingWatch, "first_fall", checked)
    simulate(driven_delta(), 2.0, rtol=1e-8, atol=1e-10, error_estimate=False)
    assert seen["left out"] > seen["values"] / 2
    seen.update({"left out": 0, "values": 0})
    simulate(samples.load("delta_3rus"), 0.3, error_estimate=False)
    assert seen["left out"] > seen["values"] / 2


@pytest.mark.slow  # the Delta's 2 s; a cold cache compiles the engines of its coordinates and its crossing's library
def test_near_crossings_a_decision_that_keeps_the_coordinates_does_not_restart_the_run(monkeypatch):
    """Once the Delta 3R[2US] has crossed, it restarts its integration (run.py calls `integrate` again) only where
    it crosses again or changes its coordinates: its other falls of the chart there are kept inside the integration
    (each a decision that could only keep them, taken as run.py would take it), where each used to restart it."""
    starts, kept = [], []
    integrate_run, kept_by_watch = run.integrate, crossing.CrossingWatch.kept

    def counted(eng, times, y0, method, rtol, atol, clock, t0, *args):
        starts.append(t0)
        return integrate_run(eng, times, y0, method, rtol, atol, clock, t0, *args)

    def keeping(self, t, y):
        answer = kept_by_watch(self, t, y)
        kept.append(answer)
        return answer

    monkeypatch.setattr(run, "integrate", counted)
    monkeypatch.setattr(crossing.CrossingWatch, "kept", keeping)
    result = simulate(samples.load("delta_3rus"), 2.0, error_estimate=False)
    spans = [re.findall(r"between t = (\S+) s and (\S+) s", note)[0] for note in result.provenance.crossings]
    entry, ends = float(spans[0][0]), [float(end) for _, end in spans]
    changes = [t for t, _ in result.provenance.charts[1:] if t > entry]
    assert len(spans) == 5 and sum(kept) >= 2  # measured: four kept, three of them after the first crossing
    # after the first crossing: a restart where each crossing ends before the run's end, and at each change
    assert sum(t0 > entry for t0 in starts) == sum(end < 2.0 for end in ends) + len(changes)


@pytest.mark.slow  # a cold cache compiles the Delta's engine and its crossing's library
def test_a_crossing_through_our_driver_is_casadis_bit_for_bit():
    """The Delta 3R[2US] crosses its first singular configuration within 0.3 s; its crossing's CVODES intervals go
    through our driver (cvodes_driver.py) or, inside `through_casadi()`, through CasADi's integrator: the same
    samples, bit for bit, and the same evaluations."""
    model = samples.load("delta_3rus")
    driven = simulate(model, 0.3, error_estimate=False)
    with through_casadi():
        casadi = simulate(model, 0.3, error_estimate=False)
    assert driven.provenance.crossings
    assert np.array_equal(driven.q, casadi.q) and np.array_equal(driven.qd, casadi.qd)
    assert driven.provenance.rhs_evaluations == casadi.provenance.rhs_evaluations


def test_the_cholesky_screen_certifies_only_singular_values_at_least_the_floor():
    """`_surely_above` on Φ_q-like matrices (18 × 21, their smallest singular value set from 1e-6 to 1 of the
    largest): where it says so, the SVD's smallest value is at least the floor, at floors 0.5 to 1.5 times it; at
    half of it and below, it says so where the margin (1e-10 of ‖J‖_F², about 2e-10 here) is below a tenth of
    σ² (from 1e-3 on), and at 1e-6 it never does (σ² below the margin)."""
    rng = np.random.default_rng(4)
    left, right = np.linalg.qr(rng.normal(size=(18, 18)))[0], np.linalg.qr(rng.normal(size=(21, 21)))[0]
    for smallest in (1e-6, 1e-3, 0.1, 1.0):
        sigma = np.geomspace(1.0, smallest, 18)
        jacobian = left @ np.diag(sigma) @ right[:18]
        computed = np.linalg.svd(jacobian, compute_uv=False)[-1]
        floors = computed * np.linspace(0.5, 1.5, 101)
        certified = np.array([crossing._surely_above(jacobian[None], floor)[0] for floor in floors])
        assert (computed >= floors[certified]).all()
        assert certified[floors <= 0.5 * computed].all() if smallest >= 1e-3 else not certified.any()
    batch = np.stack([jacobian, 0.01 * jacobian])
    assert crossing._surely_above(batch, 0.1 * computed).tolist() == [True, False]


def test_a_batch_of_gram_matrices_is_screened_matrix_by_matrix_in_one_call(monkeypatch):
    """`_factorable` says, for each of a stack, what np.linalg.cholesky says of it alone (a factor, or LinAlgError),
    in one call through numpy's own gufunc, and the same where that cannot be had (each matrix alone)."""
    rng = np.random.default_rng(7)
    factors = rng.normal(size=(40, 18, 18))
    grams = factors @ factors.transpose(0, 2, 1) - rng.uniform(0.0, 2.0, size=40)[:, None, None] * np.eye(18)
    alone = []
    for matrix in grams:
        try:
            np.linalg.cholesky(matrix)
            alone.append(True)
        except np.linalg.LinAlgError:
            alone.append(False)
    assert 0 < sum(alone) < len(alone)  # both kinds in the stack
    assert crossing._factorable(grams).tolist() == alone
    monkeypatch.setattr(np.linalg, "_umath_linalg", None)  # np.linalg.cholesky itself holds its own reference
    assert crossing._factorable(grams).tolist() == alone


def test_the_watches_compute_the_values_they_remember_where_they_are_read(monkeypatch):
    """A long piece's watch hands its check points over in batches (integrators._Early); of each batch the watches
    remember the last values (three of the rank's, two of the chart's), which only the last batch's are read for:
    each is computed where `steady` or `until` reads it, the exact value at its state alone. The free Delta's first
    0.5 s (a crossing, long pieces, pieces watched at each check point) is the same run bit for bit with every
    remembered value computed as it is watched, which takes more SVDs."""
    model = samples.load("delta_3rus")
    counted = {"svd": 0, "pending": 0}
    svd = np.linalg.svd

    def counting(a, *arguments, **keywords):
        counted["svd"] += int(np.prod(np.shape(a)[:-2]))
        return svd(a, *arguments, **keywords)

    monkeypatch.setattr(np.linalg, "svd", counting)
    lazy = simulate(model, 0.5, error_estimate=False)
    lazily = counted["svd"]
    first_fall = crossing.CrossingWatch.first_fall

    def eager(self, at, states):
        fall = first_fall(self, at, states)
        pending = [(k, value) for k, (_, value) in enumerate(self.checked) if not isinstance(value, float)]
        recent = self._recent()
        for k, jacobian in pending:  # read now: each the exact value at its state alone
            assert recent[k][1] == self._values(jacobian[None])[0]
        counted["pending"] += len(pending)
        self.chart._recent()
        return fall

    monkeypatch.setattr(crossing.CrossingWatch, "first_fall", eager)
    counted["svd"] = 0
    each = simulate(model, 0.5, error_estimate=False)
    assert np.array_equal(lazy.q, each.q) and np.array_equal(lazy.qd, each.qd)
    assert lazy.provenance.rhs_evaluations == each.provenance.rhs_evaluations
    assert counted["pending"] > 0 and lazily < counted["svd"]
