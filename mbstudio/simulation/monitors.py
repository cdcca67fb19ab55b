"""Invariant monitors of a motion, by the general tree (the block model's own are titop/invariants.py): the
system's centre of mass, linear momentum, angular momentum about the centre of mass, and the energy balance
E(t) + dissipated(t), which stays at E(0) for a right model whatever its dampers do.

What is conserved depends on the model (momentum only without external forces, energy only without
dampers), but every series is shown for every motion: a user sees at once whether it stays put.

dissipated(t) = −∫₀ᵗ P_nc dt, P_nc = Σ (Q_e − Q_e,rest)·q̇ over the force elements, Q_e,rest the element at rest
(its spring, its constant force: the part `AppliedForces.potential` holds) for the elements with a potential, 0 for
the others (friction, time-varying forces, whose whole power counts). A CVODES run integrates it with the motion
(the engine's work_rate, simulation/integrators.py), as accurately as the motion itself; the other routes
integrate it over the output samples (Simpson's rule), so its accuracy follows their spacing.
"""

from __future__ import annotations

import numpy as np

from ..dynamics.forces import AppliedForces
from ..dynamics.spatial_tree import body_inertia, components, samples_first
from ..kinematics.mechanism import Mechanism

Column = tuple[str, str, np.ndarray]


def monitor_columns(com, momentum, angular, total, dissipated) -> list[Column]:
    """The monitors as columns: centre of mass, linear momentum and angular momentum about the centre of mass
    (inertial axes), the energy taken out by dampers and friction (negative when time-varying forces put energy
    in), and the balance E + dissipated."""
    out = [(f"com.{a}", "m", com[:, i]) for i, a in enumerate("xyz")]
    out += [(f"momentum.{a}", "N s", momentum[:, i]) for i, a in enumerate("xyz")]
    out += [(f"angular_momentum.{a}", "N m s", angular[:, i]) for i, a in enumerate("xyz")]
    return out + [("dissipated_energy", "J", dissipated), ("energy_balance", "J", total + dissipated)]


def centre_of_mass_and_momenta(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, ...]:
    """Centre of mass, linear momentum and angular momentum about the centre of mass (N, 3 each): each body's
    spatial momentum I_b V_b at the world origin, summed."""
    st = mech.motion(q, qd)
    N = len(q)
    mass, first, h = 0.0, np.zeros((3, N)), np.zeros((6, N))
    for b in range(1, len(mech.tree.body_labels)):
        inertia = body_inertia(mech, st, b)
        w, p = components(st.w[b]), components(st.p[b])
        velocity = np.concatenate([w, components(st.v[b]) + np.cross(p, w, axis=0)])  # at the world origin
        mass, first, h = mass + inertia.m, first + inertia.c, h + inertia.apply(velocity)
    com = samples_first(first / mass) if mass else np.zeros((N, 3))
    linear, about_origin = samples_first(h[3:]), samples_first(h[:3])
    return com, linear, about_origin - np.cross(com, linear)


def energy_scale(mech: Mechanism) -> float:
    """m g L (J): the model's mass lifted by its length scale under max(|g|, 1 m/s²), the unit in which a run
    integrates the non-conservative forces' work (simulation/integrators.py). Kept by what it reads (the masses'
    and gravity's expressions, the parameters, the length scale): each run asks for it, and evaluating the
    expressions took the Delta's 0.16 ms."""
    model = mech.model
    key = (
        tuple(body.inertia.get("m", 0.0) for body in model.bodies),
        tuple(model.gravity),
        tuple((p.name, p.value) for p in model.parameters),
        mech.length_scale,
    )
    found = _SCALES.get(key)
    if found is None:
        value = mech.tree.geometry.value
        mass = sum(abs(float(value(m))) for m in key[0])
        gravity = max(float(np.linalg.norm([float(value(g)) for g in key[1]])), 1.0)
        found = max(mass, 1e-12) * gravity * mech.length_scale
        if len(_SCALES) >= 64:
            _SCALES.clear()
        _SCALES[key] = found
    return found


_SCALES: dict[tuple, float] = {}


def nonconservative_power(
    forces: AppliedForces, t: np.ndarray, q: np.ndarray, qd: np.ndarray, Q: np.ndarray | None = None, state=None
) -> np.ndarray:
    """P_nc (N,): the power of the force elements beyond their potential's, and of whatever else the motion's
    generalized forces Q hold (a prescribed motion's drives). `state`: the motion's state at q (its poses are read;
    the rates come from q̇), when the caller has it already."""
    power, elements = forces.element_power(t, q, qd, state)
    return power if Q is None else power + ((Q - elements) * qd).sum(axis=1)


def dissipated_energy(t: np.ndarray, power: np.ndarray) -> np.ndarray:
    """−∫₀ᵗ P_nc dt at the samples t (K,), by Simpson's rule (the trapezoid rule for two samples)."""
    if len(t) < 3:
        return -np.concatenate([[0.0], np.cumsum(np.diff(t) * (power[1:] + power[:-1]) / 2)])
    return -cumulative_simpson(np.asarray(t, float), np.asarray(power, float))


def cumulative_simpson(t: np.ndarray, f: np.ndarray) -> np.ndarray:
    """∫ f dt from t[0] to each of K ≥ 3 samples at any spacing: each interval integrates exactly the parabola
    through its ends and one neighbouring sample (Cartwright, "Simpson's rule cumulative integration with MS
    Excel and irregularly-spaced data", 2017): the next sample for the intervals numbered 0, 2, 4, …, the
    previous one for the others and for the last. Written here because importing scipy.integrate, which has
    the same rule, costs a command 0.3-0.5 s."""
    h = np.diff(t)
    ahead = _interval(f[:-2], f[1:-1], f[2:], h[:-1], h[1:])  # interval i with sample i + 2
    behind = _interval(f[2:], f[1:-1], f[:-2], h[1:], h[:-1])  # interval i + 1 with sample i
    pieces = np.concatenate([[0.0], behind])  # interval i with sample i - 1 (none for interval 0)
    even = np.arange(0, len(h) - 1, 2)
    pieces[even] = ahead[even]
    return np.concatenate([[0.0], np.cumsum(pieces)])


def _interval(near, far, beyond, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """∫ over an interval of length a from the value `near` at one end to `far` at the other, of the parabola
    through them and `beyond`, a further b past `far`."""
    ratio, square = a / (a + b), a * a / ((a + b) * b)
    return a / 6 * ((3 - ratio) * near + (3 + square + ratio) * far - square * beyond)


def motion_monitors(
    mech: Mechanism, forces: AppliedForces, t: np.ndarray, q: np.ndarray, qd: np.ndarray, Q: np.ndarray, total
) -> list[Column]:
    """Every monitor of a motion (K samples) under the generalized forces Q, whose total energy is `total`."""
    com, linear, angular = centre_of_mass_and_momenta(mech, q, qd)
    dissipated = dissipated_energy(t, nonconservative_power(forces, t, q, qd, Q))
    return monitor_columns(com, linear, angular, total, dissipated)
