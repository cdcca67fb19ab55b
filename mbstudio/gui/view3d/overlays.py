"""What the 3D view draws over the mechanism for post-processing, each toggled from the View menu: the names of
bodies and joints (following the pose), arrows of the applied forces at the shown instant, the traces of the
point measures along the shown run, and ghosted poses of that run (translucent copies of the bodies at a few
instants)."""

from __future__ import annotations

import numpy as np
import pyvista as pv
from vtkmodules.vtkRenderingCore import vtkActor

from ...model.document import GROUND, PointMeasure, body_key
from .scene import Scene, _matrix

LABEL_COLOR = "#202020"
TRACE_COLORS = ("#d0602a", "#2a70c0", "#40a040", "#a040a0")
GHOST_OPACITY = 0.18
FORCE_COLOR = "#c02060"
SUPPORT_COLOR = "#20a060"  # the support polygon and the centre of pressure
PRESSURE_TEXT = "#0b5a32"  # the centre of pressure's label: darker, readable over the ground's green axis


ARROW_LONGEST = 0.4  # of the mechanism's size: the largest force's arrow (a quarter was short beside solo12's legs)
ARROW_SHORTEST = ARROW_LONGEST / 3  # the smallest force's arrow, however small the force (its label gives it)
ARROW_RADIUS = 0.008  # of the mechanism's size: every shaft; the heads 2.5 times as wide
LABEL_GAP = 0.03  # of the mechanism's size: from an arrow's head to its value's label
PRESSURE_DOT = 0.02  # of the mechanism's size: the centre of pressure's radius (at 0.01 the ground's axes hid it)


def arrow_lengths(magnitudes: np.ndarray, size: float) -> np.ndarray:
    """Drawn lengths (m) of arrows of forces `magnitudes` (> 0): in proportion to the largest, at least
    ARROW_SHORTEST of `size`."""
    longest = ARROW_LONGEST * size
    return np.maximum(longest * magnitudes / magnitudes.max(), ARROW_SHORTEST * size)


def arrow(start, force, length: float, size: float) -> pv.PolyData:
    """An arrow `length` long from `start` along `force`, its shaft and head as thick for every length."""
    shaft = ARROW_RADIUS * size
    head = min(6 * shaft, 0.4 * length)
    return pv.Arrow(
        start=start, direction=force, scale=length, tip_length=head / length,
        tip_radius=2.5 * shaft / length, shaft_radius=shaft / length,
    )  # fmt: skip


class Overlays:
    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.labels_on = False
        self._ghosts: list[vtkActor] = []
        self._traces: list[str] = []

    def rebuilt(self, q: np.ndarray) -> None:
        """After the scene was rebuilt (its actors cleared): ghosts and traces are gone; labels come back."""
        self._ghosts, self._traces = [], []
        self.place(q)

    @property
    def plotter(self) -> pv.BasePlotter:
        return self.scene.plotter

    # ------------------------------------------------------------------ labels
    def show_labels(self, on: bool, q: np.ndarray) -> None:
        self.labels_on = on
        self.plotter.remove_actor("labels", render=False)
        self.place(q)

    def place(self, q: np.ndarray) -> None:
        """After a pose change: the labels move with the bodies and joints (nothing to do while they are off,
        which is every slider step and animation frame of a view without them)."""
        if not self.labels_on or self.scene.mech is None:
            return
        self.plotter.remove_actor("labels", render=False)
        positions, texts = self.label_positions(q)
        self.plotter.add_point_labels(
            positions, texts, name="labels", font_size=11, text_color=LABEL_COLOR, shape_opacity=0.6,
            point_size=1, always_visible=True, render=False, pickable=False,
        )  # fmt: skip

    def label_positions(self, q: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """World positions and texts: each body's name at its origin, each joint's name at its parent frame."""
        mech = self.scene.mech
        poses = mech.poses(np.asarray(q, float)[None])
        positions, texts = [], []
        for body in mech.model.bodies:
            positions.append(poses[body.label][1][0])
            texts.append(f"{body.label}: {body.name}" if body.name else body.label)
        geometry = mech.tree.geometry
        for joint in mech.model.joints:
            frame = geometry.frame(mech.model.body(joint.parent), joint.parent_frame)
            rotation, origin = (x[0] for x in poses[body_key(joint.parent)])
            positions.append(origin + rotation @ np.asarray(frame.origin, float))
            texts.append(joint.name)
        return np.array(positions, float), texts

    # ------------------------------------------------------------------ traces
    def show_traces(self, series: dict | None) -> list[str]:
        """Polylines of every point measure's path in a run's series (None: remove them); their names."""
        for name in self._traces:
            self.plotter.remove_actor(name, render=False)
        self._traces = []
        if series is None or self.scene.mech is None:
            return []
        for k, m in enumerate(x for x in self.scene.mech.model.measures if isinstance(x, PointMeasure)):
            columns = [f"{m.name}.{axis} [m]" for axis in "xyz"]
            if all(c in series for c in columns):
                path = np.column_stack([np.asarray(series[c], float) for c in columns])
                name = f"trace_{m.name}"
                self.plotter.add_mesh(
                    pv.lines_from_points(path), color=TRACE_COLORS[k % len(TRACE_COLORS)], line_width=3,
                    name=name, pickable=False, reset_camera=False, render=False,
                )  # fmt: skip
                self._traces.append(name)
        self.scene.request_render()
        return [name.removeprefix("trace_") for name in self._traces]

    # ------------------------------------------------------------------ forces
    def show_forces(self, arrows: list | None) -> int:
        """Arrows of the applied forces, (element, point, force) in world axes, each labelled with its magnitude
        (None: remove them); the number drawn. The largest is ARROW_LONGEST of the mechanism's size long, none shorter
        than a third of that, and all equally thick: a small force, or one foreshortened towards the camera (a
        sliding foot's, seen from the isometric view), stays an arrow rather than a dot."""
        for name in ("forces", "force_values"):
            self.plotter.remove_actor(name, render=False)
        arrows = [a for a in arrows or [] if np.linalg.norm(a[2]) > 0]
        self.scene.forces = np.array([np.asarray(f, float) for _, _, f in arrows]).reshape(-1, 3)
        if arrows:
            magnitudes = [float(np.linalg.norm(f)) for _, _, f in arrows]
            lengths = arrow_lengths(np.array(magnitudes), self.scene.size)
            glyphs = pv.merge([arrow(p, f, n, self.scene.size) for (_, p, f), n in zip(arrows, lengths, strict=True)])
            self.plotter.add_mesh(
                glyphs, color=FORCE_COLOR, name="forces", pickable=False, reset_camera=False, render=False
            )
            beyond = lengths + LABEL_GAP * self.scene.size  # the labels clear of the arrows' heads
            tips = np.array([np.asarray(p, float) + np.asarray(f, float) / m * n
                             for (_, p, f), m, n in zip(arrows, magnitudes, beyond, strict=True)])  # fmt: skip
            self.plotter.add_point_labels(
                tips, [f"{m:.3g} N" for m in magnitudes], name="force_values", font_size=10, text_color=FORCE_COLOR,
                shape_opacity=0.5, show_points=False, always_visible=True, render=False, pickable=False,
            )  # fmt: skip
        self.scene.request_render()
        return len(arrows)

    def show_support(self, polygon: np.ndarray | None, centre: np.ndarray | None) -> int:
        """The support polygon (its corners (k, 3), in order; a segment or a point for fewer) as a closed line and
        the centre of pressure as a dot (None: remove them); the number of corners drawn."""
        for name in ("support", "pressure_centre", "pressure_label"):
            self.plotter.remove_actor(name, render=False)
        corners = 0 if polygon is None else len(polygon)
        if corners:
            closed = np.vstack([polygon, polygon[:1]]) if corners > 2 else np.asarray(polygon, float)
            line = pv.lines_from_points(closed) if len(closed) > 1 else pv.PolyData(closed)
            self.plotter.add_mesh(line, color=SUPPORT_COLOR, line_width=3, point_size=8, name="support",
                                  pickable=False, reset_camera=False, render=False)  # fmt: skip
        if centre is not None:  # a dot wider than the polygon's line, named: the ground's axes may sit on it
            dot = pv.Sphere(radius=PRESSURE_DOT * self.scene.size, center=centre)
            self.plotter.add_mesh(dot, color=SUPPORT_COLOR, name="pressure_centre", pickable=False,
                                  reset_camera=False, render=False)  # fmt: skip
            self.plotter.add_point_labels(
                np.asarray(centre, float)[None], ["CoP"], name="pressure_label", font_size=10, text_color=PRESSURE_TEXT,
                shape_color="white", shape_opacity=0.8, show_points=False, always_visible=True, render=False,
                pickable=False,
            )  # fmt: skip
        self.scene.request_render()
        return corners

    # ------------------------------------------------------------------ ghosts
    def show_ghosts(self, poses: np.ndarray | None) -> int:
        """Translucent copies of the bodies at the coordinates `poses` (K, n) (None: remove them); the
        number of copies drawn. They share the bodies' meshes: nothing is rebuilt."""
        for actor in self._ghosts:
            self.plotter.remove_actor(actor, render=False)
        self._ghosts = []
        if poses is None or self.scene.mech is None:
            self.scene.request_render()
            return 0
        for q in np.asarray(poses, float):
            for label, (rotation, origin) in self.scene.mech.poses(q[None]).items():
                for actor in self.scene.actors.get(label, []) if label != GROUND else []:
                    if id(actor) not in self.scene.colors:  # the axes glyphs: no ghost
                        continue
                    ghost = vtkActor()
                    ghost.SetMapper(actor.GetMapper())
                    ghost.GetProperty().DeepCopy(actor.GetProperty())
                    ghost.GetProperty().SetOpacity(GHOST_OPACITY)
                    ghost.SetPickable(False)
                    ghost.SetUserMatrix(pv.vtkmatrix_from_array(_matrix(rotation[0], origin[0])))
                    self.plotter.add_actor(ghost, reset_camera=False, render=False)
                    self._ghosts.append(ghost)
        self.scene.request_render()
        return len(poses)
