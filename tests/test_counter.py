"""Tests of privcal.analysis.counter: the binary mechanism, its error variance and its error bounds."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privcal.analysis.counter import (
    BinaryCounter,
    ExactCounter,
    error_bound,
    error_bound_paper,
    error_variance,
    laplace_scale,
    laplace_sum_sf,
    num_levels,
    popcount_histogram,
    psums_used,
    sup_error_failure_lower_bound,
)
from privcal.errors import InfeasibleError

# ---------------------------------------------------------------------------------------------
# known values
# ---------------------------------------------------------------------------------------------


def test_num_levels_known_values():
    # closed form floor(log2 T) + 1: T = 1 -> 1 level; 2, 3 -> 2; 1023 -> 10; 1024 = 2^10 -> 11
    assert [num_levels(t) for t in (1, 2, 3, 4, 1023, 1024)] == [1, 2, 2, 3, 10, 11]


def test_laplace_scale_known_value():
    # b = L / epsilon = 11 / 2 for T = 1024 (11 levels), epsilon = 2
    assert laplace_scale(1024, 2.0) == pytest.approx(5.5, rel=1e-15)


def test_psums_used_is_popcount():
    # binary expansions: 7 = 111b, 8 = 1000b, 10 = 1010b, 1023 = ten ones
    assert psums_used(7) == 3 and psums_used(8) == 1 and psums_used(10) == 2
    assert psums_used(1023) == 10
    np.testing.assert_array_equal(psums_used(np.arange(1, 9)), [1, 1, 2, 1, 2, 2, 3, 1])


def test_error_variance_closed_form():
    # round 7 uses 3 p-sums of Laplace(b), b = 4/0.5 = 8 for T = 8 (4 levels): 3 * 2 * 64 = 384
    assert error_variance(7, 8, 0.5) == pytest.approx(384.0, rel=1e-15)
    np.testing.assert_allclose(error_variance(np.array([1, 2, 3]), 8, 0.5), [128, 128, 256])


def test_error_bound_paper_known_value():
    # (4/eps) ln(1/beta) log2(T)^{5/2} with eps = 1, beta = 1/e, T = 1024: 4 * 1 * 10^{2.5}
    assert error_bound_paper(1024, 1.0, math.exp(-1)) == pytest.approx(4 * 10 ** 2.5, rel=1e-12)
    # natural-log reading: log(T) = ln(1024)
    assert error_bound_paper(1024, 1.0, math.exp(-1), log_base=math.e) == pytest.approx(
        4 * math.log(1024) ** 2.5, rel=1e-12)
    # the printed bound is 0 at T = 1 although the release is noisy (a failure of the formula)
    assert error_bound_paper(1, 1.0, 0.1) == 0.0


def test_laplace_sum_sf_closed_forms():
    # k = 1: P(Lap(b) > x) = exp(-x/b)/2
    assert laplace_sum_sf(3.0, 1, 2.0) == pytest.approx(0.5 * math.exp(-1.5), rel=1e-12)
    # k = 2, b = 1: density (1 + |y|) e^{-|y|}/4, tail (2 + x) e^{-x}/4 (integrate by parts)
    for x in (0.0, 0.7, 5.0, 30.0):
        assert laplace_sum_sf(x, 2, 1.0) == pytest.approx((2 + x) * math.exp(-x) / 4, rel=1e-12)


def test_laplace_sum_sf_matches_monte_carlo():
    # 200k draws, fixed seed: binomial sd <= 0.5/sqrt(2e5) = 1.1e-3, tolerance 6e-3 (> 5 sd)
    rng = np.random.default_rng(12345)
    sums = rng.laplace(0.0, 1.5, size=(200_000, 5)).sum(axis=1)
    for x in (0.5, 3.0, 7.0):
        assert laplace_sum_sf(x, 5, 1.5) == pytest.approx(np.mean(sums > x), abs=6e-3)


@given(st.integers(min_value=1, max_value=3000))
def test_popcount_histogram_matches_brute_force(steps):
    brute = np.bincount([bin(t).count("1") for t in range(1, steps + 1)],
                        minlength=num_levels(steps) + 1)
    np.testing.assert_array_equal(popcount_histogram(steps), brute)


def test_error_bound_exact_cases():
    # T = 1: a single Laplace(1/eps) release: P(|X| > E) = exp(-eps E) = beta -> E = ln(1/beta)/eps
    assert error_bound(1, 2.0, 0.05) == pytest.approx(math.log(20) / 2, rel=1e-9)
    # T = 2: rounds 1, 2 each release one Laplace(2/eps) p-sum: 2 exp(-E eps/2) = beta
    assert error_bound(2, 1.0, 0.05) == pytest.approx(2 * math.log(2 / 0.05), rel=1e-9)
    # K counters: the union divides beta by K
    assert error_bound(1, 1.0, 0.05, counters=10) == pytest.approx(math.log(200), rel=1e-9)


@given(st.integers(1, 10 ** 6), st.floats(0.05, 20), st.floats(1e-6, 0.5))
def test_error_bound_monotone(steps, epsilon, beta):
    e = error_bound(steps, epsilon, beta)
    assert e > 0
    assert error_bound(steps, epsilon, beta / 2) >= e  # smaller failure probability
    assert error_bound(steps, 2 * epsilon, beta) <= e  # more privacy budget, less noise


# ---------------------------------------------------------------------------------------------
# the mechanism
# ---------------------------------------------------------------------------------------------

@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=70), st.integers(0, 2 ** 32 - 1))
def test_bookkeeping_reproduces_prefix_sums_without_noise(stream, seed):
    # epsilon = 1e12 makes the Laplace scale ~1e-11: releases equal the prefix sums up to 1e-6,
    # so the p-sum bookkeeping (carry of lower levels, choice of set bits) is exact
    counter = BinaryCounter(len(stream), 1e12, shape=(2,), seed=seed)
    for t, x in enumerate(stream, start=1):
        release = counter.update([x, 1.0 - x])
        assert counter.t == t
        np.testing.assert_allclose(release, [sum(stream[:t]), t - sum(stream[:t])], atol=1e-6)


@given(st.integers(1, 40), st.integers(0, 2 ** 32 - 1))
def test_same_seed_same_releases(steps, seed):
    stream = np.random.default_rng(seed).random((steps, 3))
    a = BinaryCounter(steps, 1.0, (3,), seed=seed)
    b = BinaryCounter(steps, 1.0, (3,), seed=seed)
    for x in stream:
        np.testing.assert_array_equal(a.update(x), b.update(x))


def test_different_seeds_differ():
    a = BinaryCounter(4, 1.0, (3,), seed=1).update(np.zeros(3))
    b = BinaryCounter(4, 1.0, (3,), seed=2).update(np.zeros(3))
    assert not np.array_equal(a, b)


def test_memory_is_two_floats_per_level_and_counter():
    counter = BinaryCounter(10 ** 4, 1.0, (10, 3, 10, 10), seed=0)
    # 14 levels (2^13 <= 10^4 < 2^14), 3000 counters, exact and noisy p-sums, float64
    assert counter.levels == 14 and counter.counters == 3000
    assert counter.nbytes == 2 * 14 * 3000 * 8


def test_error_mean_variance_and_covariance_match_closed_form():
    # 40 000 independent counters, T = 8, eps = 1: b = 4. For each round t the error is a sum of
    # popcount(t) Laplace(4) draws: mean 0, variance popcount(t) * 32. Checks at 5 sd per
    # statistic (sd of a sample variance: sigma^2 sqrt(2/n + kappa/n), kappa = 3/k the excess
    # kurtosis), 16 + 1 checks: false alarm probability < 1e-5 by the union bound.
    n, steps = 40_000, 8
    rng = np.random.default_rng(7)
    counter = BinaryCounter(steps, 1.0, (n,), seed=11)
    exact = np.zeros(n)
    errors = []
    for t in range(1, steps + 1):
        x = rng.random(n)
        exact += x
        errors.append(counter.update(x) - exact)
        k = psums_used(t)
        var = error_variance(t, steps, 1.0)
        err = errors[-1]
        assert abs(err.mean()) < 5 * math.sqrt(var / n)
        assert abs(err.var(ddof=1) - var) < 5 * var * math.sqrt(2 / n + 3 / (k * n))
    # rounds 2 (10b) and 3 (11b) share the level-1 p-sum [1, 2]: covariance 2 b^2 = 32
    cov = np.mean(errors[1] * errors[2])
    sd_cov = math.sqrt(np.var(errors[1] * errors[2]) / n)
    assert abs(cov - 32.0) < 5 * sd_cov
    # rounds 1 (1b) and 2 (10b) share none: covariance 0
    assert abs(np.mean(errors[0] * errors[1])) < 5 * math.sqrt(np.var(errors[0] * errors[1]) / n)


def test_releases_are_not_monotone():
    # VBKW App. A.3 says PC "produces a monotonically increasing count": the binary mechanism
    # does not (counterexample: an all-zero stream, whose releases are pure noise)
    counter = BinaryCounter(16, 1.0, seed=0)
    releases = [float(counter.update(0.0)) for _ in range(16)]
    assert any(b < a for a, b in zip(releases, releases[1:]))


def test_variance_property_tracks_round():
    counter = BinaryCounter(8, 0.5, seed=0)
    assert counter.variance == 0.0
    for t in range(1, 8):
        counter.update(1.0)
        assert counter.variance == pytest.approx(error_variance(t, 8, 0.5))


def test_exact_counter():
    counter = ExactCounter(5, (2,))
    for t in range(1, 6):
        release = counter.update([1.0, 0.5])
    np.testing.assert_array_equal(release, [5.0, 2.5])
    assert counter.estimate.tolist() == [5.0, 2.5]


def test_clip_only_on_request():
    counter = BinaryCounter(3, 1e12, (2,), seed=0, clip=True)
    np.testing.assert_allclose(counter.update([1.7, -0.3]), [1.0, 0.0], atol=1e-6)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    ({"steps": 0, "epsilon": 1.0}, "steps"),
    ({"steps": 2.5, "epsilon": 1.0}, "steps"),
    ({"steps": 5, "epsilon": 0.0}, "epsilon"),
    ({"steps": 5, "epsilon": -1.0}, "epsilon"),
    ({"steps": 5, "epsilon": float("nan")}, "epsilon"),
    ({"steps": 5, "epsilon": 1.0, "shape": (2, -1)}, "shape"),
])
def test_bad_construction(kwargs, name):
    with pytest.raises(ValueError, match=name):
        BinaryCounter(**kwargs)


@pytest.mark.parametrize("value", [1.5, -0.1, float("nan"), float("inf")])
def test_stream_values_outside_unit_interval(value):
    counter = BinaryCounter(5, 1.0, (2,), seed=0)
    with pytest.raises(ValueError, match="values"):
        counter.update([0.5, value])
    assert counter.t == 0  # a rejected value does not consume a round


def test_wrong_shape_and_too_many_rounds():
    counter = BinaryCounter(2, 1.0, (2,), seed=0)
    with pytest.raises(ValueError, match="values"):
        counter.update([0.1, 0.2, 0.3])
    counter.update(0.0)
    counter.update(0.0)
    with pytest.raises(InfeasibleError, match="steps=2"):
        counter.update(0.0)


@pytest.mark.parametrize("failure_probability", [0.0, 1.0, -0.5, 2.0])
def test_bad_failure_probability(failure_probability):
    with pytest.raises(ValueError, match="failure_probability"):
        error_bound_paper(10, 1.0, failure_probability)
    with pytest.raises(ValueError, match="failure_probability"):
        error_bound(10, 1.0, failure_probability)


def test_old_beta_keyword_is_deprecated_but_same():
    # beta= was the failure probability's old name; it still works, with a DeprecationWarning
    with pytest.warns(DeprecationWarning, match="failure_probability"):
        old = error_bound(16, 1.0, beta=0.05, counters=3)
    assert old == error_bound(16, 1.0, failure_probability=0.05, counters=3)
    with pytest.warns(DeprecationWarning):
        assert error_bound_paper(16, 1.0, beta=0.05) == error_bound_paper(16, 1.0, 0.05)
    with pytest.raises(TypeError, match="beta"):
        error_bound(16, 1.0, failure_probability=0.05, beta=0.05)


def test_sup_error_failure_lower_bound_closed_form():
    # T = 2 (L = 2 levels, b = 2/eps = 2), bound = 2 ln 2: each of rounds 1, 2 fails w.p.
    # e^{-bound/b} = 1/2, so the bound is 1 - (1 - 1/2)^2 = 3/4; with 3 counters 1 - 2^-6
    assert sup_error_failure_lower_bound(2 * math.log(2), 2, 1.0) == pytest.approx(0.75, rel=1e-12)
    assert sup_error_failure_lower_bound(2 * math.log(2), 2, 1.0, counters=3) == pytest.approx(
        1 - 2.0 ** -6, rel=1e-12)
    assert sup_error_failure_lower_bound(0.0, 5, 1.0) == 1.0
    with pytest.raises(ValueError, match="bound"):
        sup_error_failure_lower_bound(-1.0, 5, 1.0)


def test_valid_bound_is_above_the_failure_lower_bound():
    # a valid bound can never be below the rigorous failure lower bound's crossing of its level
    for steps in (1, 2, 7, 64, 1000):
        e = error_bound(steps, 1.0, 0.05)
        assert sup_error_failure_lower_bound(e, steps, 1.0) <= 0.05 * (1 + 1e-9)


def test_bad_bound_arguments():
    with pytest.raises(ValueError, match="steps"):
        error_bound_paper(0, 1.0, 0.1)
    with pytest.raises(ValueError, match="epsilon"):
        error_bound(10, 0.0, 0.1)
    with pytest.raises(ValueError, match="counters"):
        error_bound(10, 1.0, 0.1, counters=0)
    with pytest.raises(ValueError, match="log_base"):
        error_bound_paper(10, 1.0, 0.1, log_base=1.0)
    with pytest.raises(ValueError, match="t must"):
        psums_used(0)
    with pytest.raises(ValueError, match="t must"):
        error_variance(9, 8, 1.0)
    with pytest.raises(ValueError, match="count"):
        laplace_sum_sf(1.0, 0, 1.0)
    with pytest.raises(ValueError, match="x must"):
        laplace_sum_sf(-1.0, 1, 1.0)


# ---------------------------------------------------------------------------------------------
# Gaussian binary-mechanism counters
# ---------------------------------------------------------------------------------------------

import itertools  # noqa: E402

from scipy.optimize import brentq  # noqa: E402
from scipy.stats import norm  # noqa: E402

import privcal  # noqa: E402
from privcal._stats import clopper_pearson_lower  # noqa: E402
from privcal.analysis.counter import (  # noqa: E402
    GaussianBinaryCounter,
    gaussian_error_bound,
    gaussian_psum_sensitivity,
    gaussian_sigma,
    gaussian_sup_error_failure_lower_bound,
)
from privcal.analysis.gaussian import delta_exact  # noqa: E402


def _psum_matrix(steps):
    """Rows: the completed dyadic p-sums (t - 2^j, t] with 2^j | t <= T; built independently of
    privcal.analysis.counter from the definition (CSS11 Alg. 2)."""
    rows = []
    j = 0
    while 2 ** j <= steps:
        for end in range(2 ** j, steps + 1, 2 ** j):
            row = np.zeros(steps)
            row[end - 2 ** j:end] = 1.0
            rows.append(row)
        j += 1
    return np.array(rows)


def _max_l2_one_stream(steps, changes):
    """max ||P d||_2 over input changes d in [-1, 1]^T with at most ``changes`` non-zeros: a convex
    function of d on a box, so its maximum is at a vertex, d in {-1, 0, 1}^T (brute force)."""
    p = _psum_matrix(steps)
    best = 0.0
    for support in itertools.combinations(range(steps), changes):
        for signs in itertools.product((-1.0, 1.0), repeat=changes):
            d = np.zeros(steps)
            d[list(support)] = signs
            best = max(best, float(np.linalg.norm(p @ d)))
    return best


@pytest.mark.parametrize("steps", range(1, 10))
def test_gaussian_sensitivity_one_change_is_exact_by_brute_force(steps):
    # one changed input of one stream: the largest l2 move of the p-sum vector is sqrt(L), exactly
    assert _max_l2_one_stream(steps, 1) == pytest.approx(gaussian_psum_sensitivity(steps), rel=1e-12)
    assert gaussian_psum_sensitivity(steps) == pytest.approx(math.sqrt(num_levels(steps)), rel=1e-15)


@pytest.mark.parametrize("steps", range(1, 8))
def test_gaussian_sensitivity_several_streams_by_brute_force(steps):
    # two streams, one change each: the p-sum vectors are stacked, so the moves' squares add: sqrt(2L)
    p = _psum_matrix(steps)
    best = 0.0
    for t1, t2 in itertools.product(range(steps), repeat=2):
        d1, d2 = np.zeros(steps), np.zeros(steps)
        d1[t1], d2[t2] = 1.0, -1.0
        best = max(best, math.hypot(np.linalg.norm(p @ d1), np.linalg.norm(p @ d2)))
    assert best == pytest.approx(gaussian_psum_sensitivity(steps, streams=2), rel=1e-12)


@pytest.mark.parametrize("steps, changes", [(2, 2), (4, 2), (5, 2), (6, 3), (8, 2), (8, 4)])
def test_gaussian_sensitivity_several_changes_of_one_stream(steps, changes):
    # k changes of one stream: the bound k sqrt(L) holds, and summing squares (sqrt(k L)) would be
    # optimistic: T = 2, inputs 1 and 2 both +1 move the p-sums by (1, 1, 2), squared norm 6 > 2 L = 4
    brute = _max_l2_one_stream(steps, changes)
    assert brute <= gaussian_psum_sensitivity(steps, changes_per_stream=changes) * (1 + 1e-12)
    assert brute > math.sqrt(changes * num_levels(steps))


@given(steps=st.integers(1, 10 ** 6), epsilon=st.floats(0.05, 50.0), delta=st.floats(1e-12, 0.5),
       streams=st.integers(1, 200))
def test_gaussian_sigma_round_trip(steps, epsilon, delta, streams):
    sens = gaussian_psum_sensitivity(steps, streams=streams)
    sigma = gaussian_sigma(steps, epsilon, delta, streams=streams)
    # the exact profile (Balle & Wang 2018, Thm 8) at the returned sigma meets the target ...
    assert delta_exact(epsilon, sens / sigma) <= delta
    # ... and sigma is the smallest such (a sigma 1e-6 smaller misses it): no classic-form slack
    assert delta_exact(epsilon, sens / (sigma * (1 - 1e-6))) > delta


def test_gaussian_sigma_agrees_with_the_front_door():
    # the same sigma through privcal.calibrate (exact accountant, one step) and back through
    # privcal.epsilon: an independent path through the accountants
    steps, eps, delta, streams = 2000, 1.0, 1e-5, 18
    sens = gaussian_psum_sensitivity(steps, streams=streams)  # sqrt(18 * 11)
    assert sens == pytest.approx(math.sqrt(198), rel=1e-15)
    sigma = gaussian_sigma(steps, eps, delta, streams=streams)
    assert sigma == pytest.approx(privcal.calibrate(eps, delta, sensitivity=sens, steps=1, accountant="exact"),
                                  rel=1e-8)
    assert privcal.epsilon(sigma, delta, sensitivity=sens, steps=1, accountant="exact") <= eps * (1 + 1e-9)
    # the classic form sqrt(2 ln(1.25/delta)) sens/eps is larger (looser) here
    assert sigma < math.sqrt(2 * math.log(1.25 / delta)) * sens / eps


def test_gaussian_error_bound_exact_cases():
    # T = 1, one counter: one N(0, sigma^2) draw, so E is the two-sided quantile sigma z_{1 - beta/2}
    assert gaussian_error_bound(1, 1.0, 0.05) == pytest.approx(norm.ppf(0.975), rel=1e-10)
    assert gaussian_error_bound(1, 3.0, 0.05) == pytest.approx(3 * norm.ppf(0.975), rel=1e-10)
    # two counters at T = 1: the union bound gives 2 * 2 Phi(-E) = beta
    assert gaussian_error_bound(1, 1.0, 0.05, counters=2) == pytest.approx(norm.ppf(1 - 0.05 / 4), rel=1e-10)
    # T = 3: rounds 1, 2 use one p-sum and round 3 two, so 3 counters * (2 * 2 Phi(-E) + 2 Phi(-E/sqrt 2))
    # = beta, solved here with scipy (pins the weights N_k, the variance k sigma^2 and the factor 2)
    ref = brentq(lambda e: 3 * (4 * norm.sf(e) + 2 * norm.sf(e / math.sqrt(2))) - 0.1, 0.1, 20, xtol=1e-14)
    assert gaussian_error_bound(3, 1.0, 0.1, counters=3) == pytest.approx(ref, rel=1e-9)


@given(steps=st.integers(1, 5000), sigma=st.floats(0.01, 100.0), beta=st.floats(1e-6, 0.9),
       counters=st.integers(1, 1000))
def test_gaussian_error_bound_monotone(steps, sigma, beta, counters):
    e = gaussian_error_bound(steps, sigma, beta, counters=counters)
    assert gaussian_error_bound(steps + 1, sigma, beta, counters=counters) >= e * (1 - 1e-9)
    assert gaussian_error_bound(steps, sigma, beta, counters=counters + 1) >= e
    assert gaussian_error_bound(steps, sigma, beta / 2, counters=counters) >= e
    # linear in sigma (the tails depend on E / sigma only)
    assert gaussian_error_bound(steps, 2 * sigma, beta, counters=counters) == pytest.approx(2 * e, rel=1e-9)
    # valid: the rigorous lower bound on the failure probability at E stays below beta (equal at
    # T = 1 and one counter, where both are exact: round-off only)
    assert gaussian_sup_error_failure_lower_bound(e, steps, sigma, counters) <= beta * (1 + 1e-12)


def test_gaussian_error_bound_holds_and_is_tight_by_monte_carlo():
    # 20000 independent counters (seed 1), T = 64, sigma = 1, beta = 0.1; fed zeros, so the release is
    # the error. One-sided Clopper-Pearson bounds at level 0.999:
    #  * valid: the lower bound on P(sup_t |error_t| > E) is <= beta (measured 0.068 at E);
    #  * tight: the lower bound on P(sup_t |error_t| > E / 1.1) is > beta (measured 0.137): E is loose
    #    by less than a factor 1.1 (it is within about 5% of the Monte Carlo 0.9 quantile).
    steps, trials, beta = 64, 20000, 0.1
    counter = GaussianBinaryCounter(steps, 1.0, (trials,), seed=1)
    sup = np.zeros(trials)
    for _ in range(steps):
        sup = np.maximum(sup, np.abs(counter.update(0.0)))
    bound = gaussian_error_bound(steps, 1.0, beta)
    assert clopper_pearson_lower(int(np.sum(sup > bound)), trials, 1e-3) <= beta
    assert clopper_pearson_lower(int(np.sum(sup > bound / 1.1)), trials, 1e-3) > beta


def test_gaussian_counter_error_variance_and_bookkeeping():
    # tiny sigma: the releases are the prefix sums; variance property popcount(t) sigma^2
    c = GaussianBinaryCounter(8, 1e-12, seed=0)
    stream = [0.5, 1.0, 0.0, 0.25, 1.0]
    for t, x in enumerate(stream, start=1):
        assert c.update(x) == pytest.approx(sum(stream[:t]), abs=1e-9)
    assert c.variance == pytest.approx(2 * 1e-24)  # t = 5 = 101b uses 2 p-sums
    # errors: mean 0, variance popcount(t) sigma^2 (closed form), 40000 counters, seed 2
    c = GaussianBinaryCounter(7, 2.0, (40000,), seed=2)
    errs = np.array([c.update(0.0) for _ in range(7)])
    var = errs.var(axis=1)
    expected = 4.0 * np.array([1, 1, 2, 1, 2, 2, 3])
    # sample variance of 40000 normals: relative sd sqrt(2/40000) = 0.7%, so 5% is > 7 sd
    np.testing.assert_allclose(var, expected, rtol=0.05)
    assert np.all(np.abs(errs.mean(axis=1)) < 5 * np.sqrt(expected / 40000))
    a = GaussianBinaryCounter(16, 1.0, (3,), seed=5)
    b = GaussianBinaryCounter(16, 1.0, (3,), seed=5)
    assert np.array_equal(a.update([0, 1, 0.5]), b.update([0, 1, 0.5]))


@pytest.mark.parametrize("call, name", [
    (lambda: GaussianBinaryCounter(8, 0.0), "sigma"),
    (lambda: GaussianBinaryCounter(0, 1.0), "steps"),
    (lambda: gaussian_sigma(8, 1.0, 1.0), "delta"),
    (lambda: gaussian_sigma(8, -1.0, 1e-5), "epsilon"),
    (lambda: gaussian_sigma(8, 1.0, 1e-5, streams=0), "streams"),
    (lambda: gaussian_psum_sensitivity(8, changes_per_stream=0), "changes_per_stream"),
    (lambda: gaussian_error_bound(8, 1.0, 0.0), "failure_probability"),
    (lambda: gaussian_error_bound(8, -1.0, 0.1), "sigma"),
    (lambda: gaussian_error_bound(8, 1.0, 0.1, counters=0), "counters"),
    (lambda: gaussian_sup_error_failure_lower_bound(-1.0, 8, 1.0), "bound"),
])
def test_gaussian_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("cls,scale", [(BinaryCounter, 0.7), (GaussianBinaryCounter, 1.3)])
def test_unchecked_constructor_is_the_checked_one(cls, scale):
    # the trusted constructor (callers that validated, e.g. PUCB) builds the same counter: same attributes,
    # same noise draws from the same seed, round after round (independent: the checked constructor itself)
    checked, trusted = cls(13, scale, (2, 3), seed=5, clip=True), cls.unchecked(13, scale, (2, 3), seed=5, clip=True)
    assert (trusted.steps, trusted.shape, trusted.clip, trusted.levels, trusted.t) == (13, (2, 3), True, 4, 0)
    for t in range(13):
        values = (t % 3) / 2.0
        np.testing.assert_array_equal(trusted.update(values), checked.update(values))
    assert trusted.variance == checked.variance
    with pytest.raises(InfeasibleError):
        trusted.update(0.0)


def test_gaussian_unchecked_kernels_are_the_checked_ones():
    # the Gaussian counters of PUCB call these after validating: the same numbers as the
    # checked public functions (independent: those functions themselves)
    from privcal.analysis import counter, gaussian

    t, eps, delta, streams = 50, 1.0, 1e-5, 18
    sigma = counter.gaussian_sigma(t, eps, delta, streams=streams)
    assert counter.gaussian_sigma_unchecked(t, eps, delta, streams=streams) == sigma
    sens = counter.gaussian_psum_sensitivity(t, streams=streams)
    assert counter.gaussian_psum_sensitivity_unchecked(t, streams=streams) == sens == math.sqrt(18 * 6)  # L = 6
    assert gaussian.epsilon_exact_unchecked(delta, sens / sigma) == gaussian.epsilon_exact(delta, sens / sigma) <= eps
    assert gaussian.sigma_exact_unchecked(eps, delta, sensitivity=sens) == gaussian.sigma_exact(eps, delta, sensitivity=sens)
    assert gaussian.delta_exact_unchecked(eps, sens / sigma) == gaussian.delta_exact(eps, sens / sigma) <= delta
    assert counter.gaussian_error_bound_unchecked(t, sigma, 0.1, counters=7) == \
        counter.gaussian_error_bound(t, sigma, 0.1, counters=7)


def test_pucb_counter_epsilon_underflow_still_refused():
    # PUCB builds its counters unchecked; an epsilon whose epsilon/(6H) underflows to 0 is still refused with the
    # ValueError the checked counter gave (not a ZeroDivisionError)
    from privcal.rl.pucb.agent import PUCB

    with pytest.raises(ValueError, match=r"^epsilon must be in \(0, inf\), got 0\.0$"):
        PUCB(2, 2, 3, 10, epsilon=1e-323)


def test_counter_bounds_hands_on_the_tree_and_the_gaussian_bounds_at_their_old_path():
    # the tree geometry and the Gaussian-noise bounds live in their own modules; the old import path
    # privcal.analysis.counter_bounds gives the same objects, listed in its __all__
    from privcal.analysis import counter_bounds, counter_gaussian_bounds, counter_tree

    for home in (counter_tree, counter_gaussian_bounds):
        for name in home.__all__:
            assert name in counter_bounds.__all__ and getattr(counter_bounds, name) is getattr(home, name), name


@pytest.mark.parametrize("steps", [1, 2, 7, 8, 1000])
def test_popcount_histogram_unchecked_is_the_checked_histogram(steps):
    # the trusted kernel skips validation only: brute-force popcounts of 1..T as the reference
    from privcal.analysis.counter_tree import popcount_histogram_unchecked

    brute = np.bincount([bin(t).count("1") for t in range(1, steps + 1)], minlength=num_levels(steps) + 1)
    np.testing.assert_array_equal(popcount_histogram_unchecked(steps), brute)
    with pytest.raises(ValueError, match="steps"):
        popcount_histogram(0)
