"""The tyre's first-order relaxation (Pacejka, Tire and Vehicle Dynamics, 3rd ed., 2012, sections 7.2 and 8.2):
the contact patch's deflection lags the slip, so the forces follow the slips through a first-order system whose
time constant is the relaxation length over the rolling speed.

In slip form, with V = sqrt(Vcx² + v₀²) the speed the steady slips divide by (force_laws/magic_formula_tyre_law.py):

    σκ dκ'/dt + V κ' = −Vsx          (steady: κ' = κ = −Vsx / V)
    σα dtan α'/dt + V tan α' = Vsy   (steady: tan α' = tan α = Vsy / V)

and the Magic Formula is evaluated at (κ', α'). The relaxation lengths at the load Fz and inclination γ are
MF-Tyre's (Besselink, Schmeitz and Pacejka 2010; the .tir keys PTX1-3, PTY1-2, scaled by LSGKP, LSGAL):

    σκ = Fz (PTX1 + PTX2 dfz) exp(−PTX3 dfz) (R0 / Fz0') λσκ
    σα = PTY1 sin(2 atan(Fz / (PTY2 Fz0'))) (1 − PKY3 |γ|) R0 λFz0 λσα

with Fz0' = λFz0 Fz0 and dfz = (Fz − Fz0') / Fz0'. The load is floored at LOAD_SHARE of the nominal one, so that a
wheel leaving the road keeps a finite time constant instead of an infinitely fast one.
"""

from __future__ import annotations

from ...model.errors import ModelError
from .coefficients import Coefficients

LOAD_SHARE = 0.05  # of the nominal load: the least load the relaxation lengths are evaluated at


def check_relaxation(c: Coefficients, where: str) -> None:
    """A ModelError naming the first key a relaxation length needs that the file lacks (or has as 0)."""
    for key in ("PTX1", "PTY1", "PTY2"):
        if c.values.get(key, 0.0) == 0.0:
            raise ModelError(f"{where} ({c.source})", f"has no relaxation length: {key} is absent or 0", None,
                             "a .tir file with PTX1, PTX2, PTX3, PTY1 and PTY2, or relaxation 'none'")  # fmt: skip


def relaxation_lengths(c: Coefficients, fz, gamma, ops) -> tuple:
    """(σκ, σα) [m] at the loads fz and inclinations γ (module docstring), in any back-end `ops`."""
    p = c.values
    fz0 = p["LFZO"] * p["FNOMIN"]
    load = ops.fmax(fz, LOAD_SHARE * fz0)
    dfz = (load - fz0) / fz0
    r0 = p["UNLOADED_RADIUS"]
    sigma_kappa = load * (p["PTX1"] + p["PTX2"] * dfz) * ops.exp(-p["PTX3"] * dfz) * (r0 / fz0) * p["LSGKP"]
    shape = ops.sin(2 * ops.atan(load / (p["PTY2"] * fz0)))
    sigma_alpha = p["PTY1"] * shape * (1 - p["PKY3"] * ops.abs(gamma)) * r0 * p["LFZO"] * p["LSGAL"]
    return sigma_kappa, sigma_alpha
