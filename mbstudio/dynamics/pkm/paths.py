"""Platform paths (the document's `platform.paths`) and the task-space inverse dynamics along them: platform
motion in, each limb's coordinates and the actuator efforts out (Müller 2021, sec. 8.2, eq. 137)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...kinematics.geometry import Geometry
from ...model.document import JOINT_MOTIONS, Trajectory, turns
from ...model.errors import ModelError
from ...numerics.backends import Float64
from .task_space import InverseDynamics, ParallelMachine


def platform_path(pkm: ParallelMachine, name: str | None) -> Trajectory:
    """The document's platform path called `name` (None: its first); a ModelError listing them otherwise."""
    paths = pkm.model.platform.paths if pkm.model.platform is not None else []
    for path in paths:
        if name is None or path.name == name:
            return path
    raise ModelError(
        "trajectory",
        "is not a platform path of the model" if name else "the model has no platform path",
        name,
        ", ".join(p.name for p in paths) or "a 'paths' entry in the model's 'platform' section (docs/file-format.md)",
    )


def path_motion(pkm: ParallelMachine, path: Trajectory, times: np.ndarray) -> tuple[np.ndarray, ...]:
    """Task coordinates, velocities and accelerations (N, δ_p) at `times`: each task coordinate its value at
    the document's pose plus Σ A sin(ω t + φ)."""
    geometry = Geometry(pkm.model, Float64())
    t = np.asarray(times, float)[:, None]
    out = [np.zeros((len(t), len(pkm.axes))) for _ in range(3)]
    out[0][:] = pkm.position0[pkm.axes]
    for j, name in enumerate(pkm.task_names):
        for h in path.coordinates.get(name, []):
            amplitude, omega, phase = (geometry.value(x) for x in (h.amplitude, h.frequency, h.phase or 0.0))
            angle = omega * t[:, 0] + phase
            out[0][:, j] += amplitude * np.sin(angle)
            out[1][:, j] += amplitude * omega * np.cos(angle)
            out[2][:, j] -= amplitude * omega**2 * np.sin(angle)
    return tuple(out)


@dataclass
class PathDynamics:
    """The platform path's times (N,), task coordinates, velocities, accelerations (N, δ_p), the limbs'
    coordinates (per limb (N, n_l), the document's names in `pkm.limbs[l].coordinates`) and the efforts."""

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    a: np.ndarray
    states: list[np.ndarray]
    dynamics: InverseDynamics

    def columns(self, pkm: ParallelMachine) -> list[tuple[str, str, np.ndarray]]:
        """(name, unit, values) per column: time, the platform's motion, the actuated coordinates, the efforts,
        and each limb's wrench on the task coordinates (eq. 144)."""
        out = [("t", "s", self.t)]
        for prefix, unit, values in (("", "m", self.x), ("d_", "m/s", self.v), ("dd_", "m/s^2", self.a)):
            out += [(f"{prefix}{name}", unit, values[:, j]) for j, name in enumerate(pkm.task_names)]
        named = {}
        for limb, q in zip(pkm.limbs, self.states, strict=True):
            named |= dict(zip(limb.coordinates, q.T, strict=True))
        units = effort_units(pkm)
        out += [(name, "rad" if units[name] == "N m" else "m", named[name]) for name in pkm.actuated]
        out += [(f"u:{name}", units[name], self.dynamics.efforts[:, k]) for k, name in enumerate(pkm.actuated)]
        for limb, wrench in zip(pkm.limbs, self.dynamics.limb_wrenches, strict=True):
            label = limb.limb.name.split(" (")[0].replace(" ", "")
            out += [(f"{label}:W_{name}", "N", wrench[:, j]) for j, name in enumerate(pkm.task_names)]
        return out


def effort_units(pkm: ParallelMachine) -> dict[str, str]:
    """'N m' for an actuated rotation, 'N' for a translation."""
    units = {}
    for joint in pkm.model.joints:
        for coordinate, motion in zip(joint.coordinates, JOINT_MOTIONS[joint.type], strict=True):
            units[coordinate.name] = "N m" if turns(motion) else "N"
    return units


def path_dynamics(pkm: ParallelMachine, path: Trajectory, samples: int | None = None) -> PathDynamics:
    """Inverse dynamics along the platform path, sampled `samples` times (default: the path's own) over its
    duration, both ends included."""
    t = np.linspace(0.0, path.duration, samples or path.samples)
    x, v, a = path_motion(pkm, path, t)
    states = pkm.inverse_kinematics(x)
    return PathDynamics(t, x, v, a, states, pkm.inverse_dynamics(states, v, a))
