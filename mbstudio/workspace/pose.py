"""The pose of the open model: the mechanism built from the document's structure, the coordinates shown, the
slider steps waiting to be assembled, and the decisions of assembly (the compiled loop equations once this
structure's engine is built, the numpy path until then and where the compiled Newton gives up; a branch change
said, never silent). No Qt: the window shows what this computes."""

from __future__ import annotations

import contextlib
import warnings
from typing import Protocol

import numpy as np

from ..dynamics.engine import fits_engine
from ..dynamics.pkm.follow import PlatformFollower
from ..jobs import Job
from ..kinematics import Mechanism
from ..kinematics.fast_assembly import FastAssembly
from ..kinematics.mechanism import BranchChangeWarning
from ..model import AssemblyError, Model, dumps

ENGINE_TITLE = "Compile the equations for the sliders"
NEAREST_WEIGHT = 1e3  # the driving coordinates' weight in Assemble: they move not at all next to the others


class JobStarter(Protocol):
    """What starts the engine's background build: the window's job manager, or a `Runner` in a script."""

    @property
    def running(self) -> list[Job]: ...

    def start(self, task: str, model_text: str, options: dict, title: str) -> Job: ...


class Pose:
    """`mech` is built from the document's model at each structural change (`rebuild`); `q` is the pose shown (the
    drawn one when a structure does not assemble), which a slider step, a platform move, Assemble or a drag
    (the window's `BodyDrag`) replaces only with a pose that closes."""

    def __init__(self, jobs: JobStarter) -> None:
        self.jobs = jobs
        self.mech: Mechanism | None = None
        self.follower: PlatformFollower | None = None  # task-space sliders of a parallel machine
        self.q = np.zeros(0)
        self.pending_moves: dict[str, tuple[float, int]] = {}  # slider -> (latest wanted value, drag id)
        self.structure = ""  # the model text the compiled assembly is keyed by
        self.fast: FastAssembly | None = None

    def rebuild(self, model: Model) -> str | None:
        """After a structural change: a new mechanism, assembled from the model's initial values; why it does not
        assemble (the pose is then the initial values as they are), or None."""
        self.mech = Mechanism(model)
        self.structure = dumps(model)
        self.fast = None
        self.follower = PlatformFollower.of(model)
        try:
            self.q = self.mech.assemble(None)[0]
        except AssemblyError as exc:
            self.q = np.asarray(self.mech.tree.initial_coordinates(), float)
            return str(exc)
        return None

    def values(self) -> dict[str, float]:
        """The shown pose by coordinate name."""
        return {name: float(self.q[i]) for i, name in enumerate(self.mech.coordinates)}

    def task_values(self) -> dict[str, float] | None:
        """A parallel machine's platform position at the shown pose; None for any other mechanism."""
        return self.follower.task_values(self.q) if self.follower else None

    def from_document(self) -> bool:
        """The document's coordinate values (a pose edit, or its undo) become the shown pose; False if they were
        already shown."""
        q = np.asarray(self.mech.tree.initial_coordinates(), float)
        if np.array_equal(q, self.q):
            return False
        self.q = q
        return True

    def queue_move(self, name: str, value: float, drag: int) -> bool:
        """A slider step, merged with those not yet assembled: only the latest value of each slider is kept, so a
        slow renderer drops frames instead of lagging behind. True for the first step of a batch (then
        `take_moves` is due)."""
        first = not self.pending_moves
        self.pending_moves[name] = (value, drag)
        return first

    def take_moves(self) -> dict[str, tuple[float, int]]:
        moves, self.pending_moves = self.pending_moves, {}
        return moves

    def move_coordinate(self, name: str, value: float) -> tuple[np.ndarray, str | None]:
        """Coordinate `name` to `value`, assembled from the shown pose, which it replaces; with what the numpy
        path says of a branch change. AssemblyError (the pose kept) when the loops do not close there."""
        values = self.values()
        values[name] = value
        self.q, branch = self.assemble(np.array([[values[n] for n in self.mech.independent]]))
        return self.q, branch

    def move_platform(self, name: str, value: float) -> np.ndarray:
        """A parallel machine's platform to `value` along task coordinate `name` (x, y or z, m), every limb
        following by its inverse kinematics from the shown pose, which it replaces. AssemblyError or
        LinAlgError (the pose kept) where a limb cannot follow."""
        self.q = self.follower.move(self.q, name, value)
        return self.q

    def assemble_drawn(self) -> list[tuple[str, float, float]]:
        """Close the loops from the document's coordinate values as drawn, moving every coordinate as little as
        possible and the driving ones not at all; the pose closed becomes the shown one. The coordinates moved
        (name, drawn, closed); AssemblyError, naming the loop, where nothing closes."""
        drawn = np.asarray(self.mech.tree.initial_coordinates(), float)
        self.q = self.mech.assemble_nearest(drawn, dict.fromkeys(self.mech.independent, NEAREST_WEIGHT))
        pairs = zip(self.mech.coordinates, drawn, self.q, strict=True)
        return [(n, float(a), float(b)) for n, a, b in pairs if abs(a - b) > 1e-12]

    def assemble(self, wanted: np.ndarray) -> tuple[np.ndarray, str | None]:
        """The pose at independent values `wanted` (1, k), from the shown pose: on the compiled loop equations once
        this structure's engine is built (a background job started by the first step), on the numpy path until
        then and where the compiled Newton gives up (it names the loop that does not close, and follows the
        branch by continuation). With the pose, what the numpy path says of a branch change."""
        fast = self.fast_assembly()
        if fast is not None:
            with contextlib.suppress(AssemblyError, np.linalg.LinAlgError):
                return fast.assemble(wanted[0], self.q), None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BranchChangeWarning)
            q = self.mech.assemble(wanted, guess=self.q)[0]
        return q, next((str(w.message) for w in caught if issubclass(w.category, BranchChangeWarning)), None)

    def fast_assembly(self) -> FastAssembly | None:
        """The compiled assembly of this structure, once its engine is built on this machine; the first call
        without one starts its build, unless an engine is building already."""
        if self.fast is None and self.mech.partition.dependent and fits_engine(self.mech.model):
            self.fast = FastAssembly.load(self.mech, self.structure)
            building = any(j.task == "engine" and j.running for j in self.jobs.running)
            if self.fast is None and not building:
                self.jobs.start("engine", self.structure, {}, ENGINE_TITLE)
        return self.fast
