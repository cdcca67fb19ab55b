"""The 3D view draws every contact pair's two shapes on their bodies (docs/contact.md, "Contacts between bodies"):
a box, a convex mesh's hull, a sphere, a capsule; fixed ones on the ground, the others moving with their bodies
when the pose changes (a slider, a frame of a run); View › Contact Shapes hides and shows them. The drawn actors'
world bounds are checked against the shapes' corners placed by hand (scipy's rotation for a shape's roll, pitch and
yaw). A screenshot of a block on a box when MBSTUDIO_SCREENSHOTS names a folder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import pyvista as pv
from scipy.spatial.transform import Rotation

from mbstudio.model import dumps, loads
from mbstudio.model.document import Body, ContactPair, Coordinate, Frame, Joint

from ..test_contact import FREE, free_body

HALF, TURN = (0.1, 0.05, 0.025), (0.1, 0.2, 0.3)  # the block's half extents (m) and its box's rpy (rad)
TABLE = (0.3, 0.2, 0.05)  # the fixed box's half extents, its top face z = 0
TETRA = [[0.0, 0.0, -0.03], [0.08, 0.0, 0.02], [-0.04, 0.07, 0.02], [-0.04, -0.07, 0.02]]
KNOB, ROD = 0.03, 0.015  # the fixed sphere's and the rod capsule's radii (m)
LAW = {"stiffness": 1e6, "exponent": 1.5, "dissipation": 20.0, "friction": 0.5, "stiction_velocity": 1e-3}


def pairs_model():
    """Body 1, a block on a free joint touching a fixed box with its lowest corner (a box-on-box pair, the block's
    box turned by TURN);
    body 2, a rod on a free joint with a tetrahedron mesh at its middle and a capsule along it, each against a
    fixed sphere (the ground's point "knob")."""
    model = free_body(1.0, (0.001, 0.003, 0.004), {"c": [0.0, 0.0, 0.0]})
    model.ground.points |= {"table": [0.0, 0.0, -TABLE[2]], "knob": [0.5, 0.0, 0.0]}
    inertia = dict(model.bodies[0].inertia) | {"m": 0.5}
    points = {"m": [0.0, 0.0, 0.0], "a": [0.0, -0.15, 0.0], "b": [0.0, 0.15, 0.0]}
    model.bodies.append(Body("2", "rod", inertia, points))
    model.joints.append(Joint("float2", "free", "0", "2", Frame(), Frame(), [Coordinate(f"{n}2") for n in FREE]))
    for joint, values in ((0, {"z": -box_corners(HALF, TURN)[:, 2].min()}), (1, {"x2": 0.5, "z2": 0.12})):
        for name, value in values.items():
            next(c for c in model.joints[joint].coordinates if c.name == name).initial = value
    model.forces = [
        ContactPair("boxes", "ground", "table", "1", "c", shape1="box", half_extents1=list(TABLE), radius1=0.0,
                    shape2="box", half_extents2=list(HALF), rpy2=list(TURN), radius2=0.0, **LAW),
        ContactPair("tetra", "ground", "knob", "2", "m", radius1=KNOB, shape2="mesh", vertices2=TETRA,
                    rpy2=[0.0, 0.0, 0.5], radius2=0.0, **LAW),
        ContactPair("rod", "ground", "knob", "2", "a", radius1=KNOB, radius2=ROD, end2="b", **LAW),
    ]  # fmt: skip
    return loads(dumps(model))


def drawn_bounds(window, name: str) -> list[np.ndarray]:
    """The world bounds (3, 2) of the actors the 3D view draws for force element `name`: of their meshes' points
    placed by the actors' matrices (VTK's own bounds of a turned actor are those of its turned bounding box)."""
    scene = window.view.scene
    actors = [a for actors in scene.actors.values() for a in actors if scene.key_of(a) == ("force", name)]
    out = []
    for actor in actors:
        points = np.asarray(pv.wrap(actor.GetMapper().GetInput()).points, float)
        matrix = np.array([[actor.GetMatrix().GetElement(i, j) for j in range(4)] for i in range(4)])
        world = points @ matrix[:3, :3].T + matrix[:3, 3]
        out.append(np.column_stack([world.min(axis=0), world.max(axis=0)]))
    return out


def box_corners(half, rpy) -> np.ndarray:
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return Rotation.from_euler("xyz", rpy).apply(signs * half)  # URDF's R = Rz Ry Rx


def expected(window, q, label: str, local: np.ndarray, radius: float = 0.0) -> np.ndarray:
    """The world bounds (3, 2) of body points `local` (N, 3) at coordinates q, swept by `radius`."""
    rotation, origin = (x[0] for x in window.mech.poses(np.asarray(q, float)[None])[label])
    world = local @ rotation.T + origin
    return np.column_stack([world.min(axis=0) - radius, world.max(axis=0) + radius])


def check_pairs(window, q) -> None:
    """Each pair's two shapes where the model puts them at q: the boxes' and the mesh's corners exactly (to
    rounding of their size), the spheres and the capsule to their tessellation (its facets miss the round by
    less than 1 % of the radius)."""
    boxes, tetra, rod = (drawn_bounds(window, name) for name in ("boxes", "tetra", "rod"))
    assert (len(boxes), len(tetra), len(rod)) == (2, 2, 2)
    exact, facets = 1e-12, 0.01
    table = expected(window, q, "0", box_corners(TABLE, (0, 0, 0)) + [0.0, 0.0, -TABLE[2]])
    block = expected(window, q, "1", box_corners(HALF, TURN))
    mesh = expected(window, q, "2", Rotation.from_euler("xyz", (0, 0, 0.5)).apply(TETRA))
    knob = expected(window, q, "0", np.array([[0.5, 0.0, 0.0]]), KNOB)
    capsule = expected(window, q, "2", np.array([[0.0, -0.15, 0.0], [0.0, 0.15, 0.0]]), ROD)
    for drawn, wanted, tolerance in ((boxes, [table, block], exact), (tetra, [knob, mesh], facets * KNOB),
                                     (rod, [knob, capsule], facets * max(KNOB, ROD))):  # fmt: skip
        found = sorted(drawn, key=lambda b: tuple(b.ravel()))
        wanted = sorted(wanted, key=lambda b: tuple(b.ravel()))
        for got, want in zip(found, wanted, strict=True):
            assert np.abs(got - want).max() <= tolerance + exact, (got, want)


def test_every_pairs_shapes_are_drawn_on_their_bodies_and_follow_them(window, qtbot):
    window.document.replace(pairs_model(), None)
    q = np.array(window.q, float)
    check_pairs(window, q)
    moved = q.copy()
    moved[:6] += [0.02, -0.01, 0.05, 0.3, -0.2, 0.7]  # the block lifted, shifted and turned
    moved[6:] += [-0.1, 0.05, 0.1, 0.4, 0.1, -0.6]  # the rod too
    window.view.set_pose(moved)  # what a slider's step and a run's frame do
    check_pairs(window, moved)
    window.view.render_pose(q)  # an animation's frame, rendered now
    check_pairs(window, q)
    window.view.scene.highlight(("force", "boxes"))  # selecting the pair in the tree colours both its shapes
    scene = window.view.scene
    colours = {
        tuple(a.prop.color) for actors in scene.actors.values() for a in actors if scene.key_of(a) == ("force", "boxes")
    }
    assert len(colours) == 1
    if folder := os.environ.get("MBSTUDIO_SCREENSHOTS"):  # how it is looked at
        scene.highlight(None)
        window.resize(1280, 800)
        window.view.set_pose(q)
        window.view.scene.camera("isometric")
        qtbot.wait(200)  # Qt lays the docks out for the new size when it next handles events
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.window_image().save(str(Path(folder) / "contact_pairs_window.png"))
        window.view.image().save(str(Path(folder) / "contact_pairs.png"))  # the figure of docs/contact.md


@pytest.mark.parametrize("element", ["boxes", "rod"])
def test_a_pair_removed_is_no_longer_drawn(window, element):
    model = pairs_model()
    model.forces = [f for f in model.forces if f.name != element]
    window.document.replace(model, None)
    assert drawn_bounds(window, element) == []
    assert all(len(drawn_bounds(window, f.name)) == 2 for f in model.forces)


def test_view_contact_shapes_hides_and_shows_every_pairs_shapes(window):
    """View › Contact Shapes (on by default) hides the six shapes of the three pairs, also after the model is
    rebuilt, and shows them again."""
    window.document.replace(pairs_model(), None)
    scene, toggle = window.view.scene, window.actions["contacts"]

    def visible() -> list[bool]:
        names = {("force", name) for name in ("boxes", "tetra", "rod")}
        return [bool(a.GetVisibility()) for actors in scene.actors.values() for a in actors if scene.key_of(a) in names]

    assert toggle.isChecked() and visible() == [True] * 6
    toggle.setChecked(False)
    assert visible() == [False] * 6
    window.document.replace(pairs_model(), None)
    assert visible() == [False] * 6
    toggle.setChecked(True)
    assert visible() == [True] * 6
