"""The wheel alone makes a working MB Studio: built from a copy of the repository, installed into a fresh virtual
environment and run from outside the repository, it finds its samples and its icon."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted(p.stem for p in (ROOT / "samples").glob("*.mbs"))
SETUPTOOLS_NEEDED = 77  # pyproject.toml's [build-system]


def _why_unbuildable() -> str | None:
    """Building without isolation uses this interpreter's setuptools; None when it can build the wheel."""
    try:
        found = version("setuptools")
    except PackageNotFoundError:
        return "setuptools is not installed, so no wheel can be built without build isolation"
    if int(found.split(".")[0]) < SETUPTOOLS_NEEDED:
        return f"setuptools {found} is too old to build the wheel; pyproject.toml needs >= {SETUPTOOLS_NEEDED}"
    return None


UNBUILDABLE = _why_unbuildable()
pytestmark = pytest.mark.skipif(UNBUILDABLE is not None, reason=UNBUILDABLE or "")

# Run by the installed interpreter: what it imports and finds, as JSON.
PROBE = """
import json, mbstudio
from mbstudio import samples
from mbstudio.gui import app
print(json.dumps({"package": mbstudio.__file__, "samples": samples.names(),
                  "bodies": len(samples.load().bodies), "icon": str(app.ICON), "icon_is_file": app.ICON.is_file()}))
"""


def _run(*command: str | Path, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing may point back into a checkout
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy, since setuptools writes build/ and *.egg-info into the tree it builds."""
    work = tmp_path_factory.mktemp("packaging")
    ignore = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".*cache", ".hypothesis")
    source = Path(shutil.copytree(ROOT, work / "source", ignore=ignore))
    pip_wheel = (sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q")
    _run(*pip_wheel, source, "-w", work / "dist", cwd=work)
    (built,) = (work / "dist").glob("mbstudio-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path) -> Path:
    """A virtual environment holding the wheel (its dependencies come from this interpreter's environment)."""
    env = wheel.parent.parent / "venv"
    venv.create(env, with_pip=False)
    # The environment running the tests (a venv made as the README says, or the system) supplies the
    # dependencies and pip: its site-packages are appended as plain paths, which Python does not scan for
    # .pth files, so the editable mbstudio installed there stays invisible and the wheel's copy is found.
    (inner,) = (env / "lib").glob("python3*/site-packages")
    (inner / "outer_environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    _run(env / "bin" / "python", "-m", "pip", "install", "--no-deps", "--ignore-installed", "-q", wheel, cwd=env)
    return env


def test_the_wheel_holds_every_module_the_samples_and_the_icon(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "mbstudio").rglob("*.py")}
    assert modules - names == set()  # a new subpackage needs its line in pyproject.toml's `packages`
    assert {f"mbstudio/_samples/{name}.mbs" for name in SAMPLES} <= names
    assert "mbstudio/_resources/mbstudio.svg" in names


def test_the_installed_package_finds_its_samples_and_icon_outside_the_repository(installed: Path):
    found = json.loads(_run(installed / "bin" / "python", "-c", PROBE, cwd=installed))
    assert Path(found["package"]).is_relative_to(installed)
    assert found["samples"] == SAMPLES and len(SAMPLES) == 14  # papers', textbook, PUMA, Delta, bushed SLA, 2 cars
    assert found["bodies"] == 7  # the SLA suspension, the default sample
    assert Path(found["icon"]).is_relative_to(installed) and found["icon_is_file"]


def test_the_installed_command_lists_the_samples_from_the_environment(installed: Path):
    lines = _run(installed / "bin" / "mbstudio", "samples", cwd=installed).splitlines()
    listed = {name: Path(where) for name, where in (line.split() for line in lines)}
    assert sorted(listed) == SAMPLES
    assert all(where.is_relative_to(installed) and where.is_file() for where in listed.values())


def test_the_installed_command_without_a_file_reports_the_default_sample(installed: Path):
    report = _run(installed / "bin" / "mbstudio", "--summary", cwd=installed).splitlines()
    assert report[:2] == ["Model: SLA suspension", "  bodies (7): 1, 2, 3, 4, 5, 6, 7"]
