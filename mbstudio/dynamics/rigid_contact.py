"""Rigid contact at one state: the accelerations and contact forces of a tree whose contact spheres touching
their grounds (a plane, the road surface) or each other (contact pairs) neither sink in nor slide beyond Coulomb's
cone (docs/contact.md).

The unit is a contact point: a point c with a unit normal n, between two bodies (the ground a body with no motion),
given by each contact law's `placed` (force_laws/contact_law.py): the penetration δ, c, the Jacobian (3, n) of the
velocity of body 2's point at c relative to body 1's (for a ground contact, the sphere's body is body 2 and the
ground body 1: c's own Jacobian) and n, out of body 1 towards body 2. A sphere on a plane has the plane's normal; on
the road, the normal of the road's tangent plane near the sphere (road_surface.tangent_plane); a pair, the line of
the centres (the capsule's point nearest the other centre). A box or a convex mesh is one such point per vertex
(contact_shapes.py: each vertex a sphere of the contact's radius, on the plane or the road's tangent plane under it).
A force λ on body 2 at c and −λ on body 1 give Q = Jᵀ λ. For the contacts that touch (δ ≥ −TOUCHING) at the
state, J (3m, n) stacks their Jacobians and γ = J̇ q̇ their relative accelerations at q̈ = 0 (the normals' own
turning, ṅ·u, left out: it vanishes while the points stick); the dynamics M q̈ + h = Q + Jᵀ λ give the points'
accelerations σ = G λ + g, with the Delassus matrix G = J M⁻¹ Jᵀ and the free
accelerations g = J M⁻¹ (Q − h) + γ. Each force λ_i lies in its cone K_i = {|λ_t| ≤ μ λ_n} and, where it presses
(λ_n > 0) inside the cone, holds the point (σ_i = 0); on the cone's edge the point slides against the force. This is
the nonlinear complementarity problem of Coulomb's law on the exact cone, written with De Saxcé's correction
s(σ) = μ |σ_t| n as the cone complementarity K ∋ λ ⊥ σ + s(σ) ∈ K* (Acary and Brogliato 2008), solved by the
alternating direction method of multipliers with a proximal step (Carpentier et al. 2021; Le Lidec et al. 2024):

    λ ← (G + ρ I)⁻¹ (ρ (z − u) − g − s),   z ← proj_K(λ + u),   u ← u + λ − z,   s ← μ |σ_t| n at σ = G z + g

until the iterates agree and satisfy the law to `tolerance` of the forces' scale. While every contact sticks the
solution is λ = −G⁻¹ g, the bilateral point constraints of Pinocchio's CONTACT_3D (tests/test_rigid_contact.py).
A closed-loop mechanism is solved in its independent coordinates, the loops' forces eliminated by R = ∂q/∂q_ind:
M⁻¹ Jᵀ becomes R (Rᵀ M R)⁻¹ Rᵀ Jᵀ (tests/test_rigid_loops.py checks it against the tree with the loop's
equations as multipliers).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import casadi
import numpy as np

from ..kinematics import Mechanism
from ..numerics.compiled import cached_functions, code_version
from .contact_shapes import ShapePoint, point_contacts
from .force_laws.contact_law import CompliantContact, ContactLaw
from .forces import AppliedForces
from .inverse_dynamics import inverse_dynamics
from .mass_matrix import mass_matrix

RANK = 1e-10  # G's eigenvalues below this part of its largest belong to redundant contacts' directions
BLOCK = 25  # ADMM iterations per call of the compiled block
SMALLEST_CURVATURE = 1e-2  # of G's largest eigenvalue: the least that sets the ADMM step ρ
# m: a contact point this close above its ground touches, so that a box's face resting on a plane keeps its four
# corners when its pose rounds them 1e-16 m apart (tests/test_contact_shapes.py)
TOUCHING = 1e-9


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
    """The rigid-contact accelerations of `mech` at (t, q, q̇) (closed loops: q assembled, q̇ = R q̇_ind; the
    contacts act through R on the independent coordinates, M and M⁻¹ Jᵀ becoming Rᵀ M R and R (Rᵀ M R)⁻¹ Rᵀ Jᵀ),
    every other force element applied as it is (a contact element gives its geometry and μ, not its compliant
    force); RuntimeError when the solver does not reach `tolerance` within `iterations`."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    forces = AppliedForces(mech, mech.model.forces)
    contacts = rigid_contacts(forces.laws)
    others = [law for law in forces.laws if not isinstance(law, CompliantContact)]
    Q = sum((np.asarray(law.generalized(t, q[None], qd[None], forces.placed(q[None])), float)[0] for law in others),
            np.zeros(len(q)))  # fmt: skip
    R = np.asarray(mech.r_matrix(q[None]), float)[0]  # closed loops: q̈ = R q̈_ind + a (dynamics/closed_loop.py)
    a = np.asarray(mech.acceleration_term(q[None], qd[None]), float)[0]
    M = np.asarray(mass_matrix(mech, q[None]), float)[0]
    reduced = R.T @ M @ R
    bias = np.asarray(inverse_dynamics(mech, q[None], qd[None], a[None]), float)[0]  # M a + b
    a_free = R @ np.linalg.solve(reduced, R.T @ (Q - bias)) + a
    st = mech.motion(q[None], qd[None], np.zeros((1, len(q))))
    touching = [(law, *_point(mech, law, st)) for law in contacts]
    touching = [item for item in touching if item[1] >= -TOUCHING]
    if not touching:
        return RigidContacts(a_free, [], np.zeros((0, 3)), np.zeros((0, 3)), 0, 0.0)
    J = np.concatenate([item[2] for item in touching])
    gamma = np.concatenate([item[3] for item in touching])
    normals = np.array([item[4] for item in touching])
    friction = np.array([float(law.values()["friction"]) for law, *_ in touching])
    MinvJt = R @ np.linalg.solve(reduced, (J @ R).T)  # a tree's M⁻¹ Jᵀ; on loops, through R
    G = J @ MinvJt
    g = J @ a_free + gamma
    lam, used, residual = solve_cone_complementarity(G, g, normals, friction, tolerance, iterations)
    qdd = a_free + MinvJt @ lam
    names = [law.element.name for law, *_ in touching]
    return RigidContacts(qdd, names, lam.reshape(-1, 3), (G @ lam + g).reshape(-1, 3), used, residual)


def rigid_contacts(laws: list) -> list[CompliantContact | ShapePoint]:
    """The contact points the rigid model holds (a sphere's or each vertex of a box or mesh on a plane or the road,
    a pair of spheres, or each point of a pair with a box or mesh: ContactPairLaw.points), in the model's order;
    their compliant forces are not applied."""
    return [point for law in laws if isinstance(law, CompliantContact)
            for point in (point_contacts(law) if isinstance(law, ContactLaw) else law.points())]  # fmt: skip


def split_forces(mech: Mechanism) -> tuple[AppliedForces, list[CompliantContact | ShapePoint]]:
    """The model's force elements but the rigid contacts (applied as they are) and the rigid contacts' laws."""
    contacts = rigid_contacts(AppliedForces(mech, mech.model.forces).laws)
    held = {id(law.element) for law in contacts}
    return AppliedForces(mech, [f for f in mech.model.forces if id(f) not in held]), contacts


def fixed_normal(law: CompliantContact | ShapePoint) -> np.ndarray | None:
    """The contact point's unit normal (3,) when it does not turn with the state (on a plane); None for the road's
    and a pair's, which the state gives."""
    if isinstance(law, ShapePoint) and isinstance(law.law, ContactLaw) and law.element.against is None:
        return np.asarray(law.plane()[1], float)
    return None


def contact_bodies(law: CompliantContact | ShapePoint) -> list[tuple[str, float]]:
    """The bodies whose points at c the contact's Jacobian takes, with their signs: (body2, +1), (body1, −1) of a
    pair; the sphere's body (+1) of a ground contact."""
    e = law.element
    return [(e.body, 1.0)] if hasattr(e, "body") else [(e.body2, 1.0), (e.body1, -1.0)]


def _point(mech: Mechanism, law: CompliantContact | ShapePoint, st) -> tuple:
    """Penetration δ, the Jacobian (3, n) of the contact point's relative velocity, its relative acceleration at
    q̈ = 0 (3,): J̇ q̇, from each body's motion (ω × (ω × r) and the bias of its origin and of α), and the normal
    (3,) at the motion state `st` of one pose."""
    depth, point, J, normal = (np.asarray(x, float)[0] for x in law.placed(st))
    gamma = np.zeros(3)
    for label, sign in contact_bodies(law):
        gamma += sign * point_motion(st, mech.tree.body_index(label), point)[1]
    return depth, J, gamma, normal


def point_motion(st, body: int, point: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The spin ω, the acceleration a + α × r + ω × (ω × r) of body `body`'s point at `point` (r from its origin)
    and the angular acceleration α, at the motion state `st` of one pose."""
    r = point - np.asarray(st.p[body], float)[0]
    w, al, a = (np.asarray(x, float)[0] for x in (st.w[body], st.al[body], st.a[body]))
    return w, a + np.cross(al, r) + np.cross(w, np.cross(w, r)), al


def solve_cone_complementarity(
    G: np.ndarray,
    g: np.ndarray,
    normals: np.ndarray,
    friction: np.ndarray,
    tolerance: float,
    iterations: int,
) -> tuple[np.ndarray, int, float]:
    """λ (3m,) with K ∋ λ ⊥ Gλ + g + s ∈ K*, G, g and λ in world axes (`solve_in_frames`)."""
    rotation = _block_rotation(contact_frames(normals))
    lam, used, residual = solve_in_frames(rotation @ G @ rotation.T, rotation @ g, friction, tolerance, iterations)
    return rotation.T @ lam, used, residual


def solve_in_frames(
    G: np.ndarray,
    g: np.ndarray,
    friction: np.ndarray,
    tolerance: float,
    iterations: int,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, int, float]:
    """λ (3m,) with K ∋ λ ⊥ Gλ + g + s ∈ K* by proximal ADMM, every vector in the contacts' frames (t1, t2, n)
    (`contact_frames`), where each cone is the same cone about the third axis; the iterations used and the
    residual reached: the largest of the split's disagreement |λ − z|, the step ρ |Δz| and Coulomb's law's own
    residual, the natural map |z − proj_K(z − (σ + s) / ρ)|, each over the forces' scale |G⁺ g|. `start`: a guess
    of λ (a time step's previous impulses), from which the iterations begin. G's eigen-decomposition gives the step
    ρ, the sticking forces and the proximal solve."""
    eigen, vectors = np.linalg.eigh(G)
    kept = eigen > RANK * eigen[-1]  # redundant contacts (four corners of a block) make G singular
    # the step between G's extreme nonzero curvatures, at least a tenth of the largest: two contacts nearly
    # redundant (the two ends of one bar landing) leave G an eigenvalue 1e-9 of its largest, whose geometric mean
    # with it slowed the iterations a thousandfold (tests/test_rigid_loops.py)
    rho = float(eigen[-1] * np.sqrt(max(eigen[kept][0] / eigen[-1], SMALLEST_CURVATURE)))
    basis = vectors[:, kept]
    stick = -basis @ ((basis.T @ g) / eigen[kept])  # every point held: σ = 0 (least norm among redundant ones)
    scale = max(float(np.abs(stick).max()), 1e-300)
    residual = np.abs(_natural_map(stick, G @ stick + g, rho, friction)).max() / scale
    if residual <= tolerance:  # the forces that hold every point lie in their cones: Coulomb's law holds
        return stick, 0, float(residual)
    step = (vectors / (eigen + rho)) @ vectors.T  # (G + ρ I)⁻¹: symmetric positive definite, conditioned by ρ
    z = np.zeros(len(g)) if start is None else np.array(start, float)
    u, s = np.zeros(len(g)), _de_saxce(G @ z + g, friction)
    block, used, step, G = _admm_block(len(g) // 3), 0, step.ravel(order="F"), G.ravel(order="F")
    while used < iterations:
        z, u, s, done, reached = block(step, G, g, friction, rho, tolerance * scale, z, u, s)
        used, residual = used + round(done.item()), reached.item() / scale
        if residual <= tolerance:
            return z, used, residual
    raise RuntimeError(f"the rigid contacts' cone complementarity did not converge in {iterations} iterations "
                       f"(residual {residual:.1e} of the forces' scale)")  # fmt: skip


def _natural_map(z: np.ndarray, sigma: np.ndarray, rho: float, friction: np.ndarray) -> np.ndarray:
    """Coulomb's law's residual at the forces z (contact frames): z − proj_K(z − (σ + s) / ρ)."""
    return z - _project(z - (sigma + _de_saxce(sigma, friction)) / rho, friction)


def contact_frames(normals: np.ndarray) -> np.ndarray:
    """(m, 3, 3): each row of axes (t1, t2, n) with n the plane's normal."""
    helper = np.where(np.abs(normals[:, :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    t1 = np.cross(normals, helper)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return np.stack([t1, np.cross(normals, t1), normals], axis=1)


def _block_rotation(axes: np.ndarray) -> np.ndarray:
    """The orthogonal (3m, 3m) block diagonal of the frames: world components to the contacts' frames."""
    m = len(axes)
    rotation = np.zeros((m, 3, m, 3))
    rotation[np.arange(m), :, np.arange(m), :] = axes
    return rotation.reshape(3 * m, 3 * m)


def _project(x: np.ndarray, friction: np.ndarray) -> np.ndarray:
    """The nearest point of each cone {|x_t| ≤ μ x_n} (Euclidean projection onto a second-order cone), x in the
    contacts' frames (t1, t2, n) one after the other."""
    local = x.reshape(-1, 3)
    normal = local[:, 2]
    size = np.hypot(local[:, 0], local[:, 1])
    inside = size <= friction * normal
    if inside.all():
        return x.copy()
    along = np.maximum(friction * size + normal, 0.0) / (friction * friction + 1)  # 0 in the polar cone
    ratio = friction * along / np.where(size > 0, size, 1.0)  # size = 0 lies inside or in the polar cone
    projected = local * np.column_stack([ratio, ratio, np.zeros_like(ratio)])
    projected[:, 2] = along
    projected[inside] = local[inside]
    return projected.ravel()


def _de_saxce(sigma: np.ndarray, friction: np.ndarray) -> np.ndarray:
    """s = μ |σ_t| n per contact (contact frames): the shift that makes Coulomb's law a cone complementarity."""
    blocks = sigma.reshape(-1, 3)
    s = np.zeros_like(blocks)
    s[:, 2] = friction * np.sqrt(blocks[:, 0] ** 2 + blocks[:, 1] ** 2)
    return s.ravel()


@functools.cache
def _admm_block(m: int) -> Callable:
    """BLOCK iterations of the proximal ADMM for m contacts, compiled (filed in the engine cache, one library per
    m): (step, G, g, μ, ρ, the tolerance in force units, z, u, s) -> (z, u, s, the iterations taken, the residual);
    an iterate that meets the tolerance stops the block's updates there, so that the result and the count are
    those of iterating one at a time and stopping at the first that converges."""
    key = hashlib.sha256(f"admm {m} {BLOCK}\n{code_version()}".encode()).hexdigest()
    return cached_functions(key, "admm", lambda: ([_traced_block(m)], {})).calls["admm"]


def _traced_block(m: int) -> casadi.Function:
    size = 3 * m
    step, G = casadi.SX.sym("step", size, size), casadi.SX.sym("G", size, size)
    g, mu, rho, tol = casadi.SX.sym("g", size), casadi.SX.sym("mu", m), casadi.SX.sym("rho"), casadi.SX.sym("tol")
    z0, u0, s0 = casadi.SX.sym("z", size), casadi.SX.sym("u", size), casadi.SX.sym("s", size)
    z, u, s, done, residual = z0, u0, s0, casadi.SX(0), casadi.SX(np.inf)
    for _ in range(BLOCK):
        going = residual > tol
        lam = casadi.mtimes(step, rho * (z - u) - g - s)
        z_next = _cone_projection(lam + u, mu)
        u_next = u + lam - z_next
        sigma = casadi.mtimes(G, z_next) + g
        s_next = _shift(sigma, mu)
        law = z_next - _cone_projection(z_next - (sigma + s_next) / rho, mu)
        measured = casadi.mmax(
            casadi.vertcat(casadi.fabs(lam - z_next), rho * casadi.fabs(z_next - z), casadi.fabs(law))
        )
        z, u, s = (casadi.if_else(going, new, old) for new, old in ((z_next, z), (u_next, u), (s_next, s)))
        residual, done = casadi.if_else(going, measured, residual), done + going
    inputs = [step, G, g, mu, rho, tol, z0, u0, s0]
    return casadi.Function("admm", inputs, [z, u, s, done, residual], {"cse": True})


def _cone_projection(x, mu):
    """`_project` on scalar symbols: the same three cases as branches of if_else."""
    out = []
    for i in range(mu.numel()):
        a, b, c = x[3 * i], x[3 * i + 1], x[3 * i + 2]
        size = casadi.sqrt(a * a + b * b)
        along = (mu[i] * size + c) / (mu[i] * mu[i] + 1)
        ratio = mu[i] * along / casadi.fmax(size, 1e-300)  # size = 0 is inside or polar: the ratio is not used
        edge = casadi.vertcat(a * ratio, b * ratio, along)
        polar = casadi.if_else(mu[i] * size <= -c, casadi.SX.zeros(3), edge)
        out.append(casadi.if_else(size <= mu[i] * c, casadi.vertcat(a, b, c), polar))
    return casadi.vertcat(*out)


def _shift(sigma, mu):
    """`_de_saxce` on scalar symbols."""
    return casadi.vertcat(*[casadi.vertcat(0, 0, mu[i] * casadi.sqrt(sigma[3 * i] ** 2 + sigma[3 * i + 1] ** 2))
                            for i in range(mu.numel())])  # fmt: skip
