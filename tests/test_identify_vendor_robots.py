"""Identification of vendors' URDF robots from logs made by Pinocchio alone (tests/pinocchio_logs.py): Pinocchio's own
URDF parser and RNEA, a 5-harmonic Fourier motion of 0.1 Hz for 12 s at 1 kHz, amplitudes up to 0.25 rad, positions
quantised to 2⁻¹⁸ rad, 0.5 % noise on the torques, no velocities. Our model comes from the same file through our
importer; the identification sees only the log.

Checks: the rank equals the numerical rank of Pinocchio's joint-torque regressor along the logged motion (rows
whitened by the log's noise, double precision); the validation error on a second log is within twice the noise floor;
most base parameters lie within 3σ of the truth (the document's inertias mapped by the base parameters found); the
noise floor estimated from the log matches the noise the generator added. The xarm7's URDF declares joint friction
(damping 2-10 N·m·s/rad, friction 1 N·m) that a log of Pinocchio's RNEA does not contain: identification must say so
and name the elements, and identify the robot once the friction is identified instead of taken as known."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mbstudio.identification import adequacy, filtering
from mbstudio.identification.identify import identify
from mbstudio.identification.logs import parse_log
from mbstudio.io.example_robots import robots_folder
from mbstudio.kinematics import Mechanism

from .pinocchio_logs import FourierSpec, pinocchio_log, pinocchio_model, regressor_rows, urdf_path

pytest.importorskip("pinocchio")
pytest.importorskip("yourdfpy")
pytestmark = pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed (the test extra)")

PANDA_MIMIC = {"panda_finger_joint2": "panda_finger_joint1"}


@functools.cache
def our_model(name: str):
    from mbstudio.io.urdf_import import import_urdf

    return import_urdf(urdf_path(name), floating_base=False).model


def logs(name: str, **options):
    """A training and a validation log (other noise, other motion), parsed for our model, with the generator's."""
    mech = Mechanism(our_model(name))
    made = [pinocchio_log(name, seed, motion, **options) for seed, motion in ((0, 100), (1, 200))]
    return [parse_log(m.text(), mech, f"{name}-{k}.csv") for k, m in enumerate(made)], made


def pinocchio_observation_rank(name: str, made, mimic: dict[str, str] | None = None) -> int:
    """The rank of Pinocchio's regressor along the logged motion (every 50th sample), each joint's rows divided by
    its noise, by the double-precision rule 10³·max(m, p)·eps·σ₁; a mimic follower's rows are added to its leader's
    (one drive moves both)."""
    pin_model = pinocchio_model(name)
    step = slice(None, None, 50)
    Y = regressor_rows(pin_model, made.q[step], made.qd[step], made.qdd[step]).reshape(
        -1, pin_model.nv, 10 * pin_model.nv
    )
    for follower, leader in (mimic or {}).items():
        f, lead = made.names.index(follower), made.names.index(leader)
        Y[:, lead] += Y[:, f]
    Y = Y[:, [made.names.index(n) for n in made.driven]] / made.noise_std[None, :, None]
    A = Y.reshape(-1, Y.shape[-1])
    sigma = np.linalg.svd(A, compute_uv=False)
    return int((sigma > 1e3 * max(A.shape) * np.finfo(float).eps * sigma[0]).sum())


def truth(name: str, result) -> np.ndarray:
    """The document's inertias mapped by the base parameters the run identified."""
    mech = Mechanism(our_model(name))
    phi = np.concatenate([np.asarray(mech.tree.geometry.inertia(b), float) for b in mech.model.bodies])
    return np.asarray(result.base.base_map(), float) @ phi


def check(result, name: str, made, mimic=None, friction_truth: float | None = None) -> None:
    assert result.rank == pinocchio_observation_rank(name, made[0], mimic)
    v = result.validation
    assert v.overall <= 2 * v.overall_floor, (v.overall, v.overall_floor)
    z = (result.values - truth(name, result)) / result.std
    assert np.mean(np.abs(z) < 3) >= 0.9, z
    if friction_truth is not None:
        f = np.array([row["value"] for row in result.friction])
        std = np.array([row["std"] for row in result.friction])
        assert np.mean(np.abs((f - friction_truth) / std) < 3) >= 0.9
    assert not result.adequacy["unexplained"]
    # the noise floor estimated from the log against the one the generator's noise leaves through the filter
    floor = made[0].noise_std * adequacy.filter_gain(result.settings)
    kept = filtering.parallel_decimate(made[0].torques - made[0].exact_torques, result.settings)
    assert np.allclose(result.observations.noise_floor, floor, rtol=0.25)
    assert np.allclose(np.sqrt((kept**2).mean(axis=0)), floor, rtol=0.35)


@pytest.mark.slow
def test_xarm7_known_friction_the_log_lacks_is_named_and_identified_friction_fits():
    (log, check_log), made = logs("xarm7")
    model = our_model("xarm7")
    taken = identify(model, log, check_log)
    assert set(taken.adequacy["unexplained"]) == set(log.coordinates)
    known = taken.adequacy["known_forces"]
    assert sorted(known["contradicted"]) == sorted(f"{c}_friction" for c in log.coordinates)
    assert all(abs(x["share"]) < 3 * x["std"] for x in known["elements"].values())  # the log holds none of it
    assert known["explained"]
    identified = identify(model, log, check_log, friction=("viscous", "coulomb"))
    assert identified.notes and "not taken as known" in identified.notes[-1]
    check(identified, "xarm7", made, friction_truth=0.0)


@pytest.mark.slow
def test_xarm7_log_of_the_robot_the_urdf_describes():
    (log, check_log), made = logs("xarm7", joint_friction=True)
    check(identify(our_model("xarm7"), log, check_log), "xarm7", made)


@pytest.mark.slow
def test_kinova_rank_decided_on_the_log_where_variable_precision_has_no_ridge():
    (log, check_log), made = logs("kinova")
    result = identify(our_model("kinova"), log, check_log)
    levels = result.precision_levels
    assert levels["decided_by"] == "data" and not levels["variable_precision"]["ridge"]["evident"]
    assert levels["variable_precision"]["gap_at_data_rank"] > 5  # the rounding's directions, far below
    assert len(levels["grouped"]) == levels["variable_precision"]["rank"] - result.rank
    check(result, "kinova", made)


@pytest.mark.slow
def test_panda_log_with_the_mimic_finger_and_motor_currents():
    (log, check_log), made = logs("panda", joint_friction=True, mimic=PANDA_MIMIC)
    made[0].extra = {"current_panda_joint1": made[0].torques[:, 0] / 0.3}
    log = parse_log(made[0].text(), Mechanism(our_model("panda")), "panda-0.csv")
    assert "'panda_finger_joint2' is a dependent coordinate, set aside" in log.notes[0] and "agrees" in log.notes[0]
    assert "current_panda_joint1 ignored" in log.notes[1]
    result = identify(our_model("panda"), log, check_log)
    check(result, "panda", made, PANDA_MIMIC)
    assert result.notes[:2] == log.notes


def test_a_dependent_column_that_breaks_the_coupling_is_named():
    made = pinocchio_log("panda", spec=FourierSpec(duration=0.5), mimic=PANDA_MIMIC)
    k = made.names.index("panda_finger_joint2")
    made.positions[:, k] += 0.002  # 2 mm off its leader
    log = parse_log(made.text(), Mechanism(our_model("panda")), "panda.csv")
    assert "DISAGREES" in log.notes[0] and "0.002" in log.notes[0]


def test_noise_floor_from_the_log_alone():
    rng = np.random.default_rng(3)
    t = np.arange(20000) / 1000.0
    signal = np.column_stack([np.sin(2 * np.pi * 0.3 * t) * 5, np.sin(2 * np.pi * 0.7 * t + 1)])
    signal += np.sign(np.cos(2 * np.pi * 0.3 * t))[:, None]  # Coulomb friction: a step at every reversal
    std = np.array([0.01, 0.002])
    s = filtering.choose_settings(signal, 1000.0)
    found = adequacy.noise_std(signal + std * rng.normal(size=signal.shape))
    assert np.allclose(found, std, rtol=0.1)
    white = rng.normal(size=(200000, 1))
    assert abs(np.std(filtering.lowpass(white, s)[s.edge : -s.edge]) / adequacy.filter_gain(s) - 1) < 0.05


def test_snap_angles_makes_the_vendors_rounded_right_angles_exact():
    from mbstudio.io import urdf_angles
    from mbstudio.io.urdf_import import import_urdf

    kept, snapped = (import_urdf(urdf_path("xarm7"), floating_base=False, snap_angles=s) for s in (False, True))
    note = next(n for n in kept.notes if "multiple of π/4" in n)
    assert "left unchanged" in note and "'joint2' (roll -1.5708 ≈ -π/2)" in note and "'joint1'" not in note
    frames = {j.name: j.parent_frame for j in snapped.model.joints}
    assert frames["joint2"].z == [0.0, 1.0, 0.0]  # the axis of a joint turned by -π/2 about x, exactly
    assert kept.model.joint("joint2").parent_frame.z[2] == pytest.approx(-3.6732e-6, rel=1e-4)  # cos 1.5708
    R = urdf_angles.rotation(0.3, 1.5707963, -0.2)  # gimbal lock: only roll - yaw is defined
    assert np.allclose(urdf_angles.rotation(*urdf_angles.rpy(R)), R, atol=1e-6)
    assert [a.multiple for a in urdf_angles.rounded_angles(R)] == [2]


def test_positions_outside_the_models_limits_are_named():
    centre = (0.0, 0.0, 0.0, -0.19198, 0.0, 0.0, 0.0)  # joint4 about the start of its travel
    made = pinocchio_log("xarm7", spec=FourierSpec(duration=2.0, centre=centre))
    log = parse_log(made.text(), Mechanism(our_model("xarm7")), "xarm7.csv")
    named = [n.split("'")[1] for n in log.notes if "leaves the model's limits" in n]
    pin_model = pinocchio_model("xarm7")
    out = (made.positions < pin_model.lowerPositionLimit) | (made.positions > pin_model.upperPositionLimit)
    assert named == [n for n, o in zip(made.names, out.any(axis=0), strict=True) if o] and "joint4" in named


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "ur3",
        "ur10",
        # z1: the log's Coulomb friction (1-2 N·m) steps at each reversal, the imported model smooths it (tanh of
        # q̇/1e-3 rad/s): validation 1.7× the floor, z RMS 1.7; with the covariance of the kept noise's exact
        # correlation 4 of 43 base parameters fall 3.6-4.2σ off (90.7 %, the next at 2.9σ)
        "z1",
        "talos_left_arm",
        "so100",
        "so101",
        "finger_edu",
    ],
)
def test_other_arms_of_example_robot_data(name):
    """The robots the URDFs describe, their joint friction included in the log (Pinocchio's damping and friction):
    the model's known friction explains it."""
    (log, check_log), made = logs(name, joint_friction=True)
    check(identify(our_model(name), log, check_log), name, made)
