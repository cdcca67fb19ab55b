"""The protocol every force law follows, and the registry from a force element's document type to its law.

A force law is what one kind of force element does to the model. Bound to an element and to the `AppliedForces`
that evaluates expressions in the mechanism's back-end (float64, or traced on CasADi symbols for the compiled
engine), it gives:

- its generalized forces Q (N, n) on the tree coordinates (a force at a body point maps to them by Q = J_Pᵀ F),
- its potential energy, when its force at rest is conservative, and whether it depends on the time (then its
  whole power is work done on the model),
- the states it owns, if any (`states`: a tyre's relaxed slips), and their rates (`state_rates`): the engine
  integrates them with q and q̇, and `generalized` then reads them as its keyword `z` (N, its states),
- what measures, linearisation and block models read of it: its measure columns, its traced outputs, its load
  of a block model, its force arrows,
- and, from the document alone (class methods: no mechanism needed), what the exporters can carry of it
  (`carried_by`, `joint_terms`, `actuated`) and the note when a format cannot.

A new kind of element is one module holding its law class decorated with `@register`; see docs/force-laws.md.
"""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from ...model.errors import ModelError
from ...numerics.backends import positive

if TYPE_CHECKING:
    from ...kinematics.mechanism import Mechanism
    from ...kinematics.tree import MotionState

Column = tuple[str, str, np.ndarray]  # (name, unit, values (N,)), as simulation/measures.py makes them
Arrow = tuple[str, np.ndarray, np.ndarray]  # (element, application point, force), world axes

FORMATS = {"mjcf": "MJCF", "urdf": "URDF"}


class Evaluator(Protocol):
    """What a law evaluates with, in the mechanism's back-end: dynamics/forces.py's `AppliedForces` (named here
    by what it does, so that the laws do not import the module that imports them)."""

    mech: Mechanism

    def value(self, expr, t=None): ...
    def time_function(self, formula, t) -> np.ndarray: ...
    def table_value(self, xs: np.ndarray, ys: np.ndarray, at: list) -> np.ndarray: ...
    def point(self, st: MotionState, label: str, point: str) -> tuple[np.ndarray, np.ndarray]: ...
    def road(self, t, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, object]: ...
    def of_law(self, law: ForceLaw, t, q, qd, st: MotionState | None = None) -> np.ndarray: ...


@dataclass(frozen=True)
class JointTerms:
    """An element as the linear joint dynamics file formats carry on one coordinate:
    −stiffness (q − rest) − damping q̇ − coulomb sign(q̇); `stiffness` None where it has no spring."""

    coordinate: str
    damping: float = 0.0
    coulomb: float = 0.0
    stiffness: float | None = None
    rest: float = 0.0


class ForceLaw:
    """One force element's law. Subclasses set `type` (the document's element type) and `on_bodies`, and write
    `generalized`; the rest has defaults for an element with no potential, no time dependence, no measure."""

    type: ClassVar[str]
    on_bodies: ClassVar[bool] = False  # acts at body points: `generalized` needs the poses
    # a prescribed effort on its `coordinate`, `prescribed(t)`, that `idle(element)` sets to zero: an input of
    # linear models and FMUs, an actuator column of a run, not a known force of identification
    actuated: ClassVar[bool] = False
    carried_by: ClassVar[frozenset[str]] = frozenset()  # the file formats (FORMATS) that hold it

    def __init__(self, element: Any, forces: Evaluator) -> None:
        self.element, self.forces = element, forces

    @property
    def name(self) -> str:
        return self.element.name

    @property
    def time_dependent(self) -> bool:
        return False

    @property
    def has_potential(self) -> bool:
        """Whether `potential` holds the element's rest part (its force at q̇ = 0), whose power the energy balance
        then leaves to the potential; for the others every bit of power is work done on the model."""
        return not self.time_dependent

    def time_functions(self) -> list[Callable[[np.ndarray], np.ndarray]]:
        """Its functions of time (each of times (N,) to values (N,)), which a run checks stay bounded: a formula
        checked at load at t = 0 only may still run away."""
        return []

    def generalized(self, t, q: np.ndarray, qd: np.ndarray, st: MotionState | None) -> np.ndarray:
        """Q (N, n) at the time(s) t, coordinates q and rates q̇ (N, n); `st` the poses at q when `on_bodies`. A law
        with `states` takes them as the keyword `z` (N, len(states))."""
        raise NotImplementedError

    @property
    def states(self) -> list[tuple[str, str]]:
        """The states it owns, as (name, unit): first-order states integrated with the motion, starting at 0."""
        return []

    def state_rates(self, t, q: np.ndarray, qd: np.ndarray, st: MotionState | None, z: np.ndarray) -> np.ndarray:
        """ż (N, len(states)) of its states z (N, len(states)) at the time(s) t and the motion (q, q̇)."""
        raise NotImplementedError

    def potential(self, q: np.ndarray, st: MotionState) -> np.ndarray | None:
        """V (N,) of its rest part, None for an element without a potential."""
        return None

    # ------------------------------------------------------------------ what other layers read of it
    def measure(self, motion, name: str) -> list[Column]:
        """The columns of a force measure `name` of this element along a motion (simulation/measures.py's
        `_Motion`: t, q, q̇ and the world points of bodies)."""
        raise ModelError(f"measure '{name}'", f"measures a {self.type} element, which has no measured parts", None,
                         "a measure of another element")  # fmt: skip

    def arrows(self, motion, t: float) -> list[Arrow]:
        """The forces it applies at body points at one state (motion of one sample), for force arrows."""
        return []

    def output(self, part: str, outputs) -> Any:
        """Its traced output `part` (one of `output_parts`) for linear models (linear/signals.py's `Outputs`)."""
        raise NotImplementedError

    def block_load(self, where):
        """Its load of a block model (dynamics/titop): `where` places body points on the blocks (`named(body,
        point)`) and makes the loads (`joint_law`, `point_load`, `spring_load`: titop/loads.py)."""
        raise ModelError(f"force '{self.name}'", f"is a {self.type}: the block models have no such load", None,
                         f"a model without {self.type} elements")  # fmt: skip

    # ------------------------------------------------------------------ from the document alone
    @classmethod
    def output_parts(cls, element, force_unit) -> dict[str, str]:
        """The parts a linear model can output of a force measure of the element, with their units;
        `force_unit(coordinate)` the unit of a coordinate's generalized force."""
        return {}

    @classmethod
    def joint_terms(cls, element, value) -> JointTerms | None:
        """The element as linear joint dynamics (`value` evaluates its expressions to floats), None if it is
        not one."""
        return None

    @classmethod
    def export_note(cls, element, target: str, value) -> str | None:
        """What the format `target` (a key of FORMATS) says of the element: why it leaves it out, or what it
        makes of it; None when it carries it as it is. `value` evaluates its expressions to floats."""
        if target in cls.carried_by:
            return None
        return f"force element '{element.name}' ({element.type}) has no {FORMATS[target]} form and is left out"


def states_refused(names: list[str], what: str) -> ModelError:
    """The error for an analysis (`what`) that does not carry the force laws' own states `names`."""
    valid = "a run of the compiled engine, or the elements without states (a tyre without relaxation)"
    return ModelError("forces", f"own states ({', '.join(names)}) that {what} does not carry", None, valid)


LAWS: dict[str, type[ForceLaw]] = {}


def register(law: type[ForceLaw]) -> type[ForceLaw]:
    """Class decorator: the law of the document's elements of type `law.type`."""
    if law.type in LAWS:
        raise ValueError(f"force element type {law.type!r} already has the law {LAWS[law.type].__name__}")
    LAWS[law.type] = law
    return law


# the modules of laws (in this package), the commonest first: each registers its laws when it is imported, which
# `law_class` does when a document first has an element of a type not registered yet (a run of a model without
# tyres imports no tyre model)
LAW_MODULES = (
    "coordinate_laws",
    "point_laws",
    "bushing_law",
    "tyre_law",
    "contact_law",
    "contact_pair_law",
    "magic_formula_tyre_law",
    "driver_law",
    "speed_controller_law",
)


def all_laws(until: str | None = None) -> dict[str, type[ForceLaw]]:
    """LAWS, with the modules of LAW_MODULES imported in order until one has registered the type `until` (None:
    all of them)."""
    for module in LAW_MODULES:
        if until in LAWS:
            break
        importlib.import_module(f"{__package__}.{module}")
    return LAWS


def law_class(element) -> type[ForceLaw]:
    """The law of a force element (by its document type)."""
    if element.type not in LAWS:
        all_laws(until=element.type)
    try:
        return LAWS[element.type]
    except KeyError:
        raise ModelError(f"force '{element.name}'", "has a type no force law is registered for", element.type,
                         ", ".join(sorted(LAWS))) from None  # fmt: skip


def instants(t, count: int | None = None) -> list:
    """The times as a list of floats, or of the compiled engine's time symbol as it is."""
    times = np.atleast_1d(np.asarray(t, dtype=object))
    if count is not None:
        times = np.broadcast_to(times, (count,))
    return [float(ti) if isinstance(ti, numbers.Real) else ti for ti in times]


def contact_force(stiffness, damping, engagement, depth, rate):
    """A contact that only pushes: max(0, k δ + c s(δ) δ̇) at penetrations δ > 0, 0 otherwise, where the damping's
    share s(δ) = 3u² − 2u³, u = min(δ / d, 1), rises smoothly from 0 at contact to 1 at the engagement distance d
    (so the force does not jump when contact begins). Written with |x| alone, which every back-end has."""
    inside = positive(depth)
    u = inside / engagement
    u = u - positive(u - 1)
    return positive(stiffness * inside + damping * u * u * (3 - 2 * u) * rate)
