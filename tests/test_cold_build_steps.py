"""What a cold build does and says: the engine's library holds what a run integrates with, the output series come in a
library of their own when a run first asks for its results; `check` compiles nothing; a build reports its steps
(traced, each unit of C compiled) with how far it is; tracing a closed loop's regressor leaves out the velocity map's
zeros without changing the graph."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import casadi
import numpy as np
import pytest

from mbstudio import samples
from mbstudio.benchmarks.models import spatial_chain
from mbstudio.cli import main
from mbstudio.dynamics.engine import NATIVE, SERIES, clear_engines, engine
from mbstudio.dynamics.regressor import tree_regressor
from mbstudio.kinematics.mechanism import Mechanism
from mbstudio.model import save
from mbstudio.numerics import translation_units as units
from mbstudio.numerics.compiled import Traced, symbols
from mbstudio.progress import builds_said

compiler = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def _libraries(cache: Path) -> list[str]:
    return sorted(path.name.split("_")[0] for path in (cache / "engines").glob("*.so"))


@compiler
def test_a_run_integrates_on_the_engine_and_builds_its_series_apart_when_it_needs_them(tmp_path, monkeypatch):
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))
    clear_engines()
    model = samples.load("slider_crank")
    eng = engine(model)
    # a closed loop that may cross a singular configuration also gets the loop Jacobian its crossing watch reads
    assert sorted(eng.compiled.functions) == sorted((*NATIVE, "loop_jacobian")) and SERIES not in NATIVE
    assert _libraries(tmp_path) == ["engine"]  # what the integration and the assembly need, and nothing more
    q0 = eng.close_loops(eng.mech.tree.initial_coordinates())[0]
    y = eng.pack(q0, np.zeros(len(eng.independent)))
    assert np.all(np.isfinite(eng.ode(0.0, y)))
    q, qd, qdd, _ = eng.outputs(np.zeros(1), y[None])
    values = eng.series(np.zeros(1), q, qd, qdd)  # the first results ask for the series: built now
    assert _libraries(tmp_path) == ["engine", "series"]
    assert list(eng.series_functions.functions) == [SERIES] and eng.series_functions.compiled
    clear_engines()  # a new process: both load from the cache, the same numbers
    again = engine(model)
    np.testing.assert_array_equal(again.series(np.zeros(1), q, qd, qdd)["poses"], values["poses"])
    assert again.series_functions.traced is None  # loaded, not traced
    assert again.traced_series.name() == SERIES  # the exports trace it when they ask


@compiler
def test_a_build_says_each_step_with_how_far_it_is(tmp_path, monkeypatch):
    """The first command's and the window's engine job's progress: traced, then each unit of C as it compiles
    (the thresholds lowered so that a small model's functions are cut into several units)."""
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))
    monkeypatch.setattr(units, "SPLIT_CHARS", 0)
    monkeypatch.setattr(units, "PIECE", 50)
    monkeypatch.setattr(units, "UNIT_CHARS", 1)  # each piece a unit of its own
    clear_engines()
    said: list[tuple[str, float]] = []
    with builds_said(lambda text, fraction: said.append((text, fraction))):
        engine(samples.load("double_pendulum"))
    texts, fractions = [text for text, _ in said], [fraction for _, fraction in said]
    assert texts[0].startswith("building the compiled engine of this model") and fractions[0] == 0
    assert texts[1].startswith("  traced (") and texts[-1].startswith("engine built (") and fractions[-1] == 1
    compiled = [text for text in texts if "units of C compiled" in text]
    count = int(compiled[0].split()[2])
    assert count > 2 and [text.split(" of ")[0].strip() for text in compiled] == [str(k) for k in range(1, count + 1)]
    assert fractions == sorted(fractions) and all(0 <= f <= 1 for f in fractions)


def test_check_compiles_nothing_on_a_new_model(tmp_path, monkeypatch, capsys):
    """A closed loop (the vehicle's corners), a tree of 24 links: checked on an empty cache, no library built and
    nothing said about building one."""
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "cache"))
    chain = tmp_path / "chain.mbs"
    save(spatial_chain(24), chain)
    for path in (str(samples.path("vehicle")), str(samples.path("four_bar")), str(chain)):
        assert main(["check", path]) == 0
        assert "building" not in capsys.readouterr().err
    assert not list((tmp_path / "cache").rglob("*.so"))


def test_the_regressors_projection_traces_the_graph_of_the_dense_product(tmp_path):
    """Rᵀ K of a closed loop's regressor without the products by R's zeros: the same C as numpy's dense product
    (CasADi drops 0·x and 0 + x itself), hence the same compiled bits."""
    mech = Mechanism(samples.load("sla_suspension"), backend=Traced())
    q, qd, qdd = (symbols(name, mech.n) for name in ("q", "qd", "qdd"))
    K = tree_regressor(mech, *(x[1][None, :] for x in (q, qd, qdd)))
    Rt = np.swapaxes(mech.r_matrix(q[1][None, :]), 1, 2)
    assert sum(casadi.SX(x).is_zero() for x in Rt.ravel()) > Rt.size / 3  # a sparse map: products left out
    texts = []
    for product in (Rt @ K, mech.backend.matmul(Rt, K)):
        entries = [casadi.SX(x) for x in product[0].ravel()]
        function = casadi.Function("projected", [q[0], qd[0], qdd[0]], [casadi.vertcat(*entries)])
        with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
            generator = casadi.CodeGenerator("projected.c", {"with_header": False})
            generator.add(function)
            generator.generate(f"{folder}/")
            texts.append((Path(folder) / "projected.c").read_text())
    assert texts[0] == texts[1]
