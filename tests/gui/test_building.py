"""Building a mechanism from nothing in the window: bodies, joint frames placed by picking points or typing
coordinates, a joint that closes a loop, frames, force elements and trajectories, each one undo command."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from PySide6.QtWidgets import QComboBox, QDialog, QInputDialog, QLineEdit, QMessageBox

from mbstudio import samples
from mbstudio.gui.editing import edits
from mbstudio.gui.editing.edit_actions import AddBodyDialog, AddJointDialog
from mbstudio.gui.editing.fields import OWN_FRAME, fields_for
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, Parameter, dumps, load, validate


def type_into(window, key, field, text):
    """Select `key`, type `text` into one of its fields and press Enter, as a person would."""
    window.tree.select(key)
    editor = window.properties.editors[field]
    line = editor.lineEdit() if isinstance(editor, QComboBox) else editor
    assert isinstance(line, QLineEdit)
    line.setText(text)
    line.editingFinished.emit()


def pick(window, key, field, choice):
    """Select `key` and pick `choice` from the list of one of its fields."""
    window.tree.select(key)
    editor = window.properties.editors[field]
    index = editor.findText(choice)
    assert index >= 0, f"{choice} is not offered for {field}"
    editor.setCurrentIndex(index)
    editor.activated.emit(index)


def answer_dialog(monkeypatch, cls, **choices):
    """The next dialogs of class `cls` are accepted with these widget texts (body, point, joint_type, ...)."""

    def accept(dialog):
        for path, text in choices.items():
            widget = dialog
            for part in path.split("__"):
                widget = getattr(widget, part)
            (widget.setText if isinstance(widget, QLineEdit) else widget.setCurrentText)(text)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(cls, "exec", accept)


def add_body(window, monkeypatch, parent):
    answer_dialog(monkeypatch, AddBodyDialog, parent_body=parent, joint_type="revolute")
    window.tree.requested.emit("add_body", ("bodies",))
    return window.tree.current_key()[1]


def test_a_four_bar_built_from_nothing_moves_with_one_freedom(window, monkeypatch, tmp_path):
    """A parallelogram four-bar in the x-y plane: crank and rocker 0.2 m long on pivots 0.4 m apart, the coupler
    0.4 m long; at the crank angle a the rocker is at a and the coupler turned by -a relative to the crank."""
    window.new_document()
    empty = dumps(window.document.model)
    window.tree.requested.emit("add_parameter", ("parameters",))
    type_into(window, ("parameter", "p1"), "value", "0.4")
    crank = add_body(window, monkeypatch, "0")
    type_into(window, ("point", crank, "tip"), "position", "0, 0.2, 0")
    coupler = add_body(window, monkeypatch, crank)  # at the crank's origin, then moved to its tip
    pick(window, ("joint", "J2"), "parent origin", "tip")
    type_into(window, ("point", coupler, "tip"), "position", "0.4, 0, 0")
    rocker = add_body(window, monkeypatch, "0")
    type_into(window, ("joint", "J3"), "parent origin", "p1, 0, 0")  # an expression in a parameter
    type_into(window, ("point", rocker, "tip"), "position", "0, 0.2, 0")
    model = window.document.model
    assert model.joint("J2").parent_frame.origin == "tip"
    assert model.joint("J3").parent_frame.origin == ["p1", 0.0, 0.0]
    assert window.status["dof"].text().startswith("DOF 3")

    answer_dialog(
        monkeypatch,
        AddJointDialog,
        first__body=coupler,
        first__point="tip",
        second__body=rocker,
        second__point="tip",
        joint_type="revolute",
        axis="0, 0, 1",
    )
    window.tree.requested.emit("add_joint", ("body", coupler))
    model = window.document.model
    closing = model.joints[-1]
    assert window.tree.current_key() == ("joint", closing.name)
    assert (closing.parent, closing.child, closing.parent_frame.origin, closing.child_frame.origin) == (
        coupler,
        rocker,
        "tip",
        "tip",
    )
    assert window.status["dof"].text().startswith("DOF 1") and window.status["assembly"].text() == "assembled"
    assert window.status["loops"].text().startswith("loops 1")

    mech = Mechanism(model)
    assert mech.dof == 1 and [j.name for j in mech.topology.cut] == [closing.name]
    q = mech.assemble({mech.independent[0]: 0.3})[0]
    values = dict(zip(mech.coordinates, q, strict=True))
    crank_q, coupler_q, rocker_q = (values[j.coordinates[0].name] for j in model.joints[:3])
    assert crank_q == pytest.approx(0.3) and rocker_q == pytest.approx(0.3) and coupler_q == pytest.approx(-0.3)
    assert np.abs(mech.residual(q)).max() < 1e-10

    assert window.save_as(str(tmp_path / "four_bar.mbs"))
    assert dumps(load(tmp_path / "four_bar.mbs")) == dumps(model)
    stack = window.document.stack
    assert stack.count() == 11  # one command per edit above
    assert stack.text(stack.count() - 1) == f"Add revolute joint between body '{coupler}' and body '{rocker}'"
    while stack.canUndo():
        stack.undo()
    assert dumps(window.document.model) == empty


def test_a_bad_origin_or_axis_is_refused_in_words_and_changes_nothing(window, monkeypatch, answers):
    window.new_document()
    body = add_body(window, monkeypatch, "0")
    window.tree.requested.emit("add_frame", ("body", body))
    assert window.tree.current_key() == ("frame", body, "F1")
    assert window.document.stack.text(1) == f"Add frame to body '{body}'"
    editor = window.properties.editors["origin"]
    assert [editor.itemText(i) for i in range(editor.count())] == ["tip"]  # the body's points to pick from
    before, count = dumps(window.document.model), window.document.stack.count()
    type_into(window, ("joint", "J1"), "child origin", "nope")
    error = window.properties.error.text()
    assert "child_frame.origin" in error and "unknown point" in error and "'nope'" in error and "tip" in error
    assert "border" in window.properties.editors["child origin"].styleSheet()
    type_into(window, ("frame", body, "F1"), "origin", "1, 2")
    assert "origin: must be three values" in window.properties.error.text()
    answer_dialog(monkeypatch, AddJointDialog, second__body="0", axis="0, 1")
    window.tree.requested.emit("add_joint", ("body", body))
    assert "axis z: must be three values" in answers["calls"][-1][2]
    assert dumps(window.document.model) == before and window.document.stack.count() == count
    type_into(window, ("frame", body, "F1"), "origin", "0.1, 0, 2*0.05")
    assert window.document.model.body(body).frames["F1"].origin == [0.1, 0.0, "2*0.05"]


def test_a_joint_can_use_a_named_frame_or_one_of_its_own_at_the_same_place(window):
    window.open_sample("four_bar")
    before = Mechanism(window.document.model).poses(window.q)
    window.tree.select(("joint", "rocker_pivot"))
    assert "parent origin" not in window.properties.editors  # it uses the ground's frame 'O3'
    pick(window, ("joint", "rocker_pivot"), "parent frame", OWN_FRAME)
    joint = window.document.model.joint("rocker_pivot")
    assert joint.parent_frame.origin == ["L0", 0.0, 0.0] and joint.parent_frame.z == [0.0, -1.0, 0.0]
    assert window.properties.editors["parent z axis"].text() == "0.0, -1.0, 0.0"
    after = Mechanism(window.document.model).poses(window.q)
    for label, (rotation, position) in before.items():
        assert np.allclose(after[label][0], rotation) and np.allclose(after[label][1], position)
    pick(window, ("joint", "rocker_pivot"), "parent frame", "O3")
    assert window.document.model.joint("rocker_pivot").parent_frame == "O3"


def test_force_elements_are_added_renamed_and_deleted_with_undo(window, monkeypatch, answers):
    original = dumps(window.document.model)
    kinds = iter(["spring_damper", "joint_spring_damper", "joint_friction", "actuator", "point_force"])
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: (next(kinds), True)))
    for _ in range(5):
        window.tree.requested.emit("add_force", ("forces",))
    model = window.document.model
    added = model.forces[1:]
    assert [e.type for e in added] == [
        "spring_damper",
        "joint_spring_damper",
        "joint_friction",
        "actuator",
        "point_force",
    ]
    assert (added[0].body1, added[0].point1, added[0].body2, added[0].point2) == ("1", "G", "0", "C")
    assert {e.coordinate for e in added[1:4]} == {"theta1"} and added[3].formula == 0.0
    assert (added[4].body, added[4].point) == ("1", "G")
    assert window.tree.current_key() == ("force", "point_force1")
    assert window.document.stack.text(0) == "Add force element (spring damper)"

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("motor", True)))
    window.tree.requested.emit("rename", ("force", "actuator1"))
    assert window.tree.current_key() == ("force", "motor")
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("coilover", True)))
    window.tree.requested.emit("rename", ("force", "motor"))
    assert "is defined twice" in answers["calls"][-1][2]  # refused, with the reason
    window.tree.requested.emit("delete", ("force", "motor"))
    assert all(e.name != "motor" for e in window.document.model.forces)
    assert window.tree.current_key() == ("forces",) and not [c for c in answers["calls"] if c[0] == "question"]
    assert window.document.stack.text(window.document.stack.index() - 1) == "Delete force 'motor'"
    while window.document.stack.canUndo():
        window.document.stack.undo()
    assert dumps(window.document.model) == original


def test_a_force_without_points_to_act_at_is_refused_with_the_reason(window, monkeypatch, answers):
    window.open_sample("four_bar")  # its bodies have frames but no points
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: ("spring_damper", True)))
    window.tree.requested.emit("add_force", ("forces",))
    kind, _, text = answers["calls"][-1]
    assert kind == "warning" and "needs points on two bodies" in text and window.document.stack.count() == 0


def test_trajectories_are_added_renamed_and_deleted_with_undo(window, monkeypatch, answers):
    original = dumps(window.document.model)
    window.tree.requested.emit("add_trajectory", ("trajectories",))
    added = window.document.model.trajectories[-1]
    assert window.tree.current_key() == ("trajectory", added.name)
    assert list(added.coordinates) == ["theta1", "theta2"]  # the SLA's independent coordinates
    assert [(h.amplitude, h.frequency) for h in added.coordinates["theta2"]] == [(0.1, 3.0), (0.05, "sqrt(18)")]
    assert (added.duration, added.samples) == (10.0, 200)
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("exciting", True)))
    window.tree.requested.emit("rename", ("trajectory", added.name))
    assert "cannot take the name of another trajectory" in answers["calls"][-1][2]
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("sweep", True)))
    window.tree.requested.emit("rename", ("trajectory", added.name))
    assert [t.name for t in window.document.model.trajectories] == ["exciting", "wheel_travel", "sweep"]
    window.tree.requested.emit("delete", ("trajectory", "exciting"))
    assert [t.name for t in window.document.model.trajectories] == ["wheel_travel", "sweep"]
    assert not [c for c in answers["calls"] if c[0] == "question"]
    assert window.document.stack.count() == 3  # add, rename, delete: the refused rename left no command
    while window.document.stack.canUndo():
        window.document.stack.undo()
    assert dumps(window.document.model) == original


def test_deleting_what_a_force_refers_to_asks_and_takes_the_force_with_it(window, answers):
    answers["question"] = QMessageBox.StandardButton.Yes
    window.tree.requested.emit("delete", ("point", "7", "ball"))
    kind, title, text = answers["calls"][-1]
    assert kind == "question" and "force 'coilover'" in text and "force elements and measures are deleted" in text
    model = window.document.model
    assert model.forces == [] and "ball" not in model.body("7").points
    assert model.measures == []  # the alignment set's motion ratio was the coil-over's
    assert model.body("7").frames["ball"].origin == samples.load().body("7").points["ball"]


# ------------------------------------------------------------------ the edits themselves (no window)


def test_renames_reach_force_elements_trajectories_and_joint_frames():
    model = samples.load()
    edits.add_force(model, "joint_friction")
    model.forces[0].stiffness = "k_coil"
    model.parameters.append(Parameter("k_coil", 30000.0))
    edits.rename_coordinate(model, "lower_arm_pivot", "theta1", "phi")
    edits.rename_parameter(model, "k_coil", "k")
    edits.rename_body(model, "7", "rod")
    edits.rename_point(model, "rod", "ball", "eye")
    validate(model)
    spring, friction = model.forces
    assert (spring.stiffness, spring.body2, spring.point2) == ("k", "rod", "eye")
    assert friction.coordinate == "phi" and "phi" in model.trajectories[0].coordinates
    assert model.body("rod").frames["ball"].origin == "eye"
    edits.delete_parameter(model, "k")
    assert spring.stiffness == "(30000.0)"
    edits.delete_joint(model, "lower_arm_pivot")
    assert [f.name for f in model.forces] == ["coilover"] and "phi" not in model.trajectories[0].coordinates


def test_a_joint_between_bodies_gives_back_the_choice_of_independent_coordinates():
    model = samples.load("four_bar")
    name = edits.add_joint(model, "1", "3", "spherical", None, "C", [0, 0, 1])
    joint = model.joint(name)
    assert model.independent_coordinates == "auto" and [c.name for c in joint.coordinates] == [
        f"{name}_q1",
        f"{name}_q2",
        f"{name}_q3",
    ]
    assert (joint.parent_frame.origin, joint.child_frame.origin, joint.child_frame.z) == ([0.0] * 3, "C", [0, 0, 1])
    with pytest.raises(ModelError, match="axis z: must be three values"):
        edits.parse_vector("0, 1", "axis z")


def test_every_joint_form_shows_both_frames_and_writing_them_back_keeps_the_model():
    model = samples.load()
    for joint in model.joints:
        _, fields = fields_for(model, ("joint", joint.name))
        names = [f.name for f in fields]
        assert "parent frame" in names and "child frame" in names
    model.joint("lower_arm_pivot").child_frame = copy.deepcopy(model.body("1").frames["G"])
    _, fields = fields_for(model, ("joint", "lower_arm_pivot"))
    origin = next(f for f in fields if f.name == "child origin")
    assert origin.kind == "origin" and origin.choices == ("G", "pivot", "damper_ball")
    for field in fields:
        written = model.copy()
        field.apply(written, field.value)
        validate(written)


def test_a_measure_is_added_placed_and_becomes_columns_of_the_kinematics(window, monkeypatch, qtbot):
    window.open_sample("four_bar")
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: ("point", True)))
    window.tree.requested.emit("add_measure", ("measures",))
    model = window.document.model
    added = model.measures[-1]
    assert window.tree.current_key() == ("measure", added.name) and added.type == "point"
    pick(window, ("measure", added.name), "body", "2")  # the coupler: its first point, then P
    pick(window, ("measure", added.name), "point", "P")
    assert (window.document.model.measures[-1].body, window.document.model.measures[-1].point) == ("2", "P")
    job = window.run_job("kinematics", {}, "Kinematics")
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    series = job.result.data.series
    name = added.name
    assert np.allclose(series[f"{name}.x [m]"], series["coupler_point.x [m]"], rtol=0, atol=1e-15)
    edits_count = window.document.stack.count()
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("coupler", True)))
    window.tree.requested.emit("rename", ("body", "2"))
    assert window.document.model.measures[-1].body == "coupler"  # a renamed body keeps its measures
    assert window.document.stack.count() == edits_count + 1


def test_a_suspension_set_is_added_with_the_first_spring_as_its_damper():
    model = samples.load("sla_suspension")
    name = edits.add_measure(model, "suspension")
    added = model.measures[-1]
    assert added.name == name and added.damper == "coilover"
    validate(model)
    edits.rename_force(model, "coilover", "coil")
    assert {m.damper for m in model.measures} == {"coil"}
    assert edits.force_uses(model, "coil") == ["measure 'alignment'", f"measure '{name}'"]
    edits.delete_force(model, "coil")
    assert model.measures == []
    with pytest.raises(ModelError, match="needs a force element"):
        edits.add_measure(model, "force")


def test_assemble_closes_a_drawn_pose_without_typing_an_angle(window):
    """The four-bar with every coordinate at 0 (links drawn along x: the loop open by 0.25 m); Assemble closes
    it keeping the crank where it is drawn, on the branch nearest the drawing, as one undoable step."""
    model = samples.load("four_bar")
    for joint in model.joints:
        for c in joint.coordinates:
            c.initial = 0.0
    window.document.replace(model, None)
    assert window.status["dof"].text().startswith("DOF 1")
    assert window.assemble_pose()
    values = {c.name: c.initial for j in window.document.model.joints for c in j.coordinates}
    closed = {c.name: c.initial for j in samples.load("four_bar").joints for c in j.coordinates}
    assert values["theta1"] == 0.0
    tree = window.mech.coordinates  # a cut joint's coordinate (theta4) is derived, not assembled
    assert {n: values[n] for n in tree} == pytest.approx({n: closed[n] for n in tree}, abs=1e-9)
    assert np.abs(window.mech.residual(window.q[None])).max() < 1e-12
    assert window.status["assembly"].text() == "assembled" and "Assembled: theta2 0 → 0.948" in (
        window.statusBar().currentMessage()
    )
    stack = window.document.stack
    assert stack.count() == 1 and stack.text(0) == "Assemble"
    stack.undo()
    assert all(c.initial == 0.0 for j in window.document.model.joints for c in j.coordinates)
