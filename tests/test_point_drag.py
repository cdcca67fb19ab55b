"""Dragging a body's point: damped least squares on the independent coordinates with the loops
closed; a reachable target is met (checked against the pose assembled there directly), an unreachable one is
followed as closely as the mechanism can (the error orthogonal to every direction the point can move, from finite
differences of assembled poses), on the branch the drag starts on, within the coordinates' limits."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.kinematics import Mechanism
from mbstudio.kinematics.fast_assembly import FastAssembly
from mbstudio.kinematics.point_drag import PointDrag
from mbstudio.model import dumps

from .kinematic_paths import four_bar_branch_side


def sla_drag(compiled: bool) -> tuple[Mechanism, PointDrag, np.ndarray]:
    model = samples.load("sla_suspension")
    mech = Mechanism(model)
    fast = None
    if compiled:
        engine(model)
        fast = FastAssembly.load(mech, dumps(model))
    local = np.asarray(mech.tree.geometry.point(model.body("3"), "K"), float)
    return mech, PointDrag(mech, "3", local, fast), np.asarray(mech.assemble(None), float)[0]


@pytest.mark.parametrize("compiled", [False, True])
def test_a_reachable_target_is_met_where_the_assembly_puts_it(compiled):
    """The wheel centre where theta1 = 0.2 puts it, dragged to from the design position in mouse-sized moves."""
    mech, drag, q = sla_drag(compiled)
    independent = q[list(mech.partition.independent)]
    independent[mech.independent.index("theta1")] = 0.2
    there = np.asarray(mech.assemble(independent[None], guess=q[None]), float)[0]
    target, start = drag.point(there), drag.point(q)
    for k in range(1, 21):
        q, error = drag.follow(q, start + (target - start) * k / 20)
    q, error = drag.follow(q, target, iterations=20)
    assert error < 1e-9 and np.abs(q - there).max() < 1e-7
    assert np.abs(mech.residual(q[None])).max() < 1e-10


def finite_difference_velocity_map(mech: Mechanism, drag: PointDrag, q: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """∂(point)/∂q_ind by central differences of poses assembled at q_ind ± h."""
    columns = []
    for j in range(len(mech.independent)):
        ends = []
        for sign in (1, -1):
            values = q[list(mech.partition.independent)].copy()
            values[j] += sign * h
            ends.append(drag.point(np.asarray(mech.assemble(values[None], guess=q[None]), float)[0]))
        columns.append((ends[0] - ends[1]) / (2 * h))
    return np.column_stack(columns)


def test_an_unreachable_target_is_followed_as_closely_as_the_mechanism_can():
    """The wheel centre pulled 0.2 m sideways: it cannot go there; where it stops, the error has no component
    along any direction the centre can move (finite differences of assembled poses)."""
    mech, drag, q = sla_drag(False)
    target = drag.point(q) + np.array([0.0, 0.2, 0.05])
    q, error = drag.follow(q, target, iterations=200)
    assert 0.1 < error < 0.25 and np.abs(mech.residual(q[None])).max() < 1e-10
    J = finite_difference_velocity_map(mech, drag, q)
    e = target - drag.point(q)
    assert np.abs(J.T @ e).max() < 1e-4 * np.linalg.norm(J) * np.linalg.norm(e)


@pytest.mark.parametrize("direction", [(0, 0, -1), (0, 0, 1), (1, 0, 0), (-1, 0, 0)])
def test_a_four_bar_pulled_beyond_its_reach_stays_on_its_branch(direction):
    """The coupler point pulled 1.2 m away in its plane, far beyond where the crank-rocker can take it: the crank
    turns (by 0.3 rad or more) and the drag stops short rather than flipping the coupler and rocker to
    the crossed assembly."""
    model = samples.load("four_bar")
    mech = Mechanism(model)
    q = start_q = np.asarray(mech.assemble(None), float)[0]
    local = np.asarray(mech.tree.geometry.point(model.body("2"), "P"), float)
    drag = PointDrag(mech, "2", local)
    side = four_bar_branch_side(mech, q[None])
    start = drag.point(q)
    for k in range(1, 41):
        q, _ = drag.follow(q, start + 0.03 * k * np.array(direction, float))
        assert four_bar_branch_side(mech, q[None]) == side
        assert np.abs(mech.residual(q[None])).max() < 1e-10
    assert abs(q[0] - start_q[0]) > 0.3


def test_a_coordinates_limits_hold_the_drag():
    """theta1 of the SLA goes from -0.7 to 0.7 rad: a pull far upwards stops the lower arm there."""
    mech, drag, q = sla_drag(True)
    q, _ = drag.follow(q, drag.point(q) + np.array([0.0, 0.0, 2.0]), iterations=100)
    assert q[mech.coordinates.index("theta1")] == pytest.approx(0.7, abs=1e-12)
