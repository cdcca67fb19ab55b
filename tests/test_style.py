"""The code stays as ruff checks and formats it, so CI catches a lint error or an unformatted file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def ruff(*args: str) -> subprocess.CompletedProcess:
    command = [shutil.which("ruff")] if shutil.which("ruff") else [sys.executable, "-m", "ruff"]
    return subprocess.run([*command, *args, "mbstudio", "tests"], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("args", [("check",), ("format", "--check")], ids=["lint", "format"])
def test_ruff_is_satisfied(args):
    result = ruff(*args)
    assert result.returncode == 0, result.stdout + result.stderr
