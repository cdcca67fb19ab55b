"""The mechanism as pyvista actors on any pyvista plotter (the window's QtInteractor, or an off-screen
Plotter for `mbstudio screenshot`). No Qt here.

Meshes are built once per structure, in body coordinates; moving the mechanism only sets each actor's
user matrix from the body poses that Mechanism.poses returns.

A frame is costly with software OpenGL (no GPU: CI, remote desktops), so the scene asks for frames through
`request_render` (the window schedules one repaint; an off-screen plotter renders at once) and draws with
FXAA instead of multisampling (see Scene.__init__).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyvista as pv
from vtkmodules.vtkCommonCore import vtkObject

from ...dynamics.contact_shapes import hull_faces, pair_side, shape_of, shape_vertices
from ...kinematics import Mechanism
from ...model import GROUND, Frame
from ...model.document import body_key

PALETTE = ("#4a78b5", "#d0802a", "#50a050", "#b04a8a", "#8a6ad0", "#c0a030", "#3aa0a0", "#a05050")
HIGHLIGHT = "#19d3ff"  # cyan: no sample body uses it
JOINT_COLOR = "#3c3c3c"
CUT_JOINT_COLOR = "#b03060"
BUSHING_COLOR = "#6b4f2a"  # rubber, apart from the joints' grey
CONTACT_COLOR = "#556070"  # the contact shapes, see-through over the bodies they sit on
BACKGROUND = ("#f4f6f8", "#c9d3de")  # light gradient: dark parts and coloured bodies stand out
# A bulky shape (a wheel, a housing: its thinnest side this many times the typical one) is drawn see-through,
# so that the joints and links it would hide stay visible.
BULKY = 3.0
# read by pyvista as surfaces; COLLADA (.dae, common in URDF robots) through trimesh, which the URDF reader brings
MESH_FORMATS = (".stl", ".obj", ".ply", ".vtk", ".vtp", ".dae")
PROBLEM_COLOR = "#b02020"
BODY_KINDS = ("body", "points", "point", "frames", "frame", "inertia", "shape")  # tree items (kind, label, ...)
JOINT_KINDS = ("joint", "coordinate")


def _matrix(rotation, origin) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = np.asarray(rotation, float), np.asarray(origin, float)
    return m


def _axes_mesh(length: float) -> pv.PolyData:
    """Three segments along x, y, z coloured red, green, blue."""
    pts = np.array([[0, 0, 0], [length, 0, 0], [0, 0, 0], [0, length, 0], [0, 0, 0], [0, 0, length]], float)
    mesh = pv.PolyData(pts, lines=np.array([2, 0, 1, 2, 2, 3, 2, 4, 5]))
    mesh.cell_data["rgb"] = np.array([[220, 40, 40], [40, 160, 40], [40, 80, 220]], np.uint8)
    return mesh


def contact_mesh(mech: Mechanism, contact) -> pv.PolyData:
    """A contact's shape, or a pair's side (contact_shapes.PairSide), in its body's coordinates
    (dynamics/contact_shapes.py): its sphere, or the convex hull of a box's or a mesh's vertices (their spheres'
    radius left out: a rounding of the corners)."""
    geometry = mech.tree.geometry
    centre = np.asarray(geometry.point(mech.model.body(contact.body), contact.point), float)
    radius = float(geometry.value(contact.radius))
    if shape_of(contact) == "sphere":
        return pv.Sphere(radius=radius, center=centre)
    return _hull_mesh(centre + np.asarray(shape_vertices(contact, geometry.value, mech.backend), float))


def _hull_mesh(points: np.ndarray) -> pv.PolyData:
    """The convex hull of points (N, 3) as a triangle mesh."""
    faces = hull_faces(points)
    return pv.PolyData(points, np.column_stack([np.full(len(faces), 3), faces]).ravel())


def contact_meshes(mech: Mechanism, element) -> list[tuple[str, pv.PolyData]]:
    """The shapes a contact element presses with, each with its body's label, in that body's coordinates: a ground
    contact's one shape; a contact pair's two sides (force_laws/contact_pair_law.py), body2's a capsule with `end2`
    (the hull of its end spheres), either side the ground's for a fixed shape. Other elements: none."""
    if element.type == "contact":
        return [(body_key(element.body), contact_mesh(mech, element))]
    if element.type != "contact_pair":
        return []
    sides = [pair_side(element, k) for k in (1, 2)]
    meshes = [(body_key(side.body), contact_mesh(mech, side)) for side in sides]
    if element.end2 is not None:
        body, geometry = mech.model.body(element.body2), mech.tree.geometry
        radius = float(geometry.value(element.radius2))
        ends = [np.asarray(geometry.point(body, name), float) for name in (element.point2, element.end2)]
        ball = np.asarray(pv.Sphere(radius=radius, theta_resolution=24, phi_resolution=12).points, float)
        meshes[1] = (body_key(element.body2), _hull_mesh(np.vstack([end + ball for end in ends])))
    return meshes


def _cylinder(**kwargs) -> pv.PolyData:
    """A link or joint cylinder: a few pixels across and smooth-shaded, it looks round with 24 facets, while
    pyvista's default of 100 adds vertex work to every frame."""
    return pv.Cylinder(resolution=24, **kwargs)


def _joint_glyph(joint_type: str, r: float) -> pv.PolyData | None:
    """A glyph in joint-frame coordinates (z is the joint axis) that says the joint type at a glance."""
    z, x = (0, 0, 1), (1, 0, 0)
    glyphs = {
        "revolute": lambda: _cylinder(direction=z, radius=r, height=3 * r),
        "prismatic": lambda: pv.Cube(x_length=1.2 * r, y_length=1.2 * r, z_length=5 * r),
        "cylindrical": lambda: _cylinder(direction=z, radius=0.8 * r, height=5 * r),
        "universal": lambda: (
            _cylinder(direction=z, radius=0.6 * r, height=4 * r) + _cylinder(direction=x, radius=0.6 * r, height=4 * r)
        ),
        "ball": lambda: pv.Sphere(radius=1.3 * r),
        "spherical": lambda: pv.Sphere(radius=1.3 * r),
        "planar": lambda: _cylinder(direction=z, radius=2.5 * r, height=0.4 * r),
        "fixed": lambda: pv.Cube(x_length=1.5 * r, y_length=1.5 * r, z_length=1.5 * r),
    }
    return glyphs[joint_type]() if joint_type in glyphs else None


def body_item(label: str) -> tuple:
    """The tree key of a body: the ground has its own item."""
    return ("ground",) if label == GROUND else ("body", label)


def _drawn_item(key: tuple | None) -> tuple | None:
    """The key of the actors that show a tree item: its body's, joint's or bushing's (None: nothing drawn)."""
    if key and key[0] == "ground":
        return key
    if key and key[0] in BODY_KINDS:
        return body_item(key[1])
    if key and key[0] in JOINT_KINDS:
        return ("joint", key[1])
    if key and key[0] == "force":  # a bushing's glyph
        return key
    return None


def _drawn_items(key: tuple | None) -> set[tuple]:
    """The keys of the actors a tree item shows: a parallel machine's limb or cycle (key ("limb", name,
    *bodies) or ("cycle", limb, cut joint, *bodies)) shows all its bodies."""
    if key and key[0] in ("limb", "cycle"):
        return {body_item(b) for b in key[2 if key[0] == "limb" else 3 :]}
    item = _drawn_item(key)
    return set() if item is None else {item}


def _thinnest(mesh: pv.PolyData) -> float:
    bounds = np.asarray(mesh.bounds, float).reshape(3, 2)
    return float((bounds[:, 1] - bounds[:, 0]).min())


def _read_surface(path: Path) -> pv.PolyData:
    """The surface in a mesh file. VTK readers report a bad file on stderr and return an empty mesh, so
    their messages are silenced here and the caller judges the result."""
    shown = vtkObject.GetGlobalWarningDisplay()
    vtkObject.GlobalWarningDisplayOff()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = _read_collada(path) if path.suffix.lower() == ".dae" else pv.read(path)
    finally:
        vtkObject.SetGlobalWarningDisplay(shown)
    if isinstance(data, pv.MultiBlock):
        data = data.combine()
    return data if isinstance(data, pv.PolyData) else data.extract_surface()


def _read_collada(path: Path) -> pv.PolyData:
    """A COLLADA file's triangles, all its geometries in its own coordinates (trimesh applies the scene graph)."""
    import trimesh  # optional: installed with the URDF reader (yourdfpy)

    mesh = trimesh.load(path, force="mesh")
    faces = np.column_stack([np.full(len(mesh.faces), 3), mesh.faces]).ravel()
    return pv.PolyData(np.asarray(mesh.vertices, float), faces)


def _read_mesh(path: Path) -> tuple[pv.PolyData | None, str | None]:
    """The mesh in `path`, or None and what is wrong with the file."""
    if path.suffix.lower() not in MESH_FORMATS:
        return None, "is not in a mesh format read here"
    if not path.is_file():
        return None, "does not exist"
    try:
        mesh = _read_surface(path)
    except Exception as exc:  # each VTK reader fails in its own way on a bad file
        return None, f"cannot be read ({exc})"
    if mesh.n_cells == 0:
        return None, f"holds no surface (empty, or not a valid {path.suffix.lower()} file)"
    return mesh, None


def _placement(shape: dict, body, geometry) -> np.ndarray:
    """The shape's frame in body coordinates as a 4x4 matrix: its origin (default the body's) and, for a box or
    a mesh, its axes z and x (default the body's)."""
    frame = geometry.frame(body, Frame(shape.get("origin", [0, 0, 0]), shape.get("z"), shape.get("x")))
    return _matrix(np.asarray(frame.rotation, float), np.asarray(frame.origin, float))


def mechanism_size(mech: Mechanism, q: np.ndarray) -> float:
    """The mechanism's extent at q (at least 0.1 m), from which glyph sizes and snapping distances follow."""
    pts = [p[0] for p in mech.points(q).values()] + [p[1][0] for p in mech.poses(q).values()]
    pts = np.array(pts, float)
    return max(float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0))), 0.1)


# Where the camera looks from when ground contacts' forces are shown: from the right, 22 degrees towards the front
# and 16 up. A trotting solo12's loaded feet's forces (2 s of `mbstudio legged --gait trot`, 401 samples) make a
# median 73 degrees with this line of sight, 52 for the 10% nearest it, and 1% of them less than 30; from the
# isometric view, 54 and 28 degrees and 13% (a sliding foot's force, forward, outward and up, was a dot there).
CONTACTS_VIEW = (0.4, -1.0, 0.3)
# The isometric preset looks from one of the four upper corners: the first unless a shown force arrow makes less than
# SIDE_ON with its line of sight (a trotting foot's force, forward, outward and up, points at the right front corner);
# then from the corner that sees every arrow at the widest angle, or the first within TIE of it (mirrored feet see
# two corners alike: rounding must not choose between them).
CORNERS = ((1.0, -1.0, 1.0), (-1.0, -1.0, 1.0), (1.0, 1.0, 1.0), (-1.0, 1.0, 1.0))
SIDE_ON, TIE = np.radians(30.0), np.radians(5.0)


def isometric_corner(forces: np.ndarray) -> np.ndarray:
    """The corner (3,) to look from at the arrows of `forces` (k, 3; none: the first corner): the first, unless
    one of them is within SIDE_ON of its line of sight, then the first whose narrowest angle to an arrow is within TIE
    of the widest."""
    corners = np.array(CORNERS) / np.sqrt(3.0)
    if not len(forces):
        return corners[0]
    units = forces / np.linalg.norm(forces, axis=1)[:, None]
    narrowest = np.arcsin(np.clip(np.linalg.norm(np.cross(corners[:, None], units[None]), axis=2), 0.0, 1.0))
    narrowest = narrowest.min(axis=1)
    return corners[0] if narrowest[0] >= SIDE_ON else corners[int(np.argmax(narrowest >= narrowest.max() - TIE))]


class Scene:
    def __init__(self, plotter: pv.BasePlotter, request_render: Callable[[], None] | None = None) -> None:
        """`request_render`: how to get a frame drawn after a change (default: render now)."""
        self.plotter = plotter
        self.request_render = request_render or plotter.render
        self.mech: Mechanism | None = None
        self.actors: dict[str, list] = {}  # body label -> actors moving with that body
        self.colors: dict[int, str] = {}  # id(actor) -> its own colour
        self.keys: dict[int, tuple] = {}  # id(actor) -> tree key, for picking
        self.selected: tuple | None = None
        self.size = 0.1  # the mechanism's extent when last built (m): glyph sizes follow it
        self.floor = None  # the floor's actor, under the moving bodies
        self.ground_axes = None  # the world's axes glyph at its origin
        self.contact_actors: list = []  # the contacts' and contact pairs' shapes
        self.contacts_shown = True  # View › Contact Shapes
        self.forces = np.zeros((0, 3))  # the force arrows drawn (world axes): the isometric preset sees them side-on
        self.problems: list[str] = []  # what could not be drawn as the model asks, for the status bar
        plotter.set_background(BACKGROUND[0], top=BACKGROUND[1])
        # Multisampling multiplies the fragment work: with software OpenGL (llvmpipe) a frame of the SLA
        # sample at 728x482 took 38 ms with 4 samples, 28 ms with FXAA (one pass over the image, edges
        # nearly as smooth) and 16 ms with neither. Set on VTK directly: pyvista's enable_anti_aliasing swaps
        # FXAA for 4x supersampling on EGL builds, where FXAA draws correctly too.
        plotter.ren_win.SetMultiSamples(0)
        plotter.renderer.SetUseFXAA(True)

    # ------------------------------------------------------------------ building
    def build(self, mech: Mechanism, q: np.ndarray, folder: str | os.PathLike | None = None) -> None:
        """Draw `mech` at coordinates q. `folder`: where relative mesh-file names are found (the model
        file's folder; None: the current folder). A mesh that cannot be read is drawn from the body's
        points instead and named in `problems` and in the view."""
        self.plotter.clear_actors()
        self.mech, self.actors, self.colors, self.keys, self.problems = mech, {}, {}, {}, []
        self.contact_actors, self.forces = [], np.zeros((0, 3))  # the arrows are drawn again by the overlays
        size = self.size = mechanism_size(mech, q)
        geometry = mech.tree.geometry
        meshes = {
            label: self._body_meshes(mech, label, size, folder) for label in mech.tree.body_labels if label != GROUND
        }
        thinnest = {id(m): _thinnest(m) for ms in meshes.values() for m in ms}
        typical = float(np.median(list(thinnest.values()))) if thinnest else 0.0
        for i, label in enumerate(mech.tree.body_labels):
            body = mech.model.body(label)
            color = (body.shape or {}).get("color", PALETTE[(i - 1) % len(PALETTE)])
            for mesh in meshes.get(label, []):
                see_through = thinnest[id(mesh)] > BULKY * typical
                self._add(label, mesh, color, body_item(label), opacity=0.35 if see_through else 1.0)
            self._add(label, _axes_mesh(size * (0.12 if label == GROUND else 0.06)), None, None)
            if label == GROUND:
                self.ground_axes = self.actors[label][-1]
            if body.points:
                cloud = pv.PolyData(np.array([geometry.point(body, n) for n in body.points], float))
                self._add(label, cloud, JOINT_COLOR, body_item(label), point_size=7, render_points_as_spheres=True)
        cut = {j.name for j in mech.topology.cut}
        for joint in mech.model.joints:
            glyph = _joint_glyph(joint.type, 0.018 * size)
            if glyph is not None:
                frame = geometry.frame(mech.model.body(joint.parent), joint.parent_frame)
                glyph = glyph.transform(_matrix(frame.rotation, frame.origin), inplace=False)
                self._add(
                    body_key(joint.parent),
                    glyph,
                    CUT_JOINT_COLOR if joint.name in cut else JOINT_COLOR,
                    ("joint", joint.name),
                )
        for bushing in (e for e in mech.model.forces if e.type == "bushing"):
            self._add_bushing(mech, bushing, 0.018 * size)
        for element in mech.model.forces:
            for label, mesh in contact_meshes(mech, element):
                self._add(label, mesh, CONTACT_COLOR, ("force", element.name), opacity=0.6)
                self.contact_actors.append(self.actors[label][-1])
                self.contact_actors[-1].SetVisibility(self.contacts_shown)
        self._place(q)
        self._add_ground(size)
        self._colour(self.selected)
        if self.problems:
            self.plotter.add_text(
                "\n".join(self.problems), position="lower_left", font_size=9, color=PROBLEM_COLOR, name="problems"
            )
        self.plotter.reset_camera(render=False)
        self.request_render()

    def _add_bushing(self, mech: Mechanism, bushing, r: float) -> None:
        """A bushing's glyph: a rubber sleeve on frame B's body around a pin on frame A's, both along the frames'
        z axes, so that the pin shows off-centre and tilted in the sleeve as the bushing deflects."""
        geometry, key = mech.tree.geometry, ("force", bushing.name)
        parts = ((bushing.body1, bushing.frame1, 0.6 * r, 4.5 * r), (bushing.body2, bushing.frame2, 1.7 * r, 2.5 * r))
        for label, name, radius, height in parts:
            frame = geometry.frame(mech.model.body(label), name)
            glyph = _cylinder(direction=(0, 0, 1), radius=radius, height=height)
            glyph = glyph.transform(_matrix(frame.rotation, frame.origin), inplace=False)
            self._add(body_key(label), glyph, BUSHING_COLOR, key, opacity=0.8 if radius > r else 1.0)

    def _add(self, label: str, mesh: pv.PolyData, color: str | None, key: tuple | None, **kwargs) -> None:
        if color is None:
            actor = self.plotter.add_mesh(
                mesh, scalars="rgb", rgb=True, line_width=3, pickable=False, reset_camera=False, render=False
            )
        else:
            actor = self.plotter.add_mesh(
                mesh,
                color=color,
                smooth_shading=True,
                pickable=key is not None,
                reset_camera=False,
                render=False,
                **kwargs,
            )
            self.colors[id(actor)] = color
        self.actors.setdefault(label, []).append(actor)
        if key is not None:
            self.keys[id(actor)] = key

    def _body_meshes(self, mech: Mechanism, label: str, size: float, folder) -> list[pv.PolyData]:
        body, geometry = mech.model.body(label), mech.tree.geometry
        if not body.shape:
            return self._links(mech, label, 0.008 * size)
        if body.shape["type"] != "mesh":
            return [self._shape(body.shape, body, geometry)]
        mesh = self._mesh_file(label, body.shape, folder)
        if mesh is None:
            return self._links(mech, label, 0.008 * size)
        if "scale" in body.shape:
            mesh = mesh.scale(np.asarray(geometry.vector(body.shape["scale"]), float), inplace=False)
        return [mesh.transform(_placement(body.shape, body, geometry), inplace=False)]

    def _mesh_file(self, label: str, shape: dict, folder) -> pv.PolyData | None:
        """The shape's mesh file in its own coordinates, or None after noting why not."""
        path = Path(shape["file"]).expanduser()
        if folder is not None and not path.is_absolute():
            path = Path(folder) / path
        mesh, problem = _read_mesh(path)
        if problem:
            formats = f"{', '.join(MESH_FORMATS[:-1])} or {MESH_FORMATS[-1]}"
            self.problems.append(
                f"body '{label}': mesh file {path} {problem}, so the body is drawn from its "
                f"points; a mesh shape needs a {formats} file"
            )
            return None
        return mesh

    @staticmethod
    def _shape(shape: dict, body, geometry) -> pv.PolyData:
        kind = shape["type"]
        if kind == "box":
            a, b, c = np.asarray(geometry.vector(shape["size"]), float)
            box = pv.Cube(x_length=a, y_length=b, z_length=c)
            return box.transform(_placement(shape, body, geometry), inplace=False)
        origin = _placement(shape, body, geometry)[:3, 3]
        if kind == "cylinder":
            axis = np.asarray(geometry.vector(shape.get("axis", [0, 0, 1])), float)
            return pv.Cylinder(
                center=origin,
                direction=axis,
                radius=float(geometry.value(shape["radius"])),
                height=float(geometry.value(shape["length"])),
                resolution=64,
            )
        return pv.Sphere(center=origin, radius=float(geometry.value(shape["radius"])))

    @staticmethod
    def _links(mech: Mechanism, label: str, radius: float) -> list[pv.PolyData]:
        """Cylinders from the body's first joint point to its other joint points and named points."""
        body, geometry = mech.model.body(label), mech.tree.geometry
        anchors = [
            geometry.frame(body, getattr(j, f"{side}_frame")).origin
            for j in mech.model.joints
            for side in ("parent", "child")
            if body_key(getattr(j, side)) == label
        ]
        anchors += [geometry.point(body, n) for n in body.points]
        anchors = [np.asarray(a, float) for a in anchors]
        links = [
            _cylinder(
                center=(a + anchors[0]) / 2,
                direction=a - anchors[0],
                radius=radius,
                height=float(np.linalg.norm(a - anchors[0])),
            )
            for a in anchors[1:]
            if np.linalg.norm(a - anchors[0]) > 1e-9
        ]
        return links or [pv.Sphere(radius=2 * radius)]

    def _moving_extent(self) -> tuple[np.ndarray, np.ndarray]:
        """The lowest and highest world corner (3,) of the moving bodies' actors as placed now, shapes included."""
        bounds = np.array(
            [a.GetBounds() for label, actors in self.actors.items() if label != GROUND for a in actors]
            or [(-0.5, 0.5, -0.5, 0.5, 0.0, 0.0)],
            float,
        )
        return bounds[:, ::2].min(axis=0), bounds[:, 1::2].max(axis=0)

    def _contact_plane(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The plane the first ground contact presses on (its origin and unit normal, world axes), or None."""
        contact = next((f for f in self.mech.model.forces if f.type == "contact" and f.against is None), None)
        if contact is None:
            return None
        geometry = self.mech.tree.geometry
        normal = np.asarray(geometry.vector(contact.plane_normal), float)
        return np.asarray(geometry.vector(contact.plane_origin), float), normal / np.linalg.norm(normal)

    def _add_ground(self, size: float, extent: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """A floor under the moving bodies (their drawn extent, shapes included) as placed now, or over `extent`
        (lowest and highest corners): the ground contacts' plane (an incline drawn as one, under the feet that
        press on it), else a level floor just under the bodies."""
        low, high = extent or self._moving_extent()
        centre = np.array([(low[0] + high[0]) / 2, (low[1] + high[1]) / 2, low[2] - 0.02 * size])
        span = max(high[0] - low[0], high[1] - low[1], 0.5 * size) * 1.3
        normal, contacts = (0.0, 0.0, 1.0), self._contact_plane()
        if contacts is not None:
            origin, normal = contacts
            centre -= ((centre - origin) @ normal) * normal
            span /= max(abs(normal[2]), 0.5)  # a tilted plane spans more than its level shadow
        plane = pv.Plane(center=centre, direction=normal, i_size=span, j_size=span, i_resolution=10, j_resolution=10)
        self.floor = self.plotter.add_mesh(
            plane,
            color="#b8c2cc",
            show_edges=True,
            edge_color="#98a4b0",
            opacity=0.5,
            pickable=False,
            reset_camera=False,
            render=False,
        )
        self.actors.setdefault(GROUND, []).append(self.floor)

    def cover(self, poses: np.ndarray, q: np.ndarray) -> bool:
        """Keep a motion in view: where the bodies at the coordinates `poses` (K, n; a run's frames) leave the
        floor drawn, the floor grows to lie under all of them and the camera is fitted to their extent (a walking
        robot stays on its floor and in the picture); then the pose q is shown again. True when it grew."""
        corners = []
        for pose in np.asarray(poses, float):
            self._place(pose)
            corners += self._moving_extent()
        self._place(q)
        low, high = np.min(corners, axis=0), np.max(corners, axis=0)
        floor = np.asarray(self.floor.GetBounds(), float)
        if low[0] >= floor[0] and low[1] >= floor[2] and high[0] <= floor[1] and high[1] <= floor[3]:
            self.request_render()
            return False
        self.plotter.remove_actor(self.floor, render=False)
        self.actors[GROUND].remove(self.floor)
        self._add_ground(self.size, (low, high))
        self.plotter.reset_camera(render=False, bounds=[*np.column_stack([low, high]).ravel()])
        self.request_render()
        return True

    def show_contacts(self, on: bool) -> int:
        """Show or hide the shapes of every contact and contact pair (kept for the next builds); how many."""
        self.contacts_shown = on
        for actor in self.contact_actors:
            actor.SetVisibility(on)
        self.request_render()
        return len(self.contact_actors)

    # ------------------------------------------------------------------ updating
    def set_pose(self, q: np.ndarray) -> None:
        """Move every body's actors to its pose for coordinates q (n,): no mesh is rebuilt."""
        self._place(q)
        self.request_render()

    def _place(self, q: np.ndarray) -> None:
        for label, (rotation, origin) in self.mech.poses(q).items():
            matrix = _matrix(rotation[0], origin[0])
            for actor in self.actors.get(label, []):
                actor.user_matrix = matrix

    def matrix(self, label: str) -> np.ndarray:
        """The user matrix of a body's actors (for tests and picking)."""
        return np.array(self.actors[label][0].user_matrix)

    def key_of(self, actor) -> tuple | None:
        return self.keys.get(id(actor))

    def highlight(self, key: tuple | None) -> None:
        """Colour the body or joint an item of the tree belongs to."""
        self._colour(key)
        self.request_render()

    def _colour(self, key: tuple | None) -> None:
        self.selected = key
        targets = _drawn_items(key)
        for actors in self.actors.values():
            for actor in actors:
                if id(actor) in self.colors:
                    chosen = self.keys.get(id(actor)) in targets
                    actor.prop.color = HIGHLIGHT if chosen else self.colors[id(actor)]

    # ------------------------------------------------------------------ camera
    def camera(self, preset: str) -> None:
        """Look along a world axis, z up: front (along +x, onto the y-z plane), side (along -y, onto x-z),
        top (down z, x to the right and y up), or isometric (from +x, -y, +z: a left-hand corner is seen
        from inboard; from another upper corner when force arrows shown point near that line, isometric_corner);
        or "contacts", low from the right (CONTACTS_VIEW); then fit."""
        directions = {"front": (1, 0, 0), "side": (0, -1, 0), "top": (0, 0, 1), "contacts": CONTACTS_VIEW}
        directions["isometric"] = isometric_corner(self.forces)
        up = (0, 1, 0) if preset == "top" else (0, 0, 1)  # top: x to the right, y up, as on a drawing
        self.plotter.view_vector(directions[preset], viewup=up, render=False)
        self.fit()

    def fit(self) -> None:
        """Fit the camera to what is drawn but the floor: the floor lies under a whole run's motion, and fitting
        it too made a walking robot a speck in its middle; it stays drawn, its far parts out of the picture. With
        ground contacts the world's axes are left out too: a block that slid down an incline sat in a corner of a
        picture framing them and it."""
        grounded = self.mech is not None and self._contact_plane() is not None
        left_out = [self.floor] + ([self.ground_axes] if grounded else [])
        left_out = [actor for actor in left_out if actor is not None and actor.GetVisibility()]
        for actor in left_out:
            actor.SetVisibility(False)  # the fit takes the visible props' bounds
        self.plotter.reset_camera(render=False)
        for actor in left_out:
            actor.SetVisibility(True)
        self.plotter.renderer.ResetCameraClippingRange()  # the floor's near and far parts drawn, not clipped
        self.request_render()

    def viewport(self, points: np.ndarray) -> np.ndarray:
        """Where world points (k, 3) appear in the view: (k, 2) normalised coordinates, -1 to 1 across and up it."""
        camera, renderer = self.plotter.camera, self.plotter.renderer
        matrix = camera.GetCompositeProjectionTransformMatrix(renderer.GetTiledAspectRatio(), -1, 1)
        m = np.array([[matrix.GetElement(i, j) for j in range(4)] for i in range(4)])
        h = np.column_stack([np.asarray(points, float), np.ones(len(points))]) @ m.T
        return h[:, :2] / h[:, 3:]

    def keep_in_view(self) -> bool:
        """Where a moving body leaves the view (an animation's or the time cursor's frame: a block sliding down an
        incline, a robot walking off), move the camera along with them, its direction and distance kept, to centre
        them, and fit when they still do not fit; True when the camera moved."""
        low, high = self._moving_extent()
        corners = np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1]) for z in (low[2], high[2])])
        if np.abs(self.viewport(corners)).max() <= 1.0:
            return False
        camera = self.plotter.camera
        offset = np.array(camera.position, float) - np.array(camera.focal_point, float)
        centre = (low + high) / 2
        camera.focal_point, camera.position = centre, centre + offset
        if np.abs(self.viewport(corners)).max() > 1.0:
            self.fit()
        self.plotter.renderer.ResetCameraClippingRange()
        self.request_render()
        return True
