"""Planar linkages: every rotation about axes of one direction n, every translation across it.

Such a mechanism moves in planes normal to n, where a body has 3 degrees of freedom, not 6, and a revolute or
prismatic joint takes 2, not 5: its mobility count is the planar Grübler count 3(n − 1) − 2j, not the spatial
Grübler-Kutzbach count, which for a four-bar says −2 (every loop's three out-of-plane equations hold
identically). Whether the axes line up is read at one configuration: rotations about n keep every axis on n and
every translation across it, so the answer is the same at every configuration of a planar mechanism.
"""

from __future__ import annotations

import numpy as np

from ..model.document import Model
from .mechanism import Mechanism

# |sin| of the angle between axes held parallel (or |cos| for perpendicular): axes come from the document's
# frames through rotations about parallel axes, exact to rounding (1e-15 per joint, 1e-11 down a 100 000-body
# chain); a mechanism off plane by less than 1e-9 rad is planar for any measurement of it
TOLERANCE = 1e-9
PLANAR_FREEDOMS = {"revolute": 1, "prismatic": 1, "planar": 3, "fixed": 0}  # in the plane


def plane_normal(mech: Mechanism, q: np.ndarray) -> np.ndarray | None:
    """The unit normal n of the planes a planar mechanism moves in (at the configuration q, shape (n,)), or None
    when some joint rotates about another direction or translates along n."""
    if any(j.type not in PLANAR_FREEDOMS for j in mech.model.joints):
        return None
    st = mech.motion(np.asarray(q, float))
    kinds = np.array(mech.tree.kinds)
    tree_axes = np.asarray(st.u[0], float).reshape(-1, 3)
    rotations, translations = [tree_axes[kinds == "R"]], [tree_axes[kinds == "T"]]
    for joint, sides in zip(mech.constraints.joints, mech.constraints.sides, strict=True):
        axes = np.array([np.asarray(st.R[s.body][0], float) @ np.asarray(s.frame.rotation, float) for s in sides])
        if joint.type in ("revolute", "planar"):
            rotations.append(axes[:, :, 2])
        if joint.type in ("prismatic", "planar"):
            translations.append(axes[:, :, 2] if joint.type == "prismatic" else axes[:, :, :2].transpose(0, 2, 1))
    rotating = np.concatenate(rotations).reshape(-1, 3)
    moving = np.concatenate([t.reshape(-1, 3) for t in translations])
    normal = _normal(rotating, moving)
    if normal is None:
        return None
    parallel = np.linalg.norm(np.cross(rotating, normal), axis=1) <= TOLERANCE
    across = np.abs(moving @ normal) <= TOLERANCE
    return normal if parallel.all() and across.all() else None


def _normal(rotating: np.ndarray, moving: np.ndarray) -> np.ndarray | None:
    """The first rotation axis; without one, the normal of the first two translations that are not parallel."""
    if len(rotating):
        return rotating[0] / np.linalg.norm(rotating[0])
    for axis in moving[1:]:
        normal = np.cross(moving[0], axis)
        if np.linalg.norm(normal) > TOLERANCE:
            return normal / np.linalg.norm(normal)
    return None


def planar_grubler_dof(model: Model) -> int:
    """3 per moving body minus, per joint, the 3 planar freedoms it takes away: 3(n − 1) − 2j for a linkage of
    n links (the ground one of them) and j revolute or prismatic joints; and one per coupling."""
    joints = sum(3 - PLANAR_FREEDOMS[j.type] for j in model.joints)
    return 3 * len(model.bodies) - joints - len(model.couplings)
