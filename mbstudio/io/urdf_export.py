"""A tree document as URDF, for ROS, Gazebo, Pinocchio and every tool that reads URDF.

    text, notes = urdf_text(model, folder)   # folder: where the model's relative mesh files are

URDF places a child link's frame at its joint and rotates or slides it about one axis, so each of our bodies
becomes a link whose frame is its child joint frame (our body frame need not be there): its inertia and its
shape are moved into that frame. A joint of several motions (universal, spherical, cylindrical, planar,
free_euler) becomes a chain of one-axis URDF joints, one per coordinate and named after it, through massless
links named `<joint>__<k>`; a joint the spanning tree traverses from its document child keeps its coordinates'
sense by negated axes. A free joint is a URDF `floating` joint, and the root link itself where it is the
ground's only joint (URDF's floating base: Pinocchio's free flyer, our import's default); otherwise the ground
is the link `world`, which our import (and ROS) read as the fixed ground. Links and joints carry the names
they were imported with (`source_name`), else our labels and coordinate names; couplings linear in one
leader become `mimic` elements. Values are evaluated with the model's parameters (URDF has no expressions).
Closed loops and ball joints have no URDF form and are refused by name; what URDF cannot hold (force elements
other than joint friction, a gravity other than Pinocchio's default, other couplings) is listed in `notes`
and in a comment.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

import numpy as np

from .. import __version__
from ..dynamics.force_laws import JointTerms, law_class
from ..kinematics import Mechanism
from ..kinematics.geometry import FrameValue
from ..model import GROUND, Frame, Model, ModelError
from ..model.document import INERTIA_NAMES
from ..model.validation import inertia_about_centre
from .urdf_angles import roll_pitch_yaw

UNLIMITED = 1e6  # URDF's effort and velocity limits are required; MB Studio documents have none
NO_TRAVEL_LIMIT = 1e3  # a prismatic joint needs lower/upper; a coordinate with no range gets ±1 km
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
WORLD = "world"  # the ground's link: ROS's fixed world, which our import reads as the ground


def urdf_text(model: Model, folder: str | os.PathLike | None = None) -> tuple[str, list[str]]:
    """The URDF of a tree `model` and what it could not carry; ModelError for a closed loop."""
    mech = Mechanism(model)
    if mech.topology.cut:
        names = ", ".join(j.name for j in mech.topology.cut)
        raise ModelError(
            f"model '{model.name}'",
            f"has closed loops (cut joints {names}), which URDF cannot describe",
            names,
            "a tree: remove or open the loop-closing joints to export the tree",
        )
    balls = [j.name for j in model.joints if j.type == "ball"]
    if balls:  # URDF has no joint turning about a point
        raise ModelError(
            f"model '{model.name}'",
            f"has ball joints ({', '.join(balls)}), which URDF cannot describe",
            balls,
            "revolute, prismatic, fixed and free joints, or spherical joints (written as chains of axes)",
        )
    return _Writer(mech, folder).text()


def _pose(rotation: np.ndarray, origin: np.ndarray) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rotation, origin
    return pose


def _inverse(pose: np.ndarray) -> np.ndarray:
    rotation, origin = pose[:3, :3], pose[:3, 3]
    return _pose(rotation.T, -rotation.T @ origin)


def _numbers(values) -> str:
    return " ".join(repr(0.0 if abs(v) < 1e-15 else float(v)) for v in np.ravel(values))


def _origin(parent: ET.Element, pose: np.ndarray) -> None:
    ET.SubElement(parent, "origin", xyz=_numbers(pose[:3, 3]), rpy=_numbers(roll_pitch_yaw(pose[:3, :3])))


def xml_comment(text: str) -> ET.Comment:
    """An XML comment holding free text from the model: no control characters, and no `--`, which would end it."""
    clean = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", " ", text)
    return ET.Comment(" " + re.sub(r"-{2,}", "-", clean).strip(" -") + " ")


class _Writer:
    def __init__(self, mech: Mechanism, folder) -> None:
        self.mech, self.model, self.geometry = mech, mech.model, mech.tree.geometry
        self.folder = folder
        self.notes: list[str] = []
        self.names: dict[str, set[str]] = {"link": set(), "joint": set()}  # URDF's two name spaces
        self.robot = ET.Element("robot", name=mech.model.name)
        self.link_frame = {GROUND: np.eye(4)}  # each body's URDF link frame in its body coordinates
        self.element_of: dict[str, ET.Element] = {}  # coordinate -> its URDF joint

    def text(self) -> tuple[str, list[str]]:
        self.robot.append(xml_comment(f"Written by MB Studio {__version__} from the model '{self.model.name}'"))
        if self.model.description:
            self.robot.append(xml_comment(self.model.description))
        self._check_gravity()
        self._left_out_forces()
        labels, root = self.mech.tree.body_labels, self._floating_root()
        self.link_name = {}
        if root is None:
            self.link_name[GROUND] = self._unique(WORLD)
            ET.SubElement(self.robot, "link", name=self.link_name[GROUND])
        for link in self.mech.tree.links:
            if link is root:
                self._root_link(link, labels[link.child])
            else:
                self._link_chain(link, labels[link.parent], labels[link.child])
        self._mimics()
        ET.indent(self.robot, space="  ")
        return ET.tostring(self.robot, encoding="unicode", xml_declaration=True) + "\n", self.notes

    def _floating_root(self):
        """The tree link of a free joint that is the ground's only joint: URDF's floating base (the root link)."""
        from_ground = [link for link in self.mech.tree.links if link.parent == 0]
        if len(from_ground) == 1 and from_ground[0].joint.type == "free":
            return from_ground[0]
        return None

    def _root_link(self, link, child: str) -> None:
        """The body on the floating base as the URDF root link: a free joint to the ground is URDF's default."""
        element = ET.SubElement(self.robot, "link", name=self._unique(self._link_name(child)))
        self._body(element, child, link.after)
        self.link_name[child] = element.get("name")
        if not np.allclose(link.before.rotation, np.eye(3), atol=1e-15) or np.any(link.before.origin):
            self.notes.append(
                f"free joint '{link.joint.name}': its frame on the ground is not the world frame; a floating URDF "
                "root has no placement, so its coordinates are read back in the world frame (the motion is the same)"
            )

    def _unique(self, name: str, kind: str = "link") -> str:
        """`name`, or it with _2, _3, ... where another link (or joint) has it: a joint may share a link's name."""
        taken, candidate, n = self.names[kind], name, 1
        while candidate in taken:
            n += 1
            candidate = f"{name}_{n}"
        taken.add(candidate)
        return candidate

    def _check_gravity(self) -> None:
        gravity = np.asarray(self.geometry.gravity(), float)
        if not np.allclose(gravity, DEFAULT_GRAVITY, rtol=0, atol=1e-12):
            self.notes.append(f"gravity {gravity.tolist()} m/s^2 is not in URDF (readers assume [0, 0, -9.81])")
            self.robot.append(xml_comment(f"gravity of the MB Studio model: {_numbers(gravity)} m/s^2"))

    def _left_out_forces(self) -> None:
        for force in self.model.forces:
            if "urdf" not in law_class(force).carried_by:
                self.notes.append(law_class(force).export_note(force, "urdf", self.geometry.value))
                self.robot.append(xml_comment(f"left out: force element {force.name} ({force.type})"))

    # ------------------------------------------------------------------ links and joints

    def _link_name(self, label: str) -> str:
        return self.model.body(label).source_name or label

    def _link_chain(self, link, parent: str, child: str) -> None:
        """The URDF joints (and massless links between them) that carry `child` from `parent`: one joint per
        coordinate, a fixed joint for none, one floating joint for a free joint."""
        placement = _inverse(self.link_frame[parent]) @ _pose(link.before.rotation, link.before.origin)
        joint = link.joint
        previous = self.link_name[parent]
        steps = (None,) if joint.type == "free" or not link.primitives else link.primitives
        for k, primitive in enumerate(steps):
            last = k == len(steps) - 1
            name = self._unique(self._link_name(child) if last else f"{joint.name}__{k + 1}")
            element = ET.SubElement(self.robot, "link", name=name)
            if last:
                self._body(element, child, link.after)
            urdf_joint = self._joint(joint, primitive, previous, name)
            _origin(urdf_joint, placement if k == 0 else np.eye(4))
            self._axis_and_limits(urdf_joint, primitive)
            previous = name
        self.link_name[child] = previous

    def _joint(self, joint, primitive, parent: str, child: str) -> ET.Element:
        """The URDF joint of one step: named as imported (`source_name`) where the joint is one step, else after
        its coordinate (the joint's own name for a fixed or floating joint)."""
        if primitive is None:
            kind = "floating" if joint.type == "free" else "fixed"
            return self._element(joint.source_name or joint.name, kind, parent, child)
        coordinate = self.mech.coordinates[primitive.coordinate]
        kind = "prismatic" if primitive.kind == "T" else ("revolute" if self._limits(coordinate) else "continuous")
        name = joint.source_name if len(joint.coordinates) == 1 and joint.source_name else coordinate
        self.element_of[coordinate] = self._element(name, kind, parent, child)
        return self.element_of[coordinate]

    def _element(self, name: str, kind: str, parent: str, child: str) -> ET.Element:
        element = ET.SubElement(self.robot, "joint", name=self._unique(name, "joint"), type=kind)
        ET.SubElement(element, "parent", link=parent)
        ET.SubElement(element, "child", link=child)
        return element

    def _mimics(self) -> None:
        """Each coupling follower = offset + ratio · leader as a `mimic` of the follower's URDF joint; others (a
        polynomial, a coordinate held at a value) have no URDF form."""
        value = self.geometry.value
        for coupling in self.model.couplings:
            coefficients = [float(value(c)) for c in coupling.coefficients()]
            if coupling.leader is None or any(coefficients[2:]):
                self.notes.append(f"coupling '{coupling.name}' ({coupling.formula()}) has no URDF form (a mimic "
                                  "joint follows one other linearly) and is left out")  # fmt: skip
                self.robot.append(xml_comment(f"left out: coupling {coupling.name}, {coupling.formula()}"))
                continue
            leader = self.element_of[coupling.leader].get("name")
            ET.SubElement(self.element_of[coupling.follower], "mimic", joint=leader, multiplier=repr(coefficients[1]),
                          offset=repr(coefficients[0]))  # fmt: skip

    def _axis_and_limits(self, element: ET.Element, primitive) -> None:
        if primitive is None:
            return
        axis = np.zeros(3)
        axis[primitive.axis] = primitive.sign
        ET.SubElement(element, "axis", xyz=_numbers(axis))
        coordinate = self.mech.coordinates[primitive.coordinate]
        limits = self._limits(coordinate)
        if limits or primitive.kind == "T":
            low, high = limits or (-NO_TRAVEL_LIMIT, NO_TRAVEL_LIMIT)
            ET.SubElement(
                element, "limit", lower=repr(low), upper=repr(high), effort=repr(UNLIMITED), velocity=repr(UNLIMITED)
            )
        terms = [t for t in self._joint_terms() if t.coordinate == coordinate]
        if terms:
            damping, coulomb = sum(t.damping for t in terms), sum(t.coulomb for t in terms)
            ET.SubElement(element, "dynamics", damping=repr(damping), friction=repr(coulomb))

    def _joint_terms(self) -> list[JointTerms]:
        """The force elements URDF carries, as the damping and friction of their joints."""
        laws = [(f, law_class(f)) for f in self.model.forces]
        return [law.joint_terms(f, self.geometry.value) for f, law in laws if "urdf" in law.carried_by]

    def _limits(self, coordinate: str) -> tuple[float, float] | None:
        for joint in self.model.joints:
            for c in joint.coordinates:
                if c.name == coordinate and c.min is not None and c.max is not None:
                    return float(c.min), float(c.max)
        return None

    # ------------------------------------------------------------------ a body's inertia and shape

    def _body(self, element: ET.Element, label: str, after: FrameValue) -> None:
        """The body's inertial and visual in its link frame, which is its child joint frame `after`."""
        frame = _pose(after.rotation, after.origin)
        self.link_frame[label] = frame
        body = self.model.body(label)
        element.append(xml_comment(f"body {label}: {body.name}"))
        to_link = _inverse(frame)
        values = dict(zip(INERTIA_NAMES, np.asarray(self.geometry.inertia(body), float), strict=True))
        m, centre, tensor = inertia_about_centre(values)
        inertial = ET.SubElement(element, "inertial")
        rotation = to_link[:3, :3]
        _origin(inertial, _pose(np.eye(3), to_link[:3, :3] @ centre + to_link[:3, 3]))
        ET.SubElement(inertial, "mass", value=repr(float(m)))
        t = rotation @ tensor @ rotation.T
        names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        ET.SubElement(inertial, "inertia", {n: repr(float(t[i, j])) for n, (i, j) in zip(names, _UPPER, strict=True)})
        if body.shape:
            self._visual(element, body, to_link)

    def _visual(self, element: ET.Element, body, to_link: np.ndarray) -> None:
        shape, value = body.shape, self.geometry.value
        z = shape.get("axis") if shape["type"] == "cylinder" else shape.get("z")
        placed = self.geometry.frame(body, Frame(shape.get("origin", [0, 0, 0]), z, shape.get("x")))
        visual = ET.SubElement(element, "visual")
        _origin(visual, to_link @ _pose(np.asarray(placed.rotation, float), np.asarray(placed.origin, float)))
        geometry = ET.SubElement(visual, "geometry")
        kind = shape["type"]
        if kind == "box":
            ET.SubElement(geometry, "box", size=_numbers(np.asarray(self.geometry.vector(shape["size"]), float)))
        elif kind == "cylinder":
            ET.SubElement(geometry, "cylinder", radius=repr(float(value(shape["radius"]))),
                          length=repr(float(value(shape["length"]))))  # fmt: skip
        elif kind == "sphere":
            ET.SubElement(geometry, "sphere", radius=repr(float(value(shape["radius"]))))
        else:
            self._mesh(geometry, shape)
        if "color" in shape:
            rgb = [int(shape["color"][i : i + 2], 16) / 255 for i in (1, 3, 5)]
            material = ET.SubElement(visual, "material", name=f"{body.label}_color")
            ET.SubElement(material, "color", rgba=_numbers([*rgb, 1.0]))

    def _mesh(self, geometry: ET.Element, shape: dict) -> None:
        path = os.path.expanduser(shape["file"])
        if self.folder is not None and not os.path.isabs(path) and "://" not in path:
            path = os.path.join(self.folder, path)
        attributes = {"filename": path}
        if "scale" in shape:
            attributes["scale"] = _numbers([float(self.geometry.value(s)) for s in shape["scale"]])
        ET.SubElement(geometry, "mesh", attributes)


_UPPER = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
