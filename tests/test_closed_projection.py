"""The closed-loop projection as one function of scalar code (dynamics/engine.py, `_Graph.straight_line`) against
the graph's own route, its solves and products as graph nodes, evaluated on CasADi's virtual machine (nothing is
compiled): the same operations, so the same numbers to rounding, at closed states and 1e-4 off the loops (where the
further Newton steps are taken)."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.dynamics.engine import _Graph, _graph, canonical_text, engine


def _state_equations(name: str, monkeypatch) -> tuple:
    """The state equation traced both ways, and the engine (its layout and a closed start)."""
    model = samples.load(name)
    eng = engine(model)  # before the route is patched: an engine built under the patch is filed under its model's
    # key, and every later run in that cache (a user's, where MBSTUDIO_CACHE is not set) took the slower route
    straight = _graph(canonical_text(model), None, symbolic=False)
    assert straight.straight_line
    ours = {f.name(): f for f in straight.functions()}["state_equation"]
    monkeypatch.setattr(_Graph, "straight_line", property(lambda graph: False))  # a large loop block's route
    theirs = {f.name(): f for f in _graph(canonical_text(model), None, symbolic=False).functions()}["state_equation"]
    return ours, theirs, eng


@pytest.mark.parametrize("name", ["sla_suspension", pytest.param("vehicle", marks=pytest.mark.slow)])  # 4 s
def test_the_scalar_projection_is_the_graphs(name, monkeypatch):
    straight, graph, eng = _state_equations(name, monkeypatch)
    rng = np.random.default_rng(7)
    q = eng.close_loops(eng.mech.assemble(None)[0])[0]
    for off in (0.0, 1e-7, 1e-4):
        y = eng.pack(q, rng.standard_normal(len(eng.independent))) + off * rng.standard_normal(eng.state_size)
        ours, theirs = ([np.asarray(x).ravel() for x in f(0.3, y, np.zeros(eng.n))] for f in (straight, graph))
        for a, b in zip(ours, theirs, strict=True):  # ẏ, the closed q, max |Φ|
            assert np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(b).max())
