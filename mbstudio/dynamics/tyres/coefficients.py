"""The Magic Formula's coefficients taken from a .tir file: which keys the model reads, in which section, which are
required, and what an absent one means (0 for a coefficient, 1 for a scaling factor)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model.errors import ModelError
from .tir_file import TirFile

# section: (keys required, keys optional), each a space-separated list. Absent optional coefficients are 0: the
# term they weight vanishes (an absent RBX1 or RBY1 leaves the combined-slip weighting at 1, as in pure slip).
KEYS: dict[str, tuple[str, str]] = {
    "MODEL": ("FITTYP LONGVL", "USE_MODE"),
    "DIMENSION": ("UNLOADED_RADIUS", ""),
    "VERTICAL": ("FNOMIN", ""),
    "OPERATING_CONDITIONS": ("NOMPRES", "INFLPRES"),
    "LONGITUDINAL_COEFFICIENTS": (
        "PCX1 PDX1 PKX1",
        "PDX2 PDX3 PEX1 PEX2 PEX3 PEX4 PKX2 PKX3 PHX1 PHX2 PVX1 PVX2 PPX1 PPX2 PPX3 PPX4 "
        "RBX1 RBX2 RBX3 RCX1 REX1 REX2 RHX1 PTX1 PTX2 PTX3",
    ),
    "LATERAL_COEFFICIENTS": (
        "PCY1 PDY1 PKY1 PKY2 PKY4",
        "PDY2 PDY3 PEY1 PEY2 PEY3 PEY4 PEY5 PKY3 PKY5 PKY6 PKY7 PHY1 PHY2 PVY1 PVY2 PVY3 PVY4 "
        "PPY1 PPY2 PPY3 PPY4 PPY5 RBY1 RBY2 RBY3 RBY4 RCY1 REY1 REY2 RHY1 RHY2 RVY1 RVY2 RVY3 RVY4 RVY5 RVY6 "
        "PTY1 PTY2",
    ),
    "ALIGNING_COEFFICIENTS": (
        "QBZ1 QCZ1 QDZ1",
        "QBZ2 QBZ3 QBZ4 QBZ5 QBZ6 QBZ9 QBZ10 QDZ2 QDZ3 QDZ4 QDZ6 QDZ7 QDZ8 QDZ9 QDZ10 QDZ11 "
        "QEZ1 QEZ2 QEZ3 QEZ4 QEZ5 QHZ1 QHZ2 QHZ3 QHZ4 PPZ1 PPZ2 SSZ1 SSZ2 SSZ3 SSZ4",
    ),
    "OVERTURNING_COEFFICIENTS": ("", "QSX1 QSX2 QSX3 QSX4 QSX5 QSX6 QSX7 QSX8 QSX9 QSX10 QSX11 PPMX1"),
    "ROLLING_COEFFICIENTS": ("", "QSY1 QSY2 QSY3 QSY4 QSY5 QSY6 QSY7 QSY8"),
    "SCALING_COEFFICIENTS": (
        "",
        "LFZO LCX LMUX LEX LKX LHX LVX LCY LMUY LEY LKY LKYC LKZC LHY LVY LTR LRES LXAL LYKA LVYKA LS "
        "LMX LVMX LMY LMUV LSGKP LSGAL",
    ),
}


# MF 6.1's additions to MF 5.2: inflation pressure, the camber stiffness and a few camber terms
_MF61_ONLY = (
    "NOMPRES INFLPRES PKY4 PKY5 PKY6 PKY7 PEY5 PPX1 PPX2 PPX3 PPX4 PPY1 PPY2 PPY3 PPY4 PPY5 PPZ1 PPZ2 PPMX1 "
    "RBX3 RBY4 QBZ6 QDZ10 QDZ11 QSY5 QSY6 QSY7 QSY8 LKYC LKZC"
)
MF61_ONLY = set(_MF61_ONLY.split())
# MF 5.2's own: the lateral shift by camber, and the inclination's scaling factors (MF 6.1 has sin(gamma) instead)
MF52_ONLY = {"LATERAL_COEFFICIENTS": "PHY3", "SCALING_COEFFICIENTS": "LGAX LGAY LGAZ"}
EVALUATED = ("MF 5.2", "MF 6.1")
# the equations divide by these
POSITIVE = (
    ("VERTICAL", "FNOMIN"),
    ("DIMENSION", "UNLOADED_RADIUS"),
    ("MODEL", "LONGVL"),
    ("OPERATING_CONDITIONS", "NOMPRES"),
)


@dataclass(frozen=True)
class Coefficients:
    """The numbers the Magic Formula reads (SI; absent coefficients 0, absent scaling factors 1), the version
    ('MF 5.2' or 'MF 6.1') and the USE_MODE switch, and the reader's notes on the file."""

    values: dict[str, float]
    version: str
    use_mode: int
    source: str = "<coefficients>"
    notes: tuple[str, ...] = field(default=())


def coefficients(tir: TirFile) -> Coefficients:
    """The model's coefficients from a read .tir file; a ModelError naming the key and section for a required
    entry the file lacks, for an entry that is not a number, and for a version the model does not evaluate."""
    version = tir.version
    if version not in EVALUATED:
        raise ModelError(
            f"{tir.source} [MODEL] FITTYP",
            f"names {version}, which this model does not evaluate",
            tir.fittyp,
            "6 or 21 (MF 5.2) or 61 (MF 6.1)",
        )
    values: dict[str, float] = {}
    for section, (required, optional) in _keys(version).items():
        for key in required.split():
            values[key] = tir.number(section, key)
        for key in optional.split():
            values[key] = tir.number(section, key, 1.0 if section == "SCALING_COEFFICIENTS" else 0.0)
    for section, key in POSITIVE:
        if key in values and values[key] <= 0:
            line = tir.sections[section][key].line
            raise ModelError(f"{tir.source}:{line} [{section}] {key}", "must be positive", values[key])
    if version == "MF 6.1":
        values["INFLPRES"] = tir.number("OPERATING_CONDITIONS", "INFLPRES", values["NOMPRES"])  # default pressure
    else:  # the MF 6.1 terms MF 5.2 lacks, set to what reduces the MF 6.1 forms to MF 5.2's
        values |= dict.fromkeys(MF61_ONLY, 0.0) | {"PKY4": 2.0, "QSY7": 1.0, "LKYC": 1.0, "LKZC": 1.0}
    return Coefficients(values, version, tir.use_mode, tir.source, tuple(tir.notes + _unread(tir, version)))


def _keys(version: str) -> dict[str, tuple[str, str]]:
    """KEYS for MF 6.1; for MF 5.2 without MF 6.1's additions and with MF 5.2's own keys (optional)."""
    if version == "MF 6.1":
        return KEYS
    keys = {}
    for section, (required, optional) in KEYS.items():
        keep = [" ".join(k for k in group.split() if k not in MF61_ONLY) for group in (required, optional)]
        keys[section] = (keep[0], (keep[1] + " " + MF52_ONLY.get(section, "")).strip())
    return keys


def _unread(tir: TirFile, version: str) -> list[str]:
    """A note naming, per section, the keys no equation of this version reads."""
    read = {key for required, optional in _keys(version).values() for key in (required + " " + optional).split()}
    notes = []
    for section, entries in tir.sections.items():
        if section in ("UNITS", "MDI_HEADER"):
            continue
        unread = [key for key in entries if key not in read]
        if unread:
            notes.append(f"[{section}] not read by the Magic Formula: {', '.join(unread)}")
    return notes
