"""A robot from URDF as an MB Studio document.

    result = import_urdf("ur5.urdf", package_paths=["~/ros/src"])
    result.model      # a validated Model: one body per link, one joint per URDF joint
    result.notes      # what the document changed or could not keep, each naming its link or joint

The file is read strictly first (urdf_input.py: well-formed XML, each link and joint name once, finite numbers),
then parsed by yourdfpy (its defaults and checks are theirs, not ours). Each link becomes a body whose frame is
the link frame, each URDF joint a joint of ours: revolute and continuous -> revolute, prismatic -> prismatic,
fixed -> fixed, floating -> free, with the parent joint frame at the URDF joint's origin and its z axis along the
joint axis, the child joint frame at the child link's origin, so both frames coincide
at q = 0 as in URDF. Inertials are moved to the link origin (our ten parameters) as the file gives them; the
first visual becomes the body's shape with its material's colour, and `package://NAME/...` meshes are looked up
in the given folders, then in ROS_PACKAGE_PATH, then in the ROS packages (folders with a package.xml) above the
URDF file; a mesh is read only from inside the package it names, the URDF's folder or a given folder (never
`/etc/passwd`, `../../..`).

The root link floats by default: a body on a free joint `root_joint` from the ground, as Pinocchio's
buildModelFromUrdf(path, JointModelFreeFlyer()) places it; its six coordinates are the root link origin's
position and rotation parameters in the world (docs/file-format.md). A root link named `world` is the ground
(the ROS way of fixing a robot), and so is any root with `floating_base=False`, on which a root carrying mass or
a visual is a body welded to the ground. A mimic joint becomes a coupling (follower = multiplier · leader +
offset). Names that are not identifiers of ours are changed, and the file's own name is kept in the body's or
joint's `source_name`, which the URDF export writes back.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import __version__
from ..model import GROUND, Body, Coordinate, Frame, Joint, Model, ModelError, validate
from ..model.document import INERTIA_NAMES, JointFriction
from ..model.validation import inertia_problem
from . import urdf_angles
from .collision_geometry import Collision, add_ground, floats_freely
from .couplings import add_coupling
from .import_names import SymbolNames, clean, inertia_parameters, one_line, reference_direction
from .urdf_input import MeshPlaces, check_urdf

FREE = ("x", "y", "z", "rx", "ry", "rz")  # a free joint's coordinates: position, rotation parameters
ROOT_JOINT = "root_joint"  # Pinocchio's name for the free flyer it adds
WORLD = "world"  # the root link that is the ground
JOINT_TYPES = {
    "revolute": "revolute",
    "continuous": "revolute",
    "prismatic": "prismatic",
    "fixed": "fixed",
    "floating": "free",
}
REFUSED_TYPES = {
    "planar": "MB Studio's planar joint moves in the x-y plane of its frame with the rotation last, which a "
    "URDF planar joint does not define",
}


@dataclass
class UrdfImport:
    model: Model
    notes: list[str] = field(default_factory=list)


def import_urdf(
    path: str | os.PathLike,
    package_paths: list[str | os.PathLike] = (),
    *,
    floating_base: bool = True,
    repair_inertias: bool = False,
    snap_angles: bool = False,
    ground: bool = True,
) -> UrdfImport:
    """The robot in the URDF file `path`; ModelError (naming the file, the link or joint) for what cannot be
    read or has no MB Studio equivalent. `floating_base=False` welds a root link to the ground;
    `repair_inertias` replaces inertias no rigid body can have by the nearest possible ones (kept by default);
    `snap_angles` makes a joint origin's rpy angles within 1e-5 of a multiple of π/4 exact (`urdf_angles`);
    `ground=False` leaves out the ground plane and contacts a floating robot gets from its `<collision>` geometry
    (collision_geometry.py)."""
    path = Path(path)
    robot = _parse(path)
    options = _Options(floating_base, repair_inertias, snap_angles, ground)
    return _Importer(robot, path, MeshPlaces.around(path, package_paths), options).run()


@dataclass(frozen=True)
class _Options:
    floating_base: bool = True
    repair_inertias: bool = False
    snap_angles: bool = False
    ground: bool = True


def _parse(path: Path):
    try:
        import yourdfpy
    except ImportError:
        raise ModelError(
            str(path),
            "cannot be imported: the URDF reader is not installed",
            expected='pip install "mbstudio[urdf]" (or yourdfpy)',
        ) from None
    if not path.is_file():
        raise ModelError(str(path), "does not exist", expected="a URDF file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(str(path), f"cannot be read: {exc.strerror or exc}") from None
    check_urdf(data, path)
    try:  # the bytes checked, not the file again: it may have changed since
        urdf = yourdfpy.URDF.load(
            io.BytesIO(data), build_scene_graph=False, load_meshes=False, build_collision_scene_graph=False
        )
    except Exception as exc:  # yourdfpy fails in its own ways on a well-formed file it cannot take
        raise ModelError(
            str(path), f"is not a readable URDF ({type(exc).__name__}: {exc})", expected="a URDF robot description"
        ) from None
    return urdf.robot


def _transform(origin) -> np.ndarray:
    return np.eye(4) if origin is None else np.asarray(origin, float)


class _Importer:
    def __init__(self, robot, path: Path, places: MeshPlaces, options: _Options) -> None:
        self.robot, self.path, self.places, self.options = robot, path, places, options
        self.notes: list[str] = []
        self.names = SymbolNames()
        self.coordinate_of: dict[str, str] = {}  # URDF joint name -> our coordinate (one-axis joints)
        self.labels: dict[str, str] = {}  # URDF link name -> body label (GROUND for a root that is the ground)
        self.materials = {m.name: m for m in robot.materials if m.name}
        self.impossible: list[str] = []  # links whose inertia no rigid body can have, kept as written
        self.rounded: list[str] = []  # joints whose origin angles are a rounding of multiples of π/4
        self.collisions: list[Collision] = []

    def run(self) -> UrdfImport:
        links = {link.name: link for link in self.robot.links}
        children: dict[str, list] = {name: [] for name in links}
        parent_joint: dict[str, object] = {}
        for joint in self.robot.joints:
            self._check_joint(joint, links, parent_joint)
            children[joint.parent].append(joint)
            parent_joint[joint.child] = joint
        roots = [name for name in links if name not in parent_joint]
        if len(roots) != 1:
            raise ModelError(
                str(self.path), "has no single root link", roots, "one link that is no joint's child (a tree)"
            )
        model = Model(name=one_line(self.robot.name or self.path.stem))
        model.gravity = [0.0, 0.0, -9.81]
        self._add_root(model, links[roots[0]])
        stack = list(reversed(children[roots[0]]))
        while stack:  # depth first, so every joint comes after the joint that places its parent
            joint = stack.pop()
            self._add_link(model, links[joint.child])
            self._add_joint(model, joint)
            stack += reversed(children[joint.child])
        for joint in self.robot.joints:  # once every joint is there: a mimic may name a joint after it
            if joint.mimic is not None:
                self._mimic(model, joint)
        model.description = self._description()
        try:
            validate(model)
        except ModelError as exc:
            raise ModelError(f"{self.path}: {exc.where}", exc.problem, exc.value, exc.expected) from None
        if self.options.ground and floats_freely(model):
            add_ground(model, self.collisions, self.names, self.notes)
            validate(model)
        if self.impossible:
            self.notes.append(_definiteness(model))
        if self.rounded:
            self.notes.append(self._rounded_note())
        return UrdfImport(model, self.notes)

    def _check_joint(self, joint, links, parent_joint) -> None:
        where = f"{self.path}: joint '{joint.name}'"
        if joint.type in REFUSED_TYPES:
            raise ModelError(where, f"is {joint.type}: {REFUSED_TYPES[joint.type]}", joint.type, _accepted())
        if joint.type not in JOINT_TYPES:
            raise ModelError(where, "has an unknown type", joint.type, _accepted())
        for end in (joint.parent, joint.child):
            if end not in links:
                raise ModelError(where, "names a link the file does not define", end, ", ".join(links))
        if joint.child in parent_joint:
            raise ModelError(
                where,
                f"gives link '{joint.child}' a second parent (joint '{parent_joint[joint.child].name}'): URDF "
                "describes trees only; import the tree, then close the loop in the window (docs/urdf.md)",
                joint.child,
                "each link the child of at most one joint",
            )

    # ------------------------------------------------------------------ bodies

    def _add_root(self, model: Model, link) -> None:
        if self.options.floating_base and link.name != WORLD:
            self._add_link(model, link)
            name = self.names.joint(ROOT_JOINT)
            coordinates = [Coordinate(self.names.coordinate(f"{name}_{c}"), 0.0) for c in FREE]
            model.joints.append(Joint(name, "free", GROUND, self.labels[link.name], Frame(), Frame(), coordinates))
            self.notes.append(
                f"root link '{link.name}' floats on the free joint '{name}' (position and rotation parameters of "
                "its origin in the world; --fixed-base welds it to the ground)"
            )
            return
        carries = (link.inertial is not None and link.inertial.mass > 0) or any(v.geometry for v in link.visuals)
        if not carries:
            self.labels[link.name] = GROUND
            return
        self._add_link(model, link)
        name = self.names.joint(f"{link.name}_to_ground")
        model.joints.append(Joint(name, "fixed", GROUND, self.labels[link.name], Frame(), Frame()))
        self.notes.append(
            f"root link '{link.name}' carries mass or a visual, so it is a body welded to the ground (joint '{name}')"
        )

    def _add_link(self, model: Model, link) -> None:
        label = self.names.label(link.name)
        self.labels[link.name] = label
        body = Body(label, one_line(link.name), self._inertia(link), source_name=_changed(link.name, label))
        body.shape = self._shape(link)
        model.bodies.append(body)
        self.collisions += [self._collision(label, link.name, c) for c in link.collisions if c.geometry is not None]

    def _collision(self, label: str, link_name: str, collision) -> Collision:
        """A `<collision>` element as geometry of the body (a mesh's vertices read when its file is found)."""
        geometry, pose, where = collision.geometry, _transform(collision.origin), f"link '{link_name}'"
        if geometry.sphere is not None:
            return Collision(label, "sphere", pose, (float(geometry.sphere.radius),), where=where)
        if geometry.box is not None:
            return Collision(label, "box", pose, tuple(np.asarray(geometry.box.size, float) / 2), where=where)
        if geometry.cylinder is not None:
            size = (float(geometry.cylinder.radius), float(geometry.cylinder.length) / 2)
            return Collision(label, "cylinder", pose, size, where=where)
        vertices = None
        if geometry.mesh is not None:
            found = self.places.resolve(geometry.mesh.filename)[0]
            vertices = None if found is None else _mesh_vertices(found, geometry.mesh.scale)
        return Collision(label, "mesh", pose, vertices=vertices, where=f"the mesh of {where}")

    def _inertia(self, link) -> dict[str, float]:
        """URDF's mass, centre of mass and inertia about it (in the inertial frame) -> our ten parameters about
        the link origin in link axes. A massless link keeps its rotational inertia, as Pinocchio keeps it. An
        inertia no rigid body can have is kept as written, with a note, or with `repair_inertias` replaced by
        the nearest possible one (`_possible`)."""
        inertial = link.inertial
        if inertial is None:
            return dict.fromkeys(INERTIA_NAMES, 0.0)
        m = float(inertial.mass or 0.0)
        pose = _transform(inertial.origin)
        rotation, c = pose[:3, :3], pose[:3, 3]
        tensor = np.asarray(inertial.inertia if inertial.inertia is not None else np.zeros((3, 3)), float)
        tensor = rotation @ ((tensor + tensor.T) / 2) @ rotation.T
        problem = inertia_problem(tensor, max(float(np.abs(tensor).max()), 1e-300))
        if problem and self.options.repair_inertias:
            tensor, changed = _possible(tensor)
            self.notes.append(f"link '{link.name}': its inertia is not one a rigid body can have, so {changed}")
        elif problem:
            self.impossible.append(link.name)
            self.notes.append(
                f"link '{link.name}': its inertia is not one a rigid body can have ({problem}); kept as written, as "
                "Pinocchio reads it (--repair-inertias replaces it by the nearest possible one)"
            )
        return dict(zip(INERTIA_NAMES, inertia_parameters(m, c, tensor), strict=True))

    def _shape(self, link) -> dict | None:
        visuals = [v for v in link.visuals if v.geometry is not None]
        if not visuals:
            return None
        if len(visuals) > 1:
            self.notes.append(f"link '{link.name}': {len(visuals)} visuals, the first is drawn")
        visual = visuals[0]
        pose = _transform(visual.origin)
        shape = _geometry_shape(visual.geometry, pose)
        if shape is None:
            self.notes.append(f"link '{link.name}': its visual has no geometry MB Studio draws")
            return None
        if shape["type"] == "mesh":
            found = self._mesh_path(link.name, visual.geometry.mesh.filename)
            if found is None:
                return None
            shape["file"] = found
        colour = self._colour(visual.material)
        if colour:
            shape["color"] = colour
        return shape

    def _mesh_path(self, link_name: str, filename: str) -> str | None:
        """The mesh file, or None with a note when it is not found, or lies outside the places a URDF's meshes
        may be read from (its folder, its package, the package folders)."""
        found, outside = self.places.resolve(filename)
        if found is None:
            where = "is outside the URDF's folder and the package folders" if outside else "not found"
            self.notes.append(
                f"link '{link_name}': mesh {filename} {where} (searched the package folders given, ROS_PACKAGE_PATH "
                "and the ROS packages above the URDF file); the body is drawn from its points"
            )
            return None
        return str(found)

    def _colour(self, material) -> str | None:
        if material is None:
            return None
        if material.color is None and material.name in self.materials:
            material = self.materials[material.name]
        if material.color is None:
            return None
        rgb = np.clip(np.asarray(material.color.rgba, float)[:3], 0, 1)
        return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)

    # ------------------------------------------------------------------ joints

    def _rounded_angles(self, joint: str, origin: np.ndarray) -> np.ndarray:
        """The joint origin, its angles within 1e-5 of a multiple of π/4 recorded for the note and, with
        `snap_angles`, made exact."""
        rounded = urdf_angles.rounded_angles(origin[:3, :3])
        if not rounded:
            return origin
        self.rounded.append(f"'{joint}' ({', '.join(a.text() for a in rounded)})")
        if not self.options.snap_angles:
            return origin
        out = origin.copy()
        out[:3, :3] = urdf_angles.snapped(origin[:3, :3])
        return out

    def _rounded_note(self) -> str:
        done = (
            "made exact (--snap-angles)"
            if self.options.snap_angles
            else "left unchanged (--snap-angles makes them exact)"
        )
        return (
            f"joint origin angles within {urdf_angles.SNAP_TOLERANCE:g} rad of a multiple of π/4, {done}: "
            + "; ".join(self.rounded)
        )

    def _add_joint(self, model: Model, urdf_joint) -> None:
        kind = JOINT_TYPES[urdf_joint.type]
        origin = self._rounded_angles(urdf_joint.name, _transform(urdf_joint.origin))
        parent, child = self.labels[urdf_joint.parent], self.labels[urdf_joint.child]
        name = self.names.joint(urdf_joint.name)
        if kind == "free":  # the child link's origin and rotation parameters in the joint origin's axes
            parent_frame = Frame(clean(origin[:3, 3]), clean(origin[:3, 2]), clean(origin[:3, 0]))
            coordinates = [Coordinate(self.names.coordinate(f"{name}_{c}"), 0.0) for c in FREE]
            model.joints.append(Joint(name, kind, parent, child, parent_frame, Frame(), coordinates,
                                      source_name=_changed(urdf_joint.name, name)))  # fmt: skip
            return
        axis = np.asarray(urdf_joint.axis if urdf_joint.axis is not None else [1.0, 0.0, 0.0], float)
        if kind != "fixed" and not np.linalg.norm(axis) > 0:
            raise ModelError(f"{self.path}: joint '{urdf_joint.name}'.axis", "is zero", list(axis), "a direction")
        axis = axis / np.linalg.norm(axis) if kind != "fixed" else np.array([0.0, 0.0, 1.0])
        x = reference_direction(axis)
        rotation = origin[:3, :3]
        parent_frame = Frame(clean(origin[:3, 3]), clean(rotation @ axis), clean(rotation @ x))
        child_frame = Frame([0.0, 0.0, 0.0], clean(axis), clean(x))
        coordinates = [] if kind == "fixed" else [self._coordinate(urdf_joint)]
        written = coordinates[0].name if coordinates else name  # the name the URDF export gives this joint
        model.joints.append(Joint(name, kind, parent, child, parent_frame, child_frame, coordinates,
                                  source_name=_changed(urdf_joint.name, written)))  # fmt: skip
        if coordinates:
            self.coordinate_of[urdf_joint.name] = coordinates[0].name
            self._friction(model, urdf_joint, coordinates[0].name)

    def _mimic(self, model: Model, urdf_joint) -> None:
        """A mimic joint: a coupling follower = multiplier · leader + offset (io/couplings.py), the follower's
        initial value on it."""
        mimic = urdf_joint.mimic
        follower, leader = self.coordinate_of.get(urdf_joint.name), self.coordinate_of.get(mimic.joint)
        if follower is None or leader is None:
            self.notes.append(f"joint '{urdf_joint.name}' mimics '{mimic.joint}', but only a revolute, continuous "
                              "or prismatic joint can mimic another: imported as a joint of its own")  # fmt: skip
            return
        ratio = 1.0 if mimic.multiplier is None else float(mimic.multiplier)
        offset = 0.0 if mimic.offset is None else float(mimic.offset)
        add_coupling(model, self.names, f"{urdf_joint.name}_mimic", follower, leader, [offset, ratio])
        coordinates = {c.name: c for j in model.joints for c in j.coordinates}
        coordinates[follower].initial = offset + ratio * float(coordinates[leader].initial)

    def _coordinate(self, urdf_joint) -> Coordinate:
        name = self.names.coordinate(urdf_joint.name)
        limit = urdf_joint.limit
        if urdf_joint.type == "continuous" or limit is None or limit.lower is None or limit.upper is None:
            return Coordinate(name, 0.0)
        low, high = float(limit.lower), float(limit.upper)
        if low > high:
            raise ModelError(
                f"{self.path}: joint '{urdf_joint.name}'.limit", "has lower above upper", [low, high], "lower <= upper"
            )
        margin = 0.1 * (high - low)  # URDF's zero, unless it sits at a limit, where no path could excite it
        return Coordinate(name, float(np.clip(0.0, low + margin, high - margin)), low, high)

    def _friction(self, model: Model, urdf_joint, coordinate: str) -> None:
        dynamics = urdf_joint.dynamics
        if dynamics is None:
            return
        damping, friction = float(dynamics.damping or 0.0), float(dynamics.friction or 0.0)
        if damping <= 0 and friction <= 0:
            return
        name = self.names.element(f"{coordinate}_friction")
        model.forces.append(JointFriction(name, coordinate, viscous=max(damping, 0.0), coulomb=max(friction, 0.0)))

    def _description(self) -> str:
        text = f"Imported from the URDF file {self.path.name} (robot '{self.robot.name}') by MB Studio {__version__}."
        return text + "".join(f" {note}." for note in self.notes)


def _accepted() -> str:
    return "revolute, continuous, prismatic, fixed or floating"


def _changed(original: str, ours: str) -> str | None:
    """The file's name where ours differs from it (kept as `source_name`, for the export to write back)."""
    return None if original == ours else original


def _definiteness(model: Model) -> str:
    """What the mass matrix is at the document's pose with the impossible inertias kept: positive definite (what
    forward dynamics and simulation need; inverse dynamics and the base parameters hold in any case), singular to
    rounding (a coordinate that moves no inertia: whatever the inertias), or indefinite (theirs)."""
    from ..dynamics.mass_matrix import mass_matrix
    from ..kinematics import Mechanism

    mech = Mechanism(model)
    values = np.linalg.eigvalsh(np.asarray(mass_matrix(mech, mech.tree.initial_coordinates()[None])[0], float))
    smallest, rounding = values[0], 1e-12 * max(values[-1], 1e-300)  # beyond n eps of the largest
    if smallest > rounding:
        verdict = "is positive definite: forward dynamics and simulation run"
    elif smallest >= -rounding:
        verdict = "is singular to rounding: a coordinate moves no inertia there, whatever the inertias"
    else:
        verdict = (
            "is not positive definite: the impossible inertias give some motion a negative kinetic energy, and a "
            "simulation refuses to start; --repair-inertias makes them possible"
        )
    pose = f"the mass matrix at the document's pose (smallest eigenvalue {smallest:.3g})"
    return f"with the impossible inertias kept, {pose} {verdict}"


def _possible(tensor: np.ndarray) -> tuple[np.ndarray, str]:
    """The nearest centroidal inertia a body can have, and what changed: negative principal moments raised to
    zero, and the two smaller ones raised by half the deficit each where the largest exceeds their sum (the
    triangle inequality)."""
    moments, axes = np.linalg.eigh(tensor)
    fixed = np.maximum(moments, 0.0)
    deficit = fixed[2] - fixed[0] - fixed[1]
    if deficit > 0:
        fixed[:2] += deficit / 2
    changed = f"principal moments {_rounded(moments)} -> {_rounded(fixed)} kg m^2 (--repair-inertias)"
    return axes @ np.diag(fixed) @ axes.T, changed


def _rounded(values) -> list[float]:
    return [float(f"{v:.6g}") for v in values]


def _mesh_vertices(path, scale) -> np.ndarray | None:
    """A mesh file's vertices (N, 3), scaled; None when it cannot be read."""
    try:
        import trimesh

        vertices = np.asarray(trimesh.load(str(path), force="mesh").vertices, float)
    except Exception:  # a mesh trimesh cannot read gets no contact, named in the import's notes
        return None
    return vertices * (1.0 if scale is None else np.broadcast_to(np.asarray(scale, float), (3,)))


def _geometry_shape(geometry, pose: np.ndarray) -> dict | None:
    origin, rotation = clean(pose[:3, 3]), pose[:3, :3]
    oriented = {"origin": origin, "z": clean(rotation[:, 2]), "x": clean(rotation[:, 0])}
    if geometry.box is not None:
        return {"type": "box", "size": clean(geometry.box.size), **oriented}
    if geometry.cylinder is not None:
        c = geometry.cylinder
        return {"type": "cylinder", "radius": float(c.radius), "length": float(c.length), "axis": oriented["z"],
                "origin": origin}  # fmt: skip
    if geometry.sphere is not None:
        return {"type": "sphere", "radius": float(geometry.sphere.radius), "origin": origin}
    if geometry.mesh is not None:
        scale = geometry.mesh.scale
        shape = {"type": "mesh", "file": geometry.mesh.filename, **oriented}
        if scale is not None:
            shape["scale"] = clean(np.broadcast_to(np.asarray(scale, float), (3,)))
        return shape
    return None
