"""Müller's (2021) modular model of parallel machines, each check by an independent route: the digest's checks T1-T19
(counts, the parallelogram's H, screw data, the paper's closed-form platform pose and F'(ϑ), ranks, symmetry,
energy and power identities, formulation independence, derivatives by finite differences), the task-space
equations against the general closed-loop method on three machines, and the Delta torques of digest sec. 7.3."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.pkm import ParallelMachine
from mbstudio.dynamics.pkm.general import GeneralRoute
from mbstudio.dynamics.pkm.limb import LimbModel
from mbstudio.dynamics.pkm.paths import path_dynamics, path_motion, platform_path
from mbstudio.dynamics.pkm.report import pkm_report
from mbstudio.dynamics.pkm.topology import Cycle, is_hybrid, structure
from mbstudio.dynamics.pkm.workspace import limb_reach, reach_box, sized_grid, workspace_map
from mbstudio.identification.energy import energy_coefficients
from mbstudio.kinematics.geometry import Geometry
from mbstudio.model import ModelError, dumps, loads
from mbstudio.numerics.backends import Float64
from tests.test_closed_loop_dynamics import DELTA_REFERENCE, delta_trajectory

MACHINES = ["delta_3rr2rrr", "delta_3rus", "irsbot2"]
# the 3R[2US] Delta's 33 coordinates make its general-route checks the costliest: they run with the slow ones
SLOW_3RUS = [pytest.param("delta_3rus", marks=pytest.mark.slow), "delta_3rr2rrr", "irsbot2"]
XI = np.sqrt(8911.0)  # 100 h / m for the paper's Delta (digest sec. 4.1)


@functools.cache
def machine(name: str, reuse: bool = True) -> ParallelMachine:
    return ParallelMachine(samples.load(name), reuse)


@functools.cache
def general(name: str) -> GeneralRoute:
    pkm = machine(name)
    return GeneralRoute(pkm.mech, pkm.platform, pkm.axes, pkm.actuated)


@functools.cache
def configurations(name: str, count: int = 50, seed: int = 0):
    """Reachable task coordinates (N, δ_p) from random actuated angles (the general route's assembly), with
    the general route's coordinates there and random task velocities and accelerations."""
    pkm, route = machine(name), general(name)
    mech, rng = pkm.mech, np.random.default_rng(seed)
    ind = list(mech.partition.independent)
    q = mech.assemble(pkm.q0[:, ind] + 0.3 * rng.uniform(-1, 1, (count, len(ind))), guess=pkm.q0)
    x = route.position(q)
    v, a = (rng.uniform(-1, 1, x.shape) for _ in range(2))
    return x, q, v, a


def delta_limb(independent: list[str]) -> LimbModel:
    """Limb a of the Delta, its own frame the paper's F_0', with these coordinates kept independent."""
    model = samples.load("delta_3rr2rrr")
    return LimbModel(model, structure(model).limbs[0], "p", independent)


def paper_order(limb: LimbModel, names: list[str]) -> list[int]:
    return [limb.independent.index(limb.coordinates.index(n)) for n in names]


def random_limb_states(limb: LimbModel, count: int, seed: int, geometric: bool = False) -> np.ndarray:
    """Closed limb states: random ϑ1, ϑ2, ϑ4, ϑ6, the parallelogram closed by the limb's own Newton, or by the
    paper's geometric solution ϑ3 = ϑ5 = −ϑ4."""
    rng = np.random.default_rng(seed)
    q = np.zeros((count, limb.n))
    for name in ("th1a", "th2a", "th4a", "th6a"):
        q[:, limb.coordinates.index(name)] = rng.uniform(-0.6, 0.6, count)
    if geometric:
        for name in ("th3a", "th5a"):
            q[:, limb.coordinates.index(name)] = -q[:, limb.coordinates.index("th4a")]
        return q
    return limb.close_cycles(q)


# ---------------------------------------------------------------------------------------- T1, T7: counts
COUNTS = {  # digest T1: (joints 𝔑_l, variables N_l, tree joints 𝔫_l, tree variables n_l, δ_l, r_l, δ_p, γ)
    "delta_3rr2rrr": (7, 7, 6, 6, 4, 4, 3, 5),
    "delta_3rus": (5, 11, 4, 9, 5, 5, 3, 5),
    "irsbot2": (8, 12, 6, 9, 3, 3, 2, 5),
}


@pytest.mark.parametrize("name", MACHINES)
def test_limb_counts_are_the_digests(name):
    report = pkm_report(samples.load(name))
    joints, variables, tree_joints, tree_variables, dof, rank, platform_dof, cycles = COUNTS[name]
    assert report["platform_dof"] == platform_dof and report["fundamental_cycles"] == cycles
    L = report["limb_count"]
    gamma_l = len(report["limbs"][0]["fundamental_cycles"])
    assert cycles == L * (gamma_l + 1) - 1 == machine(name).mech.topology.loops  # γ = L(γ_l + 1) − 1
    assert report["hybrid"]
    for limb in report["limbs"]:
        c = limb["counts"]
        assert (c["joints"], c["joint_variables"], c["tree_joints"], c["tree_variables"]) == (
            joints,
            variables,
            tree_joints,
            tree_variables,
        )
        assert (c["dof"], c["platform_rank"]) == (dof, rank)
        assert limb["equimobile"] is (rank == platform_dof)
    if name == "irsbot2":  # the 4U loop: 4 equations of rank 4 on 6 variables, 2 degrees of freedom
        loop = report["limbs"][0]["fundamental_cycles"][1]
        assert (loop["equations"], loop["rank"], loop["variables"], loop["dof"]) == (4, 4, 6, 2)
    placed = [limb["placed_as"] for limb in report["limbs"][1:]]
    angles = {"delta_3rr2rrr": [120, 120], "delta_3rus": [120, 120], "irsbot2": [180]}[name]
    assert [p["rotation_deg"] for p in placed] == pytest.approx(angles)


def test_hybrid_means_cycles_share_at_most_one_body():
    assert is_hybrid([Cycle("a", ("0", "1", "2"), ()), Cycle("b", ("2", "3", "4"), ())])
    assert not is_hybrid([Cycle("a", ("0", "1", "2"), ()), Cycle("b", ("1", "2", "3"), ())])


# ---------------------------------------------------------------------------------------- T2-T6: the Delta limb
def test_parallelogram_h_is_the_papers_constant_matrix():
    """T2/T3: with the paper's q = (ϑ4, ϑ1, ϑ2, ϑ6), H_(1,l) = (−1, −1, 1)ᵀ and H_(l) is eq. (81) anywhere."""
    limb = delta_limb(["th4a", "th1a", "th2a", "th6a"])
    q = random_limb_states(limb, 20, 1)
    H = limb.h_matrix(q)
    rows = [limb.coordinates.index(f"th{i}a") for i in range(1, 7)]
    H81 = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [-1, 0, 0, 0], [1, 0, 0, 0], [-1, 0, 0, 0], [0, 0, 0, 1]])
    got = H[:, rows][:, :, paper_order(limb, ["th4a", "th1a", "th2a", "th6a"])]
    assert np.abs(got - H81).max() < 1e-13
    # the geometric solution ϑ3 = ϑ5 = −ϑ4 closes the loop
    th = {n: q[:, limb.coordinates.index(n)] for n in ("th3a", "th4a", "th5a")}
    assert np.abs(th["th3a"] + th["th4a"]).max() < 1e-12 and np.abs(th["th5a"] + th["th4a"]).max() < 1e-12


def test_cut_body_formulation_gives_the_reciprocal_screw_ratio():
    """T2, T15a: the loop's instantaneous screws S_i = (e_i; p_i × e_i) from our kinematics satisfy the cut-body
    equations (61) with ϑ̇3 = ϑ̇5 = ϑ̇7 = −ϑ̇4: rank(S3, S4, −S5, S7) = 3 and −G_z⁺ G_q = (−1, −1, −1)."""
    model = samples.load("delta_3rr2rrr")
    limb = delta_limb(["th1a"])
    q = random_limb_states(limb, 6, 2)
    st = limb.mech.motion(q)
    geometry = Geometry(model, Float64())
    for k in range(len(q)):
        screws = {}
        for name in ("th3a", "th4a", "th5a"):
            i = limb.coordinates.index(name)
            e, p = st.u[k, i], st.o[k, i]
            screws[name] = np.concatenate([e, np.cross(p, e)])
        # joint 7 on body 4: axis and point carried by body 4's pose
        b4 = limb.mech.tree.body_index("4a")
        frame = geometry.frame(model.body("4a"), model.joint("J7a").parent_frame)
        e7 = st.R[b4][k] @ frame.rotation[:, 2]
        p7 = st.p[b4][k] + st.R[b4][k] @ frame.origin
        screws["th7a"] = np.concatenate([e7, np.cross(p7, e7)])
        G = np.column_stack([screws["th3a"], screws["th4a"], -screws["th5a"], screws["th7a"]])
        assert np.linalg.matrix_rank(G, tol=1e-10) == 3
        Gz, Gq = G[:, [0, 2, 3]], G[:, [1]]
        ratio = np.linalg.lstsq(Gz, -Gq, rcond=None)[0][:, 0]
        assert np.abs(ratio - [-1, -1, -1]).max() < 1e-12  # z = (ϑ3, ϑ5, ϑ7) rates per ϑ̇4: (−1, −1, −1)


def test_body_fixed_screws_are_the_papers():
    """T4: ^iX_i = Ad_{A_i}⁻¹ Y_i from our joint axes and body poses at the reference configuration."""
    limb = delta_limb(["th1a"])
    st = limb.mech.motion(np.zeros((1, limb.n)))
    expected = {
        ("th1a", "1a"): [0, -1, 0, 0, 0, -1 / 8],
        ("th2a", "2a"): [0, -1, 0, 0, 0, 0],
        ("th3a", "3a"): [1, 0, 0, 0, 1 / 2, 0],
        ("th4a", "4a"): [1, 0, 0, 0, 0, 1 / 25],
        ("th5a", "5a"): [1, 0, 0, 0, 1 / 2, 0],
        ("th6a", "p"): [0, -1, 0, 0, 0, 7 / 100],
    }
    for (coordinate, body), X in expected.items():
        i, b = limb.coordinates.index(coordinate), limb.mech.tree.body_index(body)
        e, o = st.u[0, i], st.o[0, i]
        R, p = st.R[b][0], st.p[b][0]
        body_fixed = np.concatenate([R.T @ e, R.T @ (np.cross(o, e) + np.cross(e, p))])
        assert np.abs(body_fixed - X).max() < 1e-15, coordinate


def closed_form_pose(th1, th2, th4, th6) -> tuple[np.ndarray, np.ndarray]:
    """The paper's C_p'(q) (sec. 9.1), in metres."""
    s, c = np.sin, np.cos
    a126, a12 = th1 + th2 + th6, th1 + th2
    rotation = np.array([[c(a126), 0, -s(a126)], [0, 1, 0], [s(a126), 0, c(a126)]])
    both = c(a12 + th4) + c(a12 - th4)
    x = (33 * both + 14 * c(a126) - 50 * c(th1) + 2 * XI * s(a12) * c(th4) - 30) / 200
    z = (14 * s(a126) + 66 * s(a12) * c(th4) - 50 * s(th1) - XI * both) / 200
    return rotation, np.array([x, -s(th4), z])


def closed_form_F(th2, th4, th6) -> np.ndarray:
    """The paper's F'(ϑ), eq. (142): rows q = (ϑ4, ϑ1, ϑ2, ϑ6), columns v in the platform frame."""
    sec, tan = 1 / np.cos(th4), np.tan(th4)
    u2, w2 = XI * np.sin(th2) + 33 * np.cos(th2), XI * np.cos(th2) - 33 * np.sin(th2)
    u6, w6 = 33 * np.sin(th6) + XI * np.cos(th6), 33 * np.cos(th6) - XI * np.sin(th6)
    c26, s26 = np.cos(th2 + th6), np.sin(th2 + th6)
    return (
        np.array(
            [
                [0, -w2 * sec, 0],
                [4 * w6, -400 * tan, -4 * u6],
                [-4 * (w6 - 25 * sec * c26), tan * (400 - u2 * sec), 4 * (u6 - 25 * sec * s26)],
                [-100 * sec * c26, u2 * tan * sec, 100 * sec * s26],
            ]
        )
        / w2
    )


def test_platform_pose_and_ik_jacobian_are_the_papers_closed_forms():
    """T5, T6: the paper's C_p'(q) and F'(ϑ) (eq. 142, body-fixed velocities) against our limb, random q."""
    limb = delta_limb(["th4a", "th1a", "th2a", "th6a"])
    q = random_limb_states(limb, 20, 3, geometric=True)
    assert np.abs(limb.mech.residual(q)).max() < 1e-15
    R, p = limb.platform_pose(q)
    F6 = limb.ik_jacobian(limb.forward_jacobian(q)[0])
    order = paper_order(limb, ["th4a", "th1a", "th2a", "th6a"])
    th = {n: q[:, limb.coordinates.index(f"th{n}a")] for n in (1, 2, 4, 6)}
    for k in range(len(q)):
        rotation, position = closed_form_pose(th[1][k], th[2][k], th[4][k], th[6][k])
        assert np.abs(R[k] - rotation).max() < 1e-15 and np.abs(p[k] - position).max() < 1e-15
        ours = F6[k][order][:, 3:] @ R[k]  # world velocities -> platform-frame velocities
        assert np.abs(ours - closed_form_F(th[2][k], th[4][k], th[6][k])).max() < 1e-13
    F0 = closed_form_F(0.0, 0.0, 0.0)
    np.testing.assert_allclose(F0, [[0, -1, 0], [132 / XI, 0, -4], [-32 / XI, 0, 4], [-100 / XI, 0, 0]], atol=1e-15)


# ---------------------------------------------------------------------------------------- T8, T10, T18: reference
def test_delta_reference_values_and_symmetry():
    """Digest sec. 7.3 at the reference configuration, 3-fold symmetric (T18): M_t = diag(m_xy, m_xy, m_z),
    equal static torques; the platform contributes m_p I (T8); M_t and each limb's share symmetric, M_t positive
    definite (T10)."""
    pkm = machine("delta_3rr2rrr")
    rest = np.zeros((1, 3))
    eq = pkm.equations(pkm.start, rest)
    np.testing.assert_allclose(eq.mass[0], np.diag([2.412964, 2.412964, 3.875579]), rtol=0, atol=5e-7)
    np.testing.assert_allclose(eq.bias[0], [0, 0, 40.34711], rtol=0, atol=5e-6)
    np.testing.assert_allclose(
        eq.ik_jacobian[0], [[1.398333, 0, -4], [-0.699167, 1.210992, -4], [-0.699167, -1.210992, -4]], atol=5e-7
    )
    u = pkm.inverse_dynamics(pkm.start, rest, rest).efforts[0]
    np.testing.assert_allclose(u, [-3.362259] * 3, rtol=0, atol=5e-7)
    assert np.ptp(u) < 1e-13
    assert np.abs(eq.mass[0] - eq.limb_mass.sum(axis=0)[0] - pkm.platform_mass * np.eye(3)).max() < 1e-14
    assert np.abs(eq.limb_mass - np.swapaxes(eq.limb_mass, 2, 3)).max() < 1e-15


def test_delta_torques_of_the_digest_through_the_modular_route():
    """Digest sec. 7.3 at all 17 times to the printed 5 decimals; ϑ1 + ϑ2 + ϑ6 = 0 in every limb (T9); the
    torques repeat at 5 − t (T18, time reversal)."""
    pkm = machine("delta_3rr2rrr")
    t = DELTA_REFERENCE[:, 0]
    r, rd, rdd = delta_trajectory(t)
    states = pkm.inverse_kinematics(r)
    u = pkm.inverse_dynamics(states, rd, rdd).efforts
    np.testing.assert_array_equal(np.round(u, 5), DELTA_REFERENCE[:, 1:4])  # every printed digit
    angles = np.column_stack([s[:, limb.model.actuated[0]] for limb, s in zip(pkm.limbs, states, strict=True)])
    np.testing.assert_allclose(angles, DELTA_REFERENCE[:, 4:], rtol=0, atol=5.01e-6)
    for limb, q in zip(pkm.limbs, states, strict=True):
        total = sum(q[:, limb.model.coordinates.index(f"th{i}a")] for i in (1, 2, 6))
        assert np.abs(total).max() < 1e-12
    mirrored = pkm.inverse_dynamics(pkm.inverse_kinematics(delta_trajectory(5 - t)[0]), *delta_trajectory(5 - t)[1:])
    assert np.abs(mirrored.efforts - u).max() < 1e-11


def test_platform_path_of_the_file_is_the_papers_line():
    pkm = machine("delta_3rr2rrr")
    path = platform_path(pkm, "paper_test")
    t = np.array([0.0, 1.3, 7.5])
    for ours, reference in zip(path_motion(pkm, path, t), delta_trajectory(t), strict=True):
        assert np.abs(ours - reference).max() < 1e-15
    with pytest.raises(ModelError, match="paper_test"):
        platform_path(pkm, "no_such_path")


# ---------------------------------------------------------------------------------------- against the general method
@pytest.mark.parametrize("name", SLOW_3RUS)
def test_modular_equations_are_the_general_methods(name):
    """M_t, C_t V_t + W_t^grav, J_IK and the efforts by the modular route and by the general closed-loop method
    (the whole mechanism's tree, its loops closed together), at 50 reachable configurations with random task
    velocities and accelerations; each route solves its own inverse kinematics."""
    pkm, route = machine(name), general(name)
    x, q, v, a = configurations(name)
    states = pkm.inverse_kinematics(x)
    eq = pkm.equations(states, v)
    M, bias, J = route.equations(q, v)
    assert np.abs(eq.mass - M).max() <= 1e-10 * max(1, np.abs(M).max())
    assert np.abs(eq.bias - bias).max() <= 1e-10 * max(1, np.abs(bias).max())
    assert np.abs(eq.ik_jacobian - J).max() <= 1e-10 * max(1, np.abs(J).max())
    u = pkm.inverse_dynamics(states, v, a).efforts
    assert np.abs(u - route.inverse_dynamics(q, v, a)).max() <= 1e-10 * max(1, np.abs(u).max())
    assert np.all(np.linalg.eigvalsh(eq.mass) > 0)  # T10


@pytest.mark.slow  # a second machine built per case
@pytest.mark.parametrize("name", MACHINES)
def test_placed_limbs_equal_limbs_modelled_directly(name):
    """T16: a limb built once and placed by mount frames gives what each limb's own model gives."""
    x, _, v, a = configurations(name, 10)
    placed, direct = machine(name), machine(name, reuse=False)
    assert not any(limb.representative for limb in placed.limbs[1:]) and all(l.representative for l in direct.limbs)
    states = placed.inverse_kinematics(x)
    u = placed.inverse_dynamics(states, v, a).efforts
    np.testing.assert_allclose(direct.inverse_dynamics(direct.inverse_kinematics(x), v, a).efforts, u, atol=1e-11)


@pytest.mark.slow  # a second machine built
def test_cut_joint_and_independent_coordinates_do_not_matter():
    """T15b, c: the Delta cut at joint 5 instead of 7, its limbs' loops solved for other coordinates."""
    model = samples.load("delta_3rr2rrr")
    for limb in "abc":
        model.joint(f"J7{limb}").cut, model.joint(f"J5{limb}").cut = None, True
    other = ParallelMachine(model)
    assert [j.name for j in other.limbs[0].model.mech.topology.cut] == ["J5a"]
    x, _, v, a = configurations("delta_3rr2rrr", 10)
    pkm = machine("delta_3rr2rrr")
    u = pkm.inverse_dynamics(pkm.inverse_kinematics(x), v, a).efforts
    np.testing.assert_allclose(other.inverse_dynamics(other.inverse_kinematics(x), v, a).efforts, u, atol=1e-11)
    paper = delta_limb(["th4a", "th1a", "th2a", "th6a"])
    assert paper.independent != pkm.limbs[0].model.independent  # another partition of the same loop
    q = random_limb_states(paper, 5, 4)
    twist = np.zeros((5, 6))
    twist[:, 3:] = v[:5]
    np.testing.assert_allclose(
        paper.equations(q, twist, pkm.gravity)[0], pkm.limbs[0].model.equations(q, twist, pkm.gravity)[0], atol=1e-12
    )


def test_actuator_space_and_forward_dynamics_agree_with_the_task_space():
    """T15g: u from M_a ϑ̈_act + b_a equals u from the task space, M_a = J_FKᵀ M_t J_FK; T13: forward dynamics
    under the inverse-dynamics efforts returns the accelerations asked for."""
    pkm = machine("irsbot2")
    x, _, v, a = configurations("irsbot2", 10)
    states = pkm.inverse_kinematics(x)
    u = pkm.inverse_dynamics(states, v, a).efforts
    np.testing.assert_allclose(pkm.forward_dynamics(states, v, u), a, atol=1e-10)
    M_a, b_a = pkm.actuator_equations(states, v)
    eq = pkm.equations(states, v)
    J = eq.ik_jacobian
    drift = pkm._actuated_drift(states, v)
    qdd_act = np.einsum("nij,nj->ni", J, a) + drift  # ϑ̈_act = J_IK V̇_t + J̇_IK V_t
    np.testing.assert_allclose(np.einsum("nij,nj->ni", M_a, qdd_act) + b_a, u, atol=1e-10)
    J_fk = np.linalg.inv(J)
    np.testing.assert_allclose(M_a, np.swapaxes(J_fk, 1, 2) @ eq.mass @ J_fk, atol=1e-12)


# ---------------------------------------------------------------------------------------- T11, T12, T17, T19
@pytest.mark.slow  # eight inverse-kinematics solves
def test_energies_agree_with_the_general_mechanism_and_the_energy_identity_holds():
    """T17: ½ V_tᵀ M_t V_t is the kinetic energy of every body from the general mechanism's motion and the
    inertial parameters; W_t^grav is ∂V/∂x by central differences. T11: V_tᵀ (Ṁ_t − 2 C_t) V_t = 0."""
    name = "delta_3rr2rrr"
    pkm, route = machine(name), general(name)
    x, q, v, _ = configurations(name, 8)
    states = pkm.inverse_kinematics(x)
    geometry = Geometry(pkm.model, Float64())
    phi = np.concatenate([geometry.inertia(b) for b in pkm.model.bodies])
    qd, _, _, _ = route.motion(q, v, np.zeros_like(v))
    T_general = energy_coefficients(pkm.mech, q, qd)[0] @ phi
    eq = pkm.equations(states, v)
    np.testing.assert_allclose(0.5 * np.einsum("ni,nij,nj->n", v, eq.mass, v), T_general, rtol=1e-12)
    np.testing.assert_allclose(pkm.kinetic_energy(states, v), T_general, rtol=1e-12)
    h = 1e-6
    gravity = pkm.equations(states, np.zeros_like(v)).bias
    for j in range(3):
        step = np.zeros(3)
        step[j] = h
        up, down = (pkm.inverse_kinematics(x + s, states) for s in (step, -step))
        dV = (pkm.potential_energy(up, x + step) - pkm.potential_energy(down, x - step)) / (2 * h)
        np.testing.assert_allclose(dV, gravity[:, j], rtol=0, atol=1e-7)
    # energy identity along each state's own motion: d/dt M_t by central differences over ±h along v
    up, down = pkm.inverse_kinematics(x + h * v, states), pkm.inverse_kinematics(x - h * v, states)
    dM = (pkm.equations(up, v).mass - pkm.equations(down, v).mass) / (2 * h)
    coriolis = eq.bias - gravity  # C_t V_t
    identity = np.einsum("ni,nij,nj->n", v, dM, v) - 2 * np.einsum("ni,ni->n", v, coriolis)
    assert np.abs(identity).max() < 1e-6


@pytest.mark.slow  # 1 s: three inverse-kinematics solves along the path
def test_power_balance_and_derivatives_along_the_papers_path():
    """T12: u·ϑ̇_act = d/dt (T + V) along the test line (central differences in time); T19: each limb's ϑ̇ and
    ϑ̈ from H, F, Ḣ and L̇ are the time derivatives of its inverse kinematics by central differences."""
    pkm = machine("delta_3rr2rrr")
    t, h = np.array([0.7, 2.1, 6.3]), 1e-4
    around = [delta_trajectory(t + s * h) for s in (-1, 0, 1)]
    states = [pkm.inverse_kinematics(r) for r, _, _ in around]
    r, rd, rdd = around[1]
    dynamics = pkm.inverse_dynamics(states[1], rd, rdd)
    energy = [pkm.kinetic_energy(s, m[1]) + pkm.potential_energy(s, m[0]) for s, m in zip(states, around, strict=True)]
    power = np.einsum("ni,nij,nj->n", dynamics.efforts, dynamics.ik_jacobian, rd)
    np.testing.assert_allclose(power, (energy[2] - energy[0]) / (2 * h), rtol=0, atol=1e-6)
    for k, limb in enumerate(pkm.limbs):
        twist, accel = pkm.limb_vectors(limb, rd), pkm.limb_vectors(limb, rdd)
        qd, qdd, _, _ = limb.model.motion_from_platform(states[1][k], twist, accel)
        np.testing.assert_allclose(qd, (states[2][k] - states[0][k]) / (2 * h), rtol=0, atol=1e-7)
        rates = [
            limb.model.motion_from_platform(s[k], pkm.limb_vectors(limb, m[1]), accel)[0]
            for s, m in zip(states[::2], around[::2], strict=True)
        ]
        np.testing.assert_allclose(qdd, (rates[1] - rates[0]) / (2 * h), rtol=0, atol=1e-6)


@pytest.mark.slow  # ten inverse-kinematics solves
def test_limbs_close_their_loops_and_agree_on_the_platform():
    """T14: every limb's loops closed, and every limb puts the platform at the same pose (S_0 C_p' S_p⁻¹)."""
    pkm = machine("irsbot2")
    x, _, _, _ = configurations("irsbot2", 10)
    states = pkm.inverse_kinematics(x)
    for limb, q in zip(pkm.limbs, states, strict=True):
        assert np.abs(limb.model.mech.residual(q)).max() < 1e-12
        R, p = limb.model.platform_pose(q)
        m = limb.mount
        world_R = m.rotation @ R @ m.platform_rotation.T
        world_p = (p @ m.rotation.T + m.origin) - np.einsum("nij,j->ni", world_R, m.platform_origin)
        assert np.abs(world_R - pkm.rotation0).max() < 1e-12
        assert np.abs(world_p - pkm.positions(x)).max() < 1e-12


# ---------------------------------------------------------------------------------------- workspace, paths
@pytest.mark.slow  # a map, also run by the window's test
def test_workspace_map_is_nan_out_of_reach():
    pkm = machine("irsbot2")
    z0 = pkm.position0[2]
    found = workspace_map(pkm, {"x": (-0.3, 0.3, 4), "z": (z0 - 0.1, z0 + 1.0, 3)})
    assert found.values["mass_condition"].shape == (3, 4)
    assert found.reachable[0].all() and not found.reachable[-1].any()  # a metre up is out of reach
    assert np.all(found.values["mass_condition"][found.reachable] >= 1)
    with pytest.raises(ModelError, match="two task coordinates"):
        workspace_map(pkm, {"x": (0, 1, 3)})


@pytest.mark.parametrize("name", ["irsbot2", "delta_3rus"])
def test_each_limbs_reach_holds_every_pose_of_its_chain(name):
    """Issue 24, item 3: the ball of limb_reach holds the platform at 20 000 random poses of the limb's tree (loops
    open: the bound is the chain's), and is nearly reached (the links can almost line up)."""
    pkm = machine(name)
    for instance, (centre, radius) in zip(pkm.limbs, limb_reach(pkm), strict=True):
        q = np.random.default_rng(0).uniform(-np.pi, np.pi, (20_000, instance.model.n))
        local = np.asarray(instance.model.mech.tree.motion(q).p[instance.model.body], float)
        m = instance.mount
        world = m.origin + local @ m.rotation.T - pkm.rotation0 @ m.platform_origin
        distance = np.linalg.norm(world - centre, axis=1)
        assert distance.max() <= radius * (1 + 1e-12) and distance.max() > 0.9 * radius


def test_the_reach_box_is_the_box_of_the_limbs_discs_and_the_sized_grid_holds_the_reachable_set():
    """The box of the intersection of the limbs' discs in the x-z plane, brute force on a 1 mm lattice; the
    sized grid's edge is out of reach all round, and it holds positions the old grid (±0.8 of the platform's
    distance from the origin: x within ±0.36 m) cut off."""
    pkm = machine("irsbot2")
    box = reach_box(pkm, ["x", "z"])
    x, z = np.meshgrid(np.arange(-1.2, 1.2, 1e-3), np.arange(-1.2, 1.2, 1e-3))
    inside = np.ones(x.shape, bool)
    for centre, radius in limb_reach(pkm):
        inside &= (x - centre[0]) ** 2 + (centre[1] - pkm.position0[1]) ** 2 + (z - centre[2]) ** 2 <= radius**2
    for name, values in (("x", x), ("z", z)):
        assert box[name] == pytest.approx((values[inside].min(), values[inside].max()), abs=1e-3)
    grid = sized_grid(pkm, 13)
    found = workspace_map(pkm, grid)
    reached = found.reachable
    assert 0.2 < reached.mean() < 0.8
    assert not (reached[0].any() or reached[-1].any() or reached[:, 0].any() or reached[:, -1].any())
    assert np.abs(found.first[reached.any(axis=0)]).max() > 0.45


@pytest.mark.slow  # the command's test writes the same columns
def test_path_dynamics_columns():
    pkm = machine("irsbot2")
    result = path_dynamics(pkm, platform_path(pkm, None), samples=5)
    names = [name for name, _, _ in result.columns(pkm)]
    assert names[:3] == ["t", "x", "z"] and "u:th1a" in names and "limb2:W_z" in names
    rest = np.zeros((1, 2))  # at rest at the reference, symmetric about x = 0, both arms hold alike
    held = pkm.inverse_dynamics(pkm.start, rest, rest).efforts[0]
    assert held[0] == pytest.approx(held[1], abs=1e-12) and held[0] < 0


# ---------------------------------------------------------------------------------------- file format and messages
def _delta_text() -> str:
    return samples.path("delta_3rr2rrr").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "change, field",
    [
        ('"body": "p"', "platform.body"),
        ('"task": ["x", "y", "z"]', "platform.task"),
        ('"x": [\n', "platform.paths 'paper_test'.coordinates"),
    ],
)
def test_a_bad_platform_section_names_its_field(change, field):
    bad = {
        '"body": "p"': '"body": "nowhere"',
        '"task": ["x", "y", "z"]': '"task": ["x", "w"]',
        '"x": [\n': '"q": [\n',
    }[change]
    text = _delta_text()
    assert change in text
    with pytest.raises(ModelError) as caught:
        loads(text.replace(change, bad, 1))
    assert caught.value.where.startswith(field)


def test_old_files_without_a_platform_still_load_and_the_platform_is_detected():
    model = loads(_delta_text())
    model.platform = None
    assert '"platform":' not in dumps(model)
    assert structure(loads(dumps(model))).platform == "p" and structure(model).found == "detected"


def test_a_machine_whose_platform_turns_is_refused_with_the_reason():
    report = pkm_report(samples.load("four_bar"))
    assert report["platform"] == "2" and "only translate" in report["error"]
    assert pkm_report(samples.load("puma560")) is None
    with pytest.raises(ModelError, match="no parallel machine"):
        ParallelMachine(samples.load("puma560"))


def test_check_and_pkm_commands(tmp_path, capsys):
    assert main(["check", str(samples.path("delta_3rus")), "--json"]) == 0  # too large for the engine: fast
    report = json.loads(capsys.readouterr().out)["pkm"]
    assert report["limb_count"] == 3 and report["hybrid"] and report["task_coordinates"] == ["x", "y", "z"]
    out = tmp_path / "efforts.csv"
    assert (
        main(
            ["pkm", str(samples.path("irsbot2")), "--trajectory", "pick_and_place", "--samples", "3", "--out", str(out)]
        )
        == 0
    )
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("t [s],x [m],z [m]") and len(lines) == 4  # the header, then the rows
    sidecar = json.loads((tmp_path / f"{out.name}.json").read_text(encoding="utf-8"))
    assert sidecar["provenance"]["options"]["trajectory"] == "pick_and_place"
    assert sidecar["columns"] == lines[0].split(",")
    text = capsys.readouterr().out
    assert "u:th1a" in text and "limb 2" in text
    grid = tmp_path / "map.csv"
    assert (
        main(
            ["pkm", str(samples.path("irsbot2")), "--map", "x=-0.2:0.2:3", "--map", "z=-0.5:-0.4:2", "--out", str(grid)]
        )
        == 0
    )
    rows = grid.read_text(encoding="utf-8").splitlines()
    assert (
        rows[0]
        == "x [m],z [m],mass_condition [1],dynamic_manipulability [(m/s²)/(N m) per axis],jacobian_condition [1]"
    )
    assert len(rows) == 1 + 6 and all(float(v) >= 1 for v in (r.split(",")[2] for r in rows[1:]))
    with pytest.raises(SystemExit):
        main(["pkm", str(samples.path("irsbot2")), "--map", "x=0.2:-0.2:3"])
    # an axis without a range spans every reachable position (x within ±0.79 m at this height)
    sized = ["--map", "x=3", "--map", "z=-0.5:-0.4:2", "--out", str(grid)]
    assert main(["pkm", str(samples.path("irsbot2")), *sized]) == 0
    rows = [r for r in grid.read_text(encoding="utf-8").splitlines()[1:] if not r.startswith("#")]
    x = sorted({float(r.split(",")[0]) for r in rows})
    assert len(x) == 3 and x[0] == pytest.approx(-x[2]) and 0.6 < x[2] < 1.0
    source = samples.path("irsbot2")
    assert main(["pkm", str(source), "--trajectory", "pick_and_place", "--out", str(source)]) == 2
    assert main(["pkm", str(source), "--trajectory", "nope"]) == 2
    assert "pick_and_place" in capsys.readouterr().err


def test_task_space_and_workspace_jobs():
    """The window's jobs: the task-space entries of the Equations of motion table (the Delta's M_t, W_t^grav
    and J_IK of digest sec. 7.3, zeros left out) and a workspace map's data."""
    from mbstudio.jobs.tasks import task_space_eom, workspace

    def quiet(*_):
        return False

    text = dumps(samples.load("delta_3rr2rrr"))
    entries = {(e["group"], e["entry"]): float(e["text"]) for e in task_space_eom(text, {}, quiet, quiet).data.entries}
    assert entries[("task_mass", "[x,x]")] == pytest.approx(2.412964, abs=5e-7)
    assert entries[("task_gravity", "[z]")] == pytest.approx(40.34711, abs=5e-6)
    assert entries[("ik_jacobian", "[th1b,y]")] == pytest.approx(1.210992, abs=5e-7)
    assert ("task_mass", "[x,y]") not in entries and ("task_gravity", "[x]") not in entries
    assert entries[("actuator_mass", "[th1a,th1a]")] > 0
    found = workspace(dumps(samples.load("irsbot2")), {"points": 3, "ranges": {"x": [-0.1, 0.1]}}, quiet, quiet)
    assert found.data.axes == ["x", "z"] and list(found.data.first) == [-0.1, 0.0, 0.1]


@pytest.mark.slow  # a 0.2 s integration, the limbs' inverse kinematics at every right-hand side
def test_forward_dynamics_conserves_energy_under_constant_efforts():
    """T13: IRSBot-2 let go from rest under constant actuator torques 5 % above those holding it: integrating
    V̇_t = M_t⁻¹ (J_IKᵀ u − C_t V_t − W_t^grav) keeps T + V − u·ϑ_act constant (the torques' work)."""
    from scipy.integrate import solve_ivp

    pkm = machine("irsbot2")
    dim = len(pkm.axes)
    rest = np.zeros((1, dim))
    u = 1.05 * pkm.inverse_dynamics(pkm.start, rest, rest).efforts
    guess = [pkm.start]

    def states_at(x):
        guess[0] = pkm.inverse_kinematics(x[None], guess[0], substeps=1)
        return guess[0]

    def rhs(_, y):
        return np.concatenate([y[dim:], pkm.forward_dynamics(states_at(y[:dim]), y[None, dim:], u)[0]])

    def energy(y):
        states = states_at(y[:dim])
        angles = np.array([s[0, limb.model.actuated[0]] for limb, s in zip(pkm.limbs, states, strict=True)])
        v = y[None, dim:]
        return pkm.kinetic_energy(states, v)[0] + pkm.potential_energy(states, y[None, :dim])[0] - u[0] @ angles

    start = np.concatenate([pkm.position0[pkm.axes], np.zeros(dim)])
    run = solve_ivp(rhs, (0.0, 0.2), start, rtol=1e-10, atol=1e-12, t_eval=[0.0, 0.1, 0.2])
    assert run.success and np.abs(run.y[:dim, -1] - start[:dim]).max() > 1e-3  # it moved
    energies = [energy(run.y[:, k]) for k in range(3)]
    assert np.ptp(energies) < 1e-7 * max(1.0, abs(energies[0]))
