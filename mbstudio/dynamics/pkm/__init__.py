"""Parallel kinematic machines with hybrid limbs, modelled limb by limb (Müller 2021, A. Müller): the topology
(`topology`), one limb as a mechanism of its own with its loops closed one cycle at a time (`limb`),
congruent limbs placed by mount frames (`mounts`), the task-space equations of motion assembled from the
limbs' nodes and the platform (`task_space`), the same quantities by the general closed-loop method for
comparison (`general`), the limb nodes compiled and evaluated serially or on Python threads (`compiled`), and
on native threads (`native`)."""

from .task_space import InverseDynamics, ParallelMachine, TaskSpaceEquations
from .topology import Cycle, Limb, Structure, structure

__all__ = ["Cycle", "InverseDynamics", "Limb", "ParallelMachine", "Structure", "TaskSpaceEquations", "structure"]
