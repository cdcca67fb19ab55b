"""How deep contact points go (docs/contact.md): a rigid closed loop's landing lifted out of the plane at the
step's end (simulation/rigid_stepping.py), and a compliant point pressed past what a thin solid's geometry can
hold, named in the run's notes. Checked by routes of their own: the depths from the run's own series against
bounds from the step and the solid's thickness, the energy from the run's kinetic and potential series."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio.kinematics import Mechanism
from mbstudio.simulation.run import simulate

from .test_contact import column
from .test_rigid_loops import RADIUS as LOOP_RADIUS
from .test_rigid_loops import check_landing, energy, floating_four_bar, four_bar_on_a_plane
from .test_shape_pairs import RADIUS, on_table


def test_a_four_bar_landing_on_a_plane_is_lifted_out_of_it_at_every_step():
    """The four-bar's coupler sphere lands at 0.152 s with the crank free (h = 1 ms): the step's impulse stops the
    point along the normal its midpoint predicts, and the loop's closure bent its path on by 8.3e-5 m into the
    plane, a depth the run then kept. Lifted at the step's end by the depth measured there (a correction linear in
    the lift), what is left is of second order in the step's travel h |u| over the mechanism's length ℓ:
    (h |u|)² / ℓ = 1.3e-6 m here (u the coupler point's fastest speed in the run). The landing still loses energy
    and the energy rises nowhere more than the flight's own drift (`check_landing`)."""
    step, model = 1e-3, four_bar_on_a_plane()
    result = simulate(model, 1.0, samples=1001, contact="rigid", step=step)
    free = simulate(four_bar_on_a_plane(floor=-10.0), 1.0, samples=1001, contact="rigid", step=step)
    length = Mechanism(model).length_scale
    check_landing(result, free, length)
    speed = np.hypot(column(result, "coupler_point.vx"), column(result, "coupler_point.vz")).max()
    bound = (step * speed) ** 2 / length
    assert column(result, "f.penetration").max() <= bound
    assert column(result, "coupler_point.z").min() >= 0.1 + LOOP_RADIUS - bound


@pytest.mark.slow  # 4 s (the README's run is held under 5 minutes)
def test_a_floating_chain_s_landings_are_lifted_out_of_the_ground():
    """The floating four-bar dropped from 0.5 m lands on its base's two ends and its coupler's sphere (h = 0.5 ms):
    each penetration stays below (h |u|)² / ℓ with u the fastest fall (from 0.5 m plus the coupler's 0.4 m reach),
    where the linear prediction alone left 9.3e-5 m; the energy falls in all."""
    step, model = 5e-4, floating_four_bar()
    result = simulate(model, 1.0, samples=1001, contact="rigid", step=step)
    bound = (step * np.sqrt(2 * 9.81 * (0.5 + 0.4))) ** 2 / Mechanism(model).length_scale
    for name in ("left", "right", "stop"):
        assert column(result, f"f_{name}.normal_force").max() > 0
        assert column(result, f"f_{name}.penetration").max() <= bound
    assert energy(result)[-1] < 0.3 * energy(result)[0]


HEAVY, BOARD = 20.0, 0.002  # kg, a 5-cm ball; m, the thin box's thickness (its top face z = 0)


def heavy_ball_on_a_board(stiffness: float):
    """A 20 kg ball of 5 cm (frictionless, c_d = 3 s/m: damped to ζ ≈ 0.7 at the stiffer k) resting on the 2-mm
    box, touching its top face."""
    from mbstudio.model import dumps, loads

    from .test_shape_pairs import pair

    model = on_table([pair(half_extents1=[2.0, 0.5, BOARD / 2], stiffness=stiffness, dissipation=3.0,
                           friction=0.0)], RADIUS)  # fmt: skip
    model.ground.points["table"] = [0.0, 0.0, -BOARD / 2]
    model.bodies[0].inertia["m"] = HEAVY
    return loads(dumps(model))


@pytest.mark.slow  # 5 s (the README's run is held under 5 minutes)
def test_a_heavy_ball_on_a_soft_thin_box_goes_through_and_the_run_says_why():
    """The ball's pass depth through the board is D = 2 mm + 2 r = 102 mm: pressed past D/2 = 51 mm (its centre
    past the board's middle) the law pushes it on through. With k = 1e5 N/m^1.5 the weight m g = k δ^1.5 rests it at
    δ_s = 15.7 mm (the release's overshoot within 3/8 D = 38 mm): its centre stays above the top face, and no note. With
    k = 1e4 δ_s = 72.7 mm lies past D/2: the ball sinks through the board and the run's notes name the pair, the
    depth and why, and rigid contacts (whose points do not sink) hold it on the top face. Energy never rises beyond
    the integrator's error in either compliant run: the flip is continuous in the potential."""
    held = simulate(heavy_ball_on_a_board(1e5), 1.0, samples=501, rtol=1e-10, atol=1e-12)
    static = (HEAVY * 9.81 / 1e5) ** (2 / 3)
    assert held.q[:, 2].min() > 0.0  # its centre stays above the top face, pushed back up
    assert abs(held.q[-1, 2] - (RADIUS - static)) < 1e-3 * static
    assert not [note for note in held.notes if "contact pair" in note]
    through = simulate(heavy_ball_on_a_board(1e4), 1.0, samples=501, rtol=1e-10, atol=1e-12)
    assert through.q[-1, 2] < -BOARD - RADIUS  # wholly below the bottom face
    (note,) = [note for note in through.notes if "contact pair 'p'" in note]
    assert "half its pass depth (51 mm" in note and "rigid" in note
    rigid = simulate(heavy_ball_on_a_board(1e4), 1.0, samples=501, contact="rigid")
    assert rigid.q[:, 2].min() >= RADIUS - 1e-9 and not [n for n in rigid.notes if "contact pair" in n]
    for result in (held, through):
        assert np.diff(result.total).max() <= 100 * 1e-10 * abs(held.total).max()


def heavy_block_on_a_board(stiffness: float, depth: float):
    """The 20 kg block (0.2 × 0.1 × 0.05 m, frictionless, c_d = 3 s/m) flat on the 2-mm box, its bottom corners
    pressed in by `depth`."""
    from mbstudio.model import dumps, loads

    from .test_shape_pairs import HALF, pair

    model = on_table([pair(shape2="box", half_extents1=[2.0, 0.5, BOARD / 2], stiffness=stiffness, dissipation=3.0,
                           friction=0.0)], HALF[2] - depth)  # fmt: skip
    model.ground.points["table"] = [0.0, 0.0, -BOARD / 2]
    model.bodies[0].inertia["m"] = HEAVY
    return loads(dumps(model))


@pytest.mark.slow  # a box pair's engine and a stiff second of contact: 15-28 s on two idle cores
def test_a_heavy_block_on_a_thin_box_rests_past_half_its_thickness():
    """The block's corners pass the 2-mm box at its pass depth D = 2 mm. With k = 1e6 N/m^1.5 each corner rests at
    δ_s = (m g / 4k)^(2/3) = 1.34 mm, past D/2, where the nearest face is the bottom one: it was pushed on through
    the board (the block fell 4.9 m in 1 s). Pushed along the face the solids overlap least along (the top) it
    rests there: its height stays at c − δ_s (released there) to 1e-9 δ_s, no note, the energy never rising beyond
    the integrator's error. With k = 1e5 (δ_s = 6.2 mm, deeper than the board) no face can hold it: it falls
    through and the run's notes say so, with the board's pass depth."""
    from .test_shape_pairs import HALF

    static = (HEAVY * 9.81 / 4 / 1e6) ** (2 / 3)
    held = simulate(heavy_block_on_a_board(1e6, static), 1.0, samples=501, rtol=1e-10, atol=1e-12)
    assert static > BOARD / 2
    assert np.abs(held.q[:, 2] - (HALF[2] - static)).max() < 1e-9 * static
    assert not [note for note in held.notes if "contact pair" in note]
    assert np.diff(held.total).max() <= 100 * 1e-10 * abs(held.total).max()
    through = simulate(heavy_block_on_a_board(1e5, 0.0015), 1.0, samples=501, rtol=1e-10, atol=1e-12)
    assert through.q[-1, 2] < -BOARD - HALF[2]
    (note,) = [note for note in through.notes if "contact pair 'p'" in note]
    assert "its pass depth (2 mm" in note


STIFF = 1e8  # N/m^1.5: a 1 kg ball presses in by (m g / k)^(2/3) = 21 µm
TOP_EDGE = (2.0, 0.5)  # the table's half extents in x and y (test_shape_pairs.TABLE): its top edges and corner


def over_the_edge(diagonal: bool, speed: float = 0.2):
    """The 1 kg ball of 5 cm resting on the table's top face (stiff, frictionless, undamped), 1 cm from its edge
    x = 2 (or from its corner (2, 0.5) along the diagonal), sliding towards it at `speed`."""
    from mbstudio.model import dumps, loads

    from .test_shape_pairs import pair

    settled = RADIUS - (9.81 / STIFF) ** (2 / 3)
    start = {"x": TOP_EDGE[0] - 0.01, "y": TOP_EDGE[1] - 0.01 if diagonal else 0.0}
    model = on_table([pair(stiffness=STIFF, dissipation=0.0, friction=0.0)], settled, **start)
    return loads(dumps(model))


@pytest.mark.slow  # 3 s (the README's run is held under 5 minutes)
def test_a_ball_sliding_over_a_box_s_edge_or_corner_pivots_on_it_until_it_leaves():
    """Over the edge (or the corner) the ball's centre keeps the exact distance r − δ from the box's nearest point,
    the edge's line (or the corner), so it pivots on a circle of radius R ≈ r about it and leaves where a particle
    on that circle does: the normal force m (g cos θ − v²/R) falls to zero at cos θ* = (2 + v₀²/(g R)) / 3 (energy
    v² = v₀² + 2 g R (1 − cos θ)), 46.1° at v₀ = 0.2 m/s. Checked: the pair's penetration at every sample is r
    less the centre's exact distance from the box (|y − clamp(y)| written here); the normal force stays above zero
    at every sample from the start until 0.02 rad before θ* (no dip where the nearest feature turns from the face
    to the edge or the corner) and the ball leaves within 0.02 rad of θ*; the energy is kept to the integrator's
    error (no damping, no friction)."""
    v0 = 0.2
    leave = np.arccos((2 + v0**2 / (9.81 * RADIUS)) / 3)
    for diagonal in (False, True):
        direction = np.array([1.0, 1.0, 0.0]) / np.sqrt(2) if diagonal else np.array([1.0, 0.0, 0.0])
        velocities = np.zeros(6)
        velocities[:3] = v0 * direction
        result = simulate(over_the_edge(diagonal), 0.3, samples=3001, velocities=velocities, rtol=1e-10, atol=1e-12)
        centre = result.q[:, :3]
        half = np.array([TOP_EDGE[0], TOP_EDGE[1], 10.0])
        local = centre - np.array([0.0, 0.0, -10.0])
        distance = np.linalg.norm(local - np.clip(local, -half, half), axis=1)
        depth = column(result, "m_p.penetration")
        assert np.abs(depth - np.maximum(RADIUS - distance, 0.0)).max() < 1e-12
        past = (centre[:, :2] - np.array(TOP_EDGE[: 1 + diagonal] + (() if diagonal else (0.0,)))) @ direction[:2]
        angle = np.arctan2(np.maximum(past, 0.0), centre[:, 2])
        normal = column(result, "m_p.normal_force")
        assert normal[angle < leave - 0.02].min() > 0
        left = int(np.argmax((normal == 0) & (angle > 0)))
        assert abs(angle[left] - leave) < 0.02
        assert np.abs(result.total - result.total[0]).max() < 1e-6 * abs(result.total[0])


@pytest.mark.slow  # a box pair's engine and a stiff second of contact: 15-28 s on two idle cores
def test_a_block_sliding_across_the_end_of_the_block_under_it_keeps_its_support():
    """The 1 kg block lying across the fixed block (0.2 × 0.1 m, crossed like a plus sign) at its static
    penetration δ_s = 0.18 mm, sliding frictionless along the fixed block's length at 0.1 m/s: at 0.5 s its side
    passes the fixed block's end, where two of the four crossings reach the ends of the fixed block's top edges and
    the fixed block's two top corners there slip into the moving block, 0.18 mm above its bottom face and at first
    a hair inside its side face. The corners were pushed out through that side face (sideways, out of a block the
    side face cannot separate from the other) and the crossings' depths fell to their distance from the ends
    before: Fz fell from m g to m g / 2 for 0.36 mm of travel, with a sideways push of up to m g / 2. Now each
    corner is pushed along the face along which the solids overlap least (the bottom), and a crossing keeps its
    depth to its edge's end: over 0.8 s (the block's centre stays over the fixed block) the vertical force stays
    m g at every sample to 1e-3 of it (measured 1.4e-4; before, 0.28 to 2.9 m g), the sideways force below 1e-2 of
    it (1.1e-3, from the pitch of 1.5 mrad the supports' unequal loads give once the block overhangs; before, up to
    2.1 m g), the block's height within δ_s / 2 of its rest (0.10 δ_s; before, it dropped 9 δ_s), and the energy
    never rises beyond the integrator's error (largest rise 1e-15 J; before, 1.4e-5 J at the old face switch)."""
    from .test_edge_contacts import STATIC, crossed
    from .test_shape_pairs import HALF, MASS

    velocities = np.zeros(6)
    velocities[0] = 0.1
    result = simulate(crossed(HALF[2] - STATIC, friction=0.0), 0.8, samples=1601, velocities=velocities,
                      rtol=1e-10, atol=1e-12)  # fmt: skip
    weight = MASS * 9.81
    assert np.abs(column(result, "m_p.fz") - weight).max() < 1e-3 * weight
    assert np.abs(column(result, "m_p.fx")).max() < 1e-2 * weight
    assert np.abs(result.q[:, 2] - (HALF[2] - STATIC)).max() < STATIC / 2
    assert np.diff(result.total).max() <= 100 * 1e-10 * abs(result.total).max()
