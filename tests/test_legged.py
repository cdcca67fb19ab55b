"""solo12 (example-robot-data) imported with its ground, standing and trotting under joint PD control on the
compliant contacts (io/legged.py, docs/contact.md). The standing robot's contact forces are checked
against its weight from Pinocchio's reading of the same file (an independent total mass) and its penetrations
against the static penetration the stiffness gives under those forces and under an even share of the weight."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from mbstudio.io.example_robots import robot_path, robots_folder
from mbstudio.io.legged import SOLO12_STANDING, TROT_PAIRS, solo12, trot_gait
from mbstudio.model import loads
from mbstudio.simulation.run import simulate

needs_robots = pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
FEET = ("FL", "FR", "HL", "HR")


def contact_columns(result) -> dict[str, np.ndarray]:
    return {name: values for name, _, values in result.measures}


def per_foot(columns: dict, part: str) -> np.ndarray:
    """(4, K): a series of each foot's contact, in FEET's order."""
    return np.array([columns[f"{foot}_FOOT_contact_f.{part}"] for foot in FEET])


@needs_robots
@pytest.mark.slow
def test_solo12_stands_on_its_feet_carrying_its_weight_at_the_static_penetration():
    """After a 2-s settle under PD hold at the nominal pose: the feet's vertical forces sum to m g to 1e-4 (m
    from Pinocchio's total mass of the URDF), each penetration is (f_n / k)^(1/n) of its own load to 1e-4 (the
    damping part gone), and their mean is the static value (m g / 4k)^(1/n) of an even share to 1 %."""
    pin = pytest.importorskip("pinocchio")
    model = solo12("stand")
    result = simulate(model, 2.0, method="CVODES-BDF", samples=21, rtol=1e-8, atol=1e-10)
    columns = contact_columns(result)
    mass = pin.computeTotalMass(pin.buildModelFromUrdf(str(robot_path("solo12")), pin.JointModelFreeFlyer()))
    weight = mass * 9.81
    assert per_foot(columns, "fz")[:, -1].sum() == pytest.approx(weight, rel=1e-4)
    values = model.parameter_values()
    k, n = values["contact_k"], values["contact_n"]
    depth = per_foot(columns, "penetration")[:, -1]
    assert depth == pytest.approx((per_foot(columns, "normal_force")[:, -1] / k) ** (1 / n), rel=1e-4)
    assert depth.mean() == pytest.approx((weight / 4 / k) ** (1 / n), rel=1e-2)
    assert np.abs(result.q[-1, 6:] - list(SOLO12_STANDING.values())).max() < 0.2  # held near the pose


def test_the_trot_lifts_each_diagonal_pair_in_its_half_period():
    """The gait's rests: at a quarter period the first pair's knees are bent by the full lift (the front's
    backwards), the other pair's at the pose; at three quarters the other way round."""
    from mbstudio.model.validation import float_value

    rests = trot_gait(SOLO12_STANDING, frequency=2.0, lift=0.3)
    for t, lifted in ((0.125, 0), (0.375, 1)):
        for k, pair in enumerate(TROT_PAIRS):
            for leg in pair:
                knee = float_value(rests[f"{leg}_KFE"], {"t": t}, leg)
                bend = (0.3 if k == lifted else 0.0) * (-1 if leg[0] == "F" else 1)
                assert knee == pytest.approx(SOLO12_STANDING[f"{leg}_KFE"] + bend, abs=1e-12)


@needs_robots
def test_the_cli_writes_the_standing_and_trotting_solo12(tmp_path):
    out = tmp_path / "trot.mbs"
    cmd = [sys.executable, "-m", "mbstudio.cli", "legged", "--gait", "trot", "-o", str(out)]
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    model = loads(out.read_text())
    pds = [f for f in model.forces if f.type == "joint_spring_damper"]
    assert len(pds) == 12 and all("t" in str(f.rest) for f in pds if f.coordinate.endswith(("HFE", "KFE")))
    assert sum(f.type == "contact" for f in model.forces) == 4


@needs_robots
@pytest.mark.slow
@pytest.mark.parametrize("contact", ["rigid", "compliant"])
def test_the_trot_walks_forward_on_friction_inside_the_cone(contact):
    """2 s of the prescribed trot (four periods): the stance feet's backward sweep carries the base forward by
    more than 0.3 m (measured: 0.75 m rigid, 0.7 m compliant) while it keeps its height, heading and line (sideways
    and turning drift small against the distance); each foot is in the air for part of every period (the
    diagonal pairs take turns), and every foot's friction stays within μ = 1 of its normal force."""
    options = {"contact": "rigid"} if contact == "rigid" else {"method": "CVODES-BDF", "rtol": 1e-6, "atol": 1e-8}
    result = simulate(solo12("trot"), 2.0, samples=201, **options)
    base = result.q[:, :6]  # x, y, z, then the orientation's angles
    assert base[-1, 0] > 0.3
    assert abs(base[-1, 1]) < 0.2 * base[-1, 0] and np.abs(base[:, 5]).max() < 0.2
    assert base[:, 2].min() > 0.15
    columns = contact_columns(result)
    normal, friction = per_foot(columns, "normal_force"), per_foot(columns, "friction_force")
    assert np.all(friction <= normal * (1 + 1e-9) + 1e-12)
    airborne = (normal[:, 20:] == 0).mean(axis=1)  # after the first half period
    assert np.all((airborne > 0.2) & (airborne < 0.8))
