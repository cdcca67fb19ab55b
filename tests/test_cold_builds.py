"""The first command on a new model says what it waits for: the engine it builds (once, then loaded from the cache)."""

from __future__ import annotations

import re
import shutil

import pytest

from mbstudio import samples
from mbstudio.cli import main

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def test_the_first_run_on_a_new_model_says_it_builds_the_engine(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "cache"))
    path = str(samples.path("double_pendulum"))
    assert main(["simulate", path, "--t-end", "0.1", "--samples", "3"]) == 0
    said = capsys.readouterr().err.splitlines()
    assert said[0] == "building the compiled engine of this model (once: later runs load it from the cache) ..."
    assert re.fullmatch(r"  traced \([0-9]+\.[0-9] s\); compiling its C \.\.\.", said[1])
    assert re.fullmatch(r"engine built \([0-9]+\.[0-9] s\)", said[2])  # one unit of C: no count of units
    series = said.index("building the compiled series of this model (once: later runs load it from the cache) ...")
    assert series >= 3  # after the engine is built: what the integration needs is built alone
    assert main(["simulate", path, "--t-end", "0.1", "--samples", "3"]) == 0
    assert "building" not in capsys.readouterr().err  # loaded from the cache
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "other"))
    assert main(["simulate", path, "--t-end", "0.1", "--samples", "3", "--quiet"]) == 0
    assert capsys.readouterr().err == ""  # built, silently


def test_the_cold_build_rows_measure_a_build_in_a_fresh_process(monkeypatch):
    from mbstudio.benchmarks import cold_builds
    from mbstudio.benchmarks.registry import format_table

    monkeypatch.setattr(cold_builds, "BUILDS", {"four-bar": ("four_bar", "engine")})
    cpu, memory = cold_builds._cold_builds(0)
    assert cpu["name"] == "four-bar build, cold (s per build, CPU)" and cpu["native"]
    assert 0 < cpu["ours_s_per_state"] < 600 and cpu["reference_s_per_state"] == cold_builds.CPU_TARGET_S
    assert memory["unit"] == "MB" and memory["ours_s_per_state"] >= cpu["python_peak_mb"] > 10
    if shutil.which("time", path="/usr/bin:/bin"):  # each compiler's own peak, not its parent's
        assert 1 < memory["compiler_peak_mb"] <= memory["ours_s_per_state"]
    table = format_table([cpu, memory])
    assert " s " in table.splitlines()[1] and " MB " in table.splitlines()[2]
