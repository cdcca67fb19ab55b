"""A tyre on a spinning wheel: its normal load from a vertical spring-damper pressed into the road, its in-plane
forces and moments from Pacejka's Magic Formula (dynamics/tyres) at the slips of the wheel's point on the road.

Geometry at one state (world axes; the road is the model's, a surface z(x + speed t, y), a profile's the same at
every y): the wheel centre C, its spin axis a (to the wheel's left), the road's normal n = (−∂z/∂x, −∂z/∂y, 1)/|·|
under C. The tyre's axes are the TYDEX W axes in ISO 8855 orientation: heading e_x = a × n / |a × n|,
e_y = n × e_x, and n. The contact point P is where the wheel plane's line from C straight down it (d = a × e_x)
meets the road's tangent plane, at the loaded radius ρ; the pressing-in δ = R0 − (C_z − z_road) and its rate
give the normal load as the vertical tyre of `tyre_law.py` does. The wheel's material point at P moves at
v_P = J_P q̇: its components along e_x and e_y are the slip velocities Vsx, Vsy; the centre's forward speed
Vcx = v_C·e_x. Then (Pacejka 2012, section 4.3.2, with a low speed v₀ keeping the slips finite at standstill):

    κ = −Vsx / sqrt(Vcx² + v₀²),   α = atan(Vsy / sqrt(Vcx² + v₀²)),   γ = asin(a·n)

slips that do not depend on the rolling direction; the Magic Formula turns the tyre round for rolling backwards,
blending the two directions over |Vcx| < v₀ (dynamics/tyres/magic_formula.py), so that the side force opposes
sideways sliding both ways and a wheel passing through standstill meets no jump.

and the force F = Fx e_x + Fy e_y + Fz n and moment M = Mx e_x + My e_y + Mz n act on the wheel at P:
Q = J_Pᵀ F + J_ωᵀ M. Its power F·v_P + M·ω is the work done on the model; its slip part Fx Vsx + Fy Vsy is what
the tyre dissipates in sliding (never positive for a tyre whose force opposes its slip, as the Magic Formula's
does in pure slip), which the measure `<name>.slip_power` reports.

A tyre mounted on the other side of the car from its file's TYRESIDE is the file's tyre mirrored in its x-z plane:
its forces at (κ, α, γ) are the file's at (κ, −α, −γ) with Fy, Mx and Mz negated (so a car's conicity and ply steer
offsets cancel left against right, as MF-Tyre mounts them).

With `relaxation` "none" the forces follow the slips at once. With "first_order" the tyre owns two states, the
relaxed slips κ' and tan α', which follow κ and tan α through its relaxation lengths (dynamics/tyres/relaxation.py;
Pacejka 2012, sections 7.2 and 8.2), and the Magic Formula is evaluated at them: after a step of slip the forces
rise as 1 − exp(−V t / σ).
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
from pathlib import Path

import numpy as np

from ...model.document import TYRE_RELAXATIONS, MagicFormulaTyre
from ...model.errors import ModelError
from ...numerics.spatial import cross, dot
from ..tyres import Coefficients, coefficients, magic_formula, ops_for, read_tir
from ..tyres.relaxation import check_relaxation, relaxation_lengths
from .base import ForceLaw, contact_force, register

SIDES = ("left", "right")
RELAXED = [("kappa_relaxed", "1"), ("tan_alpha_relaxed", "1")]  # the states of a first-order tyre


@functools.lru_cache(maxsize=32)
def _read(path: str, stamp: tuple[int, int]) -> tuple[Coefficients, str]:
    tir = read_tir(path)
    entry = tir.sections.get("MODEL", {}).get("TYRESIDE")
    side = str(entry.value).strip().lower() if entry is not None else "left"
    return coefficients(tir), side


def tyre_file(element: MagicFormulaTyre) -> tuple[Coefficients, bool]:
    """The coefficients of the element's .tir file (read once per file and modification), and whether the element
    is mounted on the other side from the file's TYRESIDE (its mirror image; a SYMMETRIC tyre is never mirrored)."""
    where = f"force '{element.name}'"
    if element.side not in SIDES:
        raise ModelError(f"{where}.side", "is not a side of the car", element.side, " or ".join(SIDES))
    path = Path(element.tir)
    if not path.is_absolute():
        raise ModelError(f"{where}.tir", "is relative to a folder this document does not know", element.tir,
                         "a model loaded from its file (the .tir path is relative to its folder)")  # fmt: skip
    try:
        stat = path.stat()
    except OSError as error:
        raise ModelError(f"{where}.tir", f"cannot be read ({error.strerror})", element.tir) from None
    found, side = _read(str(path), (stat.st_mtime_ns, stat.st_size))
    return found, side in SIDES and side != element.side


@register
class MagicFormulaTyreLaw(ForceLaw):
    """The Magic Formula tyre on a spinning wheel (module docstring). No potential: its whole power is work."""

    type = MagicFormulaTyre.type
    on_bodies = True

    def __init__(self, element, forces) -> None:
        super().__init__(element, forces)
        self.coefficients, self.mirrored = tyre_file(element)
        low = forces.value(element.low_speed)
        if isinstance(low, numbers.Real) and not low > 0:  # a traced parameter is checked where it gets its value
            why = (
                "must be a positive speed: the slips divide by it at standstill, and the rolling direction turns in it"
            )
            raise ModelError(f"force '{element.name}'.low_speed", why, low, "a value > 0 m/s, such as 0.5")
        if element.relaxation not in TYRE_RELAXATIONS:
            raise ModelError(f"force '{element.name}'.relaxation", "is not a tyre relaxation model",
                             element.relaxation, " or ".join(TYRE_RELAXATIONS))  # fmt: skip
        if element.relaxation == "first_order":
            check_relaxation(self.coefficients, f"force '{element.name}'.tir")

    @property
    def states(self) -> list[tuple[str, str]]:
        return RELAXED if self.element.relaxation == "first_order" else []

    @property
    def time_dependent(self) -> bool:
        return True  # rolling and sliding: no potential holds any part of it

    def _norm(self, v):
        return self.forces.mech.backend.sqrt(dot(v, v))

    def contact(self, t, st, qd) -> dict:
        """Everything at the contact, (N, ...) arrays in the back-end: the W axes, P's Jacobians, the loads."""
        e, f, b = self.element, self.forces, self.forces.mech.backend
        tree = f.mech.tree
        i = tree.body_index(e.body)
        centre, J_c = f.point(st, e.body, e.point)
        local = b.asarray([f.value(x) for x in e.spin_axis])
        axis = (st.R[i] * local[None, None, :]).sum(axis=2)
        axis = axis / self._norm(axis)[:, None]
        height, slope, slope_y, speed = f.road_surface(t, centre[:, 0], centre[:, 1])
        zero = b.zeros(len(centre))
        across = [0.0] * len(slope) if slope_y is None else [-s for s in slope_y]
        rows = [[-s, a, 1.0] for s, a in zip(slope, across, strict=True)]
        normal = b.asarray(rows) if len(slope) else b.zeros((0, 3))
        normal = normal / self._norm(normal)[:, None]
        heading = cross(axis, normal)
        heading = heading / self._norm(heading)[:, None]
        lateral = cross(normal, heading)
        down = cross(axis, heading)
        ground = b.asarray([[c[0], c[1], h] for c, h in zip(centre, height, strict=True)])
        reach = dot(ground - centre, normal) / dot(down, normal)
        point = centre + reach[:, None] * down
        J_p = tree.point_jacobian(st, i, point)
        J_w = self.angular_jacobian(st, i, len(centre))
        v_c, v_p = (J_c * qd[:, None, :]).sum(axis=2), (J_p * qd[:, None, :]).sum(axis=2)
        depth = f.value(e.radius) + height - centre[:, 2]
        rate = slope * (v_c[:, 0] + speed) - v_c[:, 2]
        if slope_y is not None:  # a surface z(x, y): its rise under the centre's sideways motion too
            rate = rate + slope_y * v_c[:, 1]
        law = [f.value(getattr(e, key)) for key in ("stiffness", "damping", "engagement")]
        fz = contact_force(*law, depth, rate) + zero
        return {"heading": heading, "lateral": lateral, "normal": normal, "axis": axis, "point": point, "J_p": J_p,
                "J_w": J_w, "v_c": v_c, "v_p": v_p, "fz": fz, "depth": depth}  # fmt: skip

    def angular_jacobian(self, st, body: int, count: int) -> np.ndarray:
        """d(ω of the body)/d(q̇) (N, 3, n): the axis of each revolute coordinate that carries it."""
        tree = self.forces.mech.tree
        J = self.forces.mech.backend.zeros((count, 3, tree.n))
        for k in tree.support[body]:
            if tree.kinds[k] == "R":
                J[:, :, k] = st.u[:, k]
        return J

    def slips(self, c: dict, ops) -> tuple:
        """Slip ratio κ, slip angle α, inclination γ, forward speed Vcx and slip velocities (N,) at the contact."""
        low = self.forces.value(self.element.low_speed)
        vcx = dot(c["v_c"], c["heading"])
        vsx, vsy = dot(c["v_p"], c["heading"]), dot(c["v_p"], c["lateral"])
        speed = self.forces.mech.backend.sqrt(vcx * vcx + low * low)
        lean = dot(c["axis"], c["normal"])
        gamma = ops.atan(lean / self.forces.mech.backend.sqrt(1 - lean * lean))
        return -vsx / speed, ops.atan(vsy / speed), gamma, vcx, vsx, vsy

    def loads(self, t, st, qd, z=None) -> tuple[dict, object, tuple]:
        """The contact, the Magic Formula's forces and moments there, and the slips; with relaxation at the relaxed
        slips z (N, 2): κ' and tan α'."""
        c = self.contact(t, st, qd)
        ops = ops_for(c["fz"])
        slips = self.slips(c, ops)
        kappa, alpha, gamma, vcx = slips[:4]
        if self.states:
            kappa, alpha = z[:, 0], ops.atan(z[:, 1])
        low = self.forces.value(self.element.low_speed)  # the band in which the rolling direction turns
        if not self.mirrored:
            mf = magic_formula(self.coefficients, c["fz"], kappa, alpha, gamma, vcx, ops=ops, low_speed=low)
            return c, mf, slips
        mirror = magic_formula(self.coefficients, c["fz"], kappa, -alpha, -gamma, vcx, ops=ops, low_speed=low)
        return c, dataclasses.replace(mirror, fy=-mirror.fy, mx=-mirror.mx, mz=-mirror.mz), slips

    def wrench(self, c: dict, mf) -> tuple[np.ndarray, np.ndarray]:
        """World force (N, 3) at P and moment (N, 3) on the wheel."""
        axes = (c["heading"], c["lateral"], c["normal"])
        force = sum(x[:, None] * e for x, e in zip((mf.fx, mf.fy, c["fz"]), axes, strict=True))
        moment = sum(x[:, None] * e for x, e in zip((mf.mx, mf.my, mf.mz), axes, strict=True))
        return force, moment

    def generalized(self, t, q, qd, st, z=None) -> np.ndarray:
        c, mf, _ = self.loads(t, st, qd, z)
        force, moment = self.wrench(c, mf)
        return (c["J_p"] * force[:, :, None]).sum(axis=1) + (c["J_w"] * moment[:, :, None]).sum(axis=1)

    def state_rates(self, t, q, qd, st, z) -> np.ndarray:
        """d(κ', tan α')/dt = ((−Vsx, Vsy) − V (κ', tan α')) / (σκ, σα), V = sqrt(Vcx² + v₀²)."""
        c = self.contact(t, st, qd)
        ops = ops_for(c["fz"])
        _, _, gamma, vcx, vsx, vsy = self.slips(c, ops)
        low = self.forces.value(self.element.low_speed)
        speed = self.forces.mech.backend.sqrt(vcx * vcx + low * low)
        sigma_kappa, sigma_alpha = relaxation_lengths(self.coefficients, c["fz"], gamma, ops)
        rates = [(-vsx - speed * z[:, 0]) / sigma_kappa, (vsy - speed * z[:, 1]) / sigma_alpha]
        return np.stack(rates, axis=1)

    # ------------------------------------------------------------------ results
    def along(self, motion) -> dict[str, np.ndarray]:
        """Along a motion (float64): the contact's loads, slips and powers."""
        st = motion.mech.tree.motion(motion.q)
        z = getattr(motion, "law_states", {}).get(self.name)  # its own states along the motion: (N, 2)
        if self.states and z is None:
            z = np.zeros((len(motion.q), len(self.states)))
        c, mf, (kappa, alpha, gamma, vcx, vsx, vsy) = self.loads(motion.t, st, motion.qd, z)
        force, moment = self.wrench(c, mf)
        omega = (c["J_w"] * motion.qd[:, None, :]).sum(axis=2)
        values = {"fx": mf.fx, "fy": mf.fy, "fz": c["fz"], "mx": mf.mx, "my": mf.my, "mz": mf.mz, "kappa": kappa,
                  "alpha": alpha, "gamma": gamma, "vx": vcx, "slip_power": mf.fx * vsx + mf.fy * vsy,
                  "power": dot(force, c["v_p"]) + dot(moment, omega)}  # fmt: skip
        heading = np.asarray(c["heading"], float)
        values["heading"] = np.arctan2(heading[:, 1], heading[:, 0])
        out = {k: np.asarray(v, float) for k, v in values.items()}
        out["point"], out["force"] = np.asarray(c["point"], float), np.asarray(force, float)
        return out

    UNITS = {"fx": "N", "fy": "N", "fz": "N", "mx": "N m", "my": "N m", "mz": "N m", "kappa": "1", "alpha": "rad",
             "gamma": "rad", "vx": "m/s", "slip_power": "W", "power": "W", "heading": "rad"}  # fmt: skip

    def measure(self, motion, name: str) -> list:
        """<name>.fx, .fy, .fz [N] and .mx, .my, .mz [N m] in the tyre's W axes; .kappa, .alpha, .gamma [rad] (the
        contact's own slips: with relaxation the forces follow the relaxed ones, the run's law states); .vx
        the forward speed; .slip_power (Fx Vsx + Fy Vsy) and .power (all it does on the wheel) [W]; .heading [rad], the
        angle of its heading e_x from the world x axis about z."""
        got = self.along(motion)
        return [(f"{name}.{key}", unit, got[key]) for key, unit in self.UNITS.items()]

    def arrows(self, motion, t: float) -> list:
        got = self.along(motion)
        return [(self.element.name, got["point"][0], got["force"][0])]

    def block_load(self, where):
        raise ModelError(f"force '{self.name}'", "is a tyre: the block models have no road", None,
                         "a model without tyres")  # fmt: skip
