"""Analyses as jobs: plain functions returning results with provenance (tasks), run in separate processes
that Cancel can end at once (runner). No Qt here."""

from .runner import CANCELLED, DONE, FAILED, RUNNING, Job, Runner
from .tasks import TASKS, JobResult, Provenance, text_hash

__all__ = ["CANCELLED", "DONE", "FAILED", "RUNNING", "TASKS", "Job", "JobResult", "Provenance", "Runner", "text_hash"]
