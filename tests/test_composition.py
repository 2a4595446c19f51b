"""Tests of privcal.composition: exact Gaussian composition, Wang & Hegde 2019 Thm 5 as printed,
Kairouz-Oh-Viswanath optimal composition (exact profile, inverse, Thm 3.3 grid, Thm 3.4), DRV and
basic composition, and KOV with the exact per-step Gaussian profile.

References used by the tests are written independently here (mpmath brute-force sums) or come from
dp_accounting (an independent implementation of the (eps, delta) dominating pair and PLD composition).
"""

import math
import time

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privcal import composition as C
from privcal import gaussian as G
from privcal.errors import InfeasibleError

# ---------------------------------------------------------------------------------------------------
# independent references


def _rr_delta_brute(eps, eps0, k, dps=40):
    """delta_RR by brute force (mpmath): sum_l C(k,l) [e^{(k-l)eps0} - e^eps e^{l eps0}]_+ / (1+e^eps0)^k."""
    with mpmath.workdps(dps):
        e0 = mpmath.mpf(eps0)
        e = mpmath.mpf(eps)
        total = mpmath.mpf(0)
        for l in range(k + 1):
            diff = mpmath.exp((k - l) * e0) - mpmath.exp(e + l * e0)
            if diff > 0:
                total += mpmath.binomial(k, l) * diff
        return total / (1 + mpmath.exp(e0)) ** k


def _kov_delta_brute(eps, eps0, delta0, k, dps=40):
    with mpmath.workdps(dps):
        return float(1 - (1 - mpmath.mpf(delta0)) ** k * (1 - _rr_delta_brute(eps, eps0, k, dps)))


def _rr_delta_cdf_mp(eps, eps0, k, dps=50):
    """delta_RR = P(Bin(k,q) < i) - e^eps P(Bin(k,p) < i), i = #{l : (k-2l) eps0 > eps}: every pmf term
    summed in mpmath by the ratio recursion (no window, no logs), for large k."""
    with mpmath.workdps(dps):
        e0 = mpmath.mpf(eps0)
        e = mpmath.mpf(eps)
        p = 1 / (1 + mpmath.exp(-e0))
        q = 1 - p
        a, b = p**k, q**k
        big, small = mpmath.mpf(0), mpmath.mpf(0)
        l = 0
        while l <= k and (k - 2 * l) * e0 > e:
            big += a
            small += b
            a *= mpmath.mpf(k - l) / (l + 1) * (q / p)
            b *= mpmath.mpf(k - l) / (l + 1) * (p / q)
            l += 1
        return float(big - mpmath.exp(e) * small)


def _thm33_grid_mp(eps0, delta0, k, dps=40):
    """Kairouz, Oh & Viswanath 2015, Thm 3.3, evaluated literally in mpmath."""
    with mpmath.workdps(dps):
        e0 = mpmath.mpf(eps0)
        out = []
        for i in range(k // 2 + 1):
            s = mpmath.fsum(
                mpmath.binomial(k, l) * (mpmath.exp((k - l) * e0) - mpmath.exp((k - 2 * i + l) * e0))
                for l in range(i)
            )
            delta_i = s / (1 + mpmath.exp(e0)) ** k
            out.append(((k - 2 * i) * eps0, float(1 - (1 - mpmath.mpf(delta0)) ** k * (1 - delta_i))))
        return out


# ---------------------------------------------------------------------------------------------------
# exact composition


def test_composed_mu_closed_form():
    # sqrt(16) * 3 / 2 = 6 (closed form)
    assert C.composed_mu(2.0, steps=16, sensitivity=3.0) == pytest.approx(6.0, rel=1e-15)


def test_exact_composition_is_one_gaussian():
    # 16 releases with mu0 = 1/4 compose to one Gaussian with mu = 1 (Dong, Roth & Su 2022, Cor. 3.3)
    assert C.delta_composed_exact(1.0, 4.0, steps=16) == pytest.approx(G.delta_exact(1.0, 1.0), rel=1e-14)
    exact = G.epsilon_exact(1e-5, 1.0)
    assert C.epsilon_composed_exact(4.0, 1e-5, steps=16) == pytest.approx(exact, rel=1e-14)


def test_exact_composition_matches_dp_accounting_pld():
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    # independent implementation: PLD of one Gaussian (sigma = 4, sensitivity 1) self-composed 16 times;
    # its discretisation is pessimistic, so it lies slightly above the exact value
    ref = pld.from_gaussian_mechanism(4.0, value_discretization_interval=1e-4).self_compose(16)
    exact = C.delta_composed_exact(1.0, 4.0, steps=16)
    assert exact <= ref.get_delta_for_epsilon(1.0) <= exact * (1 + 1e-3)


@given(
    epsilon=st.floats(0.01, 30.0),
    log10_delta=st.floats(-12.0, -1.0),
    steps=st.integers(1, 10_000),
    sensitivity=st.floats(0.01, 10.0),
)
def test_sigma_composed_exact_round_trip(epsilon, log10_delta, steps, sensitivity):
    delta = 10.0**log10_delta
    sigma = C.sigma_composed_exact(epsilon, delta, steps=steps, sensitivity=sensitivity)
    # sufficient, and tight (a 1e-6 smaller sigma is not)
    assert C.delta_composed_exact(epsilon, sigma, steps=steps, sensitivity=sensitivity) <= delta
    assert C.delta_composed_exact(epsilon, sigma * (1 - 1e-6), steps=steps, sensitivity=sensitivity) > delta


# ---------------------------------------------------------------------------------------------------
# Wang & Hegde 2019, Theorem 5

# App. E.3 parameters: T = 5000, B = 64, alpha = 3e-4, k = 23, L = 4, eps = 0.9, delta = 5e-5 (half of 1e-4)
_T_PRIME = 5000 / 64  # 78.125, used literally by the paper
# v = 4 alpha (k+1)/B = 4.5e-4 (the paper prints v = 6.19e-5, which does not follow from its parameters)
_V = 4 * 3e-4 * (23 + 1) / 64
_C_E3 = (_V**2 + _V) * 4**2  # C(alpha, k, L, B) = D^2 = 0.00720324
_D_E3 = math.sqrt(_C_E3)


def test_app_e3_statement_form_reproduces_0313():
    # Wang & Hegde 2019, App. E.3: "sigma ~= 0.313" for eps = 0.9, delta = 5e-5
    sigma = C.thm5_sigma_statement_paper(0.9, 5e-5, steps=_T_PRIME, c=_C_E3)
    assert sigma == pytest.approx(0.313, abs=5e-4)


def test_app_e3_proof_form_is_about_ten_times_larger():
    statement = C.thm5_sigma_statement_paper(0.9, 5e-5, steps=_T_PRIME, c=_C_E3)
    proof = C.thm5_sigma_proof_paper(0.9, 5e-5, steps=_T_PRIME, sensitivity=_D_E3)
    # sqrt(2 * 78.125 * 0.00720324 * ln(e + 18000)) / 0.9 = 3.6898 (closed form, by hand)
    assert proof == pytest.approx(3.6898, abs=1e-3)
    assert 10 < proof / statement < 13  # 11.78: the statement form has C = D^2 outside the root


def test_app_e3_sigma_0313_is_not_private():
    # finding: with the statement-form sigma = 0.313 the exact composed profile (mu = sqrt(78.125) * D /
    # sigma = 2.395, T' used as the paper does) gives delta(0.9) ~= 0.652 (50-digit mpmath of Balle &
    # Wang 2018, Thm 8: 0.65228), i.e. far from (0.9, 5e-5)-DP
    sigma = C.thm5_sigma_statement_paper(0.9, 5e-5, steps=_T_PRIME, c=_C_E3)
    mu = math.sqrt(_T_PRIME) * _D_E3 / sigma
    assert G.delta_exact(0.9, mu) == pytest.approx(0.652, abs=2e-3)
    # the sigma that the exact profile needs at 78 steps is 2.764 (>= 8.8x the paper's 0.313); reference:
    # sqrt(78) D / mu*, mu* the root of the 50-digit mpmath profile by bisection (2.76400155)
    exact = C.sigma_composed_exact(0.9, 5e-5, steps=78, sensitivity=_D_E3)
    assert exact == pytest.approx(2.764, abs=1e-3)


def test_thm5_epsilon_known_value():
    # mu = sqrt(4) * 0.5 / 1 = 1: eps = 1/2 + sqrt(2 ln(e + 1e5)) = 5.298531576934566 (mpmath, 30 digits)
    eps = C.thm5_epsilon_paper(1.0, 1e-5, steps=4, sensitivity=0.5)
    assert eps == pytest.approx(5.298531576934566, rel=1e-14)


@given(log10_mu=st.floats(-6.0, 2.5), log10_delta=st.floats(-300.0, -0.31))
def test_thm5_epsilon_is_sound(log10_mu, log10_delta):
    # (a) the proof's epsilon-expression is never below the exact composed epsilon (steps = 1, D = mu sigma)
    mu, delta = 10.0**log10_mu, 10.0**log10_delta
    paper = C.thm5_epsilon_paper(1.0 / mu, delta, steps=1, sensitivity=1.0)
    exact = C.epsilon_composed_exact(1.0 / mu, delta, steps=1)
    assert paper >= exact


@given(
    log10_sigma=st.floats(-1.5, 3.0),
    log10_delta=st.floats(-200.0, -0.5),
    steps=st.floats(1.0, 1e4),
    sensitivity=st.floats(0.01, 10.0),
)
def test_thm5_delta_inverts_epsilon(log10_sigma, log10_delta, steps, sensitivity):
    sigma, delta = 10.0**log10_sigma, 10.0**log10_delta
    eps = C.thm5_epsilon_paper(sigma, delta, steps=steps, sensitivity=sensitivity)
    back = C.thm5_delta_paper(eps, sigma, steps=steps, sensitivity=sensitivity)
    assert back == pytest.approx(delta, rel=1e-7)


def test_thm5_delta_trivial_region():
    # mu = 1: the expression gives delta < 1 only for eps > 1/2 + sqrt(2 (1 + ln(1 + 1/e)))
    assert C.thm5_delta_paper(0.4, 1.0, steps=1, sensitivity=1.0) == 1.0
    assert C.thm5_delta_paper(2.0, 1.0, steps=1, sensitivity=1.0) == 1.0
    assert C.thm5_delta_paper(2.4, 1.0, steps=1, sensitivity=1.0) < 1.0


# (b) eps at which the proof's closed-form sigma stops being sufficient for the exact composed profile
# (brentq on log delta_exact - log delta, 1e-12 tolerance), and at which it stops satisfying the
# proof's own epsilon-expression
_PROOF_SIGMA_THRESHOLDS = {1e-3: (12.9742, 2.8948), 1e-5: (13.5901, 3.3464), 1e-8: (14.3682, 3.7659)}


@pytest.mark.parametrize("delta", sorted(_PROOF_SIGMA_THRESHOLDS))
def test_thm5_proof_sigma_sufficient_only_below_threshold(delta):
    threshold, _ = _PROOF_SIGMA_THRESHOLDS[delta]

    def exact_delta(eps):
        sigma = C.thm5_sigma_proof_paper(eps, delta, steps=_T_PRIME, sensitivity=_D_E3)
        return G.delta_exact(eps, math.sqrt(_T_PRIME) * _D_E3 / sigma)

    for eps in np.geomspace(1e-3, threshold - 1e-3, 40):
        assert exact_delta(eps) <= delta
    for eps in np.linspace(threshold + 1e-3, 40.0, 40):
        assert exact_delta(eps) > delta


def test_thm5_proof_sigma_fails_far_above_threshold():
    # eps = 20, delta = 1e-5: the proof's sigma gives an exact composed delta ~= 1.0e-4 (ten times delta)
    sigma = C.thm5_sigma_proof_paper(20.0, 1e-5, steps=80, sensitivity=1.0)
    assert C.delta_composed_exact(20.0, sigma, steps=80) == pytest.approx(1.01e-4, rel=0.01)


@pytest.mark.parametrize("delta", sorted(_PROOF_SIGMA_THRESHOLDS))
def test_thm5_proof_sigma_violates_own_expression(delta):
    # the closed form does not follow from the proof's epsilon-expression above eps ~ 3
    _, crossing = _PROOF_SIGMA_THRESHOLDS[delta]

    def own_epsilon(eps):
        sigma = C.thm5_sigma_proof_paper(eps, delta, steps=_T_PRIME, sensitivity=_D_E3)
        return C.thm5_epsilon_paper(sigma, delta, steps=_T_PRIME, sensitivity=_D_E3)

    for eps in np.geomspace(1e-3, crossing - 1e-3, 30):
        assert own_epsilon(eps) <= eps
    for eps in np.linspace(crossing + 1e-3, 40.0, 30):
        assert own_epsilon(eps) > eps


# (c) noise saved by the exact profile over the proof's closed form, 1 - sigma_exact / sigma_proof,
# for eps in [0.1, 5] (grid of 50): (min, max) per delta
_SAVINGS = {1e-3: (0.164, 0.428), 1e-5: (0.130, 0.284), 1e-8: (0.100, 0.191)}


@pytest.mark.parametrize("delta", sorted(_SAVINGS))
def test_exact_sigma_savings_over_proof_sigma(delta):
    def saving(e):
        proof = C.thm5_sigma_proof_paper(e, delta, steps=80, sensitivity=1.0)
        return 1 - C.sigma_composed_exact(e, delta, steps=80) / proof

    savings = [saving(e) for e in np.geomspace(0.1, 5.0, 50)]
    low, high = _SAVINGS[delta]
    assert min(savings) == pytest.approx(low, abs=2e-3)
    assert max(savings) == pytest.approx(high, abs=2e-3)


def test_statement_form_scales_with_sensitivity_squared():
    # dimension check: sigma(statement) ~ C = D^2, sigma(proof) ~ D
    a = C.thm5_sigma_statement_paper(1.0, 1e-5, steps=10, c=1.0)
    assert C.thm5_sigma_statement_paper(1.0, 1e-5, steps=10, c=4.0) == pytest.approx(4 * a, rel=1e-14)
    b = C.thm5_sigma_proof_paper(1.0, 1e-5, steps=10, sensitivity=1.0)
    assert C.thm5_sigma_proof_paper(1.0, 1e-5, steps=10, sensitivity=4.0) == pytest.approx(4 * b, rel=1e-14)
    assert a == pytest.approx(b, rel=1e-14)  # they agree only at D = C = 1


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8])
def test_kov_quoted_sigma_is_conservative(delta):
    def ratio(e):
        quoted = C.sigma_kov_quoted_paper(e, delta, steps=80, sensitivity=1.0)
        return quoted / C.sigma_composed_exact(e, delta, steps=80)

    ratios = [ratio(e) for e in np.geomspace(0.01, 50.0, 60)]
    assert 1.8 < min(ratios) and max(ratios) < 6.5


# ---------------------------------------------------------------------------------------------------
# Kairouz, Oh & Viswanath 2015


def test_thm33_grid_hand_computed():
    # k = 2, eps0 = ln 3, delta0 = 0: delta_1 = (e^{2 eps0} - 1)/(1 + e^eps0)^2 = 8/16 = 1/2 (by hand)
    grid = C.kov_epsilon_grid_paper(math.log(3.0), 0.0, 2)
    assert grid[0] == pytest.approx((2 * math.log(3.0), 0.0))
    assert grid[1] == pytest.approx((0.0, 0.5), rel=1e-14)


@pytest.mark.parametrize(
    "eps0,delta0,k", [(0.2, 1e-6, 11), (0.05, 0.0, 40), (1.0, 1e-3, 7), (0.01, 1e-9, 101)]
)
def test_thm33_grid_matches_mpmath_and_kov_delta(eps0, delta0, k):
    grid = C.kov_epsilon_grid_paper(eps0, delta0, k)
    for (eps, delta), (eps_ref, delta_ref) in zip(grid, _thm33_grid_mp(eps0, delta0, k)):
        assert eps == pytest.approx(eps_ref, rel=1e-14)
        assert delta == pytest.approx(delta_ref, rel=1e-10, abs=1e-300)
        # the profile at every grid point equals Thm 3.3's delta_i (the float eps0 = 0.05 exceeds 1/20 by
        # 2.8e-18, so at the rounded grid point eps = 2.0 the true profile is p^40 (1 - e^-1.1e-16) = 2.7e-28)
        assert C.kov_delta(eps, eps0, delta0, k) == pytest.approx(delta_ref, rel=1e-9, abs=1e-20)


@given(
    k=st.integers(1, 60),
    eps0=st.floats(1e-3, 3.0),
    delta0=st.one_of(st.just(0.0), st.floats(1e-12, 1e-2)),
    frac=st.floats(0.0, 1.1),
)
def test_kov_delta_matches_brute_force(k, eps0, delta0, frac):
    eps = frac * k * eps0  # mostly between grid points
    value = C.kov_delta(eps, eps0, delta0, k)
    ref = _kov_delta_brute(eps, eps0, delta0, k)
    assert value >= ref * (1 - 1e-14)  # never below the true value
    assert value == pytest.approx(ref, rel=1e-9, abs=1e-200)


def test_kov_delta_matches_dp_accounting():
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    common = pytest.importorskip("dp_accounting.pld.common")
    # independent implementation: PLD of the (eps0, delta0) dominating pair, self-composed k times
    for eps0, delta0, k, eps in [(0.1, 1e-7, 50, 0.73), (0.5, 0.0, 10, 1.3), (1.0, 1e-4, 7, 2.5)]:
        pair = pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(eps0, delta0), value_discretization_interval=1e-4
        )
        ref = pair.self_compose(k).get_delta_for_epsilon(eps)
        assert C.kov_delta(eps, eps0, delta0, k) == pytest.approx(ref, rel=1e-8)


def test_kov_delta_single_step_closed_form():
    # k = 1: delta0 + (1 - delta0) (e^eps0 - e^eps)/(1 + e^eps0) for eps < eps0 (closed form)
    eps0, delta0, eps = 1.0, 1e-3, 0.25
    expected = delta0 + (1 - delta0) * (math.e - math.exp(eps)) / (1 + math.e)
    assert C.kov_delta(eps, eps0, delta0, 1) == pytest.approx(expected, rel=1e-12)
    assert C.kov_delta(1.5, eps0, delta0, 1) == pytest.approx(delta0, rel=1e-14)


@pytest.mark.parametrize("eps,eps0", [(5.0, 0.01), (20.0, 0.01), (0.0, 0.003)])
def test_kov_delta_large_k_accurate(eps, eps0):
    k = 100_000
    ref = _rr_delta_cdf_mp(eps, eps0, k)
    value = C.kov_delta(eps, eps0, 0.0, k)
    assert ref <= value <= ref * (1 + 1e-8)


def test_kov_delta_mpmath_path(monkeypatch):
    # force the mpmath re-summation of the window at k = 1e5 and compare with the full mpmath sum
    k, eps, eps0 = 100_000, 5.0, 0.01
    ref = _rr_delta_cdf_mp(eps, eps0, k)
    monkeypatch.setattr(C, "_MP_REL_ERROR", 0.0)
    value = C.kov_delta(eps, eps0, 0.0, k)
    assert ref <= value <= ref * (1 + 1e-11)


def test_kov_huge_k_round_trip():
    # k = 1e6 uses the mpmath window; the inverse must stay feasible and tight
    eps = C.kov_epsilon(0.003, 1e-13, 10**6, 1e-5)
    assert math.isfinite(eps) and 0 < eps < 10**6 * 0.003
    assert C.kov_delta(eps, 0.003, 1e-13, 10**6) <= 1e-5
    assert C.kov_delta(eps * (1 - 1e-6), 0.003, 1e-13, 10**6) > 1e-5


@given(
    k=st.integers(1, 3000),
    eps0=st.floats(1e-3, 5.0),
    delta0=st.floats(0.0, 1e-3),
    a=st.floats(0.0, 1.2),
    b=st.floats(0.0, 1.2),
)
def test_kov_delta_monotone(k, eps0, delta0, a, b):
    lo, hi = sorted((a * k * eps0, b * k * eps0))
    assert C.kov_delta(lo, eps0, delta0, k) >= C.kov_delta(hi, eps0, delta0, k)


_kov_args = dict(
    k=st.integers(1, 2000),
    eps0=st.floats(1e-3, 3.0),
    log10_delta=st.floats(-12.0, -1.0),
    frac=st.floats(0.0, 0.5),
)


@given(**_kov_args)
def test_kov_epsilon_round_trip(k, eps0, log10_delta, frac):
    delta = 10.0**log10_delta
    delta0 = frac * delta / k
    eps = C.kov_epsilon(eps0, delta0, k, delta)
    assert 0.0 <= eps <= k * eps0 * (1 + 1e-12)
    assert C.kov_delta(eps, eps0, delta0, k) <= delta
    lower = eps - max(1e-6 * eps, 1e-9)
    if lower > 0:  # near-minimal: slightly less epsilon is not enough
        assert C.kov_delta(lower, eps0, delta0, k) > delta


@given(**_kov_args)
def test_kov_ordering(k, eps0, log10_delta, frac):
    delta = 10.0**log10_delta
    delta0 = frac * delta / k
    optimal = C.kov_epsilon(eps0, delta0, k, delta)
    approx = C.kov_epsilon_approx(eps0, delta0, k, delta)
    basic = C.basic_epsilon(eps0, delta0, k, delta)
    drv = C.drv_epsilon(eps0, delta0, k, delta)
    assert optimal <= approx * (1 + 1e-12)
    assert approx <= basic * (1 + 1e-15)
    assert optimal <= drv * (1 + 1e-12)


def test_drv_and_approx_known_values():
    # DRV: sqrt(200 ln(1/9e-6)) 0.1 + 100 * 0.1 (e^0.1 - 1) = 5.872141937393178 (mpmath, 30 digits)
    assert C.drv_epsilon(0.1, 1e-8, 100, 1e-5) == pytest.approx(5.872141937393178, rel=1e-13)
    # KOV Thm 3.4, eps0 = 0.1, k = 100, delta~ = 1e-5: third branch
    # 10 tanh(0.05) + 0.1 sqrt(200 ln 1e5) = 5.298109661766881 (mpmath, 30 digits)
    assert C.kov_epsilon_approx(0.1, 0.0, 100, 1e-5) == pytest.approx(5.298109661766881, rel=1e-13)
    # basic: k eps0
    assert C.basic_epsilon(0.1, 1e-8, 100, 1e-5) == pytest.approx(10.0, rel=1e-15)


def test_infeasible_requests_raise():
    # 1 - (1 - 1e-6)^100 ~= 1e-4 > 1e-5: no epsilon reaches delta
    with pytest.raises(InfeasibleError, match="delta"):
        C.kov_epsilon(0.1, 1e-6, 100, 1e-5)
    with pytest.raises(InfeasibleError, match="delta"):
        C.kov_epsilon_approx(0.1, 1e-6, 100, 1e-5)
    with pytest.raises(InfeasibleError, match="delta"):
        C.drv_epsilon(0.1, 2e-7, 100, 1e-5)
    with pytest.raises(InfeasibleError, match="delta"):
        C.basic_epsilon(0.1, 1e-6, 100, 1e-5)


# ---------------------------------------------------------------------------------------------------
# KOV with the per-step Gaussian profile


@given(
    log10_sigma=st.floats(-0.3, 1.7),
    steps=st.integers(1, 200),
    log10_delta=st.floats(-10.0, -2.0),
)
def test_kov_gaussian_epsilon_is_sound_and_consistent(log10_sigma, steps, log10_delta):
    sigma, delta = 10.0**log10_sigma, 10.0**log10_delta
    eps, eps0, delta0 = C.kov_gaussian_epsilon_with_step(sigma, delta, steps=steps)
    assert eps >= C.epsilon_composed_exact(sigma, delta, steps=steps)
    # delta0 is delta_exact raised by 1e-10 relative (composition._DELTA0_INFLATION)
    assert delta0 == pytest.approx(G.delta_exact(eps0, 1.0 / sigma), rel=2e-10)
    assert delta0 >= G.delta_exact(eps0, 1.0 / sigma)
    assert C.kov_delta(eps, eps0, delta0, steps) <= delta


@pytest.mark.parametrize("sigma,steps,delta", [(5.0, 80, 1e-5), (20.0, 80, 1e-5), (50.0, 1000, 1e-6)])
def test_kov_gaussian_epsilon_near_grid_optimum(sigma, steps, delta):
    # brute force over 400 values of eps0 must not beat the search by more than 1e-5 (relative)
    best = math.inf
    for eps0 in np.geomspace(0.02 / sigma, 50.0 / sigma, 400):
        try:
            best = min(best, C.kov_epsilon(eps0, G.delta_exact(eps0, 1.0 / sigma), steps, delta))
        except InfeasibleError:
            pass
    assert C.kov_gaussian_epsilon(sigma, delta, steps=steps) <= best * (1 + 1e-5)


@given(epsilon=st.floats(0.0, 30.0), log10_sigma=st.floats(-0.3, 1.7), steps=st.integers(1, 200))
def test_kov_gaussian_delta_is_sound(epsilon, log10_sigma, steps):
    sigma = 10.0**log10_sigma
    value, eps0, delta0 = C.kov_gaussian_delta_with_step(epsilon, sigma, steps=steps)
    assert value >= C.delta_composed_exact(epsilon, sigma, steps=steps)
    assert value == pytest.approx(C.kov_delta(epsilon, eps0, delta0, steps), rel=1e-12)


def test_kov_gaussian_tiny_mu0_is_zero_epsilon():
    # mu0 = 1e-6: each step is (0, TV)-DP with TV = 2 Phi(mu0/2) - 1 = 3.99e-7 (closed form), and
    # 1 - (1 - TV)^10 = 3.99e-6 < 1e-5, so epsilon = 0 with eps0 = 0
    eps, eps0, delta0 = C.kov_gaussian_epsilon_with_step(1e6, 1e-5, steps=10)
    assert (eps, eps0) == (0.0, 0.0)
    assert delta0 == pytest.approx(3.9894228e-7, rel=1e-6)


def test_kov_gaussian_single_step_is_exact():
    # k = 1: eps0 = eps recovers the exact profile (KOV of one (eps, delta(eps)) point)
    for eps, sigma in [(0.5, 2.0), (2.0, 1.0), (0.1, 10.0)]:
        exact = G.delta_exact(eps, 1.0 / sigma)
        assert exact <= C.kov_gaussian_delta(eps, sigma, steps=1) <= exact * (1 + 1e-4)


def test_kov_gaussian_epsilon_is_fast():
    # used inside a CLI table with a calibration root-find around it: well under 50 ms at ~80 steps
    C.kov_gaussian_epsilon(5.0, 1e-5, steps=78)
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        C.kov_gaussian_epsilon(5.0, 1e-5, steps=78)
        best = min(best, time.perf_counter() - start)
    assert best < 0.05


# ---------------------------------------------------------------------------------------------------
# input validation


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: C.composed_mu(0.0, steps=1), "sigma"),
        (lambda: C.composed_mu(1.0, steps=78.125), "steps"),
        (lambda: C.composed_mu(1.0, steps=4, sensitivity=-1.0), "sensitivity"),
        (lambda: C.epsilon_composed_exact(1.0, 1.5, steps=4), "delta"),
        (lambda: C.delta_composed_exact(-1.0, 1.0, steps=4), "epsilon"),
        (lambda: C.sigma_composed_exact(0.0, 1e-5, steps=4), "epsilon"),
        (lambda: C.thm5_epsilon_paper(1.0, 1e-5, steps=0.0, sensitivity=1.0), "steps"),
        (lambda: C.thm5_epsilon_paper(1.0, 0.0, steps=2.5, sensitivity=1.0), "delta"),
        (lambda: C.thm5_delta_paper(float("nan"), 1.0, steps=2.5, sensitivity=1.0), "epsilon"),
        (lambda: C.thm5_sigma_proof_paper(1.0, 1e-5, steps=2.5, sensitivity=0.0), "sensitivity"),
        (lambda: C.thm5_sigma_statement_paper(1.0, 1e-5, steps=2.5, c=0.0), "c"),
        (lambda: C.sigma_kov_quoted_paper(1.0, 1e-5, steps=-1.0, sensitivity=1.0), "steps"),
        (lambda: C.kov_delta(-0.1, 0.1, 0.0, 5), "epsilon"),
        (lambda: C.kov_delta(0.1, -0.1, 0.0, 5), "epsilon0"),
        (lambda: C.kov_delta(0.1, 0.1, 1.5, 5), "delta0"),
        (lambda: C.kov_delta(0.1, 0.1, 0.0, 0), "k"),
        (lambda: C.kov_delta(0.1, 0.1, 0.0, 2.5), "k"),
        (lambda: C.kov_delta(0.1, 0.1, 0.0, 10**9), "k"),
        (lambda: C.kov_epsilon(0.1, 0.0, 5, 1.0), "delta"),
        (lambda: C.kov_epsilon_grid_paper(0.1, 0.0, True), "k"),
        (lambda: C.kov_epsilon_approx(0.1, 0.0, 5, 0.0), "delta"),
        (lambda: C.drv_epsilon(0.1, 2.0, 5, 1e-5), "delta0"),
        (lambda: C.basic_epsilon("0.1", 0.0, 5, 1e-5), "epsilon0"),
        (lambda: C.kov_gaussian_epsilon(1.0, 1e-5, steps=0), "steps"),
        (lambda: C.kov_gaussian_epsilon(0.0, 1e-5, steps=10), "sigma"),
        (lambda: C.kov_gaussian_delta(1.0, 1.0, steps=10, sensitivity=0.0), "sensitivity"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()
