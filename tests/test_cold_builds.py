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
    assert re.fullmatch(r"engine built \([0-9]+\.[0-9] s\)", said[1])
    assert main(["simulate", path, "--t-end", "0.1", "--samples", "3"]) == 0
    assert "building" not in capsys.readouterr().err  # loaded from the cache
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "other"))
    assert main(["simulate", path, "--t-end", "0.1", "--samples", "3", "--quiet"]) == 0
    assert capsys.readouterr().err == ""  # built, silently
