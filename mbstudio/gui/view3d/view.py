"""The central 3D view: a pyvistaqt QtInteractor showing the Scene; every VTK call stays on the GUI thread.

A click selects a body or joint; a drag turns the camera; Ctrl + drag on a body drags the picked point of that
body instead (the window makes the mechanism follow: kinematics/point_drag.py), in the plane through the point
facing the camera. The Ctrl-drag's mouse events are taken before VTK sees them, so the camera stays put."""

from __future__ import annotations

import os

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, Qt, Signal
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pyvistaqt import QtInteractor
from vtkmodules.vtkRenderingCore import vtkPropPicker

from ...kinematics import Mechanism
from .overlays import Overlays
from .scene import Scene

CLICK_PIXELS = 3  # a press and release closer than this are a click, not a drag


class View3D(QWidget):
    """Emits `picked(key)` with the tree key of a body or joint clicked in the view."""

    picked = Signal(tuple)
    positioned = Signal(object)  # a click's world position (3,), while `picking_points` is on
    drag_started = Signal(str, object)  # Ctrl + press on a body: its label and the picked world point (3,)
    dragged = Signal(object)  # where the mouse puts the dragged point now (3,), world
    drag_ended = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        # no timed re-rendering: the scene renders when it changes (a frame is costly with software OpenGL)
        self.plotter = QtInteractor(self, auto_update=False)
        layout.addWidget(self.plotter.interactor)
        # A change asks Qt for one repaint, whose paintGL renders: rendering here too would draw every frame
        # twice (the widget always renders when it paints), and changes made before the paint share a frame.
        self.scene = Scene(self.plotter, request_render=self.plotter.update)
        self.overlays = Overlays(self.scene)
        # A click picks on release, and only if the mouse stayed put: a drag that starts on a body turns the
        # camera without selecting it.
        self._pressed_at: tuple[int, int] | None = None
        self._picker = vtkPropPicker()
        self.picking_points = False
        self.plotter.iren.add_observer("LeftButtonPressEvent", self._press)
        self.plotter.iren.add_observer("LeftButtonReleaseEvent", self._release)
        self._drag_plane: tuple[np.ndarray, np.ndarray] | None = None  # a point on it and its normal
        self.plotter.interactor.installEventFilter(self)

    # ------------------------------------------------------------------ dragging a body
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        """Ctrl + left button on a body: a drag of that body's point, kept from VTK's camera."""
        kind = event.type()
        if kind == QEvent.Type.MouseButtonPress and isinstance(event, QMouseEvent):
            control = event.modifiers() & Qt.KeyboardModifier.ControlModifier
            if event.button() == Qt.MouseButton.LeftButton and control and not self.picking_points:
                return self.start_drag(*self._display(event))
        elif self._drag_plane is not None and kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            self.dragged.emit(self.drag_target(*self._display(event)))
            return True
        elif self._drag_plane is not None and kind == QEvent.Type.MouseButtonRelease:
            self._drag_plane = None
            self.drag_ended.emit()
            return True
        return False

    def _display(self, event: QMouseEvent) -> tuple[int, int]:
        return self.display_point(event.position())

    def display_point(self, position: QPointF | QPoint) -> tuple[int, int]:
        """A position in the widget (Qt's pixels, from the top left) in VTK's display coordinates (the device's
        pixels, from the bottom left)."""
        widget = self.plotter.interactor
        ratio = widget.devicePixelRatioF()
        return round(position.x() * ratio), round((widget.height() - position.y()) * ratio)

    def start_drag(self, x: int, y: int) -> bool:
        """Start dragging the body under display point (x, y); False (nothing started) off every body."""
        self._picker.Pick(x, y, 0, self.plotter.renderer)
        key = self.scene.key_of(self._picker.GetActor())
        if key is None or key[0] != "body":
            return False
        point = np.array(self._picker.GetPickPosition(), float)
        camera = self.plotter.camera
        normal = np.array(camera.position, float) - np.array(camera.focal_point, float)
        self._drag_plane = point, normal / np.linalg.norm(normal)
        self.drag_started.emit(key[1], point)
        return True

    def drag_target(self, x: int, y: int) -> np.ndarray:
        """Where the ray through display point (x, y) meets the drag's plane (it faces the camera)."""
        base, normal = self._drag_plane
        near, far = self._ray(x, y)
        direction = far - near
        return near + direction * ((base - near) @ normal) / (direction @ normal)

    def _ray(self, x: float, y: float) -> tuple[np.ndarray, np.ndarray]:
        """The view's ray through display point (x, y): its points on the near and far clipping planes."""
        renderer = self.plotter.renderer
        ends = []
        for depth in (0.0, 1.0):
            renderer.SetDisplayPoint(x, y, depth)
            renderer.DisplayToWorld()
            point = np.array(renderer.GetWorldPoint(), float)
            ends.append(point[:3] / point[3])
        return ends[0], ends[1]

    def _press(self, *_) -> None:
        self._pressed_at = self.plotter.iren.get_event_position()

    def _release(self, *_) -> None:
        x, y = self.plotter.iren.get_event_position()
        pressed, self._pressed_at = self._pressed_at, None
        if pressed is None or max(abs(x - pressed[0]), abs(y - pressed[1])) > CLICK_PIXELS:
            return
        self._picker.Pick(x, y, 0, self.plotter.renderer)
        if self.picking_points:
            hit = self._picker.GetActor() is not None
            self.positioned.emit(np.array(self._picker.GetPickPosition()) if hit else self.ground_point(x, y))
            return
        key = self.scene.key_of(self._picker.GetActor())
        if key is not None:
            self.picked.emit(key)

    def ground_point(self, x: float, y: float) -> np.ndarray:
        """Where the view's ray through display point (x, y) meets the plane z = 0 (the plane through the
        focal point facing the camera when the ray runs along that plane)."""
        near, far = self._ray(x, y)
        direction = far - near
        camera = self.plotter.camera
        normal = np.array([0.0, 0.0, 1.0]) if abs(direction[2]) > 1e-3 * np.linalg.norm(direction) else None
        base = np.zeros(3) if normal is not None else np.array(camera.focal_point, float)
        normal = normal if normal is not None else -direction / np.linalg.norm(direction)
        return near + direction * ((base - near) @ normal) / (direction @ normal)

    def view_axis(self) -> np.ndarray:
        """The direction towards the viewer, as a world axis when within 10° of one: links drawn on the
        screen turn in its plane."""
        camera = self.plotter.camera
        toward = np.array(camera.position, float) - np.array(camera.focal_point, float)
        toward /= np.linalg.norm(toward)
        k = int(np.abs(toward).argmax())
        if abs(toward[k]) > np.cos(np.radians(10)):
            return np.eye(3)[k] * np.sign(toward[k])
        return toward

    def build(self, mech: Mechanism, q: np.ndarray, folder: str | os.PathLike | None = None) -> list[str]:
        """Draw `mech` at q; relative mesh files are looked for in `folder`. Returns what could not be drawn
        as the model asks (for the status bar)."""
        self.scene.build(mech, q, folder)
        self.overlays.rebuilt(q)
        return self.scene.problems

    def set_pose(self, q: np.ndarray) -> None:
        self.overlays.place(q)
        self.scene.set_pose(q)

    def show_frame(self, q: np.ndarray) -> None:
        """A frame of a run (animation, time cursor) at q: its bodies stay in view (Scene.keep_in_view)."""
        self.set_pose(q)
        self.scene.keep_in_view()

    def cover(self, frames: np.ndarray, q: np.ndarray) -> bool:
        """Keep a run's motion in view (Scene.cover) from 17 of its frames (K, n), the first and last among them,
        then show the pose q; True when the floor grew and the camera was fitted."""
        frames = np.asarray(frames, float)
        picked = np.unique(np.linspace(0, len(frames) - 1, 17).round().astype(int))
        return self.scene.cover(frames[picked], q)

    def render_pose(self, q: np.ndarray) -> np.ndarray:
        """The view at the pose q, rendered now, as an (h, w, 3) array (a frame of an animation)."""
        self.overlays.place(q)
        self.scene.set_pose(q)
        self.plotter.render()
        return self.plotter.screenshot(return_img=True)

    def image(self) -> QImage:
        """What the view shows, rendered now (a widget grab does not see the OpenGL surface everywhere)."""
        self.plotter.render()
        pixels = np.ascontiguousarray(self.plotter.screenshot(return_img=True))
        h, w, _ = pixels.shape
        return QImage(pixels.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()

    def close_view(self) -> None:
        """Stop rendering: a render for a closed window must not reach its OpenGL context, which would
        crash other views sharing it (pyvistaqt #762); hidden, it is skipped. Deleting the widget
        finalizes VTK."""
        self.plotter.hide()
