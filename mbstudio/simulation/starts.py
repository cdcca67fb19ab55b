"""What a run of a document starts from: the float64 mechanism of its text (the partition chosen at the initial
configuration), its forces, and its closed initial configuration, whose inertia is checked.

Computing it reads the text again and chooses the partition, assembles and decides the branch signs in numpy
(the Delta ~15 ms, more than its run of a second). A start is kept for the last few documents of the process, and
filed in the engine cache beside the engines (numerics/native_cache.py: a private folder, every file sealed by its
digest), under a hash of the text and of the code and numpy that computed it: the first run in a new process
reads it (under 1 ms) instead. Reading it gives the bits a computation would (tests/test_starts.py), because
the same code computed them from the same text; a start whose assembly changed branch is never kept, so its
warning is given by every run.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import pickle
from pathlib import Path

import numpy as np

from ..dynamics.closed_loop import reduced_mass_matrix
from ..dynamics.engine import fits_engine
from ..dynamics.forces import AppliedForces
from ..kinematics.mechanism import Mechanism
from ..model import loads
from ..model.document import EULER_JOINTS
from ..model.errors import ModelError
from ..model.validation import inertia_warnings
from ..numerics.compiled import code_version
from ..numerics.native_cache import CacheRefused, cache_folder, discard, read_sealed, write_sealed
from .measures import remember_pose

Start = tuple[Mechanism, AppliedForces, np.ndarray]

# what a run of a document starts from, by its text: a run of the same document again starts at once
_STARTS: dict[str, Start] = {}
_KEPT = 8


def clear_starts() -> None:
    """Forgets the documents' starts kept in this process: the next run of each starts as in a new process (the
    bench's first runs), from the engine cache where it was filed."""
    _STARTS.clear()


def started(text: str) -> bool:
    """Whether a run of the document text has started, in this process or in one that filed its start (which is
    then read and kept): its checks passed then, by this code (the file's key holds it), and need not be run again."""
    if text in _STARTS:
        return True
    filed = _filed(text)
    found = _read(filed) if filed is not None else None
    if found is not None:
        _keep(text, found)
    return found is not None


def document_start(text: str) -> Start:
    """The float64 mechanism of the document text (read from the text: the caller's document may change later),
    its forces and its closed initial configuration (1, n), whose inertia is checked: kept in this process and
    filed in the engine cache, unless the assembly changed branch."""
    found = _STARTS.get(text)
    if found is not None:
        return found
    filed = _filed(text)
    found = _read(filed) if filed is not None else None
    if found is None:
        found = own_start(Mechanism(loads(text)))
        if _branch_changed(found[0]):
            return found
        if filed is not None and fits_engine(found[0].model):  # a model too large for an engine: too large to file
            _write(filed, found)
    _keep(text, found)
    return found


def _keep(text: str, start: Start) -> None:
    if len(_STARTS) >= _KEPT:
        _STARTS.pop(next(iter(_STARTS)))
    _STARTS[text] = start


def own_start(mech: Mechanism) -> Start:
    """A mechanism given with its own partition: its forces and its closed initial configuration, checked."""
    q0 = mech.assemble(None)  # once: the inertia check and the compiled run start there
    check_inertia(mech, q0)
    if not _branch_changed(mech):
        remember_pose(mech, q0)
    return mech, AppliedForces(mech), q0


def _branch_changed(mech: Mechanism) -> bool:
    report = mech.last_report
    return report is not None and bool(np.any(report.branch_changed))


def _filed(text: str) -> Path | None:
    """Where the start of this text is filed: under the hash of the text, the code the engines are traced from
    (which reads the text, partitions and assembles), this module (the inertia check) and numpy's version (the
    assembly's last bits); None without a usable cache."""
    key = hashlib.sha256(_identity() + b"\0" + text.encode()).hexdigest()
    try:
        return cache_folder("starts") / f"start_{key[:32]}.pickle"
    except (CacheRefused, OSError):
        return None


@functools.cache
def _identity() -> bytes:
    return f"{code_version()}\n{np.__version__}\n".encode() + Path(__file__).read_bytes()


def _read(path: Path) -> Start | None:
    """The start filed at `path` by `_write`, or None (nothing there, or a file that does not read back as one,
    which is removed). The file is the cache's own, sealed by its digest like the libraries this process loads."""
    data = read_sealed(path)
    if data is None:
        return None
    try:
        mech, q0 = pickle.loads(data)
    except Exception:  # noqa: BLE001 - any failure to read our own file back means: compute it again
        discard(path)
        return None
    if not isinstance(mech, Mechanism) or not isinstance(q0, np.ndarray):
        discard(path)
        return None
    remember_pose(mech, q0)
    return mech, AppliedForces(mech), q0


def _write(path: Path, start: Start) -> None:
    mech, _, q0 = start
    with contextlib.suppress(OSError, CacheRefused, pickle.PicklingError, TypeError, AttributeError):
        write_sealed(path, pickle.dumps((mech, q0), protocol=pickle.HIGHEST_PROTOCOL))  # unwritten: computed again


def check_inertia(mech: Mechanism, q: np.ndarray | None = None) -> None:
    """A ModelError naming the coordinates that move no inertia at the initial configuration (a massless
    model, or a spherical joint at its gimbal lock, β = ±π/2): their accelerations are undetermined, which
    ended runs in a LinAlgError or NaN."""
    q = mech.assemble(None) if q is None else q
    M = np.asarray(reduced_mass_matrix(mech, q)[0], dtype=float)
    values, vectors = np.linalg.eigh(M)
    singular = values <= 1e-12 * max(values[-1], 1e-300)
    if not singular.any():
        return
    weight = np.sqrt((vectors[:, singular] ** 2).sum(axis=1))  # each coordinate's share of the null space
    names = [mech.independent[i] for i in np.nonzero(weight > 0.1 * weight.max())[0]]
    locked, impossible = _gimbal_locks(mech, q[0]), inertia_warnings(mech.model)
    why = (
        f"Euler-angle joint {', '.join(locked)} is at its gimbal lock (β = ±π/2; a ball or free joint has none)"
        if locked
        else "no mass moves with them"
        if values[0] >= 0 or not impossible
        else f"the mass matrix is not positive definite there; {'; '.join(impossible)}"
    )
    raise ModelError(
        "inertia",
        f"the motion of {', '.join(names)} is undetermined at the initial configuration: {why}",
        None,
        "bodies with mass and inertia on every moving coordinate, and spherical joints away from β = ±π/2 "
        "(change the initial values or the joint's frames)",
    )


def _gimbal_locks(mech: Mechanism, q: np.ndarray) -> list[str]:
    """Spherical and free_euler tree joints whose middle Euler angle is within 1e-6 of ±π/2."""
    locked = []
    for link in mech.tree.links:
        if link.joint.type in EULER_JOINTS:
            beta = q[mech.coordinates.index(link.joint.coordinates[EULER_JOINTS[link.joint.type]].name)]
            if abs(abs(np.remainder(beta + np.pi, 2 * np.pi) - np.pi) - np.pi / 2) < 1e-6:
                locked.append(f"'{link.joint.name}'")
    return locked
