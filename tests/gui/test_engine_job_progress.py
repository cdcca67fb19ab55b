"""The window's first slider move on a new model starts the engine's job, which shows what it waits for: the
build's steps (traced, compiled) with how far it is, as the command line prints them."""

from __future__ import annotations

import shutil
import uuid

import pytest

from mbstudio import samples
from mbstudio.jobs import DONE
from mbstudio.model import save

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def test_the_engines_job_shows_the_builds_steps_with_its_progress(window, qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "empty-cache"))
    # a model no cache holds: the jobs' process may have started before the cache was set, and another test or
    # an earlier run may have built the four-bar's engine in the cache it reads
    model = samples.load("four_bar")
    model.gravity = [0.0, 0.0, -9.81 - 1e-6 * (uuid.uuid4().int % 1000 + 1)]
    path = tmp_path / "own.mbs"
    save(model, path)
    assert window.open_file(str(path))
    shown = []
    window.jobs.changed.connect(lambda job: shown.append((job.fraction, job.message)) if job.task == "engine" else None)
    name = next(iter(window.coordinates.sliders))
    assert window.move_coordinate(name, window._values()[name] + 0.01)
    (job,) = [j for j in window.jobs.jobs if j.task == "engine"]
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    said = [message for _, message in shown]
    # the long wait is the compiler's, after the tracing: its message is shown (the runner passes one message per
    # PROGRESS_INTERVAL, so "building the compiled engine", said a moment after the job's own first, may not be)
    assert any(m.startswith("traced (") for m in said), said
    steps = [fraction for fraction, message in shown if message.startswith(("building", "tracing", "traced"))]
    assert steps == sorted(steps) and 0.1 <= steps[0] <= steps[-1] < 1  # between the job's start and its end
