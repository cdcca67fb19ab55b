"""The platform moved along its task coordinates, every limb following by its own inverse kinematics: what the
window's task-space sliders do (Müller 2021, sec. 4, eq. 96), starting from whatever pose the mechanism shows."""

from __future__ import annotations

import numpy as np

from ...model.document import Model
from ...model.errors import AssemblyError, ModelError
from .task_space import ParallelMachine

SLIDER_SPAN = 0.4  # each platform slider covers ± this fraction of the platform's distance from the ground origin


class PlatformFollower:
    """A parallel machine's platform as sliders: the limbs' coordinates of the last pose set, kept to start the
    next step's Newton from (a pose set otherwise, by the joint sliders say, is solved for first)."""

    def __init__(self, model: Model) -> None:
        self.pkm = ParallelMachine(model)
        self.q = self.pkm.q0[0]
        self.states = self.pkm.start

    @classmethod
    def of(cls, model: Model) -> PlatformFollower | None:
        """None for a model whose platform the modular model does not take (no parallel machine, or a turning
        platform)."""
        try:
            return cls(model) if model.bodies else None
        except (ModelError, AssemblyError):
            return None

    def task_values(self, q: np.ndarray) -> dict[str, float]:
        """The platform's task coordinates at the machine's coordinates q (n,)."""
        position = self.pkm.mech.poses(q)[self.pkm.platform][1][0]
        rounded = np.round(position, 12) + 0.0  # a platform on an axis at 1e-17 m reads 0 (and not -0)
        return {name: float(rounded[axis]) for name, axis in zip(self.pkm.task_names, self.pkm.axes, strict=True)}

    def ranges(self) -> list[tuple[str, float, float, float]]:
        """(task coordinate, low, high, value at the document's pose) for each slider."""
        half = SLIDER_SPAN * max(float(np.linalg.norm(self.pkm.position0)), 0.1 * self.pkm.mech.length_scale)
        return [(name, value - half, value + half, value) for name, value in self.task_values(self.q).items()]

    def move(self, q: np.ndarray, name: str, value: float, substeps: int = 4) -> np.ndarray:
        """The machine's coordinates (n,) with the platform's `name` at `value` and its other task coordinates
        as at q; an AssemblyError naming the limb that cannot follow."""
        if not np.array_equal(q, self.q):  # moved by other means since the last step
            here = np.array([list(self.task_values(q).values())])
            self.states, self.q = self.pkm.inverse_kinematics(here, self.states, substeps=8), q
        wanted = self.task_values(q) | {name: value}
        states = self.pkm.inverse_kinematics(np.array([list(wanted.values())]), self.states, substeps=substeps)
        self.q = self.pkm.assembled(states)[0]
        self.states = states
        return self.q
