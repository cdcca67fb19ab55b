"""Shared test data: a small valid model written as the dict a `.mbs` file parses to."""

from __future__ import annotations

import copy
import os

# Small QR/SVD calls run far slower with several BLAS threads fighting for the two cores of our machines.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import subprocess
from pathlib import Path

import pytest

# The suite's engines go to a cache of its own, kept between runs beside the user's (MBSTUDIO_CACHE still chooses
# another): a test that patches how an engine is traced files that engine under the model's key, and the user's own
# runs must never load it (a patched projection once made every later vehicle run in the user's cache 1.5x slower).
if not os.environ.get("MBSTUDIO_CACHE"):
    import platformdirs

    os.environ["MBSTUDIO_CACHE"] = str(Path(platformdirs.user_cache_dir("mbstudio", appauthor=False)) / "tests")


def fuzz_seed() -> int | None:
    """The seed of every hypothesis test in a run: MBSTUDIO_FUZZ_SEED if set ('random' for a fresh draw each run,
    as a hunt wants), else the commit's hash, so that the same commit draws the same examples on every machine and
    CI's verdict is the commit's, not a draw's; None (hypothesis' own draw) outside a git clone."""
    chosen = os.environ.get("MBSTUDIO_FUZZ_SEED", "")
    if chosen:
        return None if chosen == "random" else int(chosen)
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return int(head[:15], 16) if head else None


def pytest_configure(config):
    """Seed hypothesis from fuzz_seed() unless --hypothesis-seed was given."""
    if config.getoption("--hypothesis-seed", None) is None:
        from hypothesis import core

        core.global_force_seed = config.fuzz_seed = fuzz_seed()


def pytest_report_header(config):
    seed = getattr(config, "fuzz_seed", None)
    return f"hypothesis seed: {seed} (MBSTUDIO_FUZZ_SEED=random draws anew)" if seed is not None else None


# Müller's (2021) parallel machines (checked in depth in tests/test_pkm.py) and our linear Delta: the per-sample
# checks of the other files run them with the slow ones, where each costs seconds to a minute.
PKM_SAMPLES = ("delta_3rus", "irsbot2", "linear_delta")
# The full vehicle (30 bodies, 12 loops): its corners are the SLA's, which the default run checks; the vehicle itself
# (tests/test_vehicle.py) and its share of the per-sample checks run with the slow ones.
LARGE_SAMPLES = ("vehicle", "vehicle_handling")


def slow_for(names: list[str], slow: set[str]) -> list:
    """Sample names as test parameters, those in `slow` (and the parallel machines and the vehicle) marked slow."""
    heavy = {*slow, *PKM_SAMPLES, *LARGE_SAMPLES}
    return [pytest.param(n, marks=pytest.mark.slow) if n in heavy else n for n in names]


# A planar four-bar (ground 0 -> crank 1 -> coupler 2 -> rocker 3 -> ground), four revolute joints about z,
# the last one cut. Lengths are parameters; it uses a named point, a named frame, an explicit z/x frame,
# expressions in points, frames and inertia, coordinate limits, and a chosen independent coordinate.
FOUR_BAR = {
    "format": "mbstudio",
    "schema_version": 1,
    "name": "four-bar",
    "description": "A planar four-bar linkage for the model-layer tests.",
    "gravity": [0, 0, -9.81],
    "parameters": [
        {"name": "L0", "value": 0.4, "unit": "m", "description": "ground link"},
        {"name": "L1", "value": 0.1, "unit": "m"},
        {"name": "L2", "value": 0.35, "unit": "m"},
        {"name": "L3", "value": 0.3, "unit": "m"},
    ],
    "bodies": [
        {
            "label": "1",
            "name": "crank",
            "inertia": {
                "m": 1.0,
                "mx": "0.5*L1",
                "my": 0,
                "mz": 0,
                "Ixx": 0.001,
                "Ixy": 0,
                "Ixz": 0,
                "Iyy": "L1**2/3",
                "Iyz": 0,
                "Izz": "L1**2/3",
            },
            "points": {"B": ["L1", 0, 0]},
            "frames": {"B": {"origin": "B"}},
        },
        {
            "label": "2",
            "name": "coupler",
            "inertia": {
                "m": 2.0,
                "mx": "L2",
                "my": 0,
                "mz": 0,
                "Ixx": 0.001,
                "Ixy": 0,
                "Ixz": 0,
                "Iyy": "2*L2**2/3",
                "Iyz": 0,
                "Izz": "2*L2**2/3",
            },
            "points": {},
            "frames": {},
        },
        {
            "label": "3",
            "name": "rocker",
            "inertia": {
                "m": 1.5,
                "mx": "0.75*L3",
                "my": 0,
                "mz": 0,
                "Ixx": 0.001,
                "Ixy": 0,
                "Ixz": 0,
                "Iyy": "L3**2/2",
                "Iyz": 0,
                "Izz": "L3**2/2",
            },
            "points": {},
            "frames": {},
        },
    ],
    "joints": [
        {
            "name": "A",
            "type": "revolute",
            "parent": "0",
            "child": "1",
            "parent_frame": {"origin": [0, 0, 0]},
            "child_frame": {"origin": [0, 0, 0]},
            "coordinates": [{"name": "theta1", "initial": 1.0}],
        },
        {
            "name": "B",
            "type": "revolute",
            "parent": "1",
            "child": "2",
            "parent_frame": "B",
            "child_frame": {"origin": [0, 0, 0]},
            "coordinates": [{"name": "theta2", "initial": -0.8}],
        },
        {
            "name": "C",
            "type": "revolute",
            "parent": "2",
            "child": "3",
            "parent_frame": {"origin": ["L2", 0, 0]},
            "child_frame": {"origin": ["L3", 0, 0]},
            "coordinates": [{"name": "theta3", "initial": 1.9}],
        },
        {
            "name": "D",
            "type": "revolute",
            "parent": "3",
            "child": "ground",
            "parent_frame": {"origin": [0, 0, 0], "z": [0, 0, 1], "x": [1, 0, 0]},
            "child_frame": {"origin": ["L0", 0, 0]},
            "coordinates": [{"name": "theta4", "min": -3.14, "max": 3.14}],
            "cut": True,
        },
    ],
    "independent_coordinates": ["theta1"],
}


@pytest.fixture(scope="session")
def four_bar():
    """A factory: each call returns a fresh deep copy of FOUR_BAR, free to mutate."""
    return lambda: copy.deepcopy(FOUR_BAR)


# ------------------------------------------------------------------ decisions that must survive rounding
# docs/architecture.md, principle 9: a choice taken on a floating-point threshold (rank, partition, branch, closes or
# not) must not flip when the inputs move by 1e-13. Tests of such decisions take the `perturb` fixture and run once
# as given and once per seed with every number of their inputs multiplied by (1 + 1e-13 N(0, 1)).
PERTURBATION = 1e-13
PERTURBATION_SEEDS = (None, 1, 2, 3)


class Perturbation:
    """Multiplies every float of a model (its parameters, points, frames, inertia, coordinates, gravity) or of
    an array by (1 + size N(0, 1)), size 1e-13 unless given; the identity for seed None."""

    def __init__(self, seed: int | None, size: float = PERTURBATION) -> None:
        self.seed, self.size = seed, size
        self.rng = None if seed is None else __import__("numpy").random.default_rng(seed)

    def __call__(self, x):
        import json

        import numpy as np

        from mbstudio.model import Model, dumps, loads

        if self.rng is None:
            return x
        if isinstance(x, Model):
            return loads(json.dumps(self._walk(json.loads(dumps(x)))))
        x = np.asarray(x, dtype=float)
        return x * (1 + self.size * self.rng.standard_normal(x.shape))

    def _walk(self, node):
        if isinstance(node, dict):
            return {k: self._walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [self._walk(v) for v in node]
        if isinstance(node, float):
            return node * (1 + self.size * float(self.rng.standard_normal()))
        return node


@pytest.fixture(params=PERTURBATION_SEEDS, ids=lambda s: "as-given" if s is None else f"perturbed-{s}")
def perturb(request) -> Perturbation:
    return Perturbation(request.param)
