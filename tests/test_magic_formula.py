"""The Magic Formula 6.1 and the .tir reader, checked by independent routes: a direct transcription of the printed
equations (Pacejka 2012, 4.E1-4.E78; Besselink, Schmeitz and Pacejka 2010, A48) at stated points; the `pacejka`
package's Magic Formula curve on a grid; physical properties (antisymmetry, the curve through its shift point, the
peak friction, the cornering stiffness by a finite difference, by CasADi's exact derivative and by its closed form);
the CasADi-traced function against numpy; and the reader's refusals."""

from __future__ import annotations

import math
from pathlib import Path

import casadi
import numpy as np
import pytest

from mbstudio.dynamics.tyres import coefficients, load_tyre, magic_formula, parse_tir, read_tir
from mbstudio.model.errors import ModelError

SAMPLE = Path(__file__).parents[1] / "samples" / "passenger_car_205_55R16.tir"
TEXT = SAMPLE.read_text()


def variant(**changes: float | str) -> str:
    """The sample's text with some entries' values replaced (each key must be in the file once)."""
    lines = TEXT.splitlines()
    for key, value in changes.items():
        found = [i for i, line in enumerate(lines) if line.split("=")[0].strip() == key]
        assert len(found) == 1, key
        lines[found[0]] = f"{key} = {value}"
    return "\n".join(lines) + "\n"


def tyre(**changes):
    return coefficients(parse_tir(variant(**changes), "variant.tir"))


# Every scaling factor away from 1 and friction decaying with slip speed, so that a factor in the wrong place shows
SCALED = dict(
    LFZO=1.1,
    LCX=0.95,
    LMUX=0.9,
    LEX=1.1,
    LKX=1.05,
    LHX=1.2,
    LVX=1.3,
    LCY=1.02,
    LMUY=0.85,
    LEY=0.9,
    LKY=1.1,
    LKYC=0.8,
    LKZC=1.2,
    LHY=1.1,
    LVY=0.9,
    LTR=1.05,
    LRES=0.95,
    LXAL=1.1,
    LYKA=0.9,
    LVYKA=1.2,
    LS=0.8,
    LMX=1.1,
    LVMX=0.9,
    LMY=1.2,
    LMUV=0.3,
    PVX1=0.01,
    PVX2=-0.005,
    QBZ9=5.0,
    QDZ10=0.1,
    QDZ11=-0.05,
    QSY2=0.01,
    QSY5=0.002,
    QSY6=0.001,
    PKY5=0.3,
    PEY5=0.4,
    PPY5=0.2,
    PPZ2=0.1,
    QBZ6=0.2,
)


# ------------------------------------------------------------------------------ the printed equations, by hand
def hand(P: dict, Fz, kappa, alpha, gamma, Vcx, p, mf52: bool = False) -> dict:
    """One point of MF 6.1 transcribed line by line from the printed equations, scalars only (math module); with
    `mf52`, MF 5.2's forms where they differ (no pressure, the inclination scaled per direction, PHY3, QDZ3 on
    gamma_z, Fy' = Fy - SVyk)."""
    sgn = lambda x: math.copysign(1.0, x) if x != 0 else 0.0  # noqa: E731
    eps = 1e-6
    Fz0p = P["LFZO"] * P["FNOMIN"]  # 4.E1
    dfz = (Fz - Fz0p) / Fz0p  # 4.E2a
    dpi = 0.0 if mf52 else (p - P["NOMPRES"]) / P["NOMPRES"]  # 4.E2b
    a_s = math.tan(alpha) * sgn(Vcx)  # 4.E3
    if mf52:
        g_x, g_y, g_z = gamma * P["LGAX"], gamma * P["LGAY"], gamma * P["LGAZ"]
    else:
        g_x, g_y, g_z = gamma, math.sin(gamma), math.sin(gamma)  # 4.E4
    Vc = math.hypot(Vcx, Vcx * math.tan(alpha))
    cos_a = Vcx / (Vc + eps)  # 4.E6
    Vs = abs(Vcx) * math.hypot(kappa, math.tan(alpha))
    lmux = P["LMUX"] / (1 + P["LMUV"] * Vs / P["LONGVL"])  # 4.E7
    lmuy = P["LMUY"] / (1 + P["LMUV"] * Vs / P["LONGVL"])
    lmux_p = 10 * lmux / (1 + 9 * lmux)  # 4.E8
    lmuy_p = 10 * lmuy / (1 + 9 * lmuy)

    # longitudinal, pure slip
    SHx = (P["PHX1"] + P["PHX2"] * dfz) * P["LHX"]  # 4.E17
    kx = kappa + SHx  # 4.E10
    Cx = P["PCX1"] * P["LCX"]  # 4.E11
    mux = (P["PDX1"] + P["PDX2"] * dfz) * (1 + P["PPX3"] * dpi + P["PPX4"] * dpi**2) * (1 - P["PDX3"] * g_x**2) * lmux
    Dx = mux * Fz  # 4.E12
    Ex = min((P["PEX1"] + P["PEX2"] * dfz + P["PEX3"] * dfz**2) * (1 - P["PEX4"] * sgn(kx)) * P["LEX"], 1.0)
    Kxk = Fz * (P["PKX1"] + P["PKX2"] * dfz) * math.exp(P["PKX3"] * dfz) * (1 + P["PPX1"] * dpi + P["PPX2"] * dpi**2)
    Kxk *= P["LKX"]  # 4.E15
    Bx = Kxk / (Cx * Dx + eps)  # 4.E16
    SVx = Fz * (P["PVX1"] + P["PVX2"] * dfz) * P["LVX"] * lmux_p  # 4.E18
    Fx0 = Dx * math.sin(Cx * math.atan(Bx * kx - Ex * (Bx * kx - math.atan(Bx * kx)))) + SVx  # 4.E9

    # lateral, pure slip
    Kya = P["PKY1"] * Fz0p * (1 + P["PPY1"] * dpi) * (1 - P["PKY3"] * abs(g_y))
    Kya *= math.sin(P["PKY4"] * math.atan(Fz / Fz0p / ((P["PKY2"] + P["PKY5"] * g_y**2) * (1 + P["PPY2"] * dpi))))
    Kya *= P["LKY"]  # 4.E25
    Kyap = Kya + eps * (1.0 if Kya >= 0 else -1.0)
    SVyg = Fz * (P["PVY3"] + P["PVY4"] * dfz) * g_y * P["LKYC"] * lmuy_p  # 4.E28
    SVy = Fz * (P["PVY1"] + P["PVY2"] * dfz) * P["LVY"] * lmuy_p + SVyg  # 4.E29
    Kyg0 = Fz * (P["PKY6"] + P["PKY7"] * dfz) * (1 + P["PPY5"] * dpi) * P["LKYC"]  # 4.E30
    SHy = (P["PHY1"] + P["PHY2"] * dfz) * P["LHY"] + (P["PHY3"] * g_y if mf52 else (Kyg0 * g_y - SVyg) / Kyap)
    ay = a_s + SHy  # 4.E20
    Cy = P["PCY1"] * P["LCY"]  # 4.E21
    muy = (P["PDY1"] + P["PDY2"] * dfz) * (1 + P["PPY3"] * dpi + P["PPY4"] * dpi**2) * (1 - P["PDY3"] * g_y**2) * lmuy
    Dy = muy * Fz  # 4.E22
    Ey = (P["PEY1"] + P["PEY2"] * dfz) * (1 + P["PEY5"] * g_y**2 - (P["PEY3"] + P["PEY4"] * g_y) * sgn(ay))
    Ey = min(Ey * P["LEY"], 1.0)  # 4.E24
    By = Kya / (Cy * Dy + eps)  # 4.E26
    Fy0 = Dy * math.sin(Cy * math.atan(By * ay - Ey * (By * ay - math.atan(By * ay)))) + SVy  # 4.E19

    # combined slip
    Bxa = (P["RBX1"] + P["RBX3"] * g_y**2) * math.cos(math.atan(P["RBX2"] * kappa)) * P["LXAL"]  # 4.E54
    Exa = min(P["REX1"] + P["REX2"] * dfz, 1.0)
    wx = lambda x: math.cos(P["RCX1"] * math.atan(Bxa * x - Exa * (Bxa * x - math.atan(Bxa * x))))  # noqa: E731
    Fx = wx(a_s + P["RHX1"]) / wx(P["RHX1"]) * Fx0  # 4.E50-4.E53
    Byk = (P["RBY1"] + P["RBY4"] * g_y**2) * math.cos(math.atan(P["RBY2"] * (a_s - P["RBY3"]))) * P["LYKA"]
    Eyk = min(P["REY1"] + P["REY2"] * dfz, 1.0)
    SHyk = P["RHY1"] + P["RHY2"] * dfz
    wy = lambda x: math.cos(P["RCY1"] * math.atan(Byk * x - Eyk * (Byk * x - math.atan(Byk * x))))  # noqa: E731
    Gyk = wy(kappa + SHyk) / wy(SHyk)  # 4.E59-4.E61
    DVyk = muy * Fz * (P["RVY1"] + P["RVY2"] * dfz + P["RVY3"] * g_y) * math.cos(math.atan(P["RVY4"] * a_s))
    SVyk = DVyk * math.sin(P["RVY5"] * math.atan(P["RVY6"] * kappa)) * P["LVYKA"]  # 4.E66-4.E67
    Fy = Gyk * Fy0 + SVyk  # 4.E58

    # aligning moment
    R0 = P["UNLOADED_RADIUS"]
    SHt = P["QHZ1"] + P["QHZ2"] * dfz + (P["QHZ3"] + P["QHZ4"] * dfz) * g_z  # 4.E35
    at = a_s + SHt
    ar = a_s + SHy + SVy / Kyap  # 4.E37-4.E38
    Bt = (
        (P["QBZ1"] + P["QBZ2"] * dfz + P["QBZ3"] * dfz**2)
        * (1 + P["QBZ4"] * g_z + P["QBZ5"] * abs(g_z) + P["QBZ6"] * g_z**2)
        * P["LKY"]
        / lmuy
    )  # 4.E40
    Ct = P["QCZ1"]
    Dt0 = Fz * (R0 / Fz0p) * (P["QDZ1"] + P["QDZ2"] * dfz) * (1 - P["PPZ1"] * dpi) * P["LTR"] * sgn(Vcx)  # 4.E42
    Dt = Dt0 * (1 + P["QDZ3"] * (g_z if mf52 else abs(g_z)) + P["QDZ4"] * g_z**2)  # 4.E43
    Et = (P["QEZ1"] + P["QEZ2"] * dfz + P["QEZ3"] * dfz**2) * (
        1 + (P["QEZ4"] + P["QEZ5"] * g_z) * (2 / math.pi) * math.atan(Bt * Ct * at)
    )
    Et = min(Et, 1.0)  # 4.E44
    Br = P["QBZ9"] * P["LKY"] / lmuy + P["QBZ10"] * By * Cy  # 4.E45
    Dr = (
        Fz
        * R0
        * (
            (P["QDZ6"] + P["QDZ7"] * dfz) * P["LRES"]
            + ((P["QDZ8"] + P["QDZ9"] * dfz) * (1 + P["PPZ2"] * dpi) + (P["QDZ10"] + P["QDZ11"] * dfz) * abs(g_z))
            * g_z
            * P["LKZC"]
        )
        * lmuy
        * sgn(Vcx)
        * cos_a
    )  # 4.E47
    at_eq = math.copysign(math.sqrt(at**2 + (Kxk / Kyap) ** 2 * kappa**2), at) if at else 0.0  # 4.E77
    ar_eq = math.copysign(math.sqrt(ar**2 + (Kxk / Kyap) ** 2 * kappa**2), ar) if ar else 0.0  # 4.E78
    t = Dt * math.cos(Ct * math.atan(Bt * at_eq - Et * (Bt * at_eq - math.atan(Bt * at_eq)))) * cos_a  # 4.E73
    Mzr = Dr * math.cos(math.atan(Br * ar_eq))  # 4.E75
    s = R0 * (P["SSZ1"] + P["SSZ2"] * Fy / Fz0p + (P["SSZ3"] + P["SSZ4"] * dfz) * g_z) * P["LS"]  # 4.E76
    upright = mf52 or gamma == 0  # else camber acts through Mzr, not through the trail
    Fy0_upright = Fy0 if upright else hand(P, Fz, kappa, alpha, 0.0, Vcx, p)["Fy0"]
    Mz = -t * (Gyk * Fy0_upright) + Mzr + s * Fx  # 4.E71-4.E72, 4.E74

    # overturning and rolling resistance, loads over FNOMIN
    Fz0 = P["FNOMIN"]
    Mx = (
        R0
        * Fz
        * P["LMX"]
        * (
            P["QSX1"] * P["LVMX"]
            - P["QSX2"] * gamma * (1 + P["PPMX1"] * dpi)
            + P["QSX3"] * Fy / Fz0
            + P["QSX4"]
            * math.cos(P["QSX5"] * math.atan((P["QSX6"] * Fz / Fz0) ** 2))
            * math.sin(P["QSX7"] * gamma + P["QSX8"] * math.atan(P["QSX9"] * Fy / Fz0))
            + P["QSX10"] * math.atan(P["QSX11"] * Fz / Fz0) * gamma
        )
    )  # 4.E69
    V0 = P["LONGVL"]
    My = (
        -R0
        * Fz0
        * P["LMY"]
        * (
            P["QSY1"]
            + P["QSY2"] * Fx / Fz0
            + P["QSY3"] * abs(Vcx / V0)
            + P["QSY4"] * (Vcx / V0) ** 4
            + (P["QSY5"] + P["QSY6"] * Fz / Fz0) * gamma**2
        )
        * (Fz / Fz0) ** P["QSY7"]
        * (1.0 if mf52 else (p / P["NOMPRES"]) ** P["QSY8"])
    )  # Besselink et al. 2010, A48
    return dict(
        Fx=Fx,
        Fy=Fy,
        Mx=Mx,
        My=My,
        Mz=Mz,
        Fx0=Fx0,
        Fy0=Fy0,
        Kxk=Kxk,
        Kya=Kya,
        Dx=Dx,
        Dy=Dy,
        Bx=Bx,
        Cx=Cx,
        Ex=Ex,
        By=By,
        Cy=Cy,
        Ey=Ey,
        SHx=SHx,
        SVx=SVx,
        SHy=SHy,
        SVy=SVy,
        t=t,
        Mzr=Mzr,
    )


# Fz [N], kappa, alpha [rad], gamma [rad], Vcx [m/s], pressure [Pa]: pure and combined slip, both signs of camber,
# loads below and above nominal, pressure off nominal
POINTS = [
    (4000.0, 0.0, 0.0, 0.0, 20.0, 220e3),
    (4000.0, 0.08, 0.0, 0.0, 20.0, 220e3),
    (2500.0, -0.15, 0.06, 0.03, 15.0, 200e3),
    (6500.0, 0.04, -0.1, -0.05, 30.0, 250e3),
    (3000.0, -0.02, 0.2, 0.08, 8.0, 240e3),
    (5200.0, 0.3, -0.03, -0.02, 25.0, 180e3),
]


@pytest.mark.parametrize("changes", [{}, SCALED], ids=["sample", "scaled"])
def test_the_forces_and_moments_match_the_printed_equations_by_hand(changes):
    c = tyre(**changes)
    worst = _worst_against_hand(c, mf52=False)
    print(f"worst relative difference from the hand route: {worst:.2e}")


def _worst_against_hand(c, mf52: bool) -> float:
    """The largest difference of the five forces and moments from the hand route at POINTS (each asserted within
    1e-9, relative to the value or to a thousandth of its scale where the value is near zero); the slip
    stiffnesses within 1e-12."""
    worst = 0.0
    for point in POINTS:
        ours = magic_formula(c, *point)
        expected = hand(c.values, *point, mf52=mf52)
        fz = point[0]
        for name, scale in (("Fx", fz), ("Fy", fz), ("Mx", fz * 0.316), ("My", fz * 0.316), ("Mz", fz * 0.316)):
            got, want = float(getattr(ours, name.lower())), expected[name]
            error = abs(got - want) / max(abs(want), 1e-3 * scale)
            worst = max(worst, error)
            assert error <= 1e-9, (point, name, got, want)
        if not mf52:
            assert float(ours.cornering_stiffness) == pytest.approx(expected["Kya"], rel=1e-12)
            assert float(ours.longitudinal_stiffness) == pytest.approx(expected["Kxk"], rel=1e-12)
    return worst


def test_the_point_of_the_sample_at_nominal_conditions_has_the_values_worked_out_on_paper():
    """At Fz = FNOMIN, nominal pressure, no camber and kappa = 0.08 (alpha = 0) every load, pressure and camber
    factor is 1, so Fx = PDX1 Fz sin(PCX1 atan(B x - E (B x - atan(B x)))) with x = kappa + PHX1 and
    B = PKX1 / (PCX1 PDX1) (Kxk = PKX1 Fz): the numbers below are that, worked on paper from the file's values."""
    fz, kappa = 4000.0, 0.08
    b = 22.0 * fz / (1.60 * 1.15 * fz + 1e-6)
    x = kappa + 0.0002
    e = 0.45 * (1 - 0.05)
    fx = 1.15 * fz * math.sin(1.60 * math.atan(b * x - e * (b * x - math.atan(b * x))))
    ours = magic_formula(load_tyre(SAMPLE), fz, kappa, 0.0, 0.0, 20.0)
    assert float(ours.fx) == pytest.approx(fx, rel=1e-12)
    assert float(ours.longitudinal_stiffness) == pytest.approx(22.0 * fz, rel=1e-14)
    # Kya = PKY1 Fz0 sin(PKY4 atan(1 / PKY2)) at the nominal load
    assert float(ours.cornering_stiffness) == pytest.approx(-20.0 * fz * math.sin(2 * math.atan(1 / 1.8)), rel=1e-14)


# MF 6.1's additions to MF 5.2, which an MF 5.2 file does not have
_ADDITIONS = (
    "NOMPRES INFLPRES PKY4 PKY5 PKY6 PKY7 PEY5 PPX1 PPX2 PPX3 PPX4 PPY1 PPY2 PPY3 PPY4 PPY5 PPZ1 PPZ2 PPMX1 RBX3 RBY4 "
    "QBZ6 QDZ10 QDZ11 QSY5 QSY6 QSY7 QSY8 LKYC LKZC"
)
MF61_ADDITIONS = _ADDITIONS.split()


def mf52_text(phy3=0.03, lgax=0.9, lgay=1.1, lgaz=0.8) -> str:
    """The sample as an MF 5.2 file: FITTYP 6, without MF 6.1's additions, with PHY3 and the camber scalings."""
    lines = [line for line in variant(FITTYP=6).splitlines() if line.split("=")[0].strip() not in MF61_ADDITIONS]
    text = "\n".join(lines) + "\n"
    text = text.replace("PHY2 ", f"PHY3 = {phy3}\nPHY2 ", 1)
    return text.replace("LMUV ", f"LGAX = {lgax}\nLGAY = {lgay}\nLGAZ = {lgaz}\nLMUV ", 1)


def test_mf52_matches_its_printed_equations_by_hand():
    c = coefficients(parse_tir(mf52_text(), "mf52.tir"))
    assert c.version == "MF 5.2" and not any("PHY3" in note or "LGAY" in note for note in c.notes)
    worst = _worst_against_hand(c, mf52=True)
    print(f"MF 5.2: worst relative difference from the hand route: {worst:.2e}")


def test_mf52_without_camber_is_mf61_without_its_additions():
    """At zero inclination and nominal pressure the two versions differ only by MF 6.1's additional terms: with
    those at the values that remove them (PKY4 = 2 as MF 5.2 writes it, QSY7 = 1, the rest 0) they agree."""
    removed = dict.fromkeys(["PKY5", "PKY6", "PKY7", "PEY5", "PPX1", "PPX2", "PPX3", "PPX4", "PPY1", "PPY2"], 0.0)
    removed |= dict.fromkeys(["PPY3", "PPY4", "PPY5", "PPZ1", "PPZ2", "PPMX1", "RBX3", "RBY4", "QBZ6", "QDZ10"], 0.0)
    removed |= dict(QDZ11=0.0, QSY5=0.0, QSY6=0.0, QSY7=1.0, QSY8=0.0, PKY4=2.0)
    mf61 = tyre(**removed)
    mf52 = coefficients(parse_tir(mf52_text()))
    for fz, kappa, alpha, _, vcx, _ in POINTS:
        a = magic_formula(mf61, fz, kappa, alpha, 0.0, vcx, 220e3)
        b = magic_formula(mf52, fz, kappa, alpha, 0.0, vcx)
        for name in ("fx", "fy", "mx", "my", "mz"):
            assert float(getattr(a, name)) == pytest.approx(float(getattr(b, name)), rel=1e-14, abs=1e-12 * fz)
    # and camber makes them differ (PHY3, the scalings, sin)
    a, b = magic_formula(mf61, 4000.0, 0.0, 0.05, 0.05, 20.0), magic_formula(mf52, 4000.0, 0.0, 0.05, 0.05, 20.0)
    assert abs(float(a.fy - b.fy)) > 1.0


# ------------------------------------------------------------------------------ the `pacejka` package
def test_the_pure_slip_curves_match_the_pacejka_package_on_a_grid():
    """`pacejka` 0.1.0 evaluates the curve D sin(C atan(B x - E (B x - atan(B x)))) from B, C, D and E it is
    given (its own load laws differ from MF 6.1's and are not compared). Given the B, C, D, E of the printed
    equations (the hand route) at each load and camber, its curve shifted by SH and SV must be the module's Fx0
    and Fy0 (pure slip: USE_MODE 3) over the slip range."""
    pacejka = pytest.importorskip("pacejka")
    c = tyre(USE_MODE=3)
    loads, cambers = [1000.0, 2500.0, 4000.0, 6000.0, 8000.0], [-0.08, 0.0, 0.05, 0.1]
    kappas, alphas = np.linspace(-1.0, 1.0, 41), np.linspace(-0.5, 0.5, 41)
    worst = {"Fx": 0.0, "Fy": 0.0}
    for fz in loads:
        for gamma in cambers:
            ours_x = magic_formula(c, fz, kappas, 0.0, gamma, 20.0).fx
            ours_y = magic_formula(c, fz, 0.0, alphas, gamma, 20.0).fy
            for kappa, got in zip(kappas, ours_x, strict=True):
                h = hand(c.values, fz, kappa, 0.0, gamma, 20.0, 220e3)
                tire = pacejka.Tire.from_constants("x", h["Dx"] / fz, b_x=h["Bx"], c_x=h["Cx"], e_x=h["Ex"])
                _, fx = tire.calculate_forces(fz, 0.0, kappa + h["SHx"], friction_circle=False, alpha_unit="rad")
                worst["Fx"] = max(worst["Fx"], abs(got - (fx + h["SVx"])) / h["Dx"])
            for alpha, got in zip(alphas, ours_y, strict=True):
                h = hand(c.values, fz, 0.0, alpha, gamma, 20.0, 220e3)
                tire = pacejka.Tire.from_constants(
                    "y", h["Dy"] / fz, b_x=1.0, c_x=1.0, e_x=0.0, b_y=h["By"], c_y=h["Cy"], e_y=h["Ey"]
                )
                fy = tire.calculate_lateral_force(fz, math.tan(alpha) + h["SHy"], alpha_unit="rad")
                worst["Fy"] = max(worst["Fy"], abs(got - (fy + h["SVy"])) / h["Dy"])
    print(f"pacejka {pacejka.__version__}: worst difference over the peak force {worst}")
    assert max(worst.values()) <= 1e-9, worst


# ------------------------------------------------------------------------------ physical properties
def test_fx_is_odd_in_the_slip_ratio_when_no_coefficient_breaks_the_symmetry():
    c = tyre(PHX1=0.0, PHX2=0.0, PVX1=0.0, PVX2=0.0, PEX4=0.0)
    kappas = np.linspace(0.001, 1.0, 200)
    for fz, gamma in ((4000.0, 0.0), (2000.0, 0.05), (7000.0, -0.1)):
        forward = magic_formula(c, fz, kappas, 0.0, gamma, 20.0).fx
        backward = magic_formula(c, fz, -kappas, 0.0, gamma, 20.0).fx
        assert np.max(np.abs(forward + backward)) <= 4 * np.finfo(float).eps * fz * 1.15
    # and PEX4 breaks it
    c = tyre()
    driving, braking = (float(magic_formula(c, 4000.0, k, 0.0, 0.0, 20.0).fx) for k in (0.3, -0.3))
    assert abs(driving + braking) > 10


# the coefficients that shift the curves off the origin (ply steer, conicity, the kappa-induced side force) at 0
UNSHIFTED = dict(PHX1=0.0, PHX2=0.0, PVX1=0.0, PVX2=0.0, PHY1=0.0, PHY2=0.0, PVY1=0.0, PVY2=0.0, RHX1=0.0)
UNSHIFTED |= dict(RHY1=0.0, RHY2=0.0, RVY1=0.0, RVY2=0.0)
LOW = 0.5  # m/s: the tyre law's low speed in samples/vehicle_handling.mbs
SPEEDS = (0.06, -0.06, 5.0, -5.0)


def slip_power(c, vcx: float, gamma: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Fx Vsx + Fy Vsy over a grid of sliding velocities at 3500 N and forward speed `vcx`, with the slips as the
    tyre law forms them (denominator sqrt(Vcx^2 + LOW^2)), and |Vsx| + |Vsy|."""
    magnitudes = np.concatenate([np.geomspace(1e-4, 1.0, 13), [0.0]])
    vsx, vsy = (v.ravel() for v in np.meshgrid(*2 * [np.concatenate([magnitudes, -magnitudes])]))
    speed = math.hypot(vcx, LOW)
    f = magic_formula(c, 3500.0, -vsx / speed, np.arctan(vsy / speed), gamma, vcx, low_speed=LOW)
    return f.fx * vsx + f.fy * vsy, np.abs(vsx) + np.abs(vsy)


@pytest.mark.parametrize("vcx", SPEEDS)
def test_the_side_force_opposes_sideways_sliding_rolling_either_way(vcx):
    """Sliding 0.01 m/s sideways at 3500 N, forwards or backwards, slowly or at speed: the side force opposes the
    sliding (it pushed along it rolling backwards when the slip angle's sign turned with the rolling direction
    twice, once in the slip's |Vcx| and again in alpha* = tan(alpha) sgn(Vcx)). At speed the slip angle 0.002 rad
    is near the ply-steer shift, so the force is small one way (35 N) and large the other (215 N)."""
    c = load_tyre(SAMPLE)
    for vsy in (0.01, -0.01):
        alpha = math.atan(vsy / math.hypot(vcx, LOW))
        fy = float(magic_formula(c, 3500.0, 0.0, alpha, 0.0, vcx, low_speed=LOW).fy)
        assert fy * vsy < 0 and abs(fy) > 30, (vsy, fy)


@pytest.mark.parametrize("vcx", (*SPEEDS, 0.0))
def test_the_tyre_never_drives_its_own_sliding_without_shifts(vcx):
    """With no shift coefficients, no camber: Fx Vsx + Fy Vsy <= 0 for every sliding velocity, pure and combined,
    rolling either way and at standstill. The sample tyre at standstill too, where rolling forwards and backwards
    are blended half and half and its offsets cancel; at speed its offsets (the forces at zero slip) bound what
    its slip power can gain."""
    power, _ = slip_power(tyre(**UNSHIFTED), vcx)
    assert power.max() <= 0.0
    sample = load_tyre(SAMPLE)
    power, sliding = slip_power(sample, vcx)
    if vcx == 0.0:
        assert power.max() <= 0.0
    offsets = magic_formula(sample, 3500.0, 0.0, 0.0, 0.0, vcx, low_speed=LOW)
    assert np.all(power <= sliding * max(abs(float(offsets.fx)), abs(float(offsets.fy))))


def test_rolling_backwards_is_the_tyre_turned_round_and_standstill_is_smooth():
    """At or beyond the low speed backwards, the forces are the tyre's rolling forwards at the slips seen from the
    turned tyre (-kappa, -alpha, -gamma), with Fx, Fy, Mx, My turned back and Mz unchanged; forwards at or above it
    they are the printed equations' (the hand route checks those at 8-30 m/s). Through standstill they change
    continuously (no jump of sgn(Vcx)), with a continuous slope at the band's edges."""
    c = load_tyre(SAMPLE)
    slips = (3500.0, 0.03, 0.04, 0.02)
    for speed in (LOW, 5.0):
        back = magic_formula(c, *slips, -speed, low_speed=LOW)
        turned = magic_formula(c, 3500.0, -0.03, -0.04, -0.02, speed, low_speed=LOW)
        for name, sign in (("fx", -1), ("fy", -1), ("mx", -1), ("my", -1), ("mz", 1)):
            got, want = float(getattr(back, name)), sign * float(getattr(turned, name))
            assert got == pytest.approx(want, rel=4 * np.finfo(float).eps, abs=1e-12 * 3500), name
    fy = lambda v: float(magic_formula(c, *slips, v, low_speed=LOW).fy)  # noqa: E731
    h = 1e-7
    assert abs(fy(h) - fy(-h)) < 1e-3  # N: the slope there, 0.75 (Fy forwards - turned) / LOW, is ~100 N s/m
    for edge in (LOW, -LOW):
        inside = (fy(edge) - fy(edge - math.copysign(1e-4, edge))) / 1e-4
        outside = (fy(edge + math.copysign(1e-4, edge)) - fy(edge)) / 1e-4
        assert abs(inside - outside) < 1.0  # N/(m/s): slopes agree to O(h) where the blend ends


def test_the_lateral_curve_passes_through_its_shift_point():
    """Fy0 = SVy where alpha* = -SHy (4.E19-4.E20); at alpha = 0 and no camber, Fy0 is the curve at SHy plus SVy."""
    c = tyre(USE_MODE=3)
    for fz in (2000.0, 4000.0, 6500.0):
        h = hand(c.values, fz, 0.0, 0.0, 0.0, 20.0, 220e3)
        assert h["SHy"] != 0 and h["SVy"] != 0
        at_shift = magic_formula(c, fz, 0.0, math.atan(-h["SHy"]), 0.0, 20.0).fy
        assert float(at_shift) == pytest.approx(h["SVy"], rel=1e-12)
        by, cy, dy, ey, shy = h["By"], h["Cy"], h["Dy"], h["Ey"], h["SHy"]
        at_zero = dy * math.sin(cy * math.atan(by * shy - ey * (by * shy - math.atan(by * shy)))) + h["SVy"]
        assert float(magic_formula(c, fz, 0.0, 0.0, 0.0, 20.0).fy) == pytest.approx(at_zero, rel=1e-12)
    # with no shift coefficients, Fy(alpha = 0, gamma = 0) is exactly zero
    c = tyre(USE_MODE=3, PHY1=0.0, PHY2=0.0, PVY1=0.0, PVY2=0.0)
    assert float(magic_formula(c, 4000.0, 0.0, 0.0, 0.0, 20.0).fy) == 0.0


@pytest.mark.parametrize("lmux, lmuy", [(1.0, 1.0), (0.8, 0.7)])
def test_the_peak_friction_at_the_nominal_load_is_pdx1_lmux(lmux, lmuy):
    """With no vertical shift, the peak of D sin(C atan(...)) for C > 1 is D = PDX1 LMUX Fz at the nominal load
    and pressure without camber (likewise PDY1 LMUY laterally)."""
    from scipy.optimize import minimize_scalar

    c = tyre(USE_MODE=3, LMUX=lmux, LMUY=lmuy, PVX1=0.0, PVX2=0.0, PVY1=0.0, PVY2=0.0)
    fz = 4000.0
    fx = lambda k: -float(magic_formula(c, fz, k, 0.0, 0.0, 20.0).fx)  # noqa: E731
    fy = lambda a: float(magic_formula(c, fz, 0.0, a, 0.0, 20.0).fy)  # noqa: E731 (Fy < 0 for alpha > 0)
    peak_x = -minimize_scalar(fx, bounds=(0.01, 0.5), method="bounded", options={"xatol": 1e-10}).fun
    peak_y = -minimize_scalar(fy, bounds=(0.01, 0.5), method="bounded", options={"xatol": 1e-10}).fun
    assert peak_x / fz == pytest.approx(1.15 * lmux, rel=1e-9)
    assert peak_y / fz == pytest.approx(0.95 * lmuy, rel=1e-9)


def test_the_cornering_stiffness_by_finite_difference_exact_derivative_and_closed_form():
    """With no lateral shifts, no camber and nominal pressure, dFy/dalpha at alpha = 0 is By Cy Dy = Kya
    Cy Dy / (Cy Dy + eps) and Kya = PKY1 Fz0 sin(PKY4 atan(Fz / (PKY2 Fz0))) (the MF 5.2 form, PKY4 = 2)."""
    c = tyre(USE_MODE=3, PHY1=0.0, PHY2=0.0, PVY1=0.0, PVY2=0.0)
    alpha = casadi.SX.sym("alpha")
    fz_sym = casadi.SX.sym("fz")
    fy = magic_formula(c, fz_sym, 0.0, alpha, 0.0, 20.0).fy
    slope = casadi.Function("slope", [fz_sym, alpha], [casadi.jacobian(fy, alpha)])
    for fz in (1000.0, 2500.0, 4000.0, 6000.0, 9000.0):
        closed = -20.0 * 4000.0 * math.sin(2 * math.atan(fz / (1.8 * 4000.0)))
        ours = magic_formula(c, fz, 0.0, 0.0, 0.0, 20.0)
        assert float(ours.cornering_stiffness) == pytest.approx(closed, rel=1e-14)
        cd = float(ours.mu_y) * fz * 1.35
        exact = float(slope(fz, 0.0))
        assert exact == pytest.approx(closed * cd / (cd + 1e-6), rel=1e-12)
        assert exact == pytest.approx(closed, rel=1e-9)
        h = 1e-5  # central difference: truncation (B h)^2 ~ 1e-8, rounding eps Fz / h ~ 1e-10 of the slope
        fd = float(magic_formula(c, fz, 0.0, h, 0.0, 20.0).fy - magic_formula(c, fz, 0.0, -h, 0.0, 20.0).fy) / (2 * h)
        assert fd == pytest.approx(exact, rel=1e-7)


# ------------------------------------------------------------------------------ CasADi against numpy
def test_the_traced_function_gives_numpys_numbers():
    c = tyre(**SCALED)
    names = ("fz", "kappa", "alpha", "gamma", "vcx", "p")
    symbols = [casadi.SX.sym(n) for n in names]
    f = magic_formula(c, *symbols)
    outputs = ("fx", "fy", "mx", "my", "mz", "trail", "residual_torque")
    traced = casadi.Function("mf", symbols, [getattr(f, o) for o in outputs])
    rng = np.random.default_rng(35)
    n = 400
    grid = (
        rng.uniform(500, 9000, n),
        rng.uniform(-1, 1, n),
        rng.uniform(-0.6, 0.6, n),
        rng.uniform(-0.15, 0.15, n),
        rng.uniform(1, 40, n),
        rng.uniform(180e3, 260e3, n),
    )
    ours = magic_formula(c, *grid)
    fz = grid[0]
    for k in range(n):
        values = traced(*(g[k] for g in grid))
        for o, v in zip(outputs, values, strict=True):
            scale = fz[k] * (1.0 if o in ("fx", "fy") else 0.316) if o != "trail" else 0.316
            assert abs(float(v) - getattr(ours, o)[k]) <= 1e-13 * max(abs(getattr(ours, o)[k]), scale), (o, k)


@pytest.mark.parametrize(
    "point",
    [
        (4000.0, 0.0, 0.0, 0.0, 20.0, 220e3),  # straight running: alpha_t = alpha_r = kappa = 0
        (0.0, 0.1, 0.1, 0.02, 20.0, 220e3),  # touching down
        (-100.0, 0.1, 0.1, 0.02, 20.0, 220e3),  # off the ground
        (4000.0, 0.0, 0.0, 0.0, 0.0, 220e3),  # standing still
    ],
    ids=["straight", "touching", "lifted", "standstill"],
)
def test_the_exact_derivatives_are_finite_where_the_formulas_have_corners(point):
    """The compiled engine will differentiate the tyre: its Jacobian must be finite at straight running (the
    equivalent slips' square roots at 0), at zero load ((Fz/Fz0)^QSY7) and with friction decaying with slip speed
    (|Vs| at zero slip)."""
    c = tyre(QHZ1=0.0, QHZ2=0.0, PHY1=0.0, PHY2=0.0, PVY1=0.0, PVY2=0.0, LMUV=0.2)
    x = casadi.SX.sym("x", 6)
    f = magic_formula(c, *(x[i] for i in range(6)))
    outputs = casadi.vertcat(f.fx, f.fy, f.mx, f.my, f.mz)
    jacobian = np.array(casadi.Function("j", [x], [casadi.jacobian(outputs, x)])(point))
    assert np.all(np.isfinite(jacobian))
    if point[0] > 0 and point[4] > 0:  # dFy/dalpha at straight running is the cornering stiffness
        stiffness = float(magic_formula(c, *point).cornering_stiffness)
        assert jacobian[1, 2] == pytest.approx(stiffness, rel=1e-9)


def test_the_engines_object_arrays_of_symbols_give_numpys_numbers():
    """The compiled engine traces with numpy object arrays of SX entries (numerics/compiled.py): the same module
    takes them and its outputs compile to numpy's numbers."""
    from mbstudio.numerics.compiled import symbols, to_sx

    c = tyre()
    (fz_sx, fz), (k_sx, kappa), (a_sx, alpha) = (symbols(name, 4) for name in ("fz", "kappa", "alpha"))
    f = magic_formula(c, fz, kappa, alpha, 0.03, 20.0)
    outputs = ("fx", "fy", "mx", "my", "mz")
    traced = casadi.Function("mf", [fz_sx, k_sx, a_sx], [to_sx(getattr(f, o)) for o in outputs])
    values = np.array([500.0, 3000.0, 4000.0, 0.0]), np.array([0.05, -0.1, 0.0, 0.2]), np.array([0.02, 0.0, -0.3, 0.1])
    ours = magic_formula(c, *values, 0.03, 20.0)
    for o, v in zip(outputs, traced(*values), strict=True):
        scale = 4000.0 * (1.0 if o in ("fx", "fy") else 0.316)
        assert np.max(np.abs(np.asarray(v).ravel() - getattr(ours, o))) <= 1e-13 * scale, o


def test_use_mode_chooses_the_forces():
    point = (4000.0, 0.1, 0.05, 0.02, 20.0)
    combined = magic_formula(tyre(), *point)
    pure = magic_formula(tyre(USE_MODE=3), *point)
    assert float(pure.fx) == pytest.approx(hand(tyre().values, *point, 220e3)["Fx0"], rel=1e-12)
    assert abs(float(pure.fx)) > abs(float(combined.fx))  # the slip angle takes friction from Fx
    lateral_only = magic_formula(tyre(USE_MODE=2), *point)
    assert float(lateral_only.fx) == 0.0 and float(lateral_only.fy) == float(pure.fy)
    assert float(magic_formula(tyre(USE_MODE=1), *point).fy) == 0.0


def test_a_lifted_wheel_has_no_force():
    f = magic_formula(tyre(), np.array([0.0, -100.0]), 0.1, 0.1, 0.05, 20.0)
    for name in ("fx", "fy", "mx", "my", "mz"):
        assert np.all(getattr(f, name) == 0.0), name


# ------------------------------------------------------------------------------ the reader
def test_the_sample_reads_with_its_units_and_notes():
    tir = read_tir(SAMPLE)
    assert tir.version == "MF 6.1" and tir.use_mode == 4
    assert tir.number("DIMENSION", "UNLOADED_RADIUS") == 0.316
    c = load_tyre(SAMPLE)
    assert any("VERTICAL_STIFFNESS" in note for note in c.notes)  # read, kept, not used by the Magic Formula


def test_units_are_converted_to_si():
    text = variant(
        LENGTH="'mm'",
        FORCE="'kN'",
        UNLOADED_RADIUS=316.0,
        FNOMIN=4.0,
        NOMPRES=0.00022,
        INFLPRES=0.00022,
        LONGVL=16700.0,
        VERTICAL_STIFFNESS=0.21,
    )
    tir = parse_tir(text)
    assert tir.number("DIMENSION", "UNLOADED_RADIUS") == pytest.approx(0.316, rel=1e-14)
    assert tir.number("VERTICAL", "FNOMIN") == pytest.approx(4000.0, rel=1e-14)
    assert tir.number("OPERATING_CONDITIONS", "NOMPRES") == pytest.approx(220e3, rel=1e-14)  # kN/mm^2
    assert tir.number("MODEL", "LONGVL") == pytest.approx(16.7, rel=1e-14)
    assert tir.number("VERTICAL", "VERTICAL_STIFFNESS") == pytest.approx(210e3, rel=1e-14)
    same = magic_formula(coefficients(tir), 3000.0, 0.05, 0.05, 0.02, 20.0)
    reference = magic_formula(load_tyre(SAMPLE), 3000.0, 0.05, 0.05, 0.02, 20.0)
    assert float(same.mz) == pytest.approx(float(reference.mz), rel=1e-13)
    in_bar = variant(NOMPRES=2.2).replace("TIME ", "PRESSURE = 'bar'\nTIME ", 1)
    assert parse_tir(in_bar).number("OPERATING_CONDITIONS", "NOMPRES") == pytest.approx(220e3, rel=1e-14)


def test_unknown_keys_are_named_in_the_notes():
    c = coefficients(parse_tir(TEXT.replace("PCX1 ", "PXQ9 = 3\nPCX1 ", 1)))
    assert any("PXQ9" in note and "LONGITUDINAL_COEFFICIENTS" in note for note in c.notes)
    tir = parse_tir(TEXT.replace("TIME ", "LUMINOSITY = 'candela'\nTIME ", 1))
    assert any("LUMINOSITY" in note for note in tir.notes)


@pytest.mark.parametrize(
    "text, words",
    [
        (TEXT.replace("PCX1 ", "$PCX1 ", 1), ["PCX1", "[LONGITUDINAL_COEFFICIENTS]", "has no"]),
        (variant(LENGTH="'furlong'"), ["LENGTH", "furlong", "meter", "variant.tir:13"]),
        (variant(PDX1="nan"), ["PDX1", "not a finite number", "variant.tir:"]),
        (variant(PKY1="-inf"), ["PKY1", "not a finite number"]),
        (TEXT.replace("[INERTIA]", "[TYRE_COLOUR]", 1), ["unknown section", "TYRE_COLOUR"]),
        (variant(FITTYP=62), ["MF 6.2", "FITTYP", "61 (MF 6.1)"]),
        (variant(FNOMIN=0.0), ["FNOMIN", "must be positive", "variant.tir:"]),
        (variant(FITTYP=99), ["FITTYP", "99", "61 (MF 6.1)"]),
        (variant(USE_MODE=7), ["USE_MODE", "last digit"]),
        (variant(PCY1="'soft'"), ["PCY1", "not a number", "soft"]),
        (TEXT.replace("PCX1 ", "PDX1 = 1.0\nPCX1 ", 1), ["PDX1", "twice"]),
        (TEXT + "[LATERAL_COEFFICIENTS]\n", ["repeats the section"]),
        ("PCX1 = 1\n" + TEXT, ["before the first [SECTION]", ":1"]),
        (variant(PCX1="'1.6"), ["closing quote"]),
        (TEXT.replace("PCX1 ", "PCX1 1.6\nPCY9 ", 1), ["neither", "PCX1 1.6"]),
        (TEXT.replace("[MODEL]", "[MODEL]\n" + "x" * 5000, 1), ["longer than 4096"]),
    ],
    ids=[
        "missing",
        "unit",
        "nan",
        "inf",
        "section",
        "mf62",
        "fnomin",
        "fittyp",
        "use_mode",
        "string",
        "twice",
        "section twice",
        "no section",
        "quote",
        "syntax",
        "long line",
    ],
)
def test_the_reader_refuses_bad_files_with_clear_messages(text, words):
    with pytest.raises(ModelError) as caught:
        coefficients(parse_tir(text, "variant.tir"))
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))


def test_a_file_is_read_with_bounded_lines(tmp_path: Path):
    huge = tmp_path / "huge.tir"
    with huge.open("wb") as stream:
        stream.write(b"[MODEL]\nFITTYP = 61\n")
        stream.write(b"9" * 10_000_000)  # one 10 MB line: refused after reading 4 kB of it
    with pytest.raises(ModelError, match="huge.tir:3.*longer than 4096"):
        read_tir(huge)
    with pytest.raises(ModelError, match="cannot be read"):
        read_tir(tmp_path / "absent.tir")


def test_tables_fortran_exponents_and_both_comment_marks_are_read():
    text = TEXT.replace(
        "[SCALING_COEFFICIENTS]", "[SHAPE]\n{radial width}\n 1.0 0.0\n 1.0D+00 0.4 ! edge\n[SCALING_COEFFICIENTS]", 1
    ).replace("LMUX                     = 1", "LMUX = 0.9D0 ! wet", 1)
    tir = parse_tir(text)
    assert tir.tables["SHAPE"] == [[1.0, 0.0], [1.0, 0.4]]
    assert tir.number("SCALING_COEFFICIENTS", "LMUX") == 0.9
    assert tir.sections["MODEL"]["TYRESIDE"].value == "LEFT"
