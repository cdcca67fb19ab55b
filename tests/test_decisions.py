"""Decisions on floating-point thresholds give the same answer when the inputs move by 1e-13 (docs/architecture.md,
principle 9): each test runs as given and with every number of its model perturbed (the `perturb` fixture,
tests/conftest.py). On another machine, another BLAS or another thread count rounds differently; a result that
flips under such noise was never a result (the README's run once failed on a second machine, and the
Delta's simulation stopped there, on decisions taken at the rounding floor)."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import engine
from mbstudio.kinematics import Mechanism
from mbstudio.model import AssemblyError, dumps
from mbstudio.simulation.charts import ChartWatch, decided
from mbstudio.simulation.integrators import IntegrationError, integrate

CLOSED = ["four_bar", "slider_crank", "sla_suspension", "delta_3rr2rrr", "delta_3rus", "irsbot2"]
# the SLA's lower arm swings up until its loops fold here (theta2 = 0): found by continuation, and checked below
# to be a fold (the loop Jacobian singular there)
SLA_FOLD = 0.9099258631


@pytest.fixture(scope="module")
def as_given() -> dict:
    return {}


@pytest.mark.parametrize("name", CLOSED)
def test_the_coordinates_chosen_at_load_survive_rounding(name, perturb, as_given):
    """Rank, redundant rows and independent coordinates, decided from Φ_q at the initial configuration."""
    mech = Mechanism(perturb(samples.load(name)))
    reference = as_given.setdefault(name, Mechanism(samples.load(name)).partition)
    assert mech.partition == reference
    assert mech.dof == mech.n - reference.rank


@pytest.mark.parametrize("count", [41, 50, 400])
def test_the_end_of_an_assembly_branch_does_not_depend_on_the_sampling(count, perturb):
    """The SLA's sample says it closes for |theta1| <= 0.7. Over theta1 in [0, 2] it closed to 2 rad with 50
    samples and stopped at 1.85 with 41 (on other branches, by Newton from guesses); it ends at its fold."""
    mech = Mechanism(perturb(samples.load("sla_suspension")))
    with pytest.raises(AssemblyError, match=r"cannot close at theta1 = 0\.90992\d*, theta2 = 0") as error:
        mech.assemble_path(np.c_[np.linspace(0, 2, count), np.zeros(count)])
    reached = error.value.reached["theta1"]
    assert reached == pytest.approx(SLA_FOLD, abs=1e-9)  # to the continuation's resolution, whatever the sampling
    # a fold: the loop equations' Jacobian in the dependent coordinates is singular where the branch ends
    q = mech.assemble({"theta1": reached - 1e-9, "theta2": 0.0})
    rows, dep = list(mech.partition.rows), list(mech.partition.dependent)
    sigma = np.linalg.svd(np.asarray(mech.constraint_jacobian(q)[0])[np.ix_(rows, dep)], compute_uv=False)
    assert sigma[-1] < 1e-3 * sigma[0]


def test_a_path_gives_the_same_configurations_whatever_its_sampling(perturb):
    """Up to just before the fold, the configurations at the values several samplings share are equal."""
    mech = Mechanism(perturb(samples.load("sla_suspension")))
    paths = {n: mech.assemble_path(np.c_[np.linspace(0, 0.9, n), np.zeros(n)]) for n in (10, 91, 181)}
    coarse = paths[10]
    assert np.abs(paths[91][::10] - coarse).max() < 1e-10
    assert np.abs(paths[181][::20] - coarse).max() < 1e-10
    assert np.abs(mech.residual(paths[181])).max() < 1e-12


@pytest.fixture(scope="module")
def delta_switch():
    """The first decision of the falling Delta that changes its coordinates (its actuated angles, chosen at the
    start, lose conditioning near t = 0.27 s), from DOP853 runs watched by ChartWatch: the decisions before it keep
    the coordinates (no other choice is BETTER there), as a run's do."""
    model = samples.load("delta_3rr2rrr")
    text = dumps(model)
    eng = first = engine(model, text)
    y, t = np.concatenate([Mechanism(model).assemble(None)[0], np.zeros(len(eng.independent))]), 0.0
    times = np.linspace(0, 0.5, 51)
    for _ in range(10):
        with pytest.raises(IntegrationError) as stop:
            integrate(eng, times[times > t], y, "DOP853", 1e-8, 1e-10, None, t, ChartWatch(eng, y))
        decision = decided(eng, stop.value.time, stop.value.state, text, first.mech.partition)
        if decision.changed:
            return eng, text, stop.value, decision
        eng, y, t = decision.engine, decision.state, decision.time
    raise AssertionError("no change of coordinates in 10 decisions")


def test_the_delta_changes_coordinates_before_its_steps_stall(delta_switch):
    eng, text, stop, decision = delta_switch
    assert 0.2 < stop.time < 0.2758  # before the stall where the run used to end, on every machine
    new_engine, state = decision.engine, decision.state
    assert new_engine.mech.partition.rank == eng.mech.partition.rank == 13  # the mechanism's rank, kept
    assert new_engine.independent != eng.independent
    assert np.abs(new_engine.mech.residual(state[: new_engine.n])).max() < 1e-12


def test_the_delta_chooses_the_same_new_coordinates_from_a_perturbed_state(delta_switch, perturb):
    """The rank 15 instead of 13 came from singular values of 2e-13 that the closure left at a stalled state."""
    eng, text, stop, decision = delta_switch
    chosen = decided(eng, stop.time, perturb(stop.state), text, eng.mech.partition)
    assert chosen.changed and chosen.engine.mech.partition == decision.engine.mech.partition


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "sla_suspension"])
def test_the_double_precision_rank_survives_rounding(name, perturb, as_given):
    """The SLA has no ridge in double precision (its rank is doubtful): the count is taken three digits above
    the rounding floor, so that another BLAS (the window's job process) does not give 37 where the command line
    gives 36."""
    from mbstudio.identification.pipeline import base_parameters

    run = base_parameters(perturb(samples.load(name)), "dp", samples=60)
    reference = as_given.setdefault(("dp", name), base_parameters(samples.load(name), "dp", samples=60).dp)
    assert (run.dp.rank, run.dp.ridge.evident) == (reference.rank, reference.ridge.evident)


@pytest.mark.slow  # six 2-s runs of the Delta, each compiling the engines of its coordinate choices
@pytest.mark.parametrize("method", ["CVODES", "CVODES-BDF", "DOP853", "RK45", "Radau", "BDF"])
def test_the_unactuated_delta_runs_its_2_s_with_every_method(method):
    """It stopped at t = 0.2758 s on a second machine with the default method and DOP853."""
    from mbstudio.simulation import simulate

    result = simulate(samples.load("delta_3rr2rrr"), 2.0, method, samples=101)
    assert result.t[-1] == 2.0 and result.residual.max() < 1e-10
    assert result.energy_drift < 1e-6  # unactuated and undamped: the energy is kept through the switch
