"""What starting costs: `import mbstudio` and a command's start import none of the heavy
libraries they do not use (sympy, Dask, pyarrow, Qt, and for `check` and `simulate` scipy), each in a fresh
interpreter, so the modules an earlier test imported do not count. A correctness check of the imports, not a
timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sympy", "dask", "pyarrow", "PySide6")


def _imported_after(code: str, tmp_path) -> set[str]:
    """The top-level modules loaded by `code` in a new interpreter with this checkout first on the path."""
    probe = (
        f"import sys\n{code}\nprint('\\n' + __import__('json').dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MBSTUDIO_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_import_mbstudio_imports_no_heavy_library(tmp_path):
    assert not _imported_after("import mbstudio", tmp_path) & {*HEAVY, "numpy", "casadi", "scipy"}


@pytest.mark.parametrize(
    ("argv", "also_absent"),
    [
        (["--help"], ("casadi", "scipy")),
        (["check", "samples/four_bar.mbs"], ("scipy",)),
        (["simulate", "samples/four_bar.mbs", "--t-end", "0.01", "--quiet"], ("scipy",)),
    ],
)
def test_a_command_starts_without_the_libraries_it_does_not_use(tmp_path, argv, also_absent):
    code = (
        "from mbstudio import cli\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    cli.main({argv!r})"
    )
    assert not _imported_after(code, tmp_path) & {*HEAVY, *also_absent}
