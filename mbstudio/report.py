"""The structural and assembly summary of a model, as `mbstudio check` prints it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .kinematics import Mechanism
from .kinematics.planar import planar_grubler_dof, plane_normal
from .model import AssemblyError, Model
from .model.document import INERTIA_NAMES
from .model.validation import inertia_warnings


def check(model: Model, say: Callable[[str], None] | None = None) -> dict:
    """The check report of `model`: structure, counts and assembly, what the compiled engine will be, the parallel
    machine. `say`: called with each step's text as it begins (a big model's progress). Nothing is traced or
    compiled: a check answers in seconds, and the first run builds the engine (or loads it from the cache)."""
    from .dynamics.pkm.report import pkm_report  # the parallel machines, imported when a check is run
    from .dynamics.pkm.topology import is_linkage

    report = _step(say, f"{len(model.bodies)} bodies: structure, counts and assembly", lambda: check_report(model))
    if report["assembled"]:
        report |= _engine(model)
    report["pkm"] = _step(say, "looking for a parallel machine's platform", lambda: pkm_report(model))
    if report["pkm"] is not None and is_linkage(model, report["dof_jacobian"]):
        report["pkm"], report["linkage"] = None, True
    elif _carried_body(report["pkm"]):
        # a body several chains carry, found by the search and not declared, that the task-space model refuses
        # (a suspension's upright turns as it moves): an ordinary closed-loop mechanism, not a parallel machine
        pkm = report["pkm"]
        report["pkm"], report["carried_body"] = None, {"body": pkm["platform"], "why_not": pkm["error"]}
    if say:
        say("done")
    return report


def _carried_body(pkm: dict | None) -> bool:
    return pkm is not None and "limb_count" not in pkm and pkm.get("platform_found") == "detected"


def _step(say: Callable[[str], None] | None, text: str, work: Callable):
    if say:
        say(text)
    return work()


def _engine(model: Model) -> dict:
    """What the compiled engine will be, without building it: too large for it (the numpy path), or native C when
    compiled code can be used here (CasADi's virtual machine otherwise, and why), built by the first run."""
    from .dynamics.engine import MAX_COORDINATES, fits_engine
    from .numerics.compiled import UNKNOWN_FAILURE, uncompiled_reason

    if not fits_engine(model):
        coordinates = sum(len(j.coordinates) for j in model.joints)
        reason = f"{coordinates} coordinates: the compiled engine is built for at most {MAX_COORDINATES}"
        return {"engine_native": False, "engine": f"not built: {reason} (simulation uses the numpy path)"}
    reason = uncompiled_reason()
    native = reason == UNKNOWN_FAILURE  # a compiler and a usable cache: whether it compiles, only a build says
    kind = "native C" if native else f"CasADi virtual machine: {reason}"
    return {"engine_native": native, "engine": f"{kind}, built (or loaded from the cache) by the first run"}


def check_report(model: Model) -> dict:
    """Bodies, joints, loops, couplings, both mobility counts (the planar one for a planar mechanism), independent
    coordinates and assembly at the initial configuration (float64)."""
    mech = Mechanism(model)
    assembled, residual, message = True, 0.0, None
    try:
        q = mech.assemble(None)[0]
        residual = float(np.abs(mech.residual(q)).max()) if mech.constraints.m else 0.0
    except AssemblyError as exc:
        assembled, residual, message = False, exc.residual, str(exc)
        q = mech.tree.initial_coordinates()
    normal = plane_normal(mech, q)
    report = {
        "model": model.name,
        "bodies": [b.label for b in model.bodies],
        "joints": [j.name for j in model.joints],
        "cut_joints": [j.name for j in mech.topology.cut],
        "loops": mech.topology.loops,
        "dof_grubler": mech.dof_grubler,
        "planar_normal": None if normal is None else [float(f"{x:.12g}") + 0.0 for x in normal],
        "dof_grubler_planar": None if normal is None else planar_grubler_dof(model),
        "dof_jacobian": mech.dof,
        "redundant_constraints": mech.redundant_constraints,
        "couplings": [f"{c.name}: {c.formula()}" for c in model.couplings],
        "coordinates": mech.coordinates,
        "independent_coordinates": mech.independent,
        "inertial_parameters": len(INERTIA_NAMES) * len(model.bodies),  # counted, not named: 10⁶ names at 10⁵ bodies
        "assembled": assembled,
        "residual": residual,
        "warnings": inertia_warnings(model),
    }
    if message:
        report["message"] = message
    return report


def format_report(report: dict) -> str:
    lines = [
        f"Model: {report['model']}",
        f"  bodies ({len(report['bodies'])}): {', '.join(report['bodies'])}",
        f"  joints ({len(report['joints'])}): {', '.join(report['joints'])}",
        f"  cut joints: {', '.join(report['cut_joints']) or '(none: a tree)'}",
        f"  independent loops: {report['loops']}",
        f"  degrees of freedom: {report['dof_jacobian']} (rank of the constraint Jacobian); {_counts(report)}",
    ]
    if report["couplings"]:
        lines.append(f"  couplings ({len(report['couplings'])}): " + "; ".join(report["couplings"]))
    if report["redundant_constraints"]:
        lines.append(
            f"  redundant constraints ({len(report['redundant_constraints'])}): "
            + "; ".join(report["redundant_constraints"])
        )
    lines += [
        f"  independent coordinates: {', '.join(report['independent_coordinates'])}",
        f"  inertial parameters: {report['inertial_parameters']}",
        f"  assembles at the initial configuration: {'yes' if report['assembled'] else 'NO'}"
        + ("" if report["residual"] is None else f" (largest loop residual {report['residual']:.3g})"),
    ]
    if "message" in report:
        lines.append(f"  {report['message']}")
    lines += [f"  warning: {w}" for w in report["warnings"]]
    return "\n".join(lines)


def _counts(report: dict) -> str:
    """The Grübler-Kutzbach count that applies, said with its formula: the planar one for a planar mechanism."""
    spatial, planar = report["dof_grubler"], report.get("dof_grubler_planar")
    if planar is None:
        return f"Grübler-Kutzbach count {spatial}"
    axes = f"joint axes along {_direction(report['planar_normal'])}"
    if planar == spatial:
        return f"Grübler-Kutzbach count {spatial} (a planar mechanism: {axes})"
    n, j = len(report["bodies"]) + 1, len(report["joints"])
    formula = f"3(n − 1) − 2j = 3·{n - 1} − 2·{j}" if 3 * (n - 1) - 2 * j == planar else "3(n − 1) − Σ(3 − f)"
    return (
        f"a planar mechanism ({axes}): planar Grübler count {formula} = {planar} (n = {n} links with the ground, "
        f"j = {j} joints; the spatial count, {spatial}, does not apply: the loops' out-of-plane equations hold "
        "identically)"
    )


def _direction(normal: list[float]) -> str:
    """'y' or '-z' for a world axis, else the components."""
    for k, name in enumerate("xyz"):
        if abs(abs(normal[k]) - 1) < 1e-12:
            return name if normal[k] > 0 else f"-{name}"
    return "[" + ", ".join(f"{x:.6g}" for x in normal) + "]"
