"""Tests for privcal.analysis.subsampling: Poisson (MTZ 2019), without replacement (WBK 2018 Thm 9), GPOPE Lemma 1.

Independent references: dp_accounting 0.6 (Google's RDP accountant), mpmath quadrature of the Rényi
divergence, exact binomial sums in mpmath, and direct float loops over WBK Thm 9 for small orders.
"""

import math
import warnings

import mpmath as mp
import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privcal.analysis.rdp import DEFAULT_ORDERS, rdp_gaussian
from privcal.analysis.subsampling import (
    rdp_without_replacement_gaussian_thm9,
    rdp_gpope_b2_paper,
    rdp_gpope_lemma1_paper,
    rdp_poisson_gaussian,
    rdp_without_replacement,
    rdp_without_replacement_gaussian,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp

INTEGER_ORDERS = DEFAULT_ORDERS[DEFAULT_ORDERS == np.floor(DEFAULT_ORDERS)]


def mp_log_moment(alpha, q, s, direction="mix_over_base"):
    """ln E_Q[(P/Q)^alpha] by mpmath quadrature, mu0 = N(0, s^2), mix = (1-q) mu0 + q N(1, s^2).

    direction "mix_over_base": P = mix, Q = mu0; "base_over_mix": P = mu0, Q = mix. Rényi divergence is
    this value / (alpha - 1). Breakpoints at the means, at z0 (where (1-q) mu0 = q mu1) and at alpha.
    """
    with mp.workdps(30):
        alpha, q, s = mp.mpf(alpha), mp.mpf(q), mp.mpf(s)

        def f(z):
            mu0 = mp.npdf(z, 0, s)
            mix = (1 - q) * mu0 + q * mp.npdf(z, 1, s)
            if direction == "mix_over_base":
                return mu0 * (mix / mu0) ** alpha
            return mix * (mu0 / mix) ** alpha

        z0 = s * s * mp.log((1 - q) / q) + mp.mpf(1) / 2
        pts = sorted({-mp.inf, -10 * s, mp.mpf(0), mp.mpf(1), z0, alpha, alpha + 10 * s, mp.inf})
        return float(mp.log(mp.quad(f, pts)))


def mp_log_a_int(alpha, q, s):
    """ln A_alpha for integer alpha by the exact binomial sum in 50-digit arithmetic (MTZ 2019, Sec. 3.3)."""
    with mp.workdps(50):
        q, s = mp.mpf(q), mp.mpf(s)
        total = mp.mpf(0)
        for k in range(2, alpha + 1):
            term = mp.binomial(alpha, k) * q**k * (1 - q) ** (alpha - k) * mp.expm1(mp.mpf(k * k - k) / (2 * s * s))
            total += term
            if k > 40 and term < total * mp.mpf(10) ** -40:
                break
        return float(mp.log1p(total))


def thm9_direct(alpha, q, eps, eps_inf=math.inf):
    """WBK 2018, Thm 9 for integer alpha by a plain float loop (independent of the log-space code)."""
    cap2 = 2.0 if math.isinf(eps_inf) else min(2.0, math.expm1(eps_inf) ** 2)
    total = q * q * math.comb(alpha, 2) * min(4 * math.expm1(eps(2)), math.exp(eps(2)) * cap2)
    for j in range(3, alpha + 1):
        cap = 2.0 if math.isinf(eps_inf) else min(2.0, math.expm1(eps_inf) ** j)
        total += q**j * math.comb(alpha, j) * math.exp((j - 1) * eps(j)) * cap
    return math.log1p(total) / (alpha - 1)


# ---------------------------------------------------------------------------------------------
# Poisson subsampling
# ---------------------------------------------------------------------------------------------

POISSON_CASES = [(0.01, 1.0), (1e-6, 0.5), (0.5, 2.0), (0.01, 0.3), (1e-3, 10.0), (0.99, 0.7)]


@pytest.mark.parametrize("q, s", POISSON_CASES)
def test_poisson_integer_orders_match_dp_accounting(q, s):
    # dp_accounting's _compute_rdp_poisson_subsampled_gaussian (the value its RdpAccountant composes for a
    # PoissonSampledDpEvent of a GaussianDpEvent) -- an independent implementation of MTZ 2019.
    ours = rdp_poisson_gaussian(INTEGER_ORDERS, s, q)
    theirs = dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, s, INTEGER_ORDERS)
    # dp_accounting sums A_alpha (not A_alpha - 1): below ln A ~ 1e-8 its float64 round-off exceeds 1e-6
    # relative, so compare where (alpha - 1) rdp >= 1e-8 (tiny values are checked against mpmath below).
    keep = (INTEGER_ORDERS - 1) * theirs >= 1e-8
    assert keep.sum() >= 20
    np.testing.assert_allclose(ours[keep], theirs[keep], rtol=1e-6)


@pytest.mark.parametrize("q, s, alpha", [(1e-6, 50.0, 9020), (1e-6, 1.0, 1024), (0.5, 3.0, 64)])
def test_poisson_integer_orders_match_exact_sum(q, s, alpha):
    # Exact binomial sum in 50-digit arithmetic; the first case is where dp_accounting 0.6 is off by 1.2e-5
    # relative (it returns 1.80434e-12 against the exact 1.804367e-12).
    ours = rdp_poisson_gaussian([alpha], s, q)[0]
    assert ours == pytest.approx(mp_log_a_int(alpha, q, s) / (alpha - 1), rel=1e-9)


@pytest.mark.parametrize(
    "q, s, alpha",
    [(0.01, 1.0, 1.01), (0.5, 2.0, 2.5), (0.2, 5.0, 1.01), (0.01, 0.3, 1.5), (1e-6, 30.0, 7.75), (0.01, 0.1, 5.5),
     (0.9, 0.5, 15.5)],
)
def test_poisson_fractional_orders_match_quadrature(q, s, alpha):
    # mpmath quadrature of ln E_{mu0}[(mix/mu0)^alpha]; covers the trapezoid path (s >= 0.2) and MTZ's series
    # (s < 0.2).
    ours = rdp_poisson_gaussian([alpha], s, q)[0]
    assert ours == pytest.approx(mp_log_moment(alpha, q, s) / (alpha - 1), rel=1e-8)


def test_poisson_q_one_is_gaussian():
    np.testing.assert_allclose(rdp_poisson_gaussian(DEFAULT_ORDERS, 1.3, 1.0), rdp_gaussian(DEFAULT_ORDERS, 1.3))


def test_poisson_extreme_parameters_are_finite_and_monotone():
    for q, s in [(1e-6, 0.3), (1e-6, 100.0), (0.999, 0.2), (1e-3, 0.05)]:
        r = rdp_poisson_gaussian(DEFAULT_ORDERS, s, q)
        assert np.all(np.isfinite(r)) and np.all(r >= 0)
        assert np.all(np.diff(r) >= -1e-12 * r[1:])


# ---------------------------------------------------------------------------------------------
# Sampling without replacement (WBK 2018, Thm 9)
# ---------------------------------------------------------------------------------------------


WOR_ORDERS = np.concatenate([np.arange(2.0, 41.0), [64.0, 128.0, 300.0, 512.0, 1024.0, 4096.0]])


@pytest.mark.parametrize("q, s", [(0.01, 1.0), (1e-6, 0.5), (0.2, 5.0), (1e-3, 10.0), (0.1, 0.8)])
def test_without_replacement_against_dp_accounting(q, s):
    # independent implementation: dp_accounting's _compute_rdp_sample_wor_gaussian uses WBK Thm 27 for
    # alpha <= 256 -- ours must agree there to rounding -- and Thm 9 terms for every j above 256, where
    # ours keeps Thm 27's forward-difference terms for j <= 256 (each term a valid min), so it is never above.
    ours = rdp_without_replacement_gaussian(WOR_ORDERS, s, q)
    theirs = dp_rdp._compute_rdp_sample_wor_gaussian(q, s, WOR_ORDERS)
    # dp_accounting is an unpinned test-only peer that documents no accuracy for this function (it sums
    # in float64; dp-accounting 0.6 differs from ours by up to 5e-10 relative here), so the comparison
    # allows 1e-6: enough to catch a wrong term, not tied to one release's rounding. The accuracy of
    # our forward differences is checked against mpmath in test_forward_differences_match_mpmath.
    small = WOR_ORDERS <= 256
    np.testing.assert_allclose(ours[small], theirs[small], rtol=1e-6)
    assert np.all(ours[~small] <= theirs[~small] * (1 + 1e-6))
    # and never above Thm 9 alone
    thm9 = rdp_without_replacement_gaussian_thm9(WOR_ORDERS, s, q)
    assert np.all(ours <= thm9 * (1 + 1e-9))


def test_thm27_vanishes_with_noise_where_thm9_has_a_floor():
    # WBK Thm 9's j >= 3 terms tend to 2 q^j C(alpha, j) as s grows (the floor pinned in
    # test_without_replacement_stable_at_extremes); Thm 27's vanish: at q = 0.1, s = 30, alpha = 3 it is
    # below the floor ln(1 + 2 q^3)/2 and below the Gaussian cap alpha/(2 s^2)
    floor3 = math.log1p(2 * 0.1**3) / 2
    thm27 = rdp_without_replacement_gaussian([3.0], 30.0, 0.1)[0]
    assert thm27 < floor3 / 10 and thm27 < 3 / (2 * 30.0**2) / 10


@pytest.mark.parametrize("s", [0.2, 0.5, 1.0, 5.0, 50.0])
def test_forward_differences_match_mpmath(s):
    # reference: 400-digit mpmath alternating sum Delta^l = sum_i (-1)^(l-i) C(l,i) e^{(i-1) i/(2 s^2)}; the
    # quadrature returns an upper bound with its error bound charged (docs/rdp.md), above the reference and within
    # its rounding term (< 1e-8 relative here; tests/test_wbk_certificate.py pins each term)
    from privcal.analysis.subsampling import log_forward_differences_gaussian

    got = log_forward_differences_gaussian(s, 130)
    with mpmath.workdps(400):
        for l in (2, 4, 10, 32, 64, 130):
            sm = mpmath.mpf(s)
            ref = mpmath.fsum(
                (-1) ** (l - i) * mpmath.binomial(l, i) * mpmath.exp(mpmath.mpf(i - 1) * i / (2 * sm * sm))
                for i in range(l + 1)
            )
            assert 0.0 <= float(got[l] - mpmath.log(ref)) < 1e-8


@pytest.mark.parametrize("q, s", [(0.01, 1.0), (0.3, 1.2), (0.05, 3.0)])
def test_without_replacement_thm9_matches_direct_loop(q, s):
    orders = np.arange(2, 31, dtype=float)
    ours = rdp_without_replacement_gaussian_thm9(orders, s, q)
    direct = np.array([thm9_direct(int(a), q, lambda j: j / (2 * s * s)) for a in orders])
    # our curve is Thm 9 capped by the Gaussian RDP and made non-decreasing: never above the direct value
    assert np.all(ours <= direct * (1 + 1e-12))
    capped = np.minimum(direct, orders / (2 * s * s))
    envelope = np.minimum.accumulate(capped[::-1])[::-1]
    np.testing.assert_allclose(ours, envelope, rtol=1e-10)


def test_without_replacement_general_base_with_finite_eps_inf():
    # A base mechanism with eps(inf) = 0.3 (e.g. pure 0.3-DP): the caps min{2, (e^0.3 - 1)^j} are active.
    orders = np.arange(2, 21, dtype=float)
    eps_inf = 0.3

    def base(a):
        return np.minimum(np.asarray(a, dtype=float) * 0.01, eps_inf)

    ours = rdp_without_replacement(orders, base, 0.1, base_rdp_inf=eps_inf)
    direct = np.array([thm9_direct(int(a), 0.1, lambda j: min(j * 0.01, eps_inf), eps_inf) for a in orders])
    capped = np.minimum(direct, base(orders))
    np.testing.assert_allclose(ours, np.minimum.accumulate(capped[::-1])[::-1], rtol=1e-10)
    # The Gaussian base through the general function equals the specialised one
    s = 1.5
    np.testing.assert_allclose(
        rdp_without_replacement(DEFAULT_ORDERS, lambda a: np.asarray(a) / (2 * s * s), 0.02),
        rdp_without_replacement_gaussian_thm9(DEFAULT_ORDERS, s, 0.02),
        rtol=1e-12,
    )


def test_without_replacement_fractional_orders_interpolate_cumulant():
    # WBK Cor. 10: (alpha - 1) rdp(alpha) linear between integers; for 1 < alpha < 2 the value of alpha = 2.
    q, s = 0.01, 2.0
    r2, r3, r4 = rdp_without_replacement_gaussian([2.0, 3.0, 4.0], s, q)
    r35, r15 = rdp_without_replacement_gaussian([3.5, 1.5], s, q)
    assert r35 == pytest.approx((0.5 * 2 * r3 + 0.5 * 3 * r4) / 2.5, rel=1e-12)
    assert r15 == pytest.approx(min(r2, 1.5 / (2 * s * s)), rel=1e-12)


def test_without_replacement_stable_at_extremes():
    for q, s in [(1e-6, 0.3), (1e-6, 100.0), (0.5, 0.2), (1e-3, 0.05)]:
        r = rdp_without_replacement_gaussian_thm9(DEFAULT_ORDERS, s, q)
        assert np.all(np.isfinite(r)) and np.all(r >= 0) and np.all(np.diff(r) >= 0)
    # WBK Thm 9's j >= 3 terms do not vanish as s grows: the bound has a noise-independent floor
    # (1/(alpha-1)) ln(1 + 2 q^3 C(alpha, 3) + ...) -- pinned at alpha = 3, q = 0.1 (raw Thm 9) ...
    floor3 = math.log1p(2 * 0.1**3) / 2
    assert thm9_direct(3, 0.1, lambda j: j / 2e12) == pytest.approx(floor3, rel=1e-6)
    # ... and it is what our curve returns while the Gaussian cap alpha/(2 s^2) is above it (s = 30).
    assert floor3 < rdp_without_replacement_gaussian_thm9([3.0], 30.0, 0.1)[0] < 3 / (2 * 30.0**2)


def test_without_replacement_q_one_is_base():
    np.testing.assert_allclose(
        rdp_without_replacement_gaussian(DEFAULT_ORDERS, 0.9, 1.0), rdp_gaussian(DEFAULT_ORDERS, 0.9)
    )


# ---------------------------------------------------------------------------------------------
# Properties (hypothesis)
# ---------------------------------------------------------------------------------------------

_q = st.floats(1e-6, 1.0)
_s = st.floats(0.1, 50.0)
_ORDERS_SMALL = np.array([1.01, 1.5, 2.0, 2.5, 3.0, 4.0, 6.5, 8.0, 16.0, 32.0, 64.0, 256.0, 1024.0])


@given(q=_q, s=_s)
def test_subsampled_below_unsubsampled(q, s):
    g = rdp_gaussian(_ORDERS_SMALL, s)
    assert np.all(rdp_poisson_gaussian(_ORDERS_SMALL, s, q) <= g * (1 + 1e-10))
    assert np.all(rdp_without_replacement_gaussian(_ORDERS_SMALL, s, q) <= g * (1 + 1e-10))


@given(q=_q, s=_s)
def test_non_decreasing_in_order(q, s):
    p = rdp_poisson_gaussian(_ORDERS_SMALL, s, q)
    w = rdp_without_replacement_gaussian(_ORDERS_SMALL, s, q)
    assert np.all(np.diff(p) >= -1e-10 * p[1:])
    assert np.all(np.diff(w) >= 0)


@given(q1=_q, q2=_q, s=_s)
def test_non_decreasing_in_sample_rate(q1, q2, s):
    lo, hi = min(q1, q2), max(q1, q2)
    for fn in (rdp_poisson_gaussian, rdp_without_replacement_gaussian):
        a, b = fn(_ORDERS_SMALL, s, lo), fn(_ORDERS_SMALL, s, hi)
        assert np.all(a <= b * (1 + 1e-10) + 1e-300)


@given(q=_q, s1=_s, s2=_s)
def test_non_increasing_in_noise(q, s1, s2):
    lo, hi = min(s1, s2), max(s1, s2)
    for fn in (rdp_poisson_gaussian, rdp_without_replacement_gaussian):
        assert np.all(fn(_ORDERS_SMALL, hi, q) <= fn(_ORDERS_SMALL, lo, q) * (1 + 1e-10) + 1e-300)


# ---------------------------------------------------------------------------------------------
# GPOPE Lemma 1 and Eq. (B.2) as printed
# ---------------------------------------------------------------------------------------------


def test_lemma1_literal_formula():
    # GPOPE Lemma 1 by hand: m = 100, sigma = 1, lambda = 3: 3*4/(2*100^2) * min{4(e-1), 2e} = 6e-4 * 2e.
    lam = 3
    value = rdp_gpope_lemma1_paper([lam + 1.0], 1.0, 1 / 100)[0] * lam
    assert value == pytest.approx(lam * (lam + 1) / (2 * 100**2) * min(4 * (math.e - 1), 2 * math.e), rel=1e-12)
    # sigma^2 >= 1/ln 2 branch: the min is 4(e^{1/sigma^2} - 1)
    s = 2.0
    value = rdp_gpope_lemma1_paper([lam + 1.0], s, 1 / 100)[0] * lam
    assert value == pytest.approx(lam * (lam + 1) / (2 * 100**2) * 4 * math.expm1(1 / s**2), rel=1e-12)


@given(q=st.floats(1e-4, 0.5), s=st.floats(0.3, 20.0))
def test_b2_between_lemma1_and_thm9(q, s):
    # Lemma 1 = (B.2) linearised (ln(1+x) <= x), and (B.2) = Thm 9 without its j >= 3 terms (paper's
    # sensitivity h: noise multiplier s), so B2 <= Lemma 1 and B2 <= raw Thm 9.
    orders = np.arange(2, 41, dtype=float)
    b2 = rdp_gpope_b2_paper(orders, s, q)
    assert np.all(b2 <= rdp_gpope_lemma1_paper(orders, s, q) * (1 + 1e-12))
    raw = np.array([thm9_direct(int(a), q, lambda j: j / (2 * s * s)) for a in orders[:10]])
    assert np.all(b2[:10] <= raw * (1 + 1e-12))


def test_lemma1_below_exact_moment_of_papers_own_pair():
    # The paper's worst-case pair (App. B.1, sensitivity h, unit shift): mu0 = N(0, s^2) and
    # mix = (1 - q) mu0 + q N(1, s^2). Its exact log moment lambda D_{lambda+1}(mix || mu0) is
    # ln A_{lambda+1} (MTZ 2019), computed exactly by rdp_poisson_gaussian. Lemma 1 lies below it:
    lams = np.arange(1, 41)
    orders = lams + 1.0
    q = 0.01
    for s, first_fail in [(1.0, 9), (1 / math.sqrt(math.log(2)), 13), (0.5, 2)]:
        lemma1 = rdp_gpope_lemma1_paper(orders, s, q) * lams
        exact = rdp_poisson_gaussian(orders, s, q) * lams
        below = lams[lemma1 < exact]
        assert below[0] == first_fail and np.all(below == np.arange(first_fail, 41))
    # independent check by quadrature at q = 0.01, s = 1, lambda = 12: Lemma 1 = 12 * 13 * q^2 / 2 * 2e =
    # 0.042405 (closed form; 2e < 4(e - 1)) vs exact ~ 18.14 (mpmath quadrature, mp_log_moment)
    lemma1 = rdp_gpope_lemma1_paper([13.0], 1.0, q)[0] * 12
    exact = mp_log_moment(13, q, 1.0)
    assert lemma1 == pytest.approx(0.04241, rel=1e-3) and exact == pytest.approx(18.14, rel=1e-3)
    assert lemma1 < exact / 400
    # The failure is in the pair's reverse order: D(mu0 || mix), the direction the proof writes, stays
    # below Lemma 1 here; the moments accountant is a max over both orders of adjacent data sets.
    assert mp_log_moment(13, q, 1.0, "base_over_mix") < lemma1


def test_lemma1_below_full_thm9():
    # Thm 9 with the paper's own base RDP eps0(j) = j/(2 sigma^2) (sensitivity h) and all its terms exceeds
    # Lemma 1 from lambda = 2 on (the j = 3 term appears at alpha = 3), for every (q, sigma) tried.
    lams = np.arange(2, 41)
    for q in (0.1, 0.01, 1e-3):
        for s in (0.5, 1.0, 1 / math.sqrt(math.log(2)), 2.0, 5.0):
            raw = np.array([thm9_direct(int(lam) + 1, q, lambda j: j / (2 * s * s)) for lam in lams[:15]])
            lemma1 = rdp_gpope_lemma1_paper(lams[:15] + 1.0, s, q) * lams[:15]
            assert np.all(lemma1 < raw * lams[:15])


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

_FNS = [rdp_poisson_gaussian, rdp_without_replacement_gaussian, rdp_gpope_lemma1_paper, rdp_gpope_b2_paper]


@pytest.mark.parametrize("fn", _FNS)
@pytest.mark.parametrize(
    "orders, s, q, name",
    [
        ([2.0], 1.0, 0.0, "sample_rate"),
        ([2.0], 1.0, 1.5, "sample_rate"),
        ([2.0], 1.0, -0.1, "sample_rate"),
        ([2.0], 1.0, float("nan"), "sample_rate"),
        ([2.0], 0.0, 0.1, "noise_multiplier"),
        ([2.0], -2.0, 0.1, "noise_multiplier"),
        ([1.0], 1.0, 0.1, "orders"),
        ([0.5, 3.0], 1.0, 0.1, "orders"),
    ],
)
def test_bad_input(fn, orders, s, q, name):
    with pytest.raises(ValueError, match=name):
        fn(orders, s, q)


def test_bad_base_rdp_inf():
    with pytest.raises(ValueError, match="base_rdp_inf"):
        rdp_without_replacement([2.0], lambda a: a, 0.1, base_rdp_inf=-1.0)


def test_forward_differences_cache_returns_the_fresh_rows_bit_for_bit():
    # the per-s cache of the forward differences extends its rows when a larger lmax is asked for and returns a
    # prefix for a smaller one: each must be the uncached computation of all rows at once, bit for bit (a row's
    # peaks, window and sum depend on its l alone), whatever the order of the requests
    from privcal.analysis import wbk_quadrature as Q

    rng = np.random.default_rng(7)
    for s in (0.21, 0.8, 1.0314, 3.3, 6.87, 40.0):
        Q.FD_CACHE.clear()
        fresh = Q.forward_difference_rows(s, np.arange(2, 259, 2, dtype=float))
        for lmax in rng.permutation([4, 18, 30, 54, 72, 130, 246, 258]):
            got = Q.log_forward_differences_gaussian(s, int(lmax))
            assert got.shape == (lmax + 1,) and got[0] == 0.0 and np.isnan(got[1::2]).all()
            assert np.array_equal(got[2::2], fresh[: lmax // 2])
            assert not got.flags.writeable  # a caller cannot change what the next one reads
    # the cache is bounded: the oldest noise multipliers go first
    Q.FD_CACHE.clear()
    for i in range(Q.FD_CACHE_SIZE + 5):
        Q.log_forward_differences_gaussian(1.0 + i, 4)
    assert len(Q.FD_CACHE) == Q.FD_CACHE_SIZE and 1.0 not in Q.FD_CACHE and 1.0 + Q.FD_CACHE_SIZE + 4 in Q.FD_CACHE


def test_hump_peaks_stop_only_once_the_window_centres_are_settled(monkeypatch):
    # the bisection stops early once every bracket lies in one rounding cell of the trapezoid lattice; the window
    # centres round(peak / step) must be those of all 44 halvings (checking never); a stop at the first check
    # whatever the brackets (after 17 or 21 halvings: the check deleted) moves some centres here
    from privcal.analysis import wbk_quadrature as Q

    l = np.arange(2, 259, 2, dtype=float)
    sigmas = np.geomspace(0.05, 300.0, 60)

    def centres():
        return [np.round(np.concatenate(Q.hump_peaks(l, s, 0.5 / s)) / Q.Z_STEP) for s in sigmas]

    early = centres()
    monkeypatch.setattr(Q, "_PEAK_CHECK_FROM", 10**6)
    full = centres()
    assert all(np.array_equal(a, b) for a, b in zip(early, full))
    for first in (16, 20):
        monkeypatch.setattr(Q, "_PEAK_CHECK_FROM", first)
        monkeypatch.setattr(np, "array_equal", lambda a, b: True)  # the check always passes: a fixed stop
        cut = centres()
        monkeypatch.undo()
        assert not all(np.array_equal(a, b) for a, b in zip(cut, full))


def test_wor_segments_kept_per_q_give_each_q_its_own_sum():
    # _log_a_wor_int keeps ln C(alpha, k) + k ln q per (orders, q): alternating q (a calibration's probes share
    # one q; another table row another) must give each q its own sum, the direct one:
    # ln(1 + sum_{k=2..alpha} C(alpha, k) q^k c_k) with ln c_k = -k / 3 (c_2 = 0.5)
    from scipy.special import gammaln, logsumexp

    from privcal.analysis import subsampling as S

    ints = (2, 3, 7, 20, 64)

    def direct(q):
        out = []
        for a in ints:
            k = np.arange(2, a + 1, dtype=float)
            c = np.where(k == 2, math.log(0.5), -k / 3)
            terms = gammaln(a + 1) - gammaln(k + 1) - gammaln(a - k + 1) + k * math.log(q) + c
            out.append(np.logaddexp(0.0, logsumexp(terms)))
        return np.array(out)

    for q in (0.01, 0.3, 0.01, 0.3):
        got = S.log_a_wor_int(ints, q, math.log(0.5), lambda j: -j / 3)
        np.testing.assert_allclose(got, direct(q), rtol=1e-13)


def test_exp_or_zero_is_numpy_exp_bit_for_bit():
    # the log-sum-exps skip e^x where it is 0 in float64 anyway (x <= -746); the values must be np.exp's, bit for
    # bit, through the subnormal range down to the last nonzero e^-745.13 = 2^-1075 (a threshold above it, e.g.
    # -745, zeroes e^-745.1 = 5e-324 and turns this red), and for -inf, nan and +inf
    from privcal.analysis import log_sums as LS

    x = np.concatenate([np.linspace(-800.0, -700.0, 20001), [-745.1332, -745.13, -745.1, -745.0, -744.44],
                        np.linspace(-5.0, 5.0, 101), [-np.inf, np.nan, np.inf, 0.0, -0.0, 700.0]])
    with np.errstate(over="ignore"):
        want = np.exp(x)
        got = LS.exp_or_zero(x.copy())
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert want[x == -745.1][0] > 0  # the subnormal tail is really there


def test_subsampling_hands_on_the_poisson_functions_at_their_old_path():
    # Poisson sampling lives in privcal.analysis.subsampling_poisson; the old path gives the same objects
    from privcal.analysis import subsampling, subsampling_poisson

    for name in ("rdp_poisson_gaussian", "rdp_poisson_gaussian_unchecked", "check_subsampled_gaussian"):
        assert getattr(subsampling, name) is getattr(subsampling_poisson, name), name
    assert "rdp_poisson_gaussian" in subsampling.__all__


@pytest.mark.parametrize("args, name", [
    (([1.0], 1.0, 0.1), "orders"),
    (([2.0], 0.0, 0.1), "noise_multiplier"),
    (([2.0], 1.0, 1.5), "sample_rate"),
])
def test_the_subsampled_gaussian_check_names_the_bad_argument(args, name):
    # one check serves the Poisson and the without-replacement functions: the same refusal from both
    from privcal.analysis.subsampling import rdp_without_replacement_gaussian
    from privcal.analysis.subsampling_poisson import check_subsampled_gaussian, rdp_poisson_gaussian

    messages = []
    for fn in (check_subsampled_gaussian, rdp_poisson_gaussian, rdp_without_replacement_gaussian):
        with pytest.raises(ValueError, match=name) as info:
            fn(*args)
        messages.append(str(info.value))
    assert len(set(messages)) == 1
