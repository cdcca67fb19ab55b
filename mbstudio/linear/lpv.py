"""Linear parameter-varying (LPV) models: a family of linear models over a grid of one scheduling parameter,
each about its own operating point.

    family = linear_family(model, "theta1", np.linspace(-0.1, 0.1, 5))      # a coordinate: held there
    family = linear_family(model, "L", [1.0, 1.2, 1.6])                     # a model parameter
    family.models[i].A, family.values[i]
    linear_family(model, "L", [1.0, 1.2, 1.6], each=lambda model_i, lin: ...)  # as each member is done
    branches = mode_branches([...each member's mode eigenvalues...])    # modes followed across the family

A scheduling coordinate (an independent one) is held at each value while the others settle into equilibrium
(the force holding it is part of each point: `point.held`), or, with at="initial", is set there from the
document's pose. A scheduling parameter changes the model itself; each equilibrium starts from the last one
found, so the family follows one branch of equilibria as the parameter moves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..kinematics import Mechanism
from ..model import Model, dumps, loads
from ..model.errors import AssemblyError, ModelError
from ..model.units import si_unit
from .equilibrium import equilibrium, operating_point
from .linear_model import LinearModel, linearize


@dataclass
class LinearFamily:
    schedule: str  # the scheduling coordinate or parameter
    kind: str  # "coordinate" or "parameter"
    unit: str  # the SI unit of the values ('' for a parameter without one)
    values: np.ndarray
    models: list[LinearModel]


def linear_family(
    model: Model,
    schedule: str,
    values,
    at: str = "equilibrium",
    hold: Mapping[str, float] | None = None,
    inputs: list[str] | None = None,
    outputs: list[str] | None = None,
    progress: Callable[[float, str], None] | None = None,
    each: Callable[[Model, LinearModel], None] | None = None,
) -> LinearFamily:
    """One linear model per value of `schedule` (an independent coordinate or a parameter), about the
    equilibrium there (at="equilibrium"), the document's pose (at="initial"), or the first where the first member
    has an equilibrium and the second otherwise (at="auto"). `each(model_i, lin)` is called
    as each member is done (a job sends it on), with the member's model: the document, or a copy with the
    scheduled parameter's value."""
    if at not in ("auto", "equilibrium", "initial"):
        raise ModelError("at", "is not an operating point of a family", at, "auto, equilibrium or initial")
    values, kind, hold = np.asarray(values, float), _kind(model, schedule), dict(hold or {})
    models: list[LinearModel] = []
    for i, value in enumerate(values):
        if progress is not None:
            progress(i / len(values), f"{schedule} = {value:g}")
        start = models[-1].q if models else None  # follow one branch of equilibria
        if at == "auto":  # one kind of point for every member: the first member's
            varied, lin, at = _first_member(model, kind, schedule, value, hold, (inputs, outputs))
        else:
            varied, lin = _member(model, kind, schedule, value, at, hold, start, (inputs, outputs))
        if models and lin.states != models[0].states:
            raise ModelError(
                "schedule",
                f"changes the independent coordinates at {schedule} = {value:g} ({', '.join(lin.states)})",
                None,
                "the independent coordinates fixed in the document (Analysis › Driving Coordinates)",
            )
        models.append(lin)
        if each is not None:
            each(varied, lin)
    return LinearFamily(schedule, kind, schedule_of(model, schedule)[1], values, models)


def _first_member(
    model: Model, kind: str, schedule: str, value: float, hold: dict, signals: tuple
) -> tuple[Model, LinearModel, str]:
    """The first member of a family at="auto": about its equilibrium where there is one, else about the pose;
    and which of the two the family takes."""
    try:
        return *_member(model, kind, schedule, value, "equilibrium", hold, None, signals), "equilibrium"
    except ModelError:
        return *_member(model, kind, schedule, value, "initial", hold, None, signals), "initial"


def _member(
    model: Model, kind: str, schedule: str, value: float, at: str, hold: dict, start, signals: tuple
) -> tuple[Model, LinearModel]:
    """The member at `value`: its model and its linear model (the equilibrium sought from `start`), or the
    ModelError naming the value where there is none."""
    try:
        varied = _with_parameter(model, schedule, value) if kind == "parameter" else model
        if at == "initial":
            point = operating_point(varied, values={schedule: value} if kind == "coordinate" else None)
        else:
            held = {**hold, schedule: value} if kind == "coordinate" else hold
            point = equilibrium(varied, start=start, hold=held)
        return varied, linearize(varied, point, *signals)
    except (ModelError, AssemblyError, np.linalg.LinAlgError) as exc:
        raise ModelError(
            "schedule",
            f"gives no linear model at {schedule} = {value:g} ({exc})",
            None,
            f"a range of {schedule} over which each model is whole and has its operating point",
        ) from exc


def mode_branches(eigenvalues: list[np.ndarray]) -> np.ndarray:
    """Which mode of each member continues each branch of the family: (members, branches) indices into each
    member's modes (one eigenvalue per mode, as linear/modes.py lists them), -1 where a member has none for
    the branch. A member's modes are matched to the branches' latest eigenvalues by least total distance in the
    complex plane, so a mode keeps its branch where natural frequencies cross (their eigenvalues stay apart
    unless the dampings agree too); a mode left over (a pair turned into two real roots) starts a branch."""
    rows: list[list[int]] = []
    latest: list[complex] = []  # each branch's eigenvalue where it was last seen
    for values in eigenvalues:
        row = [-1] * len(latest)
        if latest and len(values):
            cost = np.abs(np.asarray(values)[:, None] - np.asarray(latest)[None, :])
            for mode, branch in zip(*linear_sum_assignment(cost), strict=True):
                row[branch] = int(mode)
        for mode in sorted(set(range(len(values))) - set(row)):
            row.append(mode)
            latest.append(complex(values[mode]))
        for branch, mode in enumerate(row):
            if mode >= 0:
                latest[branch] = complex(values[mode])
        rows.append(row)
    out = np.full((len(rows), len(latest)), -1, dtype=int)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def schedule_of(model: Model, name: str) -> tuple[str, str, float]:
    """A scheduling name's kind ("coordinate" or "parameter"), unit and value in the document."""
    if _kind(model, name) == "parameter":
        parameter = next(p for p in model.parameters if p.name == name)
        return "parameter", si_unit(parameter.unit), float(parameter.value)  # in SI, as the document holds it
    tree = Mechanism(model).tree
    i = tree.coordinates.index(name)
    return "coordinate", "rad" if tree.kinds[i] == "R" else "m", float(tree.initial_coordinates()[i])


def _kind(model: Model, schedule: str) -> str:
    if schedule in model.coordinate_names():
        return "coordinate"
    if schedule in model.parameter_values():
        return "parameter"
    raise ModelError(
        "schedule",
        "is neither a coordinate nor a parameter of the model",
        schedule,
        ", ".join([*model.coordinate_names(), *model.parameter_values()]),
    )


def _with_parameter(model: Model, name: str, value: float) -> Model:
    varied = model.copy()
    for p in varied.parameters:
        if p.name == name:
            p.value = float(value)
    return loads(dumps(varied))  # validated with the new value: a length that breaks a body is said here
