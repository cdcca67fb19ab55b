"""Contact shapes from a robot file's collision geometry, and the ground plane an import adds under a floating
robot (docs/contact.md).

    add_ground(model, collisions, names, notes)   # contacts on the bodies, a plane under the lowest of them

Each collision geometry becomes contact shapes at body points (dynamics/contact_shapes.py): a sphere is itself; a
capsule its two end spheres; a box a box contact (its half extents and axes); a mesh whose vertices all lie
within a sphere about its bounding box's centre not much larger than its two largest extents (a robot's rounded
foot) that sphere, its exact shape in one contact point; another mesh a convex mesh contact, the vertices of its
convex hull; a cylinder eight small spheres around each end's rim (touching the faces they meet, a tenth of the
smallest half-size across), a first approximation. Ellipsoids get no contact and are named in a note. The plane
lies under the lowest point of any shape at the document's initial pose (or is the file's own plane), and all
contacts share named parameters, so that one edit changes the ground or the stiffness of every foot.

Each vertex of a mesh is a contact point evaluated at every step, and a humanoid's collision meshes have hundreds
(Talos: 47 meshes, up to 310 hull vertices each), so the import keeps a convex mesh contact only on the links
that stand on the ground at the initial pose (their lowest point within the default penetration δ_s of the
lowest of all: the feet), each reduced to at most MESH_VERTICES vertices (its sole's outline first: of the faces
facing the ground, the largest flat to within δ_s; then the greedy fit of contact_shapes.reduced_hull); the
meshes of the links above the ground (arms, grippers, knees) get no contact and are named in a note: a fall onto
them needs spheres or a box given by hand. Spheres, capsules, boxes and cylinders are kept wherever they are.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..dynamics.contact_shapes import CORNER_SIGNS, hull_vertices, reduced_hull
from ..kinematics import Mechanism
from ..model import Model, Parameter
from ..model.document import Contact, ForceMeasure
from ..model.errors import ModelError
from .import_names import SymbolNames, clean
from .urdf_angles import roll_pitch_yaw

# A mesh is round when no vertex lies farther from its bounding box's centre than this factor times the box's
# second largest half-extent: a sphere's vertices lie at 1, a cube's corners at sqrt(3), a rod's ends at its
# length over its width; a foot shaped as a slice of a ball (a wheel-like foot) is its ball
ROUND = 1.05
RIM_POINTS = 8  # spheres around each end of a cylinder
MESH_VERTICES = 32  # the most hull vertices an imported convex mesh contact takes
CORNER = 0.1  # a box's corner spheres (and a cylinder's rim spheres): radius a tenth of its smallest half-size


@dataclass(frozen=True)
class Collision:
    """One collision geometry on a body: `pose` (4, 4) of the geometry's frame in the body frame; `size` the
    radius (sphere), radius and half-length along z (capsule, cylinder) or half-sizes (box); `vertices` (N, 3) of
    a mesh in the geometry frame, None when it could not be read; `where` names it for the notes."""

    body: str
    kind: str
    pose: np.ndarray
    size: tuple[float, ...] = ()
    vertices: np.ndarray | None = None
    where: str = ""


@dataclass(frozen=True)
class GroundDefaults:
    """The compliant law's defaults for an imported robot: its stiffness set so that the robot's weight on its
    lowest contacts presses them in by `penetration` (k = W / (N δ_s^n)), its dissipation so that a contact at
    that load is critically damped (docs/contact.md derives c_d = 4/3 sqrt(n / (δ_s g)))."""

    penetration: float = 1e-3  # m
    exponent: float = 1.5
    friction: float = 1.0
    stiction_velocity: float = 1e-3  # m/s

    def stiffness(self, weight: float, lowest: int) -> float:
        return _two_digits(weight / (lowest * self.penetration**self.exponent))

    def dissipation(self, gravity: float) -> float:
        return _two_digits(4 / 3 * math.sqrt(self.exponent / (self.penetration * gravity)))


def _two_digits(value: float) -> float:
    return float(f"{value:.2g}")


@dataclass(frozen=True)
class ContactShape:
    """A contact from a collision geometry: its centre and the radius of its spheres, the Contact's shape fields
    (none for a sphere; shape and half_extents or vertices, and rpy) and the centres of its spheres relative to
    the centre (V, 3), all in body axes."""

    centre: np.ndarray
    radius: float
    fields: dict
    offsets: np.ndarray


def contact_shapes(collision: Collision) -> list[ContactShape] | None:
    """The contact shapes standing for the geometry (a mesh: its whole hull, which `add_ground` reduces); None for
    one that has none (an ellipsoid, an unread or flat mesh, or none at all)."""
    rotation, origin = collision.pose[:3, :3], collision.pose[:3, 3]
    if collision.kind == "box":
        half = np.asarray(collision.size, float)
        turned = not np.array_equal(rotation, np.eye(3))
        fields = {
            "shape": "box",
            "half_extents": clean(half),
            "rpy": clean(roll_pitch_yaw(rotation)) if turned else None,
        }
        return [ContactShape(origin, 0.0, fields, CORNER_SIGNS * half @ rotation.T)]
    if collision.kind == "mesh" and collision.vertices is not None and _round_mesh(collision.vertices) is None:
        try:
            hull = hull_vertices(collision.vertices)
        except ValueError:
            return None
        return [_mesh_shape(origin, hull @ rotation.T)]  # in body axes, from the geometry's origin
    spheres = contact_spheres(collision)
    return None if spheres is None else [ContactShape(c, r, {}, np.zeros((1, 3))) for c, r in spheres]


def _mesh_shape(centre: np.ndarray, local: np.ndarray) -> ContactShape:
    return ContactShape(centre, 0.0, {"shape": "mesh", "vertices": [clean(v) for v in local]}, local)


def contact_spheres(collision: Collision) -> list[tuple[np.ndarray, float]] | None:
    """The spheres (centre in body axes, radius) standing for a sphere, a capsule, a cylinder or a round mesh;
    None for another geometry."""
    kind, size = collision.kind, collision.size
    if kind == "sphere":
        local = [(np.zeros(3), size[0])]
    elif kind == "capsule":
        local = [(np.array([0.0, 0.0, s * size[1]]), size[0]) for s in (-1, 1)]
    elif kind == "cylinder":
        r = CORNER * min(size)
        turns = 2 * np.pi * np.arange(RIM_POINTS) / RIM_POINTS
        local = [(np.array([(size[0] - r) * math.cos(a), (size[0] - r) * math.sin(a), s * (size[1] - r)]), r)
                 for s in (-1, 1) for a in turns]  # fmt: skip
    elif kind == "mesh":
        local = _round_mesh(collision.vertices)
    else:
        local = None
    if local is None:
        return None
    rotation, origin = collision.pose[:3, :3], collision.pose[:3, 3]
    return [(origin + rotation @ centre, float(radius)) for centre, radius in local]


def _round_mesh(vertices: np.ndarray | None) -> list[tuple[np.ndarray, float]] | None:
    """The sphere about the bounding box's centre through the farthest vertex, when the mesh is round."""
    if vertices is None or len(vertices) == 0:
        return None
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    centre = (low + high) / 2
    radius = float(np.linalg.norm(vertices - centre, axis=1).max())
    return [(centre, radius)] if radius <= ROUND * float(np.sort(high - low)[1]) / 2 else None


def floats_freely(model: Model) -> bool:
    """Whether some body hangs on a free joint from the ground (a robot that can fall)."""
    return any(j.type in ("free", "free_euler") and j.parent in ("0", "ground") for j in model.joints)


def add_ground(
    model: Model,
    collisions: list[Collision],
    names: SymbolNames,
    notes: list[str],
    plane: tuple[np.ndarray, np.ndarray] | None = None,
    defaults: GroundDefaults = GroundDefaults(),
) -> None:
    """Contacts for the collisions' shapes against a ground plane: `plane` (origin, unit normal) when the file
    has one, else z = ground_z under the lowest point of any shape at the initial pose; a force measure for each
    contact (its forces, slip and penetration as series); the defaults and what was left out in `notes`."""
    shapes, left_out = [], []
    for collision in collisions:
        found = contact_shapes(collision)
        if found is None:
            left_out.append(collision.where)
        shapes += [(collision, shape) for shape in found or ()]
    if not shapes:
        if left_out:
            notes.append(f"no ground added: no collision geometry MB Studio turns into contacts ({_listed(left_out)})")
        return
    up = (0.0, 0.0, 1.0) if plane is None else plane[1]
    shapes, aloft = _standing_meshes(model, shapes, up, defaults.penetration)
    spheres = [(c.body, s.centre + offset, s.radius) for c, s in shapes for offset in s.offsets]  # contact points
    bottoms = sphere_bottoms(model, spheres, up)
    level = plane[0] @ plane[1] if plane is not None else float(bottoms.min())
    lowest = int(np.sum(bottoms - bottoms.min() <= defaults.penetration))
    mass = sum(float(b.inertia["m"]) for b in model.bodies)
    g = float(np.linalg.norm(np.asarray(model.gravity, float)))
    height = level if plane is None else None
    symbols = _parameters(model, names, defaults, mass * g, max(lowest, 1), g, height)
    origin, normal = ([0.0, 0.0, symbols["ground_z"]], [0.0, 0.0, 1.0]) if plane is None else map(clean, plane)
    on_body = Counter(collision.body for collision, _ in shapes)
    for body, shape in ((collision.body, shape) for collision, shape in shapes):
        points = model.body(body).points
        point = _free_name(
            points, "contact" if on_body[body] == 1 else f"contact{sum(p.startswith('contact') for p in points) + 1}"
        )
        points[point] = clean(shape.centre)
        name = names.element(f"{body}_{point}")
        model.forces.append(Contact(name, body, point, _rounded(shape.radius), symbols["contact_k"],
                                    symbols["contact_n"], symbols["contact_cd"], symbols["contact_mu"],
                                    symbols["contact_vs"], list(origin), list(normal), **shape.fields))  # fmt: skip
        model.measures.append(ForceMeasure(names.element(f"{name}_f"), name))
    notes.append(_ground_note(model, len(shapes), lowest, height, symbols, left_out, aloft))


def _standing_meshes(model: Model, shapes: list, up, reach: float) -> tuple[list, list[str]]:
    """The shapes with a convex mesh kept only on a link standing on the ground at the initial pose (its lowest
    vertex within `reach` of the lowest point of all, along `up`), reduced to at most MESH_VERTICES vertices, its
    sole's outline (`_sole`) and its lowest vertex first; and the places of the meshes left out."""
    points = [(c.body, s.centre + offset, s.radius) for c, s in shapes for offset in s.offsets]
    bottoms = sphere_bottoms(model, points, up)
    ends = np.cumsum([len(shape.offsets) for _, shape in shapes])
    kept, aloft, lowest, rotations = [], [], float(bottoms.min()), None
    for (collision, shape), end in zip(shapes, ends, strict=True):
        heights = bottoms[end - len(shape.offsets) : end]
        if shape.fields.get("shape") != "mesh":
            kept.append((collision, shape))
        elif heights.min() - lowest > reach:
            aloft.append(collision.where)
        else:
            rotations = initial_rotations(model) if rotations is None else rotations
            down = -rotations[collision.body].T @ np.asarray(up, float)  # the ground's side, in body axes
            first = np.r_[_sole(shape.offsets, down, reach), np.argmin(heights)]  # and the lowest: the ground's
            kept.append((collision, _mesh_shape(shape.centre, reduced_hull(shape.offsets, MESH_VERTICES, first))))
    return kept, aloft


def _sole(vertices: np.ndarray, down: np.ndarray, reach: float) -> np.ndarray:
    """The indices of the outline of a hull's sole: of the faces facing `down` (their outward normal n with
    n·down > 0), the one whose vertices within `reach` of its plane cover the largest area, fewer than
    MESH_VERTICES of its outline's vertices, evenly along it. A foot's sole, flat to a millimetre, whichever way
    the initial pose tilts it (Talos' knees start at their limit, its soles 15° from the ground)."""
    from scipy.spatial import ConvexHull, QhullError

    best, area = np.zeros(0, int), 0.0
    for normal in ConvexHull(vertices).equations[:, :3]:
        heights = vertices @ normal
        face = np.flatnonzero(heights >= heights.max() - reach)
        if normal @ down <= 0 or len(face) < 3:
            continue
        with contextlib.suppress(QhullError):  # the face's points on a line: no area
            outline = ConvexHull(vertices[face] @ np.linalg.svd(normal[None])[2][1:].T)
            if outline.volume > area:
                best, area = face[outline.vertices], outline.volume
    return best[np.linspace(0, len(best) - 1, min(len(best), MESH_VERTICES - 1)).astype(int)]


def initial_rotations(model: Model) -> dict[str, np.ndarray]:
    """Each body's rotation (3, 3) in world axes at the document's initial pose."""
    mech = Mechanism(model)
    poses = mech.poses(np.asarray(mech.tree.initial_coordinates(), float)[None])
    return {body: np.asarray(pose[0][0], float) for body, pose in poses.items()}


def _free_name(points: dict, candidate: str) -> str:
    """`candidate`, or it with _2, _3, ... when the body already has a point of that name."""
    name, n = candidate, 1
    while name in points:
        n += 1
        name = f"{candidate}_{n}"
    return name


def _rounded(radius: float) -> float:
    return float(f"{radius:.12g}")


def sphere_bottoms(model: Model, spheres: list, normal=(0.0, 0.0, 1.0)) -> np.ndarray:
    """The height along `normal` of each sphere's lowest point, (body label, centre in body axes, radius, ...),
    at the document's initial pose (m,)."""
    mech = Mechanism(model)
    poses = mech.poses(np.asarray(mech.tree.initial_coordinates(), float)[None])
    normal = np.asarray(normal, float)
    out = []
    for body, centre, radius, *_ in spheres:
        rotation, origin = (np.asarray(x[0], float) for x in poses[body])
        out.append((origin + rotation @ np.asarray(centre, float)) @ normal - radius)
    return np.array(out)


def _parameters(model: Model, names: SymbolNames, defaults: GroundDefaults, weight: float, lowest: int, g: float,
                height: float | None) -> dict[str, str]:  # fmt: skip
    """The named parameters every contact shares, each name made unique; ground_z only for a plane of ours."""
    values = {
        "contact_k": (defaults.stiffness(weight, lowest), f"N/m^{defaults.exponent:g}", "contact stiffness k"),
        "contact_n": (defaults.exponent, None, "contact force exponent n (1.5: Hertz)"),
        "contact_cd": (defaults.dissipation(g), "s/m", "Hunt-Crossley dissipation c_d"),
        "contact_mu": (defaults.friction, None, "Coulomb friction coefficient"),
        "contact_vs": (defaults.stiction_velocity, "m/s", "stiction velocity of the regularised friction"),
    }
    if height is not None:
        values["ground_z"] = (_rounded(height), "m", "height of the ground plane")
    symbols = {}
    for key, (value, unit, text) in values.items():
        symbols[key] = names.element(key)
        model.parameters.append(Parameter(symbols[key], value, unit, text))
    return symbols


def _ground_note(model: Model, count: int, lowest: int, height, symbols: dict, left_out: list[str],
                 aloft: list[str]) -> str:  # fmt: skip
    v = {key: model.parameter_values()[name] for key, name in symbols.items()}
    where = (f"a ground plane at z = {height:.6g} m under the lowest collision geometry (parameter "
             f"{symbols['ground_z']})" if height is not None else "the file's ground plane")  # fmt: skip
    text = (
        f"{where}, touched by {count} contact{'s' * (count != 1)} from the collision geometry (spheres; capsules' "
        "end spheres; boxes; round meshes as their sphere; small spheres around cylinders' rims; convex meshes "
        f"only on the links standing on the ground, as at most {MESH_VERTICES} of their hull's vertices, their "
        "sole's outline first); the compliant contact's defaults, shared parameters: "
        f"k = {v['contact_k']:g} N/m^{v['contact_n']:g} (the weight on the {lowest} lowest contact "
        f"point{'s' * (lowest != 1)} presses {'them' if lowest != 1 else 'it'} in by about 1 mm), "
        f"c_d = {v['contact_cd']:g} s/m (critically damped at that load), "
        f"μ = {v['contact_mu']:g}, v_s = {v['contact_vs']:g} m/s; --no-ground leaves the ground out"
    )
    if aloft:
        text += (f"; no contact for the {len(aloft)} mesh{'es' * (len(aloft) != 1)} above the ground at the initial "
                 f"pose ({_listed(aloft)}; each vertex would be a contact point at every step: give such a link "
                 "spheres or a box where it may touch)")  # fmt: skip
    if left_out:
        text += f"; no contact for {_listed(left_out)} (unread, flat, or a shape without contact)"
    return text


def _listed(items: list[str], most: int = 6) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def mesh_file_vertices(path, scale=None) -> list[list[float]]:
    """The vertices of the convex hull of a mesh file (STL, OBJ, PLY, ... as trimesh reads them), scaled: a mesh
    contact's vertices; ModelError when it cannot be read or spans no volume."""
    try:
        import trimesh

        vertices = np.asarray(trimesh.load(str(path), force="mesh").vertices, float)
    except Exception as error:  # any reader's failure is the file's: named, nothing changed
        raise ModelError("vertices", f"could not be read from the mesh file ({error})", str(path),
                         "a mesh file trimesh reads (STL, OBJ, PLY, ...)") from None  # fmt: skip
    if scale is not None:
        vertices = vertices * np.broadcast_to(np.asarray(scale, float), (3,))
    try:
        return [clean(v) for v in hull_vertices(vertices)]
    except ValueError as error:
        raise ModelError("vertices", str(error), str(path), "a mesh that encloses a volume") from None
