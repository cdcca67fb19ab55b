"""File › Import URDF and File › Export › Model as URDF in the window."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from mbstudio.io.example_robots import robot_path, robots_folder
from mbstudio.jobs import DONE

pytest.importorskip("yourdfpy")


def _ur5() -> Path:
    if robots_folder() is None:
        pytest.skip("example-robot-data is not installed (the test extra has it)")
    return robot_path("ur5")


def _import(window, qtbot, path, package_paths=(), **options):
    job = window.import_urdf(str(path), {"package_paths": list(package_paths), **options})
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    return job


@pytest.mark.slow  # 13 s and more on a cold engine cache; the README run keeps the window's URDF job path
def test_a_real_robot_imports_as_a_new_document_with_its_meshes_drawn(window, qtbot, tmp_path):
    window.actions["import_urdf"]  # in the File menu
    job = _import(window, qtbot, _ur5())  # its root link is 'world': fixed
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: window.document.model.name == "ur5", timeout=5000)
    model = window.document.model
    assert window.document.path is None and len(model.coordinate_names()) == 6
    assert window.view.scene.problems == []  # every .dae mesh was read
    assert "Imported" in window.statusBar().currentMessage()
    window.window_image().save(str(tmp_path / "ur5_window.png"))
    assert (tmp_path / "ur5_window.png").stat().st_size > 20_000
    # and on to an analysis and an export, as a user would: base parameters, then the equations as C
    analysis = window.run_job("base_parameters", {"method": "dp"}, "Base parameters")
    qtbot.waitUntil(lambda: not analysis.running, timeout=120_000)
    assert analysis.state == DONE, analysis.error
    assert window.base_table.table.rowCount() == 36  # Pinocchio's regressor has the same rank (tests/test_urdf.py)
    export = window.export_c(str(tmp_path))
    qtbot.waitUntil(lambda: not export.running, timeout=120_000)
    assert export.state == DONE, export.error
    qtbot.waitUntil(lambda: len(list(tmp_path.glob("*.[ch]"))) == 2, timeout=5000)


def test_notes_are_shown_and_a_bad_file_fails_as_a_job_with_its_message(window, qtbot, tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm"><link name="base"/><link name="arm"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="5" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint></robot>'
    )
    assert _import(window, qtbot, urdf, fixed_base=True).state == DONE
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "urdf_notes") is not None, timeout=5000)
    text = window.findChild(QMessageBox, "urdf_notes").text()
    assert "not one a rigid body can have" in text and "kept as written" in text
    assert window.document.model.coordinate_names() == ["j"]
    urdf.write_text(urdf.read_text().replace("continuous", "planar"))
    failed = _import(window, qtbot, urdf)
    assert failed.state != DONE and "is planar" in failed.error
    assert window.document.model.name == "arm"  # the document stays as it was


def test_the_import_dialog_floats_the_root_or_welds_it_and_repairs_inertias_on_request(window, qtbot, tmp_path):
    """File › Import of a URDF asks for its options: the ROS packages' folder, a fixed base, repaired inertias."""
    from mbstudio.gui.jobs.job_options import UrdfImportDialog

    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm"><link name="base"><inertial><mass value="2"/>'
        '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<link name="arm.1"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="5" ixy="0" ixz="0" iyz="0"/>'
        '</inertial></link><joint name="j.1" type="continuous"><parent link="base"/><child link="arm.1"/>'
        '<axis xyz="0 0 1"/></joint></robot>'
    )
    dialog = UrdfImportDialog(window.document.model, None, window)
    qtbot.addWidget(dialog)
    assert dialog.options() == {"package_paths": [], "package_folder": "", "fixed_base": False,
                                "repair_inertias": False, "no_ground": False}  # fmt: skip
    assert "floats on a free joint" in dialog.hint.text()
    dialog.lines["package_folder"].setText(str(tmp_path / "nowhere"))
    assert not dialog.ok.isEnabled() and "ROS packages: " in dialog.error.text()
    dialog.lines["package_folder"].setText(str(tmp_path))
    dialog.fixed.setChecked(True)
    dialog.repair.setChecked(True)
    assert dialog.ok.isEnabled() and "is welded to the ground" in dialog.hint.text()
    dialog.show()
    dialog.grab().save(str(tmp_path / "urdf_import_dialog.png"))
    options = dialog.options()
    assert options["package_paths"] == [str(tmp_path)] and options["fixed_base"] and options["repair_inertias"]
    job = _import(window, qtbot, urdf)  # the defaults: floating, inertias kept
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: window.document.model.name == "arm", timeout=5000)
    model = window.document.model
    assert model.joints[0].type == "free" and model.joint("j_1").source_name == "j.1"
    assert _import(window, qtbot, urdf, fixed_base=True, repair_inertias=True).state == DONE
    qtbot.waitUntil(lambda: window.document.model.joints[0].type == "fixed", timeout=5000)
    assert window.document.model.body("arm_1").inertia["Ixx"] == pytest.approx(2.5)  # raised to half the excess


def test_export_writes_urdf_and_refuses_a_closed_loop(window, answers, tmp_path):
    window.open_sample("puma560")
    assert window.export_urdf(str(tmp_path / "puma.urdf"))
    root = ET.parse(tmp_path / "puma.urdf").getroot()
    assert len(root.findall("joint")) == 6 and "URDF written" in window.statusBar().currentMessage()
    window.open_sample("four_bar")
    assert not window.export_urdf(str(tmp_path / "loop.urdf"))
    assert answers["calls"][-1][0] == "critical" and "cut joints" in answers["calls"][-1][2]
    assert not (tmp_path / "loop.urdf").exists()
