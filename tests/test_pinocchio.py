"""Tree kinematics against Pinocchio: body poses and world Jacobians at random configurations."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from mbstudio import samples
from mbstudio.io.pinocchio import build
from mbstudio.kinematics import Mechanism

TREES = [n for n in samples.names() if n in ("puma560", "double_pendulum", "gripper")]


@pytest.mark.parametrize("name", TREES)
def test_forward_kinematics_and_jacobians_match_pinocchio(name):
    mech = Mechanism(samples.load(name))
    model, frames = build(mech)
    data = model.createData()
    rng = np.random.default_rng(7)
    Q = rng.uniform(-np.pi, np.pi, (20, mech.n))
    poses = mech.poses(Q)
    for label, fid in frames.items():
        J = mech.body_jacobian(Q, label)
        for s, q in enumerate(Q):
            pin.framesForwardKinematics(model, data, q)
            ref = data.oMf[fid]
            np.testing.assert_allclose(poses[label][0][s], ref.rotation, rtol=0, atol=1e-12)
            np.testing.assert_allclose(poses[label][1][s], ref.translation, rtol=0, atol=1e-12)
            ref_J = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(J[s], np.vstack([ref_J[3:], ref_J[:3]]), rtol=0, atol=1e-12)


def test_puma560_is_compared():
    assert "puma560" in TREES
