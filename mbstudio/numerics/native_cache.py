"""The folder of compiled engines: private to the user, every library checked before it is loaded.

A library in the cache is native code this process will run, so the cache is treated as a place others must not
write to: folders are created 0700 whatever the umask, a folder not owned by the user or writable by
others is refused with a message (CacheRefused), and each library's sha256, written beside it when it was built,
is compared with its bytes before it is loaded. A library whose bytes do not match, or that fails to load (a
truncated file), is removed so that the caller builds it again.

The location: $MBSTUDIO_CACHE/engines, else the user's cache folder of the platform (platformdirs:
~/.cache/mbstudio on Linux, ~/Library/Caches/mbstudio on macOS, %LOCALAPPDATA%\\mbstudio\\Cache on Windows).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import stat
import struct
import sys
from pathlib import Path

PRIVATE = 0o700


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
        _check_private(checked)
        if checked == engines:
            break


def _check_private(path: Path) -> None:
    """CacheRefused when `path` is owned by another user or group or others may write to it (POSIX only)."""
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
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def seal(built: Path, library: Path) -> None:
    """Moves a freshly built file to `library`, private, its sha256 written beside it first (a process that
    finds the library then finds its digest too)."""
    os.chmod(built, PRIVATE)
    write_private(_digest_file(library), _sha256(built).encode())
    os.replace(built, library)


def verified(library: Path) -> bool:
    """True when the library exists, is private, and its bytes have the sha256 written when it was built. A
    library that fails the check is removed (with its digest), so that it is built again."""
    try:
        if not library.exists():
            return False
        _check_private(library)
        expected = _digest_file(library).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        discard(library)
        return False
    if _sha256(library) != expected or not _whole_elf(library):
        discard(library)
        return False
    return True


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


def discard(library: Path) -> None:
    """Removes a library that cannot be trusted or loaded, and its digest."""
    for path in (library, _digest_file(library)):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _digest_file(library: Path) -> Path:
    return library.with_name(library.name + ".sha256")


def _sha256(path: Path) -> str:
    info = path.stat()
    return _sha256_of(str(path), info.st_size, info.st_mtime_ns, info.st_ino)


@functools.lru_cache(maxsize=256)
def _sha256_of(path: str, size: int, mtime: int, inode: int) -> str:
    """Hashed once per file version in a process (size, time and inode change with the bytes)."""
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
