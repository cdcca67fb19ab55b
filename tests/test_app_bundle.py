"""The standalone app: `bash packaging/build.sh` builds dist/mbstudio/mbstudio with PyInstaller in
a virtual environment of its own; the built program lists its samples, checks the SLA and draws the window on an
X display. Minutes of downloads and analysis, so marked slow."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mbstudio.gui import headless

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "dist" / "mbstudio" / "mbstudio"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def app() -> Path:
    if shutil.which("bash") is None:
        pytest.skip("packaging/build.sh needs bash")
    subprocess.run(["bash", str(ROOT / "packaging" / "build.sh")], check=True, timeout=3600)
    assert APP.is_file() and os.access(APP, os.X_OK)
    return APP


def _run(app: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(app), *args], capture_output=True, text=True, timeout=600, env=env, cwd="/")


def test_the_built_app_lists_its_samples_and_checks_the_sla(app):
    listed = _run(app, "samples")
    assert listed.returncode == 0, listed.stderr
    assert "sla_suspension" in listed.stdout and str(app.parent) in listed.stdout  # its own copy of the samples
    sla = next(line.split()[-1] for line in listed.stdout.splitlines() if "sla_suspension" in line)
    checked = _run(app, "check", sla, "--json")
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert report["dof_jacobian"] == 2 and report["loops"] == 3 and report["assembled"]


def test_the_built_app_draws_the_window_on_an_x_display(app, tmp_path):
    if shutil.which("Xvfb") is None and not os.environ.get("DISPLAY"):
        pytest.skip("needs an X display: install Xvfb (CI does)")
    if not os.environ.get("DISPLAY"):
        headless.start_xvfb()
    shot = tmp_path / "window.png"
    drawn = _run(app, "screenshot", str(_sla(app)), str(shot), "--panel", "window", "--size", "1200x800")
    assert drawn.returncode == 0, drawn.stderr
    from PySide6.QtGui import QImage

    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1200, 800)
    pixels = np.frombuffer(image.convertToFormat(QImage.Format.Format_RGB32).constBits(), np.uint8)
    assert len(np.unique(pixels.reshape(-1, 4)[:, :3], axis=0)) > 500  # a drawn window, not one flat colour


def _sla(app: Path) -> Path:
    listed = _run(app, "samples").stdout
    return Path(next(line.split()[-1] for line in listed.splitlines() if "sla_suspension" in line))
