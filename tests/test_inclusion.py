"""Runs that touch the differing record with probability at most delta: epsilon = 0 at once, and never where the
true epsilon is positive (privcal.accounting.inclusion)."""

import math

import mpmath
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import norm

import privcal
from privcal.accounting import inclusion
from privcal.accounting.api import epsilon_of_report
from privcal.accounting.events import Releases
from privcal.accounting.history import ReleaseGroup, calibrate_history_report


def _exact_inclusion(q: float, steps: int) -> mpmath.mpf:
    # 1 - (1 - q)^T in 60 digits (mpmath): the exact probability that one record enters some batch
    with mpmath.workdps(60):
        return 1 - (1 - mpmath.mpf(q)) ** steps


@settings(max_examples=300, deadline=None, derandomize=True)
@given(q=st.floats(1e-15, 0.5), steps=st.integers(1, 10**8))
def test_the_evaluated_inclusion_probability_is_never_below_the_exact_one(q, steps):
    p = inclusion.releases_inclusion_probability(Releases(1.0, steps, q))
    assert mpmath.mpf(p) >= _exact_inclusion(q, steps)


def test_the_rounding_room_is_needed():
    # q = 0.0005020089441077656, T = 2898: -expm1(T log1p(-q)) in float64 is 1.1e-16 (relative) BELOW the
    # 60-digit value (found by a search against mpmath); the room INCLUSION_ROUNDING lifts it above
    q, steps = 0.0005020089441077656, 2898
    bare = -math.expm1(steps * math.log1p(-q))
    assert mpmath.mpf(bare) < _exact_inclusion(q, steps)
    assert mpmath.mpf(inclusion.releases_inclusion_probability(Releases(1.0, steps, q))) >= _exact_inclusion(q, steps)
    assert inclusion.INCLUSION_ROUNDING <= 2.0 ** -30  # more room would only decide fewer runs; pinned


_SETTINGS = [dict(sampling="poisson"), dict(sampling="poisson", neighbouring="add_remove"),
             dict(sampling="without_replacement", neighbouring="replace_one"),
             dict(sampling="without_replacement", neighbouring="zero_out"),
             dict(sampling="without_replacement", neighbouring="add_remove")]


@pytest.mark.parametrize("setting", _SETTINGS, ids=lambda s: "-".join(s.values()))
def test_every_sampler_and_relation_answers_at_once_below_delta(setting):
    # 1000 steps at rate 1e-12: inclusion probability 1e-9 <= delta = 1e-5
    r = privcal.calibrate_report(1.0, 1e-5, steps=1000, sample_rate=1e-12, **setting)
    assert (r.sigma, r.achieved_epsilon, r.accountant, r.bracket) == (0.0, 0.0, "inclusion", (0.0, 0.0))
    assert "1e-09" in r.notes[0] and "epsilon = 0 for every sigma" in r.notes[0]
    e = privcal.epsilon_report(0.5, 1e-5, steps=1000, sample_rate=1e-12, **setting)
    assert (e.epsilon, e.accountant) == (0.0, "inclusion")
    assert privcal.epsilon(0.5, 1e-5, steps=1000, sample_rate=1e-12, **setting) == 0.0
    assert privcal.calibrate(1.0, 1e-5, steps=1000, sample_rate=1e-12, **setting) == 0.0


def test_one_step_at_delta_below_its_exact_total_variation_is_not_answered_by_the_shortcut():
    # one Poisson step, q = 1e-3, sigma = 0.2 (mu = 5): the exact hockey-stick divergence at epsilon = 0 of
    # (1 - q) N(0,1) + q N(mu,1) against N(0,1) is q (2 Phi(mu / 2) - 1) (closed form), 0.0009876 here: at a
    # delta below it the true epsilon is positive, just above q the shortcut's 0 is exact
    q, sigma = 1e-3, 0.2
    tv = q * (2 * norm.cdf(1 / sigma / 2) - 1)
    below = privcal.epsilon_report(sigma, 0.99 * tv, steps=1, sample_rate=q)
    assert below.accountant != "inclusion" and below.epsilon > 0
    at = privcal.epsilon_report(sigma, q * (1 + 1e-6), steps=1, sample_rate=q)
    assert (at.accountant, at.epsilon) == ("inclusion", 0.0)


def test_the_threshold_is_the_inclusion_probability_itself():
    # T = 3, q = 1e-4: p = 1 - (1 - q)^3 = 2.9997e-4 (closed form); just below p the shortcut must not answer
    q, steps = 1e-4, 3
    p = 1 - (1 - q) ** steps
    assert privcal.epsilon_report(1.0, p * (1 - 1e-6), steps=steps, sample_rate=q).accountant != "inclusion"
    assert privcal.epsilon_report(1.0, p * (1 + 1e-6), steps=steps, sample_rate=q).accountant == "inclusion"


def test_a_named_accountant_prices_the_setting_itself():
    r = privcal.epsilon_report(1.0, 1e-5, steps=1000, sample_rate=1e-12, accountant="rdp")
    assert r.accountant == "rdp"


def test_releases_that_read_every_record_never_take_the_shortcut():
    assert privcal.epsilon_report(1e3, 0.5).accountant == "exact"  # a plain release: inclusion probability 1
    shuffled = privcal.EpochsEvent(privcal.GaussianEvent(1.0), epochs=1, steps_per_epoch=10)
    assert inclusion.inclusion_probability(shuffled) == 1.0
    history = privcal.ComposedEvent([privcal.SelfComposedEvent(privcal.PoissonSampledEvent(1e-12, privcal.GaussianEvent(1.0)), 10),
                                     privcal.GaussianEvent(100.0)])
    assert inclusion.inclusion_probability(history) == 1.0
    assert epsilon_of_report(history, 1e-5).accountant != "inclusion"


def test_a_history_of_rare_releases_answers_at_once():
    # 10 steps at 1e-9 and 100 at 1e-9: p = 1 - (1 - 1e-9)^110 ~ 1.1e-7 <= 1e-5
    history = privcal.ComposedEvent([
        privcal.SelfComposedEvent(privcal.PoissonSampledEvent(1e-9, privcal.GaussianEvent(1.0)), 10),
        privcal.SelfComposedEvent(privcal.PoissonSampledEvent(1e-9, privcal.GaussianEvent(2.0)), 100)])
    r = epsilon_of_report(history, 1e-5)
    assert (r.epsilon, r.accountant, r.neighbouring) == (0.0, "inclusion", "add_remove")
    assert math.isclose(inclusion.inclusion_probability(history), 1.1e-7, rel_tol=1e-6)
    groups = [ReleaseGroup(1.0, Releases(1.0, 10, 1e-9)), ReleaseGroup(2.0, Releases(1.0, 100, 1e-9))]
    c = calibrate_history_report(groups, 1.0, 1e-5)
    assert (c.factor, c.sigmas, c.accountant) == (0.0, [0.0, 0.0], "inclusion")
