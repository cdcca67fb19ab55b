"""What a command loads that it does not use: `mbstudio --help` no numeric library, a simulation whose engine is in
the cache none of the modules that build engines (processes, thread pools, headers) and none that only a message,
a cold build or another host needs. Each in a fresh interpreter, the cache of its own; a check of the imports, not
a timing. The program's own exit (the summary flushed, the exit code kept) is checked beside them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(ROOT / "samples" / "four_bar.mbs")
# made lazy for a run from the cache: compiling (subprocess, thread pools, Python's headers, cutting C into units,
# tracing's arithmetic), temporary files' host and names (socket, uuid), leftover files' patterns (glob), a unit's
# suggestions (difflib)
BUILDING_ONLY = (
    "subprocess",
    "concurrent.futures",
    "sysconfig",
    "mbstudio.numerics.translation_units",
    "mbstudio.numerics.sx_operators",
    "socket",
    "uuid",
    "glob",
    "difflib",
    "scipy",
)


def _modules_after(argv: list[str], cache: Path, cwd: Path) -> set[str]:
    """The modules loaded by `mbstudio ARGV` (called as the command line does) in a new interpreter."""
    probe = (
        "import contextlib, io, json, sys\n"
        "from mbstudio import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    code = cli.main({argv!r})\n"
        "print('\\n' + json.dumps([code, sorted(sys.modules)]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MBSTUDIO_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    assert done.returncode == 0, done.stderr
    code, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0
    return set(modules)


def test_help_imports_no_numeric_library(tmp_path):
    probe = "import json, sys\nfrom mbstudio import cli\ntry:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
    probe += "print('\\n' + json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MBSTUDIO_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert not loaded & {"numpy", "casadi", "scipy", "mbstudio.model.document", *BUILDING_ONLY}


def test_a_simulation_from_the_cache_imports_nothing_that_builds(tmp_path):
    cache = tmp_path / "cache"
    argv = ["simulate", SAMPLE, "--t-end", "0.05", "--samples", "11", "--out", str(tmp_path / "run.csv")]
    first = _modules_after(argv, cache, tmp_path)  # builds the engine: compiles
    assert "subprocess" in first  # the probe sees what a build imports
    cached = _modules_after(argv, cache, tmp_path)
    assert "numpy" in cached and "casadi" in cached  # the run itself took place
    assert not cached & set(BUILDING_ONLY)


def test_the_program_flushes_its_summary_and_keeps_its_exit_code(tmp_path):
    """`python -m mbstudio.cli simulate` ends without the interpreter's teardown: its summary and files are whole."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MBSTUDIO_CACHE": str(tmp_path / "cache")}
    out = tmp_path / "run.csv"
    argv = ["simulate", SAMPLE, "--t-end", "0.05", "--samples", "11", "--out", str(out), "--quiet"]
    command = [sys.executable, "-m", "mbstudio.cli", *argv]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith(f"11 samples written to {out}")
    assert len(out.read_text(encoding="utf-8").splitlines()) == 12  # the header and 11 rows
    stopped = subprocess.run([*command, "--time-budget", "1e-9"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert stopped.returncode == 1 and "time budget" in stopped.stderr  # a failed run's code, after its message
