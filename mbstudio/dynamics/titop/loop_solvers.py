"""Exact solves of the forward diagram's algebraic loop (Alazard et al. 2024): the loop is affine in the
accelerations u = (each floating base's xdot'_P, every q̈), so linear algebra closes it in one go.

- `condensed` (option C, the default): each block hands its parent its articulated inertia and bias at its
  port, W_{A/.,P} = −(M_P xdot'_P + β_P), so the loop disappears; O(n), and exact for massless intermediate
  frames (a spherical joint as three revolute blocks). It is the articulated-body algorithm in TITOP form.
- `faithful` (option A): the diagram as drawn. Each joint block returns its own q̈ from eq. (63)/(92), with
  J_r the inertia of its body alone, each floating base its xdot'_P from eq. (29), for guessed accelerations
  upstream: one pass is u ↦ F(u), affine, and (1 − ∂F/∂u) u = F(0) is solved from n + 1 passes.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ...model.errors import ModelError
from .blocks import GROUND, Block, Kinematics, velocity_wrench
from .motion import dot, mm, mv, tmv, transpose
from .states import BlockAccelerations


class BlockModel(Protocol):
    """What the solves read of the block model (interconnection.BlockModel, which calls them: typed here by what
    they use, so the two modules do not import each other)."""

    backend: object
    blocks: tuple[Block, ...]
    children: list[list[int]]
    channels: list[int]
    channel_of: dict[int, int]
    floating: list[int]

    def propagate(self, kin: list[Kinematics], acc: BlockAccelerations) -> list[np.ndarray]: ...

    def split(self, u: np.ndarray) -> BlockAccelerations: ...


def condensed(
    model: BlockModel, kin: list[Kinematics], efforts: np.ndarray, wrenches: list[np.ndarray]
) -> BlockAccelerations:
    """Accelerations by condensation: a pass in from the leaves, then out from the roots."""
    b = model.backend
    M = [np.broadcast_to(blk.body.D, kin[k].kappa.shape + (6,)).copy() for k, blk in enumerate(model.blocks)]
    beta = [velocity_wrench(blk.body, kin[k]) - wrenches[k] for k, blk in enumerate(model.blocks)]
    U, d = {}, {}
    for k in reversed(range(len(model.blocks))):  # M̄ = D + Σ Xᵀ M_A X, β̄ = −DG + 𝒞Dx' − W_ext + Σ Xᵀ β_A
        joint, X = model.blocks[k].joint, kin[k].X
        if joint.kind == "floating":
            continue
        M_A, beta_A = M[k], beta[k]
        if joint.dof == 1:
            c = model.channel_of[k]
            U[k] = mv(M[k], joint.e)
            d[k] = dot(joint.e, U[k])
            M_A = M[k] - U[k][..., :, None] * U[k][..., None, :] / d[k][..., None, None]
            beta_A = beta[k] + U[k] * ((efforts[:, c] - dot(joint.e, beta[k])) / d[k])[..., None]
        beta_A = beta_A + mv(M_A, kin[k].kappa)
        if joint.parent != GROUND:
            M[joint.parent] = M[joint.parent] + mm(transpose(X), mm(M_A, X))
            beta[joint.parent] = beta[joint.parent] + tmv(X, beta_A)
    acc, qdd = [None] * len(model.blocks), b.zeros((len(kin[0].kappa), len(model.channels)))
    for k, blk in enumerate(model.blocks):  # out: each base's 6x6 solve, then q̈ = (τ − eᵀ(M̄ a0 + β̄))/d
        joint = blk.joint
        if joint.kind == "floating":
            acc[k] = b.solve(M[k], -beta[k])
            continue
        a0 = kin[k].kappa if joint.parent == GROUND else mv(kin[k].X, acc[joint.parent]) + kin[k].kappa
        if joint.dof == 1:
            c = model.channel_of[k]
            qdd[:, c] = (efforts[:, c] - dot(joint.e, mv(M[k], a0) + beta[k])) / d[k]
            a0 = a0 + joint.e * qdd[:, c, None]
        acc[k] = a0
    return BlockAccelerations(qdd, tuple(acc[k] for k in model.floating))


def faithful(
    model: BlockModel, kin: list[Kinematics], efforts: np.ndarray, wrenches: list[np.ndarray]
) -> BlockAccelerations:
    """Accelerations as the fixed point u = F(u) of one pass of the diagram, solved exactly."""
    b = model.backend
    _check_inertias(model)
    N = len(kin[0].kappa)
    size = 6 * len(model.floating) + len(model.channels)
    f0 = _one_pass(model, kin, efforts, wrenches, b.zeros((N, size)))
    J = b.zeros((N, size, size))
    for j in range(size):
        unit = b.zeros((N, size))
        unit[:, j] = b.scalar(1)
        J[:, :, j] = _one_pass(model, kin, efforts, wrenches, unit) - f0
    for j in range(size):
        J[:, j, j] = J[:, j, j] - b.scalar(1)
    return model.split(b.solve(-J, f0))


def _one_pass(model: BlockModel, kin: list[Kinematics], efforts, wrenches, u: np.ndarray) -> np.ndarray:
    """F(u): the motions out from guessed accelerations u, then each block's own answer on the way in."""
    b = model.backend
    acc = model.propagate(kin, model.split(u))
    new = b.zeros(u.shape)
    carried = [None] * len(model.blocks)  # the wrench each block's subtree needs at its P: −W_{A/B,P}
    nb = 6 * len(model.floating)
    for k in reversed(range(len(model.blocks))):
        blk = model.blocks[k]
        joint, D = blk.joint, blk.body.D
        bias = velocity_wrench(blk.body, kin[k]) - wrenches[k]
        for c in model.children[k]:  # eq. (31): τ_CPᵀ W_{./A,C}, through the children's frames
            bias = bias + tmv(kin[c].X, carried[c])
        if joint.kind == "floating":  # eq. (29) solved for xdot'_P
            i = model.floating.index(k)
            new[:, 6 * i : 6 * i + 6] = b.solve(np.broadcast_to(D, bias.shape + (6,)), -bias)
            continue
        a0 = kin[k].kappa if joint.parent == GROUND else mv(kin[k].X, acc[joint.parent]) + kin[k].kappa
        bias = bias + mv(D, a0)
        if joint.dof == 1:  # eq. (63) / (92): q̈ = (C_m − eᵀ b) / J_r, J_r = eᵀ D e of this body alone
            c = model.channel_of[k]
            e = joint.e
            new[:, nb + c] = (efforts[:, c] - dot(e, bias)) / dot(e, mv(D, e))
            bias = bias + mv(D, e) * new[:, nb + c, None]
        carried[k] = bias
    return new


def _check_inertias(model: BlockModel) -> None:
    """The faithful solve divides by each joint body's own J_r (eq. 47) and inverts each base's D_P."""
    for blk in model.blocks:
        joint = blk.joint
        inertia = dot(joint.e, mv(blk.body.D, joint.e)) if joint.dof == 1 else 1
        if inertia == 0:
            raise ModelError(
                f"joint '{joint.name}'",
                "the faithful solve divides by the apparent inertia of its body alone (eq. 47), which is zero "
                f"(block '{blk.body.name}' has no mass or no inertia about the joint)",
                0.0,
                "solver='condensed', which condenses the bodies beyond it first",
            )
