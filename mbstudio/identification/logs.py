"""Measured logs for identification: a CSV file of time, encoder positions and actuator forces, read and checked.

The format (docs/identification.md): one header line, then one row per sample; lines starting with `#` are
comments. Columns:
  - `t`: the time [s];
  - one per independent coordinate of the model, named as in the model: its position (rad or m);
  - `tau_<coordinate>` per actuated coordinate (the model's `actuated`, else its independent coordinates): the
    actuator's force or torque (N·m for a revolute coordinate, N for a prismatic one).
  - optionally `d_<coordinate>` per independent coordinate (all of them or none): its velocity as the drive
    measures it (rad/s or m/s), named as `mbstudio simulate` writes it (`<coordinate>_dot`, other programs'
    spelling, is read as `d_<coordinate>` with a note); the accelerations are then its derivative,
    where positions alone need a second difference that raises the encoders' noise by ω².
A header may carry a unit, `name [unit]` (`theta1 [deg]`, `tau_theta1 [N·m]`, `t [ms]`); values are converted to
SI as units in model files are (model/units.py), and a unit of the wrong kind (mm for an angle) is refused. The
time must rise at a constant step (within IRREGULAR_STEP); every value must be a finite number. Every problem is
a ModelError naming the file, the column and the row.

Logs as robots write them carry more: a dependent coordinate's encoder (a mimic finger, a loop's passive joint) is
checked against the positions the model gives it from the independent ones, and set aside (the model gives it); any
other column (motor currents, temperatures) is ignored. Both are said in the log's `notes`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..kinematics.mechanism import Mechanism
from ..model import units
from ..model.errors import ModelError
from ..model.typed_numbers import rate_spelled_otherwise
from .observation import branch_guide

TORQUE_PREFIX = "tau_"
VELOCITY_PREFIX = "d_"  # a rate's one name in mbstudio's tables (docs/file-format.md)
AGREEMENT_STEPS = 4  # a dependent coordinate agrees when within this many of the log's resolution steps
IRREGULAR_STEP = 0.01  # a time step further than this fraction from the median step makes the log irregular
MAX_BYTES = 500_000_000  # a log larger than this is refused before it is read (about 5 million rows of 10 columns)
# what each kind of column measures -> the SI unit its values are converted to (a unit given must have its dimension)
KINDS = {
    "time": units.TIME,
    "angle": units.ANGLE,
    "length": units.LENGTH,
    "torque": units.TORQUE,
    "force": units.FORCE,
    "angular velocity": units.ANGULAR_VELOCITY,
    "velocity": units.VELOCITY,
}


@dataclass
class MeasuredLog:
    """A log in SI units: `positions` (N, n_ind) in the order of `coordinates` (the mechanism's independent
    ones), `forces` (N, n_act) in the order of `actuated`."""

    source: str
    t: np.ndarray
    coordinates: list[str]
    positions: np.ndarray
    actuated: list[str]
    forces: np.ndarray
    units: dict[str, str] = field(default_factory=dict)  # column -> the unit its header gave ("" for SI)
    sha256: str = ""
    notes: list[str] = field(default_factory=list)  # the columns set aside or ignored, and why
    velocities: np.ndarray | None = None  # (N, n_ind) logged velocities, when the log has them

    @property
    def step(self) -> float:
        return float(np.median(np.diff(self.t)))

    @property
    def rate(self) -> float:
        """Samples per second."""
        return 1.0 / self.step

    def provenance(self) -> dict:
        return {"file": self.source, "sha256": self.sha256, "samples": len(self.t), "rate_hz": self.rate}


def actuated_names(mech: Mechanism) -> list[str]:
    """The coordinates whose forces a log carries: the model's actuated ones, else the independent ones."""
    return list(mech.model.actuated or mech.independent)


def read_log(path: str | Path, mech: Mechanism) -> MeasuredLog:
    """The log at `path` for `mech`, checked and in SI units (see the module docstring)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ModelError(str(path), "cannot be read", str(exc), "a CSV log file") from None
    if size > MAX_BYTES:
        raise ModelError(str(path), "is too large to read", f"{size} bytes", f"at most {MAX_BYTES} bytes")
    try:
        data = path.read_bytes()
        text = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(str(path), "cannot be read as UTF-8 text", str(exc), "a CSV log file") from None
    log = parse_log(text, mech, str(path))
    log.sha256 = hashlib.sha256(data).hexdigest()
    return log


def parse_log(text: str, mech: Mechanism, source: str = "log") -> MeasuredLog:
    """The log in `text` (CSV) for `mech`; `source` names it in messages."""
    try:
        rows = [
            (k + 1, r) for k, r in enumerate(csv.reader(io.StringIO(text))) if r and not r[0].lstrip().startswith("#")
        ]
    except csv.Error as exc:  # a carriage return inside a field, say
        raise ModelError(
            source, f"is not a readable CSV table: {exc}", None, "a header line, then one row per sample"
        ) from None
    if not rows:
        raise ModelError(source, "is empty", None, "a header line, then one row per sample")
    header_line, header = rows[0]
    columns, spelling = _rate_names([_split_header(name) for name in header], mech)
    names = [n for n, _ in columns]
    kinds = _column_kinds(mech, source)
    _check_names(names, kinds, source)
    dependent = [n for n in names if n not in kinds and n in mech.coordinates]
    kinds |= {n: "angle" if _revolute(mech, n) else "length" for n in dependent}
    rates = _velocity_kinds(mech, names, source)
    kinds |= rates
    values = _numbers(rows[1:], names, source, set(kinds))
    scale = {name: _unit_scale(source, name, unit, kinds[name]) for name, unit in columns if name in kinds}
    index = {name: i for i, name in enumerate(names)}
    column = {name: values[:, index[name]] * scale[name] for name in scale}
    t = column["t"]
    _check_time(t, [line for line, _ in rows[1:]], source)
    actuated = actuated_names(mech)
    positions = np.column_stack([column[c] for c in mech.independent])
    ignored = [n for n in names if n not in kinds]
    notes = [dependent_note(mech, positions, n, column[n]) for n in dependent] + limit_notes(mech, positions)
    velocities = None
    if rates:
        velocities = np.column_stack([column[VELOCITY_PREFIX + c] for c in mech.independent])
        notes.append(
            f"velocity column(s) {', '.join(rates)} used: the accelerations are their derivative, not a second "
            "difference of the positions"
        )
    notes += spelling
    if ignored:
        notes.append(f"column(s) {', '.join(ignored)} ignored: not positions or actuator forces of this model")
    return MeasuredLog(
        source,
        t,
        list(mech.independent),
        positions,
        actuated,
        np.column_stack([column[TORQUE_PREFIX + c] for c in actuated]),
        {name: unit for name, unit in columns},
        notes=notes,
        velocities=velocities,
    )


def dependent_note(mech: Mechanism, positions: np.ndarray, name: str, logged: np.ndarray) -> str:
    """What a logged dependent coordinate says against the model: the largest difference between it and the
    position the model's loops (or couplings) give it from the logged independent positions, against the log's
    position resolution (`resolution`). It is set aside either way: the model gives it."""
    try:
        assembled = branch_guide(mech, positions)[:, mech.coordinates.index(name)]
    except Exception as exc:  # AssemblyError or a singular Jacobian: the loops cannot close there
        return f"'{name}' is a dependent coordinate, set aside: it could not be checked ({exc})"
    gap = float(np.max(np.abs(logged - assembled)))
    limit = AGREEMENT_STEPS * max(resolution(logged), resolution(positions))
    verdict = "agrees with" if gap <= limit else "DISAGREES with"
    return (
        f"'{name}' is a dependent coordinate, set aside: the model gives it from the independent ones; the log "
        f"{verdict} it (largest difference {gap:.3g}, resolution {limit / AGREEMENT_STEPS:.3g})"
    )


def limit_notes(mech: Mechanism, positions: np.ndarray) -> list[str]:
    """The independent coordinates the log moves outside the model's limits (the log is used as it is: a URDF's
    limits are often a controller's, narrower than the machine's travel)."""
    limits = {c.name: (c.min, c.max) for j in mech.model.joints for c in j.coordinates}
    notes = []
    for name, x in zip(mech.independent, positions.T, strict=True):
        low, high = limits.get(name, (None, None))
        below = low is not None and x.min() < low
        above = high is not None and x.max() > high
        if below or above:
            notes.append(
                f"'{name}' leaves the model's limits [{_bound(low)}, {_bound(high)}]: the log goes from "
                f"{x.min():.6g} to {x.max():.6g}"
            )
    return notes


def _bound(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def resolution(x: np.ndarray) -> float:
    """The smallest non-zero step between consecutive values of any column: an encoder's count when the log is
    quantised."""
    steps = np.abs(np.diff(np.asarray(x, float).reshape(len(x), -1), axis=0))
    steps = steps[steps > 0]
    return float(steps.min()) if steps.size else 0.0


def _split_header(text: str) -> tuple[str, str]:
    """'theta1 [deg]' -> ('theta1', 'deg'); 'theta1' -> ('theta1', '')."""
    text = text.strip()
    if text.endswith("]") and "[" in text:
        name, unit = text[:-1].split("[", 1)
        return name.strip(), unit.strip()
    return text, ""


def _column_kinds(mech: Mechanism, source: str) -> dict[str, str]:
    """Every column the log must have -> what it measures."""
    kinds = {"t": "time"}
    for name in mech.independent:
        kinds[name] = "angle" if _revolute(mech, name) else "length"
    for name in actuated_names(mech):
        kinds[TORQUE_PREFIX + name] = "torque" if _revolute(mech, name) else "force"
    return kinds


def _velocity_kinds(mech: Mechanism, names: list[str], source: str) -> dict[str, str]:
    """The velocity columns of the independent coordinates -> what they measure: all of them or none."""
    wanted = {VELOCITY_PREFIX + c: "angular velocity" if _revolute(mech, c) else "velocity" for c in mech.independent}
    present = [n for n in wanted if n in names]
    if present and len(present) < len(wanted):
        raise ModelError(
            f"{source}, header",
            f"has the velocity column(s) {', '.join(present)} but not {', '.join(n for n in wanted if n not in names)}",
            None,
            "a velocity column for every independent coordinate, or none",
        )
    return {n: wanted[n] for n in present}


def _rate_names(columns: list[tuple[str, str]], mech: Mechanism) -> tuple[list[tuple[str, str]], list[str]]:
    """The header's `<coordinate>_dot` columns of independent coordinates named `d_<coordinate>`, with a note."""
    names = {n for n, _ in columns}
    other = {n: VELOCITY_PREFIX + c for n in names if (c := rate_spelled_otherwise(n, mech.independent))}
    renamed = [n for n, _ in columns if n in other and other[n] not in names]
    notes = [f"column(s) {', '.join(renamed)} read as {', '.join(other[n] for n in renamed)} (a rate is d_NAME)"]
    return [(other[n] if n in renamed else n, u) for n, u in columns], notes if renamed else []


def _revolute(mech: Mechanism, name: str) -> bool:
    return mech.tree.kinds[mech.coordinates.index(name)] == "R"


def _check_names(names: list[str], kinds: dict[str, str], source: str) -> None:
    """Every expected column once (others are set aside or ignored by `parse_log`)."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ModelError(f"{source}, header", "names a column more than once", repeated, "each column once")
    missing = [n for n in kinds if n not in names]
    if missing:
        raise ModelError(
            f"{source}, header",
            f"lacks the column(s) {', '.join(missing)}",
            None,
            "the columns " + ", ".join(kinds) + " (units may follow in brackets, e.g. 'theta1 [deg]')",
        )


def _numbers(rows: list[tuple[int, list[str]]], names: list[str], source: str, used: set[str]) -> np.ndarray:
    """The rows as floats (N, columns), the `used` columns read (the others NaN); a short row, or a word, NaN or an
    infinity in a used column, is refused with its place."""
    out = np.empty((len(rows), len(names)))
    for k, (line, row) in enumerate(rows):
        if len(row) != len(names):
            raise ModelError(
                f"{source}, line {line}", f"has {len(row)} values for {len(names)} columns", None, "one per column"
            )
        for j, text in enumerate(row):
            if names[j] not in used:
                out[k, j] = math.nan
                continue
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise ModelError(f"{source}, line {line}, column '{names[j]}'", "is not a finite number", text)
            out[k, j] = value
    return out


def _unit_scale(source: str, name: str, unit: str, kind: str) -> float:
    """The factor to SI of `unit` for a column measuring `kind` (1 without a unit), by the model files' own
    units (model/units.py): the same names, conversions and messages."""
    if not unit:
        return 1.0
    where = f"{source}, column '{name}'"
    one = units.Quantity(1, unit.replace("·", "*"), where=where)
    try:
        units.check_unit(one, KINDS[kind], where)
    except ModelError as exc:  # the header's unit, not '1 mm'
        raise ModelError(where, exc.problem, unit, exc.expected) from None
    return float(one)


def _check_time(t: np.ndarray, lines: list[int], source: str) -> None:
    """At least two samples; the time rising at a constant step (within IRREGULAR_STEP of the median)."""
    if len(t) < 2:
        raise ModelError(source, f"has {len(t)} sample(s)", None, "a log of many samples")
    step = np.diff(t)
    falls = np.nonzero(step <= 0)[0]
    if len(falls):
        k = int(falls[0])
        raise ModelError(
            f"{source}, line {lines[k + 1]}, column 't'",
            f"the time does not rise: {float(t[k + 1])!r} s after {float(t[k])!r} s",
            None,
            "a time that rises from row to row",
        )
    median = float(np.median(step))
    off = np.nonzero(np.abs(step - median) > IRREGULAR_STEP * median)[0]
    if len(off):
        k = int(off[0])
        raise ModelError(
            f"{source}, line {lines[k + 1]}, column 't'",
            f"the time step is irregular: {step[k]:.6g} s from {float(t[k])!r} s, where the log's step is "
            f"{median:.6g} s",
            None,
            f"a constant step (within {100 * IRREGULAR_STEP:g} %): resample the log, or cut it at the gap",
        )
