"""Names of ours for what another format names (URDF links and joints, MJCF bodies and joints).

Other formats allow names that are not identifiers (`joint_0.0`, `LF HAA`), and they keep bodies and joints in
separate name spaces, while our coordinates and inertial symbols share one (docs/file-format.md, Names). An
importer asks `SymbolNames` for a name of each kind; the original text stays in the document where it is free
text (a body's `name`) and in the import's notes when a name had to change.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import numpy as np

from ..model.names import MAX_LENGTH, RESERVED, inertial_names


def sanitised(name: str) -> str:
    """An identifier of ours from a foreign name: other characters become `_`, a leading digit gets a letter."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return text if re.match(r"[A-Za-z]", text) else f"n{text}"


class SymbolNames:
    """Hands out names that are unique where ours must be: symbols (labels' inertial symbols, coordinates and
    their `d_` velocities, force elements) across all kinds, joint names among joints."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.joints: set[str] = set()

    def unique(self, candidate: str, symbols: Callable[[str], Iterable[str]]) -> str:
        """`candidate`, or it with _2, _3, ... until none of its symbols is taken or reserved."""
        stem, n = candidate[: MAX_LENGTH - 4], 1
        name = candidate[:MAX_LENGTH]
        while any(s in self.taken or s in RESERVED for s in symbols(name)):
            n += 1
            name = f"{stem}_{n}"
        self.taken.update(symbols(name))
        return name

    def label(self, foreign: str) -> str:
        candidate = sanitised(foreign)
        if candidate.lower() == "ground":  # ground is our fixed body's name, not a body's label
            candidate += "_link"
        return self.unique(candidate, inertial_names)

    def coordinate(self, foreign: str) -> str:
        return self.unique(sanitised(foreign), lambda n: [n, f"d_{n}"])

    def element(self, foreign: str) -> str:
        return self.unique(sanitised(foreign), lambda n: [n])

    def joint(self, foreign: str) -> str:
        name, stem, n = sanitised(foreign)[:MAX_LENGTH], sanitised(foreign)[: MAX_LENGTH - 4], 1
        while name in self.joints:
            n += 1
            name = f"{stem}_{n}"
        self.joints.add(name)
        return name


def clean(values) -> list[float]:
    """Plain floats for the document, with the rounding dust of rotations (1e-17) set to zero."""
    return [0.0 if abs(v) < 1e-15 else float(v) for v in np.asarray(values, float).ravel()]


def reference_direction(axis: np.ndarray) -> np.ndarray:
    """The unit axis least aligned with `axis`: the x reference of a joint frame whose z is `axis`."""
    return np.eye(3)[int(np.argmin(np.abs(axis)))]


def one_line(text: str, default: str = "robot") -> str:
    return " ".join(str(text).split())[:200] or default


def inertia_parameters(mass: float, centre, centroidal) -> list[float]:
    """Mass, centre of mass and the inertia tensor about it (body axes) -> our ten parameters about the body
    origin: m, m c, and the tensor moved to the origin (parallel axes)."""
    c, tensor = np.asarray(centre, float), np.asarray(centroidal, float)
    about_origin = tensor + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return clean([mass, *(mass * c), *about_origin[0], *about_origin[1, 1:], about_origin[2, 2]])
