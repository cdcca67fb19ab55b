"""Measured logs made by routes other than the identification's own: Pinocchio's RNEA on a URDF robot read by
Pinocchio's own parser, and our closed-loop inverse dynamics (RNEA projected, not the regressor) or simulation.

Positions are quantised like an encoder's counts; the forces get Gaussian noise of a given standard deviation.
The truth for the base parameters is the document's inertial values mapped by the base parameters found."""

from __future__ import annotations

import copy
import functools
import io
import math
from dataclasses import dataclass

import numpy as np

ENCODER_BITS = 18  # counts per turn 2^18: a step of 2.4e-5 rad


@dataclass
class Motion:
    t: np.ndarray
    q: np.ndarray  # (N, n) positions of the logged coordinates
    qd: np.ndarray
    qdd: np.ndarray


def fourier_motion(
    count: int, rate: float, centre: np.ndarray, amplitude: np.ndarray, base_hz: float, seed: int = 0
) -> Motion:
    """A sum of the first three harmonics of base_hz per coordinate, random phases and weights (seeded), each
    coordinate's peak excursion `amplitude` about `centre`: positions, velocities and accelerations exactly."""
    rng = np.random.default_rng(seed)
    t = np.arange(count) / rate
    n = len(centre)
    harmonics = np.arange(1, 4)
    weight = rng.uniform(0.3, 1.0, (n, 3)) / harmonics
    weight *= (amplitude / weight.sum(axis=1))[:, None]
    phase = rng.uniform(0, 2 * np.pi, (n, 3))
    omega = 2 * np.pi * base_hz * harmonics * (1 + 0.07 * np.arange(n))[:, None]  # no two coordinates alike
    angle = omega[None] * t[:, None, None] + phase[None]
    q = centre + (weight * np.sin(angle)).sum(axis=2)
    qd = (weight * omega * np.cos(angle)).sum(axis=2)
    qdd = -(weight * omega**2 * np.sin(angle)).sum(axis=2)
    return Motion(t, q, qd, qdd)


def quantised(q: np.ndarray, bits: int = ENCODER_BITS) -> np.ndarray:
    step = 2 * np.pi / 2**bits
    return np.round(q / step) * step


def log_text(
    t: np.ndarray,
    names: list[str],
    positions: np.ndarray,
    actuated: list[str],
    forces: np.ndarray,
    units: dict[str, tuple[str, float]] | None = None,
) -> str:
    """CSV text in the log format; `units` column -> (unit, factor from SI) for headers with units."""
    units = units or {}
    columns = {"t": t} | dict(zip(names, positions.T, strict=True))
    columns |= {f"tau_{n}": f for n, f in zip(actuated, forces.T, strict=True)}
    header = [f"{c} [{units[c][0]}]" if c in units else c for c in columns]
    data = np.column_stack([v * (units[c][1] if c in units else 1.0) for c, v in columns.items()])
    out = io.StringIO()
    out.write(",".join(header) + "\n")
    np.savetxt(out, data, delimiter=",", fmt="%.17g")
    return out.getvalue()


# ---------------------------------------------------------------------------------------- Pinocchio
@functools.cache
def pinocchio_robot(name: str):
    """(Pinocchio model from the URDF by Pinocchio's parser, our model from the same file by our importer). Our
    import couples a mimic joint to its leader (the panda's second finger), which Pinocchio's plain reading leaves
    free: the coupling is dropped so that both describe the same machine."""
    import pinocchio as pin

    from mbstudio.io.example_robots import robot_path
    from mbstudio.io.urdf_import import import_urdf

    path = robot_path(name)
    model = import_urdf(path, floating_base=False).model
    model.couplings = []
    return pin.buildModelFromUrdf(str(path)), model


def pinocchio_torques(pin_model, names: list[str], motion: Motion) -> np.ndarray:
    """Pinocchio's RNEA along the motion, the coordinates `names` mapped onto its joints by name, plus the torque
    the URDF's joint damping takes (`<dynamics damping>`, which RNEA leaves out and our import keeps as a known
    joint friction): what the actuators of the robot the URDF describes must give."""
    import pinocchio as pin

    order = [pin_model.getJointId(n) - 1 for n in names]  # revolute joints: one coordinate each, in tree order
    data = pin_model.createData()
    out = np.empty_like(motion.q)
    full = np.zeros((3, pin_model.nq))
    for k in range(len(motion.t)):
        for row, x in zip(full, (motion.q[k], motion.qd[k], motion.qdd[k]), strict=True):
            row[order] = x
        out[k] = pin.rnea(pin_model, data, *full)[order]
    return out + np.asarray(pin_model.damping)[order] * motion.qd


def pinocchio_rank(pin_model, samples: int = 200, seed: int = 1) -> int:
    """The rank of Pinocchio's joint-torque regressor stacked over random states (its own SVD tolerance); a
    continuous joint's configuration is (cos θ, sin θ), not two free numbers."""
    import pinocchio as pin

    from .pinocchio_logs import configuration

    rng = np.random.default_rng(seed)
    data = pin_model.createData()
    rows = [
        pin.computeJointTorqueRegressor(
            pin_model,
            data,
            configuration(pin_model, rng.uniform(-np.pi, np.pi, pin_model.nv)),
            *(rng.uniform(-np.pi, np.pi, pin_model.nv) for _ in range(2)),
        )
        for _ in range(samples)
    ]
    return int(np.linalg.matrix_rank(np.vstack(rows)))


# ---------------------------------------------------------------------------------------- closed loops
SLA_DRIVES = {  # actuator torques on the lower arm and the wheel: three harmonics each, open loop
    "theta1": "300*sin(2.1*t) + 200*sin(5.3*t + 0.4) + 120*sin(9.7*t + 1.1)",
    "theta2": "3*sin(1.3*t) + 2*sin(4.1*t + 0.7) + 1.5*sin(8.9*t + 2.0)",
}


@functools.cache
def sla_simulation(t_end: float, rate: float):
    """The SLA suspension driven by actuator torques on theta1 and theta2 (the document's coil-over acting),
    simulated by CVODES on the compiled closed-loop equations: (model with the actuators, times, independent
    positions (N, 2), actuator torques (N, 2))."""
    from mbstudio import samples
    from mbstudio.kinematics import Mechanism
    from mbstudio.model.document import Actuator
    from mbstudio.simulation.run import simulate

    model = samples.load("sla_suspension")
    model.forces += [Actuator(f"drive_{name}", name, formula=f) for name, f in SLA_DRIVES.items()]
    t = np.arange(round(t_end * rate) + 1) / rate
    run = simulate(model, t_end, "CVODES", rtol=1e-10, atol=1e-12, t_eval=t)
    columns = {name: values for name, _, values in run.columns()}
    names = Mechanism(model).independent
    positions = np.column_stack([columns[n] for n in names])
    torques = np.column_stack([columns[f"actuator:drive_{n}"] for n in names])
    return model, t, positions, torques


CRANK_DRIVES = {  # N·m on the crank and N·m·s/rad of viscous friction in its bearing, known to the model
    "steady": ("5 + sin(2.1*t) + 0.6*sin(5.3*t + 0.4) + 0.4*sin(9.7*t + 1.1)", 0.3),  # four-bar: 1.5-4 rev/s
    "free": ("2 + 0.8*sin(2.1*t) + 0.5*sin(5.3*t + 0.4) + 0.3*sin(9.7*t + 1.1)", 0.05),  # four-bar: 3-12 rev/s
}


@functools.cache
def crank_simulation(name: str, t_end: float, rate: float, drive: str = "steady"):
    """The sample `name` (four_bar, slider_crank) driven by a torque on its crank theta1 against a known viscous
    bearing (CRANK_DRIVES), turning continuously, simulated by CVODES on the compiled closed-loop equations:
    (model with the actuator and the bearing, times, crank angle (N,) unwrapped as a drive's encoder counts it,
    its rate (N,), torque (N,))."""
    from mbstudio import samples
    from mbstudio.model.document import Actuator, JointFriction
    from mbstudio.simulation.run import simulate

    model = samples.load(name)
    torque, bearing = CRANK_DRIVES[drive]
    model.forces += [Actuator("drive", "theta1", formula=torque), JointFriction("bearing", "theta1", viscous=bearing)]
    t = np.arange(round(t_end * rate) + 1) / rate
    run = simulate(model, t_end, "CVODES", rtol=1e-10, atol=1e-12, t_eval=t)
    columns = {name: values for name, _, values in run.columns()}
    return model, t, columns["theta1"], columns["d_theta1"], columns["actuator:drive"]


@dataclass(frozen=True)
class Servo:
    """A drive holding one coordinate on a path: torque hold + k (q* − q) + c (q̇* − q̇), in the document as a joint
    spring-damper whose rest is the path (−k (q − q*) − c q̇) and an actuator giving hold + c q̇*."""

    stiffness: float
    damping: float
    hold: float = 0.0


def _harmonics(terms, derivative: bool) -> str:
    """Σ A sin(ω t + φ), or its derivative Σ A ω cos(ω t + φ), as a formula of the document's language."""
    if derivative:
        return " + ".join(f"{a * w!r}*cos({w!r}*t + {p!r})" for a, w, p in terms) or "0"
    return " + ".join(f"{a!r}*sin({w!r}*t + {p!r})" for a, w, p in terms) or "0"


def tracked_simulation(model, terms: list[list[tuple[float, float, float]]], servos: list[Servo], t_end, rate):
    """A copy of `model` driven along q*_j = q_j(0) + Σ A sin(ω t + φ) over terms[j] by a Servo per independent
    coordinate, simulated by CVODES on the compiled closed-loop equations from the path's velocities: (times,
    independent positions (N, n), the drives' torques (N, n), what a drive logs: its commanded torque, from the
    simulated states; the largest distance from the path)."""
    from mbstudio.identification.observation import FourierPath
    from mbstudio.kinematics import Mechanism
    from mbstudio.model.document import Actuator, JointSpringDamper
    from mbstudio.simulation.run import simulate

    model = copy.deepcopy(model)
    mech = Mechanism(model)
    names, start = mech.independent, mech.tree.initial_coordinates()[list(mech.partition.independent)]
    for name, q0, own, servo in zip(names, start, terms, servos, strict=True):
        rest = f"{float(q0)!r} + {_harmonics(own, False)}"
        rate_term = f"{servo.hold!r} + {servo.damping!r}*({_harmonics(own, True)})"
        model.forces += [
            JointSpringDamper(f"servo_{name}", name, stiffness=servo.stiffness, damping=servo.damping, rest=rest),
            Actuator(f"hold_{name}", name, formula=rate_term),
        ]
    path = FourierPath(Mechanism(model), terms)
    t = np.arange(round(t_end * rate) + 1) / rate
    run = simulate(model, t_end, "CVODES", rtol=1e-10, atol=1e-12, t_eval=t, velocities=path([0.0], 1)[0])
    columns = {name: values for name, _, values in run.columns()}
    q, qd = (np.column_stack([columns[prefix + n] for n in names]) for prefix in ("", "d_"))
    k, c, hold = (np.array([getattr(s, f) for s in servos]) for f in ("stiffness", "damping", "hold"))
    wanted = path(t, 0)
    torques = hold + k * (wanted - q) + c * (path(t, 1) - qd)
    return t, q, torques, float(np.abs(q - wanted).max())


SLA_SERVOS = [Servo(1e5, 2 * 0.7 * math.sqrt(1e5 * 3.0)), Servo(1e4, 2 * 0.7 * math.sqrt(1e4 * 1.0))]  # about
# 0.7 of critical damping on the lower arm's (some 3 kg·m²) and the wheel's (1 kg·m²) inertia


@functools.cache
def sla_paper_trajectory(t_end: float, rate: float):
    """The SLA suspension driven along the paper's exciting trajectory (the document's 'exciting', Iriarte et al.
    2017, eq. 16), continued to t_end, by servos on theta1 and theta2, the coil-over acting: (the sample as
    identified, without the servos; times, positions (N, 2), drive torques (N, 2), the largest tracking error)."""
    from mbstudio import samples
    from mbstudio.identification.pipeline import fourier_path
    from mbstudio.kinematics import Mechanism

    model = samples.load("sla_suspension")
    exciting = next(p for p in model.trajectories if p.name == "exciting")
    terms = fourier_path(Mechanism(model), exciting).terms
    terms = [[tuple(float(x) for x in term) for term in own] for own in terms]
    return model, *tracked_simulation(model, terms, SLA_SERVOS, t_end, rate)


def delta_motion(count: int, rate: float, seed: int = 0):
    """The Delta's platform on a Fourier path about its document pose and the actuator torques of Müller's (2021)
    modular inverse dynamics (limb by limb, not the identification's regressor): (times, actuated angles
    (N, 3), torques (N, 3)), in the order of the model's actuated coordinates."""
    from mbstudio import samples
    from mbstudio.dynamics.pkm import ParallelMachine

    pkm = ParallelMachine(samples.load("delta_3rr2rrr"))
    centre = pkm.position0[pkm.axes]
    motion = fourier_motion(count, rate, centre, np.array([0.08, 0.08, 0.05]), 0.3, seed=seed)
    states = pkm.inverse_kinematics(motion.q)
    named = {}
    for coordinates in pkm.document_coordinates(states):
        named |= coordinates
    angles = np.column_stack([named[n] for n in pkm.actuated])
    return motion.t, angles, pkm.inverse_dynamics(states, motion.qd, motion.qdd).efforts


DELTA_ARMS = {"th1a": (1.3, 3.1, 5.9), "th1b": (1.7, 3.7, 6.7), "th1c": (2.3, 4.3, 7.3)}  # rad/s, no two alike
DELTA_SERVO = Servo(500.0, 2 * 0.7 * math.sqrt(500.0 * 0.05), -3.362259)  # N·m/rad, 0.7 of critical damping on
# some 0.05 kg·m² per arm, holding the static torque of Müller's (2021) reference configuration


@functools.cache
def delta_simulation(t_end: float, rate: float):
    """The Delta driven by servos on its three arms along three harmonics each (0.2, 0.12 and 0.08 rad, a swing of
    about ±0.35 rad about the reference configuration), simulated: (the sample, times, arm angles (N, 3),
    drive torques (N, 3), the largest tracking error)."""
    from mbstudio import samples
    from mbstudio.kinematics import Mechanism

    model = samples.load("delta_3rr2rrr")
    amplitudes = (0.2, 0.12, 0.08)
    terms = [
        [(a, w, 0.0) for a, w in zip(amplitudes, DELTA_ARMS[n], strict=True)] for n in Mechanism(model).independent
    ]
    return model, *tracked_simulation(model, terms, [DELTA_SERVO] * 3, t_end, rate)
