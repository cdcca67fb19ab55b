"""Rigid contact at one state: the accelerations and contact forces of a tree whose contact spheres touching
their planes neither sink in nor slide beyond Coulomb's cone (docs/contact.md).

For the contacts that touch (δ ≥ 0) at the state, with c_i the sphere's point nearest its plane, J (3m, n) the
Jacobian of those points and γ = J̇ q̇ their acceleration at q̈ = 0, the dynamics M q̈ + h = Q + Jᵀ λ give the
points' accelerations σ = G λ + g, with the Delassus matrix G = J M⁻¹ Jᵀ and the free accelerations
g = J M⁻¹ (Q − h) + γ. Each force λ_i lies in its cone K_i = {|λ_t| ≤ μ λ_n} and, where it presses (λ_n > 0)
inside the cone, holds the point (σ_i = 0); on the cone's edge the point slides against the force. This is the
nonlinear complementarity problem of Coulomb's law on the exact cone, written with De Saxcé's correction
s(σ) = μ |σ_t| n as the cone complementarity K ∋ λ ⊥ σ + s(σ) ∈ K* (Acary and Brogliato 2008), solved by the
alternating direction method of multipliers with a proximal step (Carpentier et al. 2021; Le Lidec et al. 2024):

    λ ← (G + ρ I)⁻¹ (ρ (z − u) − g − s),   z ← proj_K(λ + u),   u ← u + λ − z,   s ← μ |σ_t| n at σ = G z + g

until the iterates agree and satisfy the law to `tolerance` of the forces' scale. While every contact sticks the
solution is λ = −G⁻¹ g, the bilateral point constraints of Pinocchio's CONTACT_3D (tests/test_rigid_contact.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinematics import Mechanism
from .force_laws.contact_law import ContactLaw
from .forces import AppliedForces
from .inverse_dynamics import bias_forces
from .mass_matrix import mass_matrix

RANK = 1e-10  # G's eigenvalues below this part of its largest belong to redundant contacts' directions


@dataclass
class RigidContacts:
    """q̈ (n,), the touching contacts' names and their forces on the bodies (m, 3, world axes), the points'
    accelerations σ (m, 3), and the solver's iterations and final residual (relative to the forces' scale)."""

    qdd: np.ndarray
    names: list[str]
    forces: np.ndarray
    point_accelerations: np.ndarray
    iterations: int
    residual: float


def rigid_contact_dynamics(
    mech: Mechanism, t: float, q: np.ndarray, qd: np.ndarray, tolerance: float = 1e-12, iterations: int = 20000
) -> RigidContacts:
    """The rigid-contact accelerations of the tree `mech` at (t, q, q̇), every other force element applied as it
    is (a contact element gives its geometry and μ, not its compliant force); RuntimeError when the solver does
    not reach `tolerance` within `iterations`."""
    if mech.topology.cut:
        raise ValueError("rigid contacts are solved for trees only: this mechanism has loop-closing joints")
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    forces = AppliedForces(mech, mech.model.forces)
    contacts = [law for law in forces.laws if isinstance(law, ContactLaw)]
    others = [law for law in forces.laws if not isinstance(law, ContactLaw)]
    Q = sum((np.asarray(law.generalized(t, q[None], qd[None], forces.placed(q[None])), float)[0] for law in others),
            np.zeros(len(q)))  # fmt: skip
    M = np.asarray(mass_matrix(mech, q[None]), float)[0]
    a_free = np.linalg.solve(M, Q - np.asarray(bias_forces(mech, q[None], qd[None]), float)[0])
    touching = [(law, *_point(mech, law, q, qd)) for law in contacts]
    touching = [item for item in touching if item[1] >= 0]
    if not touching:
        return RigidContacts(a_free, [], np.zeros((0, 3)), np.zeros((0, 3)), 0, 0.0)
    J = np.concatenate([item[2] for item in touching])
    gamma = np.concatenate([item[3] for item in touching])
    normals = np.array([np.asarray(law.plane()[1], float) for law, *_ in touching])
    friction = np.array([float(law.values()["friction"]) for law, *_ in touching])
    MinvJt = np.linalg.solve(M, J.T)
    G = J @ MinvJt
    g = J @ a_free + gamma
    lam, used, residual = solve_cone_complementarity(G, g, normals, friction, tolerance, iterations)
    qdd = a_free + MinvJt @ lam
    names = [law.element.name for law, *_ in touching]
    return RigidContacts(qdd, names, lam.reshape(-1, 3), (G @ lam + g).reshape(-1, 3), used, residual)


def _point(mech: Mechanism, law: ContactLaw, q: np.ndarray, qd: np.ndarray) -> tuple:
    """Penetration δ, the Jacobian (3, n) of the sphere's point nearest the plane and that point's acceleration
    at q̈ = 0 (3,): J̇ q̇, from the body's motion (ω × (ω × r) and the bias of its origin and of α)."""
    st = mech.motion(q[None], qd[None], np.zeros((1, len(q))))
    depth, point, J = (np.asarray(x, float)[0] for x in law.place(st))
    i = mech.tree.body_index(law.element.body)
    r = point - np.asarray(st.p[i], float)[0]
    w, al, a = (np.asarray(x, float)[0] for x in (st.w[i], st.al[i], st.a[i]))
    return depth, J, a + np.cross(al, r) + np.cross(w, np.cross(w, r))


def solve_cone_complementarity(
    G: np.ndarray,
    g: np.ndarray,
    normals: np.ndarray,
    friction: np.ndarray,
    tolerance: float,
    iterations: int,
    start=None,
) -> tuple[np.ndarray, int, float]:
    """λ (3m,) with K ∋ λ ⊥ Gλ + g + s ∈ K* by proximal ADMM; the iterations used and the residual reached: the
    largest of the split's disagreement |λ − z|, the step ρ |Δz| and Coulomb's law's own residual, the natural map
    |z − proj_K(z − (σ + s) / ρ)|, each over the forces' scale |G⁻¹ g|. `start`: a guess of λ (a time step's
    previous impulses), from which the iterations begin."""
    m = len(normals)
    eigen = np.linalg.eigvalsh(G)
    kept = eigen[eigen > RANK * eigen[-1]]  # redundant contacts (four corners of a block) make G singular
    rho = float(np.sqrt(kept[0] * kept[-1]))  # the step between G's extreme nonzero curvatures
    stick = -np.linalg.lstsq(G, g, rcond=RANK)[0]  # every point held: σ = 0 (least norm among redundant ones)
    scale = max(float(np.abs(stick).max()), 1e-300)
    axes = _frames(normals)
    residual = _natural_map(stick, G, g, rho, axes, normals, friction) / scale
    if residual <= tolerance:  # the forces that hold every point lie in their cones: Coulomb's law holds
        return stick, 0, float(residual)
    step = np.linalg.inv(G + rho * np.eye(3 * m))  # symmetric positive definite, conditioned by ρ's choice
    z, u = (np.zeros(3 * m) if start is None else np.array(start, float)), np.zeros(3 * m)
    s = _de_saxce(G @ z + g, normals, friction)
    for k in range(1, iterations + 1):
        lam = step @ (rho * (z - u) - g - s)
        z_old, z = z, _project(lam + u, axes, friction)
        u += lam - z
        sigma = G @ z + g
        s = _de_saxce(sigma, normals, friction)
        law = z - _project(z - (sigma + s) / rho, axes, friction)
        residual = max(np.abs(lam - z).max(), rho * np.abs(z - z_old).max(), np.abs(law).max()) / scale
        if residual <= tolerance:
            return z, k, float(residual)
    raise RuntimeError(f"the rigid contacts' cone complementarity did not converge in {iterations} iterations "
                       f"(residual {residual:.1e} of the forces' scale)")  # fmt: skip


def _natural_map(z, G, g, rho, axes, normals, friction) -> float:
    """Coulomb's law's residual at the forces z: |z − proj_K(z − (σ + s) / ρ)| with σ = G z + g."""
    sigma = G @ z + g
    law = z - _project(z - (sigma + _de_saxce(sigma, normals, friction)) / rho, axes, friction)
    return float(np.abs(law).max())


def _frames(normals: np.ndarray) -> np.ndarray:
    """(m, 3, 3): each row of axes (t1, t2, n) with n the plane's normal."""
    helper = np.where(np.abs(normals[:, :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    t1 = np.cross(normals, helper)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return np.stack([t1, np.cross(normals, t1), normals], axis=1)


def _project(x: np.ndarray, axes: np.ndarray, friction: np.ndarray) -> np.ndarray:
    """The nearest point of each cone {|x_t| ≤ μ x_n} (Euclidean projection onto a second-order cone), the cones'
    axes (t1, t2, n) `_frames`."""
    local = np.einsum("mij,mj->mi", axes, x.reshape(-1, 3))
    tangent, normal = local[:, :2], local[:, 2]
    size = np.linalg.norm(tangent, axis=1)
    along = (friction * size + normal) / (friction * friction + 1)
    ratio = np.divide(friction * along, size, out=np.zeros_like(size), where=size > 0)
    projected = np.column_stack([tangent * ratio[:, None], along])
    inside, polar = size <= friction * normal, friction * size <= -normal
    projected[inside] = local[inside]
    projected[polar & ~inside] = 0.0
    return np.einsum("mji,mj->mi", axes, projected).ravel()


def _de_saxce(sigma: np.ndarray, normals: np.ndarray, friction: np.ndarray) -> np.ndarray:
    """s = μ |σ_t| n per contact: the shift that makes Coulomb's law a cone complementarity."""
    blocks = sigma.reshape(-1, 3)
    tangent = blocks - np.einsum("mi,mi->m", blocks, normals)[:, None] * normals
    return ((friction * np.linalg.norm(tangent, axis=1))[:, None] * normals).ravel()
