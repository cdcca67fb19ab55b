"""What the ground contacts do at one state, for the window: the centre of pressure and the support polygon of a
legged robot (docs/contact.md), from the compliant law at the state or from what a run recorded. Per contact
series (forces, slip, penetration, point) are the contact's force measure (force_laws/contact_law.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics.force_laws.contact_law import ContactLaw
from ..dynamics.forces import AppliedForces
from ..kinematics import Mechanism
from ..model.document import ForceMeasure
from .measures import _Motion


@dataclass
class Support:
    """The loaded contacts' points (k, 3) around their convex hull in the ground plane (in order, the polygon's
    corners; one or two points when fewer carry load), and the centre of pressure (3,): the normal forces' mean
    of those points. Empty and None when no contact carries load."""

    polygon: np.ndarray
    pressure_centre: np.ndarray | None


def support(mech: Mechanism, t: float, q: np.ndarray, qd: np.ndarray, recorded: dict | None = None) -> Support:
    """The support polygon and centre of pressure of the contacts at one state: their compliant forces there, or
    the run's `recorded` ones (contact name -> (point, force), `recorded_contacts`)."""
    motion = _Motion(mech, np.array([t], float), np.asarray(q, float)[None], np.asarray(qd, float)[None], None)
    laws = [law for law in AppliedForces(mech, mech.model.forces).laws if isinstance(law, ContactLaw)]
    laws = [law for law in laws if law.element.against is None]  # on a plane: a road has no one support plane
    points, loads, normal = [], [], None
    for law in laws:
        plane = np.asarray(law.plane()[1], float)
        if recorded is not None and law.element.name in recorded:
            placed = [recorded[law.element.name]]  # a box's or mesh's: at its centre of pressure
        else:  # each contact point's (a box's or mesh's loaded vertices span the polygon)
            placed = [(got["point"][0], got["force"][0]) for got in law.along_points(motion)]
        for point, force in placed:
            if force @ plane > 0:
                points.append(point)
                loads.append(float(force @ plane))
                normal = plane
    if not points:
        return Support(np.zeros((0, 3)), None)
    points, loads = np.array(points), np.array(loads)
    centre = loads @ points / loads.sum()
    return Support(points[_hull(points, normal)], centre)


def recorded_contacts(model, series: dict, frame: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Contact name -> (point, force) (world axes) at sample `frame` of a run's series ('name [unit]'), for the
    contacts with a force measure: what the run computed (a rigid run's impulses), not the compliant law."""
    out = {}
    for measure in model.measures:
        columns = [f"{measure.name}.{axis} [m]" for axis in "xyz"] + [f"{measure.name}.f{a} [N]" for a in "xyz"]
        if isinstance(measure, ForceMeasure) and all(c in series for c in columns):
            values = np.array([series[c][frame] for c in columns], float)
            out[measure.element] = (values[:3], values[3:])
    return out


def recorded_arrows(arrows: list, recorded: dict) -> list:
    """The force arrows (element, point, force) with a run's recorded contact forces in place of the compliant
    law's: a contact's first arrow takes the recorded force, a pair's second (on body1) its opposite."""
    out, seen = [], set()
    for name, point, force in arrows:
        if name in recorded:
            point, force = recorded[name][0], recorded[name][1] * (-1.0 if name in seen else 1.0)
            seen.add(name)
        out.append((name, point, force))
    return out


def _hull(points: np.ndarray, normal: np.ndarray) -> list[int]:
    """Indices of the convex hull's corners of the points seen along `normal`, counter-clockwise (Andrew's
    monotone chain on the plane's coordinates); collinear and repeated points left out."""
    u = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    flat = np.column_stack([points @ u, points @ np.cross(normal, u)])
    order = sorted(range(len(flat)), key=lambda i: (flat[i, 0], flat[i, 1]))
    if len(order) <= 2:
        return order

    def turn(a: int, b: int, c: int) -> float:
        (x1, y1), (x2, y2) = flat[b] - flat[a], flat[c] - flat[a]
        return float(x1 * y2 - y1 * x2)

    lower: list[int] = []
    upper: list[int] = []
    for chain, sequence in ((lower, order), (upper, order[::-1])):
        for i in sequence:
            while len(chain) >= 2 and turn(chain[-2], chain[-1], i) <= 0:
                chain.pop()
            chain.append(i)
    return lower[:-1] + upper[:-1]
