"""Where the PyPI package example-robot-data keeps its robots' URDF files (tests and `mbstudio bench`)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

# robot -> its URDF file in the package: arms, a quadruped, a humanoid's arm (revolute joints only)
ROBOTS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "talos_left_arm": "talos_data/robots/talos_left_arm.urdf",
    "z1": "z1_description/urdf/z1.urdf",
}


def robots_folder() -> Path | None:
    """The package's robots/ folder, or None when example-robot-data is not installed."""
    try:
        share = importlib.metadata.distribution("example-robot-data").locate_file("cmeel.prefix/share")
    except importlib.metadata.PackageNotFoundError:
        return None
    folder = Path(share) / "example-robot-data" / "robots"
    return folder if folder.is_dir() else None


def robot_path(name: str) -> Path:
    """The URDF file of a robot of ROBOTS; FileNotFoundError naming the package when it is not installed."""
    folder = robots_folder()
    if folder is None:
        raise FileNotFoundError("example-robot-data is not installed: pip install example-robot-data")
    return folder / ROBOTS[name]
