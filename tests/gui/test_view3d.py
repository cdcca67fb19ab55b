"""The 3D view: mesh-file shapes, picking in the real window in step with the tree, highlighting."""

from __future__ import annotations

import numpy as np
import pytest
import pyvista as pv
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from mbstudio import samples
from mbstudio.gui.view3d.scene import HIGHLIGHT, MESH_FORMATS, Scene
from mbstudio.kinematics import Mechanism

from .test_workbench import shot

Q = np.array([0.4, -0.7])  # a pose of the double pendulum where body 2 is turned and moved


@pytest.fixture
def plotter(display):
    p = pv.Plotter(off_screen=True, window_size=(400, 300))
    yield p
    p.close()


def pendulum(shape: dict | None) -> Mechanism:
    model = samples.load("double_pendulum")
    model.body("2").shape = shape
    return Mechanism(model)


def body_actors(scene: Scene, key: tuple) -> list:
    return [a for actors in scene.actors.values() for a in actors if scene.key_of(a) == key]


def moved(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    return points @ matrix[:3, :3].T + matrix[:3, 3]


@pytest.mark.parametrize("where", ["model folder", "current folder"])
def test_a_mesh_file_is_drawn_at_its_body_pose(plotter, tmp_path, monkeypatch, where):
    part = pv.Cone(center=(0.2, 0.0, 0.0), direction=(1, 0, 0), height=0.4, radius=0.05).triangulate()
    part.save(tmp_path / "arm.stl")
    origin = np.array([0.1, 0.02, -0.03])
    mech = pendulum({"type": "mesh", "file": "arm.stl", "origin": list(origin)})
    scene = Scene(plotter)
    if where == "model folder":
        scene.build(mech, Q, folder=tmp_path)
    else:
        monkeypatch.chdir(tmp_path)
        scene.build(mech, Q)
    assert scene.problems == []
    [mesh_actor] = [a for a in body_actors(scene, ("body", "2")) if a.mapper.dataset.n_cells == part.n_cells]
    rotation, position = (a[0] for a in mech.poses(Q)["2"])
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rotation, position
    drawn = moved(np.asarray(mesh_actor.mapper.dataset.points), np.array(mesh_actor.user_matrix))
    wanted = moved(np.asarray(part.points) + origin, pose)
    distances = np.linalg.norm(drawn[:, None] - wanted[None], axis=2)  # the reader may reorder points
    assert distances.min(axis=0).max() < 1e-6 and distances.min(axis=1).max() < 1e-6
    # VTK's actor bounds: the mesh's bounding box in body coordinates, moved by the pose
    low, high = np.asarray(part.bounds).reshape(3, 2).T + origin
    corners = moved(
        np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1]) for z in (low[2], high[2])]), pose
    )
    expected = np.column_stack([corners.min(axis=0), corners.max(axis=0)]).ravel()
    assert np.allclose(mesh_actor.bounds, expected, atol=1e-6)


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("missing.stl", None, "does not exist"),
        ("garbage.stl", "this is not an STL file", "holds no surface"),
        ("part.step", "ISO-10303-21;", "is not in a mesh format read here"),
    ],
)
def test_a_mesh_file_that_cannot_be_read_is_named_and_the_body_drawn_from_its_points(
    plotter, tmp_path, name, content, problem
):
    if content is not None:
        (tmp_path / name).write_text(content)
    scene = Scene(plotter)
    scene.build(pendulum({"type": "mesh", "file": name}), Q, folder=tmp_path)
    [message] = scene.problems
    assert "body '2'" in message and str(tmp_path / name) in message and problem in message
    assert all(suffix in message for suffix in MESH_FORMATS)
    assert "problems" in plotter.renderer.actors  # said in the view too
    fallback = [a.bounds for a in body_actors(scene, ("body", "2"))]
    scene.build(pendulum(None), Q)  # the same body without a shape: drawn from its points
    assert scene.problems == []
    assert np.allclose(fallback, [a.bounds for a in body_actors(scene, ("body", "2"))])


def on_screen(window, world_point) -> QPoint:
    """Where `world_point` is drawn in the view's widget (VTK display y grows upwards, Qt's downwards)."""
    widget, renderer = window.view.plotter.interactor, window.view.plotter.renderer
    renderer.SetWorldPoint(*world_point, 1.0)
    renderer.WorldToDisplay()
    x, y, _ = renderer.GetDisplayPoint()
    ratio = widget.devicePixelRatioF()
    return QPoint(round(x / ratio), round(widget.height() - y / ratio))


def click(window, world_point) -> None:
    QTest.mouseClick(
        window.view.plotter.interactor,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
        on_screen(window, world_point),
    )


def test_a_drag_that_starts_on_a_body_turns_the_camera_without_selecting_it(window, qtbot):
    widget, left = window.view.plotter.interactor, Qt.MouseButton.LeftButton
    start = on_screen(window, body_actors(window.view.scene, ("body", "1"))[0].center)
    camera = window.view.plotter.camera_position
    QTest.mousePress(widget, left, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(widget, start + QPoint(40, 10))
    QTest.mouseRelease(widget, left, Qt.KeyboardModifier.NoModifier, start + QPoint(40, 10))
    qtbot.wait(50)
    assert window.tree.current_key() != ("body", "1") and window.view.scene.selected != ("body", "1")
    assert window.view.plotter.camera_position != camera


def test_a_click_in_the_view_selects_the_item_in_the_tree_and_highlights_it(window, qtbot):
    scene = window.view.scene
    for key in (("body", "1"), ("joint", "lower_arm_pivot"), ("body", "5")):
        actor = body_actors(scene, key)[0]
        click(window, actor.center)
        qtbot.waitUntil(lambda key=key: window.tree.current_key() == key)
        assert scene.selected == key
        assert actor.prop.color == pv.Color(HIGHLIGHT)
        others = [
            a for actors in scene.actors.values() for a in actors if id(a) in scene.colors and scene.key_of(a) != key
        ]
        assert others and all(a.prop.color == pv.Color(scene.colors[id(a)]) for a in others)


def test_tree_selection_highlights_the_body_and_other_items_restore_its_colour(window):
    scene = window.view.scene
    wheel = body_actors(scene, ("body", "5"))
    window.tree.select(("inertia", "5"))
    assert wheel and all(a.prop.color == pv.Color(HIGHLIGHT) for a in wheel)
    window.tree.select(("parameter", "D12"))
    assert scene.selected == ("parameter", "D12")
    assert all(
        a.prop.color == pv.Color(scene.colors[id(a)])
        for actors in scene.actors.values()
        for a in actors
        if id(a) in scene.colors
    )
    window.tree.select(("ground",))
    ground = body_actors(scene, ("ground",))
    assert ground and all(a.prop.color == pv.Color(HIGHLIGHT) for a in ground)


def test_the_window_finds_mesh_files_beside_the_model_and_names_a_missing_one(window, tmp_path):
    from mbstudio.model import save

    pv.Sphere(radius=0.05).save(tmp_path / "ball.stl")
    for name, mesh in (("found", "ball.stl"), ("missing", "gone.stl")):
        model = samples.load("double_pendulum")
        model.body("2").shape = {"type": "mesh", "file": mesh}
        save(model, tmp_path / f"{name}.mbs")
    assert window.open_file(str(tmp_path / "found.mbs"))  # the window's own folder is elsewhere
    assert window.view.scene.problems == [] and window.statusBar().currentMessage() == ""
    assert window.open_file(str(tmp_path / "missing.mbs"))
    assert "gone.stl does not exist" in window.statusBar().currentMessage()


def test_a_mesh_shape_is_chosen_and_its_file_typed_in_the_window(window, tmp_path):
    from mbstudio.model import save

    from .test_building import pick, type_into

    pv.Cube(x_length=0.04, y_length=0.04, z_length=0.04).save(tmp_path / "block.stl")
    save(samples.load("double_pendulum"), tmp_path / "pendulum.mbs")
    assert window.open_file(str(tmp_path / "pendulum.mbs"))
    pick(window, ("shape", "2"), "type", "mesh")  # a placeholder file: the body is drawn from its points
    shape = window.document.model.body("2").shape
    assert (shape["type"], shape["file"], shape["scale"]) == ("mesh", "part.stl", [1.0, 1.0, 1.0])
    assert "part.stl does not exist" in window.statusBar().currentMessage()
    type_into(window, ("shape", "2"), "file", "block.stl")
    type_into(window, ("shape", "2"), "scale", "2, 1, 1")
    assert window.document.model.body("2").shape["file"] == "block.stl" and window.view.scene.problems == []
    local = np.array(window.view.scene.actors["2"][0].GetMapper().GetInput().GetBounds())  # in body axes
    assert local[1::2] - local[::2] == pytest.approx([0.08, 0.04, 0.04], rel=1e-6)  # stretched along x


def test_force_arrows_follow_the_pose(window):
    assert window.show_forces(True) == 2  # the coil-over's tension, at both of its ends
    first = np.array(window.view.plotter.actors["forces"].GetBounds())
    assert window.move_coordinate("theta1", 0.2)
    moved = np.array(window.view.plotter.actors["forces"].GetBounds())
    assert np.abs(moved - first).max() > 1e-3
    assert window.show_forces(False) == 0 and "forces" not in window.view.plotter.actors


def test_ctrl_drag_on_a_body_moves_the_mechanism_and_one_undo_restores_the_pose(window, qtbot):
    """Issue 24, item 6: Ctrl + drag on the SLA's lower arm, seen from the front: the camera stays, the arm follows
    the mouse up with every loop closed, the point as near the mouse as the mechanism lets it (the error has no
    component along the way the point can move), and the whole drag is one undo step."""
    window.view.scene.camera("front")
    qtbot.wait(50)
    widget, left, control = (
        window.view.plotter.interactor,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.ControlModifier,
    )
    arm = body_actors(window.view.scene, ("body", "1"))[0]
    start = on_screen(window, arm.center)
    camera, steps, before = window.view.plotter.camera_position, window.document.stack.count(), window.q.copy()
    QTest.mousePress(widget, left, control, start)
    drag = window.body_drag.drag
    assert drag is not None and drag.body == "1"
    for k in range(1, 5):
        QTest.mouseMove(widget, start - QPoint(0, 3 * k))
        qtbot.wait(20)
    end = start - QPoint(0, 12)
    target = window.view.drag_target(*window.view.display_point(end))
    QTest.mouseRelease(widget, left, control, end)
    qtbot.wait(50)
    assert window.view.plotter.camera_position == camera and window.tree.current_key() != ("body", "1")
    theta1 = window.mech.coordinates.index("theta1")
    assert before[theta1] + 0.05 < window.q[theta1] < 0.7  # up: the lower arm turns into bump, short of its limit
    assert np.abs(window.mech.residual(window.q[None])).max() < 1e-10
    assert window.document.stack.count() == steps + 1 and window.document.stack.undoText() == "Drag body '1'"
    assert window.statusBar().currentMessage().startswith("Dragged body '1'")
    shot(window, "sla_dragged.png")
    mech, e = window.mech, target - drag.point(window.q)
    J = mech.body_jacobian(window.q[None], "1", drag.local)[0, 3:] @ mech.r_matrix(window.q[None])[0]
    assert np.abs(J.T @ e).max() < 1e-6 * np.linalg.norm(J) * np.linalg.norm(e)  # as near as the arm can go
    window.document.stack.undo()
    assert np.array_equal(window.q, before) and window.document.stack.count() == steps + 1
    window.document.stack.redo()
    assert window.q[theta1] > before[theta1] + 0.05
