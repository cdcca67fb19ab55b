"""MuJoCo's dense mass matrix on every MuJoCo the bounds allow: mj_fullM reads mjData itself in later releases and
the sparse qM handed to it before (MuJoCo 3.8 and older)."""

from __future__ import annotations

import numpy as np


def mujoco_mass_matrix(m, d) -> np.ndarray:
    """The joint-space mass matrix (nv, nv) of MuJoCo model `m` at data `d` (after mj_forward)."""
    import mujoco  # only the MuJoCo tests call this, and they skip when MuJoCo is absent

    full = np.zeros((m.nv, m.nv))
    try:
        mujoco.mj_fullM(m, d, full)
    except TypeError:  # the older signature: (model, destination, sparse qM)
        mujoco.mj_fullM(m, full, d.qM)
    return full
