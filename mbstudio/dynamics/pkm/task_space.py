"""The modular model of a parallel machine and its task-space equations of motion (Müller 2021, sec. 6-8):

    M_t V̇_t + C_t V_t + W_t^grav = W_t^EE + J_IKᵀ u                                        (eq. 107)

assembled from one node per limb (the limb's inverse kinematics, its projected equations, eq. 144) and the
platform's Newton-Euler equations (eq. 104). Congruent limbs share one limb model placed by mount frames
(sec. 7). The platform translates: V_t are the velocities of its frame's origin along the task coordinates
(some of x, y, z of the ground frame), the other position components stay at the document's values.

    pkm = ParallelMachine(model)
    states = pkm.inverse_kinematics(x)            # x (N, δ_p) task coordinates -> each limb's coordinates
    eq = pkm.equations(states, v)                 # M_t (N, δ, δ), C_t V_t + W_grav (N, δ), J_IK (N, n_act, δ)
    u = pkm.inverse_dynamics(states, v, a).efforts

Batched float64 throughout; `compiled.py` traces the same limb nodes into native functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...kinematics.mechanism import Mechanism
from ...model.document import TASK_COORDINATES, Model
from ...model.errors import ModelError
from ..mass_matrix import mass_matrix
from ..spatial_tree import body_inertia
from .limb import LimbModel
from .mounts import Mount, identity_mount, mount
from .topology import Limb, Structure, structure

ROTATION_TOLERANCE = 1e-9  # rad/s per unit rate: a platform that turns less than this only translates


@dataclass(frozen=True)
class LimbInstance:
    """A limb of the machine: the limb model it is an instance of (shared by congruent limbs), its mount, and
    the document's names of the model's tree coordinates (in the model's order)."""

    limb: Limb
    model: LimbModel
    mount: Mount
    coordinates: tuple[str, ...]

    @property
    def representative(self) -> bool:
        return self.model.limb is self.limb


@dataclass
class TaskSpaceEquations:
    """At N states: M_t (N, δ, δ), the bias C_t V_t + W_t^grav (N, δ) (W_t^grav alone at rest) and J_IK
    (N, n_act, δ) with ϑ̇_act = J_IK V_t; per-limb shares of M_t and of the bias in `limb_mass`, `limb_bias`
    (L, N, ...)."""

    mass: np.ndarray
    bias: np.ndarray
    ik_jacobian: np.ndarray
    limb_mass: np.ndarray
    limb_bias: np.ndarray


@dataclass
class InverseDynamics:
    """Actuator efforts (N, n_act) and each limb's wrench on the task coordinates (L, N, δ), eq. (144), with
    the platform's (N, δ): Σ limbs + platform = J_IKᵀ u."""

    efforts: np.ndarray
    limb_wrenches: np.ndarray
    platform_wrench: np.ndarray
    ik_jacobian: np.ndarray


class ParallelMachine:
    """The modular model of the document's parallel machine (float64, batched over states). `reuse=False`
    builds every limb's own model, even for congruent limbs (frame invariance: the same numbers)."""

    def __init__(self, model: Model, reuse: bool = True) -> None:
        found = structure(model)
        if found is None:
            raise ModelError(
                "platform",
                "this model is no parallel machine: no body is linked to the ground by two or more limbs",
                model.name,
                "a platform carried by at least two chains of bodies from the ground (or a 'platform' section)",
            )
        self.model, self.structure = model, found
        self.platform = found.platform
        self.mech = Mechanism(model)
        self.actuated = _actuated(model, self.mech)
        self.q0 = self.mech.assemble(None)
        self.axes = task_axes(self)
        self.rotation0, self.position0 = (x[0] for x in self._platform_pose(self.q0))
        self.gravity = np.asarray(self.mech.tree.geometry.gravity(), float)
        self.platform_mass = float(self.mech.tree.geometry.inertia(model.body(self.platform))[0])
        self.limbs = self._instances(found, reuse)
        self.start = [self._starting_coordinates(limb) for limb in self.limbs]

    # ------------------------------------------------------------------ construction
    def _platform_pose(self, q):
        return self.mech.poses(q)[self.platform]

    def _instances(self, found: Structure, reuse: bool) -> list[LimbInstance]:
        """One limb model per class of congruent limbs, the first of each class its representative."""
        out: list[LimbInstance] = []
        for limb in found.limbs:
            placed = reuse and next(
                (
                    (other, m)
                    for other in out
                    if other.representative and (m := mount(self.model, other.limb, limb, self.platform)) is not None
                ),
                None,
            )
            if placed and self._same_actuation(placed[0], placed[1]):
                representative, m = placed
                names = m.coordinate_names(self.model)
                coordinates = tuple(names[n] for n in representative.model.coordinates)
                out.append(LimbInstance(limb, representative.model, m, coordinates))
                continue
            actuated = [n for n in self.actuated if n in limb.coordinates]
            model = LimbModel(self.model, limb, self.platform, actuated)
            out.append(LimbInstance(limb, model, identity_mount(limb), tuple(model.coordinates)))
        return out

    def _same_actuation(self, representative: LimbInstance, m: Mount) -> bool:
        names = m.coordinate_names(self.model)
        limb = representative.model
        mine = sorted(names[limb.coordinates[i]] for i in limb.actuated)
        theirs = sorted(n for n in self.actuated if n in set(names.values()))
        return mine == theirs

    def _starting_coordinates(self, instance: LimbInstance) -> np.ndarray:
        """The limb's coordinates at the document's pose (1, n): the document's values, the loops closed and the
        platform put where the assembled machine has it."""
        values = dict(zip(self.mech.coordinates, self.q0[0], strict=True))
        initial = {c.name: c.initial or 0.0 for j in self.model.joints for c in j.coordinates}
        guess = np.array([[values.get(n, initial[n]) for n in instance.coordinates]])
        position, rotation = self.limb_target(instance, self.position0[None, :])
        return instance.model.inverse_kinematics(position, rotation, guess)

    # ------------------------------------------------------------------ kinematics
    @property
    def task_names(self) -> list[str]:
        return [TASK_COORDINATES[a] for a in self.axes]

    def positions(self, x) -> np.ndarray:
        """Platform origins (N, 3) for task coordinates x (N, δ_p); the other components as at the document's
        pose."""
        x = np.atleast_2d(np.asarray(x, float))
        out = np.repeat(self.position0[None, :], len(x), axis=0)
        out[:, self.axes] = x
        return out

    def world(self, v) -> np.ndarray:
        """Task-space vectors (N, δ_p) as ground-frame vectors (N, 3)."""
        v = np.atleast_2d(np.asarray(v, float))
        out = np.zeros((len(v), 3))
        out[:, self.axes] = v
        return out

    def limb_target(self, instance: LimbInstance, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the limb model's platform frame must be, in its own axes, for the platform at `position`
        (N, 3): C_p' = S_0⁻¹ C_p S_p (eq. 123)."""
        m = instance.mount
        rotation = m.rotation.T @ self.rotation0 @ m.platform_rotation
        at = (position + self.rotation0 @ m.platform_origin - m.origin) @ m.rotation
        return at, rotation

    def limb_vectors(self, instance: LimbInstance, v: np.ndarray) -> np.ndarray:
        """Task-space platform velocities or accelerations (N, δ_p) as the limb's platform twists (N, 6)."""
        out = np.zeros((len(v), 6))
        out[:, 3:] = self.world(v) @ instance.mount.rotation
        return out

    def inverse_kinematics(
        self, x, guess: list[np.ndarray] | None = None, substeps: int | None = None
    ) -> list[np.ndarray]:
        """Each limb's coordinates (N, n_l) for task coordinates x (N, δ_p), each limb solved on its own from
        `guess` (per limb (N, n_l) or (1, n_l); default: the document's pose), walked there in `substeps`
        straight steps (default 8 from the document's pose, 1 from a guess)."""
        position = self.positions(x)
        steps = substeps or (8 if guess is None else 1)
        out = []
        for k, limb in enumerate(self.limbs):
            start = np.broadcast_to(self.start[k] if guess is None else guess[k], (len(position), limb.model.n))
            target, rotation = self.limb_target(limb, position)
            out.append(limb.model.inverse_kinematics(target, rotation, start, steps))
        return out

    def document_coordinates(self, states: list[np.ndarray]) -> list[dict[str, np.ndarray]]:
        """The limbs' coordinates under the document's names, per limb."""
        return [dict(zip(limb.coordinates, s.T, strict=True)) for limb, s in zip(self.limbs, states, strict=True)]

    def assembled(self, states: list[np.ndarray]) -> np.ndarray:
        """The whole machine's tree coordinates (N, n) at these limb states, its loops closed with the actuated
        coordinates where the limbs put them (the document's other coordinates as a guess)."""
        values: dict[str, np.ndarray] = {}
        for named in self.document_coordinates(states):
            values |= named
        count = len(states[0])
        guess = np.array([values.get(n, np.repeat(self.q0[0, i], count)) for i, n in enumerate(self.mech.coordinates)])
        independent = np.array([values[n] for n in self.mech.independent]).T
        return self.mech.assemble(independent, guess=guess.T)

    # ------------------------------------------------------------------ dynamics
    def _limb_gravity(self, instance: LimbInstance) -> np.ndarray:
        return instance.mount.rotation.T @ self.gravity  # eq. (126)

    def _task(self, instance: LimbInstance, six: np.ndarray) -> np.ndarray:
        """A limb's platform wrench (N, 6, ...) on the task coordinates: the linear part, to ground axes."""
        return np.einsum("ij,nj...->ni...", (instance.mount.rotation)[self.axes], six[:, 3:])

    def equations(self, states: list[np.ndarray], v) -> TaskSpaceEquations:
        """M_t, C_t V_t + W_t^grav and J_IK at the limbs' states with task velocities v (N, δ_p), eq. (108)-(112)."""
        v = np.atleast_2d(np.asarray(v, float))
        count, dim = len(v), len(self.axes)
        masses, biases, rows = [], [], []
        for limb, q in zip(self.limbs, states, strict=True):
            M6, bias6, B = limb.model.equations(q, self.limb_vectors(limb, v), self._limb_gravity(limb))
            masses.append(self._task(limb, np.swapaxes(self._task(limb, M6), 1, 2)))
            biases.append(self._task(limb, bias6))
            rows.append(self._task(limb, np.swapaxes(B[:, limb.model.actuated], 1, 2)))
        platform_mass = self.platform_mass * np.broadcast_to(np.eye(dim), (count, dim, dim))
        platform_gravity = np.broadcast_to(-self.platform_mass * self.gravity[self.axes], (count, dim))
        return TaskSpaceEquations(
            sum(masses) + platform_mass,
            sum(biases) + platform_gravity,
            self._stack_rows(rows),
            np.array(masses),
            np.array(biases),
        )

    def _stack_rows(self, rows: list[np.ndarray]) -> np.ndarray:
        """J_IK (N, n_act, δ) in the order of `self.actuated`, from each limb's rows (N, δ, n_act,l)."""
        named = {}
        for limb, block in zip(self.limbs, rows, strict=True):
            for k, i in enumerate(limb.model.actuated):
                named[limb.coordinates[i]] = block[:, :, k]
        return np.stack([named[n] for n in self.actuated], axis=1)

    def inverse_dynamics(self, states: list[np.ndarray], v, a, external=None) -> InverseDynamics:
        """Actuator efforts u (N, n_act) that move the platform with task velocities v and accelerations a
        (N, δ_p), eq. (137) in its parallel form (sec. 8.2): J_IKᵀ u = Σ_l F̄ᵀ H̄ᵀ φ_l + P_pᵀ φ_p − W_t^EE.
        `external`: W_t^EE (N, δ_p), the task-space force applied to the platform. Least-norm u under
        redundant actuation."""
        v, a = (np.atleast_2d(np.asarray(x, float)) for x in (v, a))
        wrenches, rows = [], []
        for limb, q in zip(self.limbs, states, strict=True):
            six, B = limb.model.wrench(
                q, self.limb_vectors(limb, v), self.limb_vectors(limb, a), self._limb_gravity(limb)
            )
            wrenches.append(self._task(limb, six))
            rows.append(self._task(limb, np.swapaxes(B[:, limb.model.actuated], 1, 2)))
        platform = self.platform_mass * (a - self.gravity[self.axes])
        total = sum(wrenches) + platform - (0.0 if external is None else np.atleast_2d(external))
        J = self._stack_rows(rows)
        return InverseDynamics(efforts(J, total), np.array(wrenches), platform, J)

    def forward_dynamics(self, states: list[np.ndarray], v, u, external=None) -> np.ndarray:
        """Task accelerations V̇_t (N, δ_p) under actuator efforts u (N, n_act), eq. (133)."""
        eq = self.equations(states, v)
        rhs = _apply(np.swapaxes(eq.ik_jacobian, 1, 2), np.atleast_2d(u)) - eq.bias
        if external is not None:
            rhs = rhs + np.atleast_2d(external)
        return np.linalg.solve(eq.mass, rhs[:, :, None])[:, :, 0]

    def actuator_equations(self, states: list[np.ndarray], v) -> tuple[np.ndarray, np.ndarray]:
        """M_a = J_FKᵀ M_t J_FK (eq. 117) and the actuator-space bias b_a with M_a ϑ̈_act + b_a = u (N, n_act)
        (non-redundant machines): b_a = J_FKᵀ (C_t V_t + W_t^grav) − M_a J̇_IK V_t (eq. 118-119)."""
        eq = self.equations(states, v)
        J_fk = np.linalg.inv(eq.ik_jacobian)
        M_a = np.swapaxes(J_fk, 1, 2) @ eq.mass @ J_fk
        drift = self._actuated_drift(states, v)
        return M_a, _apply(np.swapaxes(J_fk, 1, 2), eq.bias) - _apply(M_a, drift)

    def _actuated_drift(self, states: list[np.ndarray], v) -> np.ndarray:
        """J̇_IK V_t (N, n_act): the actuated coordinates' accelerations at zero task acceleration."""
        named = {}
        v = np.atleast_2d(np.asarray(v, float))
        for limb, q in zip(self.limbs, states, strict=True):
            _, _, rest, _ = limb.model.motion_from_platform(q, self.limb_vectors(limb, v), np.zeros((len(v), 6)))
            named |= {limb.coordinates[i]: rest[:, i] for i in limb.model.actuated}
        return np.stack([named[n] for n in self.actuated], axis=1)

    def mobility_measures(self, states: list[np.ndarray]) -> dict[str, np.ndarray]:
        """At rest: the condition number of M_t, the dynamic manipulability |det(M_t⁻¹ J_IKᵀ)| (the volume of
        the task accelerations unit actuator efforts reach; Yoshikawa) and the condition number of J_IK."""
        eq = self.equations(states, np.zeros((len(states[0]), len(self.axes))))
        reach = np.linalg.solve(eq.mass, np.swapaxes(eq.ik_jacobian, 1, 2))
        return {
            "mass_condition": np.linalg.cond(eq.mass),
            "dynamic_manipulability": np.sqrt(np.abs(np.linalg.det(reach @ np.swapaxes(reach, 1, 2)))),
            "jacobian_condition": np.linalg.cond(eq.ik_jacobian),
        }

    def kinetic_energy(self, states: list[np.ndarray], v) -> np.ndarray:
        """T (N,) of every moving body (limbs and platform), from the limbs' joint rates: for the energy checks."""
        v = np.atleast_2d(np.asarray(v, float))
        total = 0.5 * self.platform_mass * (v**2).sum(axis=1)
        for limb, q in zip(self.limbs, states, strict=True):
            qd, _, _, _ = limb.model.motion_from_platform(q, self.limb_vectors(limb, v), np.zeros((len(v), 6)))
            total = total + 0.5 * np.einsum("ni,nij,nj->n", qd, mass_matrix(limb.model.mech, q), qd)
        return total

    def potential_energy(self, states: list[np.ndarray], x) -> np.ndarray:
        """V (N,) = −Σ m g·(centre of mass) of every body, ground-frame gravity."""
        total = -self.platform_mass * (self.positions(x) @ self.gravity)
        for limb, q in zip(self.limbs, states, strict=True):
            centres = limb_first_moments(limb.model, q) @ limb.mount.rotation.T
            masses = limb_masses(limb.model)
            total = total - centres @ self.gravity - masses * (limb.mount.origin @ self.gravity)
        return total


def efforts(J: np.ndarray, wrench: np.ndarray) -> np.ndarray:
    """u from J_IKᵀ u = wrench: solved for as many actuators as task coordinates, least-norm otherwise."""
    Jt = np.swapaxes(J, 1, 2)
    if J.shape[1] == J.shape[2]:
        return np.linalg.solve(Jt, wrench[:, :, None])[:, :, 0]
    return _apply(J, np.linalg.solve(Jt @ J, wrench[:, :, None])[:, :, 0])


def _apply(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    return (A * x[:, None, :]).sum(axis=2)


def limb_masses(limb: LimbModel) -> float:
    """Total mass of the limb's bodies (the platform copy is massless)."""
    geometry = limb.mech.tree.geometry
    return float(sum(geometry.inertia(limb.document.body(b))[0] for b in limb.limb.bodies))


def limb_first_moments(limb: LimbModel, q: np.ndarray) -> np.ndarray:
    """Σ m · centre of mass (N, 3) of the limb's bodies, limb axes."""
    st = limb.mech.motion(q)
    total = np.zeros((len(q), 3))
    for label in limb.limb.bodies:
        index = limb.mech.tree.body_index(label)
        total = total + body_inertia(limb.mech, st, index).c.T
    return total


def _actuated(model: Model, mech: Mechanism) -> list[str]:
    """The actuated coordinates: the document's `actuated`, else its independent coordinates."""
    names = model.actuated or mech.independent
    if len(names) < mech.dof:
        raise ModelError(
            "actuated",
            f"{len(names)} actuated coordinates cannot drive {mech.dof} degrees of freedom",
            names,
            f"at least {mech.dof} coordinates",
        )
    return list(names)


def task_axes(pkm: ParallelMachine) -> list[int]:
    """The task coordinates' axes (0, 1, 2 for x, y, z): the document's `platform.task`, else the components of
    the platform's position the machine can move (pivoted QR of its platform Jacobian). The platform must not
    turn (a ModelError naming it otherwise) and must carry every degree of freedom."""
    mech = pkm.mech
    J = mech.body_jacobian(pkm.q0, pkm.platform)[0] @ mech.r_matrix(pkm.q0)[0]
    if np.abs(J[:3]).max(initial=0.0) > ROTATION_TOLERANCE:
        raise ModelError(
            f"platform '{pkm.platform}'",
            "turns with the mechanism: the modular task-space model covers platforms that only translate",
            np.round(J[:3], 6).tolist(),
            "a translational parallel machine (Delta, IRSBot-2, ...)",
        )
    declared = pkm.model.platform.task if pkm.model.platform is not None else None
    if declared is not None:
        axes = [TASK_COORDINATES.index(n) for n in declared]
    else:
        import scipy.linalg

        _, _, order = scipy.linalg.qr(J[3:].T, pivoting=True)
        axes = sorted(int(i) for i in order[: mech.dof])
    if len(axes) != mech.dof or np.linalg.matrix_rank(J[3:][axes]) < mech.dof:
        raise ModelError(
            "platform.task",
            f"these task coordinates do not carry the machine's {mech.dof} degrees of freedom",
            [TASK_COORDINATES[a] for a in axes],
            f"{mech.dof} of x, y, z along which the platform moves",
        )
    return axes
