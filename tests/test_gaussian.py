"""Tests of privcal.analysis.gaussian: classic calibration and the exact (analytic) Gaussian profile."""

import math
from fractions import Fraction

import mpmath
import pytest
from scipy import special
from hypothesis import given
from hypothesis import strategies as st

from privcal.analysis import gaussian as g


# Independent reference: the Balle & Wang 2018 (Thm 8) profile evaluated in 80-digit mpmath.
def _delta_ref(eps, mu, dps=80):
    with mpmath.workdps(dps):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)


def _mu_ref(eps, delta, lo="1e-6"):
    """Root of delta(eps; mu) = delta in mu, found by mpmath bisection at 80 digits (root above ``lo``)."""
    with mpmath.workdps(80):
        target = mpmath.mpf(delta)
        lo, hi = mpmath.mpf(lo), mpmath.mpf(1)
        while _delta_ref(eps, hi) < target:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            if _delta_ref(eps, mid) <= target:
                lo = mid
            else:
                hi = mid
        return lo


# ---- exact profile ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "eps,mu",
    [(0.0, 1.0), (1.0, 1.0), (0.1, 0.5), (1e-3, 10.0), (100.0, 14.0), (100.0, 2.7), (0.01, 1e-3),
     (10.0, 3.0), (1e-8, 1e-5), (30.0, 1.0), (0.0, 1e-8), (0.0, 3e-10), (0.0, 1e-22), (0.0, 1e-100)],
)
def test_delta_exact_matches_mpmath(eps, mu):
    # reference: 80-digit mpmath evaluation of the same closed form (independent of log_ndtr).
    # The eps = 0, tiny mu cases exercise the mpmath fallback of _log_delta_exact: its float64 error
    # test (without it: 1e-9 and 2e-7 relative error at mu = 1e-8, 3e-10), its working precision
    # chosen from the cancellation (with a fixed 30 digits: 1e-8 at mu = 1e-22) and its retry at
    # higher precision (without it: delta = 0 at mu = 1e-100).
    ref = _delta_ref(eps, mu, dps=250)
    got = g.log_delta_exact(eps, mu)
    assert abs(float(mpmath.exp(got - mpmath.log(ref))) - 1) < 1e-11


@pytest.mark.parametrize("eps,sigma", [(0.5, 1.0), (1.0, 3.7), (4.0, 0.8), (10.0, 0.5)])
def test_delta_exact_matches_dp_accounting(eps, sigma):
    # independent implementation: Google dp_accounting's GaussianPrivacyLoss (test-only dependency)
    mech = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    ref = mech.GaussianPrivacyLoss(sigma, sensitivity=1.0).get_delta_for_epsilon(eps)
    # dp_accounting (unpinned) documents no accuracy for this value (a float64 difference of normal
    # CDFs), so compare to 1e-6 relative; test_delta_exact_matches_mpmath checks the accuracy itself.
    assert g.delta_exact(eps, 1.0 / sigma) == pytest.approx(ref, rel=1e-6)


def test_delta_at_zero_epsilon_is_total_variation():
    # closed form: at eps = 0 the profile is the TV distance 2 Phi(mu/2) - 1 between N(0,1) and N(mu,1)
    for mu in (0.1, 1.0, 5.0):
        assert g.delta_exact(0.0, mu) == pytest.approx(math.erf(mu / (2 * math.sqrt(2))), rel=1e-13)


@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 10.0, 100.0])
@pytest.mark.parametrize("delta", [0.1, 1e-5, 1e-20, 1e-100, 1e-300])
def test_mu_exact_accurate_to_1e9(eps, delta):
    # reference: mpmath bisection of the 80-digit profile
    ref = float(_mu_ref(eps, delta))
    got = g.mu_exact(eps, delta)
    assert abs(got / ref - 1) < 1e-9
    assert got <= ref * (1 + 1e-14)  # never above the true mu (never less noise than needed)
    assert g.delta_exact(eps, got) <= delta


@pytest.mark.parametrize("mu", [0.05, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("delta", [0.5, 1e-5, 1e-100, 1e-300])
def test_epsilon_exact_accurate_and_feasible(mu, delta):
    eps = g.epsilon_exact(delta, mu)
    assert g.delta_exact(eps, mu) <= delta
    if eps > 0:
        # a hair less epsilon must violate delta (the answer is the smallest feasible one)
        assert float(_delta_ref(eps * (1 - 1e-9), mu)) > delta


def test_sigma_exact_known_value():
    # eps = 1, delta = 1e-5, sensitivity 1: the analytic Gaussian needs sigma ~= 3.73 (the classic
    # formula gives 4.84); reference root from the 80-digit mpmath profile.
    ref = 1 / float(_mu_ref(1.0, 1e-5))
    assert g.sigma_exact(1.0, 1e-5) == pytest.approx(ref, rel=1e-9)
    assert 3.72 < ref < 3.74
    assert g.sigma_exact(1.0, 1e-5, sensitivity=2.5) == pytest.approx(2.5 * ref, rel=1e-9)


@given(
    eps=st.floats(0.0, 50.0),
    mu=st.floats(0.01, 30.0),
    factor=st.floats(1.0001, 3.0),
)
def test_profile_monotone(eps, mu, factor):
    assert g.delta_exact(eps * factor + 1e-3, mu) <= g.delta_exact(eps, mu)
    assert g.delta_exact(eps, mu * factor) >= g.delta_exact(eps, mu)


@given(eps=st.floats(1e-3, 100.0), log10_delta=st.floats(-300.0, -0.5))
def test_round_trip_mu_epsilon(eps, log10_delta):
    delta = 10.0**log10_delta
    mu = g.mu_exact(eps, delta)
    assert g.delta_exact(eps, mu) <= delta
    back = g.epsilon_exact(delta, mu)
    assert back <= eps * (1 + 1e-9) + 1e-12
    # the two directions aim 3e-10 and 1e-10 below log(delta) (gaussian._LOG_MARGIN_*), which moves
    # epsilon by up to 4e-10 * delta / |d delta/d eps|, with d delta/d eps = -e^eps Phi(-mu/2 - eps/mu)
    log_slope = eps + float(special.log_ndtr(-mu / 2 - eps / mu))
    assert back >= eps * (1 - 1e-9) - 4e-10 * math.exp(math.log(delta) - log_slope)


# ---- the rounding safeguards of the inverses ---------------------------------------------------------
# Each test below fails when the safeguard it names is removed from privcal/analysis/gaussian.py.

_SOUND_GRID = [(eps, delta) for eps in (1e-3, 0.05, 0.7, 3.0, 20.0) for delta in (0.3, 1e-3, 1e-9, 1e-40, 1e-250)]


@pytest.mark.parametrize("mu", [0.0123, 0.31, 1.7, 8.9, 41.0])
@pytest.mark.parametrize("delta", [0.3, 1e-3, 1e-9, 1e-40, 1e-250])
def test_epsilon_exact_is_feasible_in_exact_arithmetic(mu, delta):
    # _LOG_MARGIN_EPSILON: without the margin the root is feasible only for the float64 profile, and
    # the 80-digit profile at the returned epsilon exceeds delta in about a quarter of the cases.
    assert _delta_ref(g.epsilon_exact(delta, mu), mu) <= delta


@pytest.mark.parametrize("eps,delta", _SOUND_GRID)
def test_mu_exact_is_feasible_in_exact_arithmetic(eps, delta):
    # _LOG_MARGIN_MU: the same for the calibration direction (reference: 80-digit mpmath profile).
    assert _delta_ref(eps, g.mu_exact(eps, delta)) <= delta


@pytest.mark.parametrize("eps,delta", _SOUND_GRID)
@pytest.mark.parametrize("sensitivity", [0.37, 1.0, 13.0])
def test_calibrated_sigma_accounts_to_at_most_epsilon(eps, delta, sensitivity):
    # _LOG_MARGIN_MU below _LOG_MARGIN_EPSILON: a sigma calibrated for (eps, delta) and accounted back
    # (mu = sensitivity / sigma, rounded) never reports more than eps. With equal margins the
    # accounted epsilon exceeds eps by an ulp or so in about a quarter of the cases.
    sigma = g.sigma_exact(eps, delta, sensitivity=sensitivity)
    assert g.epsilon_exact(delta, sensitivity / sigma) <= eps


@pytest.mark.parametrize("eps,delta", _SOUND_GRID)
@pytest.mark.parametrize("sensitivity", [0.37, 1.0, 13.0])
def test_sigma_exact_is_rounded_up(eps, delta, sensitivity):
    # the nextafter in sigma_exact: sigma * mu >= sensitivity exactly (rational arithmetic), so the
    # returned sigma is never below sensitivity / mu_exact
    sigma = g.sigma_exact(eps, delta, sensitivity=sensitivity)
    assert Fraction(sigma) * Fraction(g.mu_exact(eps, delta)) >= Fraction(sensitivity)


@pytest.mark.parametrize("delta,mu", [(1e-200, 1.5e8), (1e-300, 3e8), (1e-50, 1e9), (1e-10, 2e8), (1e-300, 1e6)])
def test_epsilon_exact_huge_mu(delta, mu):
    # At huge mu, a = mu/2 - eps/mu cancels in float64:
    # - the widening loop of the upper bracket end: the Chernoff end mu^2/2 - mu * ndtri(delta) is
    #   infeasible after rounding (1e-200, 1.5e8 and others), and without the loop brentq has no sign change;
    # - _feasible_up: the brentq root is infeasible for the 80-digit profile at (1e-300, 3e8) and
    #   (1e-300, 1e6) (by 1e-7 and 8e-11 relative) until it is stepped up.
    # Reference: 100-digit mpmath profile.
    eps = g.epsilon_exact(delta, mu)
    assert _delta_ref(eps, mu, dps=100) <= delta
    assert _delta_ref(eps * (1 - 1e-9), mu, dps=100) > delta


@pytest.mark.parametrize("eps,delta", [(1e-14, 1e-45), (1.78e-14, 1e-110), (1e-13, 1e-30)])
def test_mu_exact_tiny_epsilon(eps, delta):
    # the halving loop of the lower bracket end: for tiny epsilon, z + sqrt(z^2 + 2 eps) cancels and the
    # start is infeasible after rounding; without the loop brentq has no sign change.
    # Reference: mpmath bisection of the 80-digit profile.
    got = g.mu_exact(eps, delta)
    ref = float(_mu_ref(eps, delta, lo="1e-30"))
    assert got <= ref and got / ref > 1 - 1e-9


@pytest.mark.parametrize("delta", [0.5, 1e-5, 1e-100])
def test_mu_exact_at_zero_epsilon_is_total_variation(delta):
    # the floor of the lower bracket end at 1e-300: at eps = 0 the start z + sqrt(z^2) is 0, where the
    # profile is undefined. Closed form: delta(0; mu) = 2 Phi(mu/2) - 1, so mu = 2 Phi^-1((1 + delta)/2).
    with mpmath.workdps(50):
        ref = float(2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(delta)))
    assert g.mu_exact(0.0, delta) == pytest.approx(ref, rel=1e-9)
    assert g.mu_exact(0.0, delta) <= ref


# ---- classic calibration ----------------------------------------------------------------------------


def test_classic_formula():
    # closed form of Dwork & Roth 2014, Thm A.1: sqrt(2 ln(1.25/1e-5)) / 0.5
    assert g.sigma_dwork_roth(0.5, 1e-5) == pytest.approx(math.sqrt(2 * math.log(125000.0)) / 0.5, rel=1e-15)
    # Hall et al. 2013: constant 2
    assert g.sigma_hall(0.5, 1e-5, sensitivity=3.0) == pytest.approx(3 * math.sqrt(2 * math.log(2e5)) / 0.5)


@given(eps=st.floats(1e-3, 0.999), log10_delta=st.floats(-30.0, -1.0))
def test_classic_is_sufficient_below_one(eps, log10_delta):
    # Thm A.1 (0 < eps < 1): the classic sigma is never below the exact one.
    delta = 10.0**log10_delta
    assert g.sigma_dwork_roth(eps, delta) >= g.sigma_exact(eps, delta)
    assert g.sigma_hall(eps, delta) >= g.sigma_dwork_roth(eps, delta)


def test_classic_refuses_epsilon_above_one():
    with pytest.raises(ValueError, match="sigma_exact"):
        g.sigma_dwork_roth(1.5, 1e-5)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: g.sigma_exact(0.0, 1e-5), "epsilon"),
        (lambda: g.sigma_exact(1.0, 1.5), "delta"),
        (lambda: g.sigma_exact(1.0, 0.0), "delta"),
        (lambda: g.sigma_exact(1.0, 1e-5, sensitivity=-1), "sensitivity"),
        (lambda: g.delta_exact(-1.0, 1.0), "epsilon"),
        (lambda: g.delta_exact(1.0, 0.0), "mu"),
        (lambda: g.epsilon_exact(1e-5, float("nan")), "mu"),
        (lambda: g.sigma_dwork_roth(0.5, 2.0), "delta"),
    ],
)
def test_bad_input_names_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@given(eps=st.floats(0.0, 100.0), log10_mu=st.floats(-4.0, 2.0))
def test_log_delta_matches_mpmath_everywhere(eps, log10_mu):
    # reference: 80-digit mpmath evaluation; relative accuracy of delta 1e-9 wherever delta >= 1e-300
    mu = 10.0**log10_mu
    ref = _delta_ref(eps, mu)
    if ref < mpmath.mpf("1e-300"):
        return
    got = g.log_delta_exact(eps, mu)
    assert abs(float(mpmath.exp(got - mpmath.log(ref))) - 1) < 1e-9
