"""Tests of privcal.analysis.composition: exact Gaussian composition and Wang & Hegde 2019 Thm 5 as printed.

KOV, DRV and basic composition (privcal.analysis.kov, re-exported by privcal.analysis.composition) are tested in
tests/test_kov.py. References come from mpmath or dp_accounting (an independent implementation of
PLD composition).
"""

import math
from fractions import Fraction
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privcal.analysis import composition as C
from privcal.analysis import gaussian as G

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


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 2.0, 8.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
@pytest.mark.parametrize("steps,sensitivity", [(1, 0.3), (80, 1.0), (1000, 2.5), (9999, 7.0)])
def test_sigma_composed_exact_is_rounded_up(epsilon, delta, steps, sensitivity):
    # the two nextafter steps of sigma_composed_exact: sigma >= sqrt(steps) * sensitivity / mu_exact exactly
    # (squared, in rational arithmetic). With one step it fails at e.g. (1.0, 1e-3, 1000, 2.5).
    sigma = C.sigma_composed_exact(epsilon, delta, steps=steps, sensitivity=sensitivity)
    mu = G.mu_exact(epsilon, delta)
    assert Fraction(sigma) ** 2 * Fraction(mu) ** 2 >= steps * Fraction(sensitivity) ** 2


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
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()
