"""One entry for every format a mechanism is imported from: URDF or MJCF, told apart by the file's root element.

result = import_mechanism("robot.xml")    # result.model, result.notes
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..model import ModelError

FORMATS = {"robot": "URDF", "mujoco": "MJCF"}


def file_format(path: str | os.PathLike) -> str:
    """ "URDF" or "MJCF", from the first element of the file (its extension may be .xml for either)."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(str(path), "does not exist", expected="a URDF or MJCF file")
    with open(path, "rb") as handle:
        head = handle.read(65536).decode("utf-8", "replace")
    head = re.sub(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", "", head, flags=re.S)
    match = re.search(r"<\s*([A-Za-z_][\w.-]*)", head)
    root = match.group(1) if match else None
    if root not in FORMATS:
        raise ModelError(
            str(path), "is neither URDF nor MJCF", root, "a file whose root element is <robot> or <mujoco>"
        )
    return FORMATS[root]


def import_mechanism(
    path: str | os.PathLike,
    package_paths=(),
    floating_base: bool = True,
    repair_inertias=False,
    snap_angles=False,
    ground: bool = True,
):
    """The URDF or MJCF file as a document: an import result with `model` and `notes`. The URDF options (a root
    link floating or welded, inertias kept or repaired) do not apply to MJCF, whose free joints are written in
    the file and whose inertias MuJoCo's compiler checks. A floating robot gets contacts from its collision
    geometry on a ground plane (collision_geometry.py); `ground=False` leaves them out."""
    if file_format(path) == "MJCF":
        from .mjcf_import import import_mjcf

        return import_mjcf(path, package_paths, ground)  # the folders its includes and assets may also be read from
    from .urdf_import import import_urdf

    return import_urdf(
        path,
        package_paths,
        floating_base=floating_base,
        repair_inertias=repair_inertias,
        snap_angles=snap_angles,
        ground=ground,
    )
