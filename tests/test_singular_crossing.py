"""A run through a singular configuration of the whole set of loop equations (simulation/crossing.py): the free Delta
3R[2US] used to stop at t = 1.29678 s, where its 18 loop equations fall to rank 17."""

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.closed_loop import closed_loop_forward_dynamics
from mbstudio.dynamics.forces import AppliedForces
from mbstudio.dynamics.forward_dynamics import forward_dynamics
from mbstudio.dynamics.mass_matrix import mass_matrix
from mbstudio.kinematics.mechanism import Mechanism
from mbstudio.simulation import crossing
from mbstudio.simulation.run import CLOSURE_LIMIT, simulate

EPS = np.finfo(float).eps


@pytest.mark.parametrize("name", ["four_bar", "slider_crank"])
def test_the_crossings_accelerations_are_the_closed_loop_ones_away_from_a_singularity(name):
    """In all the coordinates with multipliers (undamped), q̈ is the independent-coordinate route's R q̈_ind + a at a
    regular state, to the rounding of both routes times the mass-weighted Jacobian's conditioning. Damped at DAMPING
    of the state's own rank-th singular value, each direction of the constraint forces loses at most DAMPING² of
    itself: in the kinetic-energy norm |Lᵀ x| (M = L Lᵀ), the change is at most DAMPING² of the constraints' part of
    q̈, its difference from the tree's unconstrained q̈."""
    mech = Mechanism(samples.load(name))
    q = mech.assemble(None)[0]
    qd = mech.velocities(q[None], np.ones((1, len(mech.independent))))[0]
    R = mech.r_matrix(q[None])
    reduced = mech.accelerations(q[None], qd[None], closed_loop_forward_dynamics(mech, q[None], qd[None], R=R), R)[0]
    sigma = crossing.weighted_rank_value(mech, q)
    exact = crossing._Augmented(mech, 0.0, 0.0, None).accelerations(0.0, q, qd)
    M, jac = mass_matrix(mech, q[None])[0], mech.constraint_jacobian(q[None])[0]
    L = np.linalg.cholesky(M)
    conditioning = np.linalg.svd(np.linalg.solve(L, jac.T), compute_uv=False)[0] / sigma
    rounding = 1e3 * EPS * conditioning**2 * np.abs(reduced).max()
    assert np.abs(exact - reduced).max() <= rounding
    Q = AppliedForces(mech).generalized(np.zeros(1), q[None], qd[None])
    tree = forward_dynamics(mech, q[None], qd[None], Q)[0]
    damped = crossing._Augmented(mech, 0.0, crossing.DAMPING * sigma, None).accelerations(0.0, q, qd)
    change, constrained = (np.linalg.norm(L.T @ x) for x in (damped - exact, exact - tree))
    assert 0 < change <= crossing.DAMPING**2 * constrained + np.linalg.norm(L.T) * rounding


@pytest.mark.slow  # minutes: the crossings are integrated in numpy, one state at a time
def test_the_free_3rus_delta_runs_its_2_s_through_its_singular_configuration():
    """It runs the 2 s, says where it crossed a singular configuration and how, keeps its loops closed, and keeps
    its energy (gravity only: a conservative motion) through the crossings within ten times a regular run's budget
    (1e-7 of its scale over 2 s at the default tolerances, run.py): the independent check of what the crossings
    did. (The command line moves it the same, bit for bit: test_simulation_determinism.py.)"""
    model = samples.load("delta_3rus")
    mech = Mechanism(model)
    run = simulate(model, 2.0)
    assert run.t[-1] == 2.0
    crossings = run.provenance.crossings
    assert crossings and all(note in run.notes for note in crossings)
    spans = [[float(x) for x in note.split("between t = ")[1].split(" s:")[0].split(" s and ")] for note in crossings]
    assert any(start < 1.2968 < end for start, end in spans)  # where the run used to stop
    fell = [float(note.split("singular value fell to ")[1].split(" of")[0]) for note in crossings]
    assert all(value < crossing.ENTER for value in fell)  # each began below ENTER of the start's
    assert run.residual.max() <= CLOSURE_LIMIT * mech.length_scale
    assert run.energy_drift <= 1e-6
