"""Application settings (QSettings, INI format everywhere, so tests can redirect them with QSettings.setPath)."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings

from ..io.display_units import ANGLES, LENGTHS, DisplayUnits

ORGANISATION = "MB Studio"
APPLICATION = "mbstudio"
MAX_RECENT = 8
AUTOSAVE_SECONDS = 60


def settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANISATION, APPLICATION)


def recent_files() -> list[str]:
    value = settings().value("recent_files", [])
    return [value] if isinstance(value, str) else list(value or [])


def add_recent(path: str) -> list[str]:
    path = str(Path(path).resolve())
    files = [path] + [f for f in recent_files() if f != path]
    settings().setValue("recent_files", files[:MAX_RECENT])
    return files[:MAX_RECENT]


def recovery_folder() -> Path:
    """Where autosave writes, a file per open document: beside the settings file, so it follows the settings
    location."""
    return Path(settings().fileName()).parent / "recovery"


def autosave_seconds() -> int:
    return int(settings().value("autosave_seconds", AUTOSAVE_SECONDS))


def display_units() -> DisplayUnits:
    """The units chosen last time (Edit › Preferences… › Units); the defaults (SI, and deg and mm for the
    suspension measures) for anything missing or not understood. The older View › Units choice (degrees,
    millimetres) is taken when there is no newer one."""
    default = DisplayUnits()
    older = {k: str(settings().value(f"units/{k}", "false")).lower() == "true" for k in ("degrees", "millimetres")}
    angle = str(settings().value("units/angle", "deg" if older["degrees"] else default.angle))
    length = str(settings().value("units/length", "mm" if older["millimetres"] else default.length))
    suspension_angle = str(settings().value("units/suspension_angle", default.suspension_angle))
    suspension_length = str(settings().value("units/suspension_length", default.suspension_length))
    if {angle, suspension_angle} <= set(ANGLES) and {length, suspension_length} <= set(LENGTHS):
        return DisplayUnits(angle, length, suspension_angle, suspension_length)
    return default


def keep_display_units(units: DisplayUnits) -> None:
    for key in ("angle", "length", "suspension_angle", "suspension_length"):
        settings().setValue(f"units/{key}", getattr(units, key))


# the options remembered per analysis, under a key of their own version: those kept before the integrator's
# "automatic" choice held the old default CVODES, saved at every run, which would have kept Adams on a returning
# user's contact models (a fiftieth of BDF's speed on a trot); they are left behind once, for the defaults
OPTIONS_KEY = "options-v2"


def last_options(task: str) -> dict | None:
    """The options an analysis ran with last time (kept as JSON text: INI values lose their types)."""
    try:
        value = json.loads(settings().value(f"{OPTIONS_KEY}/{task}", "null"))
    except (TypeError, json.JSONDecodeError):
        return None  # a hand-edited or older settings file: start from the defaults
    return value if isinstance(value, dict) else None


def keep_options(task: str, options: dict) -> None:
    settings().setValue(f"{OPTIONS_KEY}/{task}", json.dumps(options))
