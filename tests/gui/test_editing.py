"""Building and changing a mechanism from the tree's context menu, each step one undo command."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QInputDialog, QMessageBox

from mbstudio import samples
from mbstudio.gui.editing import edits
from mbstudio.gui.editing.edit_actions import AddBodyDialog
from mbstudio.gui.editing.fields import fields_for
from mbstudio.model import dumps, save, validate


def test_add_a_body_attached_by_a_chosen_joint_at_a_chosen_point(window, monkeypatch):
    def accept(dialog):
        dialog.parent_body.setCurrentText("1")
        dialog.point.setCurrentText("damper_ball")
        dialog.joint_type.setCurrentText("universal")
        dialog.name.setText("probe")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(AddBodyDialog, "exec", accept)
    window.tree.requested.emit("add_body", ("body", "1"))
    model = window.document.model
    body = model.bodies[-1]
    joint = model.joints[-1]
    assert body.name == "probe" and (joint.type, joint.parent, joint.child) == ("universal", "1", body.label)
    assert joint.parent_frame.origin == "damper_ball" and len(joint.coordinates) == 2
    assert window.status["dof"].text().startswith("DOF 4")
    assert len(window.coordinates.sliders) == 4
    assert window.tree.current_key() == ("body", body.label)
    assert window.view.scene.actors[body.label]  # drawn as a link to its point 'tip'
    assert "Add body" in window.actions["undo"].text()
    window.document.stack.undo()
    assert dumps(window.document.model) == dumps(samples.load())


def test_deleting_a_referenced_parameter_asks_and_explains(window, answers):
    answers["question"] = QMessageBox.StandardButton.No
    window.tree.requested.emit("delete", ("parameter", "D13"))
    kind, title, text = answers["calls"][-1]
    assert "Delete parameter 'D13'" in title and "point 'pivot'" in text and "replaced by its value" in text
    assert any(p.name == "D13" for p in window.document.model.parameters)
    answers["question"] = QMessageBox.StandardButton.Yes
    window.tree.requested.emit("delete", ("parameter", "D13"))
    model = window.document.model
    assert all(p.name != "D13" for p in model.parameters)
    assert model.body("1").points["pivot"] == ["-(D12+(0.082))", 0, 0]


def test_deleting_a_body_that_keeps_others_attached_is_refused_with_the_reason(window, answers):
    answers["question"] = QMessageBox.StandardButton.Yes
    before = dumps(window.document.model)
    window.tree.requested.emit("delete", ("body", "3"))  # the hub carries the wheel
    assert "joint 'lower_ball_joint'" in answers["calls"][0][2]
    kind, title, text = answers["calls"][-1]
    assert kind == "warning" and "not connected to the ground" in text
    assert dumps(window.document.model) == before


def test_rename_from_the_context_menu(window, monkeypatch):
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("wheel_spin", True)))
    window.tree.requested.emit("rename", ("joint", "wheel_bearing"))
    assert window.document.model.joint("wheel_spin").type == "revolute"
    assert window.tree.current_key() == ("joint", "wheel_spin")


def test_joint_type_change_adjusts_coordinates_and_stays_valid():
    model = samples.load("four_bar")
    name = model.joints[1].name
    edits.set_joint_type(model, name, "universal")
    assert len(model.joint(name).coordinates) == 2
    validate(model)


def test_every_item_of_every_sample_has_a_form():
    for sample in ("sla_suspension", "four_bar", "balloon"):  # between them every kind of item
        model = samples.load(sample)
        keys = [("model",), *(("parameter", p.name) for p in model.parameters)]
        for b in model.bodies:
            keys += [("body", b.label), ("inertia", b.label), ("shape", b.label)]
            keys += [("point", b.label, n) for n in b.points] + [("frame", b.label, n) for n in b.frames]
        for j in model.joints:
            keys += [("joint", j.name)] + [("coordinate", j.name, c.name) for c in j.coordinates]
        keys += [("force", f.name) for f in model.forces] + [("trajectory", t.name) for t in model.trajectories]
        keys += [("measure", m.name) for m in model.measures]
        for key in keys:
            title, fields = fields_for(model, key)
            assert title and fields, key
            for field in fields:  # writing back the shown value keeps the model valid
                copy = model.copy()
                field.apply(copy, field.value)
                validate(copy)


def test_deleting_a_point_keeps_the_frames_placed_at_it():
    model = samples.load("sla_suspension")
    position = model.body("1").points["G"]
    assert edits.point_uses(model, "1", "G") == ["frame 'G'", "measure 'alignment'"]
    edits.delete_point(model, "1", "G")
    assert model.measures == []  # its kingpin axis started at G
    assert "G" not in model.body("1").points and model.body("1").frames["G"].origin == position
    validate(model)


def test_save_as_script_reproduces_every_sample():
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from mbstudio.gui.script import model_script

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "saved").mkdir()
        for name in samples.names():
            model = samples.load(name)
            script, out = Path(folder) / f"{name}.py", Path(folder) / f"{name}.mbs"
            script.write_text(model_script(model, out.name))
            run = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True)
            assert run.returncode == 0, run.stderr
            saved = Path(folder) / "saved" / f"{name}.mbs"  # what File › Save writes there (tyre paths relative)
            save(model, saved)
            assert out.read_text(encoding="utf-8") == saved.read_text(encoding="utf-8"), name


def test_build_a_pendulum_from_scratch(window, monkeypatch, qtbot):
    window.new_document()
    assert window.status["dof"].text().startswith("DOF 0")

    def accept(dialog):
        dialog.joint_type.setCurrentText("revolute")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(AddBodyDialog, "exec", accept)
    window.tree.requested.emit("add_body", ("ground",))
    window.tree.requested.emit("add_body", ("body", "1"))
    model = window.document.model
    assert [b.label for b in model.bodies] == ["1", "2"] and window.status["dof"].text().startswith("DOF 2")
    before = window.view.scene.matrix("2")
    assert window.move_coordinate("q1", 0.5)
    assert not (window.view.scene.matrix("2") == before).all()
    assert window.document.stack.count() == 3
