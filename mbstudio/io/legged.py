"""A legged robot standing or trotting under joint PD control on the compliant ground (docs/contact.md).

    model = solo12("stand")           # solo12 from example-robot-data, its ground and foot contacts from the import
    model = solo12("trot")            # the same, its joints following a trot
    stand(model, pose, kp, kd)        # any imported floating robot: PD hold at `pose`, resting on its ground

The PD control is a joint spring-damper per joint, −k_p (q − q_ref(t)) − k_d q̇ (force_laws/coordinate_laws.py):
its rest q_ref is the pose, or an expression in t for a prescribed gait. The robot starts at the pose, its base
lowered so that its lowest contact sphere is pressed in by the static penetration of an even share of its weight.
"""

from __future__ import annotations

import math

from ..model import Model
from ..model.document import Contact, JointSpringDamper
from .collision_geometry import sphere_bottoms

# example-robot-data's "standing" configuration of solo12 (solo.srdf): the knees bent back in front, forward behind
SOLO12_STANDING = {
    **{f"{leg}_{j}": v for leg in ("FL", "FR") for j, v in (("HAA", 0.0), ("HFE", 0.8), ("KFE", -1.6))},
    **{f"{leg}_{j}": v for leg in ("HL", "HR") for j, v in (("HAA", 0.0), ("HFE", -0.8), ("KFE", 1.6))},
}
SOLO12_GAINS = (5.0, 0.2)  # k_p [N m/rad], k_d [N m s/rad]: a leg's joint sags by a few degrees under its share
# stiffer for the trot: with the standing gains a leg in the air lags its rest and the front feet never left the
# ground (the diagonal pair's weight tips the body onto them); with these the swing feet clear it by ~3 cm
TROT_GAINS = (20.0, 0.3)
TROT_PAIRS = (("FL", "HR"), ("FR", "HL"))  # diagonal pairs, half a period apart


def stand(model: Model, pose: dict[str, float], kp: float, kd: float, gait: dict[str, str] | None = None) -> Model:
    """A copy of the imported floating robot `model` holding `pose` (coordinate -> rad) by a PD spring-damper on
    each coordinate named, its rest the pose or `gait`'s expression in t; the ground at z = 0 (parameter
    ground_z of the import) and the base lowered onto it."""
    out = model.copy()
    for joint in out.joints:
        for c in joint.coordinates:
            if c.name in pose:
                c.initial = float(pose[c.name])
    rests = {name: (gait or {}).get(name, pose[name]) for name in pose}
    out.forces += [JointSpringDamper(f"pd_{name}", name, kp, kd, rest) for name, rest in rests.items()]
    for p in out.parameters:
        if p.name == "ground_z":
            p.value = 0.0
    _rest_on_ground(out)
    return out


def _rest_on_ground(model: Model) -> None:
    """Move the floating base along z so that its lowest contact is pressed in by the static penetration of a
    quarter of the weight (the stance's expected share)."""
    contacts = [f for f in model.forces if isinstance(f, Contact)]
    values = model.parameter_values()
    spheres = [(c.body, model.body(c.body).points[c.point], _number(c.radius, values)) for c in contacts]
    lowest = float(sphere_bottoms(model, spheres).min()) - _number(contacts[0].plane_origin[2], values)
    weight = sum(float(b.inertia["m"]) for b in model.bodies) * abs(float(model.gravity[2]))
    k, n = _number(contacts[0].stiffness, values), _number(contacts[0].exponent, values)
    root = next(j for j in model.joints if j.type in ("free", "free_euler") and j.parent in ("0", "ground"))
    z = root.coordinates[2]
    z.initial = float(z.initial or 0.0) - lowest - (weight / 4 / k) ** (1 / n)


def _number(value, values: dict) -> float:
    return float(values[value]) if isinstance(value, str) else float(value)


def trot_gait(pose: dict[str, float], frequency: float = 2.0, lift: float = 0.5, swing: float = 0.2) -> dict:
    """Rests for a trot of solo12: in its half of each period a diagonal pair bends its knees by up to `lift` rad
    (its hips by half that the other way, so that the foot rises under the hip), lifting its feet, while its hips
    swing forward by 2 `swing` rad; in the other half, its feet on the ground, the hips sweep back by as much,
    pushing the body forward (a hip angle that grows moves the foot back: positive HFE turns the leg about +y).
    The other pair does the same half a period later. The lift (max(0, sin))² = ((s + sqrt(s²)) / 2)² is smooth."""
    rests = {}
    for k, pair in enumerate(TROT_PAIRS):
        phase = f"({2 * math.pi * frequency:.12g} * t + {k * math.pi:.12g})"
        up = f"((sin{phase} + sqrt(sin{phase}**2)) / 2)**2"
        for leg in pair:
            bend = 1 if leg[0] == "F" else -1  # the front knees bend backwards (negative), the hind forwards
            hip, knee = pose[f"{leg}_HFE"], pose[f"{leg}_KFE"]
            rests[f"{leg}_HFE"] = f"{hip} + {bend * lift / 2} * {up} + {swing} * cos{phase}"
            rests[f"{leg}_KFE"] = f"{knee} - {bend * lift} * {up}"
    return rests


def solo12(gait: str = "stand", frequency: float = 2.0) -> Model:
    """solo12 from example-robot-data, imported with its ground (foot spheres from its collision meshes), standing
    at its nominal pose under PD control ("stand") or trotting from a prescribed joint trajectory ("trot")."""
    from .example_robots import robot_path
    from .urdf_import import import_urdf

    imported = import_urdf(robot_path("solo12")).model
    kp, kd = TROT_GAINS if gait == "trot" else SOLO12_GAINS
    rests = trot_gait(SOLO12_STANDING, frequency) if gait == "trot" else None
    return stand(imported, SOLO12_STANDING, kp, kd, rests)
