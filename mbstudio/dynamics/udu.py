"""Shah et al. (2018) (Shah, Saha, Dutt 2018): the module-level block decomposition M = Ū D̄ Ūᵀ of the mass matrix, its
recursive inverse and the module-level forward dynamics.

A module is a maximal serial chain of nodes (tree coordinates, see `spatial_tree`): a node starts a module when
it hangs from the ground or from a node with other than one child, so child modules always hang from the last
node of their parent module (Shah et al. 2018, App. A). Their twists are taken at each link origin; ours are all at the
world origin, where its link- and module-twist propagation matrices A and Ā become identities. Its module
quantities then reduce to a few small arrays per module i (nⁱ coordinates):

  S_i (6 x nⁱ)   the nodes' spatial axes, N̄_i with A = 1;
  P_i (6 x nⁱ)   the block sum of Ψ̄_i = M̂̄_i N̄_i: column a is (inertia of the module from node a to its tip,
                 the tip carrying its child modules' articulated inertias) times s_a;
  Î_i (nⁱ x nⁱ)  N̄_iᵀ Ψ̄_i, the articulated-module inertia, block i of D̄;
  W_i = P_i Î_i⁻¹, so that Ū_{ij} = S_iᵀ W_j for every ancestor module i of j (Shah et al. 2018), and a module hands
  its parent the articulated inertia Ā_{iβ}ᵀ Φ̄_i M̂̄_i Ā_{iβ} = (module composite inertia) − W_i P_iᵀ.

Ū and D̄ are given in module order (`Modules.order`: parents before children, each module contiguous), where
Ū is block unit-upper-triangular: M[order][:, order] = Ū D̄ Ūᵀ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinematics.mechanism import Mechanism
from .inverse_dynamics import bias_forces
from .spatial_tree import axes, node_inertias, nodes, samples_first


@dataclass(frozen=True)
class Modules:
    """The kinematic modules: `members[i]` are module i's coordinates from its ground side to its tip,
    `parent[i]` the module it hangs from (-1: the ground); modules are numbered parents first."""

    members: tuple[tuple[int, ...], ...]
    parent: tuple[int, ...]

    @property
    def order(self) -> list[int]:
        return [k for m in self.members for k in m]

    @property
    def offsets(self) -> list[int]:
        return [int(x) for x in np.cumsum([0] + [len(m) for m in self.members])]

    def ancestors(self, i: int) -> list[int]:
        """Modules from i's parent to the root."""
        out = []
        while self.parent[i] >= 0:
            i = self.parent[i]
            out.append(i)
        return out


@dataclass
class ModuleUDU:
    """Ū, D̄ (N, n, n) in module order, and the per-module arrays S_i, P_i, W_i, Î_i they are made of."""

    modules: Modules
    U: np.ndarray
    D: np.ndarray
    S: list[np.ndarray]  # (N, 6, nⁱ)
    P: list[np.ndarray]  # (N, 6, nⁱ)
    W: list[np.ndarray]  # (N, 6, nⁱ)
    Ihat: list[np.ndarray]  # (N, nⁱ, nⁱ)
    backend: object


def find_modules(mech: Mechanism) -> Modules:
    """Maximal chains: a node joins its parent's module when it is that node's only child (Shah et al. 2018, App. A)."""
    tn = nodes(mech.tree)
    members: list[list[int]] = []
    parent: list[int] = []
    module_of: dict[int, int] = {}
    for k in tn.order:
        p = tn.parent[k]
        if p >= 0 and len(tn.children(p)) == 1:
            module_of[k] = module_of[p]
            members[module_of[k]].append(k)
        else:
            module_of[k] = len(members)
            members.append([k])
            parent.append(-1 if p < 0 else module_of[p])
    return Modules(tuple(tuple(m) for m in members), tuple(parent))


def udu(mech: Mechanism, q) -> ModuleUDU:
    """The block factors of M(q) for q (N, n) or (n,), by the backward recursion over modules (Shah et al. 2018)."""
    b, tree = mech.backend, mech.tree
    with b.context():
        q = mech.as_batch(q)
        N = q.shape[0]
        st = tree.motion(q)
        S_all, tn, mods = samples_first(axes(tree, st)), nodes(tree), find_modules(mech)  # (N, n, 6)
        inertia = node_inertias(mech, st, tn)
        s = len(mods.members)
        tip = [b.zeros((N, 6, 6)) for _ in range(s)]  # child modules' articulated inertias at each tip
        S, P, W, Ihat = [None] * s, [None] * s, [None] * s, [None] * s
        for i in reversed(range(s)):
            S[i] = np.swapaxes(S_all[:, list(mods.members[i])], 1, 2)
            P[i], composite = _module_inertia(mods.members[i], S[i], inertia, tip[i], b)
            Ihat[i] = _articulated_module_inertia(S[i], P[i], b)
            W[i] = np.swapaxes(b.solve(Ihat[i], np.swapaxes(P[i], 1, 2)), 1, 2)
            if mods.parent[i] >= 0:
                tip[mods.parent[i]] = tip[mods.parent[i]] + composite - W[i] @ np.swapaxes(P[i], 1, 2)
        U, D = _assemble(mods, S, W, Ihat, N, b)
        return ModuleUDU(mods, U, D, S, P, W, Ihat, b)


def _module_inertia(members, S: np.ndarray, inertia, tip: np.ndarray, b):
    """P (N, 6, nⁱ) and the module's composite inertia (N, 6, 6), adding node inertias from the tip inwards."""
    composite = tip
    P = b.zeros(S.shape)
    for a in reversed(range(len(members))):
        node = inertia[members[a]]
        if node is not None:
            composite = composite + samples_first(node.matrix(b))
        P[:, :, a] = (composite * S[:, None, :, a]).sum(axis=-1)
    return P, composite


def _articulated_module_inertia(S: np.ndarray, P: np.ndarray, b) -> np.ndarray:
    """Î[a, c] = s_aᵀ P[:, c] for a ≤ c: the inertia beyond the later node c, moved along s_c and felt along
    s_a; mirrored below the diagonal."""
    G = np.swapaxes(S, 1, 2) @ P
    n = S.shape[-1]
    out = b.zeros(G.shape)
    for a in range(n):
        for c in range(a, n):
            out[:, a, c] = out[:, c, a] = G[:, a, c]
    return out


def _assemble(mods: Modules, S, W, Ihat, N: int, b) -> tuple[np.ndarray, np.ndarray]:
    off = mods.offsets
    n = off[-1]
    U, D = b.zeros((N, n, n)), b.zeros((N, n, n))
    for k in range(n):
        U[:, k, k] = b.scalar(1)
    for j in range(len(mods.members)):
        cols = slice(off[j], off[j + 1])
        D[:, cols, cols] = Ihat[j]
        for i in mods.ancestors(j):
            U[:, off[i] : off[i + 1], cols] = np.swapaxes(S[i], 1, 2) @ W[j]
    return U, D


def unit_upper_inverse(dec: ModuleUDU) -> np.ndarray:
    """Ū⁻¹ (N, n, n) by Shah et al.'s recursion (A.16-A.18): (Ū⁻¹)_{ij} = −S_iᵀ Z with Z = W_j carried up the
    path from j's parent to i through the articulated transfers T_β = 1 − W_β S_βᵀ of the modules between."""
    mods, b = dec.modules, dec.backend
    off = mods.offsets
    N, n = dec.U.shape[:2]
    with b.context():
        Uinv = b.zeros((N, n, n))
        for k in range(n):
            Uinv[:, k, k] = b.scalar(1)
        for j in range(len(mods.members)):
            Z = dec.W[j]
            for i in mods.ancestors(j):
                St = np.swapaxes(dec.S[i], 1, 2)
                Uinv[:, off[i] : off[i + 1], off[j] : off[j + 1]] = -(St @ Z)
                Z = Z - dec.W[i] @ (St @ Z)
        return Uinv


def inverse_diagonal(dec: ModuleUDU) -> np.ndarray:
    """D̄⁻¹ (N, n, n), block by block."""
    b, off = dec.backend, dec.modules.offsets
    N, n = dec.D.shape[:2]
    with b.context():
        out = b.zeros((N, n, n))
        for i, block in enumerate(dec.Ihat):
            size = block.shape[-1]
            eye = b.zeros((N, size, size))
            for a in range(size):
                eye[:, a, a] = b.scalar(1)
            out[:, off[i] : off[i + 1], off[i] : off[i + 1]] = b.solve(block, eye)
        return out


def inverse_mass_matrix(dec: ModuleUDU) -> np.ndarray:
    """M⁻¹ = Ū⁻ᵀ D̄⁻¹ Ū⁻¹ (N, n, n) in module order (the order Shah et al.'s A.22 prints)."""
    with dec.backend.context():
        Uinv = unit_upper_inverse(dec)
        return np.swapaxes(Uinv, 1, 2) @ inverse_diagonal(dec) @ Uinv


def module_forward_dynamics(mech: Mechanism, q, qd, tau) -> np.ndarray:
    """q̈ (N, n), tree coordinate order, by Shah et al.'s module-level recursion (their Table 6) without forming M:
    φ = τ − h; inwards φ̃_i = Î_i⁻¹(φ_i − S_iᵀ η_i) with η_β += P_i φ̃_i + η_i (back-substitution Ū φ̂ = φ);
    outwards q̈_i = φ̃_i − W_iᵀ μ_i with μ_i = S_β q̈_β + μ_β (forward substitution Ūᵀ q̈ = D̄⁻¹ φ̂)."""
    b = mech.backend
    with b.context():
        dec = udu(mech, q)
        phi = mech.as_batch(tau) - bias_forces(mech, q, qd)
        mods = dec.modules
        N, s = phi.shape[0], len(mods.members)
        eta, mu, phit = [b.zeros((N, 6)) for _ in range(s)], [b.zeros((N, 6)) for _ in range(s)], [None] * s
        for i in reversed(range(s)):
            cols = list(mods.members[i])
            phit[i] = b.solve(dec.Ihat[i], phi[:, cols] - _transpose_apply(dec.S[i], eta[i]))
            if mods.parent[i] >= 0:
                eta[mods.parent[i]] = eta[mods.parent[i]] + (dec.P[i] @ phit[i][:, :, None])[:, :, 0] + eta[i]
        qdd = b.zeros(phi.shape)
        for i in range(s):
            beta = mods.parent[i]
            if beta >= 0:
                mu[i] = (dec.S[beta] @ qdd[:, list(mods.members[beta]), None])[:, :, 0] + mu[beta]
            qdd[:, list(mods.members[i])] = phit[i] - _transpose_apply(dec.W[i], mu[i])
        return qdd


def _transpose_apply(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Aᵀ v for A (N, 6, m) and v (N, 6)."""
    return (A * v[:, :, None]).sum(axis=1)
