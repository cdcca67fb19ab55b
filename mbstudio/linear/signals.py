"""The inputs and outputs of a linear model, by name, and what each is in the equations of motion.

Inputs (each a direction in the generalized forces τ on the tree coordinates, at the operating point):
    theta1          the generalized force on coordinate theta1 [N m or N]
    push            the effort of the document's actuator `push` (on its coordinate)
    5.K.fz          a force at point K of body 5, along world z [N] (fx, fy, fz): τ = J_Kᵀ F
    5.tz            a torque on body 5 about world z [N m] (tx, ty, tz): τ = J_ωᵀ T
Outputs (each an expression traced on CasADi symbols of q, q̇_ind and τ, differentiated exactly):
    theta1, d_theta1, dd_theta1       a coordinate, its rate, its acceleration (any tree coordinate)
    5.K.x, 5.K.vx, 5.K.ax             a body point's world position, velocity, acceleration (x, y, z)
    <measure>...                      the document's measures: a point measure's .x .. .az, a distance and
                                      its .rate, an angle, a force element's .length and .force, and a
                                      suspension set's .wheel_travel (its other parts are not derivable here)
Names are checked against the model with `input_signals` / `output_signals` (no computing: the dialogs use them).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import casadi
import numpy as np

from ..dynamics.engine import Engine
from ..dynamics.force_laws import law_class
from ..dynamics.forces import AppliedForces
from ..kinematics.mechanism import Mechanism
from ..model import Model
from ..model.document import (
    JOINT_MOTIONS,
    AngleMeasure,
    DistanceMeasure,
    ForceMeasure,
    PointMeasure,
    SuspensionMeasure,
    turns,
)
from ..model.errors import ModelError
from ..numerics.compiled import Traced, from_sx, to_sx

AXES = "xyz"
POINT_PARTS = {"": ("m", 0), "v": ("m/s", 1), "a": ("m/s^2", 2)}  # prefix -> unit, derivative order
RATE_UNITS = ("", "/s", "/s^2")


@dataclass(frozen=True)
class Signal:
    name: str
    unit: str


# ------------------------------------------------------------------------------------------ inputs
def input_signals(model: Model, names: list[str]) -> list[Signal]:
    """Each name as an input with its unit; a ModelError naming the first that is not one."""
    return [_input(model, name) for name in _unique("inputs", names)]


def _input(model: Model, name: str) -> Signal:
    kinds = _coordinate_kinds(model)
    if name in kinds:
        return Signal(name, _force_unit(kinds[name]))
    actuator = _actuator(model, name)
    if actuator is not None:
        return Signal(name, _force_unit(kinds[actuator.coordinate]))
    parts = name.split(".")
    if len(parts) == 3 and parts[2] in ("fx", "fy", "fz"):
        _point(model, parts[0], parts[1], "inputs", name)
        return Signal(name, "N")
    if len(parts) == 2 and parts[1] in ("tx", "ty", "tz"):
        _body(model, parts[0], "inputs", name)
        return Signal(name, "N m")
    raise ModelError("inputs", "is not an input of this model", name, _input_help(model))


def input_directions(mech: Mechanism, q: np.ndarray, names: list[str]) -> np.ndarray:
    """G (n, m): the generalized forces of a unit of each input at the closed coordinates q."""
    model = mech.model
    st = mech.motion(q)
    G = np.zeros((mech.n, len(names)))
    for j, name in enumerate(names):
        parts = name.split(".")
        actuator = _actuator(model, name)
        if name in mech.coordinates or actuator is not None:
            G[mech.coordinates.index(actuator.coordinate if actuator else name), j] = 1.0
        elif len(parts) == 3:
            body = _body(model, parts[0], "inputs", name)
            i = mech.tree.body_index(body)
            local = np.asarray(mech.tree.geometry.point(model.body(body), parts[1]), float)
            world = st.p[i][0] + st.R[i][0] @ local
            G[:, j] = mech.tree.point_jacobian(st, i, world[None])[0][AXES.index(parts[2][1])]
        else:
            i = mech.tree.body_index(_body(model, parts[0], "inputs", name))
            axis = AXES.index(parts[1][1])
            for k in mech.tree.support[i]:
                if mech.tree.kinds[k] == "R":
                    G[k, j] = st.u[0, k, axis]
    return G


def default_inputs(model: Model, independent: list[str]) -> list[str]:
    """The document's actuators, else the generalized forces on the independent coordinates."""
    actuators = [e.name for e in model.forces if law_class(e).actuated]
    return actuators or list(independent)


# ------------------------------------------------------------------------------------------ outputs
def output_signals(model: Model, names: list[str]) -> list[Signal]:
    """Each name as an output with its unit; a ModelError naming the first that is not one."""
    return [_output(model, name)[0] for name in _unique("outputs", names)]


def _output(model: Model, name: str) -> tuple[Signal, tuple]:
    """The output's signal and its recipe: (what, ...) for `Outputs.expression`."""
    kinds = _coordinate_kinds(model)
    for order, prefix in ((0, ""), (1, "d_"), (2, "dd_")):
        base = name[len(prefix) :] if name.startswith(prefix) else None
        if base in kinds and (order == 0 or name not in kinds):
            return Signal(name, _length_unit(kinds[base]) + RATE_UNITS[order]), ("coordinate", base, order)
    parts = name.split(".")
    if len(parts) == 3 and (parts[2][:-1] in POINT_PARTS and parts[2][-1:] in AXES and len(parts[2]) <= 2):
        body = _body(model, parts[0], "outputs", name)
        _point(model, body, parts[1], "outputs", name)
        unit, order = POINT_PARTS[parts[2][:-1]]
        return Signal(name, unit), ("point", body, parts[1], AXES.index(parts[2][-1]), order)
    measure = next((m for m in model.measures if m.name == parts[0]), None)
    recipe = _measure(model, measure, parts[1:]) if measure is not None else None
    if recipe is None:
        raise ModelError("outputs", "is not an output of this model", name, _output_help(model))
    return Signal(name, recipe[0]), recipe[1]


def _measure(model: Model, m, part: list[str]) -> tuple[str, tuple] | None:
    """(unit, recipe) of a measure's part, None when the measure has no such derivable part."""
    sub = ".".join(part)
    if isinstance(m, PointMeasure) and len(sub) in (1, 2) and sub[:-1] in POINT_PARTS and sub[-1] in AXES:
        unit, order = POINT_PARTS[sub[:-1]]
        return unit, ("point", m.body, m.point, AXES.index(sub[-1]), order)
    if isinstance(m, DistanceMeasure) and sub in ("", "rate"):
        return ("m", "m/s")[bool(sub)], ("distance", m.body1, m.point1, m.body2, m.point2, int(bool(sub)))
    if isinstance(m, AngleMeasure) and sub == "":
        return "rad", ("angle", m.body1, tuple(m.axis1), m.body2, tuple(m.axis2))
    if isinstance(m, ForceMeasure):
        element = _element(model, m.element)
        kinds = _coordinate_kinds(model)
        parts = law_class(element).output_parts(element, lambda coordinate: _force_unit(kinds[coordinate]))
        if sub in parts:
            return parts[sub], ("element", m.element, sub)
    if isinstance(m, SuspensionMeasure) and sub == "wheel_travel":
        return "m", ("travel", m.wheel, m.centre)
    return None


class Outputs:
    """The outputs traced once per engine: y(t, q, q̇_ind, τ) as one CasADi function, with its exact
    Jacobians in q (along the tree coordinates: the caller projects with R), q̇_ind and τ."""

    def __init__(self, eng: Engine, names: list[str]) -> None:
        self.eng, self.names = eng, list(names)
        model = eng.mech.model
        self.recipes = [_output(model, name)[1] for name in self.names]
        n, k = eng.n, len(eng.independent)
        self.t, self.q, self.v, self.tau = (
            casadi.SX.sym(s, size) for s, size in (("t", 1), ("q", n), ("v", k), ("tau", n))
        )
        R = eng.symbolic["r_matrix"](self.q)  # on scalar symbols: the expressions below differentiate them
        self.qd = R @ self.v
        self.rate = casadi.SX.sym("rate", n)  # q̇ as a symbol of its own: d/dt of a function of q and q̇
        qdd_ind = eng.symbolic["accelerations"](self.t, self.q, self.v, self.tau)
        self.qdd = R @ qdd_ind + casadi.jtimes(self.qd, self.q, self.qd)  # d/dt (R q̇_ind)
        y = casadi.vertcat(*[self.expression(r) for r in self.recipes]) if self.names else casadi.SX(0, 1)
        arguments = [self.t, self.q, self.v, self.tau]
        jacobians = [casadi.jacobian(y, x) for x in (self.q, self.v, self.tau)]
        self.function = casadi.Function("outputs", arguments, [y, *jacobians])

    def __call__(self, t: float, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> list[np.ndarray]:
        """y (p,), ∂y/∂q (p, n), ∂y/∂q̇_ind (p, k), ∂y/∂τ (p, n) at one state."""
        y, *jacobians = self.function(t, q, v, tau)
        return [np.asarray(y).ravel(), *(np.asarray(j).reshape(len(self.names), -1) for j in jacobians)]

    # ------------------------------------------------------------------ traced expressions
    def expression(self, recipe: tuple) -> casadi.SX:
        what, *args = recipe
        if what == "coordinate":
            name, order = args
            return (self.q, self.qd, self.qdd)[order][self.eng.mech.coordinates.index(name)]
        if what == "point":
            body, point, axis, order = args
            return self.rates(self.point(body, point)[axis], order)
        if what == "travel":  # the wheel centre's height above its height at the document's pose
            return self.point(*args)[2] - self._document_height(*args)
        if what == "distance":
            return self.rates(self.distance(*args[:4]), args[4])
        if what == "angle":
            d1, d2 = self.direction(args[0], args[1]), self.direction(args[2], args[3])
            return casadi.atan2(casadi.norm_2(casadi.cross(d1, d2)), casadi.dot(d1, d2))
        element, part = args  # what == "element": a force element's output, its law's
        return AppliedForces(self.traced, [_element(self.traced.model, element)]).laws[0].output(part, self)

    def coordinate_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """q and q̇ as (1, n) object arrays of their symbols, as the force laws take them."""
        return from_sx(self.q).T, from_sx(self.qd).T

    def rates(self, x: casadi.SX, order: int) -> casadi.SX:
        """x, ẋ or ẍ along the motion (x a function of q only, or of q and q̇ for order 1)."""
        if order == 0:
            return x
        rate = casadi.jtimes(x, self.q, self.rate)  # ∂x/∂q q̇ with q̇ free: its derivative is then J̇ q̇ alone
        if order == 2:
            rate = casadi.jtimes(x, self.q, self.qdd) + casadi.jtimes(rate, self.q, self.rate)
        return casadi.substitute(rate, self.rate, self.qd)

    @functools.cached_property
    def traced(self) -> Mechanism:
        return Mechanism(self.eng.mech.model, backend=Traced(), partition=self.eng.mech.partition)

    @functools.cached_property
    def _state(self):
        return self.traced.motion(from_sx(self.q).T)

    def point(self, body: str, point: str) -> casadi.SX:
        tree = self.traced.tree
        i = tree.body_index(body)
        local = tree.geometry.point(self.traced.model.body(body), point)
        return to_sx(self._state.p[i][0] + (self._state.R[i][0] * local[None, :]).sum(axis=1))

    def _document_height(self, body: str, point: str) -> float:
        mech = self.eng.mech
        st = mech.motion(mech.assemble(None, strict=False)[0])
        i = mech.tree.body_index(body)
        return float((st.p[i][0] + st.R[i][0] @ mech.tree.geometry.point(mech.model.body(body), point))[2])

    def distance(self, body1: str, point1: str, body2: str, point2: str) -> casadi.SX:
        return casadi.norm_2(self.point(body2, point2) - self.point(body1, point1))

    def direction(self, body: str, vector: tuple) -> casadi.SX:
        tree = self.traced.tree
        local = np.asarray([float(x) for x in tree.geometry.vector(list(vector))], float)
        i = tree.body_index(body)
        return to_sx((self._state.R[i][0] * (local / np.linalg.norm(local))[None, :]).sum(axis=1))


def default_outputs(independent: list[str]) -> list[str]:
    return list(independent)


# ------------------------------------------------------------------------------------------ shared checks
def _unique(field: str, names: list[str]) -> list[str]:
    names = [n.strip() for n in names]
    for k, name in enumerate(names):
        if not name:
            raise ModelError(field, "has an empty name", None, "names separated by commas")
        if name in names[:k]:
            raise ModelError(field, "lists a name twice", name, "each name once")
    return names


def _coordinate_kinds(model: Model) -> dict[str, str]:
    return {
        c.name: "R" if turns(motion) else "T"
        for j in model.joints
        for c, motion in zip(j.coordinates, JOINT_MOTIONS[j.type], strict=True)
    }


def _force_unit(kind: str) -> str:
    return "N m" if kind == "R" else "N"


def _length_unit(kind: str) -> str:
    return "rad" if kind == "R" else "m"


def _element(model: Model, name: str):
    return next((e for e in model.forces if e.name == name), None)


def _actuator(model: Model, name: str):
    """The force element `name` when it is a prescribed effort on a coordinate (its law's `actuated`), else None."""
    element = _element(model, name)
    return element if element is not None and law_class(element).actuated else None


def _body(model: Model, body: str, field: str, name: str) -> str:
    """The body's label, given its label or its name."""
    for b in [model.ground, *model.bodies]:
        if body in (b.label, b.name):
            return b.label
    labels = ", ".join(b.label for b in model.bodies)
    raise ModelError(field, f"names no body {body!r}", name, f"a body label: {labels}")


def _point(model: Model, body: str, point: str, field: str, name: str) -> None:
    label = _body(model, body, field, name)
    points = model.body(label).points
    if point not in points:
        raise ModelError(field, f"names no point {point!r} of body {label}", name, ", ".join(points) or "(none)")


def _input_help(model: Model) -> str:
    coordinates = ", ".join(model.coordinate_names())
    actuators = ", ".join(e.name for e in model.forces if law_class(e).actuated)
    return f"a coordinate ({coordinates}), an actuator ({actuators or 'none'}), BODY.POINT.fx|fy|fz or BODY.tx|ty|tz"


def _output_help(model: Model) -> str:
    coordinates = ", ".join(model.coordinate_names())
    measures = ", ".join(m.name for m in model.measures)
    return (
        f"a coordinate ({coordinates}), d_ or dd_ of one, BODY.POINT.x|y|z|vx..|ax.., or a measure's part "
        f"({measures or 'no measures'})"
    )
