"""Pacejka's Magic Formula 6.1 (and 5.2), steady state: the tyre's forces and moments at a load, slip ratio, slip
angle, inclination angle, forward speed and inflation pressure.

Equations as printed in Pacejka, *Tire and Vehicle Dynamics*, 3rd ed. (2012), section 4.3.2, numbered (4.E1) to
(4.E78) there, with the inflation-pressure terms of Besselink, Schmeitz and Pacejka, "An improved Magic Formula/Swift
tyre model that can handle inflation pressure changes" (Vehicle System Dynamics, 2010); the rolling-resistance
moment as that paper writes it (its eq. A48). No turn slip (every zeta factor is 1). MF 5.2 files run through the
same equations with MF 6.1's additions at the values that remove them and MF 5.2's own camber terms where they
differ (the inclination scaled by LGAX/LGAY/LGAZ, PHY3, QDZ3, Fy' and My). docs/tyres.md lists the choices where
sources differ and what is left out.

The formulas are written once over plain arithmetic and the few functions `Ops` names, so they run on numpy arrays
(any broadcastable shapes) and on CasADi SX/MX symbols alike; `ops_for` picks the functions from the inputs.
Axes and signs: the TYDEX W-axis system (ISO 8855 orientation: x forward, y left, z up, at the contact point).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .coefficients import Coefficients

EPSILON = 1e-6  # the small numbers that keep B = K / (C D + eps) and the alignment ratios finite at zero load
# Added under a square root (or a power) of a quantity that can be exactly 0, so that its exact derivative (CasADi's)
# is finite there: sqrt(u + TINY) is sqrt(u) in double precision for every u above 1e-284, and 1e-150 at u = 0.
TINY = 1e-300
# (Fz/Fz0)^QSY7 is written Fz/Fz0 max(Fz/Fz0, LOAD_FLOOR)^(QSY7 - 1): the same above 1e-12 of the nominal load (My
# differs by under 1e-9 N m below it), exactly 0 off the ground, and with a finite derivative there
LOAD_FLOOR = 1e-12


@dataclass(frozen=True)
class TyreForces:
    """Forces [N] and moments [N m] at the contact point in the W-axis system, and the quantities a vehicle
    model reads off the tyre: slip stiffnesses and friction coefficients at this load, the pneumatic trail and the
    residual aligning torque."""

    fx: object
    fy: object
    mx: object
    my: object
    mz: object
    longitudinal_stiffness: object  # Kxk [N per unit slip ratio], (4.E15)
    cornering_stiffness: object  # Kya [N/rad], (4.E25); negative for the usual W-axis fit
    mu_x: object
    mu_y: object
    trail: object  # t [m], (4.E73)
    residual_torque: object  # Mzr [N m], (4.E75)


def _numpy_ops() -> SimpleNamespace:
    return SimpleNamespace(
        sin=np.sin,
        cos=np.cos,
        tan=np.tan,
        atan=np.arctan,
        exp=np.exp,
        sqrt=np.sqrt,
        abs=np.abs,
        sign=np.sign,
        fmin=np.minimum,
        fmax=np.maximum,
        power=np.power,
    )


def _casadi_ops(object_arrays: bool = False) -> SimpleNamespace:
    """CasADi's functions; with `object_arrays`, applied entry by entry to numpy object arrays of symbols (the
    compiled engine's traced back-end, numerics/compiled.py)."""
    import casadi

    if object_arrays:
        return SimpleNamespace(
            **{name: np.frompyfunc(f, _ARITY.get(name, 1), 1) for name, f in vars(_casadi_ops()).items()}
        )
    return SimpleNamespace(
        sin=casadi.sin,
        cos=casadi.cos,
        tan=casadi.tan,
        atan=casadi.atan,
        exp=casadi.exp,
        sqrt=casadi.sqrt,
        abs=casadi.fabs,
        sign=casadi.sign,
        fmin=casadi.fmin,
        fmax=casadi.fmax,
        power=casadi.power,
    )


NUMPY = _numpy_ops()
_ARITY = {"fmin": 2, "fmax": 2, "power": 2}


def ops_for(*values) -> SimpleNamespace:
    """CasADi's functions when any value is a CasADi symbol or matrix (or a numpy object array of them), numpy's
    otherwise."""
    for value in values:
        if _is_casadi(value):
            return _casadi_ops()
        if isinstance(value, np.ndarray) and value.dtype == object and any(map(_is_casadi, value.flat)):
            return _casadi_ops(object_arrays=True)
    return NUMPY


def _is_casadi(value) -> bool:
    return type(value).__module__.startswith("casadi")


def magic_formula(
    c: Coefficients,
    fz,
    kappa,
    alpha,
    gamma,
    vcx,
    pressure=None,
    combined: bool | None = None,
    ops=None,
    low_speed=1.0,
) -> TyreForces:
    """The forces and moments at load `fz` [N], slip ratio `kappa`, slip angle `alpha` [rad], inclination `gamma`
    [rad], the contact point's forward speed `vcx` [m/s] and inflation `pressure` [Pa] (the file's INFLPRES when
    None). `combined` (the file's USE_MODE when None) weights each force by the other slip (4.E50-67); without it
    Fx and Fy are the pure-slip forces. A load at or below 0 (the wheel off the ground) gives zero forces.
    Steady state: relaxation and the low-speed damping of the slips belong to whoever computes kappa and alpha.

    The slips do not depend on the rolling direction: kappa = -Vsx / |Vcx| and tan(alpha) = Vsy / |Vcx| (ISO
    signs), so a positive slip angle means sliding to the left whichever way the wheel rolls. Rolling backwards
    (Vcx <= -`low_speed`) the tyre is the file's tyre turned half a revolution about its vertical axis, rolling
    forwards: its formulas at (-kappa, -alpha, -gamma) with Fx, Fy, Mx and My turned back (negated) and Mz as it
    is. This is what Pacejka's sgn(Vcx) terms (2012, 4.E3 and the aligning moment's D_t, D_r) stand for; the forces
    oppose the sliding in both directions, the offsets of ply steer and rolling resistance turn with the tyre.
    Between -`low_speed` and `low_speed` the two are blended by a smooth step in Vcx (continuous slope, exactly
    forward at and above `low_speed`), so a wheel passing through standstill sees no jump; at standstill the blend
    keeps the forces' parts odd in the slips: they oppose any sliding. The shifts fade out below `low_speed`
    (`_shift_fade`)."""
    ops = ops or ops_for(fz, kappa, alpha, gamma, vcx, pressure)
    combined = c.use_mode % 10 == 4 if combined is None else combined
    pressure = c.values["INFLPRES"] if pressure is None else pressure
    speed = ops.abs(vcx)
    ahead = _rolling_forwards(c, ops, fz, kappa, alpha, gamma, speed, pressure, combined, low_speed)
    turned = _rolling_forwards(c, ops, fz, -kappa, -alpha, -gamma, speed, pressure, combined, low_speed)
    w = _forward_weight(ops, vcx, low_speed)

    def blend(name: str, turned_sign: float):
        return w * getattr(ahead, name) + (1 - w) * turned_sign * getattr(turned, name)

    signs = {"fx": -1.0, "fy": -1.0, "mx": -1.0, "my": -1.0, "mz": 1.0, "trail": -1.0, "residual_torque": 1.0}
    even = ("longitudinal_stiffness", "cornering_stiffness", "mu_x", "mu_y")
    return TyreForces(**{name: blend(name, sign) for name, sign in signs.items()}, **{n: blend(n, 1.0) for n in even})


def _shift_fade(ops, speed, low_speed):
    """The factor on the curves' horizontal and vertical shifts (SHx, SVx, SHy, SVy: ply steer, conicity, camber
    thrust) and on the residual torque's D_r: 1 at and above `low_speed`, x^2 (3 - 2 x) of x = speed/low_speed
    below it, 0 at standstill, as MF-Tyre fades the shifts below its VXLOW. They are forces of a rolling tyre;
    kept at standstill they push a parked car along (camber thrust and torque through toe and the steering's
    compliance) against nothing but the slips' low-speed damping."""
    x = ops.fmin(speed / low_speed, 1.0)
    return x * x * (3 - 2 * x)


def _forward_weight(ops, vcx, low_speed):
    """1 rolling forwards at or above `low_speed`, 0 backwards at or below -`low_speed`, between them
    (1 + s)/2 with s = x (3 - x^2)/2 of x = Vcx/low_speed: a smooth sign(Vcx) whose slope is continuous at the
    band's edges and 0 beyond them."""
    x = ops.fmin(ops.fmax(vcx / low_speed, -1.0), 1.0)
    return 0.5 + 0.25 * x * (3 - x * x)


def _rolling_forwards(c: Coefficients, ops, fz, kappa, alpha, gamma, speed, pressure, combined, low_speed):
    """The printed equations for a tyre rolling forwards at `speed` >= 0 (sgn(Vcx) = 1), their curves' shifts
    faded out below `low_speed` (`_shift_fade`)."""
    mode = c.use_mode % 10
    p = SimpleNamespace(**c.values)
    fz = ops.fmax(fz, 0.0)
    s = _state(p, ops, fz, kappa, alpha, gamma, speed, pressure, c.version == "MF 5.2")
    s.fade = _shift_fade(ops, speed, low_speed)
    fx0, kxk, mu_x = _fx0(p, ops, s)
    fy0, lat = _fy0(p, ops, s)
    g_xa = _g_xa(p, ops, s) if combined else 1.0
    g_yk, sv_yk = _g_yk(p, ops, s, lat.mu_y) if combined else (1.0, 0.0)
    fx = g_xa * fx0  # (4.E50)
    fy = g_yk * fy0 + sv_yk  # (4.E58)
    trail, mzr, arm = _aligning(p, ops, s, lat, kxk, fy)
    mz = -trail * _fy_prime(p, ops, s, fy0, g_yk) + mzr + arm * fx  # (4.E71), (4.E72)
    mx = _overturning(p, ops, s, fy)
    my = _rolling_resistance(p, ops, s, fx)
    if mode in (0, 2):
        fx, my = 0.0 * fx, 0.0 * my
    if mode in (0, 1):
        fy, mx, mz = 0.0 * fy, 0.0 * mx, 0.0 * mz
    return TyreForces(fx, fy, mx, my, mz, kxk, lat.k_ya, mu_x, lat.mu_y, trail, mzr)


def _fy_prime(p, ops, s, fy0, g_yk):
    """The side force the pneumatic trail acts on (4.E74): Gyk Fy0 at zero camber, camber's own moment coming
    through the residual torque; MF-Tyre 5.2 takes Fy - SVyk = Gyk Fy0 instead."""
    if s.mf52:
        return g_yk * fy0
    upright, _ = _fy0(p, ops, SimpleNamespace(**{**vars(s), "gamma_y": 0.0}))
    return g_yk * upright


def curve(ops, b, c, d, e, x):
    """The Magic Formula's sine curve D sin(C arctan(B x - E (B x - arctan(B x)))) (4.E9, 4.E19)."""
    bx = b * x
    return d * ops.sin(c * ops.atan(bx - e * (bx - ops.atan(bx))))


def cosine_curve(ops, b, c, e, x):
    """Its cosine form cos(C arctan(B x - E (B x - arctan(B x)))), the weighting of combined slip and trail."""
    bx = b * x
    return ops.cos(c * ops.atan(bx - e * (bx - ops.atan(bx))))


def _state(p, ops, fz, kappa, alpha, gamma, vcx, pressure, mf52: bool) -> SimpleNamespace:
    """The normalised load and pressure, the slips as the equations use them, and the friction scalings; `vcx` is
    the rolling speed, never negative here."""
    fz0 = p.LFZO * p.FNOMIN  # (4.E1)
    tan_alpha = ops.tan(alpha)
    mu_x, mu_y = p.LMUX, p.LMUY
    if p.LMUV != 0:  # friction decaying with slip speed (4.E7); its speed |Vs| from the slips
        vs = ops.abs(vcx) * ops.sqrt(kappa * kappa + tan_alpha * tan_alpha + TINY)
        mu_x, mu_y = mu_x / (1 + p.LMUV * vs / p.LONGVL), mu_y / (1 + p.LMUV * vs / p.LONGVL)
    vc = ops.abs(vcx) * ops.sqrt(1 + tan_alpha * tan_alpha)  # |Vc|: Vcy = Vcx tan(alpha) in magnitude
    if mf52:  # the inclination scaled per direction; no pressure terms
        gamma_x, gamma_y, gamma_z = gamma * p.LGAX, gamma * p.LGAY, gamma * p.LGAZ
        dpi, pressure_ratio = 0.0, 1.0
    else:  # gamma* (4.E4) in the lateral force and the aligning moment
        gamma_x, gamma_y, gamma_z = gamma, ops.sin(gamma), ops.sin(gamma)
        dpi, pressure_ratio = (pressure - p.NOMPRES) / p.NOMPRES, pressure / p.NOMPRES  # (4.E2b)
    return SimpleNamespace(
        mf52=mf52,
        fz=fz,
        kappa=kappa,
        fz0=fz0,
        dfz=(fz - fz0) / fz0,  # (4.E2a)
        dpi=dpi,
        pressure_ratio=pressure_ratio,
        alpha=tan_alpha,  # alpha* (4.E3) at sgn(Vcx) = 1
        gamma_x=gamma_x,
        gamma_y=gamma_y,
        gamma_z=gamma_z,
        gamma=gamma,
        vcx=vcx,
        cos_alpha=vcx / (vc + EPSILON),  # cos'(alpha) (4.E6)
        lmux=mu_x,
        lmuy=mu_y,
        lmux_prime=_digressive(mu_x),  # (4.E8)
        lmuy_prime=_digressive(mu_y),
    )


def _digressive(lmu, a_mu: float = 10.0):
    """lambda'_mu = A lambda* / (1 + (A - 1) lambda*) with A_mu = 10 (4.E8): how the friction scaling enters
    the shifts."""
    return a_mu * lmu / (1 + (a_mu - 1) * lmu)


def _fx0(p, ops, s):
    """Pure longitudinal slip (4.E9-4.E18): Fx0, the slip stiffness Kxk and mu_x."""
    dfz, dpi = s.dfz, s.dpi
    sh_x = (p.PHX1 + p.PHX2 * dfz) * p.LHX * s.fade
    kappa_x = s.kappa + sh_x
    c_x = p.PCX1 * p.LCX
    mu_x = (p.PDX1 + p.PDX2 * dfz) * (1 + p.PPX3 * dpi + p.PPX4 * dpi * dpi) * (1 - p.PDX3 * s.gamma_x**2) * s.lmux
    d_x = mu_x * s.fz
    e_x = ops.fmin((p.PEX1 + p.PEX2 * dfz + p.PEX3 * dfz * dfz) * (1 - p.PEX4 * ops.sign(kappa_x)) * p.LEX, 1.0)
    k_xk = s.fz * (p.PKX1 + p.PKX2 * dfz) * ops.exp(p.PKX3 * dfz) * (1 + p.PPX1 * dpi + p.PPX2 * dpi * dpi) * p.LKX
    b_x = k_xk / (c_x * d_x + EPSILON)
    sv_x = s.fz * (p.PVX1 + p.PVX2 * dfz) * p.LVX * s.lmux_prime * s.fade
    return curve(ops, b_x, c_x, d_x, e_x, kappa_x) + sv_x, k_xk, mu_x


def _fy0(p, ops, s):
    """Pure lateral slip (4.E19-4.E30): Fy0 and the quantities the aligning moment reuses."""
    dfz, dpi, g = s.dfz, s.dpi, s.gamma_y
    k_ya = (
        p.PKY1
        * s.fz0
        * (1 + p.PPY1 * dpi)
        * (1 - p.PKY3 * ops.abs(g))
        * ops.sin(p.PKY4 * ops.atan(s.fz / s.fz0 / ((p.PKY2 + p.PKY5 * g * g) * (1 + p.PPY2 * dpi))))
        * p.LKY
    )
    k_ya_safe = k_ya + EPSILON * _sign_not_zero(ops, k_ya)  # Kya' (4.E39): never crosses zero
    sv_yg = s.fz * (p.PVY3 + p.PVY4 * dfz) * g * p.LKYC * s.lmuy_prime
    sv_y = (s.fz * (p.PVY1 + p.PVY2 * dfz) * p.LVY * s.lmuy_prime + sv_yg) * s.fade
    k_yg0 = s.fz * (p.PKY6 + p.PKY7 * dfz) * (1 + p.PPY5 * dpi) * p.LKYC
    camber_shift = p.PHY3 * g if s.mf52 else (k_yg0 * g - sv_yg) / k_ya_safe
    sh_y = ((p.PHY1 + p.PHY2 * dfz) * p.LHY + camber_shift) * s.fade
    alpha_y = s.alpha + sh_y
    c_y = p.PCY1 * p.LCY
    mu_y = (p.PDY1 + p.PDY2 * dfz) * (1 + p.PPY3 * dpi + p.PPY4 * dpi * dpi) * (1 - p.PDY3 * g * g) * s.lmuy
    d_y = mu_y * s.fz
    e_y = ops.fmin(
        (p.PEY1 + p.PEY2 * dfz) * (1 + p.PEY5 * g * g - (p.PEY3 + p.PEY4 * g) * ops.sign(alpha_y)) * p.LEY, 1.0
    )
    b_y = k_ya / (c_y * d_y + EPSILON)
    fy0 = curve(ops, b_y, c_y, d_y, e_y, alpha_y) + sv_y
    lat = SimpleNamespace(k_ya=k_ya, k_ya_safe=k_ya_safe, sh_y=sh_y, sv_y=sv_y, b_y=b_y, c_y=c_y, mu_y=mu_y)
    return fy0, lat


def _sign_not_zero(ops, x):
    """sign(x), with 1 at x = 0."""
    sign = ops.sign(x)
    return sign + 1 - ops.abs(sign)


def _g_xa(p, ops, s):
    """The weighting of Fx by the slip angle (4.E51-4.E57)."""
    b = (p.RBX1 + p.RBX3 * s.gamma_y**2) * ops.cos(ops.atan(p.RBX2 * s.kappa)) * p.LXAL
    c, e, sh = p.RCX1, ops.fmin(p.REX1 + p.REX2 * s.dfz, 1.0), p.RHX1
    return cosine_curve(ops, b, c, e, s.alpha + sh) / cosine_curve(ops, b, c, e, sh)


def _g_yk(p, ops, s, mu_y):
    """The weighting of Fy by the slip ratio and the force kappa induces at a slip angle (4.E59-4.E67)."""
    b = (p.RBY1 + p.RBY4 * s.gamma_y**2) * ops.cos(ops.atan(p.RBY2 * (s.alpha - p.RBY3))) * p.LYKA
    c, e, sh = p.RCY1, ops.fmin(p.REY1 + p.REY2 * s.dfz, 1.0), p.RHY1 + p.RHY2 * s.dfz
    g_yk = cosine_curve(ops, b, c, e, s.kappa + sh) / cosine_curve(ops, b, c, e, sh)
    d_vyk = mu_y * s.fz * (p.RVY1 + p.RVY2 * s.dfz + p.RVY3 * s.gamma_y) * ops.cos(ops.atan(p.RVY4 * s.alpha))
    sv_yk = d_vyk * ops.sin(p.RVY5 * ops.atan(p.RVY6 * s.kappa)) * p.LVYKA
    return g_yk, sv_yk


def _aligning(p, ops, s, lat, k_xk, fy):
    """The pneumatic trail t, the residual torque Mzr and the arm s of Fx (4.E31-4.E49, 4.E73-4.E78)."""
    dfz, dpi, g, r0 = s.dfz, s.dpi, s.gamma_z, p.UNLOADED_RADIUS
    sh_t = p.QHZ1 + p.QHZ2 * dfz + (p.QHZ3 + p.QHZ4 * dfz) * g
    alpha_t = s.alpha + sh_t
    alpha_r = s.alpha + lat.sh_y + lat.sv_y / lat.k_ya_safe  # SHf (4.E38)
    b_t = (
        (p.QBZ1 + p.QBZ2 * dfz + p.QBZ3 * dfz * dfz)
        * (1 + p.QBZ4 * g + p.QBZ5 * ops.abs(g) + p.QBZ6 * g * g)
        * p.LKY
        / s.lmuy
    )
    c_t = p.QCZ1
    d_t = (
        s.fz
        * (r0 / s.fz0)
        * (p.QDZ1 + p.QDZ2 * dfz)
        * (1 - p.PPZ1 * dpi)
        * p.LTR
        * (1 + p.QDZ3 * (g if s.mf52 else ops.abs(g)) + p.QDZ4 * g * g)
    )
    e_t = ops.fmin(
        (p.QEZ1 + p.QEZ2 * dfz + p.QEZ3 * dfz * dfz)
        * (1 + (p.QEZ4 + p.QEZ5 * g) * (2 / np.pi) * ops.atan(b_t * c_t * alpha_t)),
        1.0,
    )
    b_r = p.QBZ9 * p.LKY / s.lmuy + p.QBZ10 * lat.b_y * lat.c_y
    d_r = (
        s.fz
        * r0
        * (
            (p.QDZ6 + p.QDZ7 * dfz) * p.LRES
            + ((p.QDZ8 + p.QDZ9 * dfz) * (1 + p.PPZ2 * dpi) + (p.QDZ10 + p.QDZ11 * dfz) * ops.abs(g)) * g * p.LKZC
        )
        * s.lmuy
        * s.cos_alpha
        * s.fade
    )
    slip_ratio_term = (k_xk / lat.k_ya_safe) ** 2 * s.kappa * s.kappa
    alpha_t_eq = _equivalent_slip(ops, alpha_t, slip_ratio_term)  # (4.E77)
    alpha_r_eq = _equivalent_slip(ops, alpha_r, slip_ratio_term)  # (4.E78)
    trail = d_t * cosine_curve(ops, b_t, c_t, e_t, alpha_t_eq) * s.cos_alpha  # (4.E73)
    mzr = d_r * ops.cos(ops.atan(b_r * alpha_r_eq))  # (4.E75), C_r = 1
    arm = r0 * (p.SSZ1 + p.SSZ2 * fy / s.fz0 + (p.SSZ3 + p.SSZ4 * dfz) * g) * p.LS  # (4.E76)
    return trail, mzr, arm


def _equivalent_slip(ops, alpha, slip_ratio_term):
    """sqrt(alpha^2 + (Kxk/Kya')^2 kappa^2) sign(alpha) (4.E77, 4.E78), written as alpha plus the growth the slip
    ratio adds, so that its derivative is finite (1 in alpha) where alpha and kappa are both 0: straight running."""
    a2 = alpha * alpha + TINY
    return alpha + ops.sign(alpha) * (ops.sqrt(a2 + slip_ratio_term) - ops.sqrt(a2))


def _overturning(p, ops, s, fy):
    """The overturning moment Mx (4.E69); loads normalised by the unscaled FNOMIN."""
    g, fz_n, fy_n = s.gamma, s.fz / p.FNOMIN, fy / p.FNOMIN
    return (
        p.UNLOADED_RADIUS
        * s.fz
        * p.LMX
        * (
            p.QSX1 * p.LVMX
            - p.QSX2 * g * (1 + p.PPMX1 * s.dpi)
            + p.QSX3 * fy_n
            + p.QSX4
            * ops.cos(p.QSX5 * ops.atan((p.QSX6 * fz_n) ** 2))
            * ops.sin(p.QSX7 * g + p.QSX8 * ops.atan(p.QSX9 * fy_n))
            + p.QSX10 * ops.atan(p.QSX11 * fz_n) * g
        )
    )


def _rolling_resistance(p, ops, s, fx):
    """The rolling-resistance moment My as Besselink, Schmeitz and Pacejka (2010) write it (their A48): negative,
    against the wheel's spin, when rolling forward."""
    v = s.vcx / p.LONGVL
    g, fz_n = s.gamma, s.fz / p.FNOMIN
    return (
        -p.UNLOADED_RADIUS
        * p.FNOMIN
        * p.LMY
        * (p.QSY1 + p.QSY2 * fx / p.FNOMIN + p.QSY3 * ops.abs(v) + p.QSY4 * v**4 + (p.QSY5 + p.QSY6 * fz_n) * g * g)
        * fz_n
        * ops.power(ops.fmax(fz_n, LOAD_FLOOR), p.QSY7 - 1)
        * ops.power(s.pressure_ratio, p.QSY8)
    )
