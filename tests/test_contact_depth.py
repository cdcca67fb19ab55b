"""How deep contact points go (docs/contact.md): a rigid closed loop's landing lifted out of the plane at the
step's end (simulation/rigid_stepping.py), and a compliant point pressed past what a thin solid's geometry can
hold, named in the run's notes. Checked by routes of their own: the depths from the run's own series against
bounds from the step and the solid's thickness, the energy from the run's kinetic and potential series."""

from __future__ import annotations

import numpy as np

from mbstudio.kinematics import Mechanism
from mbstudio.simulation.run import simulate

from .test_contact import column
from .test_rigid_loops import RADIUS, check_landing, energy, floating_four_bar, four_bar_on_a_plane


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
    assert column(result, "coupler_point.z").min() >= 0.1 + RADIUS - bound


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
