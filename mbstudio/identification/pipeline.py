"""The three routes to a model's base inertial parameters, side by side (docs/architecture.md, principles 1, 3, 6).

    run = base_parameters(model, method="all", digits=[30, 50])
    run.vp.final.rank, run.comparison["vp_symbolic"]["same_row_space"], run.to_json()

DP and VP run Gautier's method (`gautier`) on the observation matrix W along one exciting trajectory: the
model's first `trajectories` entry, else a default Fourier path of the independent coordinates. VP builds W
with a Mechanism at the working precision, so every step (assembly, velocities, accelerations, regressor,
SVD) is done in it (Iriarte et al. 2017, section 3); a list of digits runs `ridge_study`. The symbolic route is Ros et
al.'s method (`symbolic_base`). Unless told otherwise, DP and VP eliminate the parameters the symbolic route
eliminates (the paper's practice, Tables 3 and 4 for the SLA), so that the three β are directly comparable;
then `compare_routes` checks that the ranks and the row spaces of the three base-parameter maps agree.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import mpmath
import numpy as np
import sympy

from .. import __version__
from ..kinematics.mechanism import Mechanism
from ..model import Model, ModelError
from ..model.document import Harmonic, Trajectory
from ..model.hashing import model_hash
from ..numerics import as_mpf
from ..progress import Cancel, Progress
from ..progress import Stages as _Monitor
from . import vp_linalg
from .gautier import BaseParameterResult, RidgeStudy, compare_routes, gautier_dp, ridge_study
from .observation import FourierPath, branch_guide, observation_matrix
from .symbolic_base import SymbolicBaseParameters, symbolic_base_parameters

METHODS = ("dp", "vp", "symbolic", "all")
ROUTES = ("symbolic", "dp", "vp")  # run order: the symbolic route's elimination serves the other two
ROUTE_WEIGHTS = {"symbolic": 0.1, "dp": 0.05, "vp": 0.85}  # shares of the progress bar
CHUNK = 25  # samples per batch of W: progress and cancel are checked between batches
DEFAULT_DURATION = 20.0
# the default path: per independent coordinate, two harmonics of incommensurate frequencies (rad/s)
DEFAULT_HARMONICS = ((0.4, 1.0, 0.0), (0.1, 3.1, 0.2))
DEFAULT_AMPLITUDE = sum(a for a, _, _ in DEFAULT_HARMONICS)


@dataclass
class EvaluatedSymbolic:
    """The symbolic route's β at the model's parameter values, `digits` digits: what `compare_routes` needs."""

    parameter_names: list[str]
    digits: int
    rank: int
    eliminated: list[str]
    kept_indices: list[int]
    eliminated_indices: list[int]
    beta: np.ndarray  # (r, p − r) mpf
    beta_noise: str  # the rounding of the evaluation
    base_parameters: list[dict]

    def base_map(self) -> np.ndarray:
        out = np.full((self.rank, len(self.parameter_names)), mpmath.mpf(0), dtype=object)
        out[range(self.rank), self.kept_indices] = mpmath.mpf(1)
        out[:, self.eliminated_indices] = self.beta
        return out


@dataclass
class BaseParameterRun:
    model_name: str
    model_hash: str  # sha256 of mbstudio.model.dumps(model)
    parameter_names: list[str]
    method: str
    digits: list[int]
    samples: int
    trajectory: dict  # what W was built on, and where it came from
    options: dict
    version: str
    seconds: dict[str, float]  # per route, everything included (W, SVD, expressions)
    symbolic: SymbolicBaseParameters | None = None
    dp: BaseParameterResult | None = None
    vp: RidgeStudy | None = None
    comparison: dict = field(default_factory=dict)
    vp_observation: np.ndarray | None = field(default=None, repr=False)  # W at the last VP precision

    def to_json(self) -> dict:
        """Issue 4, section 6: model, model_hash, parameter_names, results {dp, vp, symbolic}, plus the
        comparison and the provenance."""
        results = {}
        if self.dp is not None:
            results["dp"] = _numeric_json(self.dp.to_json(), self.parameter_names, self.seconds["dp"])
        if self.vp is not None:
            results["vp"] = _numeric_json(self.vp.to_json(), self.parameter_names, self.seconds["vp"])
        if self.symbolic is not None:
            results["symbolic"] = symbolic_json(self.symbolic, self.seconds["symbolic"])
        return {
            "model": self.model_name,
            "model_hash": self.model_hash,
            "parameter_names": self.parameter_names,
            "results": results,
            "comparison": self.comparison,
            "provenance": {
                "method": self.method,
                "digits": self.digits,
                "samples": self.samples,
                "trajectory": self.trajectory,
                "options": self.options,
                "version": self.version,
                "seconds": self.seconds,
            },
        }


def base_parameters(
    model: Model,
    method: str = "dp",
    digits: int | Sequence[int] = 50,
    samples: int | None = None,
    eliminate: Sequence[str] | None = None,
    priority: Sequence[str] | None = None,
    trajectory: Trajectory | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> BaseParameterRun:
    """Base parameters of `model` by `method` ("dp", "vp", "symbolic" or "all"), with provenance and, for
    more than one route, their comparison.

    `digits`: the VP precision, or a rising list for a ridge study. `samples` overrides the trajectory's.
    `eliminate` (exactly the parameters to eliminate) or `priority` (an order of preference) apply to every
    route; DP takes either as a priority, since its rank may be wrong. `trajectory`: default the model's first
    one, else a Fourier path of the independent coordinates. `progress(fraction, message)` is called between
    stages and batches of samples, where `cancel` (an Event or a callable returning True) raises Cancelled."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    digits_list = [digits] if isinstance(digits, int) else list(digits)
    if not digits_list or min(digits_list) < 16:
        raise ValueError(f"variable precision needs at least 16 digits; {digits_list} were given")
    routes = [r for r in ROUTES if method in (r, "all")]
    names = model.inertial_parameter_names()
    float_mech = Mechanism(model)
    chosen, source = chosen_trajectory(model, trajectory, float_mech)
    count = samples or chosen.samples
    if count < 2:
        raise ValueError(f"at least 2 samples are needed; {count} were asked for")
    monitor = _Monitor(progress, cancel, [ROUTE_WEIGHTS[r] for r in routes])
    run = BaseParameterRun(
        model.name,
        model_hash(model),
        names,
        method,
        digits_list,
        count,
        trajectory_json(chosen, source),
        {"eliminate": _listed(eliminate), "priority": _listed(priority)},
        __version__,
        {},
    )
    if "symbolic" in routes:
        monitor.start("symbolic method")
        start = time.perf_counter()
        run.symbolic = symbolic_base_parameters(model, eliminate=eliminate, priority=priority)
        run.seconds["symbolic"] = time.perf_counter() - start
    given = eliminate is not None
    wanted = list(
        eliminate
        if given
        else priority
        if priority is not None
        else run.symbolic.eliminated
        if run.symbolic is not None
        else []
    )
    run.options["elimination"] = (
        "given"
        if given
        else "priority"
        if priority is not None
        else "symbolic route's"
        if run.symbolic is not None
        else "engine default"
    )
    if "dp" in routes:
        monitor.start("double precision")
        start = time.perf_counter()
        # one batch: double precision is quick, and each batch re-enters the path from the initial configuration
        w = _observation(float_mech, chosen, count, monitor, "double precision W", chunk=count)
        run.dp = gautier_dp(w, names, priority=wanted or None)
        run.seconds["dp"] = time.perf_counter() - start
    if "vp" in routes:
        monitor.start("variable precision")
        start = time.perf_counter()
        run.vp, run.vp_observation = _vp_route(
            model,
            chosen,
            count,
            digits_list,
            names,
            wanted if given else None,
            None if given else wanted or None,
            monitor,
        )
        run.seconds["vp"] = time.perf_counter() - start
    monitor.start("comparison")
    run.comparison = compare_all(comparable_routes(model, run))
    if run.vp is not None and run.symbolic is not None:
        run.comparison["vp_symbolic"]["null_residual"] = symbolic_null_residual(
            model, run.symbolic, run.vp_observation, run.vp.final.digits
        )
    monitor.done()
    return run


def _listed(names: Sequence[str] | None) -> list[str] | None:
    return None if names is None else list(names)


# ---------------------------------------------------------------------------------------- trajectory and W
def default_trajectory(mech: Mechanism) -> Trajectory:
    """Two harmonics per independent coordinate about its initial value, scaled down to stay inside the
    coordinate's limits; the j-th coordinate's frequencies shifted so that no two coordinates move alike."""
    limits = {c.name: (c.min, c.max) for j in mech.model.joints for c in j.coordinates}
    initial = dict(zip(mech.coordinates, np.asarray(mech.tree.initial_coordinates(), dtype=float), strict=True))
    coordinates = {}
    for j, name in enumerate(mech.independent):
        lo, hi = limits.get(name, (None, None))
        room = min([DEFAULT_AMPLITUDE] + [abs(initial[name] - x) for x in (lo, hi) if x is not None])
        scale = room / DEFAULT_AMPLITUDE
        coordinates[name] = [Harmonic(a * scale, omega + 0.37 * j, phase) for a, omega, phase in DEFAULT_HARMONICS]
    samples = max(50, -(-15 * len(mech.model.bodies) // max(1, len(mech.independent))))  # rows ≈ 1.5 p
    return Trajectory("default", coordinates, DEFAULT_DURATION, samples, "MB Studio's default exciting path")


def chosen_trajectory(model: Model, trajectory: Trajectory | None, mech: Mechanism) -> tuple[Trajectory, str]:
    """The trajectory to follow (the given one, else the model's first, else the default path) and where it
    came from; a ModelError if it drives a coordinate that is not independent (it would be ignored)."""
    if trajectory is not None:
        chosen, source = trajectory, "argument"
    elif model.trajectories:
        chosen, source = model.trajectories[0], "model"
    else:
        return default_trajectory(mech), "default"
    unknown = set(chosen.coordinates) - set(mech.independent)
    if unknown:
        raise ModelError(
            f"trajectory '{chosen.name}'",
            "drives coordinates that are not independent coordinates",
            sorted(unknown),
            f"the independent coordinates: {', '.join(mech.independent)}",
        )
    return chosen, source


def trajectory_json(trajectory: Trajectory, source: str) -> dict:
    return {
        "name": trajectory.name,
        "source": source,
        "duration": trajectory.duration,
        "samples": trajectory.samples,
        "coordinates": {
            c: [[h.amplitude, h.frequency, h.phase or 0.0] for h in terms]
            for c, terms in trajectory.coordinates.items()
        },
    }


def fourier_path(mech: Mechanism, trajectory: Trajectory) -> FourierPath:
    """The trajectory as a FourierPath in the mechanism's arithmetic (expressions such as "sqrt(2)" are
    evaluated at the working precision, with the model's parameters)."""
    geometry = mech.tree.geometry
    with mech.backend.context():
        terms = [
            [
                tuple(geometry.value(x) for x in (h.amplitude, h.frequency, h.phase or 0.0))
                for h in trajectory.coordinates.get(name, [])
            ]
            for name in mech.independent
        ]
    return FourierPath(mech, terms)


def sample_times(mech: Mechanism, duration: float, count: int) -> list:
    """`count` equally spaced times over [0, duration], both ends included, in the mechanism's arithmetic."""
    b = mech.backend
    with b.context():
        end = b.scalar(duration)
        return [end * k / (count - 1) for k in range(count)]


def _observation(
    mech: Mechanism,
    trajectory: Trajectory,
    count: int,
    monitor: _Monitor,
    label: str,
    share: tuple[float, float] = (0.0, 1.0),
    chunk: int = CHUNK,
) -> np.ndarray:
    """W over the trajectory, built `chunk` samples at a time between progress reports; `share` is the part
    of the current route this covers. The assembly branch is followed once along the whole path in float64,
    from the document's initial configuration (branch_guide); each batch is then closed at the working precision."""
    path = fourier_path(mech, trajectory)
    times = sample_times(mech, trajectory.duration, count)
    with mech.backend.context():
        guide = branch_guide(mech, path(times, 0))  # one float64 path for every batch
    blocks = []
    for first in range(0, count, chunk):
        monitor.within(share[0] + (share[1] - share[0]) * first / count, f"{label}: sample {first + 1} of {count}")
        part = slice(first, first + chunk)
        blocks.append(observation_matrix(mech, times[part], path, None if guide is None else guide[part]))
    return np.concatenate(blocks)


def _vp_route(
    model: Model,
    trajectory: Trajectory,
    count: int,
    digits_list: list[int],
    names: list[str],
    eliminate: list[str] | None,
    priority: list[str] | None,
    monitor: _Monitor,
) -> tuple[RidgeStudy, np.ndarray]:
    """The ridge study, and W at its last precision (for `symbolic_null_residual`)."""
    steps = len(digits_list)
    built: dict[int, np.ndarray] = {}

    def build(digits: int) -> np.ndarray:
        k = digits_list.index(digits)
        # W takes about half of each precision's time, the SVD the other half
        built[digits] = _observation(
            Mechanism(model, precision=digits),
            trajectory,
            count,
            monitor,
            f"W at {digits} digits",
            (k / steps, (k + 0.5) / steps),
        )
        return built[digits]

    study = ridge_study(build, names, digits_list, eliminate=eliminate, priority=priority)
    return study, built[study.final.digits]


# ---------------------------------------------------------------------------------------- comparison
def evaluate_symbolic(model: Model, result: SymbolicBaseParameters, digits: int) -> EvaluatedSymbolic:
    """β of the symbolic route at the model's parameter values (read as the decimals they are), `digits`
    digits."""
    exact = {sympy.Symbol(p.name, real=True): sympy.Rational(repr(p.value)) for p in model.parameters}
    names = result.names
    kept = [names.index(n) for n in result.base]
    elim = [names.index(n) for n in result.eliminated]
    with mpmath.workdps(digits):
        beta = np.full((len(kept), len(elim)), mpmath.mpf(0), dtype=object)
        for i, k in enumerate(result.base):
            for e, c in result.beta[k].items():
                beta[i, result.eliminated.index(e)] = mpmath.mpf(sympy.N(c.subs(exact), digits + 10))
    base = [{"name": f"phi_b{i + 1}"} for i in range(len(kept))]
    noise = mpmath.nstr(10 * vp_linalg.machine_epsilon(digits), 3)
    return EvaluatedSymbolic(names, digits, len(kept), list(result.eliminated), kept, elim, beta, noise, base)


def symbolic_null_residual(model: Model, result: SymbolicBaseParameters, w: np.ndarray, digits: int) -> dict:
    """Each symbolic direction (exact, evaluated at `digits` digits) as a null vector of the VP observation
    matrix W: the largest |W n| relative to ‖W‖·‖n‖ (max norms), and whether it is below the rounding that W
    carries (10^(10 − digits), as for the comparisons)."""
    exact = {sympy.Symbol(p.name, real=True): sympy.Rational(repr(p.value)) for p in model.parameters}
    index = {n: i for i, n in enumerate(result.names)}
    worst = mpmath.mpf(0)
    with mpmath.workdps(digits):
        wm = as_mpf(w)
        scale = max(abs(x) for x in wm.ravel())
        for d in result.directions():
            n = {index[k]: mpmath.mpf(sympy.N(v.subs(exact), digits + 10)) for k, v in d.vector.items()}
            product = sum(wm[:, i] * c for i, c in n.items())
            worst = max(worst, max(abs(x) for x in product) / (scale * max(abs(c) for c in n.values())))
    return {
        "digits": digits,
        "directions": len(result.directions()),
        "max_relative": float(worst),
        "null": bool(worst <= mpmath.mpf(10) ** (10 - digits)),
    }


def comparable_routes(model: Model, run: BaseParameterRun) -> dict:
    """The routes that ran, VP first (the reference); the symbolic β evaluated at the VP precision (50
    digits without VP)."""
    routes: dict[str, object] = {}
    if run.vp is not None:
        routes["vp"] = run.vp.final
    if run.dp is not None:
        routes["dp"] = run.dp
    if run.symbolic is not None:
        routes["symbolic"] = evaluate_symbolic(model, run.symbolic, run.vp.final.digits if run.vp else 50)
    return routes


def compare_all(routes: dict) -> dict:
    """Each pair of routes: same rank, same row space, β differences (`compare_routes`), whether they agree
    (same rank and row space within what their precisions can tell), why their ranks differ when VP's evident
    ridge tells (`rank_reason`), and a verdict in words; "all_agree" over every pair, and
    "disagreements_explained" when every pair that does not agree has a route that could not decide."""
    out = {}
    keys = list(routes)
    vp = routes.get("vp")
    reference = vp if vp is not None and vp.ridge.evident else None
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            report = compare_routes(routes[a], routes[b]).to_json()
            report["agree"] = report["same_rank"] and report["same_row_space"]
            report["ranks"] = {a: routes[a].rank, b: routes[b].rank}
            report["doubtful"] = [k for k in (a, b) if _doubtful(routes[k])]
            report["rank_reason"] = rank_reason({a: routes[a], b: routes[b]}, reference)
            report["verdict"] = pair_verdict(report)
            out[f"{a}_{b}"] = report
    out["all_agree"] = all(r["agree"] for r in out.values())
    out["disagreements_explained"] = all(
        r["agree"] or (r["rank_reason"] or {}).get("kind") == "undecidable" for k, r in out.items() if k != "all_agree"
    )
    return out


def rank_reason(pair: dict, reference) -> dict | None:
    """Why two routes find different ranks, judged by VP's rank where its ridge is evident (`reference`): the
    route that differs from it is either double precision, whose own spectrum has no ridge after σ_r at least
    as deep as its rule requires (gautier.find_ridge) — it cannot decide the rank: IRSBot-2's σ22, σ23 = 1.5e-11,
    5e-12 lie 1.5 decades above its rounding at 1.6e-13 — or the symbolic route, which then found fewer
    directions than the null space holds (its directions are checked null vectors, so never more). None when
    the ranks agree or nothing decides."""
    ranks = {name: route.rank for name, route in pair.items()}
    if len(set(ranks.values())) == 1 or reference is None:
        return None
    r = reference.rank
    name, route = next(((n, x) for n, x in pair.items() if x.rank != r and x is not reference), (None, None))
    if name is None:
        return None
    if getattr(route, "ridge", None) is None:
        return {"kind": "symbolic incomplete", "route": name, "rank": r, "missing": route.rank - r}
    depth = _log10_ratio(route.sigma[r - 1], route.sigma[r]) if r < len(route.sigma) else math.inf
    if depth >= route.ridge.required_depth:
        return None
    return {
        "kind": "undecidable",
        "route": name,
        "rank": r,
        "depth_there": None if math.isinf(depth) else round(depth, 2),
        "required_depth": route.ridge.required_depth,
        "own_ridge": route.ridge.to_json(),
    }


def _log10_ratio(a, b) -> float:
    if b == 0:
        return math.inf
    return float(mpmath.log10(mpmath.mpf(a) / mpmath.mpf(b)))


def _doubtful(route) -> bool:
    """A numerical route whose rank no evident ridge decided."""
    ridge = getattr(route, "ridge", None)
    return ridge is not None and not ridge.evident


def pair_verdict(report: dict) -> str:
    """One phrase for a pair of routes, for the command line and the window: agree within the tolerance
    their precisions allow, differ (and why), or undecided when a route knows β to fewer than 3 digits."""
    if not report["same_rank"]:
        ranks = " vs ".join(f"{route} {rank}" for route, rank in report["ranks"].items())
        doubtful = "".join(f"; {route}'s rank is doubtful (no evident ridge)" for route in report["doubtful"])
        return f"differ: rank {ranks}{doubtful}{_rank_reason_text(report.get('rank_reason'))}"
    if not report["decided"]:
        return f"undecided: β is known only to {report['tolerance']:.2g} at these precisions"
    sine, beta = report["max_sine"], report["beta_max_difference"]
    within = f"within {report['tolerance']:.2g}, the lower precision's noise level of β"
    if report["same_row_space"]:
        shown = "" if beta is None else f" (largest β difference {beta:.2g})"
        return f"agree{shown}, {within}"
    return f"differ: largest principal sine {sine:.2g}, not {within}"


def _rank_reason_text(why: dict | None) -> str:
    if not why:
        return ""
    if why["kind"] == "undecidable":
        own = why["own_ridge"]
        return (
            f"; {why['route']} cannot decide the rank: its spectrum falls only {why['depth_there']} decades after "
            f"σ{why['rank']}, {why['required_depth']:g} needed (its own ridge, after σ{own['index']}, is "
            f"{own['log10_depth']:.1f} deep)"
        )
    more = "fewer" if why["missing"] > 0 else "more"
    return f"; the symbolic rules find {abs(why['missing'])} direction(s) {more} than VP's evident ridge shows"


# ---------------------------------------------------------------------------------------- JSON
def _numeric_json(out: dict, names: list[str], seconds: float) -> dict:
    """A DP or VP result with `terms` over every parameter name (0 where a parameter does not enter)."""
    out = dict(out, seconds=seconds)
    out["base_parameters"] = [dict(b, terms={n: b["terms"].get(n, "0") for n in names}) for b in out["base_parameters"]]
    return out


def symbolic_json(result: SymbolicBaseParameters, seconds: float) -> dict:
    """The symbolic route in the section 6 schema: terms are sympy-parsable expressions in the geometric
    symbols; no_effect and transfers list the directions found."""
    base = []
    for i, (kept, expr) in enumerate(result.base.items()):
        terms = {n: "1" if n == kept else str(result.beta[kept].get(n, 0)) for n in result.names}
        base.append({"name": f"phi_b{i + 1}", "expression": str(expr), "terms": terms})
    return {
        "method": "symbolic",
        "rank": result.rank,
        "seconds": seconds,
        "eliminated": result.eliminated,
        "base_parameters": base,
        "no_effect": [_direction_json(d) for d in result.no_effect],
        "transfers": [_direction_json(d) for d in result.transfers],
        "lagrangian_check": None if result.check is None else result.check.to_json(),
        "notes": result.notes,
    }


def _direction_json(d) -> dict:
    return {
        "condition": d.condition,
        "multipole": d.multipole,
        "bodies": list(d.bodies),
        "joint": d.joint,
        "eliminates": d.eliminates,
        "vector": {k: str(v) for k, v in d.vector.items()},
    }
