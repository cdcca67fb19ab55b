"""Progress and cancel, written once (mbstudio/progress.py): the stages' shares add up to the whole bar, a cancel
flag given as an Event or as a callable stops the work at its next report, and every analysis's Cancelled is the
one exception a caller catches."""

from __future__ import annotations

import threading

import pytest

from mbstudio import progress
from mbstudio.identification import pipeline
from mbstudio.simulation import run
from mbstudio.symbolic import eom


def test_stages_report_each_stage_within_its_share_of_the_bar():
    seen = []
    stages = progress.Stages(lambda fraction, message: seen.append((fraction, message)), None, [1.0, 3.0])
    stages.start("first")
    stages.within(0.5, "half of the first")
    stages.start("second")
    stages.within(0.5, "half of the second")
    stages.done()
    assert [f for f, _ in seen] == pytest.approx([0.0, 0.125, 0.25, 0.625, 1.0], abs=1e-15)
    assert seen[1][1] == "half of the first" and seen[-1] == (1.0, "done")


@pytest.mark.parametrize("kind", ["event", "callable"])
def test_a_cancel_flag_stops_the_stages_at_their_next_report(kind):
    event = threading.Event()
    cancel = event if kind == "event" else event.is_set
    stages = progress.Stages(None, cancel, [1.0])
    stages.start("sampling")
    event.set()
    with pytest.raises(progress.Cancelled, match="cancelled during: sample 26"):
        stages.within(0.3, "sample 26")


def test_no_cancel_flag_never_stops():
    assert progress.stop_requested(None)() is False
    event = threading.Event()
    assert progress.stop_requested(event)() is False
    event.set()
    assert progress.stop_requested(event)() is True


def test_every_analysis_raises_the_one_cancelled():
    """A caller (the job runner, a script) catches mbstudio.progress.Cancelled whatever it ran; the simulation's
    keeps the time it reached."""
    assert eom.Cancelled is progress.Cancelled and pipeline._Monitor is progress.Stages
    stopped = run.Cancelled(0.25)
    assert isinstance(stopped, progress.Cancelled) and stopped.time == 0.25
    assert str(stopped) == "simulation cancelled at t = 0.25 s"
