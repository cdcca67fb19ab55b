"""Every run estimates the global error it reached (simulation/run.py, docs/accuracy.md): a companion run at ten
times the tolerances, a ninth of their difference. Checked here against the true error: the difference from a tight
reference, our own run at rtol 1e-13 for the samples' loops, Pinocchio's ABA integrated by scipy's DOP853 at rtol
1e-13 for the spatial chains (built independently of our engine). And the defaults reach 1e-6 of the state's scale
over 2 s on them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.benchmarks.models import spatial_chain
from mbstudio.cli import main
from mbstudio.kinematics import Mechanism
from mbstudio.model import dumps, loads
from mbstudio.simulation.run import Motion, simulate, state_difference

# An estimate, an order of magnitude: it may say the error is at most UNDER times smaller than it is (measured: 0.32 x
# on the gripper, 0.44 x on the smooth samples; the sensitive Delta 3RR[2RR]R's own bound is below) and at most OVER
# times larger (measured 16 x on the slider-crank, whose default run is luckier than its run at ten times the
# tolerances)
UNDER, OVER = 10.0, 30.0
TARGET = 1e-6  # of the state's scale over 2 s: what the default tolerances reach on these (docs/accuracy.md)
T_END = 2.0


def _tight(model) -> object:
    return simulate(model, T_END, rtol=1e-13, atol=1e-15, error_estimate=False)


def _pinocchio(model) -> Motion:
    """The chain's motion by Pinocchio's ABA and scipy's DOP853 at rtol = atol = 1e-13, in our coordinates."""
    pin = pytest.importorskip("pinocchio")
    from scipy.integrate import solve_ivp

    from mbstudio.io.pinocchio_reference import ClosedLoopReference

    mech = Mechanism(model)
    reference = ClosedLoopReference.of(mech)
    n, rest = reference.model.nq, np.zeros(reference.model.nv)

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        return np.concatenate([y[n:], pin.aba(reference.model, reference.data, y[:n], y[n:], rest)])

    y0 = reference.state(mech.assemble(None)[0])
    y = solve_ivp(rhs, (0, T_END), y0, "DOP853", np.linspace(0, T_END, 201), rtol=1e-13, atol=1e-13).y.T
    qd = np.empty((len(y), len(reference.ours)))
    qd[:, reference.ours] = y[:, n:]
    return Motion(reference.coordinates(y), qd)


def _checked(model, reference, under: float = UNDER) -> tuple[float, float]:
    """The default run's true error against `reference` (relative to the state's scale) and its estimate, both
    checked."""
    run = simulate(model, T_END)
    length = Mechanism(model).length_scale
    true = state_difference(reference, run, length)
    estimate = run.provenance.error_estimate
    assert true / under <= estimate <= OVER * true
    return true, estimate


@pytest.mark.parametrize(
    "name", ["four_bar", "slider_crank", "sla_suspension", pytest.param("vehicle", marks=pytest.mark.slow)]
)  # the vehicle's tight run takes ~15 s
def test_the_estimate_is_within_an_order_of_magnitude_of_the_error_and_the_defaults_reach_the_target(name):
    """Against our run at rtol 1e-13 (its own error some thousand times below the default's)."""
    model = samples.load(name)
    true, _ = _checked(model, _tight(model))
    assert true <= TARGET


@pytest.mark.slow  # 3.5 s (the README's run is held under 5 minutes)
def test_a_hanging_chain_of_25_links_against_pinocchio():
    model = spatial_chain(25)
    true, _ = _checked(model, _pinocchio(model))
    assert true <= TARGET  # measured 8.5e-10 (its estimate 8.6e-10)


@pytest.mark.slow  # 4 s (the README's run is held under 5 minutes)
def test_a_chain_started_with_every_joint_turned_is_sensitive_and_its_estimate_says_how_far_it_is():
    """Every joint of the chain of 25 links started at 0.3 rad: its motion amplifies a change of 1e-10 rad/s at its
    start to 1.8e-5 of its scale at 2 s, so the defaults miss the target by far (6.9e-4), and the estimate says so
    (1.1e-3)."""
    document = json.loads(dumps(spatial_chain(25)))
    for joint in document["joints"]:
        joint["coordinates"][0]["initial"] = 0.3
    model = loads(json.dumps(document))
    true, _ = _checked(model, _pinocchio(model))
    assert true > 100 * TARGET


@pytest.mark.slow  # the 100-link chain's engine, and Pinocchio's run at 1e-13
def test_a_hanging_chain_of_100_links_against_pinocchio_and_our_own_tight_run():
    model = spatial_chain(100)
    reference = _pinocchio(model)
    true, _ = _checked(model, reference)
    assert true <= TARGET  # measured 1.3e-8
    ours = _tight(model)  # the two tight references agree far below the default's error
    assert state_difference(reference, ours, Mechanism(model).length_scale) <= true / 10


@pytest.mark.slow  # the Delta's 2 s at rtol 1e-13
def test_the_sensitive_delta_is_said_to_be_so_and_its_error_is_not_underestimated():
    """A change of 1e-10 rad/s in its start moves it by radians at 2 s: no default reaches the target there, and
    the run says so. Its estimate is one draw of that amplification: 1.5e-4 against 4.6e-4 at ba4e9cc, 2.8e-5 against
    6.9e-4 since the stalls' handling changed its tight and its companion runs (not its default run): 25 times
    under, and another machine's rounding draws another figure, so the bound here is 100; the note, not the figure,
    is what tells the user (docs/accuracy.md)."""
    model = samples.load("delta_3rr2rrr")
    true, estimate = _checked(model, _tight(model), under=100.0)
    assert estimate > 1e4 * 1e-10  # far beyond the tolerances: the note below says why
    assert any("the motion is sensitive" in note for note in simulate(model, T_END).notes)


def test_the_estimate_is_printed_filed_beside_the_csv_and_changes_no_sample(tmp_path, capsys):
    """The same estimate from the command line (text and --json), beside the CSV and from Python; the run's
    samples are the same bytes without it (the companion run changes nothing the run computes)."""
    path = str(samples.path("four_bar"))
    with_estimate, without = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["simulate", path, "--t-end", "2", "--out", str(with_estimate), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert main(["simulate", path, "--t-end", "2", "--out", str(without), "--quiet", "--no-error-estimate"]) == 0
    capsys.readouterr()
    assert with_estimate.read_bytes() == without.read_bytes()
    filed = json.loads((tmp_path / "a.csv.json").read_text())["provenance"]
    assert json.loads((tmp_path / "b.csv.json").read_text())["provenance"]["error_estimate"] is None
    estimate = simulate(samples.load("four_bar"), T_END).provenance.error_estimate
    assert filed["error_estimate"] == estimate and 0 < estimate <= TARGET
    assert f"error estimate {estimate:.1g} of the state's scale" in text
    assert main(["simulate", path, "--t-end", "2", "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["error_estimate"] == estimate


def test_a_companion_run_that_stops_is_said_and_leaves_the_run_as_it_is(monkeypatch):
    """Where the run at ten times the tolerances stops (made to here), the run stands, without an estimate, and
    says why."""
    from mbstudio.simulation import run as run_module

    model = samples.load("four_bar")
    plain = simulate(model, 0.5, error_estimate=False)

    def stops(*args, **kwargs):
        raise RuntimeError("the integration stopped at t = 0.25 s: made to stop")

    monkeypatch.setattr(run_module, "_motion", stops)
    run = simulate(model, 0.5)
    assert run.provenance.error_estimate is None
    assert run.notes == ["error not estimated: the run at 10 times the tolerances stopped (the integration stopped at "
                         "t = 0.25 s: made to stop)"]  # fmt: skip
    assert np.array_equal(run.q, plain.q) and np.array_equal(run.qd, plain.qd)


def test_one_progress_bar_covers_the_run_and_its_estimate(monkeypatch):
    """The window's bar went to 100 % when the run ended and stood there while the companion ran (0.6-1.3 times as
    long): the run now fills the bar's first part and the companion the rest, never going back."""
    from mbstudio.simulation import run

    seen: list[float] = []
    at_companion: list[float] = []
    estimate = run._estimate_error

    def noted(*args):
        at_companion.append(seen[-1])
        return estimate(*args)

    monkeypatch.setattr(run, "_estimate_error", noted)
    result = simulate(samples.load("four_bar"), 1.0, progress=seen.append)
    assert result.provenance.error_estimate is not None
    share = 1.0 - run.COMPANION_SHARE
    assert at_companion == [pytest.approx(share, abs=0.01)]  # the run's part full, the companion's to come
    assert seen == sorted(seen) and seen[-1] == 1.0 and seen.count(1.0) == 1
    assert any(share < f < 1.0 for f in seen)  # the companion's progress
