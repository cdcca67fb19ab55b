"""Writing files without ever losing data (docs/architecture.md, principle 7): every model save, export and command
output goes through here.

- `check_outputs` refuses, before any work is done, an output that is one of the inputs (the same file, by
  inode, whatever the path says), a folder, a read-only file, a missing or unwritable folder.
- `write_atomic` writes a temporary file beside the target, flushes it to disk, renames it over the target
  and flushes the folder, so a crash leaves the old file or the new one, never a mix; a symbolic link is
  followed (the file it points to is replaced, the link stays). The temporary file's name holds the writer's
  process id and host, so the next write of the same target removes those whose writer has ended (killed
  during a save), and never one that another process is still writing, whatever its age.
- `write_all` writes several files all or nothing (a CSV table and its provenance): every temporary first, then a
  journal naming the targets in each folder they go to, then the renames, then the journals are removed. A save
  killed before its journal is complete leaves the old files; one killed after it is completed by the next write
  of any of its files, or by `finish_interrupted` (for a reader), from the temporaries the journal names. Readers
  such as pandas see plain files; only a kill between two renames leaves a mixed pair (its journal beside it)
  until then.
- `writing_through` hands a writer that needs a file name (a video encoder) a temporary path of the same kind,
  renamed over the target when the writer is done.
Text is written as UTF-8; a lone surrogate (half of a UTF-16 pair, no character: a model's description may hold
one from a "\\ud800" escape) is written as that escape, as the model file itself keeps it.
Failures are ModelErrors naming the path, for the command line's one-line messages and the window's boxes.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import stat
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from .errors import ModelError

# .<target>.<pid>@<host>.<random>.tmp[.<extension>]: the writer's process id and host, so that a later write can
# tell a temporary file left by a killed writer from one that another process is still writing; the extension for
# writers that choose their format by it
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)@(?P<host>[A-Za-z0-9-]*)\.[0-9a-f]{16}\.tmp(\.[A-Za-z0-9]+)?")
# .<first target in the folder>.<pid>@<host>.<save>.pair: the journal of a save of several files, naming its targets
_JOURNAL = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)@(?P<host>[A-Za-z0-9-]*)\.(?P<save>[0-9a-f]{16})\.pair")
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", platform.node())[:40]  # the host name, without importing socket
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
    """Write every file or none, also when the process is killed meanwhile (see the module docstring)."""
    check_outputs(contents)
    targets = [_target(Path(path)) for path in contents]
    seen: dict[Path, PathLike] = {}
    for path, target in zip(contents, targets, strict=True):
        if target in seen:
            raise ModelError(str(path), f"is the same file as {seen[target]}", expected="a different file")
        seen[target] = path
    for target in targets:
        _finish_interrupted(target)
        _remove_stale(target)
    save = os.urandom(8).hex()
    written: list[tuple[Path, Path]] = []
    journals: list[Path] = []
    current = None
    try:
        for current, target in zip(contents, targets, strict=True):
            written.append((_temporary(target, contents[current], save), target))
        if len(written) > 1:
            current = targets[0]
            journals = _commit(targets, save)
        for tmp, target in written:
            current = target
            os.replace(tmp, target)
        _sync_folders(targets)
        for journal in journals:
            journal.unlink()
    except OSError as exc:
        _abandon(written, journals)
        raise _cannot_write(current, exc) from exc
    except BaseException:  # interrupted (Ctrl+C): once committed, the save is left for the next one to complete
        if not journals:
            _abandon(written, journals)
        raise
    finally:
        with _WRITING_LOCK:
            _WRITING.difference_update([tmp for tmp, _ in written] + journals)


def _commit(targets: list[Path], save: str) -> list[Path]:
    """The save's journals written (each through a temporary of its folder's first target, which a later write
    removes if this process is killed meanwhile) and flushed: from here on the save is completed, by this
    process or by the next one that writes or reads one of its files."""
    text = json.dumps({"targets": [str(t) for t in targets]})
    journals = []
    for journal, first in _journals(targets, os.getpid(), _HOST, save).items():
        tmp = _temporary(first, text, save, ".pair")
        os.replace(tmp, _register(journal))
        with _WRITING_LOCK:
            _WRITING.discard(tmp)
        journals.append(journal)
    _sync_folders(journals)
    return journals


def _abandon(written: list[tuple[Path, Path]], journals: list[Path]) -> None:
    """A save that failed with an error: its temporaries and journals removed (the files renamed stay)."""
    for path in [tmp for tmp, _ in written] + journals:
        path.unlink(missing_ok=True)


def finish_interrupted(path: PathLike) -> bool:
    """Completes a save of several files that was killed after its journal was written, if one concerns `path`
    (True then): a reader of an output calls this before reading it and its companions."""
    return _finish_interrupted(_target(Path(path)))


def _journals(targets: list[Path], pid: int, host: str, save: str) -> dict[Path, Path]:
    """Where a save's journals go, each with the target it is named after: one in each folder the save writes to,
    named after its first target there."""
    first: dict[Path, Path] = {}
    for target in targets:
        first.setdefault(target.parent, target)
    return {folder / f".{target.name}.{pid}@{host}.{save}.pair": target for folder, target in first.items()}


def _finish_interrupted(target: Path) -> bool:
    """Completes every interrupted save whose journal beside `target` names it and whose writer has ended."""
    finished = False
    for journal in target.parent.glob(".*.pair"):
        match = _JOURNAL.fullmatch(journal.name)
        if match and match["host"] == _HOST:
            with contextlib.suppress(OSError, ValueError, TypeError, KeyError):  # not a journal of ours: left
                finished |= _complete(journal, int(match["pid"]), match["save"], target)
    return finished


def _complete(journal: Path, pid: int, save: str, target: Path) -> bool:
    """Renames the save's temporaries over their targets, then removes its journals. Only the temporary files the
    journal's own name implies are renamed (a regular file `.<target>.<pid>@<host>.<save>.tmp` beside each
    target): nothing is taken from the journal but the targets, which must include `target` and the journal."""
    targets = [Path(t) for t in json.loads(journal.read_text(encoding="utf-8"))["targets"]]
    journals = _journals(targets, pid, _HOST, save)
    if target not in targets or journal not in journals or not _writer_ended(pid, journal):
        return False
    for done in targets:
        tmp = done.with_name(f".{done.name}.{pid}@{_HOST}.{save}.tmp")
        if _regular_file(tmp):
            os.replace(tmp, done)
    _sync_folders(targets)
    for leftover in journals:
        leftover.unlink(missing_ok=True)
    return True


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


def _regular_file(path: Path) -> bool:
    """Whether `path` is a file of its own (not missing, not a symbolic link, not a folder)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _temporary(target: Path, content: str | bytes, save: str | None = None, extension: str = "") -> Path:
    """The content in a new temporary file beside the target, flushed to disk, with the target's permissions
    (a new file gets the usual ones, from the umask)."""
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    tmp = _temporary_path(target, extension, save)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        data = content if isinstance(content, bytes) else content.encode("utf-8", "backslashreplace")
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


def _temporary_path(target: Path, extension: str = "", save: str | None = None) -> Path:
    """A new temporary file name beside the target, registered as being written by this process; `save` names
    the save it belongs to (its journal finds it by that name), else a new one."""
    save = save or os.urandom(8).hex()
    return _register(target.with_name(f".{target.name}.{os.getpid()}@{_HOST}.{save}.tmp{extension}"))


def _register(path: Path) -> Path:
    """`path` marked as being written by this process, so that no thread of it takes it for a leftover."""
    with _WRITING_LOCK:
        _WRITING.add(path)
    return path


def _sync_folders(paths: Iterable[Path]) -> None:
    for folder in {path.parent for path in paths}:
        _sync_folder(folder)


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
    try:
        names = os.listdir(target.parent)
    except OSError:  # a folder that cannot be listed holds nothing to clear; the write itself says why it fails
        return
    for leftover in (target.parent / name for name in names if name.startswith(f".{target.name}.")):
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
