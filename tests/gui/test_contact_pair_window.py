"""A contact pair added from the model tree ("Add force element…", type contact_pair) on two bodies of the open
document, selected, valid in the file, and undone."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog

from mbstudio.model import dumps, loads
from tests.test_contact_pair import two_balls


def test_a_pair_is_added_from_the_menu_and_undone(window, monkeypatch, tmp_path):
    model = two_balls()
    model.forces, model.measures = [], []
    path = tmp_path / "balls.mbs"
    path.write_text(dumps(model))
    assert window.open_file(str(path))
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: ("contact_pair", True)))
    window.tree.requested.emit("add_force", ("forces",))
    added = window.document.model.forces[-1]
    assert added.type == "contact_pair" and added.body1 != added.body2
    assert window.tree.current_key() == ("force", added.name)
    assert window.document.stack.text(0) == "Add force element (contact pair)"
    assert loads(dumps(window.document.model)).forces[-1] == added
    window.document.stack.undo()
    assert window.document.model.forces == []
