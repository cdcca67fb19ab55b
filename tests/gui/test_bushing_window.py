"""Bushings in the window: added from the model tree's forces menu (starting undeflected), and a joint turned into
one by Edit › Make Compliant, with undo; the selection that is not a joint is refused with a message."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog

from mbstudio.model import dumps


def test_a_bushing_is_added_and_a_joint_made_compliant(window, monkeypatch, answers):
    window.open_sample("double_pendulum")
    original = dumps(window.document.model)
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: ("bushing", True)))
    window.tree.requested.emit("add_force", ("forces",))
    added = window.document.model.forces[-1]
    assert added.type == "bushing" and window.tree.current_key() == ("force", added.name)
    assert (added.body1, added.body2) == ("0", "1") and added.frame2 in window.document.model.body("1").frames
    window.tree.select(("joint", "elbow"))
    window.actions["make_compliant"].trigger()
    model = window.document.model
    assert model.joint("elbow").type == "free"
    bushing = model.forces[-1]
    assert bushing.type == "bushing" and window.tree.current_key() == ("force", bushing.name)
    assert bushing.stiffness == [1e7, 1e7, 1e7, 1e5, 1e5, 0.0]
    window.tree.select(("body", "1"))
    window.actions["make_compliant"].trigger()
    kind, _, text = answers["calls"][-1]
    assert kind == "warning" and "needs a joint selected" in text
    window.document.stack.undo()
    window.document.stack.undo()
    assert dumps(window.document.model) == original


def test_a_bushing_is_drawn_as_a_pin_in_a_sleeve_on_its_two_bodies(window, monkeypatch):
    window.open_sample("double_pendulum")
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: ("bushing", True)))
    window.tree.requested.emit("add_force", ("forces",))
    name = window.document.model.forces[-1].name
    scene = window.view.scene
    glyphs = [actor for actors in scene.actors.values() for actor in actors if scene.key_of(actor) == ("force", name)]
    assert len(glyphs) == 2  # the pin on the ground, the sleeve on body 1
    assert any(actor in scene.actors["1"] for actor in glyphs)
