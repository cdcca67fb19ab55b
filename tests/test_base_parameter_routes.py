"""The three routes to the base parameters agree on every sample, and the pipeline's
options, progress, cancel and command line.

The SLA suspension is checked the same way, on the paper's trajectory, in test_base_parameters_sla.py."""

from __future__ import annotations

import json
import threading

import mpmath
import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.identification import vp_linalg
from mbstudio.identification.pipeline import base_parameters, evaluate_symbolic
from mbstudio.model import ModelError
from mbstudio.model.document import Harmonic, Trajectory
from mbstudio.progress import Cancelled

from .conftest import PKM_SAMPLES

DIGITS = 40
# Samples whose VP run uses 20 trajectory samples instead of the model's count (160 parameters, rank 35 to 40:
# 60 equations already over-determine the rank).
FEWER_SAMPLES = {"delta_3rr2rrr", "linear_delta"}


def _sample_cases() -> list:
    """Every sample but the SLA (tests/test_base_parameters_sla.py) and the vehicle built from its corners (300
    parameters); the Deltas (160 parameters) and the other
    parallel machines take 30 s of CPU or more each, so they run with the slow checks; IRSBot-2's routes also
    run in the README run, on fewer samples, in test_irsbot2_routes_from_the_command_line."""
    return [pytest.param(n, marks=pytest.mark.slow) if n in {"delta_3rr2rrr", *PKM_SAMPLES} else n for n in ROUTED]


ROUTED = [n for n in samples.names() if n not in ("sla_suspension", "sla_suspension_bushed", "vehicle")]


def stacked_rank(maps: list[np.ndarray], digits: int) -> int:
    """The rank of base-parameter maps stacked on each other, at `digits` digits: equal to each one's rank
    exactly when they share their row space."""
    stacked = np.concatenate(maps)
    with mpmath.workdps(digits):
        s = vp_linalg.svd(stacked, digits)[0]
        return sum(1 for x in s if x > s[0] * mpmath.mpf(10) ** (-digits / 2))


def assert_routes_agree_or_dp_cannot_decide(model, run) -> None:
    """VP's ridge is evident and the symbolic route has its rank and row space (the stacked maps have the same
    rank, the symbolic directions are null vectors of VP's W); double precision agrees, or has no ridge at that
    rank and the comparison says so."""
    vp, dp, digits = run.vp.final, run.dp, run.vp.final.digits
    assert vp.ridge.evident and vp.rank == run.symbolic.rank
    symbolic = evaluate_symbolic(model, run.symbolic, digits)
    assert stacked_rank([vp.base_map(), symbolic.base_map()], digits) == vp.rank
    c = run.comparison
    # the sine of the largest angle between the row spaces is within the rounding of β at this precision
    assert c["vp_symbolic"]["agree"] and c["vp_symbolic"]["max_sine"] <= c["vp_symbolic"]["tolerance"], c["vp_symbolic"]
    assert c["vp_symbolic"]["null_residual"]["null"] and c["vp_symbolic"]["null_residual"]["max_relative"] < 10.0 ** (
        8 - digits
    )
    if dp.rank == vp.rank and dp.ridge.evident:
        assert c["vp_dp"]["agree"] and c["dp_symbolic"]["agree"], c["vp_dp"]
    if dp.rank != vp.rank:
        for pair in ("vp_dp", "dp_symbolic"):
            reason = c[pair]["rank_reason"]
            assert reason["kind"] == "undecidable" and reason["route"] == "dp" and reason["rank"] == vp.rank
            assert reason["depth_there"] < reason["required_depth"] == 4
            assert "dp cannot decide the rank" in c[pair]["verdict"]
    assert c["all_agree"] == all(v["agree"] for v in c.values() if isinstance(v, dict))
    assert c["disagreements_explained"]


@pytest.mark.parametrize("name", _sample_cases())
def test_the_three_routes_agree_on_rank_and_span(name):
    model = samples.load(name)
    run = base_parameters(model, "all", digits=DIGITS, samples=20 if name in FEWER_SAMPLES else None)
    assert_routes_agree_or_dp_cannot_decide(model, run)


def test_irsbot2_routes_from_the_command_line(capsys):
    """IRSBot-2: VP and the symbolic route agree at rank 23, which double precision cannot decide
    (its σ22 and σ23 lie within two decades of its rounding); the command line says so."""
    assert main(["basepar", str(samples.path("irsbot2")), "--digits", "30", "--samples", "16", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "vp        rank 23: 30 digits: ridge after σ23" in text
    assert "symbolic  rank 23: 51 parameter(s) without effect, 36 transfer(s); each leaves the Lagrangian" in text
    assert "the routes agree where they can decide:" in text
    assert "vp / symbolic: agree" in text
    assert "vp / dp: differ: rank vp 23 vs dp 21; dp cannot decide the rank: its spectrum falls only" in text


@pytest.mark.slow
@pytest.mark.parametrize("digits", [30, 50, 100])
def test_irsbot2_routes_at_30_50_and_100_digits(digits):
    """Issue 20: IRSBot-2's VP rank at 30, 50 and 100 digits is the symbolic rank, 23, with the same row space,
    and the ridge after σ23 deepens with the precision; double precision cannot decide it."""
    model = samples.load("irsbot2")
    run = base_parameters(model, "all", digits=digits)
    assert_routes_agree_or_dp_cannot_decide(model, run)
    ridge = run.vp.final.ridge
    # σ23 is 1e-13 of σ1, so the ridge down to the rounding floor (gautier.find_ridge) deepens digit for digit
    assert run.vp.final.rank == 23 and ridge.index == 23 and ridge.evident
    assert ridge.log10_depth > max(digits - 17, ridge.required_depth)
    assert run.comparison["vp_symbolic"]["max_sine"] < 10.0 ** (13 - digits)  # falls with the precision
    assert run.dp.rank == 21 and run.comparison["vp_dp"]["rank_reason"]["depth_there"] < 2


def test_user_choice_of_eliminated_parameters_holds_on_every_route():
    """Eliminating Izz1 instead of m2 keeps m2 + Izz1/L² (L = 1) in all three routes."""
    model = samples.load("double_pendulum")
    chosen = [n for n in base_parameters(model, "symbolic").symbolic.eliminated if n != "m2"] + ["Izz1"]
    run = base_parameters(model, "all", digits=30, eliminate=chosen)
    assert sorted(run.vp.final.eliminated) == sorted(chosen) == sorted(run.symbolic.eliminated)
    assert run.comparison["all_agree"]
    m2 = next(b for b in run.to_json()["results"]["vp"]["base_parameters"] if b["terms"]["m2"] == "1")
    assert float(m2["terms"]["Izz1"]) == pytest.approx(1.0, abs=1e-25)
    assert run.options["elimination"] == "given"
    with pytest.raises(ValueError, match="must be eliminated"):
        base_parameters(model, "symbolic", eliminate=chosen[:-1])


def test_model_trajectory_samples_override_and_default():
    model = samples.load("slider_crank")
    assert base_parameters(model, "dp").trajectory["source"] == "default"
    model.trajectories = [
        Trajectory("sweep", {"theta1": [Harmonic(0.8, "pi / 5"), Harmonic(0.2, 2.3, 0.5)]}, duration=10.0, samples=40)
    ]
    run = base_parameters(model, "dp")
    assert run.trajectory["source"] == "model" and run.samples == 40 and run.dp.rank == 6
    assert base_parameters(model, "dp", samples=30).samples == 30
    model.trajectories[0].coordinates = {"theta2": [Harmonic(0.1, 1.0)]}
    with pytest.raises(ModelError, match="not independent coordinates"):
        base_parameters(model, "dp")
    with pytest.raises(ValueError, match="unknown method"):
        base_parameters(model, "svd")


def test_progress_rises_to_one_and_cancel_stops_between_samples():
    model = samples.load("four_bar")
    seen: list[tuple[float, str]] = []
    base_parameters(model, "all", digits=30, progress=lambda f, m: seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("W at 30 digits: sample" in m for _, m in seen)
    stop = threading.Event()

    def stop_in_vp(fraction: float, message: str) -> None:
        if message.startswith("W at 30 digits: sample 1 "):
            stop.set()  # noticed at the next check, before the next batch of samples

    with pytest.raises(Cancelled, match="W at 30 digits: sample 26"):
        base_parameters(model, "vp", digits=30, progress=stop_in_vp, cancel=stop)
    with pytest.raises(Cancelled, match="symbolic"):
        base_parameters(model, "all", cancel=lambda: True)


def test_command_line_json_and_table(tmp_path, capsys):
    path = str(samples.path("double_pendulum"))
    out = tmp_path / "basepar.json"
    assert (
        main(
            ["basepar", path, "--method", "all", "--digits", "20,30", "--samples", "40", "--json", str(out), "--quiet"]
        )
        == 0
    )
    data = json.loads(out.read_text())
    assert set(data) >= {"model", "model_hash", "parameter_names", "results", "comparison"}
    assert set(data["results"]) == {"dp", "vp", "symbolic"} and data["comparison"]["all_agree"]
    assert set(data["results"]["vp"]["singular_values"]) == {"20", "30"}
    assert {"no_effect", "transfers"} <= set(data["results"]["symbolic"])
    assert data["provenance"]["samples"] == 40
    capsys.readouterr()
    assert main(["basepar", path, "--method", "all", "--digits", "30", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "the routes agree" in text and "Izz1 + L**2*m2" in text and "ridge after σ6" in text
    assert main(["basepar", path, "--method", "vp", "--eliminate", "m1,m2", "--quiet"]) == 2
    assert "must be eliminated" in capsys.readouterr().err
