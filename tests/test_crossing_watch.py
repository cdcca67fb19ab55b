"""The crossing watch reads the engine's own compiled loop Jacobian: a closed loop that never crosses a singular
configuration builds no crossing library, and the watch's values are the crossing's loop terms' (the same decisions
whichever library a run has built)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.benchmarks.models import spatial_chain
from mbstudio.cli import main
from mbstudio.dynamics.augmented import augmented_functions
from mbstudio.dynamics.engine import Engine, engine
from mbstudio.model import save
from mbstudio.simulation.crossing import SEPARATE, LoopTerms, loop_blocks, rank_values, start_rank

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def test_a_closed_loop_that_never_crosses_builds_no_crossing_library(tmp_path, monkeypatch):
    """The four-bar's first run, in a fresh cache, files its engine (with its output series and the CVODES driver)
    but no `augmented_` library: the crossing's rate and loop terms are built in `cross`, by a run that crosses,
    though its watch reads the whole Φ_q's rank value at the start and along the run."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MBSTUDIO_CACHE", str(cache))
    watched, loop_jacobians = [], Engine.loop_jacobians

    def counted(eng, q):
        watched.append(len(q))
        return loop_jacobians(eng, q)

    monkeypatch.setattr(Engine, "loop_jacobians", counted)
    out = tmp_path / "four_bar.csv"
    assert main(["simulate", str(samples.path("four_bar")), "--t-end", "2", "--out", str(out), "--quiet"]) == 0
    libraries = sorted(path.name for path in cache.rglob("*.so"))
    assert any(name.startswith("engine_") for name in libraries), libraries
    assert not any(name.startswith("augmented_") for name in libraries), libraries
    assert len(watched) > 1 and sum(watched) > 100  # the start's Φ_q, then the check points' (200 of them)
    assert out.read_text().count("\n") > 100  # the run's samples were written


@pytest.mark.parametrize("name", ["four_bar", "sla_suspension"])
def test_the_watchs_rank_values_are_the_crossing_loop_terms(name):
    """The engine's loop Jacobian is the crossing's loop terms' Φ_q (traced alike: equal to rounding, here and on
    another compiler), and both are numpy's Φ_q to the rounding of a kinematic chain's products (a few hundred ulps of
    its scale); the rank values and the start's follow, at closed and open (as integrated) coordinates alike."""
    model = samples.load(name)
    eng = engine(model)
    terms = LoopTerms(eng.mech, augmented_functions(eng.text))
    q0 = eng.mech.assemble()[0]  # the document's initial configuration, closed
    q = q0 + np.random.default_rng(1).normal(scale=0.05, size=(20, eng.n))
    compiled = eng.loop_jacobians(q)
    crossing = np.array([terms(x)[1] for x in q])
    reference = np.asarray(eng.mech.constraint_jacobian(q), dtype=float)
    scale = np.abs(reference).max()
    np.testing.assert_allclose(compiled, crossing, rtol=0, atol=8 * np.finfo(float).eps * scale)
    np.testing.assert_allclose(compiled, reference, rtol=0, atol=256 * np.finfo(float).eps * scale)
    values = rank_values(eng, q)
    expected = np.linalg.svd(reference, compute_uv=False)[:, eng.mech.partition.rank - 1]  # the whole Φ_q's
    np.testing.assert_allclose(values, expected, rtol=0, atol=256 * np.finfo(float).eps * scale)
    assert values.min() > 0.1 * values.max()  # regular states: a crossing's test would be far from its threshold
    y0 = eng.pack(q0, np.zeros(len(eng.independent)))
    closed = eng.closed(y0[None])[0][0]
    assert start_rank(eng, y0) == pytest.approx(terms.rank_value(closed), rel=0, abs=8 * np.finfo(float).eps * scale)


def test_the_vehicles_rank_values_are_its_loop_blocks_singular_values():
    """The vehicle's Φ_q (36 × 47) is read as its corners' blocks (18 × 21, 9 × 10, 9 × 10: the front corners joined
    by the steering), whose singular values together are the whole matrix's: within the Frobenius norm of the
    entries left out (Weyl's inequality) and both SVDs' rounding (m ε σ₁ each); each state's the same bits alone as
    in a batch; a state with an entry between the blocks beyond SEPARATE, and a Φ_q of one block (the Delta
    3R[2US]'s), get the whole matrix's SVD, bit for bit."""
    eng = engine(samples.load("vehicle"))
    blocks = loop_blocks(eng)
    assert sorted(entries.shape for entries in blocks.shapes) == [(1, 18, 21), (2, 9, 10)]
    q = eng.mech.assemble()[0] + np.random.default_rng(2).normal(scale=0.05, size=(20, eng.n))
    jacobians = eng.loop_jacobians(q)
    values, whole = blocks.values(jacobians), np.linalg.svd(jacobians, compute_uv=False)
    flat = jacobians.transpose(0, 2, 1).reshape(len(q), -1)  # by columns, as LoopBlocks.outside counts them
    left_out = np.linalg.norm(flat[:, blocks.outside], axis=1)
    assert (left_out <= SEPARATE * whole[:, 0]).all()
    bound = left_out + 2 * jacobians.shape[1] * np.finfo(float).eps * whole[:, 0]
    assert (np.abs(values - whole).max(axis=1) <= bound).all()
    assert all(np.array_equal(blocks.values(jacobians[k : k + 1])[0], values[k]) for k in range(len(q)))
    between = jacobians.copy()
    row, column = blocks.outside[0] % jacobians.shape[1], blocks.outside[0] // jacobians.shape[1]
    between[3, row, column] = 1e-6 * whole[3, 0]
    assert np.array_equal(blocks.values(between)[3], np.linalg.svd(between[3], compute_uv=False))
    delta = engine(samples.load("delta_3rus"))
    jacobians = delta.loop_jacobians(
        delta.mech.assemble()[0] + 0.05 * np.random.default_rng(3).normal(size=(5, delta.n))
    )
    assert np.array_equal(loop_blocks(delta).values(jacobians), np.linalg.svd(jacobians, compute_uv=False))


@pytest.mark.parametrize("name", ["delta_3rus", "chain"])
def test_check_compiles_nothing(tmp_path, monkeypatch, capsys, name):
    """`mbstudio check` says what the engine will be without building it: on a closed loop with a parallel
    machine's report (the Delta) and on a 24-link spatial chain, a fresh cache holds no file afterwards."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MBSTUDIO_CACHE", str(cache))
    path = samples.path(name) if name != "chain" else tmp_path / "chain.mbs"
    if name == "chain":
        save(spatial_chain(24), path)
    assert main(["check", str(path)]) == 0
    assert "built (or loaded from the cache) by the first run" in capsys.readouterr().out
    assert not cache.exists() or not any(path.is_file() for path in cache.rglob("*"))
