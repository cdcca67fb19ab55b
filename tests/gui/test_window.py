"""A scripted session in the real window: open, edit, undo/redo, move, close."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QLineEdit, QMessageBox, QScrollArea

from mbstudio import samples
from mbstudio.jobs import DONE
from mbstudio.model import dumps

from ..kinematic_paths import four_bar_branch_side


def edit_field(window, key, field, text):
    """Type `text` into a field of the properties panel and press Enter, as a person would."""
    window.tree.select(key)
    editor = window.properties.editors[field]
    assert isinstance(editor, QLineEdit)
    editor.setText(text)
    editor.editingFinished.emit()


def test_opens_on_the_sla_sample(window):
    assert window.document.model.name == "SLA suspension"
    assert "SLA suspension" in window.windowTitle()
    assert window.status["dof"].text().startswith("DOF 2")
    assert window.status["loops"].text().startswith("loops 3")
    assert window.status["assembly"].text() == "assembled"
    assert list(window.coordinates.sliders) == ["theta1", "theta2"]
    assert ("body", "5") in window.tree.items and ("joint", "wheel_bearing") in window.tree.items


def test_edit_in_the_property_editor_then_undo_and_redo_give_the_same_bytes(window):
    original = dumps(window.document.model)
    edit_field(window, ("inertia", "1"), "m", "3.5")
    edited = dumps(window.document.model)
    assert window.document.model.body("1").inertia["m"] == 3.5 and edited != original
    assert "Set m" in window.actions["undo"].text()
    assert window.isWindowModified()
    window.document.stack.undo()
    assert dumps(window.document.model) == original
    assert not window.isWindowModified()  # back at the saved state
    window.document.stack.redo()
    assert dumps(window.document.model) == edited


def test_expressions_in_parameters_are_accepted_and_shown_with_their_value(window):
    edit_field(window, ("point", "1", "damper_ball"), "position", "-D13/2, 0, 0")
    assert window.document.model.body("1").points["damper_ball"] == ["-D13/2", 0.0, 0.0]
    edit_field(window, ("inertia", "1"), "mx", "-D12")
    window.tree.select(("inertia", "1"))
    units = [w.text() for w in window.properties.scroll.widget().findChildren(type(window.status["dof"]))]
    assert any(u.startswith("= -0.3196") for u in units)


def test_a_bad_value_shows_the_message_and_leaves_the_document_unchanged(window):
    before = dumps(window.document.model)
    edit_field(window, ("inertia", "1"), "m", "-2")
    assert "negative mass" in window.properties.error.text()
    assert "border" in window.properties.editors["m"].styleSheet()
    edit_field(window, ("parameter", "D12"), "value", "twelve")
    assert "must be a number" in window.properties.error.text()
    edit_field(window, ("point", "1", "G"), "position", "1, 2")
    assert "three values" in window.properties.error.text()
    edit_field(window, ("inertia", "1"), "Ixx", "D99")
    assert "undefined parameter 'D99'" in window.properties.error.text()
    assert dumps(window.document.model) == before
    assert window.document.stack.count() == 0 and not window.isWindowModified()


def test_renaming_a_parameter_renames_its_uses_and_keeps_the_selection(window):
    edit_field(window, ("parameter", "D13"), "name", "D13b")
    model = window.document.model
    assert model.body("1").points["pivot"] == ["-(D12+D13b)", 0, 0]
    assert window.tree.current_key() == ("parameter", "D13b")
    window.document.stack.undo()
    assert window.document.model.body("1").points["pivot"] == ["-(D12+D13)", 0, 0]


def test_moving_a_slider_moves_the_bodies_in_the_scene(window, qtbot):
    scene = window.view.scene
    before = {label: scene.matrix(label) for label in ("1", "3", "5")}
    row = window.coordinates.sliders["theta1"]
    row.slider.setSliderDown(True)  # one drag: several steps, one undo command
    for _ in range(5):
        row.slider.setValue(row.slider.value() + 10)
        qtbot.wait(1)  # let the window assemble and draw this step
    row.slider.setSliderDown(False)
    qtbot.waitUntil(lambda: not window.session.pose.pending_moves)
    for label, matrix in before.items():
        assert not np.allclose(scene.matrix(label), matrix), label
    assert window.document.stack.count() == 1
    assert "Move theta1" in window.actions["undo"].text()
    theta1 = next(c for j in window.document.model.joints for c in j.coordinates if c.name == "theta1")
    assert abs(theta1.initial - row.value()) < 1e-12
    window.document.stack.undo()
    for label, matrix in before.items():
        assert np.allclose(scene.matrix(label), matrix), label
    assert dumps(window.document.model) == dumps(samples.load())


def test_a_slider_stops_where_the_mechanism_cannot_assemble(window):
    q = window.q.copy()
    assert not window.move_coordinate("theta1", 1.2)
    assert np.array_equal(window.q, q)
    assert abs(window.coordinates.sliders["theta1"].value()) < 1e-2  # back at the last good pose
    assert "stopped" in window.status["assembly"].text()
    assert "cannot be reached" in window.statusBar().currentMessage()
    assert window.document.stack.count() == 0


def test_selection_is_shared_by_tree_view_and_properties(window):
    window.tree.select(("joint", "lower_ball_joint"))
    assert window.view.scene.selected == ("joint", "lower_ball_joint")
    assert "lower_ball_joint" in window.properties.title.text()
    window.view.picked.emit(("body", "3"))
    assert window.tree.current_key() == ("body", "3")
    assert window.view.scene.selected == ("body", "3")


def test_close_with_unsaved_changes_asks_first(window, answers):
    edit_field(window, ("inertia", "1"), "m", "3.5")
    answers["question"] = QMessageBox.StandardButton.Cancel
    assert not window.close()
    assert window.isVisible() and answers["calls"][-1][1] == "Unsaved changes"
    answers["question"] = QMessageBox.StandardButton.Discard
    assert window.close()


def test_new_and_open_ask_before_losing_changes(window, answers, tmp_path):
    edit_field(window, ("inertia", "1"), "m", "3.5")
    answers["question"] = QMessageBox.StandardButton.Cancel
    window.new_document()
    window.open_file(str(samples.path("four_bar")))
    assert window.document.model.body("1").inertia["m"] == 3.5
    assert [c[1] for c in answers["calls"]] == ["Unsaved changes"] * 2


def test_force_elements_and_trajectories_are_edited_like_everything_else(window):
    """The SLA's coil-over and its exciting trajectory are in the tree and the property editor; a bad
    value is refused in words, a good one is one undoable command."""
    before = dumps(window.document.model)
    assert ("force", "coilover") in window.tree.items and ("trajectory", "exciting") in window.tree.items
    edit_field(window, ("force", "coilover"), "stiffness", "-5")
    assert "stiffness" in window.properties.error.text()
    edit_field(window, ("trajectory", "exciting"), "theta1", "0.5 @ 3 @ 0 @ 1")
    assert "amplitude @ frequency" in window.properties.error.text()
    assert dumps(window.document.model) == before
    edit_field(window, ("trajectory", "exciting"), "theta1", "0.4 @ 3; 0.1 @ sqrt(101)")
    terms = window.document.model.trajectories[0].coordinates["theta1"]
    assert [(h.amplitude, h.frequency) for h in terms] == [(0.4, 3.0), (0.1, "sqrt(101)")]
    edit_field(window, ("force", "coilover"), "stiffness", "35000")
    assert window.document.model.forces[0].stiffness == 35000.0
    window.document.stack.undo()
    window.document.stack.undo()
    assert dumps(window.document.model) == before


def test_a_force_element_is_placed_by_picking_bodies_points_and_coordinates(window):
    window.tree.select(("force", "coilover"))
    editors = window.properties.editors
    bodies = [editors["body1"].itemText(i) for i in range(editors["body1"].count())]
    assert bodies == ["0", "1", "2", "3", "4", "5", "6", "7"]
    points = [editors["point1"].itemText(i) for i in range(editors["point1"].count())]
    assert points == list(window.document.model.body("6").points)
    before = dumps(window.document.model)
    editors["body1"].setCurrentText("3")  # body 3 has no point 'C': the end moves to its first point
    coilover = window.document.model.forces[0]
    assert (coilover.body1, coilover.point1) == ("3", next(iter(window.document.model.body("3").points)))
    assert window.document.stack.undoText().startswith("Set body1")
    window.document.stack.undo()
    assert dumps(window.document.model) == before


def test_sliders_switch_to_the_compiled_assembly_once_its_job_has_built_it(window, qtbot, tmp_path, monkeypatch):
    """The first step starts a background job compiling the equations; later steps assemble on them and give
    the numpy path's configuration."""
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))  # a machine that has compiled nothing yet
    window.move_coordinate("theta1", 0.05)
    (job,) = [j for j in window.jobs.jobs if j.task == "engine"]
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    before = window.q.copy()
    assert window.move_coordinate("theta1", 0.08) and window.session.pose.fast is not None
    wanted = np.array([[window._values()[n] for n in window.mech.independent]])
    numpy_path = window.mech.assemble(wanted, guess=before)[0]
    assert np.abs(window.q - numpy_path).max() < 1e-11
    assert [j.task for j in window.jobs.jobs].count("engine") == 1  # built once for this structure


def test_a_full_crank_turn_with_the_slider_keeps_the_branch(window):
    window.open_file(str(samples.path("four_bar")))
    side = four_bar_branch_side(window.mech, window.q[None])
    for theta in np.linspace(0, 2 * np.pi, 73)[1:]:
        assert window.move_coordinate("theta1", float(np.angle(np.exp(1j * theta))))
        assert window.status["assembly"].text() == "assembled", theta
        assert four_bar_branch_side(window.mech, window.q[None]) == side, theta


def test_many_sliders_scroll_and_leave_the_results_their_share_of_the_height(window, qtbot):
    """The vehicle's 11 sliders held the Coordinates dock, and the result docks under it, to their whole height;
    they now scroll in a dock sized to them up to 60 % of the column it shares with Jobs. A four-bar's one
    slider gets a dock of its size."""
    column = window.docks["coordinates"].height() + window.docks["jobs"].height()
    window.open_sample("vehicle")
    scroll = window.coordinates.findChild(QScrollArea)
    qtbot.waitUntil(lambda: abs(window.docks["coordinates"].height() - 0.6 * column) <= 2)
    assert scroll.verticalScrollBar().maximum() > 0 and len(window.coordinates.sliders) == 11
    assert window.docks["base_table"].height() >= 0.3 * window.height()
    window.open_sample("four_bar")
    qtbot.waitUntil(lambda: window.docks["coordinates"].height() < 0.3 * column)
    assert scroll.verticalScrollBar().maximum() == 0
