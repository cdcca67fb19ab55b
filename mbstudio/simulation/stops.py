"""Joint stops in a simulation: impacts at the coordinates' limits, the contacts of every stop, and the limits a
motion passed where nothing enforces them (docs/file-format.md, coordinate).

An impact stop (`ImpactStop`) cuts the run at each limit reached: the integration (scipy's solve_ivp on the
compiled engine's state equation, which locates the instant on its dense output) stops there, an impulse Λ on
the coordinate changes the independent rates by ΔV = M_r⁻¹ rᵀ Λ, where r is the coordinate's row of R =
∂q/∂q_ind and M_r = Rᵀ M R, so that its rate after is −e times its rate before (Newton's law of restitution),
and the integration starts again from there. Every rate after is R V⁺: the loops' velocity constraints hold
across the impact, and the kinetic energy lost is ½ (1 − e²) u² / (r M_r⁻¹ rᵀ), u the rate before; for a
pendulum r M_r⁻¹ rᵀ = 1/I, the textbook ½ (1 − e²) I ω².

A stop that stays engaged (a pendulum resting on it, e < 1) would rebound ever less often in finite time
(Zeno's sequence of impacts). Once a rebound could rise no higher than the run's position tolerance, the stop
holds as a one-sided constraint instead: its coordinate is made independent (the loops' coordinates chosen
anew where it was dependent), its rate stays 0, and the contact force λ that keeps its acceleration at 0 is a
generalized force on it, found from the engine's linear response to a force there; the stop lets go where λ
would pull. That is the limit of the rebounds, so nothing is lost by not resolving them.

Compliant stops are force elements (dynamics/forces.py): their contacts are read from the output samples.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..dynamics.closed_loop import reduced_mass_matrix
from ..dynamics.engine import Engine, engine
from ..dynamics.force_laws import CoordinateStop
from ..dynamics.forces import AppliedForces, stopped_coordinates
from ..kinematics.coordinates import partition
from ..kinematics.mechanism import Mechanism
from ..model.document import ImpactStop, Model
from ..model.errors import AssemblyError, ModelError
from ..model.validation import float_value

SCIPY_FOR = {"CVODES": "DOP853", "CVODES-BDF": "Radau"}  # CasADi's CVODES locates no events for us
MAX_IMPACTS = 10_000  # in one run: beyond, the motion chatters on a stop that neither holds nor lets go
CLOSURE_LIMIT = 1e-9  # per length scale, as the simulation's


@dataclass
class Contact:
    """One contact of a stop: an impact (an instant), an impact stop holding, or a compliant stop pressed (from
    `time` to `end`, None while still engaged at the end of the run). `impulse` in N s or N m s and `force` (the
    largest while engaged) in N or N m, by the coordinate's kind (`unit` is the force's); `energy` the kinetic
    energy an impact took (J)."""

    time: float
    joint: str
    coordinate: str
    limit: str  # "min" or "max"
    kind: str  # "impact", "held" or "compliant"
    unit: str
    impulse: float = 0.0
    force: float = 0.0
    end: float | None = None
    energy: float = 0.0

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Limit:
    """One end of an impact stop: the tree coordinate `index`, the limit's value, `sign` +1 at a min (the stop
    pushes the coordinate up), −1 at a max."""

    index: int
    joint: str
    coordinate: str
    side: str
    value: float
    sign: float
    restitution: float


def impact_limits(mech: Mechanism) -> list[Limit]:
    """Both ends of every impact stop of the document, in coordinate order."""
    symbols = mech.model.parameter_values()
    out = []
    for joint, c in stopped_coordinates(mech):
        if not isinstance(c.stop, ImpactStop):
            continue
        e = float_value(c.stop.restitution, symbols, f"joint '{joint.name}' coordinate '{c.name}'.stop.restitution")
        for side, value, sign in (("min", c.min, 1.0), ("max", c.max, -1.0)):
            if value is not None:
                out.append(Limit(mech.coordinates.index(c.name), joint.name, c.name, side, value, sign, e))
    return out


def has_impact_stops(model: Model) -> bool:
    return any(isinstance(c.stop, ImpactStop) for j in model.joints for c in j.coordinates)


def force_unit(mech: Mechanism, index: int) -> str:
    return "N m" if mech.tree.kinds[index] == "R" else "N"


@dataclass
class ImpactRun:
    """The outputs of a run with impact stops: (q, q̇, q̈) (K, n) each at the output times, the stops' holding
    forces on the tree coordinates (K, n), the contacts, the evaluations of the state equation, the method."""

    states: tuple[np.ndarray, np.ndarray, np.ndarray]
    holding: np.ndarray
    contacts: list[Contact]
    calls: int
    method: str
    notes: list[str] = field(default_factory=list)


@dataclass
class _Segment:
    """The stepping between two events: the engine in use and the impact stops held."""

    eng: Engine
    held: list[Limit] = field(default_factory=list)


def run_impacts(
    mech: Mechanism,
    text: str,
    times: np.ndarray,
    y0: np.ndarray,
    method: str,
    rtol: float,
    atol: float,
    clock: Callable[[float], None] | None = None,
) -> ImpactRun:
    """Integrate from the state y0 = (q, q̇_ind) at t = 0 through every impact, on the compiled engine of the
    model (`text` its canonical text), with scipy's `method` (DOP853 for CVODES, Radau for CVODES-BDF)."""
    from scipy.integrate import solve_ivp

    used = SCIPY_FOR.get(method, method)
    limits = impact_limits(mech)
    runner = _Impacts(mech, text, limits, rtol, atol)
    segment, t0, y = _Segment(engine(mech.model, text)), float(times[0]), np.asarray(y0, dtype=float)
    _check_start(segment.eng, y, limits, runner.tolerance)
    segment, y = runner.engage(segment, t0, y, [lim for lim in limits if runner.touching(segment.eng, y, lim)])
    n, K = mech.n, len(times)
    q, qd, qdd, holding = (np.zeros((K, n)) for _ in range(4))
    done, calls = 0, 0
    while done < K:
        if t0 >= times[-1]:  # an event at the last output time: the state after it is the output there
            outputs = runner.outputs(segment, times[done:], y[None])
            for array, values in zip((q, qd, qdd, holding), outputs, strict=True):
                array[done:] = values
            break
        rhs, events = runner.equations(segment, t0, y, clock)
        solution = solve_ivp(rhs, (t0, times[-1]), y, used, times[done:], rtol=rtol, atol=atol, events=events)
        calls += solution.nfev
        if solution.status < 0:
            raise RuntimeError(f"the integration stopped at t = {solution.t[-1] if solution.t.size else t0:.6g} s: "
                               f"{solution.message}")  # fmt: skip
        reached = len(solution.t)
        if reached:
            outputs = runner.outputs(segment, solution.t, solution.y.T)
            for array, values in zip((q, qd, qdd, holding), outputs, strict=True):
                array[done : done + reached] = values
        done += reached
        if solution.status == 0:
            break
        fired = min((at[0], k) for k, at in enumerate(solution.t_events) if len(at))[1]
        t0, y = float(solution.t_events[fired][0]), solution.y_events[fired][0]
        segment, y = runner.event(segment, t0, y, fired)
    notes = [f"{used} stepped the run and located its impacts ({method} cannot here)"] if used != method else []
    return ImpactRun((q, qd, qdd), holding, runner.contacts, calls, used, notes)


def _check_start(eng: Engine, y: np.ndarray, limits: list[Limit], tolerance: Callable[[Limit], float]) -> None:
    """A ModelError naming a coordinate that starts beyond its impact stop (a dependent one, whose initial value
    the loops decide)."""
    q = eng.closed(y[None])[0][0]
    for lim in limits:
        if lim.sign * (q[lim.index] - lim.value) < -tolerance(lim):
            raise ModelError(
                f"joint '{lim.joint}' coordinate '{lim.coordinate}'",
                f"starts at {q[lim.index]:.6g}, beyond its impact stop's {lim.side} {lim.value:g}",
                None,
                "an initial pose within the stop's limits",
            )


class _Impacts:
    """Events, impulses and holds of the impact stops of one run."""

    def __init__(self, mech: Mechanism, text: str, limits: list[Limit], rtol: float, atol: float) -> None:
        self.mech, self.text, self.limits, self.rtol, self.atol = mech, text, limits, rtol, atol
        self.contacts: list[Contact] = []
        self.holds: dict[Limit, Contact] = {}

    def tolerance(self, lim: Limit) -> float:
        """The run's position accuracy at the limit: what the integrator keeps the coordinate to."""
        return self.atol + self.rtol * abs(lim.value)

    def touching(self, eng: Engine, y: np.ndarray, lim: Limit) -> bool:
        return abs(eng.closed(y[None])[0][0][lim.index] - lim.value) <= self.tolerance(lim)

    # ------------------------------------------------------------------ equations of one segment
    def equations(self, segment: _Segment, start: float, y: np.ndarray, clock) -> tuple[Callable, list[Callable]]:
        """The state equation (holding the held stops) and the events from the state y at `start`: each free limit
        reached, each held stop's force turning to a pull."""

        def rhs(t: float, y: np.ndarray) -> np.ndarray:
            if clock is not None:
                clock(t)
            return self.held_state(segment, t, y)[0]

        q = _closed(segment.eng, y)
        rates = segment.eng.mech.r_matrix(q[None])[0] @ y[self.mech.n :]
        events = [self._gap(lim, start, q, rates) for lim in self.limits if lim not in segment.held]
        events += [self._release(segment, lim) for lim in segment.held]
        return rhs, events

    def held_state(self, segment: _Segment, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ẏ with the held stops' accelerations kept at 0, and their forces λ (one per held stop, pushing > 0)."""
        eng, n = segment.eng, self.mech.n
        free = eng.ode(t, y)
        if not segment.held:
            return free, np.zeros(0)
        responses = [eng.ode(t, y, _unit(n, lim.index)) - free for lim in segment.held]
        rows = [n + eng.independent.index(lim.index) for lim in segment.held]
        A = np.array([[r[row] for r in responses] for row in rows])
        force = np.linalg.solve(A, -free[rows])
        return free + sum(f * r for f, r in zip(force, responses, strict=True)), force

    def _gap(self, lim: Limit, start: float, q: np.ndarray, rates: np.ndarray) -> Callable:
        """The distance to the limit. A rebound from the limit itself rises above the rounding of the coordinate
        only after a while: until then (64 units in the last place of the limit, at the rebound's rate) the
        distance counts as positive, so that the root search finds where the rebound lands, not the rounding at
        its start."""
        touching = abs(q[lim.index] - lim.value) <= self.tolerance(lim)
        rising = 64 * math.ulp(lim.value) / abs(rates[lim.index]) if touching and rates[lim.index] else 0.0
        guard = start + rising + 64 * math.ulp(start)

        def gap(t: float, y: np.ndarray) -> float:
            distance = lim.sign * (y[lim.index] - lim.value)
            return distance if t > guard or not touching else max(distance, math.ulp(0.0))

        gap.terminal, gap.direction = True, -1
        return gap

    def _release(self, segment: _Segment, lim: Limit) -> Callable:
        k = segment.held.index(lim)

        def push(t: float, y: np.ndarray) -> float:
            return lim.sign * self.held_state(segment, t, y)[1][k]

        push.terminal, push.direction = True, -1
        return push

    # ------------------------------------------------------------------ events
    def event(self, segment: _Segment, t: float, y: np.ndarray, fired: int) -> tuple[_Segment, np.ndarray]:
        free = [lim for lim in self.limits if lim not in segment.held]
        if fired < len(free):
            return self.engage(segment, t, y, [free[fired]])
        lim = segment.held[fired - len(free)]
        self.holds.pop(lim).end = t
        return _Segment(segment.eng, [h for h in segment.held if h != lim]), y

    def engage(self, segment: _Segment, t: float, y: np.ndarray, reached: list[Limit]) -> tuple[_Segment, np.ndarray]:
        """Each limit reached: an impact if the coordinate moves into it, then a hold if its rebound is too small
        to resolve."""
        for lim in reached:
            if len(self.contacts) >= MAX_IMPACTS:
                raise RuntimeError(
                    f"more than {MAX_IMPACTS} impacts: the motion chatters on the stop of '{lim.coordinate}' at "
                    f"t = {t:.6g} s; a compliant stop, or a restitution further from 1, settles it"
                )
            y = self._impact(segment, t, y, lim)
            if self._rests(segment, t, y, lim):
                segment, y = self._hold(segment, t, y, lim)
        return segment, y

    def _impact(self, segment: _Segment, t: float, y: np.ndarray, lim: Limit) -> np.ndarray:
        """The state after the impulse on `lim` (the held stops keep their rate 0 through it)."""
        eng, n = segment.eng, self.mech.n
        q = _closed(eng, y)
        R = eng.mech.r_matrix(q[None])[0]
        v = y[n:]
        rate = R[lim.index] @ v
        if lim.sign * rate >= 0:  # not moving into the stop: nothing to reverse
            return np.concatenate([q, v])
        M = reduced_mass_matrix(eng.mech, q[None], R[None])[0]
        rows = R[[lim.index, *(h.index for h in segment.held)]]
        target = np.zeros(len(rows))
        target[0] = -lim.restitution * rate
        mobility = np.linalg.solve(M, rows.T)
        impulses = np.linalg.solve(rows @ mobility, target - rows @ v)
        after = v + mobility @ impulses
        lost = (v @ M @ v - after @ M @ after) / 2
        unit = force_unit(self.mech, lim.index)
        self.contacts.append(Contact(t, lim.joint, lim.coordinate, lim.side, "impact", unit, float(impulses[0]),
                                     energy=float(lost)))  # fmt: skip
        return np.concatenate([q, after])

    def _rests(self, segment: _Segment, t: float, y: np.ndarray, lim: Limit) -> bool:
        """Whether the coordinate, pushed into the stop, would rebound no higher than the position tolerance."""
        eng, n = segment.eng, self.mech.n
        q = _closed(eng, y)
        R = eng.mech.r_matrix(q[None])[0]
        qd = R @ y[n:]
        qdd_ind = self.held_state(segment, t, np.concatenate([q, y[n:]]))[0][n:]
        acceleration = lim.sign * eng.mech.accelerations(q[None], qd[None], qdd_ind[None], R[None])[0, lim.index]
        rebound = lim.sign * qd[lim.index]
        return acceleration < 0 and rebound**2 <= -2 * acceleration * self.tolerance(lim)

    def _hold(self, segment: _Segment, t: float, y: np.ndarray, lim: Limit) -> tuple[_Segment, np.ndarray]:
        """Hold `lim` from t: its coordinate independent (chosen anew if it was not), at the limit, at rest."""
        eng, n = segment.eng, self.mech.n
        q = _closed(eng, y)
        qd = eng.mech.r_matrix(q[None])[0] @ y[n:]
        if lim.index not in eng.independent:
            eng = self._independent(eng, q, lim, segment.held)
        q[lim.index], qd[lim.index] = lim.value, 0.0
        contact = Contact(t, lim.joint, lim.coordinate, lim.side, "held", force_unit(self.mech, lim.index))
        self.contacts.append(contact)
        self.holds[lim] = contact
        held = _Segment(eng, [*segment.held, lim])
        return held, np.concatenate([_closed(eng, np.concatenate([q, qd[eng.independent]])), qd[eng.independent]])

    def _independent(self, eng: Engine, q: np.ndarray, lim: Limit, held: list[Limit]) -> Engine:
        """The engine whose independent coordinates trade, for `lim`'s, the one it moves most with (not a held
        one): its loop equations solve for the others there."""
        mech = eng.mech
        R = mech.r_matrix(q[None])[0]
        candidates = [j for j, i in enumerate(eng.independent) if i not in {h.index for h in held}]
        out = max(candidates, key=lambda j: abs(R[lim.index, j]))
        names = [mech.coordinates[lim.index] if j == out else mech.independent[j] for j in range(len(eng.independent))]
        jacobian = np.asarray(mech.constraint_jacobian(q[None])[0], dtype=float)
        chosen = partition(jacobian, mech.coordinates, names, rank=mech.partition.rank)
        return engine(self.mech.model, self.text, chosen)

    # ------------------------------------------------------------------ outputs
    def outputs(self, segment: _Segment, t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
        """(q, q̇, q̈, the held stops' forces on the tree coordinates) at the output times of a segment."""
        eng, n = segment.eng, self.mech.n
        q, qd, qdd, residual = eng.outputs(t, y)
        if residual.max(initial=0.0) > CLOSURE_LIMIT * self.mech.length_scale:
            raise AssemblyError(f"the loops opened during the motion: residual {residual.max():.3g}")
        holding = np.zeros((len(t), n))
        if not segment.held:
            return q, qd, qdd, holding
        qdd_ind = qdd[:, list(eng.independent)]  # R's rows there are the identity, the acceleration term zero
        for k, (ti, yi) in enumerate(zip(t, y, strict=True)):
            y_dot, force = self.held_state(segment, ti, yi)
            qdd_ind[k] = y_dot[n:]
            for lim, f in zip(segment.held, force, strict=True):
                holding[k, lim.index] = f
                self.holds[lim].force = max(self.holds[lim].force, abs(float(f)))
        return q, qd, eng.mech.accelerations(q, qd, qdd_ind, eng.mech.r_matrix(q)), holding


def _unit(n: int, index: int) -> np.ndarray:
    tau = np.zeros(n)
    tau[index] = 1.0
    return tau


def _closed(eng: Engine, y: np.ndarray) -> np.ndarray:
    return np.array(eng.closed(y[None])[0][0], dtype=float)


# ---------------------------------------------------------------------------------------------- reports
def compliant_contacts(forces: AppliedForces, t: np.ndarray, q: np.ndarray, qd: np.ndarray) -> tuple[list, list]:
    """The compliant stops' force columns `stop:<coordinate>` and their contacts, read from the output samples
    (a contact shorter than their spacing can pass unseen; its force is in the motion all the same)."""
    mech = forces.mech
    columns, contacts = [], []
    for law in forces.laws:
        if law.type != CoordinateStop.type:
            continue
        element, k = law.element, mech.coordinates.index(law.coordinate)
        force = np.asarray(law.effort(None, q[:, k], qd[:, k]), dtype=float)
        unit = force_unit(mech, k)
        columns.append((element.name, unit, force))
        joint = next(j.name for j in mech.model.joints if element.coordinate in (c.name for c in j.coordinates))
        for side, pressed in (("min", force > 0), ("max", force < 0)):
            starts = np.flatnonzero(pressed & ~np.concatenate([[False], pressed[:-1]]))
            for start in starts:
                stop = start + int(np.argmin(pressed[start:])) if not pressed[start:].all() else len(t)
                peak = float(np.abs(force[start:stop]).max())
                end = float(t[stop]) if stop < len(t) else None
                contacts.append(Contact(float(t[start]), joint, element.coordinate, side, "compliant", unit,
                                        force=peak, end=end))  # fmt: skip
    return columns, contacts


def unenforced_limits(mech: Mechanism, t: np.ndarray, q: np.ndarray) -> list[str]:
    """A note for each coordinate without a stop that left its [min, max]: its limits are not enforced."""
    limited, columns, low, high = _unstopped_limits(mech)
    x = q[:, columns]
    outside = (x < low) | (x > high)
    notes = []
    for k in np.flatnonzero(outside.any(axis=0)):  # in the document's order, as the coordinates are
        (joint, c), out = limited[k], np.flatnonzero(outside[:, k])
        worst = out[np.argmax(np.maximum(low[k] - x[out, k], x[out, k] - high[k]))]
        notes.append(
            f"coordinate '{c.name}' of joint '{joint.name}' left its range [{c.min}, {c.max}] at "
            f"t = {t[out[0]]:.6g} s and reached {x[worst, k]:.6g} at t = {t[worst]:.6g} s: its limits are "
            "not enforced (give it a stop to enforce them)"
        )
    return notes


def _unstopped_limits(mech: Mechanism) -> tuple[list, list[int], np.ndarray, np.ndarray]:
    """The coordinates with a range and no stop, (joint, coordinate) each, their columns of q and their lower and
    upper limits (±inf where none): the same for every run of a mechanism, found once."""
    found = _LIMITS.get(mech)
    if found is None:
        limited = [
            (joint, c)
            for joint in mech.model.joints
            for c in joint.coordinates  # a cut joint's coordinates are not carried by the motion
            if c.stop is None and (c.min is not None or c.max is not None) and c.name in mech.coordinates
        ]
        low = np.array([-math.inf if c.min is None else c.min for _, c in limited], dtype=float)
        high = np.array([math.inf if c.max is None else c.max for _, c in limited], dtype=float)
        found = _LIMITS[mech] = (limited, [mech.coordinates.index(c.name) for _, c in limited], low, high)
    return found


_LIMITS: weakref.WeakKeyDictionary[Mechanism, tuple] = weakref.WeakKeyDictionary()


def annotate(result, mech: Mechanism, forces: AppliedForces, impacts: ImpactRun | None = None) -> None:
    """Add to a simulation result its stops' force columns and contacts, the energy the impacts took (into the
    dissipated energy and the balance), and a note for each limit passed where no stop enforces it."""
    t, q, qd = result.t, result.q, result.qd
    columns, contacts = compliant_contacts(forces, t, q, qd)
    if impacts is not None:
        contacts += impacts.contacts
        held = sorted({(c.coordinate, c.unit) for c in impacts.contacts if c.kind == "held"})
        columns += [(f"stop:{name}", unit, impacts.holding[:, mech.coordinates.index(name)]) for name, unit in held]
        lost = sum((np.where(t > c.time, c.energy, 0.0) for c in impacts.contacts), np.zeros(len(t)))
        result.monitors = [
            (name, unit, values + lost if name in ("dissipated_energy", "energy_balance") else values)
            for name, unit, values in result.monitors
        ]
        result.notes += impacts.notes
    result.stops = columns
    result.contacts = sorted(contacts, key=lambda c: c.time)
    result.notes += unenforced_limits(mech, t, q)


CONTACT_COLUMNS = ("time [s]", "joint", "coordinate", "limit", "kind", "impulse", "force", "end [s]", "energy [J]")


def contact_rows(contacts: list[Contact]) -> list[list[str]]:
    """Each contact as text cells under CONTACT_COLUMNS (impulse in N s or N m s, force in N or N m)."""
    rows = []
    for c in contacts:
        impulse = f"{c.impulse:.6g} {c.unit} s" if c.kind == "impact" else ""
        force = f"{c.force:.6g} {c.unit}" if c.kind != "impact" else ""
        end = "" if c.kind == "impact" else ("(engaged)" if c.end is None else f"{c.end:.6g}")
        energy = f"{c.energy:.6g}" if c.kind == "impact" else ""
        rows.append([f"{c.time:.9g}", c.joint, c.coordinate, c.limit, c.kind, impulse, force, end, energy])
    return rows
