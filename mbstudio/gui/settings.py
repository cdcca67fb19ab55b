"""Application settings (QSettings, INI format everywhere, so tests can redirect them with QSettings.setPath)."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings

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


def last_options(task: str) -> dict | None:
    """The options an analysis ran with last time (kept as JSON text: INI values lose their types)."""
    try:
        value = json.loads(settings().value(f"options/{task}", "null"))
    except (TypeError, json.JSONDecodeError):
        return None  # a hand-edited or older settings file: start from the defaults
    return value if isinstance(value, dict) else None


def keep_options(task: str, options: dict) -> None:
    settings().setValue(f"options/{task}", json.dumps(options))
