"""docs/tutorial.md's screenshots come from docs/screenshots/tutorial.py, which does each step in the real window.
The default run does the first step and checks that the tutorial shows a screenshot of every step; the slow run
does them all (with MBSTUDIO_TUTORIAL_UPDATE=1 it writes them into docs/screenshots, which keeps them current)."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def script():
    spec = importlib.util.spec_from_file_location("tutorial_shots", DOCS / "screenshots" / "tutorial.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tutorial_shows_a_screenshot_of_every_step_and_each_is_in_the_docs():
    steps = script().STEPS
    shown = re.findall(r"\(screenshots/(tutorial_\d+_\w+\.png)\)", (DOCS / "tutorial.md").read_text(encoding="utf-8"))
    assert shown == [f"tutorial_{n}_{step}.png" for n, step in enumerate(steps, start=1)]
    assert all((DOCS / "screenshots" / name).stat().st_size > 10_000 for name in shown)


def test_the_script_makes_the_first_steps_screenshot(qapp, display, tmp_path):
    (written,) = script().shots(tmp_path, until="open")
    assert written.name == "tutorial_1_open.png" and written.stat().st_size > 10_000


@pytest.mark.slow  # every step: two simulations, the SLA's base parameters by three routes, a linear model, a URDF
def test_the_script_makes_every_steps_screenshot(qapp, display, tmp_path):
    pytest.importorskip("example_robot_data")
    out = DOCS / "screenshots" if os.environ.get("MBSTUDIO_TUTORIAL_UPDATE") else tmp_path
    written = script().shots(out)
    assert [p.name for p in written] == [f"tutorial_{n}_{s}.png" for n, s in enumerate(script().STEPS, start=1)]


def test_the_readme_shows_the_window_script_as_it_is():
    example = (DOCS / "examples" / "script_window.py").read_text(encoding="utf-8").rstrip()
    assert f"```python\n{example}\n```" in (DOCS.parent / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow  # a window of its own, in a process of its own, and a simulation job
def test_the_window_script_runs(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(DOCS.parent)}
    script = DOCS / "examples" / "script_window.py"
    subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, check=True, timeout=600)
    assert (tmp_path / "window.png").stat().st_size > 10_000
    assert (tmp_path / "run.csv").read_text(encoding="utf-8").startswith("t [s],theta1 [rad]")
