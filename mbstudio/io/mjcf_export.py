"""A document as MuJoCo's MJCF, for MuJoCo and the tools that read its files.

    text, notes = mjcf_text(model, folder)   # folder: where the model's relative mesh files are

Each body of the spanning tree becomes a MuJoCo body placed on its parent as it is at the document's pose (its
loops closed), and each of our joints one MuJoCo joint per coordinate, named after the coordinate: a rotation a
hinge, a translation a slide, each with its axis and point in the body at that pose and `ref` the coordinate's
value there, so that MuJoCo's qpos is our q and its reference pose is ours (MuJoCo moves a body by its joints in
order, about axes fixed in it, which is the order of our joints' motions). Cut joints become equality
constraints between sites at their frames: spherical `connect`, fixed `weld`, revolute two `connect`s on its
axis. Inertias are written about the centre of mass (`fullinertia`) and geoms only draw (`inertiafromgeom`
false, no contacts). What MJCF cannot hold is in `notes` and in a comment.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np
from numpy.polynomial import Polynomial

from .. import __version__
from ..kinematics import Mechanism
from ..model import Frame, Model, ModelError
from ..model.document import INERTIA_NAMES, Actuator, JointFriction, JointSpringDamper
from ..model.validation import inertia_about_centre
from .urdf_export import xml_comment as _comment

MIN_MOMENT = 1e-12  # kg m^2: the least principal moment written (MuJoCo refuses zero, as a thin rod has)


def mjcf_text(model: Model, folder: str | os.PathLike | None = None) -> tuple[str, list[str]]:
    """The MJCF of `model` and what it could not carry; ModelError for a cut joint MJCF has no equality for, and
    for a free joint MuJoCo cannot hold (between two bodies)."""
    return _Writer(Mechanism(model), folder).text()


def _numbers(values) -> str:
    return " ".join(repr(0.0 if abs(v) < 1e-15 else float(v)) for v in np.ravel(values))


def quaternion(matrix: np.ndarray) -> np.ndarray:
    """The unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method: the largest diagonal first)."""
    m = np.asarray(matrix, float)
    trace = np.trace(m)
    k = int(np.argmax([trace, m[0, 0], m[1, 1], m[2, 2]]))
    if k == 0:
        s = 2 * np.sqrt(1 + trace)
        q = [s / 4, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    else:
        i, j, l = k - 1, k % 3, (k + 1) % 3
        s = 2 * np.sqrt(1 + m[i, i] - m[j, j] - m[l, l])
        q = [0.0] * 4
        q[0], q[1 + i] = (m[l, j] - m[j, l]) / s, s / 4
        q[1 + j], q[1 + l] = (m[j, i] + m[i, j]) / s, (m[l, i] + m[i, l]) / s
    q = np.asarray(q)
    return q / np.linalg.norm(q) * (1 if q[0] >= 0 else -1)


class _Writer:
    def __init__(self, mech: Mechanism, folder) -> None:
        self.mech, self.model, self.geometry = mech, mech.model, mech.tree.geometry
        self.folder = folder
        self.notes: list[str] = []
        q0 = mech.assemble(None, strict=False)[0] if mech.constraints.m else mech.tree.initial_coordinates()
        self.q0 = np.asarray(q0, float)
        self.state = mech.motion(self.q0[None])
        self.root = ET.Element("mujoco", model=self.model.name)
        self.body_names = self._body_names()
        self.joint_of = {c.name: j for j in self.model.joints for c in j.coordinates}
        self.sites: set[str] = set()

    def text(self) -> tuple[str, list[str]]:
        self.root.append(_comment(f"Written by MB Studio {__version__} from the model '{self.model.name}'"))
        if self.model.description:
            self.root.append(_comment(self.model.description))
        ET.SubElement(self.root, "compiler", angle="radian", inertiafromgeom="false", autolimits="true")
        ET.SubElement(self.root, "option", gravity=_numbers(np.asarray(self.geometry.gravity(), float)))
        self.assets = ET.SubElement(self.root, "asset")
        world = ET.SubElement(self.root, "worldbody")
        elements = {0: world}  # tree index -> MuJoCo body element; 0 the ground
        carried: dict[int, tuple[int, tuple]] = {}  # a merged massless body -> (its MuJoCo parent, motions so far)
        for link in self.mech.tree.links:
            parent, before = carried.get(link.parent, (link.parent, ()))
            if self._merged(link.child):
                carried[link.child] = (parent, before + link.primitives)
                continue
            elements[link.child] = self._body(elements[parent], parent, link.child, before + link.primitives)
        self._equalities(elements)
        self._actuators()
        self._left_out()
        if not len(self.assets):
            self.root.remove(self.assets)
        ET.indent(self.root, space="  ")
        return ET.tostring(self.root, encoding="unicode") + "\n", self.notes

    def _body_names(self) -> dict[str, str]:
        """MuJoCo body names: each body's readable name where it is unique, else its label."""
        names = [b.name for b in self.model.bodies]
        return {b.label: b.name if names.count(b.name) == 1 and b.name else b.label for b in self.model.bodies}

    def _pose(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.state.R[index][0], float), np.asarray(self.state.p[index][0], float)

    # ------------------------------------------------------------------ bodies and joints

    def _merged(self, index: int) -> bool:
        """A massless body with no shape, one child and no loop-closing joint on it has no MuJoCo body (MuJoCo
        refuses a moving body without mass): its joints go into its child's body, before the child's own, with
        axes and points as they are at the reference pose, which moves the child exactly as the chain does."""
        label = self.mech.tree.body_labels[index]
        body = self.model.body(label)
        children = [link for link in self.mech.tree.links if link.parent == index]
        on_loops = {b for j in self.mech.topology.cut for b in (j.parent, j.child)}
        massless = not np.any(np.asarray(self.geometry.inertia(body), float))
        return massless and not body.shape and len(children) == 1 and label not in on_loops

    def _body(self, parent: ET.Element, parent_index: int, index: int, primitives: tuple) -> ET.Element:
        label = self.mech.tree.body_labels[index]
        Rp, pp = self._pose(parent_index)
        Rc, pc = self._pose(index)
        element = ET.SubElement(
            parent,
            "body",
            name=self.body_names[label],
            pos=_numbers(Rp.T @ (pc - pp)),
            quat=_numbers(quaternion(Rp.T @ Rc)),
        )
        written: set[str] = set()  # ball and free joints: one MuJoCo joint for all their coordinates
        for prim in primitives:
            joint = self.joint_of[self.mech.coordinates[prim.coordinate]]
            if joint.type not in ("ball", "free"):
                self._joint(element, prim, Rc, pc)
            elif joint.name not in written:
                written.add(joint.name)
                self._turning_joint(element, joint, parent_index, len(primitives), prim, Rc, pc)
        body = self.model.body(label)
        self._inertial(element, body)
        if body.shape:
            self._geom(element, body)
        return element

    def _joint(self, element: ET.Element, prim, Rc: np.ndarray, pc: np.ndarray) -> None:
        k = prim.coordinate
        name = self.mech.coordinates[k]
        axis = Rc.T @ np.asarray(self.state.u[0, k], float)
        attributes = {"name": name, "type": "hinge" if prim.kind == "R" else "slide", "axis": _numbers(axis)}
        if prim.kind == "R":
            attributes["pos"] = _numbers(Rc.T @ (np.asarray(self.state.o[0, k], float) - pc))
        attributes["ref"] = repr(float(self.q0[k]))
        limits = self._limits(name)
        if limits:
            attributes["range"] = _numbers(limits)
        attributes |= self._joint_forces(name)
        ET.SubElement(element, "joint", attributes)

    def _turning_joint(self, element: ET.Element, joint, parent_index: int, count: int, prim, Rc, pc) -> None:
        """A ball joint as MuJoCo's ball about its centre, a free joint as MuJoCo's free joint (a child of the world
        and the body's only joint, as MuJoCo requires). Their qpos is a quaternion from the reference pose, and
        their velocities MuJoCo's (docs/mjcf.md), not our rotation parameters and their rates."""
        name = joint.source_name or joint.name
        if joint.type == "ball":
            centre = Rc.T @ (np.asarray(self.state.o[0, prim.coordinate], float) - pc)
            ET.SubElement(element, "joint", name=name, type="ball", pos=_numbers(centre))
        elif parent_index == 0 and count == 6:
            ET.SubElement(element, "freejoint", name=name)
        else:
            raise ModelError(
                f"joint '{joint.name}'",
                "is a free joint between two bodies, or shares its body with other joints: MuJoCo's free joints are "
                "the only joint of a child of the world",
                joint.type,
                "a free joint from the ground to a body with a mass",
            )
        self.notes.append(f"joint '{joint.name}' ({joint.type}): MuJoCo's qpos holds its rotation as a quaternion "
                          "from the reference pose, not our rotation parameters")  # fmt: skip

    def _limits(self, coordinate: str) -> tuple[float, float] | None:
        for joint in self.model.joints:
            for c in joint.coordinates:
                if c.name == coordinate and c.min is not None and c.max is not None:
                    return float(self.geometry.value(c.min)), float(self.geometry.value(c.max))
        return None

    def _joint_forces(self, coordinate: str) -> dict[str, str]:
        value = self.geometry.value
        found = {"damping": 0.0, "frictionloss": 0.0, "stiffness": 0.0, "springref": 0.0}
        for force in self.model.forces:
            if getattr(force, "coordinate", None) != coordinate:
                continue
            if isinstance(force, JointFriction):
                found["damping"] += float(value(force.viscous))
                found["frictionloss"] += float(value(force.coulomb))
                if float(value(force.coulomb)) > 0:
                    self.notes.append(f"force element '{force.name}': its smoothed Coulomb friction is MuJoCo's "
                                      "frictionloss, a friction constraint")  # fmt: skip
            elif isinstance(force, JointSpringDamper):
                if found["stiffness"] > 0:
                    self.notes.append(f"force element '{force.name}': a second spring on {coordinate} is left out")
                    continue
                found["damping"] += float(value(force.damping))
                found["stiffness"] = float(value(force.stiffness))
                found["springref"] = float(value(force.rest))
        return {key: repr(v) for key, v in found.items() if v != 0}

    def _inertial(self, element: ET.Element, body) -> None:
        """Mass, centre and principal moments with their axes (`diaginertia`, `quat`). MuJoCo refuses a moment of
        zero (a thin rod's, a point mass's): such a moment is raised to MIN_MOMENT, with a note."""
        values = dict(zip(INERTIA_NAMES, np.asarray(self.geometry.inertia(body), float), strict=True))
        m, centre, tensor = inertia_about_centre(values)
        if m <= 0 and not np.any(tensor):
            return  # a massless body: MuJoCo takes none (its subtree must carry mass)
        moments, axes = np.linalg.eigh((tensor + tensor.T) / 2)
        if np.linalg.det(axes) < 0:
            axes[:, 0] = -axes[:, 0]
        if moments.min() < MIN_MOMENT:
            self.notes.append(f"body '{body.label}': principal moments {np.round(moments, 15).tolist()} kg m^2 raised "
                              f"to at least {MIN_MOMENT:g} (MuJoCo needs positive ones)")  # fmt: skip
            moments = np.maximum(moments, MIN_MOMENT)
        ET.SubElement(element, "inertial", pos=_numbers(centre), quat=_numbers(quaternion(axes)), mass=repr(float(m)),
                      diaginertia=_numbers(moments))  # fmt: skip

    def _geom(self, element: ET.Element, body) -> None:
        shape, value = body.shape, self.geometry.value
        z = shape.get("axis") if shape["type"] == "cylinder" else shape.get("z")
        placed = self.geometry.frame(body, Frame(shape.get("origin", [0, 0, 0]), z, shape.get("x")))
        attributes = {"pos": _numbers(np.asarray(placed.origin, float)),
                      "quat": _numbers(quaternion(np.asarray(placed.rotation, float))),
                      "contype": "0", "conaffinity": "0", "group": "1"}  # fmt: skip
        kind = shape["type"]
        if kind == "box":
            attributes |= {"type": "box", "size": _numbers(np.asarray(self.geometry.vector(shape["size"]), float) / 2)}
        elif kind == "cylinder":
            size = [float(value(shape["radius"])), float(value(shape["length"])) / 2]
            attributes |= {"type": "cylinder", "size": _numbers(size)}
        elif kind == "sphere":
            attributes |= {"type": "sphere", "size": repr(float(value(shape["radius"])))}
        else:
            attributes |= {"type": "mesh", "mesh": self._mesh(body, shape)}
        if "color" in shape:
            attributes["rgba"] = _numbers([*(int(shape["color"][i : i + 2], 16) / 255 for i in (1, 3, 5)), 1.0])
        ET.SubElement(element, "geom", attributes)

    def _mesh(self, body, shape: dict) -> str:
        path = os.path.expanduser(shape["file"])
        if self.folder is not None and not os.path.isabs(path):
            path = os.path.join(self.folder, path)
        name = f"{body.label}_mesh"
        attributes = {"name": name, "file": path}
        if "scale" in shape:
            attributes["scale"] = _numbers([float(self.geometry.value(s)) for s in shape["scale"]])
        ET.SubElement(self.assets, "mesh", attributes)
        return name

    # ------------------------------------------------------------------ loops, actuators, what is left out

    def _equalities(self, elements: dict) -> None:
        cut, couplings = self.mech.topology.cut, self.model.couplings
        if not cut and not couplings:
            return
        equality = ET.SubElement(self.root, "equality")
        for coupling in couplings:
            self._coupling(equality, coupling)
        for joint in cut:
            ends = []
            for label, frame in ((joint.parent, joint.parent_frame), (joint.child, joint.child_frame)):
                value = self.geometry.frame(self.model.body(label), frame)
                ends.append((label, np.asarray(value.origin, float), np.asarray(value.rotation, float)))
            if joint.type in ("spherical", "ball"):
                self._connect(equality, elements, joint.name, ends)
            elif joint.type == "fixed":
                sites = [self._site(elements, f"{joint.name}_{k}", *end) for k, end in enumerate(ends, 1)]
                ET.SubElement(equality, "weld", name=joint.name, site1=sites[0], site2=sites[1])
            elif joint.type == "revolute":  # two points of its axis: five independent conditions of six
                reach = self.mech.length_scale
                self._connect(equality, elements, f"{joint.name}", ends)
                shifted = [(label, origin + reach * rotation[:, 2], rotation) for label, origin, rotation in ends]
                self._connect(equality, elements, f"{joint.name}_axis", shifted)
            else:
                raise ModelError(
                    f"joint '{joint.name}'",
                    f"closes a loop as a {joint.type} joint, which MJCF's equalities cannot hold",
                    joint.type,
                    "cut joints that are revolute, spherical, ball or fixed (connect, weld)",
                )

    def _coupling(self, equality: ET.Element, coupling) -> None:
        """follower = P(leader) as MuJoCo's joint equality about the refs (our reference pose, closed):
        y − y0 = Σ a_i (x − x0)^i with a(t) = P(x0 + t) − y0, up to MuJoCo's fourth power."""
        coordinates = self.mech.coordinates
        y0 = self.q0[coordinates.index(coupling.follower)]
        x0 = self.q0[coordinates.index(coupling.leader)] if coupling.leader else 0.0
        polynomial = Polynomial([float(self.geometry.value(c)) for c in coupling.coefficients()])
        about_refs = (polynomial(Polynomial([x0, 1.0])) - y0).coef if coupling.leader else polynomial.coef - y0
        if len(about_refs) > 5 and np.any(about_refs[5:]):
            self.notes.append(f"coupling '{coupling.name}' ({coupling.formula()}) is of a degree above MuJoCo's "
                              "fourth and is left out")  # fmt: skip
            return
        attributes = {"name": coupling.name, "joint1": coupling.follower}
        if coupling.leader:
            attributes["joint2"] = coupling.leader
        coefficients = np.zeros(5)
        coefficients[: min(len(about_refs), 5)] = about_refs[:5]
        ET.SubElement(equality, "joint", attributes, polycoef=_numbers(coefficients))

    def _connect(self, equality: ET.Element, elements: dict, name: str, ends) -> None:
        sites = [self._site(elements, f"{name}_{k}", *end) for k, end in enumerate(ends, 1)]
        ET.SubElement(equality, "connect", name=name, site1=sites[0], site2=sites[1])

    def _site(self, elements: dict, name: str, label: str, origin: np.ndarray, rotation: np.ndarray) -> str:
        parent = elements[self.mech.tree.body_index(label)]
        ET.SubElement(parent, "site", name=name, pos=_numbers(origin), quat=_numbers(quaternion(rotation)))
        return name

    def _actuators(self) -> None:
        motors = [f for f in self.model.forces if isinstance(f, Actuator)]
        if not motors:
            return
        actuator = ET.SubElement(self.root, "actuator")
        for force in motors:
            ET.SubElement(actuator, "motor", name=force.name, joint=force.coordinate, gear="1")
            self.notes.append(f"actuator '{force.name}': a MuJoCo motor whose ctrl is the force; its formula or "
                              "table is not carried")  # fmt: skip

    def _left_out(self) -> None:
        for force in self.model.forces:
            if not isinstance(force, (Actuator, JointFriction, JointSpringDamper)):
                self.notes.append(f"force element '{force.name}' ({force.type}) has no MJCF form here and is left out")
        for note in self.notes:
            self.root.append(_comment(note))
