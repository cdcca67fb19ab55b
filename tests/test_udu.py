"""Shah et al.'s (2018) module-level U D Uᵀ of the mass matrix: the paper's printed gripper matrices (A.19-A.22 with the
digest's errata), the factors against the mass matrix, the recursive inverse against dense inverses, and the
module-level forward dynamics against the articulated-body algorithm."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics import (
    find_modules,
    forward_dynamics,
    inverse_mass_matrix,
    mass_matrix,
    module_forward_dynamics,
    udu,
    unit_upper_inverse,
)
from mbstudio.kinematics import Mechanism
from mbstudio.model.fileformat import from_dict

# Shah et al. (2018), Appendix A, as printed (digest 9.2), with the errata: D̄ and D̄⁻¹ have 0 at (1, 4) where the
# paper prints 1, and A.22 is Ū⁻ᵀ D̄⁻¹ Ū⁻¹. Scale and number of printed decimals with each matrix.
A19_GIM = (
    1e-4,
    4,
    [
        [113.3333, 33.3333, 9.1667, 1.6667],
        [33.3333, 13.3333, 4.1667, 0],
        [9.1667, 4.1667, 1.6667, 0],
        [1.6667, 0, 0, 1.6667],
    ],
)
A20_U = (1, 3, [[1, 3.571, -3.428, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
A20_D = (1e-4, 3, [[24.047, 0, 0, 0], [0, 13.333, 4.166, 0], [0, 4.166, 1.666, 0], [0, 0, 0, 1.666]])
A21_U_INV = (1, 4, [[1, -3.5714, 3.4286, -1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
A21_D_INV = (1e4, 4, [[0.0416, 0, 0, 0], [0, 0.3429, -0.8571, 0], [0, -0.8571, 2.7429, 0], [0, 0, 0, 0.6]])
A22_GIM_INV = (
    1e4,
    4,
    [
        [0.0416, -0.1485, 0.1426, -0.0416],
        [-0.1485, 0.8733, -1.3663, 0.1485],
        [0.1426, -1.3663, 3.2317, -0.1426],
        [-0.0416, 0.1485, -0.1426, 0.6416],
    ],
)


def assert_printed(value: np.ndarray, printed) -> None:
    """Equal to every printed digit: within one unit of the last printed decimal (the paper rounds some
    matrices and truncates others, e.g. 24.0476 printed as 24.047)."""
    scale, decimals, matrix = printed
    np.testing.assert_allclose(value / scale, np.array(matrix, dtype=float), rtol=0, atol=10.0**-decimals)


def test_gripper_reproduces_the_printed_matrices_a19_to_a22():
    mech = Mechanism(samples.load("gripper"))
    q = mech.tree.initial_coordinates()  # the paper's configuration: 0, 0, 0, 90°
    dec = udu(mech, q)
    assert dec.modules.members == ((0,), (1, 2), (3,)) and dec.modules.parent == (-1, 0, 0)
    assert dec.modules.order == [0, 1, 2, 3]
    M = mass_matrix(mech, q)[0]
    assert_printed(M, A19_GIM)
    assert M[1:3, 3].tolist() == [0.0, 0.0]  # Ī₂₃ = 0: sibling modules do not couple
    assert_printed(dec.U[0], A20_U)
    assert_printed(dec.D[0], A20_D)
    assert dec.D[0, 0, 3] == 0.0  # erratum: printed as 1
    assert_printed(unit_upper_inverse(dec)[0], A21_U_INV)
    assert_printed(np.linalg.inv(dec.D[0]), A21_D_INV)
    assert_printed(inverse_mass_matrix(dec)[0], A22_GIM_INV)


def test_gripper_free_fall_from_the_papers_configuration():
    """Digest 9.3 (its own numbers, not the paper's): at rest and without torques, q̈ in free fall."""
    mech = Mechanism(samples.load("gripper"))
    q = mech.tree.initial_coordinates()
    qdd = module_forward_dynamics(mech, q, np.zeros(4), np.zeros(4))[0]
    np.testing.assert_allclose(qdd, [-145.6931, 268.0752, -163.1762, 145.6931], rtol=0, atol=1e-4)


def branched_model():
    """A spatial tree whose modules nest two deep: chain 1-2, which carries 3 and 4; 3 carries 5 and 6.
    Axes point in different directions, joint 2 is universal and joint 4 prismatic."""
    inertia = {
        "m": 1.0,
        "mx": 0.1,
        "my": 0.02,
        "mz": 0.0,
        "Ixx": 0.05,
        "Ixy": 0.001,
        "Ixz": 0.0,
        "Iyy": 0.06,
        "Iyz": 0.002,
        "Izz": 0.07,
    }
    joints = [
        ("1", "0", "revolute", [0, 0, 1]),
        ("2", "1", "universal", [0, 1, 0]),
        ("3", "2", "revolute", [1, 0, 0]),
        ("4", "2", "prismatic", [0, 1, 1]),
        ("5", "3", "revolute", [1, 1, 0]),
        ("6", "3", "revolute", [0, 0, 1]),
    ]
    return from_dict(
        {
            "format": "mbstudio",
            "schema_version": 1,
            "name": "branched",
            "gravity": [0, 0, -9.81],
            "parameters": [],
            "bodies": [
                {"label": c, "name": f"body {c}", "inertia": inertia, "points": {}, "frames": {}} for c, *_ in joints
            ],
            "joints": [
                {
                    "name": f"J{c}",
                    "type": kind,
                    "parent": p,
                    "child": c,
                    "parent_frame": {"origin": [0.3, 0.1 * int(c), 0.05], "z": z},
                    "child_frame": {"origin": [0, 0, 0]},
                    "coordinates": [{"name": f"q{c}{i}"} for i in range(2 if kind == "universal" else 1)],
                }
                for c, p, kind, z in joints
            ],
            "independent_coordinates": "auto",
        }
    )


@functools.cache
def mechanism(name: str) -> Mechanism:
    return Mechanism(branched_model() if name == "branched" else samples.load(name))


NAMES = ["branched", "gripper", "puma560", "delta_3rr2rrr", "sla_suspension", "balloon"]


def test_modules_of_the_branched_tree_nest_two_deep():
    mods = find_modules(mechanism("branched"))
    assert mods.members == ((0, 1, 2), (3,), (4,), (5,), (6,)) and mods.parent == (-1, 0, 0, 1, 1)


@pytest.mark.parametrize("name", NAMES)
def test_block_factors_reproduce_the_mass_matrix(name):
    mech = mechanism(name)
    q = np.random.default_rng(11).uniform(-np.pi, np.pi, (20, mech.n))
    dec = udu(mech, q)
    order, off, mods = dec.modules.order, dec.modules.offsets, dec.modules
    M = mass_matrix(mech, q)[:, order][:, :, order]
    np.testing.assert_allclose(dec.U @ dec.D @ np.swapaxes(dec.U, 1, 2), M, rtol=0, atol=1e-12 * np.abs(M).max())
    for i in range(len(mods.members)):
        for j in range(len(mods.members)):
            block = dec.U[:, off[i] : off[i + 1], off[j] : off[j + 1]]
            if i == j:
                assert (block == np.eye(off[i + 1] - off[i])).all()
            elif i not in mods.ancestors(j):
                assert (block == 0).all()
                assert (dec.D[:, off[i] : off[i + 1], off[j] : off[j + 1]] == 0).all()
        diagonal = dec.D[:, off[i] : off[i + 1], off[i] : off[i + 1]]
        assert (np.linalg.eigvalsh(diagonal) > 0).all()


@pytest.mark.parametrize("name", NAMES)
def test_recursive_inverse_equals_dense_inverses(name):
    mech = mechanism(name)
    q = np.random.default_rng(12).uniform(-np.pi, np.pi, (20, mech.n))
    dec = udu(mech, q)
    order = dec.modules.order
    eye = np.eye(mech.n)
    np.testing.assert_allclose(unit_upper_inverse(dec), np.linalg.inv(dec.U), rtol=0, atol=1e-10)
    M = mass_matrix(mech, q)[:, order][:, :, order]
    dense = np.linalg.inv(M)
    error = np.abs(inverse_mass_matrix(dec) - dense).max(axis=(1, 2)) / np.abs(dense).max(axis=(1, 2))
    assert (error < 1e-15 * np.linalg.cond(M)).all()
    np.testing.assert_allclose(
        inverse_mass_matrix(dec) @ M, np.broadcast_to(eye, M.shape), rtol=0, atol=1e-15 * np.linalg.cond(M).max()
    )


def test_negative_control_the_inverse_needs_the_articulated_transfers():
    """With modules two deep, Ū⁻¹ is not simply 2·1 − Ū (digest 6.2, T7)."""
    mech = mechanism("branched")
    dec = udu(mech, np.random.default_rng(13).uniform(-np.pi, np.pi, (5, mech.n)))
    assert np.abs(2 * np.eye(mech.n) - dec.U - unit_upper_inverse(dec)).max() > 1e-3


@pytest.mark.parametrize("name", NAMES)
def test_module_forward_dynamics_equals_the_articulated_body_algorithm(name):
    mech = mechanism(name)
    rng = np.random.default_rng(14)
    q, qd, tau = (rng.uniform(-np.pi, np.pi, (20, mech.n)) for _ in range(3))
    expected = forward_dynamics(mech, q, qd, tau)
    scale = np.abs(expected).max(axis=1) * np.linalg.cond(mass_matrix(mech, q))
    assert (np.abs(module_forward_dynamics(mech, q, qd, tau) - expected).max(axis=1) / scale).max() < 1e-14


def test_fifty_digit_factors_agree_with_float64_and_reproduce_the_mass_matrix():
    fp, vp = mechanism("branched"), Mechanism(branched_model(), precision=50)
    q = np.random.default_rng(15).uniform(-np.pi, np.pi, (3, fp.n))
    ours, precise = udu(fp, q), udu(vp, q)
    for key in ("U", "D"):
        np.testing.assert_allclose(getattr(precise, key).astype(float), getattr(ours, key), rtol=0, atol=1e-12)
    order = precise.modules.order
    M = mass_matrix(vp, q)[:, order][:, :, order]
    with vp.backend.context():  # mpmath works at 15 digits outside it
        product = precise.U @ precise.D @ np.swapaxes(precise.U, 1, 2)
    assert max(abs(x) for x in (product - M).ravel()) < 1e-45
    qd, tau = np.ones_like(q), np.full_like(q, 0.5)
    np.testing.assert_allclose(
        module_forward_dynamics(vp, q, qd, tau).astype(float),
        module_forward_dynamics(fp, q, qd, tau),
        rtol=0,
        atol=1e-10,
    )
