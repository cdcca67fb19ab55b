"""States owned by force laws, on the Magic Formula tyre's first-order relaxation (dynamics/tyres/relaxation.py):
the engine integrates them with the motion, results and provenance carry them, and what cannot carry them refuses
by name. The relaxed slip is checked against the first-order lag of the contact's own slip, integrated here by the
exact exponential step with the relaxation length computed by hand from the .tir's PTY1, PTY2 and PKY3."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from mbstudio.dynamics.engine import engine
from mbstudio.model import ModelError, load, loads
from mbstudio.simulation.ensemble import simulate_ensemble
from mbstudio.simulation.manoeuvres import ManoeuvreOptions, manoeuvre
from mbstudio.simulation.run import simulate

ROOT = Path(__file__).resolve().parents[1]
TIR = ROOT / "samples" / "passenger_car_205_55R16.tir"
# the sample .tir's numbers: PTY1, PTY2, PKY3, UNLOADED_RADIUS, FNOMIN (LFZO and LSGAL are 1)
PTY1, PTY2, PKY3, R0, FZ0 = 2.1, 2.0, 0.5, 0.316, 4000.0
LOW_SPEED = 0.5  # m/s: the element's default v₀
SLIP_ANGLE = 2.0  # deg: the rig's wheel yawed on its sled


def sigma_alpha(fz: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """σα = PTY1 sin(2 atan(Fz / (PTY2 Fz0))) (1 − PKY3 |γ|) R0 (MF-Tyre; Besselink, Schmeitz and Pacejka 2010)."""
    return PTY1 * np.sin(2 * np.arctan(fz / (PTY2 * FZ0))) * (1 - PKY3 * np.abs(gamma)) * R0


def first_order_lag(t: np.ndarray, u: np.ndarray, tau: np.ndarray, start: float) -> np.ndarray:
    """z with τ ż + z = u from z(t₀) = start, by exact exponential steps over the samples (u and τ at each step's
    midpoint): its error is second order in the sample spacing."""
    z = np.empty_like(u)
    z[0] = start
    for k in range(len(u) - 1):
        decay = math.exp(-(t[k + 1] - t[k]) / ((tau[k] + tau[k + 1]) / 2))
        z[k + 1] = z[k] * decay + (1 - decay) * (u[k] + u[k + 1]) / 2
    return z


def sled(relaxation: str = "first_order", tir: str = str(TIR)) -> dict:
    """A wheel yawed by SLIP_ANGLE on a carrier that slides vertically on a sled driven along x: its slip angle is
    held by the joints, its load (408 kg on the tyre) by gravity."""
    a = math.radians(SLIP_ANGLE)

    def inertia(m: float, i: float) -> dict:
        return {"m": m, "mx": 0, "my": 0, "mz": 0, "Ixx": i, "Ixy": 0, "Ixz": 0, "Iyy": i, "Iyz": 0, "Izz": i}

    wheel = inertia(18.0, 0.7) | {"Iyy": 1.2}
    along_x = {"origin": [0, 0, 0], "z": [1, 0, 0], "x": [0, 1, 0]}
    yawed = {"origin": [0, 0, 0], "z": [-math.sin(a), math.cos(a), 0], "x": [math.cos(a), math.sin(a), 0]}
    return {
        "format": "mbstudio", "schema_version": 1, "name": "sled",
        "bodies": [{"label": "s", "name": "sled", "inertia": inertia(300.0, 10.0)},
                   {"label": "c", "name": "carrier", "inertia": inertia(390.0, 10.0)},
                   {"label": "w", "name": "wheel", "inertia": wheel, "points": {"centre": [0, 0, 0]}}],
        "joints": [
            {"name": "drive", "type": "prismatic", "parent": "0", "child": "s", "parent_frame": along_x,
             "child_frame": along_x, "coordinates": [{"name": "x", "initial": 0.0}]},
            {"name": "lift", "type": "prismatic", "parent": "s", "child": "c", "parent_frame": {"origin": [0, 0, 0]},
             "child_frame": {"origin": [0, 0, 0]}, "coordinates": [{"name": "z", "initial": 0.31 - 408 * 9.81 / 2e5}]},
            {"name": "spin", "type": "revolute", "parent": "c", "child": "w",
             "parent_frame": yawed,
             "child_frame": {"origin": [0, 0, 0], "z": [0, 1, 0], "x": [1, 0, 0]},
             "coordinates": [{"name": "phi", "initial": 0.0}]},
        ],
        "forces": [{"type": "magic_formula_tyre", "name": "tyre", "body": "w", "point": "centre", "tir": tir,
                    "relaxation": relaxation, "spin_axis": [0, 1, 0], "stiffness": 2e5, "damping": 3000.0,
                    "radius": 0.31}],
        "measures": [{"type": "force", "name": "load", "element": "tyre"}],
    }  # fmt: skip


ROLLING = np.array([10.0, 0.0, 10.0 / (0.31 - 408 * 9.81 / 2e5)])  # x, z, φ rates: 10 m/s, rolling freely


@pytest.fixture(scope="module")
def sled_run():
    return simulate(loads(json.dumps(sled())), 0.4, samples=801, velocities=ROLLING, rtol=1e-9, atol=1e-11)


def test_a_relaxed_tyre_s_slip_lags_by_its_relaxation_length_over_the_speed(sled_run):
    """Rolling at 10 m/s onto a held 2° slip angle from a relaxed slip of 0: tan α' follows tan α with the time
    constant σα/V, σα from the .tir by hand at the measured load (0.531 m at 4 kN: 53 ms); the run's relaxed slip
    equals the first-order lag integrated here to 1e-6 of the slip (measured 4.5e-9), it reaches 1 − 1/e of the
    slip at σα/V within 1e-3 (measured 2e-5), and the lateral force lags with it (a third of it still missing at
    σα/V, none at 0.4 s)."""
    column = {name: values for name, _, values in sled_run.columns()}
    t, relaxed = sled_run.t, column["tyre.tan_alpha_relaxed"]
    slip = np.tan(column["load.alpha"])
    tau = sigma_alpha(column["load.fz"], column["load.gamma"]) / np.hypot(column["load.vx"], LOW_SPEED)
    assert abs(slip).min() > 0.99 * math.tan(math.radians(SLIP_ANGLE))  # held by the joints
    assert np.abs(relaxed - first_order_lag(t, slip, tau, 0.0)).max() < 1e-6 * np.abs(slip).max()
    target = (1 - math.exp(-1)) * slip[-1]
    k = int(np.argmax(np.abs(relaxed) >= abs(target)))
    crossing = float(np.interp(abs(target), np.abs(relaxed[k - 1 : k + 1]), t[k - 1 : k + 1]))
    assert abs(crossing / tau[: k + 1].mean() - 1) < 1e-3
    fy = column["load.fy"]
    assert 0.55 < np.interp(crossing, t, fy) / fy[-1] < 0.75 and abs(fy[-1] / fy[-40] - 1) < 1e-3


def test_a_run_carries_the_laws_states_in_its_columns_and_provenance_and_balances_energy(sled_run):
    names = ["tyre.kappa_relaxed", "tyre.tan_alpha_relaxed"]
    assert sled_run.provenance.law_states == names
    assert [(name, unit) for name, unit, _ in sled_run.law_states] == [(n, "1") for n in names]
    assert {name for name, _, _ in sled_run.columns()} >= set(names)
    assert sled_run.energy_drift < 1e-8  # E + dissipated, the tyre's work integrated with the motion: 5e-12


def test_an_ensemble_carries_each_run_s_law_states(sled_run):
    """Two runs of the sled as one system (the ensemble's CVODES) give each its own relaxed slips, as a run alone:
    the 10 m/s run's equal the single run's to 1e-6 of the slip (both at rtol 1e-9), and the 5 m/s run's are the
    first-order lag of its own slip with τ = σα/V to 1e-6 of it."""
    model = loads(json.dumps(sled()))
    runs = simulate_ensemble(model, 0.4, velocities=[ROLLING, ROLLING / 2], samples=801, rtol=1e-9, atol=1e-11)
    alone = dict((name, v) for name, _, v in sled_run.law_states)["tyre.tan_alpha_relaxed"]
    assert np.abs(runs[0].law_states[1][2] - alone).max() < 1e-6 * np.abs(alone).max()
    assert runs[1].provenance.law_states == sled_run.provenance.law_states
    column = {name: values for name, _, values in runs[1].columns()}
    slip = np.tan(column["load.alpha"])
    tau = sigma_alpha(column["load.fz"], column["load.gamma"]) / np.hypot(column["load.vx"], LOW_SPEED)
    lag = first_order_lag(runs[1].t, slip, tau, 0.0)
    assert np.abs(column["tyre.tan_alpha_relaxed"] - lag).max() < 1e-6 * np.abs(slip).max()


def test_the_numpy_path_integrates_the_laws_states_as_the_compiled_engine(sled_run):
    """The reference path (numpy right-hand side, scipy's DOP853) carries the relaxed slips too: its relaxed slips
    and lateral force equal the compiled engine's CVODES run (both at rtol 1e-9) to 1e-6 of their scale (measured:
    tan α' 4e-10 and κ' 2e-8 of the largest slip, Fy 3e-10), and its energy balance holds (9e-13)."""
    model = loads(json.dumps(sled()))
    reference = simulate(model, 0.4, method="DOP853", compiled=False, samples=801, velocities=ROLLING, rtol=1e-9,
                         atol=1e-11)  # fmt: skip
    slip = max(float(np.abs(values).max()) for _, _, values in sled_run.law_states)
    for (name, _, ours), (other, _, theirs) in zip(reference.law_states, sled_run.law_states, strict=True):
        assert name == other and np.abs(ours - theirs).max() < 1e-6 * slip
    fy = [{n: v for n, _, v in run.columns()}["load.fy"] for run in (reference, sled_run)]
    assert np.abs(fy[0] - fy[1]).max() < 1e-6 * np.abs(fy[1]).max()
    assert reference.provenance.law_states == sled_run.provenance.law_states and reference.energy_drift < 1e-6


def test_what_cannot_carry_the_laws_states_refuses_them_by_name(tmp_path):
    model = loads(json.dumps(sled()))
    with pytest.raises(ModelError, match=r"own states \(tyre.kappa_relaxed, tyre.tan_alpha_relaxed\) that rigid"):
        simulate(model, 0.1, contact="rigid", velocities=ROLLING)
    eng = engine(model)
    q = np.asarray(eng.mech.assemble(None))[0]
    with pytest.raises(ModelError, match="that linearisation does not carry"):
        eng.jacobians(0.0, q, np.zeros(len(eng.independent)))
    with pytest.raises(ModelError, match=r"relaxation.*is not a tyre relaxation model.*none or first_order"):
        simulate(loads(json.dumps(sled("second_order"))), 0.1)
    lacking = tmp_path / "lacking.tir"
    lacking.write_text("".join(line for line in TIR.read_text().splitlines(True) if not line.startswith("PTY1")))
    (tmp_path / "sled.mbs").write_text(json.dumps(sled(tir="lacking.tir")))
    with pytest.raises(ModelError, match="has no relaxation length: PTY1 is absent or 0"):
        simulate(load(tmp_path / "sled.mbs"), 0.1)


@pytest.mark.slow
def test_the_step_steer_with_relaxation_lags_each_tyre_s_slip_by_sigma_over_v():
    """ISO 7401 at 20 m/s, 4° handwheel, every tyre relaxed: each tyre's relaxed slip is the first-order lag of its
    own slip with τ = σα(Fz, γ)/V (21-26 ms) to 1e-3 of its largest slip (measured 6e-5) while the lag itself is
    9-35 % of it; the steady yaw rate is the unrelaxed car's (2.198 deg/s both) and the yaw rate peaks later
    relatively higher (overshoot 9.7 % against 6.7 %); the energy balance E + dissipated holds (7.7e-8 of the largest
    kinetic energy; 6.3e-8 without relaxation)."""
    car = load(ROOT / "samples" / "vehicle_handling.mbs")
    options = {"kind": "step_steer", "speeds": (20.0,), "handwheel": 4.0, "samples": 3001}
    relaxed = manoeuvre(car, ManoeuvreOptions(relaxation="first_order", **options))
    plain = manoeuvre(car, ManoeuvreOptions(relaxation="none", **options))
    run = relaxed.runs[0]
    column = {name: values for name, _, values in run.columns()}
    for corner in ("fl", "fr", "rl", "rr"):
        load_ = {k: column[f"{corner}_load.{k}"] for k in ("fz", "alpha", "gamma", "vx")}
        slip = np.tan(load_["alpha"])
        tau = sigma_alpha(load_["fz"], load_["gamma"]) / np.hypot(load_["vx"], LOW_SPEED)
        own = column[f"{corner}_tyre.tan_alpha_relaxed"]
        lag = first_order_lag(run.t, slip, tau, own[0])
        assert np.abs(own - lag).max() < 1e-3 * np.abs(slip).max()
        assert np.abs(own - slip).max() > 0.05 * np.abs(slip).max()  # a lag the check can see
    steady = (relaxed.figures["steady_yaw_rate"][0], plain.figures["steady_yaw_rate"][0])
    assert abs(steady[0] / steady[1] - 1) < 1e-3
    assert relaxed.figures["overshoot"][0] > plain.figures["overshoot"][0]
    assert run.energy_drift < 1e-6
