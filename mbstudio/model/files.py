"""Writing files without ever losing data (docs/architecture.md, principle 7): every model save, export and command
output goes through here.

- `check_outputs` refuses, before any work is done, an output that is one of the inputs (the same file, by
  inode, whatever the path says), a folder, a read-only file, a missing or unwritable folder.
- `write_atomic` writes a temporary file beside the target, flushes it to disk, renames it over the target
  and flushes the folder, so a crash leaves the old file or the new one, never a mix; a symbolic link is
  followed (the file it points to is replaced, the link stays). The temporary file's name holds the writer's
  process id and host, so the next write of the same target removes those whose writer has ended (killed
  during a save), and never one that another process is still writing, whatever its age.
- `write_all` writes several files all or nothing: every temporary first, then the renames.
- `writing_through` hands a writer that needs a file name (a video encoder) a temporary path of the same kind,
  renamed over the target when the writer is done.
Failures are ModelErrors naming the path, for the command line's one-line messages and the window's boxes.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import socket
import stat
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from .errors import ModelError

# .<target>.<pid>@<host>.<random>.tmp[.<extension>]: the writer's process id and host, so that a later write can
# tell a temporary file left by a killed writer from one that another process is still writing; the extension for
# writers that choose their format by it
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)@(?P<host>[A-Za-z0-9-]*)\.[0-9a-f]{16}\.tmp(\.[A-Za-z0-9]+)?")
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40]
_WRITING: set[Path] = set()  # this process's temporary files being written now (by any thread)
_WRITING_LOCK = threading.Lock()

PathLike = str | os.PathLike


def check_outputs(outputs: Iterable[PathLike | None], inputs: Iterable[PathLike] = ()) -> None:
    """A ModelError for the first output that cannot or must not be written (None entries are skipped)."""
    sources = [Path(p) for p in inputs]
    for output in (Path(p) for p in outputs if p is not None):
        target = _target(output)
        for source in sources:
            if source.exists() and target.exists() and os.path.samefile(source, target):
                raise ModelError(str(output), "is an input of this command", expected="another file for the output")
        if target.is_dir():
            raise ModelError(str(output), "is a folder", expected="a file name in it")
        # by its mode bits, not os.access: for root os.access says yes to every file
        if target.exists() and not target.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise ModelError(str(output), "is read-only", expected="a writable file, or a new name")
        folder = target.parent
        if not folder.is_dir():
            raise ModelError(
                str(output), f"is in the folder '{folder}', which does not exist", expected="an existing folder"
            )
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ModelError(str(output), f"is in the folder '{folder}', where files cannot be written")


def write_atomic(path: PathLike, content: str | bytes) -> None:
    """Write text (UTF-8, '\\n' line ends) or bytes atomically; see the module docstring."""
    write_all({path: content})


def write_all(contents: Mapping[PathLike, str | bytes]) -> None:
    """Write every file or none: all temporaries are written and flushed before the first rename."""
    check_outputs(contents)
    written: list[tuple[Path, Path]] = []
    current = None
    try:
        for current, content in contents.items():
            target = _target(Path(current))
            _remove_stale(target)
            written.append((_temporary(target, content), target))
        for tmp, target in written:
            current = target
            os.replace(tmp, target)
            _sync_folder(target.parent)
    except OSError as exc:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        raise _cannot_write(current, exc) from exc
    except BaseException:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        raise
    finally:
        with _WRITING_LOCK:
            _WRITING.difference_update(tmp for tmp, _ in written)


@contextlib.contextmanager
def writing_through(path: PathLike) -> Iterator[Path]:
    """A temporary path beside `path`, with its extension, for a writer that needs a file name; renamed over
    `path` when the block ends without an error, removed otherwise (and by a later write if the process is killed
    meanwhile)."""
    check_outputs([path])
    target = _target(Path(path))
    _remove_stale(target)
    tmp = _temporary_path(target, target.suffix)
    try:
        yield tmp
        os.replace(tmp, target)
        _sync_folder(target.parent)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    finally:
        tmp.unlink(missing_ok=True)
        with _WRITING_LOCK:
            _WRITING.discard(tmp)


def _cannot_write(path, exc: OSError) -> ModelError:
    return ModelError(
        str(path), f"cannot be written: {exc.strerror or exc}", expected="a writable file in an existing folder"
    )


def _target(path: Path) -> Path:
    """The file a write really replaces: a symbolic link's destination, not the link."""
    return Path(os.path.realpath(path))


def _temporary(target: Path, content: str | bytes) -> Path:
    """The content in a new temporary file beside the target, flushed to disk, with the target's permissions
    (a new file gets the usual ones, from the umask)."""
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    tmp = _temporary_path(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        with _WRITING_LOCK:
            _WRITING.discard(tmp)
        raise
    return tmp


def _temporary_path(target: Path, extension: str = "") -> Path:
    """A new temporary file name beside the target, registered as being written by this process."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}@{_HOST}.{uuid.uuid4().hex[:16]}.tmp{extension}")
    with _WRITING_LOCK:
        _WRITING.add(tmp)
    return tmp


def _sync_folder(folder: Path) -> None:
    """Flush the folder's entry for the renamed file, so the rename itself survives a power cut."""
    with contextlib.suppress(OSError):  # not every file system lets a folder be opened (then there is nothing to do)
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove_stale(target: Path) -> None:
    """Temporary files of this target whose writer, a process of this host, has ended (killed during a save).
    One of another host (a shared folder), or of a process still running, is left alone."""
    for leftover in target.parent.glob(glob.escape(f".{target.name}.") + "*.tmp*"):
        match = _TEMPORARY.fullmatch(leftover.name)
        if not match or match["name"] != target.name or match["host"] != _HOST:
            continue
        with contextlib.suppress(OSError):
            if _writer_ended(int(match["pid"]), leftover):
                leftover.unlink()


def _writer_ended(pid: int, temporary: Path) -> bool:
    """Whether the process `pid` that wrote `temporary` has ended: no process has that id now, or the one that
    has it started after the file was last written to (the id was given again), or it is this process and no
    thread of it is writing the file."""
    import psutil

    if pid == os.getpid():
        with _WRITING_LOCK:
            return temporary not in _WRITING
    try:
        started = psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:  # it exists, but its start is not ours to read: it may be the writer
        return False
    return started > temporary.stat().st_mtime + 1  # 1 s: the start time's own rounding
