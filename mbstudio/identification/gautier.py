"""Base inertial parameters by Gautier's SVD method (seed 000, sections 2-3), in double and variable precision.

W = U S Vᵀ; V2, the last p − r columns of V, spans the null space; splitting φ = (φ1, φ2) so that V22 (the rows
of V2 for φ2) is square and invertible gives β = −V21 V22⁻¹ and the base parameters φ_b = φ1 + β φ2, with
W φ = W_b φ_b and W_b the columns of φ1.

The ridge after σ_r, of depth log10(σ_r / σ_{r+1}), is *evident* when
  1. it is at least max(3, digits / 4) decimal digits deep (4 in double precision),
  2. σ_{r+1} ≤ 10^(−digits/2)·σ1: what follows it is down in the rounding of the working precision, and
  3. it is at least twice as deep as every drop before it (drops after it, inside the rounding noise or down
     to exact zeros, say nothing about the rank).
The rank is r for the first evident ridge. Without one it is the count of singular values above the tolerance
10³·max(m, p)·eps·σ1 (eps = 2^(1 − bits): 2⁻⁵² in double precision), and the decision is *doubtful* (seed
000, section 7 and Fig. 5). max(m, p)·eps·σ1, numpy's matrix_rank and MATLAB's rank, is the rounding floor:
singular values near it are rounding noise, which another BLAS, another thread count or a 1e-13 change of the
model moves by whole factors, so a count taken there changes from machine to machine (the SLA's double-precision
rank came out 36 from the command line and 37 in the window's job process). The tolerance stands three digits
above the floor, where rounding cannot move a singular value across it. Drops are measured between singular
values raised to the floor (noise below it is no deeper than the floor), and for a full-rank W from σ_p to the
floor. The tolerance rule alone would be fooled in variable precision, where W comes out of a long computation
and its zero singular values sit some digits above eps·σ1; both ranks are reported.

In variable precision W must itself have been computed at the working precision (seed 000, section 3);
`ridge_study` raises the number of digits until the ridge is evident and stable (see its docstring).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import gmpy2
import mpmath
import numpy as np

from ..numerics import as_mpf
from . import vp_linalg

DP_DIGITS = 16  # what double precision is reported as (53 bits ~ 15.95 decimal digits)
RIDGE_MIN_DEPTH = 3.0
RIDGE_DEPTH_PER_DIGIT = 0.25
RIDGE_MARGIN = 2.0
NOISE_MARGIN = 1e3  # the default tolerance, as a multiple of the rounding floor max(m, p)·eps·σ1
# The rounding error of β is estimated as BETA_NOISE_FACTOR · eps · σ1/σ_r (see beta_noise_level).
BETA_NOISE_FACTOR = 1e3
# Greedy choice of φ2: residual norms within this relative distance of the largest count as a tie, broken
# towards the later parameter, so that rounding noise cannot flip the choice between precisions.
TIE_TOLERANCE = 1e-6
# A route whose β noise level is above this knows β to fewer than three digits: it decides no comparison.
DECISIVE_BETA_NOISE = 1e-3


@dataclass(frozen=True)
class Ridge:
    index: int  # the rank r: the ridge lies between σ_r and σ_{r+1} (1-based)
    log10_depth: float  # log10(σ_r / σ_{r+1}); inf when σ_{r+1} = 0
    evident: bool
    rank_rule: str  # what decided r: "ridge" (the first evident one), "tolerance" or "user"
    tolerance_rank: int  # the count of singular values above the tolerance, whatever decided r
    required_depth: float  # criterion 1 of the module docstring

    def to_json(self) -> dict:
        depth = None if math.isinf(self.log10_depth) else round(self.log10_depth, 3)
        return {
            "index": self.index,
            "log10_depth": depth,
            "evident": self.evident,
            "rank_rule": self.rank_rule,
            "tolerance_rank": self.tolerance_rank,
            "required_depth": self.required_depth,
        }


@dataclass
class BaseParameterResult:
    method: str  # "dp" or "vp"
    digits: int
    parameter_names: list[str]
    rank: int
    tolerance: str
    singular_values: list[str]
    ridge: Ridge
    eliminated: list[str]
    base_parameters: list[dict]  # {"name", "expression", "terms"}
    beta_noise: str  # estimated rounding error of β (beta_noise_level); smaller coefficients are not shown
    seconds: float
    options: dict  # the options asked for (eliminate, priority, tolerance, rank, significant_digits)
    sigma: np.ndarray = field(repr=False)  # numeric singular values (float or mpf)
    v2: np.ndarray = field(repr=False)  # null-space basis (p, p − r)
    beta: np.ndarray = field(repr=False)  # (r, p − r)
    kept_indices: list[int] = field(repr=False)
    eliminated_indices: list[int] = field(repr=False)

    @property
    def doubtful(self) -> bool:
        """The rank decision rests on no clear gap in the spectrum."""
        return not self.ridge.evident

    def base_map(self) -> np.ndarray:
        """The (r, p) matrix [I β]Π with φ_b = base_map() @ φ."""
        return _base_map(self.beta, self.kept_indices, self.eliminated_indices, len(self.parameter_names))

    def beta_for(self, eliminated: Sequence[str]) -> np.ndarray:
        """β for another choice of eliminated parameters, from the same null-space basis."""
        index = {n: i for i, n in enumerate(self.parameter_names)}
        elim = [index[n] for n in eliminated]
        kept = [i for i in range(len(self.parameter_names)) if i not in set(elim)]
        return _beta(self.v2, kept, elim, self.method, self.digits)

    def base_observation_matrix(self, w: np.ndarray) -> np.ndarray:
        """W_b = W Π[:, :r]: the columns of W for φ1."""
        return np.asarray(w)[:, self.kept_indices]

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "digits": self.digits,
            "rank": self.rank,
            "tolerance": self.tolerance,
            "seconds": self.seconds,
            "singular_values": self.singular_values,
            "ridge": self.ridge.to_json(),
            "doubtful": self.doubtful,
            "eliminated": self.eliminated,
            "options": self.options,
            "beta_noise": self.beta_noise,
            "base_parameters": self.base_parameters,
        }


def gautier_dp(
    w: np.ndarray,
    names: Sequence[str],
    *,
    eliminate: Sequence[str] | None = None,
    priority: Sequence[str] | None = None,
    tolerance: float | None = None,
    rank: int | None = None,
    significant_digits: int = 8,
) -> BaseParameterResult:
    """Gautier's method on W (m x p) in float64.

    `eliminate`: exactly the p − r names of φ2; or `priority`: names to eliminate first where possible; by
    default φ2 makes V22 well conditioned (greedy pivoting on V2ᵀ). The rank follows the module docstring;
    `tolerance` replaces 10³·max(m, p)·eps·σ1 there, and `rank` imposes the rank (e.g. the VP one, to see what
    double precision makes of it). `significant_digits` is for the printed expressions only."""
    start = time.perf_counter()
    w = np.asarray(w, dtype=float)
    _check_shape(w, names)
    _, sigma, vt = np.linalg.svd(w, full_matrices=w.shape[0] < w.shape[1])  # V must be square
    sigma = np.concatenate([sigma, np.zeros(w.shape[1] - len(sigma))])
    floor = max(w.shape) * np.finfo(float).eps * sigma[0]
    tol = NOISE_MARGIN * floor if tolerance is None else tolerance
    options = _options(eliminate, priority, tolerance, rank, significant_digits)
    text = [repr(float(s)) for s in sigma]
    return _finish("dp", DP_DIGITS, names, sigma, vt.T, (tol, floor), options, start, text)


def gautier_vp(
    w,
    names: Sequence[str],
    digits: int,
    *,
    eliminate: Sequence[str] | None = None,
    priority: Sequence[str] | None = None,
    tolerance=None,
    rank: int | None = None,
    significant_digits: int = 8,
) -> BaseParameterResult:
    """Gautier's method on W (m x p, mpmath numbers computed at `digits` digits) with every operation at
    `digits` significant digits; options as in `gautier_dp`."""
    start = time.perf_counter()
    w = np.asarray(w, dtype=object)
    _check_shape(w, names)
    sigma, v, _ = vp_linalg.svd(w, digits)
    with mpmath.workdps(digits):
        eps = vp_linalg.machine_epsilon(digits)
        floor = max(w.shape) * eps * sigma[0]
        tol = NOISE_MARGIN * floor if tolerance is None else mpmath.mpf(tolerance)
        options = _options(eliminate, priority, tolerance, rank, significant_digits)
        text = [mpmath.nstr(s, digits) for s in sigma]
        return _finish("vp", digits, names, sigma, v, (tol, floor), options, start, text)


def _check_shape(w: np.ndarray, names: Sequence[str]) -> None:
    if w.ndim != 2 or w.shape[1] != len(names):
        raise ValueError(
            f"W has shape {w.shape} but {len(names)} parameter names were given; W needs one column per parameter"
        )


def _options(eliminate, priority, tolerance, rank, significant_digits) -> dict:
    """The options as asked for, for the result's provenance."""
    return {
        "eliminate": None if eliminate is None else list(eliminate),
        "priority": None if priority is None else list(priority),
        "tolerance": None if tolerance is None else str(tolerance),
        "rank": rank,
        "significant_digits": significant_digits,
    }


def _finish(method, digits, names, sigma, v, limits, options, start, sigma_text) -> BaseParameterResult:
    """The steps after the SVD, common to both arithmetics (mpf steps run inside mpmath.workdps); `limits`:
    the tolerance and the rounding floor."""
    (tol, floor), (rank, significant_digits) = limits, (options["rank"], options["significant_digits"])
    names = list(names)
    p = len(names)
    if rank is not None and not 0 < rank <= p:
        raise ValueError(f"the rank must be between 1 and the number of parameters {p}; {rank} was given")
    ridge = find_ridge([_log10(s) for s in sigma], _log10(tol), digits, rank, _log10(floor))
    rank = ridge.index
    if rank == 0:
        raise ValueError(f"W is zero to the tolerance {tol}: no parameter has any effect")
    v2 = v[:, rank:]
    elim = choose_eliminated(v2, names, digits, options["eliminate"], options["priority"])
    kept = [i for i in range(p) if i not in set(elim)]
    beta = _beta(v2, kept, elim, method, digits)
    eps = np.finfo(float).eps if method == "dp" else vp_linalg.machine_epsilon(digits)
    noise = beta_noise_level(sigma, rank, eps)
    fmt = (lambda x: repr(float(x))) if method == "dp" else (lambda x: mpmath.nstr(x, digits))
    base = [
        _base_parameter(f"phi_b{i + 1}", names, k, elim, beta[i], fmt, significant_digits, noise)
        for i, k in enumerate(kept)
    ]
    return BaseParameterResult(
        method,
        digits,
        names,
        rank,
        fmt(tol),
        sigma_text,
        ridge,
        [names[i] for i in elim],
        base,
        mpmath.nstr(noise, 3),
        time.perf_counter() - start,
        options,
        sigma,
        v2,
        beta,
        kept,
        elim,
    )


def beta_noise_level(sigma: Sequence, rank: int, eps) -> mpmath.mpf:
    """Estimated rounding error of β: rounding W by eps moves its null space by about eps·σ1/σ_r (first-order
    perturbation of the singular subspace), times BETA_NOISE_FACTOR for ‖V22⁻¹‖ and the length of the
    computation that produced W."""
    return BETA_NOISE_FACTOR * mpmath.mpf(eps) * mpmath.mpf(sigma[0]) / mpmath.mpf(sigma[rank - 1])


def _log10(x) -> float:
    return float(mpmath.log10(x)) if x > 0 else -math.inf


def find_ridge(
    log10_sigma: Sequence[float],
    log10_tolerance: float,
    digits: int,
    rank: int | None = None,
    log10_floor: float = -math.inf,
) -> Ridge:
    """The rank and the ridge after it, by the rules of the module docstring (`rank` imposes the rank);
    singular values below the rounding floor count as at it."""
    p = len(log10_sigma)
    raised = [max(s, log10_floor) for s in log10_sigma]
    drops = [_drop(a, b) for a, b in zip(raised, raised[1:], strict=False)]
    required = max(RIDGE_MIN_DEPTH, RIDGE_DEPTH_PER_DIGIT * digits)
    tolerance_rank = sum(1 for s in log10_sigma if s > log10_tolerance)
    rule = "user"
    if rank is None:
        rank = next((r for r in range(1, p) if _evident(raised, drops, r, required, digits)), None)
        rule = "tolerance" if rank is None else "ridge"
        rank = tolerance_rank if rank is None else rank
    if rank in (0, p):
        depth = raised[-1] - max(log10_floor, log10_tolerance - math.log10(NOISE_MARGIN)) if rank else -math.inf
        return Ridge(rank, depth, depth >= required, rule, tolerance_rank, required)
    return Ridge(rank, drops[rank - 1], _evident(raised, drops, rank, required, digits), rule, tolerance_rank, required)


def _evident(log10_sigma: Sequence[float], drops: list[float], r: int, required: float, digits: int) -> bool:
    depth = drops[r - 1]
    return (
        depth >= required
        and log10_sigma[r] <= log10_sigma[0] - digits / 2
        and depth >= RIDGE_MARGIN * max(drops[: r - 1], default=0.0)
    )


def _drop(a: float, b: float) -> float:
    if b == -math.inf:
        return 0.0 if a == -math.inf else math.inf
    return a - b


def choose_eliminated(
    v2: np.ndarray,
    names: Sequence[str],
    digits: int,
    eliminate: Sequence[str] | None = None,
    priority: Sequence[str] | None = None,
) -> list[int]:
    """Indices of φ2: p − r parameters whose rows of V2 form an invertible V22.

    Greedy pivoting on the columns of V2ᵀ: each step takes the parameter whose column has the largest part
    orthogonal to those already taken (ties to the later parameter), which keeps V22 well conditioned.
    `priority` names are tried first, in order, each taken if independent of those before it; `eliminate`
    must name exactly p − r independent parameters."""
    p, count = v2.shape
    index = {n: i for i, n in enumerate(names)}
    wanted = list(eliminate) if eliminate is not None else list(priority or [])
    unknown = [n for n in wanted if n not in index]
    if unknown:
        raise ValueError(f"{unknown} are not inertial parameter names of this model")
    if len(set(wanted)) != len(wanted):
        raise ValueError(f"{sorted({n for n in wanted if wanted.count(n) > 1})} are named more than once")
    if eliminate is not None and len(wanted) != count:
        raise ValueError(
            f"the rank is {p - count}, so exactly {count} of the {p} parameters must be eliminated; "
            f"{len(wanted)} were given"
        )
    vp = v2.dtype == object
    with vp_linalg.precision(digits) if vp else contextlib.nullcontext():  # VP in MPFR, as the SVD
        residual = vp_linalg.to_mpfr(v2.T) if vp else v2.T.copy()
        # squared residual norm above which a column counts as independent: rows of V2 are O(1) and their
        # error far below 10^(−digits/2) (in MPFR for VP: the square underflows a float beyond 300 digits)
        independent2 = (gmpy2.mpfr(10) if vp else 10.0) ** -digits
        chosen: list[int] = []
        for name in wanted:
            if len(chosen) == count:
                break
            j = index[name]
            if _norm2(residual[:, j]) > independent2:
                _take(residual, j, chosen)
            elif eliminate is not None:
                left = mpmath.nstr(mpmath.sqrt(as_mpf(_norm2(residual[:, j]))[()]), 3)
                others = f" together with {[names[i] for i in chosen]}" if chosen else ""
                raise ValueError(
                    f"{name} cannot be eliminated{others}: what is left of its row of the null-space basis "
                    f"V2 is {left}, so V22 would be singular (the kept columns of W would be linearly "
                    "dependent)"
                )
        while len(chosen) < count:
            norms = [_norm2(residual[:, j]) if j not in chosen else -1 for j in range(p)]
            best = max(norms)
            _take(residual, max(j for j in range(p) if norms[j] >= best * (1 - TIE_TOLERANCE)), chosen)
    return sorted(chosen)


def _norm2(x: np.ndarray):
    return (x * x).sum()


def _take(residual: np.ndarray, j: int, chosen: list[int]) -> None:
    """Add parameter j to φ2 and remove its column's direction from every column."""
    c = residual[:, j].copy()
    residual -= np.multiply.outer(c, (c @ residual) / _norm2(c))
    chosen.append(j)


def _beta(v2: np.ndarray, kept: list[int], elim: list[int], method: str, digits: int) -> np.ndarray:
    """β = −V21 V22⁻¹, from V22ᵀ βᵀ = −V21ᵀ."""
    v21, v22 = v2[kept], v2[elim]
    if method == "dp":
        return -np.linalg.solve(v22.T, v21.T).T
    return -vp_linalg.solve(v22.T, v21.T, digits).T


def _base_map(beta: np.ndarray, kept: list[int], elim: list[int], p: int) -> np.ndarray:
    zero, one = (0.0, 1.0) if beta.dtype != object else (mpmath.mpf(0), mpmath.mpf(1))
    out = np.full((len(kept), p), zero, dtype=beta.dtype)
    out[range(len(kept)), kept] = one
    out[:, elim] = beta
    return out


def _base_parameter(
    name: str, names: list[str], kept: int, elim: list[int], row: np.ndarray, fmt, significant_digits: int, noise
) -> dict:
    """terms: every coefficient with all its digits; expression: those above the noise level of β, below which
    a coefficient cannot be told apart from rounding."""
    terms = {names[kept]: "1"} | {names[e]: fmt(c) for e, c in zip(elim, row, strict=True)}
    shown = [(names[e], c) for e, c in zip(elim, row, strict=True) if abs(c) > noise]
    return {"name": name, "expression": _expression(names[kept], shown, significant_digits), "terms": terms}


def _expression(first: str, terms: list[tuple[str, object]], significant_digits: int) -> str:
    """'mx1 + 2.4900398*Iyy1 - 0.065256972*m7', coefficients to `significant_digits` digits."""
    text = first
    for name, c in terms:
        magnitude = mpmath.nstr(abs(mpmath.mpf(c)), significant_digits)
        product = name if magnitude == "1.0" else f"{magnitude}*{name}"
        text += f" {'-' if c < 0 else '+'} {product}"
    return text


@dataclass
class RidgeStudy:
    """Gautier's method at rising precision (seed 000, section 3)."""

    results: list[BaseParameterResult]
    steps: list[dict]  # one per pair of successive precisions: what changed between them
    stable: bool

    @property
    def final(self) -> BaseParameterResult:
        return self.results[-1]

    def to_json(self) -> dict:
        final = self.final
        return {
            "method": "vp",
            "digits": [r.digits for r in self.results],
            "rank": final.rank,
            "seconds": sum(r.seconds for r in self.results),
            "stable": self.stable,
            "singular_values": {str(r.digits): r.singular_values for r in self.results},
            "ridge": final.ridge.to_json()
            | {"per_precision": {str(r.digits): r.ridge.to_json() for r in self.results}},
            "eliminated": final.eliminated,
            "base_parameters": final.base_parameters,
            "steps": self.steps,
        }


def ridge_study(
    w_builder: Callable[[int], np.ndarray],
    names: Sequence[str],
    digits_list: Sequence[int] = (30, 50, 80),
    *,
    eliminate: Sequence[str] | None = None,
    priority: Sequence[str] | None = None,
    significant_digits: int = 8,
) -> RidgeStudy:
    """Run `gautier_vp` on w_builder(d) for d in `digits_list` (rising) until the ridge is evident and stable.

    Stable between two successive precisions means: both ridges evident at the same index r; σ_1..σ_r agree
    to `significant_digits` digits; the largest σ after the ridge falls by at least half the added digits; and
    every β entry agrees to `significant_digits` significant digits or is, at both, below the lower precision's
    noise level of β (beta_noise_level): a zero.
    β of the lower precision is recomputed with the higher one's φ2 so that the two are comparable."""
    if list(digits_list) != sorted(set(digits_list)):
        raise ValueError(f"the precisions must rise: {list(digits_list)}")
    results: list[BaseParameterResult] = []
    steps: list[dict] = []
    for digits in digits_list:
        results.append(
            gautier_vp(
                w_builder(digits),
                names,
                digits,
                eliminate=eliminate,
                priority=priority,
                significant_digits=significant_digits,
            )
        )
        if len(results) > 1:
            steps.append(_precision_step(results[-2], results[-1], significant_digits))
            if steps[-1]["stable"]:
                return RidgeStudy(results, steps, True)
    return RidgeStudy(results, steps, False)


def _precision_step(low: BaseParameterResult, high: BaseParameterResult, significant_digits: int) -> dict:
    with mpmath.workdps(high.digits):
        same_ridge = low.ridge.evident and high.ridge.evident and low.rank == high.rank
        r = high.rank
        head = max((abs(a - b) / b for a, b in zip(low.sigma[:r], high.sigma[:r], strict=True)), default=0)
        tail_low, tail_high = (
            max(_log10(s) for s in res.sigma[r:]) if r < len(res.sigma) else -math.inf for res in (low, high)
        )
        tail_falls = r == len(high.sigma) or tail_high <= tail_low - (high.digits - low.digits) / 2
        beta_agrees, beta_difference = False, None
        if same_ridge:
            beta_low = low.beta_for(high.eliminated)
            diff = np.abs(beta_low - high.beta)
            beta_difference = max(diff.ravel(), default=mpmath.mpf(0))
            zero = beta_noise_level(low.sigma, low.rank, vp_linalg.machine_epsilon(low.digits))
            beta_agrees = all(
                d <= 10.0**-significant_digits * abs(b) or max(abs(a), abs(b)) <= zero
                for d, a, b in zip(diff.ravel(), beta_low.ravel(), high.beta.ravel(), strict=True)
            )
        head_digits = math.inf if head == 0 else -_log10(head)
        return {
            "digits": [low.digits, high.digits],
            "same_evident_ridge": same_ridge,
            "head_agreement_digits": None if math.isinf(head_digits) else round(head_digits, 2),
            "head_unchanged": head_digits >= significant_digits,
            "tail_log10": [None if math.isinf(t) else round(t, 2) for t in (tail_low, tail_high)],
            "tail_falls": tail_falls,
            "beta_max_difference": None if beta_difference is None else mpmath.nstr(beta_difference, 5),
            "beta_converged": beta_agrees,
            "stable": same_ridge and head_digits >= significant_digits and tail_falls and beta_agrees,
        }


@dataclass
class RouteComparison:
    same_rank: bool
    max_sine: float | None  # sine of the largest principal angle between the row spaces (None: ranks differ)
    same_row_space: bool
    eliminated: list[str]  # the φ2 of the first route, used for both
    beta_max_difference: float | None  # None when the ranks differ or the second map cannot use that φ2
    differences: list[dict]  # entries differing by more than the tolerance
    tolerance: float  # the larger of the two routes' β noise levels: what their precisions can tell apart
    decided: bool  # False when that tolerance is above DECISIVE_BETA_NOISE: too little precision to judge

    def to_json(self) -> dict:
        return self.__dict__.copy()


def compare_routes(a: BaseParameterResult, b: BaseParameterResult, tolerance: float | None = None) -> RouteComparison:
    """Do two routes give the same base parameters? Their maps [I β]Π must have the same row space; then b's
    map is rewritten with a's φ2 and the two β compared entry by entry. Computed at the lower precision;
    `tolerance` (for the sine and for β) defaults to the larger of the two noise levels of β, so that the
    verdict follows the working precision of each route: a 30-digit route on a matrix of condition 1e18 knows
    β to about 1e-12, and differences at that level are not disagreements. A tolerance above
    DECISIVE_BETA_NOISE decides nothing: the row spaces are then not called the same."""
    if a.parameter_names != b.parameter_names:
        raise ValueError("the two results are for different parameter lists")
    digits = min(a.digits, b.digits)
    with mpmath.workdps(digits):
        noise = max(mpmath.mpf(a.beta_noise), mpmath.mpf(b.beta_noise))
        tol = noise if tolerance is None else mpmath.mpf(tolerance)
        decided = tol <= DECISIVE_BETA_NOISE
        ma, mb = (_as_mpf(res.base_map()) for res in (a, b))
        sine = _max_principal_sine(ma, mb, digits) if a.rank == b.rank else None
        same = decided and sine is not None and sine <= tol
        diff_max, diffs = None, []
        beta_b = _rewrite_beta(mb, a.kept_indices, a.eliminated_indices, digits) if a.rank == b.rank else None
        if beta_b is not None:
            beta_a = _as_mpf(a.beta)
            diff = beta_b - beta_a
            diff_max = float(max(abs(d) for d in diff.ravel())) if diff.size else 0.0
            diffs = [
                {
                    "base_parameter": a.base_parameters[i]["name"],
                    "parameter": a.parameter_names[e],
                    "first": mpmath.nstr(beta_a[i, q], 10),
                    "second": mpmath.nstr(beta_b[i, q], 10),
                }
                for i in range(a.rank)
                for q, e in enumerate(a.eliminated_indices)
                if abs(diff[i, q]) > tol
            ]
    return RouteComparison(
        a.rank == b.rank,
        None if sine is None else float(sine),
        same,
        a.eliminated,
        diff_max,
        diffs,
        float(tol),
        bool(decided),
    )


def _as_mpf(m: np.ndarray) -> np.ndarray:
    return np.vectorize(mpmath.mpf, otypes=[object])(m) if m.size else m.astype(object)


def _max_principal_sine(ma: np.ndarray, mb: np.ndarray, digits: int) -> mpmath.mpf:
    """Largest σ of (I − Qa Qaᵀ) Qb, with Qa, Qb orthonormal bases of the two row spaces."""
    with vp_linalg.precision(digits):
        qa, qb = (vp_linalg.orthonormalise(vp_linalg.to_mpfr(m.T)) for m in (ma, mb))
        residual = vp_linalg.to_mpf(qb - qa @ (qa.T @ qb))
    return vp_linalg.svd(residual, digits)[0][0]


def _rewrite_beta(m: np.ndarray, kept: list[int], elim: list[int], digits: int) -> np.ndarray | None:
    """β of the map M (r, p) for the split (kept, elim): M[:, kept]⁻¹ M[:, elim]; None if M cannot be written
    with that split."""
    try:
        return vp_linalg.solve(m[:, kept], m[:, elim], digits)
    except ZeroDivisionError:
        return None
