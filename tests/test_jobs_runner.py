"""The job runner without Qt: results with provenance, progress, cancel within a second keeping the parts sent,
readable errors."""

from __future__ import annotations

import os
import signal
import time

import mpmath
import pytest

from mbstudio import __version__, samples
from mbstudio.jobs import CANCELLED, DONE, FAILED, Runner
from mbstudio.jobs.tasks import JobResult, Provenance
from mbstudio.model import dumps
from mbstudio.model.document import Harmonic, Trajectory


def busy(model_text: str, options: dict, progress, cancel) -> JobResult:
    """A long mpmath computation that never looks at `cancel`: only ending the process stops it. Before it, the
    parts of a result, as many as options["parts"]."""
    progress(0.5, "busy in mpmath")
    for k in range(options.get("parts", 0)):
        progress(0.5, "busy in mpmath", {"part": k})
    mpmath.mp.dps = 5000
    deadline = time.monotonic() + options["seconds"]
    while time.monotonic() < deadline:
        mpmath.zeta(mpmath.mpf(3) + mpmath.rand())
    raise AssertionError("the busy job should have been cancelled")


def holds_the_gil(model_text: str, options: dict, progress, cancel) -> JobResult:
    """One native call of options["seconds"] that never lets go of the GIL (sum over a range runs in C without
    a thread switch), as a C++ compiler call inside CasADi would: the heartbeat thread cannot run meanwhile."""
    progress(0.5, "in one native call")
    start = time.perf_counter()
    sum(range(10**7))
    per_item = (time.perf_counter() - start) / 10**7
    sum(range(int(options["seconds"] / per_item)))
    return JobResult("held", "held", Provenance("", "", "", options, 0.0), {})


@pytest.fixture
def runner():
    r = Runner()
    yield r
    r.cancel_all()


def short_path_model():
    """The SLA with a short exciting path, so the kinematics job is quick."""
    model = samples.load("sla_suspension")
    model.trajectories[:] = [Trajectory("short", {"theta1": [Harmonic(0.1, 1.0, 0.0)]}, 1.0, 5, "test")]
    return model


def test_a_job_returns_its_result_with_provenance_and_reports_progress(runner):
    model = short_path_model()
    job = runner.submit("kinematics", model, {"samples": 5})
    seen = []
    while job.running:
        job.wait(0.05)
        seen.append(job.fraction)
    assert job.state == DONE, job.error + job.details
    p = job.result.provenance
    assert isinstance(p, Provenance)
    assert p.model_hash == job.model_hash and len(p.model_hash) == 64
    assert (p.method, p.precision, p.version) == ("kinematics", "float64", __version__)
    assert p.options == {"samples": 5, "trajectory": None} and p.seconds > 0  # every option, defaults included
    assert job.result.data.q.shape == (5, len(job.result.data.coordinates))
    assert any(0 < f < 1 for f in seen) or job.message == "done"


def test_progress_arrives_while_the_job_runs(runner):
    job = runner.submit(busy, dumps(samples.load("four_bar")), {"seconds": 30})
    deadline = time.monotonic() + 30
    while job.message != "busy in mpmath" and time.monotonic() < deadline:
        job.wait(0.05)
    assert (job.fraction, job.message) == (0.5, "busy in mpmath")
    job.cancel()


def test_cancel_ends_a_long_mpmath_computation_within_a_second_and_keeps_the_parts_sent(runner):
    job = runner.submit(busy, dumps(samples.load("four_bar")), {"seconds": 60, "parts": 2})
    while job.message != "busy in mpmath" or len(job.parts) < 2:
        assert job.wait(0.05) is False  # still running
    start = time.monotonic()
    job.cancel()
    assert time.monotonic() - start < 1.0
    assert job.state == CANCELLED and not job._process.is_alive()
    assert runner.poll() == [] and runner.running == []
    assert job.parts == [{"part": 0}, {"part": 1}] and job.result is None  # no result is made of this task's parts


def test_a_failing_job_reports_a_readable_error_with_details(runner):
    job = runner.submit("base_parameters", samples.load("four_bar"), {"method": "vp", "digits": [8]})
    assert job.wait(60)
    assert job.state == FAILED
    assert "digits: 8 is out of range; expected whole numbers from 16 to 1000" in job.error  # jobs/options.py
    assert "Traceback" in job.details and "ModelError" in job.details


def test_an_unknown_job_is_refused_by_name():
    with pytest.raises(ValueError, match="base_parameters"):
        Runner().submit("nothing", samples.load("four_bar"))


@pytest.mark.slow  # the window runs both as jobs in the README run (tests/gui/test_workbench.py, test_jobs.py)
def test_simulation_and_symbolic_eom_run_as_jobs(runner):
    model = samples.load("four_bar")
    simulation = runner.submit("simulation", model, {"t_end": 0.05, "samples": 6})
    eom = runner.submit("symbolic_eom", model)
    assert simulation.wait(120) and eom.wait(120)
    assert simulation.state == DONE, simulation.error + simulation.details
    data = simulation.result.data
    assert data.q.shape == (6, len(data.coordinates)) and "total_energy [J]" in data.series
    assert simulation.result.provenance.method == "CVODES"
    assert eom.state == DONE, eom.error + eom.details
    assert {"mass_matrix", "bias", "gravity"} <= set(eom.result.data.groups)
    assert eom.result.provenance.precision == "exact"


@pytest.mark.slow  # a linear family in its own process
def test_a_family_that_fails_at_a_member_keeps_the_members_before(runner):
    from tests.test_linearization import point_pendulum

    options = {"at": "equilibrium", "schedule": {"name": "L", "from": 1.0, "to": 0.0, "count": 3}}
    job = runner.submit("linearization", point_pendulum(), options)
    assert job.wait(120) and job.state == FAILED
    assert job.error.startswith("schedule: gives no linear model at L = 0 (Singular matrix)")
    assert job.result.data.family["values"].tolist() == [1.0, 0.5] and job.result.data.family["stopped"]


def _busy_job(runner):
    job = runner.submit(busy, dumps(samples.load("four_bar")), {"seconds": 60})
    while job.message != "busy in mpmath":
        assert job.wait(0.05) is False
    return job


def test_a_stopped_worker_is_reported_as_not_responding_and_cancel_ends_it():
    runner = Runner(heartbeat_timeout=1.0)
    job = _busy_job(runner)
    os.kill(job._process.pid, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while job.responding and time.monotonic() < deadline:
        job.wait(0.1)
    assert job.running and not job.responding and job.message.startswith("not responding: no word from its process")
    os.kill(job._process.pid, signal.SIGCONT)  # it speaks again: running, its last progress shown again
    while not job.responding and time.monotonic() < deadline:
        job.wait(0.1)
    assert job.responding and job.message == "busy in mpmath"
    os.kill(job._process.pid, signal.SIGSTOP)
    start = time.monotonic()
    job.cancel()
    assert time.monotonic() - start < 1.5 and job.state == CANCELLED and not job._process.is_alive()


@pytest.mark.slow  # 4 s (the README's run is held under 5 minutes)
def test_a_worker_inside_one_long_native_call_is_responding_not_silent():
    """Its heartbeat thread cannot run, but it uses the CPU: never reported as not responding (the
    false alarm while an engine compiles)."""
    runner = Runner(heartbeat_timeout=1.0)
    job = runner.submit(holds_the_gil, dumps(samples.load("four_bar")), {"seconds": 3.0})
    silences, alarms = [], []
    while job.running:
        job.wait(0.1)
        silences.append(time.monotonic() - job.heard)
        alarms.append(not job.responding)
    assert job.state == DONE, job.error + job.details
    assert not any(alarms), f"reported as not responding; longest silence {max(silences):.1f} s"


def test_a_worker_killed_from_outside_is_said_to_be_killed(runner):
    job = _busy_job(runner)
    os.kill(job._process.pid, signal.SIGKILL)
    assert job.wait(10) and job.state == FAILED
    assert "killed by signal 9 (SIGKILL)" in job.error and "__main__" not in job.error
