"""The document's geometry (points, frames, gravity, inertia) evaluated in one back-end."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.document import INERTIA_NAMES, Body, Frame, Model
from ..model.expressions import evaluate
from ..model.validation import float_vector
from ..numerics.spatial import default_x_axis, frame_rotation

GRAVITY_SYMBOL = "g"


def gravity_symbol(model: Model) -> tuple[int, float] | None:
    """(axis, magnitude) when the document's gravity is a number along one world axis and no parameter is
    already called g: then symbolic results name it g. None otherwise (gravity written with the document's own
    parameters stays as written)."""
    if any(p.name == GRAVITY_SYMBOL for p in model.parameters):
        return None
    if not all(isinstance(v, int | float) for v in model.gravity):
        return None
    axes = [i for i, v in enumerate(model.gravity) if v != 0]
    return (axes[0], abs(float(model.gravity[axes[0]]))) if len(axes) == 1 else None


@dataclass(slots=True)
class FrameValue:
    rotation: np.ndarray  # (3, 3), columns are the frame axes in body coordinates
    origin: np.ndarray  # (3,)


class Geometry:
    """Evaluates expressions of a model with a back-end: floats, mpf at the back-end's precision, or sympy."""

    def __init__(self, model: Model, backend) -> None:
        self.model = model
        self.backend = backend
        symbols = {p.name: backend.parameter(p.name, p.value) for p in model.parameters}
        symbols["pi"] = backend.pi()
        self.symbols = symbols

    def value(self, expr):
        b = self.backend
        return evaluate(expr, b.scalar, self.symbols, b.functions)

    def vector(self, exprs) -> np.ndarray:
        out = self.backend.zeros(3)
        for i, e in enumerate(exprs):
            out[i] = self.value(e)
        return out

    def point(self, body: Body, name: str) -> np.ndarray:
        return self.vector(body.points[name])

    def frame(self, body: Body, frame: Frame | str) -> FrameValue:
        if isinstance(frame, str):
            frame = body.frames[frame]
        origin = self.point(body, frame.origin) if isinstance(frame.origin, str) else self.vector(frame.origin)
        z_expr = frame.z if frame.z is not None else [0, 0, 1]
        if frame.x is not None:
            x_expr = frame.x
        else:  # chosen on float values, so that every back-end picks the same axis
            x_expr = [0, 0, 0]
            x_expr[default_x_axis(float_vector(z_expr, self.model.parameter_values(), "frame z"))] = 1
        return FrameValue(frame_rotation(self.vector(z_expr), self.vector(x_expr), self.backend), origin)

    def gravity(self) -> np.ndarray:
        """The gravity vector. In sympy, a numeric gravity along one axis is ±g with g a parameter symbol (its
        value the magnitude: see gravity_symbol), so that equations read g*mx1*sin(theta1), not
        981*mx1*sin(theta1)/100."""
        named = gravity_symbol(self.model)
        if named is None or self.backend.name != "sympy":
            return self.vector(self.model.gravity)
        axis, magnitude = named
        out = self.backend.zeros(3)
        sign = 1 if float(self.model.gravity[axis]) > 0 else -1
        out[axis] = sign * self.backend.parameter(GRAVITY_SYMBOL, magnitude)
        return out

    def inertia(self, body: Body) -> np.ndarray:
        """The ten inertial parameters (m, mx, ..., Izz) as a (10,) array."""
        out = self.backend.zeros(10)
        for i, n in enumerate(INERTIA_NAMES):
            out[i] = self.value(body.inertia[n])
        return out
