"""URDF input checked at the front door: strict XML, link and joint names once each, finite
numbers, and meshes read only from the URDF's folder and the package folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mbstudio.cli import main
from mbstudio.model import ModelError

pytest.importorskip("yourdfpy")
from mbstudio.io.urdf_import import import_urdf  # noqa: E402

ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="arm"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="MESH"/></geometry></visual></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/><limit lower="-1" upper="2" effort="10" velocity="1"/></joint>
</robot>
"""


def _urdf(folder: Path, text: str = ARM, mesh: str = "arm.stl") -> Path:
    path = folder / "robot.urdf"
    path.write_text(text.replace("MESH", mesh))
    return path


def _refused(capsys, path: Path, *words: str) -> str:
    """`mbstudio import` exits 2 with one line naming `words`, and writes no model."""
    out = path.with_suffix(".mbs")
    assert main(["import", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and not out.exists()
    return err


def test_a_truncated_file_is_refused_naming_its_line_and_column(tmp_path, capsys):
    """yourdfpy's recovering parser imported what it could of it, with exit 0."""
    path = _urdf(tmp_path)
    cut = path.read_bytes()[:400]
    path.write_bytes(cut)
    last = len(cut.splitlines())
    _refused(capsys, path, f"line {last}, column ", "not well-formed")


def test_an_undefined_entity_is_refused_not_read_as_a_letter(tmp_path, capsys):
    """The recovering parser turned `&foo;` into a link named `n`."""
    path = _urdf(tmp_path, ARM.replace('<link name="arm">', '<link name="&foo;">'))
    _refused(capsys, path, "line 4, column 20", "Entity 'foo' not defined")


def test_a_dtd_and_a_root_that_is_no_robot_are_refused(tmp_path, capsys):
    declared = ARM.replace("<robot", '<!DOCTYPE robot [<!ENTITY a "arm">]>\n<robot', 1)
    _refused(capsys, _urdf(tmp_path, declared), "declares a DTD")
    _refused(capsys, _urdf(tmp_path, ARM.replace("robot", "html")), "is neither URDF nor MJCF", "'html'")
    with pytest.raises(ModelError, match="line 2: is not a URDF robot"):
        import_urdf(_urdf(tmp_path, ARM.replace("robot", "html")))


@pytest.mark.parametrize(
    ("kind", "twice"),
    [
        ("link", '<link name="arm"><inertial><mass value="7"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" '
         'iyz="0"/></inertial></link>'),
        ("joint", '<link name="hand"/><joint name="shoulder" type="fixed"><parent link="arm"/><child link="hand"/>'
         "</joint>"),
    ],
)  # fmt: skip
def test_a_name_defined_twice_is_refused_naming_both_lines(tmp_path, capsys, kind, twice):
    """Two links of one name merged (the last won: mass 7 instead of 1)."""
    path = _urdf(tmp_path, ARM.replace("</robot>", f"  {twice}\n</robot>"))
    _refused(capsys, path, f"line 9: {kind} '", f"has the name of the {kind} on line")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (('ixx="0.01"', 'ixx="nan"'), ("line 5: <inertia ixx>", "is not a finite number", "'nan'")),
        (('izz="0.02"', 'izz="inf"'), ("line 5: <inertia izz>", "is not a finite number")),
        (('izz="0.02"', 'izz="1e999"'), ("<inertia izz>", "is not a finite number")),
        (('<mass value="1"/>', '<mass value="heavy"/>'), ("line 4: <mass value>", "is not a number")),
        (('xyz="0 0 0.5"', 'xyz="0 nan 0.5"'), ("line 8: <origin xyz>",)),
        (('lower="-1"', 'lower="-inf"'), ("<limit lower>",)),
    ],
)
def test_a_number_that_is_not_finite_is_refused_cleanly(tmp_path, capsys, change, words):
    """`ixx="nan"` ended in numpy's LinAlgError (eigenvalues of a NaN tensor)."""
    _refused(capsys, _urdf(tmp_path, ARM.replace(*change)), *words)


@pytest.fixture
def packages(tmp_path) -> Path:
    """src/pkg (a ROS package: its package.xml) holding the robot's URDF and mesh, beside a secret."""
    package = tmp_path / "src" / "pkg"
    (package / "meshes").mkdir(parents=True)
    (package / "urdf").mkdir()
    (package / "package.xml").write_text("<package/>")
    (package / "meshes" / "arm.stl").write_text("solid a\nendsolid a\n")
    (tmp_path / "secret.stl").write_text("not yours")
    (package / "meshes" / "link.stl").symlink_to(tmp_path / "secret.stl")
    return package


@pytest.mark.parametrize(
    "mesh",
    [
        "/etc/passwd",
        "file:///etc/passwd",
        "../../../secret.stl",
        "package://pkg/../../secret.stl",
        "package://pkg/meshes/link.stl",  # a link inside the package to a file outside it
        "package://../secret.stl",
        "package://etc/passwd",  # '/' is above every URDF, but no ROS package
    ],
)
def test_a_mesh_outside_the_urdf_folder_and_the_packages_is_not_stored(packages, mesh):
    result = import_urdf(_urdf(packages / "urdf", mesh=mesh), [packages.parent])
    assert result.model.body("arm").shape is None
    assert any(mesh in n and ("is outside" in n or "not found" in n) for n in result.notes), result.notes
    assert all(str(packages.parent.parent / "secret.stl") not in n for n in result.notes)


@pytest.mark.parametrize("mesh", ["package://pkg/meshes/arm.stl", "../meshes/arm.stl", "arm.stl"])
def test_a_mesh_inside_its_package_or_beside_the_urdf_is_found(packages, mesh):
    (packages / "urdf" / "arm.stl").write_text("solid b\nendsolid b\n")
    given = import_urdf(_urdf(packages / "urdf", mesh=mesh), [packages.parent]).model.body("arm").shape["file"]
    found = import_urdf(_urdf(packages / "urdf", mesh=mesh)).model.body("arm").shape["file"]  # its own package
    assert given == found and Path(found).is_file()
    assert Path(found) == (packages / "urdf" / "arm.stl" if mesh == "arm.stl" else packages / "meshes" / "arm.stl")


def test_a_package_beside_the_urdf_needs_its_package_xml(packages, tmp_path):
    """Folders above the URDF are searched for package://NAME only where NAME is a ROS package."""
    other = tmp_path / "src" / "other"
    other.mkdir()
    (other / "part.stl").write_text("solid c\nendsolid c\n")
    path = _urdf(packages / "urdf", mesh="package://other/part.stl")
    assert import_urdf(path).model.body("arm").shape is None
    (other / "package.xml").write_text("<package/>")
    assert import_urdf(path).model.body("arm").shape["file"] == str((other / "part.stl").resolve())
    assert os.path.samefile(import_urdf(path, [tmp_path / "src"]).model.body("arm").shape["file"], other / "part.stl")


def test_a_bad_file_leaves_no_model_and_raises_model_error(tmp_path):
    with pytest.raises(ModelError, match="not well-formed"):
        import_urdf(_urdf(tmp_path, ARM[:-12]))


def test_an_inertia_too_large_for_any_body_is_refused(tmp_path, capsys):
    """-1e308 is finite, but its principal axes overflowed (LinAlgError): found by the fuzz test."""
    _refused(capsys, _urdf(tmp_path, ARM.replace('ixy="0"', 'ixy="-1e308"')), "<inertia ixy>", "is beyond ±1e+12")
