"""A CVODES piece watched as our driver returns (simulation/cvodes_driver.py's Watch, integrators.py's _Early): where
the watch ends it, the states at the returns made are the whole piece's, bit for bit, with fewer evaluations; a
closed loop's run, its long pieces ended where the watch falls, gives the same samples, bit for bit."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.kinematics import Mechanism
from mbstudio.simulation import cvodes_driver, integrators
from mbstudio.simulation.run import simulate, state_difference

pytestmark = pytest.mark.skipif(cvodes_driver.driver() is None, reason="no CVODES plugin or no compiler here")


def test_a_piece_its_watch_ends_returns_the_whole_pieces_states():
    """The four-bar from rest over 0.5 s, 20 returns: a watch called after the 5th and 10th that ends the piece at
    the 10th is handed the states made so far each time; the piece returns those 10, equal to the whole piece's
    first 10, after fewer evaluations; a watch that raises has its error raised after the driver's call."""
    model = samples.load("four_bar")
    eng = engine(model)
    mech = Mechanism(model)
    start = eng.pack(mech.assemble(None)[0], np.zeros(len(mech.independent)))
    grid = tuple(np.round(np.linspace(0.0, 1.0, 21)[1:], 12))
    piece = cvodes_driver.Piece(cvodes_driver.problem(eng), grid, "adams", 1e-10, 1e-12, integrators.MAX_STEPS, 0.0)
    whole = np.asarray(piece(x0=start, p=[0.0, 0.5])["xf"]).T
    evaluations = piece.stats()["nfevals"]
    handed: list[int] = []

    def check(returned: np.ndarray) -> bool:
        handed.append(len(returned))
        assert np.array_equal(returned, whole[: len(returned)])
        return len(returned) >= 10

    part = np.asarray(piece(x0=start, p=[0.0, 0.5], watch=cvodes_driver.Watch([4, 9, 14], check))["xf"]).T
    assert handed == [5, 10]
    assert np.array_equal(part, whole[:10])
    assert 0 < piece.stats()["nfevals"] < evaluations

    def failing(returned: np.ndarray) -> bool:
        raise ValueError(f"{len(returned)} returns")

    with pytest.raises(ValueError, match="5 returns"):
        piece(x0=start, p=[0.0, 0.5], watch=cvodes_driver.Watch([4], failing))


@pytest.mark.slow  # 3-5 s: the driven Delta twice; the piece itself is checked above in the README run
def test_a_closed_loops_run_is_the_same_with_its_pieces_ended_where_the_watch_falls(monkeypatch):
    """The driven Delta's 2 s: its first long piece runs on past the watch's fall near a crossing, integrated in
    vain, unless the piece is watched as CVODES returns; watched, the same samples bit for bit, fewer evaluations."""
    model = samples.load("delta_3rr2rrr")
    watched = simulate(model, 2.0, error_estimate=False)
    monkeypatch.setattr(integrators, "EARLY", 10**9)  # no piece is long enough
    whole = simulate(model, 2.0, error_estimate=False)
    assert np.array_equal(watched.q, whole.q) and np.array_equal(watched.qd, whole.qd)
    assert np.array_equal(watched.qdd, whole.qdd)
    assert watched.provenance.rhs_evaluations < whole.provenance.rhs_evaluations


def test_a_run_that_has_crossed_goes_on_past_a_cautious_pieces_check_points(monkeypatch):
    """The free Delta crosses singular configurations at 0.27 and 0.75 s; after each the run watches the rank value
    at each check point. Those check points were each a piece's end, each a restart of Adams' formula at order one
    (about 50 evaluations for 0.01 s where the run's own pace is 10): now one piece goes on past them, watched as
    CVODES returns each, and ends where the watch falls. Up to 1 s, the same crossings and coordinates with fewer
    pieces and evaluations (22 and 28 here, 8 695 and 9 394 over the 2 s), and the same motion within the run's
    own accuracy: each is within 1.0e-6 of the state's scale of one at rtol 1e-13 up to 1 s (docs/accuracy.md), so
    apart by less than twice that (2.3e-9 here). Past 1 s the motion amplifies any difference, the run's own error
    included."""
    model = samples.load("delta_3rus")
    pieces = []
    solved = integrators._solved

    def counted(*arguments, **keywords):
        pieces.append(arguments[3][0])  # the piece's start
        return solved(*arguments, **keywords)

    monkeypatch.setattr(integrators, "_solved", counted)
    closely = simulate(model, 2.0, error_estimate=False)
    watched = sum(start < 1.0 for start in pieces)
    monkeypatch.setattr(integrators, "_watched_closely", lambda watch, limit: False)
    pieces.clear()
    each = simulate(model, 2.0, error_estimate=False)
    assert _crossed_before(closely, 1.0) == _crossed_before(each, 1.0) == 2
    first = [run.provenance.charts for run in (closely, each)]
    assert [(t, names) for t, names in first[0] if t < 1.0] == [(t, names) for t, names in first[1] if t < 1.0]
    assert watched < sum(start < 1.0 for start in pieces)
    up_to = closely.t <= 1.0
    scale = Mechanism(model).length_scale
    assert state_difference(_upto(closely, up_to), _upto(each, up_to), scale) < 2e-6


def _crossed_before(run, time: float) -> int:
    """The crossings a run began before `time` (their notes: "... between t = 0.271406 s and ...")."""
    return sum(float(re.search(r"between t = ([0-9.e+-]+) s", note)[1]) < time for note in run.provenance.crossings)


def _upto(run, kept: np.ndarray) -> SimpleNamespace:
    """A run's samples where `kept`, as state_difference reads them."""
    return SimpleNamespace(q=run.q[kept], qd=run.qd[kept], units=run.units)
