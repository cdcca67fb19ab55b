"""Identification from measured logs on the double pendulum: the estimate against the truth, units in headers, the
filtering chain, every bad log refused with a message (from Python and from the command line), and `excite`.

The logs come from our inverse dynamics (RNEA, not the regressor the identification uses) along a Fourier motion,
positions quantised like an 18-bit encoder, torques with Gaussian noise of 2 % of their RMS."""

from __future__ import annotations

import functools
import json
import re
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics.closed_loop import closed_loop_inverse_dynamics
from mbstudio.identification import filtering
from mbstudio.identification.identify import identify
from mbstudio.identification.logs import parse_log
from mbstudio.identification.observation import sample_states
from mbstudio.identification.pipeline import base_parameters
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, dumps
from mbstudio.progress import Cancelled

from .identify_logs import fourier_motion, log_text, quantised

NOISE = 0.02
RATE = 200.0


@functools.cache
def model_and_base(name: str = "double_pendulum"):
    model = samples.load(name)
    return model, base_parameters(model, "vp", [30]).vp.final


def truth(name: str = "double_pendulum") -> np.ndarray:
    model, base = model_and_base(name)
    mech = Mechanism(model)
    phi = np.concatenate([np.asarray(mech.tree.geometry.inertia(b), float) for b in model.bodies])
    return np.asarray(base.base_map(), float) @ phi


def motion_and_forces(name: str, count: int, seed: int, still: int | None = None):
    """A Fourier motion of the independent coordinates (coordinate `still` held at its initial value) and the
    actuator forces it needs, by the RNEA projected on the independent coordinates."""
    model, _ = model_and_base(name)
    mech = Mechanism(model)
    q0 = np.asarray(mech.tree.initial_coordinates(), float)[list(mech.partition.independent)]
    amplitude = np.full(len(q0), 1.0)
    if still is not None:
        amplitude[still] = 0.0
    m = fourier_motion(count, RATE, q0, amplitude, 0.3, seed=seed)
    q, qd, _ = sample_states(mech, m.t, lambda times, order: (m.q, m.qd, m.qdd)[order])
    return mech, m, closed_loop_inverse_dynamics(mech, q, qd, m.qdd)


def good_log(seed: int = 0, count: int = 2000, units=None, still: int | None = None, motion_seed: int = 7) -> str:
    mech, m, tau = motion_and_forces("double_pendulum", count, motion_seed, still)
    noisy = tau + NOISE * np.sqrt((tau**2).mean(axis=0)) * np.random.default_rng(seed).normal(size=tau.shape)
    return log_text(m.t, mech.independent, quantised(m.q), mech.independent, noisy, units)


def run(text: str, **options):
    model, base = model_and_base()
    return identify(model, parse_log(text, Mechanism(model), "log.csv"), base=base, **options)


def test_estimate_lies_within_its_uncertainty_and_the_validation_error_at_the_noise_level():
    result = run(good_log(seed=1), validate=parse_log(good_log(seed=2, motion_seed=8), Mechanism(model_and_base()[0])))
    assert result.rank == 6 and not result.held
    z = (result.values - truth()) / result.std
    assert np.all(np.abs(z) < 4), z
    assert np.all(result.relative_std[result.model_values != 0] < 5)  # all six well excited (my1 = my2 = 0)
    # the filtered noise left in the torques: 2 % of the rms times √(2 f_c / f_s), the share of the band kept
    s = result.settings
    level = NOISE * np.sqrt(2 * s.cutoff_hz / s.rate_hz)
    assert 0.7 * level < result.validation.overall < 1.6 * level
    assert set(result.validation.relative_rms) == {"theta1", "theta2"}
    document = result.to_json()
    assert {"rank", "base_parameters", "friction", "validation_relative_rms", "filter", "provenance"} <= set(document)
    first = document["base_parameters"][0]
    assert {"name", "expression", "value", "std", "relative_std"} <= set(first)
    assert first["expression"] == "mx1 + m2" and first["model_value"] == pytest.approx(truth()[0])
    assert document["filter"]["cutoff_hz"] == s.cutoff_hz and document["filter"]["order"] == 4
    assert document["provenance"]["digits"] == 30 and document["provenance"]["log"]["samples"] == 2000


def test_units_in_the_headers_are_converted_to_si():
    radians = run(good_log())
    units = {"theta1": ("deg", 180 / np.pi), "theta2": ("mrad", 1e3), "tau_theta1": ("N·mm", 1e3), "t": ("ms", 1e3)}
    converted = run(good_log(units=units))
    np.testing.assert_allclose(converted.values, radians.values, rtol=1e-6)
    assert converted.observations.log.units["theta1"] == "deg"


def test_friction_is_identified_with_the_inertial_parameters():
    mech, m, tau = motion_and_forces("double_pendulum", 2000, 7)
    viscous, coulomb = np.array([0.8, 0.3]), np.array([0.5, 0.2])
    tau = tau + viscous * m.qd + coulomb * np.sign(m.qd)
    noisy = tau + NOISE * np.sqrt((tau**2).mean(axis=0)) * np.random.default_rng(3).normal(size=tau.shape)
    text = log_text(m.t, mech.independent, quantised(m.q), mech.independent, noisy)
    result = run(text, friction=("coulomb", "viscous"))
    found = {f["name"]: f for f in result.friction}
    assert list(found) == ["Fv_theta1", "Fv_theta2", "Fc_theta1", "Fc_theta2"]
    for name, true in zip(found, np.concatenate([viscous, coulomb]), strict=True):
        assert abs(found[name]["value"] - true) < 4 * found[name]["std"], name
    assert np.all(np.abs(result.values - truth()) < 4 * result.std)


def test_cancel_stops_the_run():
    stop = threading.Event()
    seen = []

    def progress(fraction, message):
        seen.append(fraction)
        if fraction > 0.5:
            stop.set()

    with pytest.raises(Cancelled):
        run(good_log(), progress=progress, cancel=stop)
    assert seen == sorted(seen) and max(seen) < 1


# ---------------------------------------------------------------------------------------- the filtering chain
def test_cut_off_rule_and_derivatives():
    t = np.arange(4000) / 500.0
    q = np.column_stack([0.3 * np.sin(2 * np.pi * 1.5 * t), 0.1 * np.sin(2 * np.pi * 0.5 * t + 1)])
    s = filtering.choose_settings(quantised(q), 500.0)
    assert 1.4 < s.bandwidth_hz < 1.7 and s.cutoff_hz == pytest.approx(5 * s.bandwidth_hz)
    assert s.decimation == int(500 / (2 * s.cutoff_hz)) and s.order == 4
    filtered, qd, qdd = filtering.derivatives(quantised(q), s)
    inner = slice(s.edge, -s.edge)
    w = 2 * np.pi * 1.5
    assert np.abs(filtered[inner, 0] - q[inner, 0]).max() < 1e-4
    assert np.abs(qd[inner, 0] - 0.3 * w * np.cos(w * t[inner])).max() < 2e-3 * 0.3 * w
    assert np.abs(qdd[inner, 0] + 0.3 * w**2 * np.sin(w * t[inner])).max() < 5e-3 * 0.3 * w**2
    given = filtering.choose_settings(q, 500.0, cutoff_hz=20.0)
    assert given.rule == "given" and given.decimation == 12 and given.at_rate(1000.0).decimation == 25
    with pytest.raises(ModelError, match="Nyquist"):
        filtering.choose_settings(q, 500.0, cutoff_hz=300.0)


def turning(rate: float, fast_hz: float, seconds: float = 20.0):
    """A joint turning at 2 rev/s whose speed fluctuates at 0.5 Hz and at `fast_hz`: the fast fluctuation is 0.04 %
    of the detrended positions' power but a third of the velocities'. Positions (N, 1) and velocities (N, 1)."""
    t = np.arange(round(seconds * rate)) / rate
    w1, w2 = 2 * np.pi * 0.5, 2 * np.pi * fast_hz
    a2 = 0.01 * 15 / fast_hz  # the same velocity amplitude whatever fast_hz
    q = 4 * np.pi * t + 0.5 * np.sin(w1 * t) + a2 * np.sin(w2 * t)
    qd = 4 * np.pi + 0.5 * w1 * np.cos(w1 * t) + a2 * w2 * np.cos(w2 * t)
    return q[:, None], qd[:, None]


@pytest.mark.parametrize("fast_hz", [8.0, 15.0, 30.0])
def test_cut_off_from_the_velocity_spectrum(fast_hz):
    """The velocities' bandwidth finds the fast fluctuation the positions' spectrum hides, from quantised positions,
    from noisy positions (its noise level read from the top of the band) and from logged velocities; the cut-off
    is 5 times it."""
    q, qd = turning(1000.0, fast_hz)
    rng = np.random.default_rng(1)
    for positions, velocities in (
        (quantised(q), None),
        (q + 2e-4 * rng.normal(size=q.shape), None),
        (quantised(q), qd + 0.05 * rng.normal(size=qd.shape)),
    ):
        s = filtering.choose_settings(positions, 1000.0, velocities=velocities)
        assert s.position_bandwidth_hz < 1.0
        assert fast_hz - 0.2 < s.velocity_bandwidth_hz < fast_hz + 0.2
        assert s.cutoff_hz == pytest.approx(5 * s.velocity_bandwidth_hz) and not s.capped
        assert s.velocities == ("differenced positions" if velocities is None else "logged")
        assert f"{s.velocity_bandwidth_hz:.3g} Hz" in s.rule


def test_cut_off_is_capped_and_says_why():
    q, _ = turning(200.0, 30.0)
    s = filtering.choose_settings(quantised(q), 200.0)
    assert s.capped and s.cutoff_hz == 50.0 and "CAPPED" in s.rule and "d_<name>" in s.rule
    assert s.to_json()["capped"] and s.at_rate(400.0).capped


def test_a_log_with_velocities_uses_them():
    mech, m, tau = motion_and_forces("double_pendulum", 2000, 7, None)
    text = log_text(m.t, mech.independent, quantised(m.q), mech.independent, tau)
    lines = text.splitlines()
    lines[0] += "," + ",".join(f"{c}_dot [deg/s]" for c in mech.independent)
    lines[1:] = [line + "," + ",".join(f"{np.degrees(v):.17g}" for v in m.qd[k]) for k, line in enumerate(lines[1:])]
    log = parse_log("\n".join(lines), mech, "log.csv")
    np.testing.assert_allclose(log.velocities, m.qd, rtol=1e-14)
    assert log.notes == [
        "velocity column(s) d_theta1, d_theta2 used: the accelerations are their derivative, not a second "
        "difference of the positions",
        "column(s) theta1_dot, theta2_dot read as d_theta1, d_theta2 (a rate is d_NAME)",
    ]
    header = lines[0].rsplit(",", len(mech.independent))[0] + "".join(f",d_{c} [deg/s]" for c in mech.independent)
    named = parse_log("\n".join([header, *lines[1:]]), mech, "log.csv")
    np.testing.assert_array_equal(named.velocities, log.velocities)  # d_NAME, the one name, needs no note
    assert len(named.notes) == 1
    s = filtering.choose_settings(log.positions, log.rate, velocities=log.velocities)
    _, qd, qdd = filtering.derivatives(log.positions, s, log.velocities)
    inner = slice(s.edge, -s.edge)
    # what the filter's start-up leaves past the dropped edges (3 periods of the cut-off): 10⁻⁵ of the peak
    np.testing.assert_allclose(qd[inner], m.qd[inner], atol=3e-5 * np.abs(m.qd).max())
    np.testing.assert_allclose(qdd[inner], m.qdd[inner], atol=1e-4 * np.abs(m.qdd).max())
    with pytest.raises(ModelError, match=re.escape("velocity column(s) d_theta1 but not d_theta2")):
        parse_log("\n".join(line.rsplit(",", 1)[0] for line in lines), mech, "log.csv")


# ---------------------------------------------------------------------------------------- bad logs
def _lines(text: str) -> list[str]:
    return text.splitlines()


def _set(text: str, row: int, column: int, value: str) -> str:
    lines = _lines(text)
    cells = lines[row].split(",")
    cells[column] = value
    lines[row] = ",".join(cells)
    return "\n".join(lines)


def _drop_column(text: str, column: int) -> str:
    return "\n".join(",".join(c for k, c in enumerate(line.split(",")) if k != column) for line in _lines(text))


def _add_column(text: str, name: str) -> str:
    lines = _lines(text)
    return "\n".join([lines[0] + f",{name}"] + [line + ",0" for line in lines[1:]])


BAD_LOGS = {
    "missing column": (lambda t: _drop_column(t, 4), "lacks the column(s) tau_theta2"),
    "repeated name": (lambda t: _add_column(t, "theta1"), "names a column more than once"),
    "time going back": (lambda t: _set(t, 11, 0, "0.0"), "line 12, column 't': the time does not rise"),
    "irregular time": (lambda t: "\n".join(_lines(t)[:500] + _lines(t)[503:]), "the time step is irregular"),
    "NaN": (lambda t: _set(t, 40, 2, "nan"), "line 41, column 'theta2': is not a finite number"),
    "a word": (lambda t: _set(t, 41, 3, "n/a"), "line 42, column 'tau_theta1': is not a finite number"),
    "short row": (lambda t: _set(t, 42, 4, "1,2"), "line 43: has 6 values for 5 columns"),
    "length unit on an angle": (
        lambda t: t.replace("theta1,", "theta1 [mm],", 1),
        "column 'theta1': is a length, where an angle is expected (got 'mm')",
    ),
    "unknown unit": (lambda t: t.replace("theta1,", "theta1 [blorps],", 1), "is not a unit pint knows (got 'blorps')"),
    "empty": (lambda t: "", "is empty"),
    "too few samples": (lambda t: "\n".join(_lines(t)[:20]), "has too few samples for 6 unknowns"),
}


@pytest.mark.parametrize("case", BAD_LOGS)
def test_bad_log_is_refused_with_a_message(case):
    change, message = BAD_LOGS[case]
    with pytest.raises(ModelError, match=re.escape(message)) as error:
        run(change(good_log()))
    assert "np." not in str(error.value)  # numbers as a person writes them, not numpy's repr


def test_a_dependent_coordinate_in_a_log_is_checked_and_set_aside():
    mech = Mechanism(samples.load("four_bar"))
    text = "t,theta1,theta2,tau_theta1\n0,0,0,0\n0.01,0,0,0\n"
    log = parse_log(text, mech, "log.csv")
    assert log.coordinates == ["theta1"] and "'theta2' is a dependent coordinate, set aside" in log.notes[0]
    assert "DISAGREES" in log.notes[0]  # the loop does not close with theta2 = 0 at theta1 = 0


def test_extra_columns_are_ignored_with_a_note():
    log = parse_log(_add_column(good_log(), "current_1"), Mechanism(model_and_base()[0]), "log.csv")
    assert log.notes == ["column(s) current_1 ignored: not positions or actuator forces of this model"]


def test_a_log_that_leaves_a_base_parameter_unexcited_names_it_and_the_ridge():
    still = good_log(still=0)  # the shoulder held: its inertia about its axis is not seen, nor both first moments
    with pytest.raises(ModelError) as caught:
        run(still)
    message = str(caught.value)
    assert "does not excite 2 of the 6" in message and "Izz1 (Izz1 + " in message
    assert "log10 σ" in message and "--hold-unexcited" in message
    held = run(still, hold_unexcited=True)
    k = held.names.index("Izz1")
    assert len(held.held) == 2 and "Izz1" in held.held and np.isnan(held.std[k]) and held.values[k] == truth()[k]
    free = ~np.isnan(held.std)
    assert np.all(np.abs(held.values[free] - truth()[free]) < 4 * held.std[free])


# ---------------------------------------------------------------------------------------- the command line
@pytest.fixture
def files(tmp_path):
    model = tmp_path / "pendulum.mbs"
    model.write_text(dumps(model_and_base()[0]))
    (tmp_path / "run1.csv").write_text(good_log(seed=1))
    (tmp_path / "run2.csv").write_text(good_log(seed=2, motion_seed=8))
    return tmp_path


def test_identify_command_writes_json_and_csv(files, capsys):
    out = files / "result.json"
    code = main(
        [
            "identify",
            str(files / "pendulum.mbs"),
            "--data",
            str(files / "run1.csv"),
            "--validate",
            str(files / "run2.csv"),
            "--json",
            str(out),
            "--csv",
            str(files / "result.csv"),
            "--quiet",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "rank 6 (variable precision, 30 digits)" in text and "validation on" in text
    document = json.loads(out.read_text())
    rule = document["filter"]["rule"]
    assert f"cut-off: {rule}" in text and "the motion's bandwidth" in rule
    assert document["filter"]["velocity_bandwidth_hz"] > 0 and not document["filter"]["capped"]
    assert document["adequacy"]["accelerations"]["velocities"] == "differenced positions"
    assert document["rank"] == 6 and len(document["base_parameters"]) == 6
    assert document["validation_relative_rms"]["overall"] < 0.01
    table = pd.read_csv(files / "result.csv")
    np.testing.assert_allclose(table["value"], [p["value"] for p in document["base_parameters"]])
    assert list(table["kept"]) == ["mx1", "my1", "Izz1", "mx2", "my2", "Izz2"]


@pytest.mark.parametrize("case", ["missing column", "NaN", "too few samples"])
def test_identify_command_refuses_a_bad_log_in_one_line(files, capsys, case):
    bad = files / "bad.csv"
    bad.write_text(BAD_LOGS[case][0](good_log()))
    out = files / "never.json"
    code = main(["identify", str(files / "pendulum.mbs"), "--data", str(bad), "--json", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and BAD_LOGS[case][1] in err and "Traceback" not in err
    assert not out.exists()


def test_identify_command_refuses_bad_options(files, capsys):
    base = ["identify", str(files / "pendulum.mbs"), "--data", str(files / "run1.csv")]
    for extra in (["--friction", "dry"], ["--digits", "12"], ["--cutoff", "-3"]):
        with pytest.raises(SystemExit):
            main(base + extra)
    assert main(base + ["--cutoff", "150", "--quiet"]) == 2  # above the log's Nyquist frequency
    assert "Nyquist" in capsys.readouterr().err
    assert main(base + ["--json", str(files / "run1.csv")]) == 2  # never over an input


def test_excite_command_keeps_the_limits_and_lowers_the_condition(tmp_path, capsys):
    out = tmp_path / "traj.csv"
    args = ["excite", str(tmp_path / "p.mbs"), "--duration", "8", "--out", str(out), "--rate", "50"]
    (tmp_path / "p.mbs").write_text(dumps(model_and_base()[0]))
    assert main(args + ["--max-velocity", "2", "--max-acceleration", "4", "--evaluations", "150"]) == 0
    said = capsys.readouterr().out
    before, after = (float(x) for x in said.split("cond(W_b) ")[1].split(" over")[0].split(" -> "))
    assert after < before
    table = pd.read_csv(out)  # a plain table: the provenance is beside it
    assert list(table.columns[:3]) == ["t [s]", "theta1 [rad]", "theta2 [rad]"]
    assert len(table) == 401 and table["t [s]"].iloc[-1] == pytest.approx(8.0)
    assert table.filter(regex="^d_").abs().to_numpy().max() <= 2 + 1e-9
    assert table.filter(regex="^dd_").abs().to_numpy().max() <= 4 + 1e-9
    velocity = np.gradient(table["theta1 [rad]"].to_numpy(), 1 / 50)
    np.testing.assert_allclose(velocity[1:-1], table["d_theta1 [rad/s]"].to_numpy()[1:-1], atol=0.02)
    provenance = json.loads(Path(f"{out}.json").read_text())["provenance"]
    assert provenance["condition_after"] == pytest.approx(after, rel=1e-3) and len(provenance["terms"]["theta1"]) == 3


def test_an_exact_log_is_explained_and_gives_the_model_back():
    """A log without noise or quantisation (the tutorial's): the ends of every signal, continued by their cubics
    before filtering, leave the first kept samples' accelerations as right as the rest's, so the residual stays
    under the noise floor and the estimate within 1e-7 of the truth. With the filter's odd extension the first
    and last kept samples held a residual 80 times the floor, and the zero first moments came back at 7e-7."""
    mech, m, tau = motion_and_forces("double_pendulum", 4000, 7)
    result = run(log_text(m.t, mech.independent, m.q, mech.independent, tau))
    assert not result.adequacy["unexplained"]
    assert np.abs(result.values - truth()).max() < 1e-7 * np.abs(truth()).max()
