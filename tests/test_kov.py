"""Tests of privcal.analysis.kov: Kairouz-Oh-Viswanath optimal composition (exact profile, inverse, Thm 3.3
grid, Thm 3.4), DRV and basic composition, and KOV with the exact per-step Gaussian profile.

References used by the tests are written independently here (mpmath brute-force sums) or come from
dp_accounting (an independent implementation of the (eps, delta) dominating pair and PLD composition).
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from privcal.analysis import composition as C
from privcal.analysis import gaussian as G
from privcal.analysis import kov as K
from privcal.analysis import kov_profile
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
# Kairouz, Oh & Viswanath 2015


def test_thm33_grid_hand_computed():
    # k = 2, eps0 = ln 3, delta0 = 0: delta_1 = (e^{2 eps0} - 1)/(1 + e^eps0)^2 = 8/16 = 1/2 (by hand)
    grid = K.kov_epsilon_grid_paper(math.log(3.0), 0.0, steps=2)
    assert grid[0] == pytest.approx((2 * math.log(3.0), 0.0))
    assert grid[1] == pytest.approx((0.0, 0.5), rel=1e-14)


@pytest.mark.parametrize(
    "eps0,delta0,k", [(0.2, 1e-6, 11), (0.05, 0.0, 40), (1.0, 1e-3, 7), (0.01, 1e-9, 101)]
)
def test_thm33_grid_matches_mpmath_and_kov_delta(eps0, delta0, k):
    grid = K.kov_epsilon_grid_paper(eps0, delta0, steps=k)
    for (eps, delta), (eps_ref, delta_ref) in zip(grid, _thm33_grid_mp(eps0, delta0, k)):
        assert eps == pytest.approx(eps_ref, rel=1e-14)
        assert delta == pytest.approx(delta_ref, rel=1e-10, abs=1e-300)
        # the profile at every grid point equals Thm 3.3's delta_i (the float eps0 = 0.05 exceeds 1/20 by
        # 2.8e-18, so at the rounded grid point eps = 2.0 the true profile is p^40 (1 - e^-1.1e-16) = 2.7e-28)
        assert K.kov_delta(eps0, delta0, steps=k, epsilon=eps) == pytest.approx(delta_ref, rel=1e-9, abs=1e-20)


@given(
    k=st.integers(1, 60),
    eps0=st.floats(1e-3, 3.0),
    delta0=st.one_of(st.just(0.0), st.floats(1e-12, 1e-2)),
    frac=st.floats(0.0, 1.1),
)
def test_kov_delta_matches_brute_force(k, eps0, delta0, frac):
    eps = frac * k * eps0  # mostly between grid points
    value = K.kov_delta(eps0, delta0, steps=k, epsilon=eps)
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
        assert K.kov_delta(eps0, delta0, steps=k, epsilon=eps) == pytest.approx(ref, rel=1e-8)


def test_kov_delta_single_step_closed_form():
    # k = 1: delta0 + (1 - delta0) (e^eps0 - e^eps)/(1 + e^eps0) for eps < eps0 (closed form)
    eps0, delta0, eps = 1.0, 1e-3, 0.25
    expected = delta0 + (1 - delta0) * (math.e - math.exp(eps)) / (1 + math.e)
    assert K.kov_delta(eps0, delta0, steps=1, epsilon=eps) == pytest.approx(expected, rel=1e-12)
    assert K.kov_delta(eps0, delta0, steps=1, epsilon=1.5) == pytest.approx(delta0, rel=1e-14)


@pytest.mark.parametrize("eps,eps0", [(5.0, 0.01), (20.0, 0.01), (0.0, 0.003)])
def test_kov_delta_large_k_accurate(eps, eps0):
    k = 100_000
    ref = _rr_delta_cdf_mp(eps, eps0, k)
    value = K.kov_delta(eps0, 0.0, steps=k, epsilon=eps)
    assert ref <= value <= ref * (1 + 1e-8)


def test_kov_delta_mpmath_path(monkeypatch):
    # force the mpmath re-summation of the window at k = 1e5 and compare with the full mpmath sum
    k, eps, eps0 = 100_000, 5.0, 0.01
    ref = _rr_delta_cdf_mp(eps, eps0, k)
    monkeypatch.setattr(kov_profile, "MP_REL_ERROR", 0.0)
    value = K.kov_delta(eps0, 0.0, steps=k, epsilon=eps)
    assert ref <= value <= ref * (1 + 1e-11)


def test_kov_huge_k_round_trip():
    # k = 1e6 uses the mpmath window; the inverse must stay feasible and tight
    eps = K.kov_epsilon(0.003, 1e-13, steps=10**6, delta=1e-5)
    assert math.isfinite(eps) and 0 < eps < 10**6 * 0.003
    assert K.kov_delta(0.003, 1e-13, steps=10**6, epsilon=eps) <= 1e-5
    assert K.kov_delta(0.003, 1e-13, steps=10**6, epsilon=eps * (1 - 1e-6)) > 1e-5


@given(
    k=st.integers(1, 3000),
    eps0=st.floats(1e-3, 5.0),
    delta0=st.floats(0.0, 1e-3),
    a=st.floats(0.0, 1.2),
    b=st.floats(0.0, 1.2),
)
def test_kov_delta_monotone(k, eps0, delta0, a, b):
    lo, hi = sorted((a * k * eps0, b * k * eps0))
    assert K.kov_delta(eps0, delta0, steps=k, epsilon=lo) >= K.kov_delta(eps0, delta0, steps=k, epsilon=hi)


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
    eps = K.kov_epsilon(eps0, delta0, steps=k, delta=delta)
    assert 0.0 <= eps <= k * eps0 * (1 + 1e-12)
    assert K.kov_delta(eps0, delta0, steps=k, epsilon=eps) <= delta
    lower = eps - max(1e-6 * eps, 1e-9)
    if lower > 0:  # near-minimal: slightly less epsilon is not enough
        assert K.kov_delta(eps0, delta0, steps=k, epsilon=lower) > delta


@given(**_kov_args)
def test_kov_ordering(k, eps0, log10_delta, frac):
    delta = 10.0**log10_delta
    delta0 = frac * delta / k
    optimal = K.kov_epsilon(eps0, delta0, steps=k, delta=delta)
    approx = K.kov_epsilon_approx(eps0, delta0, steps=k, delta=delta)
    basic = K.basic_epsilon(eps0, delta0, steps=k, delta=delta)
    drv = K.drv_epsilon(eps0, delta0, steps=k, delta=delta)
    assert optimal <= approx * (1 + 1e-12)
    assert approx <= basic * (1 + 1e-15)
    assert optimal <= drv * (1 + 1e-12)


def test_drv_and_approx_known_values():
    # DRV: sqrt(200 ln(1/9e-6)) 0.1 + 100 * 0.1 (e^0.1 - 1) = 5.872141937393178 (mpmath, 30 digits)
    assert K.drv_epsilon(0.1, 1e-8, steps=100, delta=1e-5) == pytest.approx(5.872141937393178, rel=1e-13)
    # KOV Thm 3.4, eps0 = 0.1, k = 100, delta~ = 1e-5: third branch
    # 10 tanh(0.05) + 0.1 sqrt(200 ln 1e5) = 5.298109661766881 (mpmath, 30 digits)
    assert K.kov_epsilon_approx(0.1, 0.0, steps=100, delta=1e-5) == pytest.approx(5.298109661766881, rel=1e-13)
    # basic: k eps0
    assert K.basic_epsilon(0.1, 1e-8, steps=100, delta=1e-5) == pytest.approx(10.0, rel=1e-15)


def test_infeasible_requests_raise():
    # 1 - (1 - 1e-6)^100 ~= 1e-4 > 1e-5: no epsilon reaches delta
    with pytest.raises(InfeasibleError, match="delta"):
        K.kov_epsilon(0.1, 1e-6, steps=100, delta=1e-5)
    with pytest.raises(InfeasibleError, match="delta"):
        K.kov_epsilon_approx(0.1, 1e-6, steps=100, delta=1e-5)
    with pytest.raises(InfeasibleError, match="delta"):
        K.drv_epsilon(0.1, 2e-7, steps=100, delta=1e-5)
    with pytest.raises(InfeasibleError, match="delta"):
        K.basic_epsilon(0.1, 1e-6, steps=100, delta=1e-5)


# ---------------------------------------------------------------------------------------------------
# KOV with the per-step Gaussian profile


@given(
    log10_sigma=st.floats(-0.3, 1.7),
    steps=st.integers(1, 200),
    log10_delta=st.floats(-10.0, -2.0),
)
def test_kov_gaussian_epsilon_is_sound_and_consistent(log10_sigma, steps, log10_delta):
    sigma, delta = 10.0**log10_sigma, 10.0**log10_delta
    eps, eps0, delta0 = K.kov_gaussian_epsilon_with_step(sigma, steps=steps, delta=delta)
    assert eps >= C.epsilon_composed_exact(sigma, delta, steps=steps)
    # delta0 is delta_exact raised by 1e-10 relative (privcal.analysis.kov_gaussian)
    assert delta0 == pytest.approx(G.delta_exact(eps0, 1.0 / sigma), rel=2e-10)
    assert delta0 >= G.delta_exact(eps0, 1.0 / sigma)
    assert K.kov_delta(eps0, delta0, steps=steps, epsilon=eps) <= delta


@pytest.mark.parametrize("sigma,steps,delta", [(5.0, 80, 1e-5), (20.0, 80, 1e-5), (50.0, 1000, 1e-6)])
def test_kov_gaussian_epsilon_near_grid_optimum(sigma, steps, delta):
    # brute force over 400 values of eps0 must not beat the search by more than 1e-5 (relative)
    best = math.inf
    for eps0 in np.geomspace(0.02 / sigma, 50.0 / sigma, 400):
        try:
            best = min(best, K.kov_epsilon(eps0, G.delta_exact(eps0, 1.0 / sigma), steps=steps, delta=delta))
        except InfeasibleError:
            pass
    assert K.kov_gaussian_epsilon(sigma, steps=steps, delta=delta) <= best * (1 + 1e-5)


@given(epsilon=st.floats(0.0, 30.0), log10_sigma=st.floats(-0.3, 1.7), steps=st.integers(1, 200))
def test_kov_gaussian_delta_is_sound(epsilon, log10_sigma, steps):
    sigma = 10.0**log10_sigma
    value, eps0, delta0 = K.kov_gaussian_delta_with_step(sigma, steps=steps, epsilon=epsilon)
    assert value >= C.delta_composed_exact(epsilon, sigma, steps=steps)
    assert value == pytest.approx(K.kov_delta(eps0, delta0, steps=steps, epsilon=epsilon), rel=1e-12)


def test_kov_gaussian_tiny_mu0_is_zero_epsilon():
    # mu0 = 1e-6: each step is (0, TV)-DP with TV = 2 Phi(mu0/2) - 1 = 3.99e-7 (closed form), and
    # 1 - (1 - TV)^10 = 3.99e-6 < 1e-5, so epsilon = 0 with eps0 = 0
    eps, eps0, delta0 = K.kov_gaussian_epsilon_with_step(1e6, steps=10, delta=1e-5)
    assert (eps, eps0) == (0.0, 0.0)
    assert delta0 == pytest.approx(3.9894228e-7, rel=1e-6)


def test_kov_gaussian_single_step_is_exact():
    # k = 1: eps0 = eps recovers the exact profile (KOV of one (eps, delta(eps)) point)
    for eps, sigma in [(0.5, 2.0), (2.0, 1.0), (0.1, 10.0)]:
        exact = G.delta_exact(eps, 1.0 / sigma)
        assert exact <= K.kov_gaussian_delta(sigma, steps=1, epsilon=eps) <= exact * (1 + 1e-4)


def test_composition_reexports_kov():
    # the old import path privcal.analysis.composition.<name> is the same function object
    for name in K.__all__:
        assert getattr(C, name) is getattr(K, name)
        assert name in C.__all__


# ---------------------------------------------------------------------------------------------------
# input validation


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: K.kov_delta(0.1, 0.0, steps=5, epsilon=-0.1), "epsilon"),
        (lambda: K.kov_delta(-0.1, 0.0, steps=5, epsilon=0.1), "epsilon0"),
        (lambda: K.kov_delta(0.1, 1.5, steps=5, epsilon=0.1), "delta0"),
        (lambda: K.kov_delta(0.1, 0.0, steps=0, epsilon=0.1), "steps"),
        (lambda: K.kov_delta(0.1, 0.0, steps=2.5, epsilon=0.1), "steps"),
        (lambda: K.kov_delta(0.1, 0.0, steps=10**9, epsilon=0.1), "steps"),
        (lambda: K.kov_epsilon(0.1, 0.0, steps=5, delta=1.0), "delta"),
        (lambda: K.kov_epsilon_grid_paper(0.1, 0.0, steps=True), "steps"),
        (lambda: K.kov_epsilon_approx(0.1, 0.0, steps=5, delta=0.0), "delta"),
        (lambda: K.drv_epsilon(0.1, 2.0, steps=5, delta=1e-5), "delta0"),
        (lambda: K.basic_epsilon("0.1", 0.0, steps=5, delta=1e-5), "epsilon0"),
        (lambda: K.kov_gaussian_epsilon(1.0, steps=0, delta=1e-5), "steps"),
        (lambda: K.kov_gaussian_epsilon(0.0, steps=10, delta=1e-5), "sigma"),
        (lambda: K.kov_gaussian_delta(1.0, steps=10, epsilon=1.0, sensitivity=0.0), "sensitivity"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: K.kov_delta(0.5, 0.1, 0.0, 5),
        lambda: K.kov_epsilon(0.1, 0.0, 5, 1e-5),
        lambda: K.kov_epsilon_grid_paper(0.1, 0.0, 5),
        lambda: K.kov_epsilon_approx(0.1, 0.0, 5, 1e-5),
        lambda: K.drv_epsilon(0.1, 0.0, 5, 1e-5),
        lambda: K.basic_epsilon(0.1, 0.0, 5, 1e-5),
        lambda: K.kov_gaussian_epsilon(5.0, 1e-5, steps=10),
        lambda: K.kov_gaussian_delta(1.0, 5.0, steps=10),
    ],
)
def test_positional_query_fails_loudly(call):
    # steps and the query (delta or epsilon) are keyword-only: a call in an old argument order raises
    # instead of silently swapping numbers
    with pytest.raises(TypeError):
        call()


# --- the rounding direction of the last bits, pinned against exact rational arithmetic ------------------------

@settings(max_examples=300, deadline=None, derandomize=True)
@given(k=st.integers(1, 10**8), eps0=st.floats(1e-6, 20.0))
def test_eps_top_is_the_smallest_float_at_or_above_k_eps0(k, eps0):
    # every term of delta_RR vanishes at eps >= k eps0; eps_top must be on that side of the real product
    # (rounded up, never down) and no further than one float (fractions.Fraction: exact rational values)
    from fractions import Fraction

    rr = K.RandomizedResponse(eps0, k)
    exact = Fraction(k) * Fraction(rr.eps0)
    assert Fraction(rr.eps_top) >= exact
    assert Fraction(float(np.nextafter(rr.eps_top, -math.inf))) < exact


@settings(max_examples=300, deadline=None, derandomize=True)
@given(m=st.integers(-10**8, 10**8), eps0=st.floats(1e-6, 20.0), eps=st.floats(0.0, 1e3))
# 3 x 0.1 rounds to 0.30000000000000004, above the exact product 0.3000000000000000166...: at eps equal to the
# rounded product the exact gap is negative, where the bare float difference says 0
@example(m=3, eps0=0.1, eps=0.30000000000000004)
@example(m=7, eps0=0.1, eps=0.7000000000000001)
def test_the_gap_has_the_exact_sign(m, eps0, eps):
    # (k - 2l) eps0 - eps decides which terms are active: its sign must be the exact one (fractions.Fraction)
    from fractions import Fraction

    exact = Fraction(m) * Fraction(eps0) - Fraction(eps)
    got = K.exact_gap(float(m), eps0, eps)
    assert (got > 0) == (exact > 0) and (got < 0) == (exact < 0)


# --- the split modules: one object under every path, the trusted kernels equal to the checked functions ----------

def test_kov_reexports_the_objects_of_its_three_modules():
    from privcal.analysis import kov_closed_forms, kov_gaussian

    homes = (kov_profile, kov_closed_forms, kov_gaussian)
    for name in K.__all__:
        owners = [m for m in homes if name in m.__all__]
        assert len(owners) == 1 and getattr(K, name) is getattr(owners[0], name), name


@pytest.mark.parametrize("eps0, delta0, steps", [(0.1, 1e-8, 100), (0.01, 0.0, 5000), (1.0, 1e-10, 7)])
def test_the_unchecked_kernels_return_the_checked_values(eps0, delta0, steps):
    # the trusted kernels skip validation only: same numbers, bit for bit
    from privcal.analysis import kov_closed_forms, kov_gaussian

    assert kov_profile.kov_delta_unchecked(eps0, delta0, steps=steps, epsilon=0.5) == K.kov_delta(
        eps0, delta0, steps=steps, epsilon=0.5)
    assert kov_profile.kov_epsilon_unchecked(eps0, delta0, steps=steps, delta=1e-5) == K.kov_epsilon(
        eps0, delta0, steps=steps, delta=1e-5)
    assert kov_closed_forms.kov_epsilon_approx_unchecked(eps0, delta0, steps=steps, delta=1e-5) == K.kov_epsilon_approx(
        eps0, delta0, steps=steps, delta=1e-5)
    sigma = 5.0
    assert kov_gaussian.kov_gaussian_epsilon_unchecked(sigma, steps=steps, delta=1e-5) == K.kov_gaussian_epsilon(
        sigma, steps=steps, delta=1e-5)
    assert kov_gaussian.kov_gaussian_delta_unchecked(sigma, steps=steps, epsilon=2.0) == K.kov_gaussian_delta(
        sigma, steps=steps, epsilon=2.0)


def test_the_closed_form_serves_strictly_beyond_its_threshold():
    from privcal.analysis import kov_gaussian

    assert kov_gaussian.K_CLOSED_FORM == 10**6
    assert not kov_gaussian.uses_closed_form(kov_gaussian.K_CLOSED_FORM)
    assert kov_gaussian.uses_closed_form(kov_gaussian.K_CLOSED_FORM + 1)


def test_moving_the_closed_form_threshold_moves_the_gaussian_search(monkeypatch):
    # Thm 3.4 bounds the optimal composition from above (Kairouz, Oh & Viswanath 2015), so pricing each eps0 by it
    # gives a larger epsilon: the threshold is read where the search runs
    from privcal.analysis import kov_gaussian

    exact = K.kov_gaussian_epsilon(20.0, steps=2000, delta=1e-5)
    monkeypatch.setattr(kov_gaussian, "K_CLOSED_FORM", 1000)
    closed = K.kov_gaussian_epsilon(20.0, steps=2000, delta=1e-5)
    assert exact < closed < 1.5 * exact
