"""Tests for privcal.verify.audit: the empirical auditor catches under-noised mechanisms and stays quiet
on correctly calibrated ones, and its lower bounds are valid.

Known values come from the exact Gaussian profile (Balle & Wang 2018; privcal.analysis.gaussian) and closed forms of
the Clopper-Pearson bounds. All audits use fixed seeds (the outcome of each test is deterministic); each
audit's bound holds with probability >= its stated confidence.
"""

import math
import warnings

import numpy as np
import pytest

import privcal
from privcal.analysis import composition as C
from privcal.analysis import gaussian as G
from privcal.analysis import rkhs
from privcal.analysis.rdp import DEFAULT_ORDERS, epsilon_from_rdp
from privcal.analysis.subsampling import rdp_poisson_gaussian
from privcal.verify.audit import (
    GaussianMechanism,
    GaussianProcessMechanism,
    SubsampledGaussianMechanism,
    audit,
    clopper_pearson_lower,
    clopper_pearson_upper,
)


def test_clopper_pearson_closed_forms():
    # k = 0: upper = 1 - alpha^(1/n); k = n: lower = alpha^(1/n) (Beta(1, n) and Beta(n, 1) quantiles)
    assert clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-10)
    assert clopper_pearson_lower(100, 100, 0.05) == pytest.approx(0.05 ** (1 / 100), rel=1e-10)
    assert clopper_pearson_lower(0, 100, 0.05) == 0.0 and clopper_pearson_upper(100, 100, 0.05) == 1.0
    lo, hi = clopper_pearson_lower(30, 100, 0.025), clopper_pearson_upper(30, 100, 0.025)
    assert lo < 0.3 < hi and hi - lo < 0.2


# ---------------------------------------------------------------------------------------------------
# Gaussian: half the noise is caught, the exact calibration is not


def test_catches_gaussian_with_half_the_noise():
    sigma = G.sigma_exact(1.0, 1e-5)
    exact = G.delta_exact(1.0, 2.0 / sigma)  # 0.0104 (closed form, Balle & Wang)
    res = audit(GaussianMechanism(sigma / 2), 1.0, claimed_delta=1e-5, samples=200_000, seed=1)
    assert res.refuted
    assert 1e-3 < res.delta_lower <= exact
    assert res.epsilon_lower > 1.0  # the claimed epsilon at 1e-5 is refuted too


def test_refuted_compares_the_lower_bound_with_the_claim():
    # "refuted" only when the statistical LOWER bound exceeds the claimed delta. A claim between
    # the lower bound and the true delta (false, but not proven false by these samples) is not refuted; the same
    # samples refute a claim just below the lower bound, and the epsilon side agrees
    sigma = G.sigma_exact(1.0, 1e-5)
    exact = G.delta_exact(1.0, 2.0 / sigma)  # 0.0104 (closed form, Balle & Wang)
    low = audit(GaussianMechanism(sigma / 2), 1.0, samples=50_000, seed=2).delta_lower
    assert 0 < low < exact
    between = audit(GaussianMechanism(sigma / 2), 1.0, claimed_delta=(low + exact) / 2, samples=50_000, seed=2)
    below = audit(GaussianMechanism(sigma / 2), 1.0, claimed_delta=0.99 * low, samples=50_000, seed=2)
    assert between.delta_lower == below.delta_lower == low
    assert not between.refuted and between.epsilon_lower <= 1.0
    assert below.refuted and below.epsilon_lower > 1.0


def test_quiet_on_exactly_calibrated_gaussian():
    sigma = G.sigma_exact(1.0, 1e-5)
    res = audit(GaussianMechanism(sigma), 1.0, claimed_delta=1e-5, samples=200_000, seed=1)
    assert not res.refuted
    assert res.delta_lower <= 1e-5
    # and the bound is valid for every epsilon (same confidence event): below the exact profile
    for eps in (0.0, 0.1, 0.3, 0.6):
        assert res.delta_lower_at(eps) <= G.delta_exact(eps, 1.0 / sigma)
    assert res.epsilon_lower_at(1e-3) <= G.epsilon_exact(1e-3, 1.0 / sigma)


def test_composed_gaussian_bound_is_close_to_exact_when_delta_is_large():
    # 10 releases at sigma = 2: mu = sqrt(10)/2 = 1.58; delta(0.5) = 0.4611 (exact profile); 100k samples resolve it
    mech = GaussianMechanism(2.0, steps=10)
    exact = C.delta_composed_exact(0.5, 2.0, steps=10)
    res = audit(mech, 0.5, samples=100_000, seed=3)
    assert exact - 0.02 < res.delta_lower <= exact


@pytest.mark.parametrize("accountant", ["exact", "kov", "rdp", "paper"])
def test_quiet_on_every_accountants_calibration(accountant):
    # sigma from privcal.calibrate for (1, 1e-3) after 10 releases, each accountant's own (valid) bound
    sigma = privcal.calibrate(1.0, 1e-3, steps=10, accountant=accountant)
    res = audit(GaussianMechanism(sigma, steps=10), 1.0, claimed_delta=1e-3, samples=50_000, seed=6)
    assert not res.refuted
    assert res.delta_lower <= C.delta_composed_exact(1.0, sigma, steps=10)


def test_catches_the_thm5_statement_form_on_a_plain_gaussian():
    # Wang & Hegde Thm 5 statement: C = D^2 outside the root; with D = 0.3 the sigma is 0.3x the proof form
    d = 0.3
    sigma = C.thm5_sigma_statement_paper(1.0, 1e-3, steps=10, c=d * d)
    exact = C.delta_composed_exact(1.0, sigma, steps=10, sensitivity=d)  # 0.0921 (exact profile), claimed 1e-3
    res = audit(GaussianMechanism(sigma, sensitivity=d, steps=10), 1.0, claimed_delta=1e-3, samples=50_000, seed=7)
    assert res.refuted and 0.05 < res.delta_lower <= exact


def test_validity_over_repeated_audits():
    # 30 independent small audits of a known Gaussian (sigma = 1): the 95% bound may exceed the exact delta in
    # at most 5% of runs in expectation (fewer: Bonferroni is conservative); P(Bin(30, 0.05) >= 5) = 0.016.
    exact = G.delta_exact(0.5, 1.0)
    above = sum(audit(GaussianMechanism(1.0), 0.5, samples=3000, seed=100 + i).delta_lower > exact for i in range(30))
    assert above < 5


# ---------------------------------------------------------------------------------------------------
# the GP mechanism at App. E.3 of Wang & Hegde 2019 (78 releases observed at 4 points)


def _e3_mechanism(sigma):
    v = rkhs.v_parameter(3e-4, 23, 64)
    c = (v * v + v) * 16.0  # the paper's C(alpha, k, L, B) = D^2
    beta = 1 / v
    pts = (0.3, 0.3002, 0.5, 0.7)
    shift = tuple(math.sqrt(c) * math.exp(-beta * abs(x - 0.3)) for x in pts)
    return GaussianProcessMechanism(shift, pts, beta, sigma, steps=78), math.sqrt(c)


def test_gp_mechanism_mu_is_the_rkhs_norm_at_the_centre():
    # f = D K(., x0) observed at x0 (and elsewhere): f^T K^-1 f = D^2 = ||f||_H^2 (reproducing property)
    mech, d = _e3_mechanism(0.5)
    assert mech.mu() == pytest.approx(math.sqrt(78) * d / 0.5, rel=1e-9)


def test_catches_the_papers_sigma_0313_and_not_the_exact_sigma():
    # App. E.3's statement-form sigma = 0.313 at (0.9, 5e-5): exact delta(0.9) = 0.652 for the observed mechanism
    mech, d = _e3_mechanism(0.3132)
    res = audit(mech, 0.9, claimed_delta=5e-5, samples=10_000, seed=2)
    assert res.refuted and 0.55 < res.delta_lower <= G.delta_exact(0.9, mech.mu())
    good, _ = _e3_mechanism(C.sigma_composed_exact(0.9, 5e-5, steps=78, sensitivity=d))
    res = audit(good, 0.9, claimed_delta=5e-5, samples=10_000, seed=2)
    assert not res.refuted and res.delta_lower <= 5e-5


def test_learned_statistic_for_a_plain_sampler():
    # no statistic given: a linear discriminant is learned on the calibration split (3-dim Gaussian, shift 1 in
    # every coordinate, sigma = 1: mu = sqrt(3); delta(1) = 0.2251 exact)
    def sampler(neighbour, size, rng):
        return neighbour + rng.standard_normal((size, 3))

    res = audit(sampler, 1.0, claimed_delta=1e-3, samples=40_000, seed=4)
    assert res.refuted and 0.15 < res.delta_lower <= G.delta_exact(1.0, math.sqrt(3))


# ---------------------------------------------------------------------------------------------------
# subsampled Gaussian (GPOPE's setting): the RDP accountant is not refuted, sensitivity h instead of 2h is


def _rdp_claim(noise_multiplier, q, steps, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = steps * rdp_poisson_gaussian(DEFAULT_ORDERS, noise_multiplier, q)
        return epsilon_from_rdp(DEFAULT_ORDERS, curve, delta)[0]


def test_subsampled_gaussian_rdp_claim_is_not_refuted():
    eps = _rdp_claim(0.5, 0.1, 10, 1e-3)
    res = audit(SubsampledGaussianMechanism(0.5, 0.1, 10), eps, claimed_delta=1e-3, samples=100_000, seed=5)
    assert not res.refuted
    assert res.epsilon_lower < eps  # and the empirical epsilon is well inside the accountant's


def test_subsampled_gaussian_with_half_the_sensitivity_is_refuted():
    # the claim computed for shift h (noise multiplier 1) but the pair has shift 2h (multiplier 1/2), as for GPOPE
    eps = _rdp_claim(1.0, 0.1, 10, 1e-3)
    res = audit(SubsampledGaussianMechanism(0.5, 0.1, 10), eps, claimed_delta=1e-3, samples=100_000, seed=5)
    assert res.refuted and res.epsilon_lower > eps


def test_subsampled_statistic_is_the_log_likelihood_ratio():
    mech = SubsampledGaussianMechanism(0.7, 0.2, 1)
    x = np.array([[-1.0], [0.3], [2.0]])
    ratio = 0.8 + 0.2 * np.exp((2 * x[:, 0] - 1) / (2 * 0.49))  # (1-q) + q N(1, s^2)/N(0, s^2), closed form
    np.testing.assert_allclose(mech.statistic(x), np.log(ratio), rtol=1e-12)


# ---------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(epsilon=-1.0), "epsilon"),
        (dict(samples=0), "samples"),
        (dict(confidence=1.5), "confidence"),
        (dict(claimed_delta=2.0), "claimed_delta"),
        (dict(thresholds=0), "thresholds"),
    ],
)
def test_bad_input_names_the_argument(kwargs, name):
    args = dict(epsilon=1.0, samples=100) | kwargs
    with pytest.raises(ValueError, match=name):
        audit(GaussianMechanism(1.0), args.pop("epsilon"), **args)


def test_bad_mechanisms():
    with pytest.raises(ValueError, match="mechanism"):
        audit(42, 1.0)
    with pytest.raises(ValueError, match="outputs"):
        audit(lambda nb, size, rng: np.zeros((size + 1, 1)), 1.0, samples=10, calibration_samples=10,
              statistic=lambda x: x[:, 0])
    with pytest.raises(ValueError, match="sigma"):
        GaussianMechanism(0.0)
    with pytest.raises(ValueError, match="sample_rate"):
        SubsampledGaussianMechanism(1.0, 0.0)
    with pytest.raises(ValueError, match="points"):
        GaussianProcessMechanism((1.0, 2.0), (0.5, 0.2), 1.0, 1.0)
    with pytest.raises(ValueError, match="neighbour"):
        GaussianMechanism(1.0).sample(2, 3, np.random.default_rng(0))


def test_sample_validates_its_arguments_and_audit_validates_once(monkeypatch):
    # the public sample() checks neighbour and size; audit() validates its own arguments once and then draws
    # through the mechanisms' kernels (no validation per chunk or per neighbour)
    mech = GaussianMechanism(1.0, steps=3)
    assert mech.sample(1, 4, np.random.default_rng(0)).shape == (4, 3)
    with pytest.raises(ValueError, match="size"):
        mech.sample(0, -1, np.random.default_rng(0))
    from privcal import _validate as V

    calls = []
    for name in ("positive", "nonnegative", "probability", "open_unit", "positive_int", "rate"):
        real = getattr(V, name)
        monkeypatch.setattr(V, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    audit(mech, 1.0, claimed_delta=1e-3, samples=2000, seed=0)
    # epsilon, claimed_delta, samples, calibration_samples, confidence, thresholds
    assert sorted(calls) == sorted(["nonnegative", "probability", "positive_int", "positive_int", "open_unit",
                                    "positive_int"])


def test_audit_settings_object_and_keywords_give_the_same_seeded_result():
    from privcal.verify.audit import AuditSettings

    mech = GaussianMechanism(1.0)
    settings = AuditSettings(claimed_delta=1e-3, samples=2_000, seed=4)
    # one seeded audit, its fields given either way: bit-identical results
    assert audit(mech, 1.0, settings) == audit(mech, 1.0, claimed_delta=1e-3, samples=2_000, seed=4)
    # a keyword replaces the settings' field: another seed, other samples
    assert audit(mech, 1.0, settings, seed=5).tests != audit(mech, 1.0, settings).tests
    with pytest.raises(TypeError, match="unexpected keyword argument 'delta'"):
        audit(mech, 1.0, delta=1e-3)


def test_the_trusted_sampler_draws_what_sample_draws():
    # reference: each mechanism's checked sample on the same seed (the auditor calls the trusted one)
    from privcal.verify import audit_mechanisms as M

    for mech in (GaussianMechanism(0.5, steps=3), SubsampledGaussianMechanism(0.8, 0.3, steps=2),
                 GaussianProcessMechanism((0.5, 0.2), (0.0, 1.0), 1.0, 0.7, steps=2)):
        for neighbour in (0, 1):
            checked = mech.sample(neighbour, 5, np.random.default_rng(3))
            trusted = mech.sample_unchecked(neighbour, 5, np.random.default_rng(3))
            np.testing.assert_array_equal(checked, trusted)
            assert checked.shape == (5, mech.dimension)
        with pytest.raises(ValueError, match="neighbour"):
            mech.sample(2, 5, np.random.default_rng(3))
        assert getattr(M, type(mech).__name__) is type(mech)  # one class, importable from both modules
