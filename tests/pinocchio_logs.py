"""Logs of URDF robots made by Pinocchio alone, as a robot controller would record them: nothing of MB Studio is
used to make them. Pinocchio reads the URDF with its own parser (`pin.buildModelFromUrdf`, fixed base), a
Fourier motion of every joint is sampled, positions are quantised like an encoder, and the joint torques come from
Pinocchio's RNEA with Gaussian noise; no velocities are written, as on a real machine.

    log = pinocchio_log("xarm7", seed=0)
    log.write("run1.csv"); log.text(), log.torques, log.noise_std

The truth for a regression is Pinocchio's own: its joint-torque regressor (`computeJointTorqueRegressor`) along
the same motion, and its dynamic parameters (`inertias[i].toDynamicParameters()`), which `pinocchio_least_squares`
uses to fit the log as a user of Pinocchio would, and `pinocchio_numerical_rank` to give the rank the data can
resolve."""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# a URDF of example-robot-data -> its file in the package (the robots of the identification checks)
URDF_FILES = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "talos_left_arm": "talos_data/robots/talos_left_arm.urdf",
    "ur3": "ur_description/urdf/ur3_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "so100": "so_arm_description/urdf/so100.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
    "finger_edu": "finger_edu_description/robots/finger_edu.urdf",
}
QUANTUM = 2.0**-18  # rad: the encoder's step


def urdf_path(name: str) -> Path:
    from mbstudio.io.example_robots import robots_folder

    folder = robots_folder()
    if folder is None:
        raise FileNotFoundError("example-robot-data is not installed: pip install example-robot-data")
    path = folder / URDF_FILES[name]
    if not path.exists():  # a robot added in a later release than the lowest the test extra allows (xarm7: not 4.2)
        import importlib.metadata

        import pytest

        version = importlib.metadata.version("example-robot-data")
        pytest.skip(f"example-robot-data {version} has no {URDF_FILES[name]}")
    return path


@functools.cache
def pinocchio_model(name: str):
    """Pinocchio's model of the robot, read by Pinocchio's own URDF parser with the root link fixed."""
    import pinocchio as pin

    return pin.buildModelFromUrdf(str(urdf_path(name)))


@dataclass(frozen=True)
class FourierSpec:
    """q_j(t) = centre_j + Σ_l a_jl sin(2π l f t + ψ_jl), l = 1..harmonics: random phases and amplitudes
    (seeded), the largest per joint `amplitude` rad; `centre` None: mid-way between the joint's limits when they
    are finite and closer than π, else 0."""

    harmonics: int = 5
    base_hz: float = 0.1
    duration: float = 12.0
    rate: float = 1000.0
    amplitude: float = 0.25
    centre: tuple[float, ...] | None = None


@dataclass
class PinocchioLog:
    names: list[str]  # the logged joints, in Pinocchio's order
    t: np.ndarray
    q: np.ndarray  # exact positions (N, n)
    qd: np.ndarray
    qdd: np.ndarray
    positions: np.ndarray  # quantised, as logged
    torques: np.ndarray  # logged (noisy)
    exact_torques: np.ndarray  # (N, driven)
    noise_std: np.ndarray  # per driven joint
    driven: list[str]  # the joints whose torque is logged (a mimic follower's goes to its leader's drive)
    extra: dict[str, np.ndarray] = field(default_factory=dict)  # further columns a robot writes

    def text(self) -> str:
        columns = {"t": self.t} | dict(zip(self.names, self.positions.T, strict=True))
        columns |= {f"tau_{n}": x for n, x in zip(self.driven, self.torques.T, strict=True)}
        columns |= self.extra
        out = io.StringIO()
        out.write(",".join(columns) + "\n")
        np.savetxt(out, np.column_stack(list(columns.values())), delimiter=",", fmt="%.17g")
        return out.getvalue()

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.text(), encoding="utf-8")
        return path


LIMITS = ("lowerPositionLimit", "upperPositionLimit")


def first_q(pin_model) -> list[int]:
    """Per joint, the index of its first configuration coordinate (a continuous joint has two: cos θ, sin θ)."""
    return [pin_model.joints[i].idx_q for i in range(1, pin_model.njoints)]


def configuration(pin_model, angles: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration vector for joint angles: θ for a revolute joint with limits, (cos θ, sin θ) for a
    continuous one (Pinocchio's JointModelRUB)."""
    out = np.empty(pin_model.nq)
    for i, angle in enumerate(angles, start=1):
        joint = pin_model.joints[i]
        if joint.nq == 2:
            out[joint.idx_q : joint.idx_q + 2] = np.cos(angle), np.sin(angle)
        else:
            out[joint.idx_q] = angle
    return out


def joint_names(pin_model) -> list[str]:
    """The names of Pinocchio's one-coordinate joints in its order (the universe excluded)."""
    return [str(n) for n in list(pin_model.names)[1:]]


def fourier_motion(pin_model, spec: FourierSpec, seed: int):
    """Positions, velocities and accelerations (exact) of the Fourier motion of every joint."""
    rng = np.random.default_rng(seed)
    n = pin_model.nv
    t = np.arange(round(spec.duration * spec.rate)) / spec.rate
    if spec.centre is not None:
        centre = np.asarray(spec.centre, float)
    else:
        low, high = (np.asarray(getattr(pin_model, side))[first_q(pin_model)] for side in LIMITS)
        bounded = np.isfinite(low) & np.isfinite(high) & (high - low < 2 * np.pi)
        centre = np.where(bounded, (low + high) / 2, 0.0)
    low, high = (np.asarray(getattr(pin_model, side))[first_q(pin_model)] for side in LIMITS)
    room = np.where(np.isfinite(high - low), 0.4 * (high - low), np.inf)  # a finger's travel is 4 cm
    weight = rng.uniform(0.2, 1.0, (n, spec.harmonics))
    weight *= np.minimum(spec.amplitude, room)[:, None] / weight.max(axis=1, keepdims=True)
    weight /= np.arange(1, spec.harmonics + 1)  # keep velocities and accelerations moderate
    phase = rng.uniform(0, 2 * np.pi, (n, spec.harmonics))
    omega = 2 * np.pi * spec.base_hz * np.arange(1, spec.harmonics + 1)
    angle = omega[None, None] * t[:, None, None] + phase[None]
    q = centre + (weight * np.sin(angle)).sum(axis=2)
    qd = (weight * omega * np.cos(angle)).sum(axis=2)
    qdd = -(weight * omega**2 * np.sin(angle)).sum(axis=2)
    return t, q, qd, qdd


def pinocchio_log(
    name: str,
    seed: int = 0,
    motion_seed: int = 100,
    noise: float = 0.005,
    spec: FourierSpec = FourierSpec(),
    joint_friction: bool = False,
    mimic: dict[str, str] | None = None,
) -> PinocchioLog:
    """A log of robot `name` along a Fourier motion (`motion_seed`), torques from Pinocchio's RNEA with
    Gaussian noise of `noise` times each joint's RMS torque (`seed`), positions quantised to QUANTUM.

    `joint_friction`: add the URDF's `<dynamics damping friction>` (Pinocchio's `damping` and `friction`), which
    RNEA leaves out: the torque the robot the URDF describes needs. `mimic`: follower -> leader joints driven by one
    motor (panda's fingers): the follower moves as its leader, its position is logged, and its torque is the
    leader's drive's (one column, the two joints' torques summed)."""
    import pinocchio as pin

    pin_model = pinocchio_model(name)
    names = joint_names(pin_model)
    data = pin_model.createData()
    t, q, qd, qdd = fourier_motion(pin_model, spec, motion_seed)
    pairs = [(names.index(f), names.index(leader)) for f, leader in (mimic or {}).items()]
    for follower, leader in pairs:
        q[:, follower], qd[:, follower], qdd[:, follower] = q[:, leader], qd[:, leader], qdd[:, leader]
    states = zip(q, qd, qdd, strict=True)
    exact = np.array([pin.rnea(pin_model, data, configuration(pin_model, a), b, c) for a, b, c in states])
    if joint_friction:
        exact += np.asarray(pin_model.damping) * qd + np.asarray(pin_model.friction) * np.sign(qd)
    for follower, leader in pairs:
        exact[:, leader] += exact[:, follower]
    driven = [k for k in range(len(names)) if k not in {f for f, _ in pairs}]
    exact = exact[:, driven]
    std = noise * np.sqrt((exact**2).mean(axis=0))
    noisy = exact + std * np.random.default_rng(seed).normal(size=exact.shape)
    positions = np.round(q / QUANTUM) * QUANTUM
    return PinocchioLog(names, t, q, qd, qdd, positions, noisy, exact, std, [names[k] for k in driven])


def pinocchio_parameters(pin_model) -> np.ndarray:
    """Pinocchio's dynamic parameters of every body, stacked (10 per joint, its own order and convention)."""
    return np.concatenate([pin_model.inertias[i].toDynamicParameters() for i in range(1, pin_model.njoints)])


def regressor_rows(pin_model, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """Pinocchio's joint-torque regressor at each state, stacked: (N·n, 10·n)."""
    import pinocchio as pin

    data = pin_model.createData()
    return np.vstack(
        [
            pin.computeJointTorqueRegressor(pin_model, data, configuration(pin_model, a), b, c).copy()
            for a, b, c in zip(q, qd, qdd, strict=True)
        ]
    )


def numerical_rank(matrix: np.ndarray, relative: float) -> int:
    """The number of singular values of `matrix`, columns scaled to unit length, above `relative` times the
    largest."""
    norms = np.linalg.norm(matrix, axis=0)
    scaled = matrix[:, norms > 0] / norms[norms > 0]
    sigma = np.linalg.svd(scaled, compute_uv=False)
    return int((sigma > relative * sigma[0]).sum())
