"""The window and the road surface: the document tree lists the road (its fields: tests/test_road_surface.py), and
View › Force Arrows draws a sphere's contact on the bump (dynamics/road_surface.py)."""

from __future__ import annotations

from ..test_road_surface import ball_on_bump


def test_the_window_lists_the_road_and_draws_a_contact_on_it(window, tmp_path):
    model = ball_on_bump(tmp_path, at=(0.3, 0.1), height=0.125)
    window.document.replace(model, str(tmp_path / "m.mbs"))
    assert window.tree.items[("road",)].text(1) == "grid"
    window.tree.select(("road",))
    assert window.show_forces(True) == 1  # the ball's arrow, the support polygon left empty
