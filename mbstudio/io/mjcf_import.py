"""A mechanism from MuJoCo's MJCF as an MB Studio document.

    result = import_mjcf("robot.xml")
    result.model      # a validated Model, its loops closed
    result.notes      # what the document could not keep or changed, each naming its element

The file is read by MuJoCo's own compiler (`mujoco.MjModel.from_xml_path`), which resolves defaults, includes,
frames, angle units and the inertias it infers from geoms; we read the compiled model. Each MuJoCo body becomes
a body of ours whose frame is the MuJoCo body frame. MuJoCo places a body on its parent by the body's pose and
then moves it by its joints in order, each about an axis through a point fixed in the body; a body with one
joint gets one joint of ours, a body with several a chain of joints through massless bodies `<label>__<k>` (each
coinciding with the body at the reference pose). hinge -> revolute, slide -> prismatic, ball -> ball, free -> free,
no joint -> fixed; a joint's `ref` is kept, so our coordinate equals MuJoCo's qpos, and a ball or free joint's
quaternion is our rotation parameters ρ (no gimbal lock: docs/file-format.md). Equality constraints `connect`
and `weld` become cut joints (spherical, fixed), so the loops close at load; `joint` becomes a coupling (its
polynomial, MuJoCo's refs included). Joint damping, stiffness and friction loss become force elements, motors
actuators. MuJoCo's names are kept as the bodies' and joints' `source_name` where ours differ.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.polynomial import Polynomial

from .. import __version__
from ..kinematics import Mechanism
from ..model import GROUND, Body, Coordinate, Frame, Joint, Model, ModelError, validate
from ..model.document import INERTIA_NAMES, Actuator, JointFriction, JointSpringDamper
from ..model.errors import AssemblyError
from ..numerics import rodrigues
from .collision_geometry import Collision, add_ground, floats_freely
from .couplings import add_coupling
from .import_names import SymbolNames, clean, inertia_parameters, one_line, reference_direction

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3  # mjtJoint
CONNECT, WELD, JOINT_EQUALITY = 0, 1, 2  # mjtEq
OBJ_BODY, OBJ_SITE = 1, 6  # mjtObj
GEOM_PLANE, GEOM_HFIELD, GEOM_SPHERE, GEOM_CAPSULE, GEOM_ELLIPSOID, GEOM_CYLINDER, GEOM_BOX, GEOM_MESH = range(8)
EQUALITY_KINDS = {0: "connect", 1: "weld", 2: "joint", 3: "tendon", 4: "flex"}


@dataclass
class MjcfImport:
    model: Model
    notes: list[str] = field(default_factory=list)
    coordinates: dict[str, list[str]] = field(default_factory=dict)  # MuJoCo joint name -> our coordinates, in order


def import_mjcf(path: str | os.PathLike, folders: Sequence[str | os.PathLike] = (), ground: bool = True) -> MjcfImport:
    """The mechanism in the MJCF file `path`; ModelError (naming the file and the element) for what cannot be read
    or has no MB Studio equivalent. Included files and assets are read from the file's folder and the `folders`
    given, nowhere else (`confine_files`). A floating mechanism's colliding geoms become contacts against the
    file's ground plane, or a plane under the lowest of them (collision_geometry.py); `ground=False` leaves them
    out."""
    path = Path(path)
    warnings: list[str] = []
    result = _Importer(compile_mjcf(path, warnings, folders), path, ground).run()
    result.notes[:0] = [f"MuJoCo: {w}" for w in warnings]
    return result


def compile_mjcf(path: Path, warnings: list[str] | None = None, folders: Sequence[str | os.PathLike] = ()):
    """MuJoCo's compiled model of the file; ModelError with MuJoCo's own message (it names the element and line).
    MuJoCo's warnings go to `warnings` (by default it appends them to MUJOCO_LOG.TXT in the user's folder). The
    files it would read are checked first (`confine_files`)."""
    try:
        import mujoco
    except ImportError:
        raise ModelError(
            str(path), "cannot be imported: MuJoCo is not installed", expected='pip install "mbstudio[mjcf]"'
        ) from None
    if not path.is_file():
        raise ModelError(str(path), "does not exist", expected="an MJCF (MuJoCo XML) file")
    confine_files(path, folders)
    kept = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning((warnings if warnings is not None else []).append)
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except Exception as exc:  # MuJoCo raises ValueError with the compiler's message
        message = " ".join(str(exc).split())
        raise ModelError(str(path), f"is not an MJCF model MuJoCo compiles ({message})", expected="MJCF") from None
    finally:
        mujoco.set_mju_user_warning(kept)


MAX_FILES = 1000  # included files: a chain of includes longer than this is no model


def confine_files(path: Path, folders: Sequence[str | os.PathLike] = ()) -> None:
    """Refuse, naming the element, its attribute and the path, a file the model would have MuJoCo's compiler read
    from outside its folder and the `folders` given: an absolute path, or one that `..` or a symbolic link takes
    out. Every attribute that names a file (`include file`, `mesh file`, `texture fileright`, ...) and the
    compiler's `meshdir`, `texturedir` and `assetdir` are checked, in the file and in what it includes, read
    strictly here (no DTD, no entity) before MuJoCo opens anything. MuJoCo resolves a name against the model's
    folder or the including file's, under the asset folders: every such place must be inside."""
    roots = [os.path.realpath(path.parent), *(os.path.realpath(Path(f).expanduser()) for f in folders)]
    files, references, folders_named = [path], [], [""]
    for file in files:  # grows as includes are found
        for element in _strict_xml(file):
            for attribute, value in element.attrib.items():
                place = (file, element, attribute, value)
                if attribute in ("meshdir", "texturedir", "assetdir"):
                    _inside_roots(place, [path.parent], roots)
                    folders_named.append(value)
                elif attribute.startswith("file"):
                    references.append(place)
                if element.tag == "include" and attribute == "file":
                    _inside_roots(place, [path.parent, file.parent], roots)
                    found = [base / value for base in (path.parent, file.parent) if (base / value).is_file()]
                    files += [f for f in found if f not in files][: MAX_FILES - len(files)]
    for file, element, attribute, value in references:
        bases = [base / folder for base in (path.parent, file.parent) for folder in folders_named]
        _inside_roots((file, element, attribute, value), bases, roots)


def _strict_xml(file: Path) -> list:
    """The elements of an MJCF file (its comments left out), read strictly."""
    from lxml import etree

    parser = etree.XMLParser(recover=False, resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.parse(str(file), parser).getroot()
    except (OSError, etree.XMLSyntaxError) as exc:
        raise ModelError(
            str(file), f"is not an MJCF model MuJoCo compiles (the XML is not well-formed: {exc})", expected="MJCF"
        ) from None
    if root.getroottree().docinfo.internalDTD is not None:
        raise ModelError(str(file), "declares a DTD (<!DOCTYPE ... [...]>)", expected="MJCF, which has none")
    return [element for element in root.iter() if isinstance(element.tag, str)]


def _inside_roots(place: tuple, bases: list[Path], roots: list[str]) -> None:
    """The file or folder `value` names, taken from each of `bases`, lies inside one of `roots`."""
    file, element, attribute, value = place
    outside = Path(value).is_absolute() or any(
        not any(Path(os.path.realpath(base / value)).is_relative_to(root) for root in roots) for base in bases
    )
    if outside:
        raise ModelError(
            f"{file}, line {element.sourceline}: <{element.tag} {attribute}>",
            "names a file outside the model's folder" + (" (an absolute path)" if Path(value).is_absolute() else ""),
            value,
            f"a relative path inside {roots[0]}" + (" or a folder given" if len(roots) > 1 else "") + ", which "
            "MuJoCo's compiler then reads; nothing outside is opened",
        )


def rotation(quaternion) -> np.ndarray:
    """The rotation matrix of a unit quaternion (w, x, y, z), MuJoCo's convention."""
    w, x, y, z = np.asarray(quaternion, float) / np.linalg.norm(quaternion)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def rotation_parameters(quaternion) -> list[float]:
    """Our ball and free joints' ρ of a MuJoCo quaternion (w, x, y, z)."""
    q = np.asarray(quaternion, float)
    return [float(x) for x in rodrigues.from_quaternion(np.array(q[0]), q[1:], lambda x, a, b: np.where(x >= 0, a, b))]


def _frame(origin, axes: np.ndarray) -> Frame:
    """A frame of ours at `origin` whose z and x are the columns 2 and 0 of `axes`."""
    return Frame(clean(origin), clean(axes[:, 2]), clean(axes[:, 0]))


def _axes_along(axis: np.ndarray) -> np.ndarray:
    """Axes (columns x, y, z) whose z is the unit `axis` and whose x is the unit axis least aligned with it."""
    z = axis / np.linalg.norm(axis)
    x = reference_direction(z)
    x = x - (x @ z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


class _Importer:
    def __init__(self, m, path: Path, ground: bool = True) -> None:
        import mujoco

        self.m, self.path, self.mujoco, self.ground = m, path, mujoco, ground
        self.names = SymbolNames()
        self.notes: list[str] = []
        self.labels: dict[int, str] = {0: GROUND}
        self.coordinate: dict[int, list[str]] = {}  # MuJoCo joint id -> our coordinate names
        self.model_name = bytes(m.names).split(b"\0")[0].decode("utf-8", "replace")  # the first of MuJoCo's names
        self.model = Model(name=one_line(self.model_name or path.stem, "mechanism"))

    def _name(self, kind, index: int) -> str:
        return self.mujoco.mj_id2name(self.m, kind, index) or ""

    def _body_name(self, i: int) -> str:
        return self._name(self.mujoco.mjtObj.mjOBJ_BODY, i) or f"body{i}"

    def _joint_name(self, j: int) -> str:
        return self._name(self.mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"

    def run(self) -> MjcfImport:
        m = self.m
        self.model.gravity = clean(m.opt.gravity)
        for i in range(1, m.nbody):
            self._add_body(i)
        for e in range(m.neq):
            self._add_equality(e)
        self._add_actuators()
        self._left_out()
        self.model.description = self._description()
        try:
            validate(self.model)
        except ModelError as exc:
            raise ModelError(f"{self.path}: {exc.where}", exc.problem, exc.value, exc.expected) from None
        self._close_loops()
        if self.ground and floats_freely(self.model):
            add_ground(self.model, self._collisions(), self.names, self.notes, self._ground_plane())
            validate(self.model)
        names = {self._joint_name(j): coordinates for j, coordinates in self.coordinate.items()}
        return MjcfImport(self.model, self.notes, names)

    # ------------------------------------------------------------------ bodies and their joints

    def _add_body(self, i: int) -> None:
        m = self.m
        name = self._body_name(i)
        label = self.names.label(name)
        self.labels[i] = label
        body = Body(label, one_line(name), self._inertia(i), source_name=name if name != label else None)
        body.shape = self._shape(i, name)
        placement = rotation(m.body_quat[i])
        joints = list(range(m.body_jntadr[i], m.body_jntadr[i] + m.body_jntnum[i]))
        parent = self.labels[int(m.body_parentid[i])]
        if not joints:
            where = Frame(clean(m.body_pos[i]), clean(placement[:, 2]), clean(placement[:, 0]))
            self.model.joints.append(Joint(self.names.joint(f"{label}_fixed"), "fixed", parent, label, where, Frame()))
        chain = [f"{label}__{k + 1}" for k in range(len(joints) - 1)]
        for k, j in enumerate(joints):
            child = chain[k] if k < len(chain) else label
            if child != label:
                self.model.bodies.append(Body(child, f"{name} (between its joints {k + 1} and {k + 2})"))
                self.names.taken.update(self.model.bodies[-1].parameter_names())
            on_parent = (m.body_pos[i], placement) if k == 0 else (np.zeros(3), np.eye(3))
            self._add_joint(j, parent if k == 0 else chain[k - 1], child, on_parent)
        self.model.bodies.append(body)

    def _add_joint(self, j: int, parent: str, child: str, on_parent: tuple[np.ndarray, np.ndarray]) -> None:
        """MuJoCo joint j between our bodies; `on_parent`: the child's reference pose in the parent's frame."""
        m, name = self.m, self._joint_name(j)
        kind, anchor = int(m.jnt_type[j]), np.asarray(m.jnt_pos[j], float)
        origin, placement = on_parent
        if kind == FREE:  # qpos: the body's position in the world and its quaternion (the world's children only)
            q0 = m.qpos0[m.jnt_qposadr[j] : m.jnt_qposadr[j] + 7]
            values = [*q0[:3], *rotation_parameters(q0[3:])]
            parts = [f"{name}_{s}" for s in ("x", "y", "z", "rx", "ry", "rz")]
            coordinates = [Coordinate(self.names.coordinate(p), float(v)) for p, v in zip(parts, values, strict=True)]
            joint = Joint(self.names.joint(name), "free", parent, child, Frame(), Frame(), coordinates)
        elif kind == BALL:  # MuJoCo's quaternion turns the body about the anchor from its reference pose
            parts = [f"{name}_{s}" for s in ("rx", "ry", "rz")]
            coordinates = [Coordinate(self.names.coordinate(p), 0.0) for p in parts]
            frames = Frame(clean(origin + placement @ anchor), clean(placement[:, 2]), clean(placement[:, 0]))
            joint = Joint(self.names.joint(name), "ball", parent, child, frames, Frame(clean(anchor)), coordinates)
        if kind in (FREE, BALL):
            self._left_out_on_ball(j, name)
        else:
            axes = _axes_along(np.asarray(m.jnt_axis[j], float))
            ref = float(m.qpos0[m.jnt_qposadr[j]])
            shift = np.zeros(3)
            if kind == HINGE:  # the parent frame turned back by ref, so that the frames meet at q = ref
                c, s = np.cos(ref), np.sin(ref)
                axes_on_parent = axes @ np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
            else:
                axes_on_parent, shift = axes, -ref * axes[:, 2]
            parent_frame = _frame(origin + placement @ (anchor + shift), placement @ axes_on_parent)
            coordinate = self._coordinate(j, name, ref)
            kind_name = "revolute" if kind == HINGE else "prismatic"
            joint = Joint(
                self.names.joint(name), kind_name, parent, child, parent_frame, _frame(anchor, axes), [coordinate]
            )
            self._joint_forces(j, name, coordinate.name)
        self.coordinate[j] = [c.name for c in joint.coordinates]
        joint.source_name = name if name != joint.name else None
        self.model.joints.append(joint)

    def _left_out_on_ball(self, j: int, name: str) -> None:
        """A ball's cone limit and a ball or free joint's damping, stiffness and armature have no form of ours."""
        m = self.m
        dofs = slice(int(m.jnt_dofadr[j]), int(m.jnt_dofadr[j]) + (6 if m.jnt_type[j] == FREE else 3))
        left = [
            what
            for what, value in (
                ("its cone limit", m.jnt_limited[j] and m.jnt_type[j] == BALL),
                ("damping", np.any(m.dof_damping[dofs])),
                ("stiffness", m.jnt_stiffness[j]),
                ("armature", np.any(m.dof_armature[dofs])),
            )
            if value
        ]
        if left:
            kind = "ball" if m.jnt_type[j] == BALL else "free"
            what = " and ".join(left)
            self.notes.append(f"joint '{name}' ({kind}): {what} left out (MB Studio has no limit or force element on "
                              "a ball or free joint)")  # fmt: skip

    def _coordinate(self, j: int, name: str, ref: float) -> Coordinate:
        coordinate = Coordinate(self.names.coordinate(name), ref)
        if self.m.jnt_limited[j]:
            low, high = (float(v) for v in self.m.jnt_range[j])
            coordinate.min, coordinate.max = low, high
            coordinate.initial = float(np.clip(ref, low, high))
        return coordinate

    def _joint_forces(self, j: int, name: str, coordinate: str) -> None:
        m = self.m
        dof = int(m.jnt_dofadr[j])
        damping, friction = float(m.dof_damping[dof]), float(m.dof_frictionloss[dof])
        if damping > 0 or friction > 0:
            element = JointFriction(self.names.element(f"{coordinate}_friction"), coordinate, damping, friction)
            self.model.forces.append(element)
            if friction > 0:
                self.notes.append(
                    f"joint '{name}': frictionloss {friction:g} is a smoothed Coulomb friction "
                    f"(tanh of the rate over {element.velocity_scale:g}), MuJoCo's a friction constraint"
                )
        stiffness = float(m.jnt_stiffness[j])
        if stiffness > 0:
            rest = float(m.qpos_spring[m.jnt_qposadr[j]])
            spring = JointSpringDamper(self.names.element(f"{coordinate}_spring"), coordinate, stiffness, 0.0, rest)
            self.model.forces.append(spring)
        armature = float(m.dof_armature[dof])
        if armature > 0:
            self.notes.append(
                f"joint '{name}': armature {armature:g} (a rotor's reflected inertia) has no MB Studio form and is "
                "left out: MuJoCo's mass matrix has it on its diagonal"
            )

    def _inertia(self, i: int) -> dict[str, float]:
        m = self.m
        mass = float(m.body_mass[i])
        axes = rotation(m.body_iquat[i])
        tensor = axes @ np.diag(np.asarray(m.body_inertia[i], float)) @ axes.T
        return dict(zip(INERTIA_NAMES, inertia_parameters(mass, m.body_ipos[i], tensor), strict=True))

    # ------------------------------------------------------------------ shapes

    def _shape(self, i: int, name: str) -> dict | None:
        m = self.m
        geoms = [g for g in range(m.body_geomadr[i], m.body_geomadr[i] + m.body_geomnum[i]) if m.geom_rgba[g][3] > 0]
        drawn = [g for g in geoms if m.geom_type[g] not in (GEOM_PLANE, GEOM_HFIELD)]
        if not drawn:
            return None
        if len(drawn) > 1:
            self.notes.append(f"body '{name}': {len(drawn)} geoms, the first is drawn")
        g = drawn[0]
        kind, size = int(m.geom_type[g]), np.asarray(m.geom_size[g], float)
        pose = rotation(m.geom_quat[g])
        origin = clean(m.geom_pos[g])
        if kind == GEOM_BOX:
            shape = {"type": "box", "size": clean(2 * size), "origin": origin, "z": clean(pose[:, 2]),
                     "x": clean(pose[:, 0])}  # fmt: skip
        elif kind in (GEOM_CYLINDER, GEOM_CAPSULE):
            shape = {"type": "cylinder", "radius": float(size[0]), "length": float(2 * size[1]),
                     "axis": clean(pose[:, 2]), "origin": origin}  # fmt: skip
        elif kind in (GEOM_SPHERE, GEOM_ELLIPSOID):
            shape = {
                "type": "sphere",
                "radius": float(size[0] if kind == GEOM_SPHERE else size.max()),
                "origin": origin,
            }
        else:
            shape = self._mesh(g, pose, name)
        if kind in (GEOM_CAPSULE, GEOM_ELLIPSOID):
            self.notes.append(f"body '{name}': its {('capsule', 'ellipsoid')[kind == GEOM_ELLIPSOID]} is drawn as a "
                              f"{shape['type']}")  # fmt: skip
        rgb = np.clip(np.asarray(m.geom_rgba[g], float)[:3], 0, 1)
        shape["color"] = "#" + "".join(f"{round(c * 255):02x}" for c in rgb)
        return shape

    def _mesh(self, g: int, pose: np.ndarray, name: str) -> dict:
        """The mesh file in the body frame: MuJoCo moves a mesh's vertices to its centre and principal axes
        (v = R_mᵀ (s v_file − p_m)), so the file's frame in the body is the geom's pose times that move's inverse."""
        m = self.m
        mesh = int(m.geom_dataid[g])
        start = int(m.mesh_pathadr[mesh])
        file = bytes(m.paths[start:]).split(b"\0")[0].decode() if start >= 0 else ""
        axes = pose @ rotation(m.mesh_quat[mesh]).T
        origin = np.asarray(m.geom_pos[g], float) - axes @ np.asarray(m.mesh_pos[mesh], float)
        shape = {"type": "mesh", "file": file, "origin": clean(origin), "z": clean(axes[:, 2]), "x": clean(axes[:, 0])}
        scale = np.asarray(m.mesh_scale[mesh], float)
        if not np.allclose(scale, 1.0):
            shape["scale"] = clean(scale)
        if not file:
            self.notes.append(f"body '{name}': its mesh is built in the file (no file to draw), drawn from its points")
            return {"type": "sphere", "radius": float(np.max(m.geom_rbound[g]) or 0.01), "origin": clean(m.geom_pos[g])}
        found = Path(file) if Path(file).is_absolute() else self.path.parent / file
        shape["file"] = str(found.resolve()) if found.is_file() else file
        return shape

    # ------------------------------------------------------------------ equality constraints

    def _add_equality(self, e: int) -> None:
        m = self.m
        kind = int(m.eq_type[e])
        name = self._name(self.mujoco.mjtObj.mjOBJ_EQUALITY, e) or f"equality{e}"
        where = f"{self.path}: equality {EQUALITY_KINDS.get(kind, kind)} '{name}'"
        if not m.eq_active0[e]:
            self.notes.append(f"equality '{name}' is inactive (active=\"false\") and is left out")
            return
        if kind in (CONNECT, WELD):
            self._cut_joint(e, kind, name)
        elif kind == JOINT_EQUALITY:
            self._coupling(e, name)
        else:
            raise ModelError(
                where,
                "constrains a tendon or a flex, which MB Studio's mechanisms do not have",
                EQUALITY_KINDS.get(kind, kind),
                "connect, weld or joint equalities",
            )

    def _ends(self, e: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(body, position, axes) of each end of a connect or weld, in its body's frame."""
        m, data = self.m, np.asarray(self.m.eq_data[e], float)
        if int(m.eq_objtype[e]) == OBJ_SITE:
            sites = (int(m.eq_obj1id[e]), int(m.eq_obj2id[e]))
            return [(int(m.site_bodyid[s]), np.asarray(m.site_pos[s], float), rotation(m.site_quat[s])) for s in sites]
        bodies = (int(m.eq_obj1id[e]), int(m.eq_obj2id[e]))
        if int(m.eq_type[e]) == CONNECT:  # the anchor in each body's frame (the compiler's second from qpos0)
            return [(bodies[0], data[0:3], np.eye(3)), (bodies[1], data[3:6], np.eye(3))]
        # weld: body2's pose relative to body1 is (relpos, relquat)
        return [(bodies[0], data[3:6], rotation(data[6:10])), (bodies[1], np.zeros(3), np.eye(3))]

    def _cut_joint(self, e: int, kind: int, name: str) -> None:
        (b1, p1, r1), (b2, p2, r2) = self._ends(e)
        type_ = "spherical" if kind == CONNECT else "fixed"
        parts = ("rz", "ry", "rx") if kind == CONNECT else ()
        coordinates = [Coordinate(self.names.coordinate(f"{name}_{s}"), 0.0) for s in parts]
        joint = Joint(self.names.joint(name), type_, self.labels[b1], self.labels[b2], _frame(p1, r1), _frame(p2, r2),
                      coordinates, cut=True)  # fmt: skip
        self.model.joints.append(joint)

    def _coupling(self, e: int, name: str) -> None:
        """MuJoCo's y − y0 = a0 + a1 (x − x0) + ... + a4 (x − x0)⁴ (x, y joint2's and joint1's positions, x0, y0
        their qpos0) as our follower y = Σ c_k x^k, or y held at y0 + a0 without joint2. MuJoCo's compiler
        allows hinge and slide joints only."""
        m, data = self.m, np.asarray(self.m.eq_data[e], float)
        j1, j2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        y0 = float(m.qpos0[m.jnt_qposadr[j1]])
        follower = self.coordinate[j1][0]
        if j2 < 0:
            add_coupling(self.model, self.names, name, follower, None, [y0 + data[0]])
            return
        x0 = float(m.qpos0[m.jnt_qposadr[j2]])
        polynomial = Polynomial(data[:5])(Polynomial([-x0, 1.0])) + y0  # composed with x − x0: in powers of x
        add_coupling(self.model, self.names, name, follower, self.coordinate[j2][0], list(polynomial.coef))

    # ------------------------------------------------------------------ the rest

    def _add_actuators(self) -> None:
        """A MuJoCo motor on a hinge or slide joint: an actuator of ours on its coordinate (force = gear · ctrl),
        zero until its input is given (a formula, a table, or an FMU's input)."""
        m, mj = self.m, self.mujoco
        for a in range(m.nu):
            name = self._name(mj.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator{a}"
            j = int(m.actuator_trnid[a][0])
            motor = int(m.actuator_trntype[a]) == int(mj.mjtTrn.mjTRN_JOINT) and int(m.actuator_dyntype[a]) == 0
            motor = motor and int(m.actuator_gaintype[a]) == 0 and int(m.actuator_biastype[a]) == 0
            if not motor or j not in self.coordinate or len(self.coordinate[j]) != 1:
                self.notes.append(f"actuator '{name}' is not a motor on a hinge or slide joint and is left out")
                continue
            coordinate = self.coordinate[j][0]
            self.model.forces.append(Actuator(self.names.element(name), coordinate, formula=0.0))
            gear = float(m.actuator_gear[a][0]) * float(m.actuator_gainprm[a][0])
            self.notes.append(f"actuator '{name}': the generalized force on {coordinate} (MuJoCo's ctrl × {gear:g})")

    def _left_out(self) -> None:
        m = self.m
        if m.ntendon:
            self.notes.append(f"{m.ntendon} tendon(s) left out (MB Studio has no tendons)")
        if m.nkey:
            self.notes.append(f"{m.nkey} keyframe(s) left out: the pose is MuJoCo's qpos0 (the joints' ref)")
        if not (self.ground and floats_freely(self.model)) and any(map(self._collides, range(m.ngeom))):
            self.notes.append("contacts are left out: geoms are drawn, they do not collide in MB Studio")

    # ------------------------------------------------------------------ contacts

    def _collides(self, g: int) -> bool:
        return bool(self.m.geom_contype[g] or self.m.geom_conaffinity[g])

    def _collisions(self) -> list[Collision]:
        """The colliding geoms of the moving bodies, in their bodies' frames (a mesh's vertices as MuJoCo placed
        them, in the geom's frame)."""
        m, out = self.m, []
        kinds = {GEOM_SPHERE: "sphere", GEOM_CAPSULE: "capsule", GEOM_CYLINDER: "cylinder", GEOM_BOX: "box",
                 GEOM_MESH: "mesh", GEOM_ELLIPSOID: "ellipsoid"}  # fmt: skip
        for g in range(m.ngeom):
            body, kind = int(m.geom_bodyid[g]), int(m.geom_type[g])
            if body == 0 or kind not in kinds or not self._collides(g):
                continue
            pose = np.eye(4)
            pose[:3, :3], pose[:3, 3] = rotation(m.geom_quat[g]), m.geom_pos[g]
            vertices = None
            if kind == GEOM_MESH:
                mesh = int(m.geom_dataid[g])
                start, count = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
                vertices = np.asarray(m.mesh_vert[start : start + count], float)
            name = self._name(self.mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom {g}"
            where = f"{kinds[kind]} '{name}' of body '{self._body_name(body)}'"
            out.append(
                Collision(self.labels[body], kinds[kind], pose, tuple(map(float, m.geom_size[g])), vertices, where)
            )
        return out

    def _ground_plane(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The first colliding plane geom of the world body (its origin and normal), None without one."""
        m = self.m
        for g in range(m.ngeom):
            if m.geom_bodyid[g] == 0 and m.geom_type[g] == GEOM_PLANE and self._collides(g):
                return np.asarray(m.geom_pos[g], float), rotation(m.geom_quat[g])[:, 2]
        return None

    def _close_loops(self) -> None:
        """The document's pose closed: the coordinates moved as little as they can onto the loops and couplings."""
        if not any(j.cut for j in self.model.joints) and not self.model.couplings:
            return
        mech = Mechanism(self.model)
        drawn = np.asarray(mech.tree.initial_coordinates(), float)
        try:
            q = mech.assemble_nearest(drawn)
        except AssemblyError as exc:
            self.notes.append(f"the loops do not close from MuJoCo's reference pose ({exc}); assemble in the window")
            return
        values = dict(zip(mech.coordinates, q, strict=True))
        for joint in self.model.joints:
            for c in joint.coordinates:
                if c.name in values:
                    c.initial = float(values[c.name])

    def _description(self) -> str:
        text = f"Imported from the MJCF file {self.path.name} (model '{self.model_name}') by MB Studio {__version__}."
        return text + "".join(f" {note}." for note in self.notes)
