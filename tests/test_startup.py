"""What a command imports (tests/test_imports.py checks the heaviest libraries): `mbstudio --help` imports no
numerical library at all, and a run of a file none that it does not use (those of variable precision, symbolic
work, tables, plots, studies and the window, numpy's masked arrays and random numbers). Checked in a fresh
interpreter on sys.modules, not by timing."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NUMERICAL = {"numpy", "scipy", "sympy", "mpmath", "gmpy2", "casadi", "pint", "pandas", "matplotlib", "dask"}
UNUSED_BY_A_RUN = NUMERICAL - {"numpy", "casadi"} | {"PySide6", "PyQt6", "pinocchio", "numpy.ma", "numpy.random"}
UNUSED_BY_A_RUN |= {"mbstudio.dynamics.tyres"}  # the run below, of the SLA, has no tyre


def imported_after(statements: str, heavy: set[str]) -> list[str]:
    """The modules of `heavy` (top-level names, or exact dotted names) present after running `statements` in a
    new interpreter, with their output discarded (and argparse's exit after a help text)."""
    script = (
        "import contextlib, io, json, sys\n"
        "quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())\n"
        "with quiet[0], quiet[1], contextlib.suppress(SystemExit):\n"
        f"    {statements}\n"
        f"heavy = {sorted(heavy)!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_help_imports_no_numerical_library():
    assert imported_after("from mbstudio.cli import main; main(['--help'])", NUMERICAL) == []


def test_a_sub_command_list_imports_no_numerical_library():
    assert imported_after("from mbstudio.cli import main; main(['samples'])", NUMERICAL) == []


def test_a_run_imports_only_what_it_uses():
    run = "from mbstudio.cli import main; main(['simulate', 'samples/sla_suspension.mbs', '--t-end', '0.1'])"
    assert imported_after(run, UNUSED_BY_A_RUN) == []


@pytest.mark.slow  # 6 s with an empty cache: the Delta 3R[2US] and its crossing compiled in the subprocess
def test_a_run_that_crosses_a_singular_configuration_imports_only_what_it_uses():
    # the free Delta 3R[2US] crosses at t = 0.27 s (simulation/crossing.py); numpy.unique imported numpy.ma there
    run = "from mbstudio.cli import main; main(['simulate', 'samples/delta_3rus.mbs', '--t-end', '0.3'])"
    assert imported_after(run, UNUSED_BY_A_RUN) == []


def test_the_model_package_still_gives_its_names():
    from mbstudio import model
    from mbstudio.model.document import Model

    namespace: dict = {}
    exec("from mbstudio.model import *", namespace)
    assert model.Model is Model and namespace["Model"] is Model
    assert set(model.__all__) <= set(namespace)
