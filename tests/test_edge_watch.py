"""Edge crossings in the located-event watch (simulation/contact_watch.py, docs/contact.md "Touch-downs located"): a
block dropped fast across a thin bar, their edges crossing with no vertex of either over the other, passes through
the bar when only the vertices are watched and lands on it when the edges are; the watch's pairs of edges press
where the law's crossings do, and their gap is the segments' distance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mbstudio.dynamics.forces import AppliedForces
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps, loads
from mbstudio.simulation import contact_watch
from mbstudio.simulation.contact_watch import EdgePairs, _nearest_points, pair_watch, pass_depth
from mbstudio.simulation.run import simulate

from .test_contact import G
from .test_shape_pairs import HALF, on_table, pair

BAR = (1.0, 0.05, 0.001)  # m, the fixed bar's half extents: 2 mm thick, its top face z = 0
BLOCK = (1.0, 0.05, 0.025)  # m, the falling block's, turned a quarter turn about z
STIFF, DROP, SPEED, T_END = 1e9, 0.1, 5.0, 0.08


def across_the_bar(**fields):
    """The 1 kg block (0.2 × 0.1 × 0.05 m) turned a quarter turn about z, its bottom DROP above the bar's top:
    their long edges cross at (±0.05, ±0.05), every corner of either 0.05 m beside the other solid. Sharp corners,
    k = 1e9 N/m^1.5 (four crossings take up to 4 k (1 mm)^2.5 / 2.5 = 50 J before half the bar's thickness, four
    times the block's energy at 5 m/s), frictionless."""
    values = {"half_extents1": list(BAR), "shape2": "box", "half_extents2": list(BLOCK), "stiffness": STIFF}
    values["rpy2"] = [0.0, 0.0, math.pi / 2]
    values |= {"dissipation": 0.3, "friction": 0.0}
    model = on_table([pair(**(values | fields))], HALF[2] + DROP)
    model.ground.points["table"] = [0.0, 0.0, -BAR[2]]
    return loads(dumps(model))


def dropped(model, method: str):
    velocities = np.zeros(6)
    velocities[2] = -SPEED
    return simulate(model, T_END, samples=401, velocities=velocities, method=method, rtol=1e-9, atol=1e-12)


@pytest.mark.slow  # the pair's engine compiled (~17 s on a cold cache)
@pytest.mark.parametrize("method", ["CVODES", "DOP853"])
def test_a_block_dropped_across_a_thin_bar_lands_on_its_edges(method, monkeypatch):
    """At 5 m/s the vertices' watch alone lets the block through the 2-mm bar (its bottom ends below the bar's
    underside); with the pairs of edges watched the block lands on the crossings: its bottom never sinks below the
    bar's top by more than half the bar's thickness (the law's limit: a crossing deeper than that is pushed on
    through), it bounces back above the bar, and its total energy never rises beyond the integrator's error."""
    model = across_the_bar()
    pair_watch.cache_clear()
    with monkeypatch.context() as patched:
        patched.setattr(contact_watch, "edge_pairs", lambda laws, passes: [])
        unwatched = dropped(model, method)
    pair_watch.cache_clear()
    assert unwatched.q[-1, 2] - HALF[2] < -2 * BAR[2]
    result = dropped(model, method)
    bottom = result.q[:, 2] - HALF[2]
    assert bottom.min() > -BAR[2] and bottom.min() < 0.0
    assert bottom[-1] > 0.0 and result.qd[-1, 2] > 0.0
    scale = abs(result.total[0])
    assert np.diff(result.total).max() <= 1e-6 * scale


def test_the_watchs_edges_press_where_the_laws_crossings_do():
    """At states where the block (rolled, turned, shifted) is sunk into the bar by up to 0.4 mm or hangs up to
    0.4 mm above it, the deepest of the watch's pairs of edges (all 144) equals the deepest of the law's crossings
    (its 36 facing pairs: an independent choice of the edges) to 1e-12 m where either presses; apart, its depth is
    minus the least distance of the bar's and the block's edges, found by sampling each pair of segments."""
    model = across_the_bar()
    mech = Mechanism(model)
    law = AppliedForces(mech).laws[0]
    edge_pairs = EdgePairs(law, pass_depth(law))
    rng = np.random.default_rng(36)
    pressed = 0
    for _ in range(8):
        q = mech.tree.initial_coordinates() + rng.normal(0, [2e-3, 2e-3, 0.0, 2e-3, 2e-3, 0.05])
        q[2] = HALF[2] + rng.uniform(-4e-4, 4e-4)
        st = mech.tree.motion(q[None], np.zeros((1, 6)), np.zeros((1, 6)))
        edges = edge_pairs.placed(st)[0][0]
        crossings = [float(d[0]) for d, *_ in law.pressing(st)[16:]]
        if max(crossings) > 0 or edges.max() > 0:
            pressed += 1
            assert edges.max() == pytest.approx(max(crossings), abs=1e-12)
        else:
            sampled, step = _sampled_gap(edge_pairs, st)
            assert sampled - step <= -edges.max() <= sampled + 1e-15
    assert 2 <= pressed <= 6  # both kinds of state were checked


def _sampled_gap(pairs, st) -> tuple[float, float]:
    """The least distance of the sides' edges, from 401 points along each edge, and the sampling's step."""
    (a0, a1, *_), (b0, b1, *_) = (
        pairs._placed(st, body, local) for body, local in zip(pairs.bodies, pairs.local, strict=True)
    )
    s = np.linspace(0, 1, 401)[:, None, None]
    on_a = (a0[0][None] + s * (a1[0] - a0[0])[None]).reshape(-1, 3)
    on_b = (b0[0][None] + s * (b1[0] - b0[0])[None]).reshape(-1, 3)
    return float(min(np.linalg.norm(on_b - x, axis=1).min() for x in on_a)), 2 * max(BAR[0], HALF[0]) / 400


def test_the_nearest_points_of_two_segments():
    """For random segments (crossing, skew, parallel, touching at an end), the distance of _nearest_points is the
    least over 1001 × 1001 points of the two (to the sampling's resolution), and no sampled pair is nearer."""
    rng = np.random.default_rng(7)
    cases = [rng.normal(0, 1, (4, 3)) for _ in range(20)]
    cases.append(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float))  # parallel
    cases.append(np.array([[0, 0, 0], [1, 0, 0], [1, 0, 0], [2, 1, 0]], float))  # end to end
    a0, a1, b0, b1 = (np.array([c[k] for c in cases]) for k in range(4))
    p, q = _nearest_points(a0, a1 - a0, b0, b1 - b0)
    found = np.linalg.norm(q - p, axis=1)
    s = np.linspace(0, 1, 1001)
    for k in range(len(cases)):
        on_a, on_b = a0[k] + s[:, None] * (a1[k] - a0[k]), b0[k] + s[:, None] * (b1[k] - b0[k])
        sampled = min(np.linalg.norm(on_b - x, axis=1).min() for x in on_a)
        step = max(np.linalg.norm(a1[k] - a0[k]), np.linalg.norm(b1[k] - b0[k])) / 1000
        assert sampled - step <= found[k] <= sampled + 1e-15


@pytest.mark.slow  # the pair's engine compiled (~17 s on a cold cache)
def test_the_crossings_touch_down_is_located_where_free_flight_puts_it(monkeypatch):
    """The block's bottom edges meet the bar's top edges when it has fallen DROP at 5 m/s: a leg of the run ends
    there (the touch-down located, to 1e-9 s: the search asks 1e-12 of the span, the flight's rounding adds to
    it); the outputs before it are above the bar, and some after it pressed in."""
    ends = []
    reached = contact_watch._Legs.reached

    def noted(self, end, *rest):
        ends.append(end)
        reached(self, end, *rest)

    monkeypatch.setattr(contact_watch._Legs, "reached", noted)
    result = dropped(across_the_bar(), "CVODES")
    touch = (-SPEED + math.sqrt(SPEED * SPEED + 2 * G * DROP)) / G
    assert min(abs(np.array(ends) - touch)) <= 1e-9
    before = result.t < touch
    assert (result.q[before, 2] - HALF[2] > 0).all() and (result.q[~before, 2] - HALF[2] < 0).any()
