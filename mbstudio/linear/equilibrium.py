"""Operating points and static equilibria of any mechanism, open or closed, on the compiled engine.

    point = equilibrium(model)                               # q̈ = 0 at rest near the document's pose
    point = equilibrium(model, hold={"theta1": 0.05})        # theta1 held there: the force holding it is found
    point = operating_point(model, "initial", velocities={"theta1": 0.5})   # any state, equilibrium or not
    # linearisation's default among the equilibria found, each with its stability: linear/equilibria.py

An equilibrium solves q̈_ind(q, q̇ = 0, τ) = 0 under gravity, springs, the document's actuators (at time t)
and fixed generalized forces, by Newton on the independent coordinates (the loops closed at every step) with
the engine's exact ∂q̈/∂q_ind. A held coordinate trades its unknown position for an unknown generalized force,
so the system stays square; directions along which nothing changes the accelerations (a floating body's
horizontal drift, a balanced wheel's spin) are neutral: Newton takes minimum-norm steps that leave them where
they are, and they are reported with the point instead of failing. When the accelerations cannot be brought
to zero, the ModelError names the coordinates whose generalized forces stay unbalanced and by how much.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..dynamics.engine import Engine, engine
from ..model import Model
from ..model.errors import AssemblyError, ModelError
from ..model.typed_numbers import coordinate_dimensions, rate_spelled_otherwise, read_pairs

NEWTON_STEPS = 60
TOLERANCE = 1e-10  # m/s² or rad/s² left in q̈_ind
# ... or, where no step lowers it any more, this times float64's epsilon times the accelerations at the start:
# their rounding floor (a stiff model's q̈ is a difference of large forces, which 1e-10 may lie below)
ROUNDING_FLOOR = 1e3
MAX_STEP = 0.3  # rad, or this times the mechanism's length scale: the largest Newton step of a coordinate
NEUTRAL = 1e-9  # singular values of ∂q̈/∂q_ind below this fraction of the largest: a neutral direction
KINDS = ("equilibrium", "initial", "given")


@dataclass
class OperatingPoint:
    """A state of the mechanism to linearise about: closed coordinates q (n,), independent velocities v (k,),
    generalized forces tau (n,) applied besides the document's own (fixed inputs, and the forces holding held
    coordinates), at time t. `kind`: an "equilibrium" found here, the document's pose ("initial"), or a state
    "given" by the user; `accelerations` q̈_ind there (zero at an equilibrium, the drift otherwise)."""

    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    t: float
    kind: str
    coordinates: list[str]
    independent: list[str]
    accelerations: np.ndarray
    held: dict[str, float] = field(default_factory=dict)  # held coordinate -> the generalized force holding it
    neutral: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (k, r): directions in q_ind
    note: str = ""  # how a default point was chosen (equilibrium_or_pose), said with the result
    found: list[dict] = field(default_factory=list)  # the equilibria found, with their stability (equilibria)

    @property
    def at_rest(self) -> bool:
        return not np.any(self.v)

    @property
    def is_equilibrium(self) -> bool:
        """At rest with q̈ = 0: the linear model describes motions about a fixed point."""
        return self.at_rest and float(np.abs(self.accelerations).max(initial=0.0)) <= 1e3 * TOLERANCE

    def values(self) -> dict[str, float]:
        return {name: float(x) for name, x in zip(self.coordinates, self.q, strict=True)}

    def velocities(self) -> dict[str, float]:
        return {name: float(x) for name, x in zip(self.independent, self.v, strict=True)}

    def neutral_directions(self) -> list[dict[str, float]]:
        """Each neutral direction as {independent coordinate: component}, the negligible ones left out."""
        out = []
        for column in self.neutral.T:
            column = column / column[np.abs(column).argmax()]
            out.append({n: float(c) for n, c in zip(self.independent, column, strict=True) if abs(c) > 1e-9})
        return out

    def to_dict(self) -> dict:
        """Plain data (for job results and exported files)."""
        return {
            "kind": self.kind,
            "t": self.t,
            "coordinates": list(self.coordinates),
            "q": self.q,
            "independent": list(self.independent),
            "v": self.v,
            "tau": self.tau,
            "accelerations": self.accelerations,
            "is_equilibrium": self.is_equilibrium,
            "held": dict(self.held),
            "neutral": self.neutral_directions(),
            "note": self.note,
            "equilibria_found": self.found,
        }


def equilibrium(
    model: Model,
    start: np.ndarray | None = None,
    hold: Mapping[str, float] | None = None,
    forces: Mapping[str, float] | None = None,
    t: float = 0.0,
) -> OperatingPoint:
    """The static equilibrium near `start` (closed coordinates (n,); default the document's pose): q̈_ind = 0
    at rest. `hold`: independent coordinates kept at the given values (their holding forces are found);
    `forces`: constant generalized forces on tree coordinates. A ModelError when there is none nearby."""
    eng = engine(model)
    names = eng.mech.independent
    held = _held(names, hold or {})
    tau = generalized_forces(eng, forces or {})
    q = _start(eng, start, held)
    solver = _Newton(eng, held, tau, t)
    q, holding = solver.solve(q)
    tau = tau.copy()
    tau[[eng.independent[names.index(h)] for h in held]] += holding
    return OperatingPoint(
        q,
        np.zeros(len(names)),
        tau,
        t,
        "equilibrium",
        list(eng.mech.coordinates),
        list(names),
        eng.accelerations(t, q, np.zeros(len(names)), tau),
        dict(zip(held, (float(x) for x in holding), strict=True)),
        solver.neutral(q, tau),
    )


def operating_point(
    model: Model,
    kind: str = "initial",
    values: Mapping[str, float] | None = None,
    velocities: Mapping[str, float] | None = None,
    forces: Mapping[str, float] | None = None,
    t: float = 0.0,
) -> OperatingPoint:
    """A state that need not be an equilibrium: the document's pose ("initial"), or with independent
    coordinates set to `values` and their rates to `velocities` ("given"), the loops closed from the pose."""
    if kind not in KINDS[1:]:
        raise ModelError("operating point", "is not a kind of state given here", kind, "initial or given")
    eng = engine(model)
    names = eng.mech.independent
    values, velocities = dict(values or {}), dict(velocities or {})
    for name in [*values, *velocities]:
        if name not in names:
            raise ModelError(
                "operating point", "is not an independent coordinate", name, ", ".join(names) or "(none: no motion)"
            )
    q = _start(eng, None, values)
    v = np.array([float(velocities.get(n, 0.0)) for n in names])
    tau = generalized_forces(eng, forces or {})
    kind = "given" if values or velocities else kind
    return OperatingPoint(q, v, tau, t, kind, list(eng.mech.coordinates), list(names), eng.accelerations(t, q, v, tau))


def parse_state(
    text: str, kinds: Mapping[str, str], notes: list[str] | None = None
) -> tuple[dict[str, float], dict[str, float]]:
    """'theta1=0.1, d_theta1=5 deg/s' as (coordinate values, velocities) of the independent coordinates, whose
    joint motions `kinds` gives: plain numbers in SI, a number with its unit converted. A rate may also be
    written as other programs name it, 'theta1_dot': read as d_theta1, with a note appended to `notes`."""
    text = _rates_as_d(text, kinds, notes if notes is not None else [])
    names = [*kinds, *(f"d_{n}" for n in kinds)]
    rates = "an independent coordinate or d_ its rate"
    values = read_pairs("at", text, coordinate_dimensions(names, kinds), names_are=rates)
    coordinates = {n: v for n, v in values.items() if n in kinds}
    return coordinates, {n[2:]: v for n, v in values.items() if n not in coordinates}


def _rates_as_d(text: str, kinds: Mapping[str, str], notes: list[str]) -> str:
    """'theta1_dot=…' as 'd_theta1=…' for an independent coordinate theta1: one name for a rate on the command
    line (d_NAME, as the CSV headers, ensembles, linear models and FMUs have it), the other accepted."""

    def rename(match: re.Match) -> str:
        name = rate_spelled_otherwise(match[0], kinds)
        if name is None:
            return match[0]
        notes.append(f"{name}_dot read as d_{name} (a rate is d_NAME, as in mbstudio's tables)")
        return f"d_{name}"

    return re.sub(r"\b[A-Za-z_]\w*_dot\b(?=\s*=)", rename, text)


def generalized_forces(eng: Engine, forces: Mapping[str, float]) -> np.ndarray:
    """Constant generalized forces {tree coordinate: value} as τ (n,)."""
    tau = np.zeros(eng.n)
    for name, value in forces.items():
        if name not in eng.mech.coordinates:
            raise ModelError("forces", "names no coordinate of the tree", name, ", ".join(eng.mech.coordinates))
        tau[eng.mech.coordinates.index(name)] = float(value)
    return tau


def _held(names: list[str], hold: Mapping[str, float]) -> dict[str, float]:
    for name, value in hold.items():
        if name not in names:
            raise ModelError(
                "hold",
                "is not an independent coordinate (only those can be held; Analysis › Driving Coordinates "
                "chooses them)",
                name,
                ", ".join(names) or "(none)",
            )
        if not np.isfinite(float(value)):
            raise ModelError("hold", f"{name} is not held at a finite value", value, "a number")
    return {name: float(value) for name, value in hold.items()}


def _start(eng: Engine, start: np.ndarray | None, values: Mapping[str, float]) -> np.ndarray:
    """Closed coordinates from `start` (default the document's pose) with the given independent values."""
    q = np.array(eng.mech.assemble(None)[0] if start is None else start, dtype=float)
    for name, value in values.items():
        q[eng.mech.coordinates.index(name)] = float(value)
    return eng.close_loops(q)[0]


class _Newton:
    """Newton on q̈_ind(q_free, u_held) = 0: the free independent coordinates and the held ones' forces."""

    def __init__(self, eng: Engine, held: dict[str, float], tau: np.ndarray, t: float) -> None:
        names = eng.mech.independent
        self.eng, self.tau, self.t = eng, tau, t
        self.free = [i for i, n in enumerate(names) if n not in held]  # positions among the independent ones
        self.held_tree = [eng.independent[names.index(n)] for n in held]  # tree indices of the held ones
        self.rest = np.zeros(len(names))
        self.stuck = False  # a step was refused because the loops stop closing there
        kinds = [eng.mech.tree.kinds[eng.independent[i]] for i in self.free]
        self.scale = np.array([1.0 if kind == "R" else eng.mech.length_scale for kind in kinds])

    def forces(self, u: np.ndarray) -> np.ndarray:
        tau = self.tau.copy()
        tau[self.held_tree] += u
        return tau

    def solve(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        eng, ind = self.eng, self.eng.independent
        u = np.zeros(len(self.held_tree))
        qdd = eng.accelerations(self.t, q, self.rest, self.forces(u))
        floor = max(TOLERANCE, ROUNDING_FLOOR * np.finfo(float).eps * np.abs(qdd).max(initial=0.0))
        for _ in range(NEWTON_STEPS):
            if np.abs(qdd).max(initial=0.0) <= TOLERANCE:
                return q, u
            J = eng.jacobians(self.t, q, self.rest, self.forces(u))
            jac = np.hstack([J["qdd_q_ind"][:, self.free], J["qdd_tau"][:, self.held_tree]])
            step = np.linalg.lstsq(jac, -qdd, rcond=NEUTRAL)[0]
            reach = np.abs(step[: len(self.free)] / self.scale).max(initial=0.0)
            step = step * min(1.0, MAX_STEP / reach) if reach > 0 else step  # the nearest equilibrium, not a far one
            for _ in range(20):  # halve the step until the loops close and the accelerations fall
                moved = q.copy()
                moved[[ind[i] for i in self.free]] += step[: len(self.free)]
                trial_u = u + step[len(self.free) :]
                try:
                    trial_q = eng.close_loops(moved)[0]
                    trial = eng.accelerations(self.t, trial_q, self.rest, self.forces(trial_u))
                    if np.linalg.norm(trial) < np.linalg.norm(qdd):
                        break
                except AssemblyError:
                    self.stuck = True
                step = step / 2
            else:  # no step lowers them: at the rounding floor, or a force nothing balances, or a minimum of |q̈|
                if np.isfinite(floor) and np.abs(qdd).max(initial=0.0) <= floor:
                    return q, u
                break
            q, u, qdd = trial_q, trial_u, trial
        raise self.unbalanced(q, u, qdd)

    def neutral(self, q: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Directions (k, r) of the free independent coordinates along which q̈ does not change."""
        k = len(self.rest)
        stiffness = self.eng.jacobians(self.t, q, self.rest, tau)["qdd_q_ind"][:, self.free]
        if not self.free:
            return np.zeros((k, 0))
        _, sigma, vt = np.linalg.svd(stiffness)
        small = np.ones(len(self.free), bool)
        small[: len(sigma)] = sigma <= NEUTRAL * max(sigma.max(initial=0.0), 1.0)
        out = np.zeros((k, int(small.sum())))
        out[self.free] = vt[small].T
        return out

    def unbalanced(self, q: np.ndarray, u: np.ndarray, qdd: np.ndarray) -> ModelError:
        """The error naming the coordinates whose generalized forces are left unbalanced (M_ind q̈_ind)."""
        eng = self.eng
        inverse_mass = eng.jacobians(self.t, q, self.rest, self.forces(u))["qdd_tau"][:, eng.independent]
        force = np.linalg.solve(inverse_mass, qdd)
        names, kinds = eng.mech.independent, [eng.mech.tree.kinds[i] for i in eng.independent]
        order = np.argsort(-np.abs(qdd))[:3]
        left = ", ".join(
            f"{names[i]} {force[i]:.4g} {'N m' if kinds[i] == 'R' else 'N'} ({qdd[i]:.3g} "
            f"{'rad/s²' if kinds[i] == 'R' else 'm/s²'})"
            for i in order
            if abs(qdd[i]) > TOLERANCE
        )
        limit = "; the loops stop closing in the direction they push (a limit of travel)" if self.stuck else ""
        return ModelError(
            "equilibrium",
            f"none found near the starting configuration: generalized forces left unbalanced on {left}{limit}",
            None,
            "a spring, gravity or constant force balancing each of these coordinates, holding them "
            "(hold NAME=VALUE), or a start closer to an equilibrium",
        )
