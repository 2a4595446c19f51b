"""Tests of privcal.analysis.supremum: Lemma 8's constant and tails, and Theorem 5's failure term.

Monte Carlo tests use fixed seeds and one-sided Clopper-Pearson bounds with a Bonferroni correction at
family-wise level ALPHA = 1e-3 per test function. The maximum over a grid is a lower bound of the
maximum over [0, 1] (a violation found with it is genuine); ``max_bracket``'s upper variable
dominates the continuous maximum in law (a bound confirmed with it holds for the true maximum).
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from privcal.analysis import supremum
from privcal._stats import clopper_pearson_lower, clopper_pearson_upper
from privcal.errors import InfeasibleError
from privcal.analysis.noise import max_bracket, sample_ou_grid
from privcal.analysis.supremum import (
    LEMMA8_CONSTANT,
    LEMMA8_CONSTANT_PAPER,
    lemma8_constant,
    lemma8_mean_bound,
    lemma8_tail_borell_tis,
    lemma8_tail_paper,
    range_tail_borell_tis,
    sup_abs_tail,
    thm5_condition,
    thm5_condition_paper,
    thm5_failure,
    thm5_failure_e3_paper,
    thm5_failure_paper,
)

ALPHA = 1e-3


def _cp_lower(hits, n, alpha):
    return clopper_pearson_lower(hits, n, alpha)


def _cp_upper(hits, n, alpha):
    return clopper_pearson_upper(hits, n, alpha)


def _series_nsum(dps):
    """Independent evaluation of the Lemma 8 series: mpmath.nsum (convergence acceleration)."""
    with mpmath.workdps(dps + 10):
        s = mpmath.nsum(
            lambda i: (mpmath.sqrt(i) + 1 + mpmath.exp(-(mpmath.sqrt(i) + 1))) * mpmath.power(2, -i / 2),
            [0, mpmath.inf],
        )
        return mpmath.sqrt(1 / mpmath.pi) + s


# ------------------------------------------------------------------------------------- the constant
def test_constant_exceeds_the_printed_868():
    """REFUTES "< 8.68" (Lemma 8 proof, App. A): the series is 8.68384979692575913880835..."""
    ref = _series_nsum(40)
    assert mpmath.almosteq(lemma8_constant(40), ref, rel_eps=mpmath.mpf(10) ** -38)
    assert ref > LEMMA8_CONSTANT_PAPER  # 8.6838... > 8.68
    assert 8.6838497969257 < LEMMA8_CONSTANT < 8.6838497969258  # mpmath nsum at 40 digits
    # the float is rounded up (conservative) and is the nearest float above the exact value
    assert mpmath.mpf(LEMMA8_CONSTANT) >= ref
    assert mpmath.mpf(math.nextafter(LEMMA8_CONSTANT, 0.0)) < ref


def test_constant_at_arbitrary_precision():
    ref = _series_nsum(80)
    assert mpmath.almosteq(lemma8_constant(80), ref, rel_eps=mpmath.mpf(10) ** -78)
    with pytest.raises(ValueError, match="dps must be an integer >= 1"):
        lemma8_constant(0)


def test_constant_is_a_lazy_module_attribute():
    assert supremum.LEMMA8_CONSTANT == LEMMA8_CONSTANT and isinstance(LEMMA8_CONSTANT, float)
    with pytest.raises(AttributeError):
        supremum.NOT_A_NAME  # noqa: B018


# ----------------------------------------------------------------------------------------- the tails
def test_tail_formulas_and_validation():
    assert lemma8_tail_paper(2.0) == pytest.approx(math.exp(-2.0))  # closed form
    assert lemma8_tail_borell_tis(2.0, 3.0) == pytest.approx(math.exp(-2.0 / 9.0))
    assert lemma8_mean_bound(0.25, 2.0) == pytest.approx(LEMMA8_CONSTANT * 0.5 * 2.0)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="u must be"):
            lemma8_tail_paper(bad)
        with pytest.raises(ValueError, match="sigma must be"):
            lemma8_tail_borell_tis(1.0, bad)
        with pytest.raises(ValueError, match="beta must be"):
            lemma8_mean_bound(bad, 1.0)


@given(st.floats(1e-3, 50.0), st.floats(1e-3, 1.0))
def test_printed_tail_is_implied_when_sigma_at_most_one(u, sigma):
    assert lemma8_tail_borell_tis(u, sigma) <= lemma8_tail_paper(u)


def test_printed_tail_fails_for_large_sigma_closed_form():
    """Counterexample (closed form): beta = 0.01, sigma = 3, u = 4.

    P(max g >= 8.68 sqrt(beta) sigma + u) >= P(g(0) >= t) = Q(t / sigma) = 0.0139 > exp(-8) = 3.4e-4.
    """
    beta, sigma, u = 0.01, 3.0, 4.0
    t = LEMMA8_CONSTANT_PAPER * math.sqrt(beta) * sigma + u
    single_point = stats.norm.sf(t / sigma)
    assert single_point == pytest.approx(0.0139, abs=1e-4)  # Q(2.201), scipy
    assert single_point > 40 * lemma8_tail_paper(u)
    assert single_point <= lemma8_tail_borell_tis(u, sigma)


# (beta, sigma, u): the printed tail fails at the first six, both hold at the last two
_FAILS = [(0.001, 2.0, 4.0), (0.001, 3.0, 3.0), (0.001, 3.0, 4.0),
          (0.01, 2.0, 4.0), (0.01, 3.0, 3.0), (0.01, 3.0, 4.0)]
_HOLDS = [(0.01, 0.8, 2.0), (0.001, 1.0, 1.5)]


@pytest.fixture(scope="module")
def unit_maxima():
    """Per beta: grid max and bracket upper of g and of -g, 20000 unit-sigma paths on 129 points.

    (beta h <= 8e-5, so the grid max loses little; all four scale linearly with sigma.)
    """
    out = {}
    grid = np.linspace(0.0, 1.0, 129)
    for i, beta in enumerate((0.001, 0.01)):
        vals = sample_ou_grid(beta, 1.0, grid, 20000, seed=100 + i)
        lower, upper = max_bracket(vals, grid, beta, 1.0, seed=200 + i)
        _, upper_neg = max_bracket(-vals, grid, beta, 1.0, seed=300 + i)
        out[beta] = (lower, upper, -vals.min(axis=1), upper_neg)
    return out


def test_lemma8_tails_monte_carlo(unit_maxima):
    """Printed tail exp(-u^2/2) fails for sigma > 1 at small beta; Borell-TIS holds on the same grid."""
    alpha = ALPHA / (len(_FAILS) + 3 * len(_HOLDS) + len(_FAILS))
    for beta, sigma, u in _FAILS + _HOLDS:
        lower, upper, _, _ = unit_maxima[beta]
        n = lower.size
        t = LEMMA8_CONSTANT * math.sqrt(beta) * sigma + u  # the valid constant; 8.68 is smaller
        hits_upper = int(np.sum(sigma * upper >= t))
        # Borell-TIS: confirmed at level 1 - alpha for the (dominating) upper variable
        assert _cp_upper(hits_upper, n, alpha) <= lemma8_tail_borell_tis(u, sigma), (beta, sigma, u)
        if (beta, sigma, u) in _FAILS:
            # genuine violation: the grid maximum alone exceeds the threshold too often
            t_paper = LEMMA8_CONSTANT_PAPER * math.sqrt(beta) * sigma + u
            hits_paper = int(np.sum(sigma * lower >= t_paper))
            assert _cp_lower(hits_paper, n, alpha) > lemma8_tail_paper(u), (beta, sigma, u)
        else:
            assert _cp_upper(hits_upper, n, alpha) <= lemma8_tail_paper(u), (beta, sigma, u)


def test_lemma8_mean_bound_assumption_monte_carlo():
    """E[max_[0,1] g] <= c sqrt(beta) sigma (the assumption taken from Lemma 8's proof).

    Uses the bracket's upper variable (dominates the continuous maximum) on grids with beta h <= 0.05,
    with g(0) as control variate (E[max g] = E[max g - g(0)]); one-sided z bound at level ALPHA / 5.
    The bound holds with a factor >= 4 to spare (E[max g] ~ 1.13 sqrt(beta) sigma for small beta).
    """
    z = stats.norm.isf(ALPHA / 5)
    for i, beta in enumerate((0.001, 0.1, 1.0, 10.0, 100.0)):
        n_grid = max(65, int(20 * beta) + 1)
        grid = np.linspace(0.0, 1.0, n_grid)
        vals = sample_ou_grid(beta, 1.0, grid, 2000, seed=400 + i)
        _, upper = max_bracket(vals, grid, beta, 1.0, seed=500 + i)
        excess = upper - vals[:, 0]
        mean_hi = excess.mean() + z * excess.std(ddof=1) / math.sqrt(excess.size)
        assert mean_hi < lemma8_mean_bound(beta, 1.0) / 4, (beta, mean_hi)


# ------------------------------------------------------------------------------------ failure terms
def test_thm5_failure_paper_literal():
    k, beta, sigma, resets = 10.0, 1.0, 1.0, 78
    expected = 78 * math.exp(-((20.0 - 8.68) ** 2) / 2)  # Thm 5 as printed
    assert thm5_failure_paper(k, beta, sigma, resets) == pytest.approx(expected, rel=1e-12)
    p = math.exp(-((20.0 - 8.68) ** 2) / 2)
    assert thm5_failure_e3_paper(k, beta, sigma, resets) == pytest.approx(1 - (1 - p) ** 78, rel=1e-9)
    assert thm5_failure_e3_paper(k, beta, sigma, resets) <= thm5_failure_paper(k, beta, sigma, resets)


def test_e3_parameters_violate_the_printed_condition():
    """App. E.3: k = 23, v = 6.19e-5 (beta = 1/v), sigma ~ 0.313: 8.68 sqrt(beta) sigma = 345 > 2k = 46."""
    beta = 1 / 6.19e-5
    assert not thm5_condition_paper(23, beta, 0.313)
    assert not thm5_condition(23, beta, 0.313)
    with pytest.raises(InfeasibleError, match=r"2k > 8\.68\*sqrt\(beta\)\*sigma"):
        thm5_failure_paper(23, beta, 0.313, 78)
    with pytest.raises(InfeasibleError, match=r"2k > 8\.68\*sqrt\(beta\)\*sigma"):
        thm5_failure_e3_paper(23, beta, 0.313, 78)
    with pytest.raises(InfeasibleError, match=r"k > c\*sqrt\(beta\)\*sigma"):
        thm5_failure(23, beta, 0.313, 78, actions=2)


def test_thm5_failure_closed_form_and_validation():
    k, beta, sigma = 5.0, 0.01, 1.0
    margin = k - LEMMA8_CONSTANT * 0.1
    p = 2 * math.exp(-(margin**2) / 2)  # 2 x Borell-TIS tail, closed form
    assert sup_abs_tail(k, beta, sigma) == pytest.approx(p, rel=1e-12)
    assert thm5_failure(k, beta, sigma, 78, actions=2) == pytest.approx(1 - (1 - p) ** 156, rel=1e-9)
    assert thm5_failure(k, beta, sigma, 1, actions=1) == pytest.approx(p, rel=1e-12)
    with pytest.raises(TypeError):
        thm5_failure(k, beta, sigma, 78)  # the number of actions must be stated
    for kwargs, match in [(dict(k=0.0), "k must be"), (dict(beta=-1.0), "beta must be"),
                          (dict(sigma=0.0), "sigma must be"), (dict(resets=0), "resets must be"),
                          (dict(actions=1.5), "actions must be")]:
        args = dict(k=k, beta=beta, sigma=sigma, resets=3, actions=2) | kwargs
        with pytest.raises(ValueError, match=match):
            thm5_failure(args["k"], args["beta"], args["sigma"], args["resets"], actions=args["actions"])
    assert thm5_failure(1.0, 0.01, 1.0, 5, actions=2) == 1.0  # p >= 1: the trivial bound


@given(st.floats(0.1, 100.0), st.floats(1e-4, 100.0), st.floats(0.01, 10.0),
       st.integers(1, 10**4), st.integers(1, 8), st.floats(1.01, 3.0))
def test_thm5_failure_properties(k, beta, sigma, resets, actions, factor):
    assume(thm5_condition(k, beta, sigma))
    p = sup_abs_tail(k, beta, sigma)
    fail = thm5_failure(k, beta, sigma, resets, actions=actions)
    assert p <= fail + 1e-15 and fail <= min(1.0, resets * actions * p) * (1 + 1e-12)
    assert thm5_failure(k * factor, beta, sigma, resets, actions=actions) <= fail  # decreasing in k
    assert thm5_failure(k, beta, sigma, resets + 1, actions=actions) >= fail  # more paths, more risk
    assert range_tail_borell_tis(k, beta, sigma) <= p  # the single-path range bound is tighter


def test_printed_failure_term_does_not_bound_the_range_closed_form():
    """Counterexample (closed form): beta = 1, sigma = 100, 2k = 8.68 sqrt(beta) sigma + 10, J = 1.

    The printed term is exp(-50) = 1.9e-22, but P(max g - min g > 2k) >= P(|g(1) - g(0)| > 2k) =
    2 Q(2k / (sigma sqrt(2 (1 - e^{-beta})))) = 5.6e-15: the exponent ignores sigma.
    """
    beta, sigma = 1.0, 100.0
    k = (LEMMA8_CONSTANT_PAPER * sigma + 10.0) / 2
    log_paper = math.log(thm5_failure_paper(k, beta, sigma, 1))
    assert log_paper == pytest.approx(-50.0)
    log_two_point = math.log(2) + stats.norm.logsf(2 * k / (sigma * math.sqrt(2 * (1 - math.exp(-beta)))))
    assert log_two_point > log_paper + 15  # 5.6e-15 vs 1.9e-22
    # the corrected term is a valid (here trivial) bound: k < c sqrt(beta) sigma
    assert not thm5_condition(k, beta, sigma)


def test_printed_failure_term_misses_cross_action_pairs(unit_maxima):
    """The TD error pairs g_{a_t}(s_t) with g_{a*}(s_{t+1}) of another action: beta = 0.01, sigma = 3.

    2k = 8.68 sqrt(beta) sigma + 4, one reset (J = 1): printed term exp(-8) = 3.4e-4, but with two
    independent paths P(|g_1(x) - g_2(y)| > 2k for some x, y) >= P(|g_1(0) - g_2(0)| > 2k) = 0.12
    (closed form), and on the grid max g_1 - min g_2 > 2k has a Clopper-Pearson lower bound far above.
    """
    beta, sigma = 0.01, 3.0
    k = (LEMMA8_CONSTANT_PAPER * math.sqrt(beta) * sigma + 4.0) / 2
    paper = thm5_failure_paper(k, beta, sigma, 1)
    assert paper == pytest.approx(math.exp(-8.0))
    two_point = 2 * stats.norm.sf(2 * k / (sigma * math.sqrt(2)))
    assert two_point > 300 * paper
    lower_max, _, lower_negmax, _ = unit_maxima[beta]
    half = lower_max.size // 2  # paths 0..half-1 play action 1, the others action 2 (independent)
    hits = int(np.sum(sigma * (lower_max[:half] + lower_negmax[half:2 * half]) > 2 * k))
    assert _cp_lower(hits, half, ALPHA) > 100 * paper
    # the corrected term covers it: k is above c sqrt(beta) sigma = 2.605, but only by 0.70 = 0.23 sigma,
    # so 2 exp(-0.23^2 / 2) > 1 and the term is the trivial bound 1
    assert thm5_condition(k, beta, sigma) and thm5_failure(k, beta, sigma, 1, actions=2) == 1.0


def test_sup_abs_tail_holds_monte_carlo(unit_maxima):
    """P(sup |g| > k) <= sup_abs_tail at k = c sqrt(beta) sigma + 2 sigma (non-trivial bound 0.27).

    Uses the dominating upper variables of max g and max(-g); Clopper-Pearson upper bound.
    """
    for beta in (0.001, 0.01):
        _, upper, _, upper_neg = unit_maxima[beta]
        sigma = 1.0
        k = lemma8_mean_bound(beta, sigma) + 2 * sigma
        hits = int(np.sum(np.maximum(upper, upper_neg) * sigma > k))
        assert _cp_upper(hits, upper.size, ALPHA / 2) <= sup_abs_tail(k, beta, sigma)


@pytest.mark.parametrize("k, beta, sigma", [(23.0, 0.22, 5.0), (50.0, 4.0, 2.0), (100.0, 1.0, 1e-3)])
def test_the_unchecked_thm5_terms_return_the_checked_values(k, beta, sigma):
    # the trusted kernels skip validation only (App. E.3's k = 23 among them)
    assert supremum.thm5_condition_paper_unchecked(k, beta, sigma) == supremum.thm5_condition_paper(k, beta, sigma)
    assert supremum.thm5_failure_e3_paper_unchecked(k, beta, sigma, 78) == supremum.thm5_failure_e3_paper(
        k, beta, sigma, 78)
    assert supremum.thm5_condition_paper_unchecked(1.0, beta, sigma) == supremum.thm5_condition_paper(1.0, beta, sigma)
