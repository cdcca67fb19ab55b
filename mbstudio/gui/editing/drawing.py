"""Drawing links in the 3D view: picked world positions snap to the named points of bodies (at the shown
pose) or to a millimetre grid, and become one edit: a link body from the first point to the second
(edits.add_link), and, when the second point is another body's, the revolute joint there that closes the loop,
with the coordinates a person expects to drive the linkage (kinematics/driving.py: the crank of a four-bar).
No Qt: the view gives the picked positions, the window applies the edit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...kinematics import Mechanism
from ...kinematics.driving import expected_drivers
from ...model import GROUND, AssemblyError, Model, ModelError
from . import edits

GRID = 1e-3  # m: a pick off every point lands on this grid
SNAP = 0.03  # of the mechanism's size: a pick this close to a named point is that point


@dataclass(frozen=True)
class Place:
    body: str  # label ("0": the ground)
    point: str | None  # a named point of the body, or None for a free position
    world: np.ndarray  # (3,)


def snap(mech: Mechanism, q: np.ndarray, world, size: float) -> Place:
    """The named point nearest `world` within SNAP·size, else the position on the grid, on the ground."""
    world = np.asarray(world, float)
    points = mech.points(np.asarray(q, float)[None])
    near = min(points.items(), key=lambda item: np.linalg.norm(item[1][0] - world), default=None)
    if near is not None and np.linalg.norm(near[1][0] - world) <= SNAP * size:
        (label, name), position = near
        return Place(label, name, position[0])
    return Place(GROUND, None, np.round(world / GRID) * GRID)


def _local(mech: Mechanism, q: np.ndarray, label: str, world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A world position in body `label`'s axes, and the rotation of those axes, at the pose q."""
    rotation, origin = (x[0] for x in mech.poses(np.asarray(q, float)[None])[label])
    return rotation.T @ (world - origin), rotation


def link_edit(mech: Mechanism, q: np.ndarray, start: Place, end: Place, axis) -> Callable[[Model], str]:
    """The edit that draws a link from `start` to `end` turning about the world `axis` at start, joined to
    start's body, and closing the loop at end when end is a point of a body other than start's. The edit
    returns the new body's label."""
    axis = np.asarray(axis, float)
    start_local, rotation = _local(mech, q, start.body, start.world)
    end_local, _ = _local(mech, q, start.body, end.world)
    closes = end.point is not None and end.body != start.body

    def change(model: Model) -> str:
        label = edits.add_link(model, start.body, start_local, end_local, rotation.T @ axis)
        if closes:
            after = Mechanism(model)  # the new body's pose: where it was drawn
            state = after.tree.initial_coordinates()
            _, new_rotation = _local(after, state, label, end.world)
            _, other_rotation = _local(after, state, end.body, end.world)
            name = edits.add_joint(model, label, end.body, "revolute", "tip", end.point)
            joint = model.joint(name)
            joint.parent_frame.z = [float(v) for v in new_rotation.T @ axis]
            joint.child_frame.z = [float(v) for v in other_rotation.T @ axis]
            _drive_from_the_ground(model)
        return label

    return change


def _drive_from_the_ground(model: Model) -> None:
    """The closed loop changes the mobility, so the driving coordinates are chosen again: joints to the ground,
    the one that turns furthest for one degree of freedom; left automatic where the drawn pose does not close."""
    model.independent_coordinates = "auto"
    mech = Mechanism(model)
    try:
        q = mech.assemble_nearest(mech.tree.initial_coordinates())
    except AssemblyError:
        return
    model.independent_coordinates = expected_drivers(mech, q)


def check_distinct(start: Place, end: Place) -> None:
    if np.linalg.norm(end.world - start.world) < GRID:
        raise ModelError("link", "has no length: both picks are the same point", start.world.tolist(), "two points")
