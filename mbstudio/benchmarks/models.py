"""Models and states the benchmarks share: the PUMA's random states, Pinocchio's model of ours, the sprung SLA and
the driven Delta."""

from __future__ import annotations

import math

import numpy as np

from .. import samples
from ..kinematics import Mechanism


def pinocchio_model(mech: Mechanism):
    """The Pinocchio model built from our document (the one the tests compare against)."""
    from ..io.pinocchio import build

    return build(mech)[0]


def puma_states(states: int):
    mech = Mechanism(samples.load("puma560"))
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-np.pi, np.pi, (states, mech.n)) for _ in range(3))
    return mech, q, qd, qdd


def sprung_sla():
    """The SLA sample on a suspension spring along its damper (30 kN/m, free at the design length), so that
    it oscillates about the design position instead of falling out of its assembly range."""
    from ..model.document import SpringDamper

    model = samples.load("sla_suspension")
    model.forces = [SpringDamper("coilover", "6", "C", "7", "ball", stiffness=30_000.0, length=0.5)]
    return model


DELTA_HOLD, DELTA_SWING = -3.362259, 0.5  # N m: the digest's static torque at the reference configuration, a swing


def driven_delta():
    """The Delta sample with its actuators holding it against gravity (DELTA_HOLD) plus a 1 Hz oscillation of
    DELTA_SWING on each arm, phased by limb."""
    from ..model.document import Actuator

    model = samples.load("delta_3rr2rrr")
    model.forces = [
        Actuator(f"motor_{limb}", f"th1{limb}", formula=f"{DELTA_HOLD} + {DELTA_SWING}*sin(2*pi*t + {k}*2*pi/3)")
        for k, limb in enumerate("abc")
    ]
    return model


def delta_drive() -> dict:
    """The driven Delta's actuator torques by coordinate, as the plain functions of time a Pinocchio user would
    write (the reference's; ours evaluates the document's formulas, compiled)."""
    return {
        f"th1{limb}": lambda t, k=k: DELTA_HOLD + DELTA_SWING * math.sin(2 * math.pi * t + k * 2 * math.pi / 3)
        for k, limb in enumerate("abc")
    }


def chain_document(links: int) -> dict:
    """A planar chain of `links` rods on revolute joints about z, as the dict of a `.mbs` file."""
    rod = {"m": 1.0, "mx": 0.5, "my": 0.0, "mz": 0.0, "Ixx": 0.01, "Ixy": 0.0, "Ixz": 0.0, "Iyy": 0.34}
    frame = {"origin": [0, 0, 0], "z": [0, 0, 1], "x": [1, 0, 0]}
    return {
        "format": "mbstudio",
        "schema_version": 1,
        "name": f"chain of {links}",
        "bodies": [
            {"label": str(i), "inertia": {**rod, "Iyz": 0.0, "Izz": 0.34}, "points": {"tip": [1.0, 0.0, 0.0]}}
            for i in range(1, links + 1)
        ],
        "joints": [
            {
                "name": f"j{i}",
                "type": "revolute",
                "parent": str(i - 1),
                "child": str(i),
                "parent_frame": frame if i == 1 else {**frame, "origin": "tip"},
                "child_frame": frame,
                "coordinates": [{"name": f"q{i}", "initial": 0.0}],
            }
            for i in range(1, links + 1)
        ],
    }


def spatial_chain(links: int):
    """A hanging spatial chain of `links` bodies under gravity: revolute joints whose axes turn by a third of a
    right angle about the chain from one joint to the next (so that no plane holds the motion), rods of 0.3 m
    with their centres of mass off the axis and full inertia tensors, started 0.3 rad from hanging straight."""
    import json

    from ..model import loads

    bodies, joints = [], []
    for i in range(1, links + 1):
        angle = (i - 1) * np.pi / 6
        axis = [0.0, float(np.cos(angle)), float(np.sin(angle))]
        # a 1 kg rod along −z (moments 0.0075, 0.0075, 0.0005 at its centre) moved to (0.02, 0.01, −0.15)
        inertia = {"m": 1.0, "mx": 0.02, "my": 0.01, "mz": -0.15, "Ixx": 0.0301, "Ixy": -0.0002, "Ixz": 0.003}
        bodies.append(
            {
                "label": str(i),
                "inertia": {**inertia, "Iyy": 0.0304, "Iyz": 0.0015, "Izz": 0.001},
                "points": {"end": [0.0, 0.0, -0.3]},
                "frames": {"joint": {"origin": [0.0, 0.0, 0.0], "z": axis, "x": [1.0, 0.0, 0.0]}},
            }
        )
        joints.append(
            {
                "name": f"j{i}",
                "type": "revolute",
                "parent": str(i - 1),
                "child": str(i),
                "parent_frame": {"origin": [0, 0, 0] if i == 1 else "end", "z": axis, "x": [1.0, 0.0, 0.0]},
                "child_frame": "joint",
                "coordinates": [{"name": f"q{i}", "initial": 0.3 if i == 1 else 0.0}],
            }
        )
    document = {"format": "mbstudio", "schema_version": 1, "name": f"spatial chain of {links}", "bodies": bodies}
    return loads(json.dumps({**document, "joints": joints}))


def talos(floating: bool = False):
    """Talos' full body (example-robot-data), imported from its URDF by us, its base welded to the ground (or
    free: `floating`); and the URDF's path (Pinocchio reads the same file itself)."""
    from ..io.example_robots import robots_folder
    from ..io.urdf_import import import_urdf

    folder = robots_folder()
    if folder is None:
        raise FileNotFoundError("example-robot-data is not installed: pip install example-robot-data")
    path = folder / "talos_data" / "robots" / "talos_full_v2.urdf"
    return import_urdf(path, floating_base=floating, ground=False).model, path  # the dynamics alone
