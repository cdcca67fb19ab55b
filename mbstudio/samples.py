"""The bundled sample mechanisms (`samples/*.mbs`), each loadable in one call: `samples.load("four_bar")`."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .model import Model
from .model import load as load_file

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
    return load_file(path(name))
