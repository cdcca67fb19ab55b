"""Gautier's method in double and variable precision, against a matrix whose null space is known exactly.

W = X B with X (40 x 7) random integers and B (7 x 10) exact rationals: W has rank 7 and three exact null
vectors. Two genuine singular values are small (columns p4 = x4 + 1e-7·x5 and p9 = x4 + 1e-14·x6 next to
p5 = x4), so double precision sees no clean gap while variable precision shows a deep ridge after σ7.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy

from mbstudio.identification import vp_linalg
from mbstudio.identification.gautier import (
    compare_routes,
    find_ridge,
    gautier_dp,
    gautier_vp,
    ridge_study,
)
from mbstudio.identification.pipeline import pair_verdict

NAMES = [f"p{i}" for i in range(10)]
RANK = 7


def _coefficients() -> np.ndarray:
    b = np.full((7, 10), Fraction(0), dtype=object)
    for row, col, value in [
        (0, 0, 1),
        (1, 1, 1),
        (2, 2, 1),
        (3, 2, Fraction(1, 10**3)),
        (3, 3, 1),
        (4, 4, 1),
        (5, 4, Fraction(1, 10**7)),
        (4, 5, 1),
        (4, 9, 1),
        (6, 9, Fraction(1, 10**14)),
    ]:
        b[row, col] += value
    b[:, 6] = b[:, 0] + 2 * b[:, 1]  # three exact dependencies: the null space
    b[:, 7] = b[:, 2] + Fraction(1, 7) * b[:, 4]
    b[:, 8] = b[:, 5] - Fraction(5, 2) * b[:, 3] + Fraction(1, 10**5) * b[:, 0]
    return b


B = _coefficients()
W_EXACT = np.random.default_rng(7).integers(-9, 10, (40, 7)).astype(object) @ B


def w_dp() -> np.ndarray:
    return np.array([[float(v) for v in row] for row in W_EXACT])


def w_vp(digits: int) -> np.ndarray:
    """W rounded to `digits` digits, as the VP pipeline would deliver it."""
    with mpmath.workdps(digits):
        return np.array([[mpmath.mpf(v.numerator) / v.denominator for v in row] for row in W_EXACT], dtype=object)


def exact_beta(eliminated: list[str]) -> sympy.Matrix:
    """β = −N1 N2⁻¹ from an exact null-space basis N of B (any basis gives the same β)."""
    null = sympy.Matrix(B.tolist()).applyfunc(sympy.Rational).nullspace()
    n = sympy.Matrix.hstack(*null)
    elim = [NAMES.index(e) for e in eliminated]
    kept = [i for i in range(len(NAMES)) if i not in elim]
    return -n.extract(kept, list(range(n.cols))) * n.extract(elim, list(range(n.cols))).inv()


def max_beta_error(result, eliminated: list[str]) -> float:
    exact = exact_beta(eliminated)
    return max(
        abs(float(mpmath.mpf(result.beta[i, j]) - mpmath.mpf(exact[i, j].p) / exact[i, j].q))
        for i in range(exact.rows)
        for j in range(exact.cols)
    )


@pytest.fixture(scope="module")
def vp50():
    return gautier_vp(w_vp(50), NAMES, 50)


def test_vp_svd_agrees_with_mpmath_svd_r():
    digits = 60
    w = w_vp(digits)
    sigma, v, _ = vp_linalg.svd(w, digits)
    with mpmath.workdps(digits):
        _, s_ref, vt_ref = mpmath.svd_r(mpmath.matrix(w.tolist()))
        floor = mpmath.mpf(10) ** (5 - digits) * s_ref[0]
        for k in range(RANK):  # above the ridge: the same values and (up to sign) the same vectors
            assert abs(sigma[k] - s_ref[k]) <= floor
            assert abs(abs(sum(v[i, k] * vt_ref[k, i] for i in range(10))) - 1) < mpmath.mpf(10) ** (10 - digits)
        for k in range(RANK, 10):  # after it: both at the rounding level of W
            assert sigma[k] < floor and s_ref[k] < floor
        vm = mpmath.matrix(v.tolist())
        assert mpmath.mnorm(vm.T * vm - mpmath.eye(10), 1) < mpmath.mpf(10) ** (2 - digits)
        assert mpmath.mnorm(mpmath.matrix(w.tolist()) * vm[:, RANK:], 1) < floor


def test_vp_svd_of_a_spectrum_graded_over_the_double_range():
    """Singular values from 1e2 down to 1e-15 and then the rounding tail, as in the SLA suspension: Jacobi
    must converge in a few sweeps (preconditioning a group wider than double precision can resolve would undo
    each sweep's work) and agree with mpmath."""
    digits = 30
    rng = np.random.default_rng(0)
    with mpmath.workdps(digits):
        x = np.array([[mpmath.mpf(int(v)) / 7 for v in row] for row in rng.integers(-9, 10, (80, 22))], dtype=object)
        y = np.array(
            [
                [mpmath.mpf(int(v)) * mpmath.mpf(10) ** (-(3 * i) // 4) for v in row]
                for i, row in enumerate(rng.integers(-9, 10, (22, 30)))
            ],
            dtype=object,
        )
        w = x @ y
        sigma, _, sweeps = vp_linalg.svd(w, digits)
        s_ref = mpmath.svd_r(mpmath.matrix(w.tolist()), compute_uv=False)
        assert sweeps <= 8
        assert max(abs(a - b) for a, b in zip(sigma, s_ref, strict=True)) < mpmath.mpf(10) ** (3 - digits) * s_ref[0]
        assert sigma[21] > mpmath.mpf(10) ** -17 * sigma[0] > mpmath.mpf(10) ** 10 * sigma[22]


def test_vp_handles_zero_columns_and_wide_matrices():
    digits = 30
    with mpmath.workdps(digits):
        w = np.array(
            [[mpmath.mpf(i + 2 * j) / 3 if j != 1 else mpmath.mpf(0) for j in range(5)] for i in range(3)], dtype=object
        )
        sigma, v, _ = vp_linalg.svd(w, digits)
        vm = mpmath.matrix(v.tolist())
        assert mpmath.mnorm(vm.T * vm - mpmath.eye(5), 1) < mpmath.mpf(10) ** (2 - digits)
        assert sum(1 for s in sigma if s > mpmath.mpf(10) ** (5 - digits)) == 2
        assert mpmath.mnorm(mpmath.matrix(w.tolist()) * vm[:, 2:], 1) < mpmath.mpf(10) ** (5 - digits)


def test_vp_at_50_digits_finds_the_rank_an_evident_ridge_and_the_exact_beta(vp50):
    assert vp50.rank == RANK
    assert vp50.ridge.index == RANK and vp50.ridge.evident and vp50.ridge.log10_depth > 30
    assert not vp50.doubtful
    assert max_beta_error(vp50, vp50.eliminated) < 1e-30


def test_dp_rank_decision_is_doubtful():
    dp = gautier_dp(w_dp(), NAMES)
    assert not dp.ridge.evident and dp.doubtful
    # three digits above the rounding floor max(m, p)·eps·σ1, where rounding cannot move a singular value across
    assert float(dp.tolerance) == pytest.approx(1e3 * 40 * 2.0**-52 * float(dp.singular_values[0]))
    forced = gautier_dp(w_dp(), NAMES, rank=RANK)
    assert forced.rank == RANK and not forced.ridge.evident


def test_singular_values_fall_after_the_ridge_as_digits_rise():
    runs = [gautier_vp(w_vp(d), NAMES, d) for d in (30, 50, 80)]
    assert all(r.rank == RANK and r.ridge.evident for r in runs)
    with mpmath.workdps(80):
        for low, high in zip(runs, runs[1:], strict=False):
            for a, b in zip(low.sigma[:RANK], high.sigma[:RANK], strict=True):
                assert abs(a - b) / b < mpmath.mpf(10) ** -15  # before the ridge: unchanged
            assert max(high.sigma[RANK:]) < max(low.sigma[RANK:]) * mpmath.mpf(10) ** -15  # after it: falling
    assert [r.ridge.log10_depth for r in runs] == sorted(r.ridge.log10_depth for r in runs)


def test_ridge_study_stops_when_ridge_and_beta_are_stable():
    study = ridge_study(w_vp, NAMES, (30, 50, 80), significant_digits=10)
    assert study.stable and [r.digits for r in study.results] == [30, 50]
    step = study.steps[-1]
    assert step["same_evident_ridge"] and step["head_unchanged"] and step["tail_falls"] and step["beta_converged"]
    assert max_beta_error(study.final, study.final.eliminated) < 1e-30
    out = json.loads(json.dumps(study.to_json()))
    assert set(out["singular_values"]) == {"30", "50"} and out["rank"] == RANK


def test_ridge_study_is_not_stable_when_the_precision_is_too_low():
    study = ridge_study(w_vp, NAMES, (16, 18))
    assert not study.stable


def test_user_chosen_eliminated_parameters(vp50):
    chosen = ["p1", "p3", "p4"]
    result = gautier_vp(w_vp(50), NAMES, 50, eliminate=chosen)
    assert result.eliminated == chosen
    assert max_beta_error(result, chosen) < 1e-30
    # even told the rank, double precision gets β wrong in the leading digits (seed 000, section 7)
    assert max_beta_error(gautier_dp(w_dp(), NAMES, rank=RANK, eliminate=chosen), chosen) > 1e-8


def test_priority_order_prefers_earlier_names_that_can_be_eliminated():
    # p9 has no part in any null vector, so it cannot be eliminated and is passed over
    result = gautier_vp(w_vp(50), NAMES, 50, priority=["p9", "p1", "p4", "p3", "p7"])
    assert result.eliminated == ["p1", "p3", "p4"]
    assert max_beta_error(result, result.eliminated) < 1e-30


@pytest.mark.parametrize(
    ("chosen", "message"),
    [
        (["p1", "p3"], "exactly 3"),
        (["p9", "p1", "p4"], "p9"),
        (["p1", "p3", "q7"], "q7"),
        (["p1", "p1", "p4"], "more than once"),
    ],
)
def test_invalid_choice_of_eliminated_parameters_is_explained(chosen, message):
    with pytest.raises(ValueError, match=message):
        gautier_vp(w_vp(30), NAMES, 30, eliminate=chosen)


def test_base_parameters_and_json(vp50):
    out = json.loads(json.dumps(vp50.to_json()))
    assert out["rank"] == RANK and len(out["singular_values"]) == 10
    assert set(out["ridge"]) >= {"index", "log10_depth", "evident"}
    by_name = {b["name"]: b for b in out["base_parameters"]}
    assert list(by_name) == [f"phi_b{i}" for i in range(1, RANK + 1)]
    # the null vector p4 + p7/7 − ... makes p7 enter the base parameter of p4 with coefficient 1/7
    p4 = next(b for b in out["base_parameters"] if b["expression"].startswith("p4"))
    assert p4["expression"] == "p4 + 0.14285714*p7"
    with mpmath.workdps(50):
        assert abs(mpmath.mpf(p4["terms"]["p7"]) - mpmath.mpf(1) / 7) < mpmath.mpf(10) ** -40
    assert len(p4["terms"]["p7"]) > 45  # all computed digits


def test_base_observation_matrix_reproduces_w_phi(vp50):
    with mpmath.workdps(50):
        w = w_vp(50)
        phi = np.array([mpmath.mpf(k + 1) / 3 for k in range(10)], dtype=object)
        wb = vp50.base_observation_matrix(w)
        residual = max(abs(x) for x in wb @ (vp50.base_map() @ phi) - w @ phi)
        assert residual < mpmath.mpf(10) ** -30


def test_compare_routes_aligns_beta_and_reports_differences(vp50):
    other = gautier_vp(w_vp(80), NAMES, 80, eliminate=["p1", "p3", "p4"])
    same = compare_routes(vp50, other)
    assert same.same_rank and same.same_row_space and same.max_sine < 1e-30  # β at 50 digits: ~1e-36
    assert same.beta_max_difference < 1e-30 and same.differences == []
    dp = compare_routes(vp50, gautier_dp(w_dp(), NAMES))
    assert not dp.same_rank and not dp.same_row_space and dp.max_sine is None
    # told the rank and the φ2, double precision's β (3e-3 from VP's) is below its own noise level (~1e2 for
    # this condition): the comparison is undecided, never an agreement
    forced = compare_routes(vp50, gautier_dp(w_dp(), NAMES, rank=RANK, eliminate=vp50.eliminated))
    assert forced.same_rank and not forced.same_row_space and forced.max_sine > 1e-8
    assert forced.beta_max_difference > 1e-8 and not forced.decided and forced.tolerance > 1
    words = pair_verdict(forced.to_json() | {"ranks": {"vp": RANK, "dp": RANK}, "doubtful": []})
    assert words.startswith("undecided: β is known only to 1e+02")


def test_full_rank_w_has_no_eliminated_parameters():
    w = np.random.default_rng(1).standard_normal((30, 4))
    result = gautier_dp(w, NAMES[:4])
    assert result.rank == 4 and result.eliminated == [] and result.ridge.evident
    assert [b["expression"] for b in result.base_parameters] == NAMES[:4]


def test_ridge_criterion():
    flat = find_ridge([0.0, -1.0, -2.0, -3.0, -4.0], -3.5, 16)  # smooth decay: no ridge, the tolerance decides
    assert (flat.index, flat.rank_rule, flat.evident) == (4, "tolerance", False)
    # the first evident ridge decides, though its tail sits above eps·σ1 and drops further after it
    deep = find_ridge([0.0, -1.0, -2.0, -30.0, -31.0, -45.0, -math.inf], -47.0, 50)
    assert (deep.index, deep.rank_rule, deep.evident, deep.tolerance_rank) == (3, "ridge", True, 6)
    assert deep.log10_depth == pytest.approx(28.0)
    # a deep drop that ends above the rounding level is genuine: σ2 = 1e-7·σ1 counts in double precision
    assert find_ridge([0.0, -7.0], -14.0, 16).index == 2
    # a drop that is not twice every drop before it is no evident ridge
    assert not find_ridge([0.0, -7.0, -17.0, -18.0], -14.0, 16).evident
