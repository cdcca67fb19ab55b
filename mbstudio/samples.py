"""The bundled sample mechanisms (`samples/*.mbs`), each loadable in one call: `samples.load("four_bar")`."""

from __future__ import annotations

from pathlib import Path

from .model import Model
from .model import load as load_file

FOLDER = Path(__file__).resolve().parent.parent / "samples"
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
