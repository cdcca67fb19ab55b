"""A robot from URDF as an MB Studio document (issue 12, item 1).

    result = import_urdf("ur5.urdf", package_paths=["~/ros/src"])
    result.model      # a validated Model: one body per link, one joint per URDF joint
    result.notes      # what the document could not keep, each naming its link or joint

The file is read strictly first (urdf_input.py: well-formed XML, each link and joint name once, finite numbers),
then parsed by yourdfpy (its defaults and checks are theirs, not ours). Each link becomes
a body whose frame is the link frame, each URDF joint a joint of ours: revolute and continuous -> revolute,
prismatic -> prismatic, fixed -> fixed, with the parent joint frame at the URDF joint's origin and its z axis
along the joint axis, the child joint frame at the child link's origin, so both frames coincide at q = 0 as
in URDF. Inertials are moved to the link origin (our ten parameters), the first visual becomes the body's
shape with its material's colour, and `package://NAME/...` meshes are looked up in the given folders, then in
ROS_PACKAGE_PATH, then in the ROS packages (folders with a package.xml) above the URDF file; a mesh is read only
from inside the package it names, the URDF's folder or a given folder (never `/etc/passwd`, `../../..`). The
root link is the ground when it carries
nothing (no mass, no visual); otherwise it is a body welded to the ground, as Pinocchio's
buildModelFromUrdf places it. With `floating_base`, a root link other than `world` is a body on a free joint
from the ground (Pinocchio's buildModelFromUrdf(path, JointModelFreeFlyer())): its six coordinates are the root
link origin's position and rotation parameters in the world (docs/file-format.md). Floating joints between links
and planar joints are refused.
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
from .couplings import Coupling, add_coupling
from .import_names import SymbolNames, clean, inertia_parameters, one_line, reference_direction
from .urdf_input import MeshPlaces, check_urdf

FREE = ("x", "y", "z", "rx", "ry", "rz")  # a floating base's coordinates: position, rotation parameters
JOINT_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "fixed": "fixed"}
REFUSED_TYPES = {
    "floating": "a floating base: MB Studio's base is fixed; import the robot fixed at its root link by "
    "deleting this joint, or give the floating body six joints of its own",
    "planar": "MB Studio's planar joint moves in the x-y plane of its frame with the rotation last, which a "
    "URDF planar joint does not define",
}


@dataclass
class UrdfImport:
    model: Model
    notes: list[str] = field(default_factory=list)


def import_urdf(
    path: str | os.PathLike, package_paths: list[str | os.PathLike] = (), floating_base: bool = False
) -> UrdfImport:
    """The robot in the URDF file `path`; ModelError (naming the file, the link or joint) for what cannot be
    read or has no MB Studio equivalent. `floating_base` puts the root link on a free joint."""
    path = Path(path)
    robot = _parse(path)
    return _Importer(robot, path, MeshPlaces.around(path, package_paths), floating_base).run()


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
    def __init__(self, robot, path: Path, places: MeshPlaces, floating_base: bool = False) -> None:
        self.robot, self.path, self.places, self.floating_base = robot, path, places, floating_base
        self.notes: list[str] = []
        self.names = SymbolNames()
        self.coordinate_of: dict[str, str] = {}  # URDF joint name -> our coordinate
        self.labels: dict[str, str] = {}  # URDF link name -> body label (GROUND for a bare root)
        self.materials = {m.name: m for m in robot.materials if m.name}

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
        model.description = self._description()
        try:
            validate(model)
        except ModelError as exc:
            raise ModelError(f"{self.path}: {exc.where}", exc.problem, exc.value, exc.expected) from None
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

    # ------------------------------------------------------------------ names

    def _label(self, link_name: str) -> str:
        label = self.names.label(link_name)
        self.labels[link_name] = label
        return label

    # ------------------------------------------------------------------ bodies

    def _add_root(self, model: Model, link) -> None:
        carries = (link.inertial is not None and link.inertial.mass > 0) or any(v.geometry for v in link.visuals)
        if self.floating_base and link.name != "world":
            self._add_link(model, link)
            name = self.names.joint("root_joint")
            coordinates = [Coordinate(self.names.coordinate(f"{name}_{c}"), 0.0) for c in FREE]
            model.joints.append(Joint(name, "free", GROUND, self.labels[link.name], Frame(), Frame(), coordinates))
            return
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
        label = self._label(link.name)
        repaired: list[str] = []
        body = Body(label, one_line(link.name), _inertia(link.inertial, repaired))
        self.notes += [f"link '{link.name}': its inertia is not possible for a body, so {r}" for r in repaired]
        body.shape = self._shape(link)
        model.bodies.append(body)

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

    def _add_joint(self, model: Model, urdf_joint) -> None:
        kind = JOINT_TYPES[urdf_joint.type]
        origin = _transform(urdf_joint.origin)
        axis = np.asarray(urdf_joint.axis if urdf_joint.axis is not None else [1.0, 0.0, 0.0], float)
        if kind != "fixed" and not np.linalg.norm(axis) > 0:
            raise ModelError(f"{self.path}: joint '{urdf_joint.name}'.axis", "is zero", list(axis), "a direction")
        axis = axis / np.linalg.norm(axis) if kind != "fixed" else np.array([0.0, 0.0, 1.0])
        x = reference_direction(axis)
        rotation = origin[:3, :3]
        parent_frame = Frame(clean(origin[:3, 3]), clean(rotation @ axis), clean(rotation @ x))
        child_frame = Frame([0.0, 0.0, 0.0], clean(axis), clean(x))
        name = self.names.joint(urdf_joint.name)
        coordinates = [] if kind == "fixed" else [self._coordinate(urdf_joint)]
        if coordinates:
            self.coordinate_of[urdf_joint.name] = coordinates[0].name
        parent, child = self.labels[urdf_joint.parent], self.labels[urdf_joint.child]
        model.joints.append(Joint(name, kind, parent, child, parent_frame, child_frame, coordinates))
        if urdf_joint.mimic is not None:
            self._mimic(model, urdf_joint, coordinates)
        if coordinates:
            self._friction(model, urdf_joint, coordinates[0].name)

    def _mimic(self, model: Model, urdf_joint, coordinates: list[Coordinate]) -> None:
        """A mimic joint: q = multiplier · q_leader + offset, handed on as a coupling (io/couplings.py)."""
        mimic = urdf_joint.mimic
        leader = self.coordinate_of.get(mimic.joint)
        if not coordinates or leader is None:
            self.notes.append(f"joint '{urdf_joint.name}' mimics '{mimic.joint}', which is not a moving joint before "
                              "it: imported as a joint of its own")  # fmt: skip
            return
        ratio = 1.0 if mimic.multiplier is None else float(mimic.multiplier)
        offset = 0.0 if mimic.offset is None else float(mimic.offset)
        coupling = Coupling(
            coordinates[0].name, leader, ratio, offset, f"joint '{urdf_joint.name}' mimics '{mimic.joint}'"
        )
        add_coupling(model, coupling, self.notes)

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
    return "revolute, continuous, prismatic or fixed"


def _inertia(inertial, repaired: list[str]) -> dict[str, float]:
    """URDF's mass, centre of mass and inertia about it (in the inertial frame) -> our ten parameters about
    the link origin in link axes. A massless link keeps its rotational inertia, as Pinocchio keeps it. An
    inertia no body can have is made possible (see `_possible`), and `repaired` says how."""
    if inertial is None:
        return dict.fromkeys(INERTIA_NAMES, 0.0)
    m = float(inertial.mass or 0.0)
    pose = _transform(inertial.origin)
    rotation, c = pose[:3, :3], pose[:3, 3]
    tensor = np.asarray(inertial.inertia if inertial.inertia is not None else np.zeros((3, 3)), float)
    tensor = _possible(rotation @ tensor @ rotation.T, repaired)
    return dict(zip(INERTIA_NAMES, inertia_parameters(m, c, tensor), strict=True))


def _possible(tensor: np.ndarray, repaired: list[str]) -> np.ndarray:
    """The centroidal inertia itself when a body can have it; otherwise the nearest one that a body can: its
    negative principal moments raised to zero, and the two smaller ones raised by half the deficit each where
    the largest exceeds their sum (the triangle inequality). Many URDFs carry such inertias on small or dummy
    links; MB Studio refuses them in a document, so the import changes them and says so."""
    tensor = (tensor + tensor.T) / 2
    moments, axes = np.linalg.eigh(tensor)
    scale = max(float(np.abs(moments).max()), 1e-300)
    fixed = np.maximum(moments, 0.0)
    deficit = fixed[2] - fixed[0] - fixed[1]
    if deficit > 0:
        fixed[:2] += deficit / 2
    if np.abs(fixed - moments).max() <= 1e-9 * scale:
        return tensor
    repaired.append(f"principal moments {_rounded(moments)} -> {_rounded(fixed)} kg m^2")
    return axes @ np.diag(fixed) @ axes.T


def _rounded(values) -> list[float]:
    return [float(f"{v:.6g}") for v in values]


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
