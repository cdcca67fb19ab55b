"""Identification of URDF robots from logs made by Pinocchio: its own URDF parser and RNEA give the torques, our
importer and identification see only the log. Positions quantised like 18-bit encoders, torques with Gaussian
noise of 2 % of each joint's RMS, viscous and Coulomb friction added on every joint.

Checks: the rank equals that of Pinocchio's joint-torque regressor; over the noise seeds at least 95 % of
the base parameters (and friction coefficients) lie within 3σ of the truth; the validation error on a second log is
close to the noise left after filtering; the physically consistent estimate is feasible (the truth is) and near the
least-squares one. The default run does the UR5 with two seeds; the 20-seed studies of the UR5 and the Panda are
marked slow."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mbstudio.identification.identify import identify
from mbstudio.identification.logs import parse_log
from mbstudio.identification.pipeline import base_parameters
from mbstudio.io.example_robots import robots_folder
from mbstudio.kinematics import Mechanism

from .identify_logs import fourier_motion, log_text, pinocchio_rank, pinocchio_robot, pinocchio_torques, quantised

pytest.importorskip("pinocchio")
pytest.importorskip("yourdfpy")
pytestmark = pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed (the test extra)")

NOISE = 0.02
RATE, COUNT = 200.0, 2000
VISCOUS, COULOMB = 0.5, 0.3


@functools.cache
def robot(name: str):
    """Pinocchio's model, ours, our base parameters (30 digits) and their true values."""
    pin_model, model = pinocchio_robot(name)
    base = base_parameters(model, "vp", [30]).vp.final
    mech = Mechanism(model)
    phi = np.concatenate([np.asarray(mech.tree.geometry.inertia(b), float) for b in model.bodies])
    return pin_model, model, base, np.asarray(base.base_map(), float) @ phi


@functools.cache
def motion_and_torques(name: str, motion_seed: int):
    """A Fourier motion inside the joint limits and Pinocchio's torques for it, friction added."""
    pin_model, model, _, _ = robot(name)
    names = Mechanism(model).independent
    low, high = (
        np.array([getattr(pin_model, side)[pin_model.getJointId(n) - 1] for n in names])
        for side in ("lowerPositionLimit", "upperPositionLimit")
    )
    centre, amplitude = (low + high) / 2, np.minimum(0.4 * (high - low), 1.2)
    motion = fourier_motion(COUNT, RATE, centre, amplitude, 0.2, seed=motion_seed)
    tau = pinocchio_torques(pin_model, names, motion) + VISCOUS * motion.qd + COULOMB * np.sign(motion.qd)
    return motion, tau


def noisy_log(name: str, seed: int, motion_seed: int = 100):
    _, model, _, _ = robot(name)
    mech = Mechanism(model)
    motion, tau = motion_and_torques(name, motion_seed)
    noise = NOISE * np.sqrt((tau**2).mean(axis=0)) * np.random.default_rng(seed).normal(size=tau.shape)
    text = log_text(motion.t, mech.independent, quantised(motion.q), mech.independent, tau + noise)
    return parse_log(text, mech, f"{name}-{seed}.csv"), noise


def filtered_noise_level(result, noise: np.ndarray, tau: np.ndarray) -> float:
    """The relative RMS of the noise left after the parallel filter, at the kept samples: what no estimate can
    predict."""
    from mbstudio.identification.filtering import parallel_decimate

    left, torque = parallel_decimate(noise, result.settings), parallel_decimate(tau, result.settings)
    return float(np.linalg.norm(left) / np.linalg.norm(torque))


def true_coefficient(name: str, row: dict) -> float:
    """The friction coefficient the log holds at a coordinate: the identified friction takes the place of the
    document's joint friction, so the viscous one is VISCOUS plus the URDF's joint damping (Pinocchio's reading)."""
    if row["kind"] == "coulomb":
        return COULOMB
    pin_model = robot(name)[0]
    return VISCOUS + float(pin_model.damping[pin_model.getJointId(row["coordinate"]) - 1])


def study(name: str, seeds: range, physical_seeds: int = 1) -> dict:
    """Identify from one log per noise seed, each validated on a second motion's log."""
    _, model, base, truth = robot(name)
    check, check_noise = noisy_log(name, 999, motion_seed=200)
    z, ratios, physical = [], [], []
    for seed in seeds:
        log, _ = noisy_log(name, seed)
        result = identify(
            model, log, check, friction=("viscous", "coulomb"), base=base, physical=seed < seeds[0] + physical_seeds
        )
        friction = np.array([f["value"] for f in result.friction])
        friction_std = np.array([f["std"] for f in result.friction])
        true_friction = np.array([true_coefficient(name, f) for f in result.friction])
        z.append(np.concatenate([(result.values - truth) / result.std, (friction - true_friction) / friction_std]))
        _, tau = motion_and_torques(name, 200)
        ratios.append(result.validation.overall / filtered_noise_level(result, check_noise, tau))
        if result.physical is not None:
            physical.append((result, result.physical))
    return {"z": np.array(z), "ratios": np.array(ratios), "physical": physical, "result": result}


def check_study(name: str, found: dict) -> None:
    pin_model, _, base, truth = robot(name)
    assert base.rank == pinocchio_rank(pin_model)
    within = np.mean(np.abs(found["z"]) < 3)
    assert within >= 0.95, f"{100 * within:.1f} % within 3σ"
    assert np.all((found["ratios"] > 0.8) & (found["ratios"] < 2.0)), found["ratios"]
    for result, physical in found["physical"]:
        assert physical["status"] == "optimal" and physical["consistent"]
        assert physical["distance_sigma"] < 3  # the truth is consistent: consistency costs little
        values = np.array(physical["base_values"])
        assert np.mean(np.abs(values - truth) < 3 * result.std) >= 0.95
        assert all(b["mass"] >= 0 for b in physical["bodies"])
        assert all(v >= 0 for v in physical["friction"].values())


def test_ur5_from_pinocchio_logs():
    found = study("ur5", range(2))
    check_study("ur5", found)
    result = found["result"]
    assert result.rank == 36 and not result.held
    assert result.settings.cutoff_hz < 10 and result.estimate.samples > 48  # 36 base + 12 friction unknowns


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ur5", "panda"])
def test_twenty_noise_seeds(name):
    check_study(name, study(name, range(20), physical_seeds=3))
