"""The workspace: the open document, its pose (pose.py), the results of its jobs filed by the model revision they
were computed on, and the table that routes a finished job to its handler by the job's task. No Qt: the window
registers its handlers (a panel to fill, a file to write, a pose to move to) and wires the rest to its docks
(docs/architecture.md, "The workspace")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..jobs import Job
from ..model import Model
from ..model.hashing import model_hash
from .pose import JobStarter, Pose


class OpenDocument(Protocol):
    """What the workspace reads of the window's document: the model being edited (replaced on a structural
    edit, changed in place by a pose edit)."""

    model: Model


@dataclass(frozen=True)
class Route:
    """A handler of finished jobs of one task. `filed`: its result is kept under its model hash (shown again
    when undo or redo comes back to that revision), and dropped when the document it was started on is no
    longer open; otherwise the handler acts once, whatever is open (a file written, an import opened)."""

    handler: Callable[[Job], object]
    filed: bool


def _taken_up_at_next_step(job: Job) -> None:
    """An engine built: the sliders find it in the cache at their next step (Pose.fast_assembly)."""


class Workspace:
    """`pose` follows the document's structure and pose; `results[model_hash][task]` is the latest finished job
    of each task on that revision; `routes[task]` says what a finished job of `task` does."""

    def __init__(self, document: OpenDocument, jobs: JobStarter) -> None:
        self.document = document
        self.jobs = jobs
        self.pose = Pose(jobs)
        self.model_hash = ""
        self.results: dict[str, dict[str, Job]] = {}
        self.routes: dict[str, Route] = {"engine": Route(_taken_up_at_next_step, filed=False)}
        self.orphans: set[int] = set()  # jobs started for a document no longer open

    # ------------------------------------------------------------------ the document
    def rebuild(self) -> str | None:
        """After a structural edit: the pose rebuilt from the document; why it does not assemble, or None."""
        return self.pose.rebuild(self.document.model)

    def model_changed(self) -> str:
        """After any edit, undo or redo: the hash of the document's revision, which results are filed under."""
        self.model_hash = model_hash(self.document.model)
        return self.model_hash

    def replaced(self) -> None:
        """Another document in the window: the results go with the old one, and the jobs still running for it
        will be kept in the jobs panel but not shown over the new model."""
        self.results.clear()
        self.orphans |= {job.id for job in self.jobs.running}

    def current_results(self) -> dict[str, Job]:
        """The latest finished job of each filed task on the document's revision."""
        return self.results.get(self.model_hash, {})

    def is_current(self, job: Job) -> bool:
        """Whether `job` ran on the document's revision (the model was not edited while it ran)."""
        return job.model_hash == self.model_hash

    # ------------------------------------------------------------------ finished jobs
    def route(self, task: str, handler: Callable[[Job], object], filed: bool = True) -> None:
        """Finished jobs of `task` go to `handler` (see Route for `filed`). One handler per task: a second one is
        refused, so two routes cannot silently replace each other."""
        if task in self.routes:
            raise ValueError(f"finished '{task}' jobs are routed already (to {self.routes[task].handler!r})")
        self.routes[task] = Route(handler, filed)

    def finished(self, job: Job) -> None:
        """A job that ended, in any state, to the handler of its task: nothing for one without a result (failed,
        or cancelled before it did a part it could keep); a filed result is kept under its model hash first."""
        if job.result is None:
            return
        route = self.routes.get(job.task)
        if route is None:
            routed = ", ".join(sorted(self.routes))
            raise LookupError(f"no handler for finished '{job.task}' jobs; routed tasks: {routed} (Workspace.route)")
        if route.filed:
            if job.id in self.orphans:
                return
            self.results.setdefault(job.model_hash, {})[job.task] = job
        route.handler(job)
