"""The folder of compiled engines: private to the user, and trusting nothing it did not write.

A library in the cache is native code this process will run, so the cache is treated as a place others must not
write to: folders are created 0700 whatever the umask, and a folder not owned by the user or writable by others
is refused with a message (CacheRefused). Inside it:

- every file's name is the cache's own, derived by the caller from what the file holds (a hash of the model text
  and code): no name is ever read from a file in the cache;
- the sha256 of every file the cache wrote (libraries and their manifests) is kept in one index, `digests.json`,
  private like the rest and apart from the files it vouches for, updated under a lock;
- a file is read or loaded only when it is private, not a symbolic link, and its bytes have the digest the index
  holds for its name. One that fails (replaced, truncated, made writable by others, a link, unknown to the index)
  is removed, with its entry, so that the caller builds it again.

A file's modification time marks its last use (`note_use`); cache_upkeep.py keeps the cache within its limit by
removing the files unused longest.

The location: $MBSTUDIO_CACHE/engines, else the user's cache folder of the platform (platformdirs:
~/.cache/mbstudio on Linux, ~/Library/Caches/mbstudio on macOS, %LOCALAPPDATA%\\mbstudio\\Cache on Windows).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import stat
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path

PRIVATE = 0o700
INDEX = "digests.json"
LOCK = "digests.lock"
USE_MARK = 86400.0  # s: a file's use is marked (note_use) where its mark is older than a day
_DIGEST = re.compile(r"[0-9a-f]{64}")


class CacheRefused(RuntimeError):
    """The cache folder is not private to this user: nothing is loaded from it or written to it."""


def cache_root() -> Path:
    if os.environ.get("MBSTUDIO_CACHE"):
        return Path(os.environ["MBSTUDIO_CACHE"])
    import platformdirs  # only when no folder is given: it costs an import

    return Path(platformdirs.user_cache_dir("mbstudio", appauthor=False))


def cache_folder(*parts: str) -> Path:
    """The engines' folder (or a subfolder of it), created private and checked: CacheRefused when it is not
    owned by this user or others may write to it."""
    folder = cache_root().joinpath("engines", *parts)
    _private_folder(folder)
    return folder


def _private_folder(folder: Path) -> None:
    """Creates the missing folders 0700 (chmod after mkdir: mkdir's mode is masked by the umask), then checks
    the engines folder and every folder below it."""
    missing = []
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    for created in reversed(missing):
        try:
            created.mkdir()
        except FileExistsError:
            pass
        except OSError as error:
            raise CacheRefused(f"the engine cache {created} cannot be created: {error.strerror}") from None
        else:
            os.chmod(created, PRIVATE)
    engines = cache_root() / "engines"
    for checked in (folder, *folder.parents):
        try:
            _check_private(checked)
        except OSError as error:
            raise CacheRefused(f"the engine cache {checked} cannot be read: {error.strerror}") from None
        if checked == engines:
            break


def _check_private(path: Path) -> None:
    """CacheRefused when `path` is a symbolic link, is owned by another user or others may write to it
    (POSIX only)."""
    if sys.platform == "win32":
        return
    info = os.lstat(path)
    what = "folder" if stat.S_ISDIR(info.st_mode) else "file"
    if stat.S_ISLNK(info.st_mode):
        raise CacheRefused(f"the engine cache {what} {path} is a symbolic link; {_ADVICE}")
    if info.st_uid != os.getuid():
        raise CacheRefused(
            f"the engine cache {what} {path} belongs to user id {info.st_uid}, not to you ({os.getuid()}): "
            f"compiled code there is not loaded; {_ADVICE}"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheRefused(
            f"the engine cache {what} {path} is writable by others (mode {stat.S_IMODE(info.st_mode):04o}): "
            f"compiled code there is not loaded; {_ADVICE}"
        )


_ADVICE = "remove it, make it private (chmod 700), or set MBSTUDIO_CACHE to a private folder"


def write_private(path: Path, data: bytes) -> None:
    """`data` to `path` atomically (a temporary file renamed), readable by the user only."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


# ------------------------------------------------------------------------------------- the index of digests
def seal(built: Path, library: Path) -> None:
    """Moves a freshly built file to `library`, private, its sha256 entered in the index first (a process that
    finds the library then finds its digest too)."""
    os.chmod(built, PRIVATE)
    digest = _sha256(built)
    with _locked(library.parent):
        _record(library, digest)
        os.replace(built, library)


def write_sealed(path: Path, data: bytes) -> None:
    """`data` written privately to `path`, its sha256 entered in the index (read back by `read_sealed`)."""
    with _locked(path.parent):
        _record(path, hashlib.sha256(data).hexdigest())
        write_private(path, data)


def read_sealed(path: Path) -> bytes | None:
    """The bytes of a file `write_sealed` wrote, or None when it is missing or fails the checks of `verified`
    (it is then removed)."""
    if not os.path.lexists(path):
        return None
    try:
        _check_private(path)
        data = path.read_bytes()
        trusted = hashlib.sha256(data).hexdigest() == _digests(path.parent).get(path.name)
    except (OSError, ValueError, CacheRefused):
        trusted = False
    if not trusted:
        discard(path)
        return None
    note_use(path)
    return data


def verified(library: Path) -> bool:
    """True when the library exists, is private, is no symbolic link, its bytes have the sha256 the index holds
    for its name and its ELF tables lie within it. One that fails is removed with its entry, so that it is built
    again; any problem, a refused file included, is such a failure, never an error."""
    if not os.path.lexists(library):
        return False
    try:
        _check_private(library)
        expected = _digests(library.parent).get(library.name)
        trusted = expected is not None and _sha256(library) == expected and _whole_elf(library)
    except (OSError, ValueError, CacheRefused):
        trusted = False
    if not trusted:
        discard(library)
    else:
        note_use(library)
    return trusted


def note_use(path: Path) -> None:
    """Marks a file as used now, by its modification time, where the mark is older than USE_MARK: the cache is
    kept within its limit by removing the files unused longest (cache_upkeep.py). At most once a day a file, so
    that a run writes nothing and the file's digest is not computed again (it is remembered by size and time)."""
    with contextlib.suppress(OSError):
        if time.time() - os.stat(path).st_mtime > USE_MARK:
            os.utime(path)


def forget(folder: Path, names: list[str]) -> None:
    """Removes the files `names` of `folder` and their entries in its index, in one write of the index under its
    lock (cache_upkeep.py)."""
    with _locked(folder):
        for name in names:
            with contextlib.suppress(OSError):
                (folder / name).unlink(missing_ok=True)
        entries, removed = dict(_digests(folder)), set(names)
        kept = {name: digest for name, digest in entries.items() if name not in removed}
        if len(kept) != len(entries):
            _write_index(folder, kept)


def discard(path: Path) -> None:
    """Removes a file that cannot be trusted or loaded (a symbolic link itself, never what it points to) and its
    entry in the index."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError, CacheRefused), _locked(path.parent):
        _record(path, None)


def _digests(folder: Path) -> dict[str, str]:
    """The index of `folder`: file name -> sha256. Empty when there is none; an index that is not private, not
    the cache's JSON or a symbolic link is removed and counts as empty (every file is then built again)."""
    index = folder / INDEX
    try:
        info = os.lstat(index)
    except FileNotFoundError:
        return {}
    try:
        _check_private(index)
        return _parsed_index(str(index), info.st_size, info.st_mtime_ns, info.st_ino)
    except (OSError, ValueError, CacheRefused):
        with contextlib.suppress(OSError):
            index.unlink()
        return {}


@functools.lru_cache(maxsize=16)
def _parsed_index(index: str, size: int, mtime: int, inode: int) -> dict[str, str]:
    """The index read once per version of the file (size, time and inode change when it is replaced)."""
    with open(index, "rb", opener=lambda path, flags: os.open(path, flags | _NOFOLLOW)) as file:
        parsed = json.loads(file.read().decode("utf-8"))
    entries = parsed.get("sha256") if isinstance(parsed, dict) else None  # any other JSON ('0', '[]'): not ours
    if not isinstance(entries, dict) or not all(
        isinstance(name, str) and isinstance(digest, str) and _DIGEST.fullmatch(digest)
        for name, digest in entries.items()
    ):
        raise ValueError("not an index of digests")
    return dict(entries)


def _record(path: Path, digest: str | None) -> None:
    """Enters `path`'s digest in its folder's index (None: removes its entry). The caller holds the lock."""
    entries = dict(_digests(path.parent))
    if digest is None and path.name not in entries:
        return
    if digest is None:
        del entries[path.name]
    else:
        entries[path.name] = digest
    _write_index(path.parent, entries)


def _write_index(folder: Path, entries: dict[str, str]) -> None:
    """The folder's index of digests written whole (the caller holds the lock)."""
    write_private(folder / INDEX, json.dumps({"sha256": entries}, indent=0, sort_keys=True).encode())


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """The folder's index held by this process alone (an advisory lock on a private lock file; where the
    platform has no such locks, concurrent writers may drop an entry, which only costs a rebuild)."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    lock = folder / LOCK
    try:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
    except OSError:  # not a file of ours (a symbolic link, a folder): replaced by one
        with contextlib.suppress(OSError):
            lock.unlink()
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def _whole_elf(library: Path) -> bool:
    """False for an ELF file cut short: its segments or section table lie beyond its end, and the loader would
    map them and stop the process with a bus error instead of failing. Other formats (Mach-O, PE) pass."""
    with open(library, "rb") as file:
        header = file.read(64)
        size = os.fstat(file.fileno()).st_size
        if header[:4] != b"\x7fELF":
            return not sys.platform.startswith("linux")
        if header[4] != 2:  # 32-bit ELF: not what this machine's compiler writes
            return False
        order = "<" if header[5] == 1 else ">"
        (phoff, shoff), (phsize, phnum, shsize, shnum) = (
            struct.unpack(order + "QQ", header[32:48]),
            struct.unpack(order + "HHHH", header[54:62]),
        )
        if phoff + phsize * phnum > size or shoff + shsize * shnum > size:
            return False
        file.seek(phoff)
        table = file.read(phsize * phnum)
    for k in range(phnum):
        offset, _, _, filesz = struct.unpack(order + "QQQQ", table[k * phsize + 8 : k * phsize + 40])  # Elf64_Phdr
        if offset + filesz > size:
            return False
    return True


def _sha256(path: Path) -> str:
    info = path.stat()
    return _sha256_of(str(path), info.st_size, info.st_mtime_ns, info.st_ino)


@functools.lru_cache(maxsize=256)
def _sha256_of(path: str, size: int, mtime: int, inode: int) -> str:
    """Hashed once per file version in a process (size, time and inode change with the bytes)."""
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
