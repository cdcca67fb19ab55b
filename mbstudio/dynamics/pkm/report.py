"""What `mbstudio check` says of a parallel machine (key `pkm`): the platform, the limbs with their fundamental
cycles, whether each is hybrid, the counts of Müller (2021, sec. 2, 3.1) and which limbs are placed copies of
a representative limb."""

from __future__ import annotations

import numpy as np

from ...kinematics.topology import CUT_EQUATIONS
from ...model.document import Model
from ...model.errors import AssemblyError, ModelError
from .limb import structural_cycles
from .task_space import LimbInstance, ParallelMachine
from .topology import fundamental_cycles, is_hybrid, structure


def pkm_report(model: Model, pkm: ParallelMachine | None = None) -> dict | None:
    """The `pkm` entry of the check report (`pkm`: the machine when the caller has built it already); None for
    a model that is no parallel machine. A machine the modular model cannot take (a turning platform, coupled
    loops) keeps its structure and says why."""
    try:
        found = structure(model)
    except ModelError as exc:
        return {"error": str(exc)}
    if found is None:
        return None
    try:
        pkm = pkm or ParallelMachine(model)
    except (ModelError, AssemblyError) as exc:
        return {
            "platform": found.platform,
            "platform_found": found.found,
            "limbs": (limbs := _structures(model, found)),
            "hybrid": all(limb["hybrid"] for limb in limbs),
            "error": str(exc),
        }
    limbs = [_limb(pkm, k) for k in range(len(pkm.limbs))]
    return {
        "platform": pkm.platform,
        "platform_found": found.found,
        "task_coordinates": pkm.task_names,
        "platform_dof": len(pkm.axes),
        "dof": pkm.mech.dof,
        "actuated": pkm.actuated,
        "limb_count": len(limbs),
        "fundamental_cycles": sum(len(limb["fundamental_cycles"]) for limb in limbs) + len(limbs) - 1,
        "hybrid": all(limb["hybrid"] for limb in limbs),
        "limbs": limbs,
    }


def _structures(model: Model, found) -> list[dict]:
    return [_structure_only(model, limb, found.platform) for limb in found.limbs]


def _structure_only(model: Model, limb, platform: str) -> dict:
    """A limb's bodies, joints and cycles from the graph alone (when the modular model cannot be built)."""
    cycles = structural_cycles(model, limb, platform)
    return {
        "name": limb.name,
        "bodies": list(limb.bodies),
        "joints": list(limb.joint_names),
        "hybrid": is_hybrid(cycles),
        "fundamental_cycles": [
            {"cut_joint": c.cut, "bodies": list(c.bodies), "joints": list(c.joints)} for c in cycles
        ],
    }


def _limb(pkm: ParallelMachine, k: int) -> dict:
    instance = pkm.limbs[k]
    model = instance.model
    names = instance.mount.coordinate_names(pkm.model) if not instance.representative else None
    joint_names = dict(instance.mount.joints)
    cut = [joint_names[j.name] for j in model.mech.topology.cut]
    cycles, found = [], fundamental_cycles(instance.limb, pkm.platform, cut)
    for local, cycle in zip(model.cycles, found, strict=True):
        inside = len(local.dependent) + len(local.independent)
        cycles.append(
            {
                "cut_joint": cycle.cut,
                "bodies": list(cycle.bodies),
                "joints": list(cycle.joints),
                "equations": CUT_EQUATIONS[pkm.model.joint(cycle.cut).type],
                "rank": len(local.rows),
                "variables": inside,
                "dof": inside - len(local.rows),
            }
        )
    in_cycles = sum(c["variables"] for c in cycles)
    rank = int(np.linalg.matrix_rank(model.forward_jacobian(pkm.start[k])[0][0], tol=1e-9))
    joints = instance.limb.joints
    return {
        "name": instance.limb.name,
        "bodies": list(instance.limb.bodies),
        "joints": list(instance.limb.joint_names),
        "cut_joints": cut,
        "hybrid": is_hybrid(found),
        "fundamental_cycles": cycles,
        "counts": {
            "joints": len(joints),
            "joint_variables": sum(len(j.coordinates) for j in joints),
            "tree_joints": len(joints) - len(cut),
            "tree_variables": model.n,
            "cycles": len(cycles),
            "free_variables": model.n - in_cycles,
            "dof": len(model.independent),
            "platform_rank": rank,
        },
        "equimobile": rank == len(pkm.axes),
        "independent_coordinates": [
            names[c] if names else c for c in (model.coordinates[i] for i in model.independent)
        ],
        "placed_as": _placement(pkm, instance),
    }


def _placement(pkm: ParallelMachine, instance: LimbInstance) -> dict | None:
    """For a copy of a representative limb: which, and the mount's rotation (axis, degrees) and origin."""
    if instance.representative:
        return None
    from scipy.spatial.transform import Rotation  # 0.1 s to import: for the machines with placed copies

    vector = Rotation.from_matrix(instance.mount.rotation).as_rotvec()
    angle = float(np.linalg.norm(vector))
    axis = ((vector / angle).round(12) + 0.0).tolist() if angle > 1e-12 else [0.0, 0.0, 1.0]  # + 0.0: no -0.0
    return {
        "representative": instance.model.limb.name,
        "rotation_axis": axis,
        "rotation_deg": round(float(np.degrees(angle)), 9),
        "origin": np.round(instance.mount.origin, 12).tolist(),
    }


def format_pkm(report: dict | None) -> str:
    """The text `mbstudio check` prints after its summary."""
    if report is None:
        return "  parallel machine: no (no body is carried by two or more limbs)"
    if "limb_count" not in report:
        head = f"  parallel machine: platform '{report['platform']}'" if "platform" in report else "  parallel machine:"
        return f"{head}; the modular model does not apply: {report['error']}"
    hybrid = "hybrid" if report["hybrid"] else "NOT hybrid"
    lines = [
        f"  parallel machine: platform '{report['platform']}' ({report['platform_found']}), "
        f"{report['limb_count']} limbs, {report['fundamental_cycles']} fundamental cycles, {hybrid}; "
        f"task coordinates {', '.join(report['task_coordinates'])}; actuated {', '.join(report['actuated'])}",
    ]
    for limb in report["limbs"]:
        c = limb["counts"]
        placed = limb["placed_as"]
        where = (
            f"; placed as {placed['representative']} turned {placed['rotation_deg']:g}° about {placed['rotation_axis']}"
            if placed
            else "; representative"
        )
        lines.append(
            f"    {limb['name']}: {c['joints']} joints ({c['joint_variables']} variables), {c['tree_joints']} in the "
            f"tree ({c['tree_variables']} variables), {c['cycles']} cycle(s), {c['dof']} DOF, platform rank "
            f"{c['platform_rank']}{'' if limb['equimobile'] else ' (not equimobile)'}{where}"
        )
        for cycle in limb["fundamental_cycles"]:
            lines.append(
                f"      cycle cut at {cycle['cut_joint']}: {' – '.join(cycle['bodies'])}; {cycle['equations']} "
                f"equations of rank {cycle['rank']} on {cycle['variables']} variables, {cycle['dof']} DOF"
            )
    return "\n".join(lines)
