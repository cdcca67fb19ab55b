"""Couplings in the window: the tree lists them, Add coupling… is one undo step, and the mechanism's degrees of
freedom follow."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialog, QInputDialog

from mbstudio.gui.editing.edit_actions import AddCouplingDialog
from mbstudio.gui.editing.fields import fields_for
from mbstudio.model import INERTIA_NAMES, Body, Coordinate, Coupling, Frame, Joint, Model, dumps, loads


def two_jaws() -> Model:
    """A palm with two jaws on revolute joints, not yet coupled (2 degrees of freedom)."""
    jaw = dict.fromkeys(INERTIA_NAMES, 0.0) | {"m": 0.1, "mx": 0.004, "Ixx": 1e-5, "Iyy": 3e-4, "Izz": 3e-4}
    model = Model(name="gripper", bodies=[Body("L", "left jaw", dict(jaw)), Body("R", "right jaw", dict(jaw))])
    model.bodies[0].points = model.bodies[1].points = {"tip": [0.06, 0, 0]}
    left, right = Frame([-0.02, 0, 0], [0, 1, 0], [1, 0, 0]), Frame([0.02, 0, 0], [0, 1, 0], [-1, 0, 0])
    model.joints = [
        Joint("left", "revolute", "0", "L", left, Frame(), [Coordinate("qL", 0.3)]),
        Joint("right", "revolute", "0", "R", right, Frame(), [Coordinate("qR", 0)]),
    ]
    return loads(dumps(model))


@pytest.fixture
def gripper_window(window):
    window.document.replace(two_jaws(), None)
    return window


def test_add_coupling_makes_a_mimic_joint_in_one_undo_step(gripper_window, monkeypatch):
    window = gripper_window
    assert window.status["dof"].text().startswith("DOF 2")

    def accept(dialog):
        dialog.follower.setCurrentText("qR")
        dialog.leader.setCurrentText("qL")
        dialog.ratio.setText("-1")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(AddCouplingDialog, "exec", accept)
    window.tree.requested.emit("add_coupling", ("couplings",))
    model = window.document.model
    assert [(c.follower, c.leader, c.ratio, c.offset) for c in model.couplings] == [("qR", "qL", -1.0, 0.0)]
    name = model.couplings[0].name
    assert window.tree.current_key() == ("coupling", name)
    assert window.tree.items[("coupling", name)].text(1) == "qR = -1.0 · qL"
    assert window.tree.items[("couplings",)].text(1) == "1"
    assert window.status["dof"].text().startswith("DOF 1") and len(window.coordinates.sliders) == 1
    assert "Add coupling" in window.actions["undo"].text()
    title, form = fields_for(model, ("coupling", name))
    assert "qR = -1.0 · qL" in title and [f.name for f in form][:3] == ["name", "follower", "leader"]
    window.document.stack.undo()
    assert window.document.model.couplings == [] and window.status["dof"].text().startswith("DOF 2")


def test_a_coupling_is_renamed_deleted_and_goes_with_its_joint(gripper_window, monkeypatch, answers):
    window = gripper_window
    window.document.edit("couple", lambda m: m.couplings.append(Coupling("jaws", "qR", "qL", ratio=-1)))
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("mimic", True)))
    window.tree.requested.emit("rename", ("coupling", "jaws"))
    assert window.document.model.couplings[0].name == "mimic"
    window.tree.requested.emit("delete", ("coupling", "mimic"))
    assert window.document.model.couplings == []
    window.document.stack.undo()
    window.tree.requested.emit("delete", ("joint", "right"))  # asks first: the coupling names its coordinate
    assert "coupling 'mimic'" in answers["calls"][-1][2]
