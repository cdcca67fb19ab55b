"""The bundled sample mechanisms (`samples/*.mbs`), each loadable in one call: `samples.load("four_bar")`.

The model code and numpy are imported when a sample is loaded, not with this module: `mbstudio samples` lists
them without either."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .model import Model

# pyproject.toml installs the top-level samples/ folder as the package `mbstudio._samples`, so this finds it in a
# source checkout, an editable install and a wheel alike; installed packages are plain folders, hence a Path.
FOLDER = Path(str(files("mbstudio._samples")))
DEFAULT = "sla_suspension"


def names() -> list[str]:
    return sorted(p.stem for p in FOLDER.glob("*.mbs"))


def path(name: str) -> Path:
    p = FOLDER / f"{name.removesuffix('.mbs')}.mbs"
    if not p.exists():
        raise FileNotFoundError(f"no sample named '{name}'; the samples are: {', '.join(names())}")
    return p


def load(name: str = DEFAULT) -> Model:
    from .model import load as load_file

    return load_file(path(name))


def drawn_four_bar(crank_angle: float = 1.0) -> list[tuple[np.ndarray, np.ndarray]]:
    """The three links a person draws for a four-bar in the plane z = 0, as (start, end) points: the crank from
    O1 = 0 (0.1 long, at `crank_angle`), the rocker from O3 = (0.4, 0, 0) to C (0.3 long) and the coupler from B to
    C (0.35 long), C where the coupler's and the rocker's circles meet on the upper side (the tutorial draws it,
    a window test clicks it)."""
    import numpy as np

    o1, o3 = np.zeros(3), np.array([0.4, 0.0, 0.0])
    b = 0.1 * np.array([np.cos(crank_angle), np.sin(crank_angle), 0.0])
    d = np.linalg.norm(o3 - b)
    along = (0.35**2 - 0.3**2 + d**2) / (2 * d)  # from B towards O3, to the chord through both circles' meets
    u = (o3 - b) / d
    c = b + along * u + np.sqrt(0.35**2 - along**2) * np.array([-u[1], u[0], 0.0])
    return [(o1, b), (o3, c), (b, c)]
