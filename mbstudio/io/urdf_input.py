"""What a URDF file must be before it is imported, and where its meshes may be read from.

`check_urdf` reads the file strictly, before yourdfpy parses it with its recovering parser (which turned an
undefined entity into a link named `n` and imported a truncated file): well-formed XML, no DTD, a `robot` root,
each link and joint name once (a second definition replaced the first), the attributes the import needs, and
the numbers it uses, as many as each attribute holds, finite and within any mechanism's values. Each refusal is a
ModelError naming the file and the line.

`MeshPlaces` resolves a mesh reference to a file inside the URDF's folder, a package folder given (or on
ROS_PACKAGE_PATH), or a ROS package above the URDF, once `..` and symbolic links are resolved: `/etc/passwd`,
`../../..` and `package://pkg/../..` are not read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model import ModelError
from ..model.validation import MAGNITUDE_MAX, TEXT_RULE, UNPRINTABLE

# the numbers the import uses, by element and attribute: how many each holds (all finite)
NUMBERS = {
    "origin": {"xyz": (3,), "rpy": (3,)},
    "mass": {"value": (1,)},
    "inertia": dict.fromkeys(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), (1,)),
    "axis": {"xyz": (3,)},
    "limit": {"lower": (1,), "upper": (1,)},
    "dynamics": {"damping": (1,), "friction": (1,)},
    "box": {"size": (3,)},
    "cylinder": {"radius": (1,), "length": (1,)},
    "sphere": {"radius": (1,)},
    "mesh": {"scale": (1, 3)},
    "color": {"rgba": (4,)},
    "mimic": {"multiplier": (1,), "offset": (1,)},
}
INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")  # all required by URDF's specification


REQUIRED = {"joint": "type", "parent": "link", "child": "link", "mesh": "filename"}  # besides names


def check_urdf(data: bytes, path: Path) -> None:
    """Refuse, naming the line, a file that is not well-formed XML, declares a DTD, is not a robot, repeats a
    link or joint name, lacks an attribute the import needs, or holds numbers the import uses that are not as
    many finite numbers as they should be."""
    from lxml import etree

    parser = etree.XMLParser(recover=False, resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line, column = exc.position
        reason = re.sub(r", line \d+, column \d+$", "", exc.msg)  # said once, in front
        raise ModelError(
            f"{path}, line {line}, column {column}",
            f"is not a readable URDF: the XML is not well-formed ({reason})",
            expected="a URDF file, complete (parsed strictly: nothing is guessed)",
        ) from None
    if root.getroottree().docinfo.internalDTD is not None:
        raise ModelError(str(path), "declares a DTD (<!DOCTYPE ... [...]>)", expected="URDF, which has none")
    if root.tag != "robot":
        raise ModelError(f"{path}, line {root.sourceline}", "is not a URDF robot", f"<{root.tag}>", "<robot>")
    for kind in ("link", "joint"):
        _unique_names(root.findall(kind), kind, path)
    _complete_inertias(root, path)
    # what the robot's own links, joints and materials hold (a <transmission> or <gazebo> has its own <joint>)
    own = [element for kind in ("link", "joint", "material") for element in root.findall(kind)]
    for element in (e for part in own for e in part.iter()):
        needed = REQUIRED.get(element.tag)
        if needed and not element.get(needed):
            raise ModelError(f"{path}, line {element.sourceline}: <{element.tag}>", f"has no {needed}")
        for name, counts in NUMBERS.get(element.tag, {}).items():
            if element.get(name) is not None:
                _numbers(element, name, counts, path)


def _complete_inertias(root, path: Path) -> None:
    """Each link's <inertia> gives all six moments and products: a parser fills a missing one with 0, which is
    an inertia the file does not state (an <inertia ixx="1"/> alone read as a rod)."""
    for link in root.findall("link"):
        for inertia in link.findall("inertial/inertia"):
            missing = [name for name in INERTIA if inertia.get(name) is None]
            if missing:
                raise ModelError(
                    f"{path}, line {inertia.sourceline}: link '{link.get('name')}' <inertia>",
                    f"lacks {', '.join(missing)}",
                    expected="all six of " + ", ".join(INERTIA) + ' (URDF requires them; write "0" for a zero one)',
                )


def _wrong(values: list[float], counts: tuple[int, ...], bound: float) -> str:
    if not values:
        return "is not a number"
    if len(values) not in counts:
        return f"holds {len(values)} number(s)"
    return "is not a finite number" if not all(np.isfinite(values)) else f"is beyond ±{bound:g}"


def _unique_names(elements: list, kind: str, path: Path) -> None:
    first: dict[str, int] = {}
    for element in elements:
        name = element.get("name")
        if not name:
            raise ModelError(f"{path}, line {element.sourceline}: <{kind}>", "has no name", expected='name="..."')
        if UNPRINTABLE.search(name):  # its length is the import's to judge (source_name)
            where = f"{path}, line {element.sourceline}: {kind} {ascii(name)}"  # not shown as it would display
            raise ModelError(where, "has a name that is not one line of printable text", name, TEXT_RULE)
        if name in first:
            raise ModelError(
                f"{path}, line {element.sourceline}: {kind} '{name}'",
                f"has the name of the {kind} on line {first[name]}",
                name,
                f"each {kind} name once (a second definition would silently replace the first)",
            )
        first[name] = element.sourceline


def _numbers(element, attribute: str, counts: tuple[int, ...], path: Path) -> None:
    """As many numbers as the attribute holds, finite, and (but for joint limits, where a huge one means none)
    within any mechanism's values: an inertia of 1e308 overflows its principal axes' computation."""
    text = element.get(attribute)
    try:
        values = [float(v) for v in text.split()]
    except ValueError:
        values = []
    bound = np.inf if element.tag == "limit" else MAGNITUDE_MAX
    if len(values) not in counts or not all(np.isfinite(values)) or max(map(abs, values)) > bound:
        raise ModelError(
            f"{path}, line {element.sourceline}: <{element.tag} {attribute}>",
            _wrong(values, counts, bound),
            text,
            f"{' or '.join(map(str, counts))} finite number(s) separated by spaces"
            + ("" if bound == np.inf else f", within ±{MAGNITUDE_MAX:g}"),
        )


@dataclass
class MeshPlaces:
    """Where a URDF's meshes may be read from: its folder, the package folders given (and ROS_PACKAGE_PATH), and
    the folders above it, where `package://NAME` is a folder NAME that is the URDF's own package or a ROS package
    (it holds a package.xml) beside it."""

    here: Path
    given: list[Path]
    above: list[Path]

    @classmethod
    def around(cls, path: Path, given) -> MeshPlaces:
        folders = [Path(p).expanduser() for p in given]
        folders += [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
        return cls(path.resolve().parent, folders, list(path.resolve().parents))

    def resolve(self, filename: str) -> tuple[Path | None, bool]:
        """(the mesh file, False), (None, False) when it is not found, (None, True) when it lies outside."""
        if filename.startswith("package://"):
            package, _, rest = filename[len("package://") :].partition("/")
            if package in ("", ".", "..") or "\\" in package:
                return None, True
            candidates = [(root / rest, root) for root in self._packages(package)]
        else:
            path = Path(filename[len("file://") :] if filename.startswith("file://") else filename)
            candidate = path if path.is_absolute() else self.here / path
            roots = [self.here, *self.given, *(a for a in self.above if _is_file(a / "package.xml"))]
            candidates = [(candidate, root) for root in roots]
        existing = [(c, root) for c, root in candidates if _is_file(c)]
        inside = next((c for c, root in existing if _inside(c, root)), None)
        return (inside.resolve(), False) if inside else (None, bool(existing))

    def _packages(self, name: str) -> list[Path]:
        roots = [root for folder in self.given for root in (folder / name, folder) if root.name == name]
        roots += [a for a in self.above if a.name == name]
        return roots + [a / name for a in self.above if _is_file(a / name / "package.xml")]


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name longer than the file system takes, say
        return False


def _inside(path: Path, root: Path) -> bool:
    """Whether the file `path` is inside `root` once links and `..` are resolved."""
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))
