"""Contact shapes from a robot file's collision geometry, and the ground plane an import adds under a floating
robot (docs/contact.md).

    add_ground(model, collisions, names, notes)   # contacts on the bodies, a plane under the lowest of them

Each collision geometry becomes contact shapes at body points (dynamics/contact_shapes.py): a sphere is itself; a
capsule its two end spheres; a box a box contact (its half extents and axes); a mesh whose vertices all lie
within a sphere about its bounding box's centre not much larger than its two largest extents (a robot's rounded
foot) that sphere, its exact shape in one contact point; another mesh a convex mesh contact, the vertices of its
convex hull, when that hull has at most MESH_VERTICES of them (each vertex is a contact point evaluated at every
step: a visual mesh's hundreds are named in a note instead); a cylinder eight small spheres around each end's
rim (touching the faces they meet, a tenth of the smallest half-size across), a first approximation. Ellipsoids get
no contact and are named in a note. The plane lies under the lowest point of any shape at the document's initial
pose (or is the file's own plane), and all contacts share named parameters, so that one edit changes the ground
or the stiffness of every foot.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..dynamics.contact_shapes import CORNER_SIGNS, hull_vertices
from ..kinematics import Mechanism
from ..model import Model, Parameter
from ..model.document import Contact, ForceMeasure
from ..model.errors import ModelError
from .import_names import SymbolNames, clean

# A mesh is round when no vertex lies farther from its bounding box's centre than this factor times the box's
# second largest half-extent: a sphere's vertices lie at 1, a cube's corners at sqrt(3), a rod's ends at its
# length over its width; a foot shaped as a slice of a ball (a wheel-like foot) is its ball
ROUND = 1.05
RIM_POINTS = 8  # spheres around each end of a cylinder
MESH_VERTICES = 64  # the most hull vertices an imported convex mesh contact takes
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
    """The contact shapes standing for the geometry; None for one that has none (an ellipsoid, an unread mesh, a
    mesh whose hull has more than MESH_VERTICES vertices, or none at all)."""
    rotation, origin = collision.pose[:3, :3], collision.pose[:3, 3]
    if collision.kind == "box":
        half = np.asarray(collision.size, float)
        turned = not np.array_equal(rotation, np.eye(3))
        fields = {"shape": "box", "half_extents": clean(half), "rpy": clean(_angles(rotation)) if turned else None}
        return [ContactShape(origin, 0.0, fields, CORNER_SIGNS * half @ rotation.T)]
    if collision.kind == "mesh" and collision.vertices is not None and _round_mesh(collision.vertices) is None:
        try:
            hull = hull_vertices(collision.vertices)
        except ValueError:
            return None
        if len(hull) > MESH_VERTICES:
            return None
        local = hull @ rotation.T  # in body axes, from the geometry's origin
        return [ContactShape(origin, 0.0, {"shape": "mesh", "vertices": [clean(v) for v in local]}, local)]
    spheres = contact_spheres(collision)
    return None if spheres is None else [ContactShape(c, r, {}, np.zeros((1, 3))) for c, r in spheres]


def _angles(rotation: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) with R = Rz(yaw) Ry(pitch) Rx(roll), read without snapping (contact_shapes.rpy_rotation
    rebuilds R from them to rounding away from pitch ±π/2)."""
    pitch = math.atan2(-rotation[2, 0], math.hypot(rotation[0, 0], rotation[1, 0]))
    return math.atan2(rotation[2, 1], rotation[2, 2]), pitch, math.atan2(rotation[1, 0], rotation[0, 0])


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
        shapes += [(collision.body, shape) for shape in found or ()]
    if not shapes:
        if left_out:
            notes.append(f"no ground added: no collision geometry MB Studio turns into contacts ({_listed(left_out)})")
        return
    spheres = [(body, s.centre + offset, s.radius) for body, s in shapes for offset in s.offsets]  # contact points
    bottoms = sphere_bottoms(model, spheres, (0.0, 0.0, 1.0) if plane is None else plane[1])
    level = plane[0] @ plane[1] if plane is not None else float(bottoms.min())
    lowest = int(np.sum(bottoms - bottoms.min() <= defaults.penetration))
    mass = sum(float(b.inertia["m"]) for b in model.bodies)
    g = float(np.linalg.norm(np.asarray(model.gravity, float)))
    height = level if plane is None else None
    symbols = _parameters(model, names, defaults, mass * g, max(lowest, 1), g, height)
    origin, normal = ([0.0, 0.0, symbols["ground_z"]], [0.0, 0.0, 1.0]) if plane is None else map(clean, plane)
    on_body = Counter(body for body, _ in shapes)
    for body, shape in shapes:
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
    notes.append(_ground_note(model, len(shapes), lowest, height, symbols, left_out))


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


def _ground_note(model: Model, count: int, lowest: int, height, symbols: dict, left_out: list[str]) -> str:
    v = {key: model.parameter_values()[name] for key, name in symbols.items()}
    where = (f"a ground plane at z = {height:.6g} m under the lowest collision geometry (parameter "
             f"{symbols['ground_z']})" if height is not None else "the file's ground plane")  # fmt: skip
    text = (
        f"{where}, touched by {count} contact{'s' * (count != 1)} from the collision geometry (spheres; capsules' "
        "end spheres; boxes; convex meshes as their hull's vertices; round meshes as their sphere; small spheres "
        "around cylinders' rims); the compliant contact's defaults, shared parameters: "
        f"k = {v['contact_k']:g} N/m^{v['contact_n']:g} (the weight on the {lowest} lowest contact "
        f"point{'s' * (lowest != 1)} presses {'them' if lowest != 1 else 'it'} in by about 1 mm), "
        f"c_d = {v['contact_cd']:g} s/m (critically damped at that load), "
        f"μ = {v['contact_mu']:g}, v_s = {v['contact_vs']:g} m/s; --no-ground leaves the ground out"
    )
    if left_out:
        text += (f"; no contact for {_listed(left_out)} (unread, or a mesh whose convex hull has more than "
                 f"{MESH_VERTICES} vertices: give it a simplified convex mesh, a box or spheres)")  # fmt: skip
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
