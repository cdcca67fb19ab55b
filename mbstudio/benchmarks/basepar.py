"""Base parameters of the SLA by the three routes, against their targets."""

from __future__ import annotations

import numpy as np

from .. import samples
from ..kinematics import Mechanism
from .registry import Side, benchmark, compare, compared_row, measure, target_row

# ---------------------------------------------------------------------------------------- base parameters
# seconds for one run of each route on the SLA suspension, on a 2-core machine, and for
# variable precision after the move to MPFR (numerics/backends.py MultiPrecision)
BASEPAR_TARGETS = {"vp50": 2.0, "vp500": 6.0, "dp": 0.5, "symbolic": 30.0}
BASEPAR_SAMPLES = 100  # of the SLA sample's trajectory, Iriarte et al.'s (2017) eq. (16)


def _basepar_row(key: str, label: str, method: str, digits: int = 50) -> dict:
    """One whole pipeline run (W, SVD or symbolic method, expressions, comparison); the reference is the target."""
    from ..identification.pipeline import base_parameters

    model = samples.load("sla_suspension")
    args = (model, method, digits, BASEPAR_SAMPLES)
    run = base_parameters(*args)
    rank = run.vp.final.rank if method == "vp" else getattr(run, method).rank
    # thread CPU time: the runs are long, three samples (one for the symbolic method) however short the run
    timing = measure(Side(base_parameters, [args]), min_samples=1 if method == "symbolic" else 3, max_samples=3)
    return target_row(f"sla {label} (s per run)", timing, BASEPAR_TARGETS[key], rank=rank, points=BASEPAR_SAMPLES)


def _observation_row(digits: int) -> dict:
    """W of the SLA (the samples of a VP run) at `digits` in MPFR against the same in mpmath, the arithmetic
    MPFR replaced: the before/after ratio, measured in one run."""
    from ..identification import observation_matrix
    from ..identification.pipeline import chosen_trajectory, fourier_path, sample_times
    from ..numerics.backends import MpmathPrecision, MultiPrecision

    model = samples.load("sla_suspension")

    def build(backend) -> np.ndarray:
        mech = Mechanism(model, backend=backend)
        trajectory, _ = chosen_trajectory(model, None, mech)
        times = sample_times(mech, trajectory.duration, BASEPAR_SAMPLES)
        return observation_matrix(mech, times, fourier_path(mech, trajectory))

    comparison = compare(Side(build, [(MultiPrecision(digits),)]), Side(build, [(MpmathPrecision(digits),)]), 0, 1, 1)
    return compared_row(f"sla W at {digits} digits, MPFR vs mpmath (s per W)", comparison, points=BASEPAR_SAMPLES)


@benchmark("basepar_vp50")
def _basepar_vp50(states: int) -> list[dict]:
    """The whole VP pipeline on the SLA at 50 digits, and its W against mpmath; `states` does not apply."""
    return [_basepar_row("vp50", "VP pipeline 50 digits", "vp", 50), _observation_row(50)]


@benchmark("basepar_vp500")
def _basepar_vp500(states: int) -> list[dict]:
    """The whole VP pipeline on the SLA at 500 digits, and its W against mpmath; `states` does not apply."""
    return [_basepar_row("vp500", "VP pipeline 500 digits", "vp", 500), _observation_row(500)]


@benchmark("basepar_dp")
def _basepar_dp(states: int) -> list[dict]:
    """The DP pipeline on the SLA; `states` does not apply."""
    return [_basepar_row("dp", "DP pipeline", "dp")]


@benchmark("basepar_symbolic")
def _basepar_symbolic(states: int) -> list[dict]:
    """The symbolic method on the SLA; `states` does not apply."""
    return [_basepar_row("symbolic", "symbolic method", "symbolic")]
