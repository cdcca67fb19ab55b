"""Linear models as files a control engineer loads: MATLAB .mat (scipy.io), JSON and NumPy .npz.

Each file holds A, B, C, D under those names; the names and units of the states, inputs and outputs; the
operating point (every coordinate's value q0, the independent velocities v0, the generalized forces tau0
holding it besides the document's own, the state x0 and outputs y0 there, the drift ẋ there, which is zero at an
equilibrium, the held coordinates' forces and the neutral directions); the eigenvalues; and the provenance.

    S = load('model.mat'); sys = ss(S.A, S.B, S.C, S.D, 'StateName', S.states, 'InputName', S.inputs, ...
                                     'OutputName', S.outputs);                     % MATLAB
    m = numpy.load("model.npz"); m["A"]                                            # Python

A family over a scheduling parameter (LPV) holds the matrices of every point stacked: in .mat as MATLAB's
model arrays want them, A(:, :, i) at schedule_values(i) (in schedule_unit), so `ss(S.A, S.B, S.C, S.D)` is the
model array; in JSON and .npz with the point first, A[i]. The per-point operating points are `points`.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from ..linear.linear_model import LinearModel
from ..linear.lpv import LinearFamily
from ..linear.modes import modes
from ..model import ModelError, write_atomic
from .display_units import DisplayUnits
from .json_text import json_text

FORMATS = ("mat", "json", "npz")
MATRICES = ("A", "B", "C", "D")
NAMES = ("states", "inputs", "outputs", "state_units", "input_units", "output_units")


def model_document(lin: LinearModel) -> dict:
    """The model as plain data (what every format holds)."""
    data = lin.to_dict()
    point = data.pop("operating_point")
    values = lin.eigenvalues
    return {
        **{k: data[k] for k in MATRICES},
        **_names(data),
        **_point(point, data),
        "eigenvalues": values,
        "frequencies_hz": lin.frequencies_hz,
        "damping_ratios": lin.damping_ratios,
        "provenance": data["provenance"],
    }


def family_document(family: LinearFamily) -> dict:
    """A family: the first model's names, every point's matrices stacked (point first) and operating point."""
    documents = [model_document(m) for m in family.models]
    return stacked_document(family.schedule, family.kind, family.unit, family.values, documents)


def stacked_document(schedule: str, kind: str, unit: str, values, documents: list[dict]) -> dict:
    """The family of the models' documents (model_document) at `values` (SI, of unit `unit`) of `schedule` (a
    "coordinate" or a "parameter"): what the command and the window write."""
    first = documents[0]
    return {
        **{k: np.stack([d[k] for d in documents]) for k in MATRICES},
        **{k: first[k] for k in (*NAMES, "coordinates")},
        "schedule": schedule,
        "schedule_kind": kind,
        "schedule_values": np.asarray(values, float),
        "schedule_unit": unit,
        "eigenvalues": np.stack([d["eigenvalues"] for d in documents]),
        "points": [{k: d[k] for k in POINT_KEYS} for d in documents],
        "provenance": [d["provenance"] for d in documents],
    }


POINT_KEYS = ("point_kind", "is_equilibrium", "t", "q0", "v0", "tau0", "x0", "y0", "drift", "held", "neutral")


def _names(data: dict) -> dict:
    return {k: list(data[k]) for k in NAMES}


def _point(point: dict, data: dict) -> dict:
    return {
        "point_kind": point["kind"],
        "is_equilibrium": bool(point["is_equilibrium"]),
        "t": float(point["t"]),
        "coordinates": list(point["coordinates"]),
        "q0": point["q"],
        "v0": point["v"],
        "tau0": point["tau"],
        "x0": data["x0"],
        "y0": data["y0"],
        "drift": data["drift"],
        "held": point["held"],
        "neutral": point["neutral"],
    }


def in_display_units(document: dict, units: DisplayUnits) -> dict:
    """A model's or a family's document with its states, inputs and outputs in display units (x = T x_SI with
    T diagonal, so A -> T_x A T_x⁻¹, B -> T_x B T_u⁻¹, ...: the same eigenvalues), their units renamed; x0, y0
    and the drift scaled with them. The operating point's coordinates (q0, v0, tau0) stay SI."""
    if units.is_si:
        return document
    sizes = {}
    for key in ("state", "input", "output"):
        names, si_units = document[f"{key}s"], document[f"{key}_units"]
        shown = [units.unit(u, n) for n, u in zip(names, si_units, strict=True)]
        sizes[key] = np.array([size for _, size in shown])
        document = {**document, f"{key}_units": [u for u, _ in shown]}
    x, u, y = sizes["state"], sizes["input"], sizes["output"]
    scaled = {
        "A": np.asarray(document["A"]) * x[None, :] / x[:, None],
        "B": np.asarray(document["B"]) * u[None, :] / x[:, None],
        "C": np.asarray(document["C"]) * x[None, :] / y[:, None],
        "D": np.asarray(document["D"]) * u[None, :] / y[:, None],
    }
    vectors = {"x0": x, "y0": y, "drift": x}
    if "points" in document:  # a family: every point's state and outputs, and the scheduling values
        points = [{**p, **{k: np.asarray(p[k]) / s for k, s in vectors.items()}} for p in document["points"]]
        unit, size = units.unit(document["schedule_unit"], document["schedule"])
        schedule = {"schedule_values": np.asarray(document["schedule_values"]) / size, "schedule_unit": unit}
        return {**document, **scaled, **schedule, "points": points, "display_units": units.spec()}
    return {
        **document,
        **scaled,
        **{k: np.asarray(document[k]) / s for k, s in vectors.items()},
        "display_units": units.spec(),
    }


def state_space_file(document: dict, fmt: str) -> bytes:
    """The document as the bytes of a .mat, .json or .npz file."""
    if fmt == "json":
        return json_text(_json(document)).encode("utf-8")
    out = io.BytesIO()
    if fmt == "mat":
        import scipy.io

        scipy.io.savemat(out, _matlab(document), long_field_names=True, do_compression=True)
    elif fmt == "npz":
        np.savez(out, **_numpy(document))
    else:
        raise ModelError("format", "is not a format of linear models", fmt, ", ".join(FORMATS))
    return out.getvalue()


def save_state_space(document: dict, path: str | Path) -> None:
    """Write atomically, in the format of the file's extension."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ModelError(str(path), "must end in .mat, .json or .npz", expected="model.mat, model.json or model.npz")
    write_atomic(path, state_space_file(document, fmt))


def _json(document: dict) -> dict:
    """Complex arrays as {"real": ..., "imag": ...}: JSON has no complex numbers."""
    return {k: {"real": np.real(v), "imag": np.imag(v)} if np.iscomplexobj(v) else v for k, v in document.items()}


def _matlab(value: object) -> object:
    """Structs for dicts, cell arrays for lists of text or of dicts, MATLAB's layout for stacked matrices."""
    if isinstance(value, dict):
        family = "schedule" in value
        return {
            k: np.moveaxis(np.asarray(v), 0, -1) if family and k in (*MATRICES, "eigenvalues") else _matlab(v)
            for k, v in value.items()
        }
    if isinstance(value, list) and (not value or not isinstance(value[0], (int, float))):
        cells = np.empty(len(value), dtype=object)
        cells[:] = [_matlab(v) for v in value]
        return cells
    if value is None:
        return np.zeros((0, 0))
    return value


def _numpy(document: dict) -> dict:
    """Arrays stay arrays, lists of names become string arrays, everything else (the operating point's
    held forces and neutral directions, the provenance, a family's points) JSON text."""
    out = {}
    for key, value in document.items():
        if isinstance(value, (np.ndarray, int, float, bool)):
            out[key] = np.asarray(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = np.array(value, dtype=str)
        elif isinstance(value, str):
            out[key] = np.array(value)
        else:
            out[key] = np.array(json_text(value))
    return out


def summary(name: str, lin: LinearModel) -> str:
    """The operating point, the signals and the modes, as the command prints them."""
    point = lin.point
    kind = {"equilibrium": "the equilibrium found", "initial": "the document's pose", "given": "the given state"}
    verdict = "at rest, q̈ = 0" if point.is_equilibrium else "NOT an equilibrium"
    lines = [f"{name}: linear model about {kind[point.kind]} ({verdict})"]
    if point.note:
        lines.append(f"  by default, {point.note}")
    lines.append("  " + ", ".join(f"{n} = {v + 0.0:.6g}" for n, v in point.values().items()))
    if not point.at_rest:
        lines.append("  velocities: " + ", ".join(f"d_{n} = {v:.6g}" for n, v in point.velocities().items()))
    if not point.is_equilibrium:
        lines.append(
            "  drift (ẋ at the point, kept with the model): "
            + ", ".join(f"{s} {x + 0.0:.4g}" for s, x in zip(lin.states, lin.drift, strict=True))  # + 0.0: no '-0'
        )
    if point.held:
        lines.append("  held by: " + ", ".join(f"{n} {f:.6g}" for n, f in point.held.items()))
    for direction in point.neutral_directions():
        lines.append("  neutral direction: " + ", ".join(f"{n} {c:+.4g}" for n, c in direction.items()))
    lines.append(f"  states {', '.join(lin.states)}")
    lines.append(f"  inputs {', '.join(lin.inputs)}; outputs {', '.join(lin.outputs)}")
    lines.append(
        f"  {'mode':>4s} {'natural [Hz]':>13s} {'damping':>9s} {'damped [Hz]':>12s} {'eigenvalue':>27s}  stability"
    )
    for k, mode in enumerate(modes(lin), start=1):
        value = mode.eigenvalue
        lines.append(
            f"  {k:4d} {mode.frequency_hz:13.6g} {mode.damping + 0.0:9.4g} {mode.damped_hz:12.6g} "
            f"{value.real + 0.0:13.6g} {value.imag + 0.0:+12.6g}j  "
            f"{mode.stability}, {mode.kind}, mostly {mode.dominant}"
        )
    return "\n".join(lines)
