"""The compiled engine's loop blocks (dynamics/engine.py): the straight-line Householder solves against numpy's,
the blocks a vehicle's corners give, and the columns of Φ_q that are zero whatever q."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import _Pieces, engine, loop_blocks, rigid_columns
from mbstudio.kinematics import Mechanism
from mbstudio.numerics.compiled import Traced
from mbstudio.numerics.small_solves import householder_factor, householder_solve

EPS = np.finfo(float).eps


@pytest.mark.parametrize("size", [1, 2, 3, 6, 9])
def test_householder_solves_equal_numpy_within_the_conditioning(size):
    """Two backward-stable solves differ by at most a few κ ε of the solution's scale; rows scaled over six
    decades make κ large without making the system singular."""
    rng = np.random.default_rng(size)
    for scale in (1.0, 1e6):
        a = rng.standard_normal((size, size)) * np.logspace(0, np.log10(scale), size)[:, None]
        b = rng.standard_normal((size, 2)) * np.logspace(0, np.log10(scale), size)[:, None]
        ours = np.array(householder_solve(size, 2)(*householder_factor(size)(a), b))
        reference = np.linalg.solve(a, b)
        bound = 64 * size * np.linalg.cond(a) * EPS * np.abs(reference).max()
        assert np.abs(ours - reference).max() <= bound


def test_a_column_of_zeros_below_its_diagonal_is_solved():
    """A permutation: the reflections meet columns with exact zeros and a zero first entry."""
    a = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    x = np.array(householder_solve(3, 1)(*householder_factor(3)(a), [1.0, 2.0, 3.0])).ravel()
    assert np.abs(x - [2.0, 1.0, 1.5]).max() <= 4 * EPS * 2


@pytest.fixture(scope="module")
def vehicle() -> Mechanism:
    return Mechanism(samples.load("vehicle"))


def test_the_vehicle_corners_are_blocks_of_their_own():
    """Two loops per corner (the arms' and the tie rod's), each a square block; a corner's blocks involve its arm
    angle, the front ones the rack too, and no chassis coordinate."""
    mech = Mechanism(samples.load("vehicle"), backend=Traced())
    dep, ind = list(mech.partition.dependent), list(mech.partition.independent)
    blocks = loop_blocks(_Pieces(mech).loops.sparsity_out(1), dep, ind)
    assert sorted(len(rows) for rows, _, _ in blocks) == [3] * 4 + [6] * 4
    assert all(len(rows) == len(columns) for rows, columns, _ in blocks)
    assert sorted(r for rows, _, _ in blocks for r in rows) == list(range(len(mech.partition.rows)))
    assert sorted(c for _, columns, _ in blocks for c in columns) == list(range(len(dep)))
    names = {mech.coordinates[ind[i]] for *_, touched in blocks for i in touched}
    assert names == {"rack", "fl_theta1", "fr_theta1", "rl_theta1", "rr_theta1"}


def test_rigid_columns_are_zero_away_from_closure(vehicle):
    """Φ_q computed by the numpy path at configurations that close no loop: the columns rigid_columns names are
    rounding of the row's scale, and they include the chassis' six coordinates in every loop row."""
    rng = np.random.default_rng(3)
    q = vehicle.assemble(None)[0] + 0.1 * rng.standard_normal(vehicle.n)
    jac = vehicle.constraint_jacobian(q[None])[0]
    chassis = set(range(6))
    for row in vehicle.partition.rows:
        columns = rigid_columns(vehicle, row)
        assert chassis <= set(columns)
        scale = np.abs(jac[row]).max()
        assert np.abs(jac[row, columns]).max() <= 64 * EPS * max(scale, 1.0)


@pytest.mark.slow  # 6 s: the vehicle's velocity map traced apart
def test_the_compiled_velocity_map_keeps_the_corners_apart(vehicle):
    """R from the compiled engine at the assembled configuration equals −J_dep⁻¹ J_ind by numpy, and a corner's
    dependent coordinates do not move with another corner's arm."""
    eng = engine(samples.load("vehicle"))
    q = eng.mech.assemble(None)[0]
    ours = eng.velocity_map(q)
    reference = eng.mech.r_matrix(q[None])[0]
    assert np.abs(ours - reference).max() <= 1e-12 * max(1.0, np.abs(reference).max())
    names = eng.mech.coordinates
    column = eng.independent.index(names.index("fl_theta1"))
    moved = {names[i].split("_")[0] for i in np.flatnonzero(ours[:, column])}
    assert moved == {"fl"}


def test_the_smallest_singular_value_by_blocks_is_the_whole_blocks(vehicle):
    """The loops' blocks together hold every singular value of Φ_q[rows, dep], so the smallest over the blocks is
    the whole block's, to rounding of its largest; at configurations that close no loop too."""
    eng = engine(samples.load("vehicle"))
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = eng.mech.assemble(None)[0] + 0.2 * rng.standard_normal(eng.n)
        values = np.linalg.svd(eng.loop_block(q), compute_uv=False)
        assert abs(eng.smallest_singular_value(q) - values[-1]) <= 64 * EPS * values[0]
