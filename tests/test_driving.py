"""The driving coordinates chosen when a drawing closes a loop: a joint to the ground, and of
a four-bar the one that turns furthest, checked against Grashof's criterion and the closed-form limits of each
ground link's angle (where the loop stops closing: the other two links in line)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mbstudio.gui.editing.drawing import link_edit, snap
from mbstudio.kinematics import Mechanism
from mbstudio.model import GROUND, Model


def drawn_four_bar(left: float, coupler: float, right: float, ground: float, angle: float = 1.0) -> Model:
    """A four-bar drawn as in the window, in the x-y plane: the link at the left pivot (0, 0) at `angle`, the
    link at the right pivot (ground, 0), then the coupler between their tips, which closes the loop."""
    o1, o3 = np.zeros(3), np.array([ground, 0.0, 0.0])
    b = left * np.array([math.cos(angle), math.sin(angle), 0.0])
    d = np.linalg.norm(o3 - b)
    along = (coupler**2 - right**2 + d**2) / (2 * d)
    u = (o3 - b) / d
    c = b + along * u + math.sqrt(coupler**2 - along**2) * np.array([-u[1], u[0], 0.0])
    model = Model()
    for start, end in ((o1, b), (o3, c), (b, c)):
        mech = Mechanism(model)
        q = mech.tree.initial_coordinates()
        first, second = (snap(mech, q, p, 1.0) for p in (start, end))
        link_edit(mech, q, first, second, [0.0, 0.0, 1.0])(model)
    return model


def driver_body(model: Model) -> str:
    """The body whose joint to the ground drives the model."""
    (name,) = model.independent_coordinates
    return next(j.child for j in model.joints if name in [c.name for c in j.coordinates] and j.parent == GROUND)


def limit_width(link: float, coupler: float, other: float, ground: float) -> float:
    """The range of a ground link's angle over which the loop closes: the distance from its tip to the other
    pivot must lie between |coupler - other| and coupler + other (2π when it always does)."""
    low, high = abs(coupler - other), coupler + other

    def cos_at(distance: float) -> float:  # law of cosines at the link's pivot
        return (link**2 + ground**2 - distance**2) / (2 * link * ground)

    lo, hi = np.clip([cos_at(high), cos_at(low)], -1.0, 1.0)
    return 2 * (math.acos(lo) - math.acos(hi))


@pytest.mark.parametrize(
    ("lengths", "driver", "kind"),
    [
        ((0.1, 0.35, 0.3, 0.4), "1", "crank-rocker, crank at the left pivot"),
        ((0.3, 0.35, 0.1, 0.4), "2", "crank-rocker, crank at the right pivot (drawn second)"),
        ((0.3, 0.4, 0.35, 0.1), "1", "double crank: both turn fully, the first drawn drives"),
        ((0.3, 0.35, 0.25, 0.5), "2", "triple rocker: the right link sweeps 232°, the left 188°"),
    ],
)
def test_a_drawn_four_bar_is_driven_by_the_ground_link_that_turns_furthest(lengths, driver, kind):
    left, coupler, right, ground = lengths
    s, *middle, longest = sorted(lengths)
    grashof = s + longest <= sum(middle)
    widths = {"1": limit_width(left, coupler, right, ground), "2": limit_width(right, coupler, left, ground)}
    expected = max(widths, key=lambda body: (round(widths[body], 6), body == "1"))
    assert expected == driver, kind  # the hand classification agrees with the table
    assert grashof == (max(widths.values()) == pytest.approx(2 * math.pi)), kind
    model = drawn_four_bar(*lengths)
    assert driver_body(model) == driver, kind
    mech = Mechanism(model)
    assert mech.independent == model.independent_coordinates and mech.dof == 1
