"""The linear state-space model of a mechanism about an operating point, in its independent coordinates, from
the compiled engine's exact derivatives (CasADi's automatic differentiation; finite differences only check it).

    point = equilibrium(model)
    lin = linearize(model, point, inputs=["theta1", "5.K.fz"], outputs=["theta1", "5.K.z"])
    lin.A, lin.B, lin.C, lin.D, lin.states, lin.inputs, lin.outputs

x = (δq_ind, δq̇_ind), u = the inputs' deviations (linear/signals.py), y = the outputs' deviations:
ẋ = A x + B u, y = C x + D u. The loop closure is inside the derivatives: ∂/∂q_ind = ∂/∂q · R along the closed
configurations. About a state that is not an equilibrium (moving, or pushed), ẋ = f(x₀) + A x + B u: the
drift f(x₀) is kept with the model (`drift`) and said wherever the model is shown or written.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np

from .. import __version__
from ..dynamics.engine import Engine, engine
from ..dynamics.forces import AppliedForces
from ..model import Model
from ..model.hashing import model_hash
from .equilibrium import OperatingPoint, operating_point
from .signals import (
    Outputs,
    default_inputs,
    default_outputs,
    input_directions,
    input_signals,
    output_signals,
)


@dataclass
class LinearModel:
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: list[str]
    inputs: list[str]
    outputs: list[str]
    point: OperatingPoint
    R: np.ndarray  # ∂q/∂q_ind at the point (n, k): mode shapes in every coordinate
    y0: np.ndarray  # the outputs' values at the point
    scales: np.ndarray  # (n,) a comparable displacement of each coordinate: 1 rad, or the mechanism's size in m
    units: dict[str, list[str]] = field(default_factory=dict)  # "states", "inputs", "outputs" -> units
    provenance: dict = field(default_factory=dict)

    @property
    def q(self) -> np.ndarray:
        return self.point.q

    @property
    def drift(self) -> np.ndarray:
        """ẋ at the operating point (zero at an equilibrium)."""
        return np.concatenate([self.point.v, self.point.accelerations])

    @property
    def x0(self) -> np.ndarray:
        return np.concatenate([self.point.q[self.independent_indices], self.point.v])

    @property
    def independent_indices(self) -> list[int]:
        return [self.point.coordinates.index(n) for n in self.point.independent]

    @property
    def eigenvalues(self) -> np.ndarray:
        return np.linalg.eigvals(self.A)

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Undamped natural frequencies |λ| / 2π of the eigenvalues, in the order of `eigenvalues`."""
        return np.abs(self.eigenvalues) / (2 * np.pi)

    @property
    def damping_ratios(self) -> np.ndarray:
        """−Re λ / |λ| (1 for a real negative eigenvalue, 0 for an undamped oscillation, < 0 unstable; NaN for
        λ = 0, a neutral direction)."""
        values = self.eigenvalues
        size = np.abs(values)
        return np.divide(-values.real, size, out=np.full_like(size, np.nan), where=size > 0)

    def to_dict(self) -> dict:
        """Plain data: what the exported files hold (io/state_space.py) and the window receives."""
        return {
            "A": self.A,
            "B": self.B,
            "C": self.C,
            "D": self.D,
            "states": list(self.states),
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "state_units": self.units.get("states", []),
            "input_units": self.units.get("inputs", []),
            "output_units": self.units.get("outputs", []),
            "x0": self.x0,
            "y0": self.y0,
            "drift": self.drift,
            "R": self.R,
            "operating_point": self.point.to_dict(),
            "provenance": dict(self.provenance),
        }

    def state_space(self):
        """A python-control StateSpace with the names (pip install mbstudio[control])."""
        from .control import state_space

        return state_space(self)


def linearize(
    model: Model,
    point: OperatingPoint | None = None,
    inputs: list[str] | None = None,
    outputs: list[str] | None = None,
) -> LinearModel:
    """The linear model about `point` (default: the document's pose at rest, which need not be an equilibrium).
    `inputs`, `outputs`: names (linear/signals.py); by default the document's actuators (else the
    forces on the independent coordinates) and the independent coordinates."""
    start = time.perf_counter()
    eng = engine(model)
    point = operating_point(model) if point is None else point
    names = eng.mech.independent
    inputs = default_inputs(model, names) if inputs is None else list(inputs)
    outputs = default_outputs(names) if outputs is None else list(outputs)
    in_signals, out_signals = input_signals(model, inputs), output_signals(model, outputs)
    k = len(names)
    J = eng.jacobians(point.t, point.q, point.v, point.tau)
    R = J["R"]
    G = input_directions(eng.mech, point.q, inputs)
    A = np.block([[np.zeros((k, k)), np.eye(k)], [J["qdd_q_ind"], J["qdd_qd_ind"]]])
    B = np.vstack([np.zeros((k, len(inputs))), J["qdd_tau"] @ G])
    y0, dy_q, dy_v, dy_tau = _outputs(eng, tuple(outputs))(point.t, point.q, point.v, point.tau)
    C = np.hstack([dy_q @ R, dy_v])
    D = dy_tau @ G
    return LinearModel(
        A,
        B,
        C,
        D,
        [*names, *(f"d_{c}" for c in names)],
        inputs,
        outputs,
        point,
        R,
        y0,
        np.array([1.0 if kind == "R" else eng.mech.length_scale for kind in eng.mech.tree.kinds]),
        {
            "states": _state_units(eng),
            "inputs": [s.unit for s in in_signals],
            "outputs": [s.unit for s in out_signals],
        },
        provenance(eng, point, time.perf_counter() - start),
    )


@functools.lru_cache(maxsize=16)
def _outputs(eng: Engine, names: tuple[str, ...]) -> Outputs:
    """Traced once per engine and choice of outputs: a family over a coordinate reuses it at every point."""
    return Outputs(eng, list(names))


def _state_units(eng: Engine) -> list[str]:
    kinds = [eng.mech.tree.kinds[i] for i in eng.independent]
    positions = ["rad" if kind == "R" else "m" for kind in kinds]
    return positions + [f"{unit}/s" for unit in positions]


def provenance(eng: Engine, point: OperatingPoint, seconds: float) -> dict:
    """Where the matrices come from, and what the operating point is (said, not implied)."""
    model = eng.mech.model
    notes = []
    if not point.is_equilibrium:
        notes.append("not an equilibrium: ẋ = drift + A x + B u, the drift (ẋ at the point) kept with the model")
    if point.neutral.size:
        notes.append(f"{point.neutral.shape[1]} neutral direction(s): an eigenvalue 0 for each")
    forces = AppliedForces(eng.mech)
    timed = [law.name for law in forces.laws if law.time_dependent]
    if timed:
        notes.append(f"time-dependent forces ({', '.join(timed)}) taken at t = {point.t:g} s")
    return {
        "model_hash": model_hash(model),
        "model": model.name,
        "method": "CasADi automatic differentiation of the compiled engine",
        "precision": "float64",
        "operating_point": point.kind,
        "notes": notes,
        "seconds": seconds,
        "version": __version__,
    }
