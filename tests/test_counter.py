"""Tests of privcal.counter: the binary mechanism, its error variance and its error bounds."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privcal.counter import (
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
    assert counter._exact.nbytes + counter._noisy.nbytes == 2 * 14 * 3000 * 8


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
