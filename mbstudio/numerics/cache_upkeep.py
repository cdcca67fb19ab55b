"""Keeping the engine cache within bounds: what it holds (`usage`), and removing what has not been used (`prune`).

Every library, manifest and start the cache holds is filed under a name derived from what it holds
(native_cache.py), so an edited model, or a new version of MB Studio or of CasADi, files new ones beside the old,
which are never loaded again: a developer's cache had grown to 1.2 GB and 15 000 files in a month. A file's
modification time marks its last use (native_cache.note_use: touched where it is loaded, at most once a day).

After each build the cache is held within its limit, MBSTUDIO_CACHE_LIMIT (2 GB unless set: "500M", "2G" or a
number of bytes): where it holds more, the entries unused longest are removed until it holds at most 80 % of the
limit (ccache keeps its cache so). An entry is a library with its manifest: the files that share a name up to
its first dot. One used within the last hour (RECENT) is never removed for the limit: a process that
has just found an engine still loads it. On request (`mbstudio cache`, Edit › Preferences… › Engine cache), the
entries unused for some days, or all, are removed; a process that then looks for one builds it again.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from .native_cache import INDEX, LOCK, CacheRefused, cache_folder, cache_root, forget

DEFAULT_LIMIT = 2 * 1024**3  # bytes
TRIMMED = 0.8  # of the limit: what a trim leaves at most
RECENT = 3600.0  # s: an entry used this recently is kept by a trim
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([KMGT]?)i?B?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Entry:
    """Files sharing a name up to its first dot in one folder of the cache: a library and its manifest."""

    folder: Path
    names: tuple[str, ...]
    size: int  # bytes
    used: float  # the latest modification time of its files (s since the epoch)


@dataclass(frozen=True)
class Usage:
    folder: Path
    entries: int
    files: int
    size: int  # bytes
    oldest: float | None  # the last use of the entry unused longest (s since the epoch); None when empty
    limit: int

    def text(self) -> str:
        held = f"{self.entries} entries ({self.files} files), {_size_text(self.size)} of {_size_text(self.limit)}"
        if self.oldest is None:
            return f"the engine cache {self.folder}: empty (its limit {_size_text(self.limit)})"
        return f"the engine cache {self.folder}: {held}; the entry unused longest was last used {_age(self.oldest)}"


@dataclass(frozen=True)
class Pruned:
    entries: int
    files: int
    size: int  # bytes
    recent: int = 0  # entries a trim would have removed but kept, used within RECENT

    def text(self) -> str:
        kept = f"; kept {self.recent} used within the hour, which a trim never removes" if self.recent else ""
        return f"removed {self.entries} entries ({self.files} files, {_size_text(self.size)}){kept}"


def cache_limit() -> int:
    """The cache's limit in bytes, MBSTUDIO_CACHE_LIMIT or DEFAULT_LIMIT; ValueError naming the variable where it
    is not a size."""
    given = os.environ.get("MBSTUDIO_CACHE_LIMIT")
    return DEFAULT_LIMIT if not given else parse_size(given, "MBSTUDIO_CACHE_LIMIT")


def parse_size(text: str, field: str) -> int:
    """Bytes from "500M", "2G", "1.5GB" or a number of bytes (powers of 1024); ValueError naming `field`."""
    found = _SIZE.fullmatch(text)
    if found is None or float(found.group(1)) <= 0:
        raise ValueError(
            f"{field}: {text!r} is not a size; expected a positive number of bytes, or one with K, M, G or T"
        )
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


def entries() -> list[Entry]:
    """The cache's entries, in every folder of it, unused longest first; none where the cache is absent."""
    root = cache_root() / "engines"
    if not root.is_dir():
        return []
    found: list[Entry] = []
    for folder in [root, *(Path(d.path) for d in os.scandir(root) if d.is_dir(follow_symlinks=False))]:
        found += _entries_in(folder)
    return sorted(found, key=lambda entry: entry.used)


def _entries_in(folder: Path) -> list[Entry]:
    """The entries of one folder; a temporary file (".NAME.PID.tmp", a build or write under way, or left by a
    killed one) is an entry of its own."""
    groups: dict[str, list[os.DirEntry]] = {}
    for item in os.scandir(folder):
        if item.name not in (INDEX, LOCK) and item.is_file(follow_symlinks=False):
            stem = item.name if item.name.startswith(".") else item.name.split(".", 1)[0]
            groups.setdefault(stem, []).append(item)
    found = []
    for files in groups.values():
        stats = {item.name: _stat(item) for item in files}
        stats = {name: s for name, s in stats.items() if s is not None}  # not one removed meanwhile
        if stats:
            used, size = max(s.st_mtime for s in stats.values()), sum(s.st_size for s in stats.values())
            found.append(Entry(folder, tuple(stats), size, used))
    return found


def _stat(item: os.DirEntry) -> os.stat_result | None:
    try:
        return item.stat(follow_symlinks=False)
    except FileNotFoundError:  # removed by another process since the folder was read
        return None


def usage() -> Usage:
    """What the cache holds."""
    held = entries()
    return Usage(
        cache_root() / "engines",
        len(held),
        sum(len(e.names) for e in held),
        sum(e.size for e in held),
        held[0].used if held else None,
        cache_limit(),
    )


def prune(unused_days: float | None = None, limit: int | None = None, everything: bool = False) -> Pruned:
    """Removes the entries unused for `unused_days` days, or (`limit`, bytes) those unused longest until the cache
    holds at most TRIMMED of the limit, never one used within RECENT; or `everything`. A temporary file written
    within RECENT stays whatever is asked: its build or write renames it in a moment."""
    cache_folder()  # the cache's own checks: nothing is removed from a folder it refuses (CacheRefused)
    now = time.time()
    held = [e for e in entries() if not (e.names[0].startswith(".") and now - e.used <= RECENT)]
    if everything:
        return _removed(held)
    if unused_days is not None:
        return _removed([e for e in held if now - e.used > unused_days * 86400.0])
    if limit is not None:
        return _removed(*_unused_longest(held, limit, now))
    raise ValueError("prune: nothing asked; expected unused_days, limit or everything")


def _unused_longest(held: list[Entry], limit: int, now: float) -> tuple[list[Entry], int]:
    """Where the entries `held` (unused longest first) exceed `limit` bytes, those whose removal leaves TRIMMED of
    it, passing over the ones used within RECENT; and how many were passed over."""
    chosen, recent, excess = [], 0, sum(e.size for e in held) - TRIMMED * limit
    if excess <= (1 - TRIMMED) * limit:  # within the limit
        return [], 0
    for entry in held:
        if excess <= 0:
            break
        if now - entry.used <= RECENT:
            recent += 1
            continue
        chosen.append(entry)
        excess -= entry.size
    return chosen, recent


def _removed(chosen: list[Entry], recent: int = 0) -> Pruned:
    by_folder: dict[Path, list[str]] = {}
    for entry in chosen:
        by_folder.setdefault(entry.folder, []).extend(entry.names)
    for folder, names in by_folder.items():
        forget(folder, names)
    return Pruned(len(chosen), sum(len(e.names) for e in chosen), sum(e.size for e in chosen), recent)


def keep_within_limit() -> None:
    """After a build: the cache trimmed where it holds more than its limit. Never an error: a limit that cannot be
    read, or a cache that cannot be walked, leaves it as it is (the next build tries again)."""
    with contextlib.suppress(OSError, ValueError, CacheRefused):
        prune(limit=cache_limit())


def _size_text(size: float) -> str:
    if size < 1024:
        return f"{size:.0f} bytes"
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            break
    return f"{size:.1f} {unit}"


def _age(when: float) -> str:
    days = (time.time() - when) / 86400.0
    return "today" if days < 1 else ("1 day ago" if days < 1.5 else f"{days:.0f} days ago")
