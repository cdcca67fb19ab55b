"""Linear parameter-varying (LPV) models: a family of linear models over a grid of one scheduling parameter,
each about its own operating point.

    family = linear_family(model, "theta1", np.linspace(-0.1, 0.1, 5))      # a coordinate: held there
    family = linear_family(model, "L", [1.0, 1.2, 1.6])                     # a model parameter
    family.models[i].A, family.values[i]

A scheduling coordinate (an independent one) is held at each value while the others settle into equilibrium
(the force holding it is part of each point: `point.held`), or, with at="initial", is set there from the
document's pose. A scheduling parameter changes the model itself; each equilibrium starts from the last one
found, so the family follows one branch of equilibria as the parameter moves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..model import Model, dumps, loads
from ..model.errors import ModelError
from .equilibrium import equilibrium, operating_point
from .linear_model import LinearModel, linearize


@dataclass
class LinearFamily:
    schedule: str  # the scheduling coordinate or parameter
    kind: str  # "coordinate" or "parameter"
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
) -> LinearFamily:
    """One linear model per value of `schedule` (an independent coordinate or a parameter), about the
    equilibrium there (at="equilibrium") or the document's pose (at="initial")."""
    if at not in ("equilibrium", "initial"):
        raise ModelError("at", "is not an operating point of a family", at, "equilibrium or initial")
    values = np.asarray(values, float)
    kind = _kind(model, schedule)
    hold = dict(hold or {})
    models: list[LinearModel] = []
    for i, value in enumerate(values):
        if progress is not None:
            progress(i / len(values), f"{schedule} = {value:g}")
        varied = _with_parameter(model, schedule, value) if kind == "parameter" else model
        start = models[-1].q if models else None  # follow one branch of equilibria
        if at == "initial":
            point = operating_point(varied, values={schedule: value} if kind == "coordinate" else None)
        else:
            held = {**hold, schedule: value} if kind == "coordinate" else hold
            point = equilibrium(varied, start=start, hold=held)
        models.append(linearize(varied, point, inputs, outputs))
        if models[-1].states != models[0].states:
            raise ModelError(
                "schedule",
                f"changes the independent coordinates at {schedule} = {value:g} ({', '.join(models[-1].states)})",
                None,
                "the independent coordinates fixed in the document (Analysis › Driving Coordinates)",
            )
    return LinearFamily(schedule, kind, values, models)


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
