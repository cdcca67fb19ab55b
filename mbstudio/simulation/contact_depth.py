"""How deep a run pressed its contact pairs' points, against what their geometry can hold (docs/contact.md,
"Touch-downs located").

A compliant pair's lone point (a sphere's centre, against another sphere, a capsule, a box or a mesh) is pushed
out of the other side along the nearest way out (contact_shapes.polytope_distance; the line of centres): pressed
past half its pass depth D (the other solid's least width plus both radii twice, contact_watch.pass_depth), the
far face is the nearest, and the law pushes it on through instead of back. A box's or mesh's vertex is pushed
along the face its whole solid overlaps the other least along, which stays the face it pressed on, until it leaves
the other solid through its far side, past D. The law is a function of the state alone and does not remember the
side a point entered by, so no force holds a point beyond there: a load heavier than the contact's k δ^n at that
depth, or an impact deeper than it, goes through. A run says so in its notes where a point came within a quarter
of that depth at a sample.
"""

from __future__ import annotations

import numpy as np

from ..dynamics.forces import AppliedForces
from ..model.document import ContactPair
from .contact_watch import pass_depth

NEAR = 3 / 4  # of the depth a point passes at: a point pressed deeper came within a quarter of it


def too_deep(forces: AppliedForces, t: np.ndarray, q: np.ndarray) -> list[str]:
    """A note for each contact pair whose deepest point (sampled at the outputs t, coordinates q (K, n)) was
    pressed past NEAR of the depth it passes at (half its pass depth for a pair with a sphere side, its pass depth
    between boxes or meshes): with its depth, the time, that depth and what holds it instead."""
    laws = [law for law in forces.laws if law.type == ContactPair.type]
    if not laws:
        return []
    st = forces.mech.motion(np.asarray(q, float))
    notes = []
    for law in laws:
        depth = np.max([np.asarray(got[0], float) for got in law.placements(st)], axis=0)
        lone = "sphere" in law.shapes
        deepest, passes = int(np.argmax(depth)), pass_depth(law) / (2 if lone else 1)
        if depth[deepest] > NEAR * passes:
            notes.append(_note(law.element, float(t[deepest]), float(depth[deepest]), passes, lone))
    return notes


def _note(element: ContactPair, t: float, depth: float, passes: float, lone: bool) -> str:
    reach = f"{passes * 1e3:.4g} mm"
    if lone:
        where = (f"half its pass depth ({reach}: the other solid's half width plus both radii), where the compliant "
                 "law pushes it out through the far side")  # fmt: skip
    else:
        where = (f"its pass depth ({reach}: the thinner solid's width plus both radii twice), where it leaves the "
                 "other solid through the far side")  # fmt: skip
    return (f"contact pair '{element.name}' ('{element.body1}' and '{element.body2}'): a point was pressed "
            f"{depth * 1e3:.4g} mm in at t = {t:.6g} s, near or past {where}; the motion from there is not a "
            "contact's. A stiffer contact (stiffness), a thicker shape or rigid contacts (--contact rigid) hold "
            "it")  # fmt: skip
