"""Which motion of the free Delta 3R[2US] is right (simulation/crossing.py): its 2 s pass five times near singular
configurations of its loop equations, where the run integrates in all the coordinates with damped multipliers. The
tight reference is the same run at rtol 1e-13 (the crossings handled the same way): the default run agrees with it
as closely as the accuracy it reports (a run at a tenth of the tolerances). Nothing closer can be asked of the
motion: a change of 1e-10 rad/s in its start moves it by a tenth of its scale at 2 s, and each crossing multiplies
a difference about a hundredfold. Each crossing begins where the loop Jacobian's rank-th singular value falls to a
part of its start value, located on the trajectory, whatever the integrator's steps: so the runs at other
tolerances cross the same five times, and converge on the reference as the tolerances tighten. Before the entry
was located, the run at rtol 1.25e-10 passed the first near-singular configuration (t = 0.27 s) between two check
points without seeing it and ended 3.4 rad away, and the runs at 1e-11 and 1e-12 came no closer to the reference
than the default's error, since where a crossing began depended on where the integrator had stalled."""

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.kinematics.mechanism import Mechanism
from mbstudio.simulation.integrators import CHECKS
from mbstudio.simulation.run import simulate, state_difference

T_END = 2.0
# the estimate from one run at a tenth of the tolerances against the error (test_simulation_determinism.py: the error
# falls about tenfold with the tolerances; measured 0.66 x the estimate here)
RELIABLE = 4.0


def _spans(run) -> list[tuple[float, float]]:
    """(start, end) of each crossing, from its note."""
    spans = []
    for note in run.provenance.crossings:
        start, end = note.split("between t = ")[1].split(" s:")[0].split(" s and ")
        spans.append((float(start), float(end)))
    return spans


@pytest.mark.slow  # the Delta's 2 s four times, two of them at rtol 1e-13
def test_the_free_deltas_2_s_is_within_its_reported_accuracy_of_a_tight_reference():
    model = samples.load("delta_3rus")
    length = Mechanism(model).length_scale
    run = simulate(model, T_END, check_accuracy=True)
    reference = simulate(model, T_END, rtol=1e-13, atol=1e-15, error_estimate=False)
    assert run.t[-1] == reference.t[-1] == T_END
    # the same crossings, each begun and ended within the same check interval of the run
    interval = T_END / CHECKS
    spans, tight = _spans(run), _spans(reference)
    assert len(spans) == len(tight) >= 4
    assert np.abs(np.array(spans) - np.array(tight)).max() < interval
    error = state_difference(run, reference, length)
    assert 0 < error <= RELIABLE * run.provenance.accuracy
    nudged = simulate(
        model, T_END, rtol=1e-13, atol=1e-15, velocities=np.array([1e-10, 0.0, 0.0]), error_estimate=False
    )
    assert state_difference(nudged, reference, length) > 1e6 * 1e-10  # the physics, not the integrator


@pytest.mark.slow  # the Delta's 2 s four times, one of them at rtol 1e-13
def test_the_free_delta_crosses_the_same_five_times_at_any_tolerance_and_converges():
    model = samples.load("delta_3rus")
    length = Mechanism(model).length_scale
    reference = simulate(model, T_END, rtol=1e-13, atol=1e-15, error_estimate=False)
    tight = np.array(_spans(reference))
    errors = {}
    for rtol in (1.25e-10, 1e-10, 1e-11, 1e-12):
        run = simulate(model, T_END, rtol=rtol, atol=rtol / 100, error_estimate=False)
        spans = np.array(_spans(run))
        assert spans.shape == tight.shape == (5, 2), rtol
        assert np.abs(spans - tight).max() < T_END / CHECKS, rtol  # entered and left within a check interval
        errors[rtol] = state_difference(run, reference, length)
    # a hundredfold tighter, the error falls at least tenfold (measured: 120-150x at 1e-11 and 1e-12 against 1e-10;
    # with the entry at a check point or a stall it fell 1.7x at 1e-12)
    assert max(errors[1e-11], errors[1e-12]) < errors[1e-10] / 10


@pytest.mark.slow  # IRSBot-2's 2 s five times, two of them at rtol 1e-13
def test_irsbot2s_crossings_converge_on_a_tight_reference():
    """IRSBot-2's loop equations are redundant (22 rows of rank 14), and inside its crossings the state is returned
    onto the loops at 3e4/s (dynamics/augmented.py). Its runs then converge on the run at rtol 1e-13 (measured over
    the 2 s: 2.4e-3 at rtol 1e-10, 1.3e-5 at 1e-11, 6.7e-6 at 1e-12; under Baumgarte's terms alone each was 1.0
    away, as far as two motions of it can be), as closely as its own sensitivity allows: a change of 1e-10 rad/s in
    its start moves the tight run by 8e-4 at 2 s."""
    model = samples.load("irsbot2")
    length = Mechanism(model).length_scale
    reference = simulate(model, T_END, rtol=1e-13, atol=1e-15, error_estimate=False)
    errors = {}
    for rtol in (1e-10, 1e-11, 1e-12):
        run = simulate(model, T_END, rtol=rtol, atol=rtol / 100, error_estimate=False)
        assert len(run.provenance.crossings) == len(reference.provenance.crossings) == 3, rtol
        assert all("returned onto the loops" in note for note in run.provenance.crossings)
        errors[rtol] = state_difference(run, reference, length)
    assert max(errors[1e-11], errors[1e-12]) < errors[1e-10] / 10  # measured 180x
    assert errors[1e-12] < 1e-4  # measured 6.7e-6
    nudged = simulate(model, T_END, rtol=1e-13, atol=1e-15, velocities=np.array([1e-10, 0.0]), error_estimate=False)
    assert 1e-6 < state_difference(nudged, reference, length) < 1e-2  # measured 8.2e-4: the physics' amplification
