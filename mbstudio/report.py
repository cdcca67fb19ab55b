"""The structural and assembly summary of a model, as `mbstudio check` prints it."""

from __future__ import annotations

import numpy as np

from .kinematics import Mechanism
from .model import AssemblyError, Model
from .model.validation import inertia_warnings


def check_report(model: Model) -> dict:
    """Bodies, joints, loops, couplings, both mobility counts, independent coordinates and assembly at the
    initial configuration (float64)."""
    mech = Mechanism(model)
    assembled, residual, message = True, 0.0, None
    try:
        q = mech.assemble(None)
        residual = float(np.abs(mech.residual(q)).max()) if mech.constraints.m else 0.0
    except AssemblyError as exc:
        assembled, residual, message = False, exc.residual, str(exc)
    report = {
        "model": model.name,
        "bodies": [b.label for b in model.bodies],
        "joints": [j.name for j in model.joints],
        "cut_joints": [j.name for j in mech.topology.cut],
        "loops": mech.topology.loops,
        "dof_grubler": mech.dof_grubler,
        "dof_jacobian": mech.dof,
        "redundant_constraints": mech.redundant_constraints,
        "couplings": [f"{c.name}: {c.formula()}" for c in model.couplings],
        "coordinates": mech.coordinates,
        "independent_coordinates": mech.independent,
        "inertial_parameters": len(model.inertial_parameter_names()),
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
        f"  degrees of freedom: {report['dof_jacobian']} (rank of the constraint Jacobian); "
        f"Grübler-Kutzbach count {report['dof_grubler']}",
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
