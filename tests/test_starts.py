"""A run's start (simulation/starts.py) read from the engine cache gives the bits a computed one gives: the same
samples, measures and energies, whether the first run in a process computes its start or reads it."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import canonical_text
from mbstudio.numerics.native_cache import discard, write_sealed
from mbstudio.simulation import starts
from mbstudio.simulation.run import simulate


def _series(result) -> dict[str, np.ndarray]:
    """Every sampled series of a run, by name."""
    out = {"t": result.t, "q": result.q, "qd": result.qd, "qdd": result.qdd, "energy": result.total}
    out |= {f"column {name}": values for name, _, values in result.columns()}
    return out


def _filed(text: str):
    path = starts._filed(text)
    if path is None:
        pytest.skip("no usable engine cache here: starts are computed every time")
    return path


@pytest.mark.parametrize("name", ["four_bar", "sla_suspension"])  # a loop; loops with a spring and measures
def test_a_start_read_from_the_cache_gives_the_samples_of_a_computed_one(name, monkeypatch):
    model = samples.load(name)
    path = _filed(canonical_text(model))
    discard(path)
    starts.clear_starts()
    cold = simulate(model, 0.2, samples=21)
    assert path.exists()  # filed by that run

    def computed(mech):
        raise AssertionError("the start was computed again instead of read")

    starts.clear_starts()
    monkeypatch.setattr(starts, "own_start", computed)
    cached = simulate(model, 0.2, samples=21)
    a, b = _series(cold), _series(cached)
    assert a.keys() == b.keys()
    for key in a:  # the same bits: the same code computed them from the same text (NaN: a ratio at zero travel)
        assert np.array_equal(a[key], b[key], equal_nan=True), key
    assert cached.provenance.rhs_evaluations == cold.provenance.rhs_evaluations


def test_a_filed_start_that_does_not_read_back_is_computed_again_and_replaced():
    model = samples.load("four_bar")
    text = canonical_text(model)
    path = _filed(text)
    starts.clear_starts()
    expected = starts.document_start(text)[2]
    write_sealed(path, b"not a start")  # sealed, so only unpickling it fails
    starts.clear_starts()
    mech, _, q0 = starts.document_start(text)
    assert np.array_equal(q0, expected)
    starts.clear_starts()
    assert starts._read(path) is not None  # replaced by a good one


def test_a_run_from_a_filed_start_skips_the_dynamics_check_that_passed_when_it_was_filed(monkeypatch):
    """The check ran in the process that filed the start, on the same text, by the same code (the file's key)."""
    from mbstudio.simulation import run

    model = samples.load("four_bar")
    text = canonical_text(model)
    _filed(text)
    simulate(model, 1e-3, samples=2)  # filed, if it was not
    starts.clear_starts()

    def checked(document):
        raise AssertionError("checked again although its start was filed")

    monkeypatch.setattr(run, "check_dynamics", checked)
    simulate(model, 1e-3, samples=2)
    assert starts.started(text)


def test_a_document_that_fails_the_dynamics_check_is_never_filed_and_fails_in_every_process():
    """A start is filed only after the check passed, so a fresh process (its starts forgotten) checks it again and
    names the massless bodies every time."""
    import json

    from mbstudio.benchmarks.models import chain_document
    from mbstudio.model import ModelError, loads

    document = chain_document(4)
    for body in document["bodies"][2:]:  # the last two links
        body["inertia"] = dict.fromkeys(body["inertia"], 0.0)
    model = loads(json.dumps(document))
    text = canonical_text(model)
    path = _filed(text)
    for _ in range(2):
        starts.clear_starts()
        with pytest.raises(ModelError, match=r"joint 'j3': moves only bodies without mass or inertia \('3', '4'\)"):
            simulate(model, 0.01, samples=3)
        assert not path.exists() and not starts.started(text)
