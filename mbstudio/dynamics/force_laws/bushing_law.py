"""A rubber bushing: a six-axis spring-damper between a frame A on one body and a frame B on another.

Deflections δ (six): d, frame B's origin in A's axes, and ρ = 4 tan(φ/4) n, the rotation parameters of B's axes
relative to A's (the chart of the ball joints, numerics/rodrigues.py; Schaub and Junkins 1996). ρ ≈ φ n within
0.2 % up to 17°, so a small-angle stiffness in N m/rad reads as usual; the chart is smooth and rational except
for the square root of w = cos(φ/2), which stays away from zero for any rotation short of half a turn.

The law is written as a potential in δ,

    V(δ) = ½ δᵀ K δ + Σ_tabled E_i(δ_i) − pᵀ δ,   E_i(s) = ∫₀ˢ f_i,

and its generalized force is exactly −∂V/∂q = −Jᵀ ∂V/∂δ with J = ∂δ/∂q, the traced Jacobian of the deflections
(translations from the two frames' point Jacobians, rotations through ρ̇ = J_ρ(ρ)⁻¹ ω_rel), plus the damping
−Jᵀ C δ̇ with δ̇ = J q̇. So the stiffness part is conservative for any symmetric K, full or diagonal, and at any
rotation: the generalized "moment" conjugate to ρ is Jᵀ-mapped, not the physical moment K ρ applied as a torque
(which is not the gradient of a potential beyond small angles). The physical moment on B, in A's axes, is
B(σ) τ_ρ with B the matrix below; at small angles the two agree.
"""

from __future__ import annotations

import numpy as np

from ...model.document import BUSHING_DIRECTIONS, Bushing
from ...numerics.spatial import dot
from .base import FORMATS, ForceLaw, positive, register


def rotation_parameters(R: np.ndarray, backend) -> np.ndarray:
    """ρ (N, 3) of rotation matrices R (N, 3, 3) short of half a turn: 2 sin φ n / (w (1 + w)), w = cos(φ/2)."""
    w = backend.sqrt(1 + R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]) / 2
    scale = 1 / (w * (1 + w))
    out = backend.zeros((len(R), 3))
    out[:, 0] = (R[:, 2, 1] - R[:, 1, 2]) * scale
    out[:, 1] = (R[:, 0, 2] - R[:, 2, 0]) * scale
    out[:, 2] = (R[:, 1, 0] - R[:, 0, 1]) * scale
    return out


def parameter_rates(rho: np.ndarray, backend) -> np.ndarray:
    """B(σ)ᵀ (N, 3, 3), σ = ρ/4, with ρ̇ = B(σ)ᵀ ω for ω the relative angular velocity in the parent's axes: the
    inverse of rodrigues.jacobian, since B Bᵀ = (1 + σ·σ)² 1 for B = (1 − σ·σ) 1 + 2 [σ]× + 2 σ σᵀ."""
    sigma = rho / 4
    s2 = dot(sigma, sigma)
    out = backend.zeros((len(rho), 3, 3))
    for i in range(3):
        for j in range(3):
            out[:, i, j] = 2 * sigma[:, i] * sigma[:, j]
        out[:, i, i] = out[:, i, i] + 1 - s2
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):  # − 2 [σ]×
        out[:, i, j] = out[:, i, j] + 2 * sigma[:, k]
        out[:, j, i] = out[:, j, i] - 2 * sigma[:, k]
    return out


def table_force_and_energy(rows, s) -> tuple[np.ndarray, np.ndarray]:
    """The piecewise linear force through [deflection, force] rows (straight on beyond the end rows) at s, and its
    integral from 0 to s: with relu = max(·, 0), f(s) = y₀ + m₀ (s − x₀) + Σ (m_j − m_{j−1}) relu(s − x_j) over the
    inner rows, which integrates term by term (so the energy is exactly the force's)."""
    xs, ys = (np.asarray(column, dtype=float) for column in zip(*rows, strict=True))
    slopes = np.diff(ys) / np.diff(xs)
    kinks = list(zip(xs[1:-1], np.diff(slopes), strict=True))

    def antiderivative(x):
        return ys[0] * x + slopes[0] * (x - xs[0]) ** 2 / 2 + sum(dm * positive(x - xj) ** 2 / 2 for xj, dm in kinks)

    force = ys[0] + slopes[0] * (s - xs[0]) + sum(dm * positive(s - xj) for xj, dm in kinks)
    return force, antiderivative(s) - antiderivative(0.0)


@register
class BushingLaw(ForceLaw):
    """Q = −Jᵀ (K δ + f_tables(δ) − p + C J q̇), V = ½ δᵀ K δ + Σ E_i(δ_i) − pᵀ δ (module docstring)."""

    type = Bushing.type
    on_bodies = True

    # ------------------------------------------------------------------ the element's values
    def matrix(self, entries) -> np.ndarray:
        """A 6×6 back-end matrix from six diagonal entries or six rows of six."""
        out = self.forces.mech.backend.zeros((6, 6))
        for i, row in enumerate(entries):
            if isinstance(row, list):
                for j, value in enumerate(row):
                    out[i, j] = self.forces.value(value)
            else:
                out[i, i] = self.forces.value(row)
        return out

    def preload(self) -> np.ndarray:
        return self.forces.mech.backend.asarray([self.forces.value(v) for v in self.element.preload])

    # ------------------------------------------------------------------ kinematics
    def frames(self, st) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(body index, world axes (N, 3, 3), world origin (N, 3)) of frames A and B at the poses st."""
        e, mech = self.element, self.forces.mech
        ends = []
        for label, frame in ((e.body1, e.frame1), (e.body2, e.frame2)):
            placed = self.forces.geometry.frame(mech.model.body(label), frame)
            R, origin, *_ = mech.tree.frame_state(st, label, placed)
            ends.append((mech.tree.body_index(label), R, origin))
        return ends

    def deflection(self, st) -> tuple[np.ndarray, np.ndarray]:
        """δ (N, 6) and J = ∂δ/∂q (N, 6, n) at the poses st."""
        tree, b = self.forces.mech.tree, self.forces.mech.backend
        (ia, Ra, oa), (ib, Rb, ob) = self.frames(st)
        delta = b.zeros((len(oa), 6))
        jac = b.zeros((len(oa), 6, tree.n))
        along = ob - oa
        moving = tree.point_jacobian(st, ib, ob) - tree.point_jacobian(st, ia, ob)  # B's origin seen from A
        relative = (Ra[:, :, :, None] * Rb[:, :, None, :]).sum(axis=1)  # Raᵀ Rb
        rho = rotation_parameters(relative, b)
        turning = self._angular_jacobian(st, ib) - self._angular_jacobian(st, ia)
        spin = (Ra[:, :, :, None] * turning[:, :, None, :]).sum(axis=1)  # Raᵀ (J_ωB − J_ωA)
        rates = (parameter_rates(rho, b)[:, :, :, None] * spin[:, None]).sum(axis=2)
        delta[:, :3] = (Ra * along[:, :, None]).sum(axis=1)
        delta[:, 3:] = rho
        jac[:, :3] = (Ra[:, :, :, None] * moving[:, :, None, :]).sum(axis=1)
        jac[:, 3:] = rates
        return delta, jac

    def _angular_jacobian(self, st, body: int) -> np.ndarray:
        """∂ω/∂q̇ (N, 3, n) of a body: the turning axes of the coordinates that support it."""
        tree = self.forces.mech.tree
        out = self.forces.mech.backend.zeros((len(st.q), 3, tree.n))
        for k in tree.support[body]:
            if tree.kinds[k] == "R":
                out[:, :, k] = st.u[:, k]
        return out

    # ------------------------------------------------------------------ the law
    def elastic(self, delta) -> tuple[np.ndarray, np.ndarray]:
        """∂V/∂δ (N, 6) and V (N,) at deflections δ (N, 6)."""
        K, p = self.matrix(self.element.stiffness), self.preload()
        force = (K[None] * delta[:, None, :]).sum(axis=2) - p[None]
        energy = dot_rows(delta, (K[None] * delta[:, None, :]).sum(axis=2)) / 2 - dot_rows(delta, p[None])
        for direction, rows in self.element.tables.items():
            i = BUSHING_DIRECTIONS.index(direction)
            f, E = table_force_and_energy(rows, delta[:, i])
            force[:, i] = force[:, i] + f
            energy = energy + E
        return force, energy

    def resisting(self, delta, jac, qd) -> np.ndarray:
        """K δ + f_tables(δ) − p + C δ̇ (N, 6): what the bushing pushes frame B back with, per deflection."""
        rate = (jac * qd[:, None, :]).sum(axis=2)
        C = self.matrix(self.element.damping)
        return self.elastic(delta)[0] + (C[None] * rate[:, None, :]).sum(axis=2)

    def generalized(self, t, q, qd, st) -> np.ndarray:
        delta, jac = self.deflection(st)
        return -(jac * self.resisting(delta, jac, qd)[:, :, None]).sum(axis=1)

    def potential(self, q, st):
        return self.elastic(self.deflection(st)[0])[1]

    def measure(self, motion, name: str) -> list:
        mech = self.forces.mech
        delta, jac = self.deflection(mech.tree.motion(mech.as_batch(motion.q)))
        push = -np.asarray(self.resisting(delta, jac, mech.as_batch(motion.qd)), float)
        delta = np.asarray(delta, float)
        columns = []
        for i, d in enumerate(BUSHING_DIRECTIONS):
            turning = d.startswith("r")
            columns.append((f"{name}.{d}", "rad" if turning else "m", delta[:, i]))
            columns.append((f"{name}.f{d}", "N m" if turning else "N", push[:, i]))
        return columns

    @classmethod
    def output_parts(cls, element, force_unit) -> dict[str, str]:
        """Its deflections `x … rz` and its pushes on B `fx … frz`, as the measure's columns."""
        parts = {}
        for d in BUSHING_DIRECTIONS:
            turning = d.startswith("r")
            parts[d], parts[f"f{d}"] = ("rad", "N m") if turning else ("m", "N")
        return parts

    def output(self, part: str, outputs):
        mech = self.forces.mech
        q, qd = outputs.coordinate_rows()
        with mech.backend.context():
            delta, jac = self.deflection(mech.tree.motion(q))
            if part in BUSHING_DIRECTIONS:
                return delta[0][BUSHING_DIRECTIONS.index(part)]
            return -self.resisting(delta, jac, qd)[0][BUSHING_DIRECTIONS.index(part[1:])]

    def arrows(self, motion, t: float) -> list:
        """The force on B at B's origin and its opposite on A there (the moments are not drawn as arrows)."""
        mech = self.forces.mech
        st = mech.tree.motion(mech.as_batch(motion.q[:1]))
        delta, jac = self.deflection(st)
        push = -np.asarray(self.resisting(delta, jac, mech.as_batch(motion.qd[:1])), float)[0]
        (_, Ra, _), (_, _, ob) = self.frames(st)
        world, at = np.asarray(Ra, float)[0] @ push[:3], np.asarray(ob, float)[0]
        return [(self.name, at, world), (self.name, at, -world)]

    @classmethod
    def export_note(cls, element, target: str, value) -> str | None:
        ends = f"bodies '{element.body1}' and '{element.body2}'"
        return (f"bushing '{element.name}' has no {FORMATS[target]} form (a six-axis spring-damper between two "
                f"frames) and is left out: {ends} are not connected by it")  # fmt: skip


def dot_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product of (N, k) arrays."""
    return (a * b).sum(axis=1)
