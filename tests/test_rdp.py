"""Tests for privcal.analysis.rdp: Gaussian RDP, composition, conversions to (epsilon, delta), grid-edge warning."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import log_ndtr

from privcal.analysis.rdp import (
    DEFAULT_ORDERS,
    GridEdgeWarning,
    delta_from_rdp,
    epsilon_from_rdp,
    moments_tail_delta,
    moments_tail_epsilon,
    rdp_compose,
    rdp_gaussian,
)

# A dense grid so that grid effects are negligible in closed-form comparisons.
FINE = 1.0 + np.geomspace(1e-3, 1e4, 4000)


def exact_gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact privacy profile of the Gaussian mechanism with mu = sensitivity / sigma (Balle & Wang 2018, Thm 8):
    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), evaluated in log space."""
    log_a = log_ndtr(mu / 2 - epsilon / mu)
    log_b = epsilon + log_ndtr(-mu / 2 - epsilon / mu)
    return float(math.exp(log_a) * -math.expm1(log_b - log_a))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        return fn(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# Default grid and Gaussian RDP
# ---------------------------------------------------------------------------------------------


def test_default_orders_shape():
    o = DEFAULT_ORDERS
    assert 150 <= o.size <= 250
    assert np.all(np.diff(o) > 0) and o.min() <= 1.01 and o.min() > 1
    assert o.max() >= 1024 and 1024.0 in o
    assert np.any(o != np.floor(o)) and np.sum(o == np.floor(o)) > 100
    assert not o.flags.writeable


def test_rdp_gaussian_closed_form():
    # Mironov 2017, Prop. 7: alpha / (2 s^2); hand values alpha = 2, s = 1 -> 1; alpha = 10, s = 2 -> 1.25.
    np.testing.assert_allclose(rdp_gaussian([2.0, 10.0], 1.0), [1.0, 5.0])
    np.testing.assert_allclose(rdp_gaussian(np.array([10.0]), 2.0), [1.25])


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rdp_gaussian([2.0], 0.0), "noise_multiplier"),
        (lambda: rdp_gaussian([2.0], -1.0), "noise_multiplier"),
        (lambda: rdp_gaussian([1.0], 1.0), "orders"),
        (lambda: rdp_gaussian([0.5, 2.0], 1.0), "orders"),
        (lambda: rdp_gaussian([float("nan")], 1.0), "orders"),
        (lambda: rdp_gaussian([float("inf")], 1.0), "orders"),
        (lambda: rdp_gaussian([], 1.0), "orders"),
        (lambda: epsilon_from_rdp([2.0], [1.0], 1.5), "delta"),
        (lambda: epsilon_from_rdp([2.0], [1.0], 0.0), "delta"),
        (lambda: epsilon_from_rdp([2.0], [-1.0], 1e-5), "rdp"),
        (lambda: epsilon_from_rdp([2.0, 3.0], [1.0], 1e-5), "rdp"),
        (lambda: epsilon_from_rdp([2.0], [1.0], 1e-5, conversion="other"), "conversion"),
        (lambda: delta_from_rdp([2.0], [1.0], -1.0), "epsilon"),
        (lambda: rdp_compose([[1.0]], [0]), "counts"),
        (lambda: rdp_compose([[1.0]], [1.5]), "counts"),
        (lambda: rdp_compose([[1.0], [1.0, 2.0]]), "rdps"),
        (lambda: rdp_compose([]), "rdps"),
    ],
)
def test_bad_input_names_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------------------------


def test_compose_adds_curves():
    o = np.array([2.0, 4.0, 8.0])
    a, b = rdp_gaussian(o, 1.0), rdp_gaussian(o, 2.0)
    # Mironov 2017, Prop. 1: 3 copies of a and 2 of b cost 3a + 2b; steps copies of N(0, s^2) = N(0, s^2/steps).
    np.testing.assert_allclose(rdp_compose([a, b], [3, 2]), 3 * a + 2 * b)
    np.testing.assert_allclose(rdp_compose([a], [16]), rdp_gaussian(o, 0.25))
    assert np.isinf(rdp_compose([a, [np.inf, 1.0, 1.0]])[0])


# ---------------------------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------------------------


def test_mironov_conversion_matches_closed_form_optimum():
    # min over real alpha of alpha/(2 s^2) + L/(alpha - 1) is 1/(2 s^2) + sqrt(2L)/s at alpha = 1 + s sqrt(2L).
    s, delta = 3.0, 1e-5
    big_l = math.log(1 / delta)
    eps, order = epsilon_from_rdp(FINE, rdp_gaussian(FINE, s), delta, conversion="mironov")
    closed = 1 / (2 * s * s) + math.sqrt(2 * big_l) / s
    assert closed <= eps <= closed * (1 + 1e-5)
    assert order == pytest.approx(1 + s * math.sqrt(2 * big_l), rel=1e-2)


def test_improved_conversion_known_value_single_order():
    # Canonne-Kamath-Steinke 2020 Prop. 12 at alpha = 2, rdp = 1, delta = 1e-3:
    # eps = 1 + ln(1/2) - (ln 1e-3 + ln 2) = 1 - ln 2 + ln 1000 - ln 2 (hand computation).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        eps, order = epsilon_from_rdp([2.0], [1.0], 1e-3)
    assert eps == pytest.approx(1 - 2 * math.log(2) + math.log(1000), rel=1e-12)
    assert order == 2.0


@given(
    s=st.floats(0.3, 50.0),
    steps=st.integers(1, 10_000),
    log10_delta=st.floats(-12.0, -2.0),
)
def test_conversions_are_sound_against_exact_gaussian(s, steps, log10_delta):
    # steps compositions of N(0, s^2) with sensitivity 1 are one Gaussian with mu = sqrt(steps)/s; its exact
    # delta at the reported epsilon must not exceed the target delta (RDP conversions are upper bounds).
    delta = 10.0**log10_delta
    mu = math.sqrt(steps) / s
    rdp = steps * rdp_gaussian(DEFAULT_ORDERS, s)
    eps_imp, _ = _quiet(epsilon_from_rdp, DEFAULT_ORDERS, rdp, delta)
    eps_mir, _ = _quiet(epsilon_from_rdp, DEFAULT_ORDERS, rdp, delta, conversion="mironov")
    assert eps_imp <= eps_mir + 1e-12
    assert exact_gaussian_delta(eps_imp, mu) <= delta * (1 + 1e-9)
    assert exact_gaussian_delta(eps_mir, mu) <= delta * (1 + 1e-9)


@given(s=st.floats(0.5, 20.0), steps=st.integers(1, 1000), eps=st.floats(0.01, 20.0))
def test_delta_conversions_sound_and_ordered(s, steps, eps):
    mu = math.sqrt(steps) / s
    rdp = steps * rdp_gaussian(DEFAULT_ORDERS, s)
    d_imp, _ = _quiet(delta_from_rdp, DEFAULT_ORDERS, rdp, eps)
    d_mir, _ = _quiet(delta_from_rdp, DEFAULT_ORDERS, rdp, eps, conversion="mironov")
    assert 0.0 <= d_imp <= d_mir <= 1.0
    assert exact_gaussian_delta(eps, mu) <= d_imp * (1 + 1e-9) + 1e-300


@given(s=st.floats(0.5, 20.0), steps=st.integers(1, 1000), log10_delta=st.floats(-12.0, -2.0),
       conversion=st.sampled_from(["improved", "mironov"]))
def test_epsilon_delta_round_trip(s, steps, log10_delta, conversion):
    delta = 10.0**log10_delta
    rdp = steps * rdp_gaussian(DEFAULT_ORDERS, s)
    eps, order = _quiet(epsilon_from_rdp, DEFAULT_ORDERS, rdp, delta, conversion=conversion)
    if eps == 0.0:
        return
    back, _ = _quiet(delta_from_rdp, DEFAULT_ORDERS, rdp, eps, conversion=conversion)
    assert back == pytest.approx(delta, rel=1e-8)


def test_moments_tail_is_mironov_conversion():
    o = DEFAULT_ORDERS
    rdp = 1000 * rdp_gaussian(o, 50.0)  # 0.2 alpha: the delta optimum at eps = 1 is alpha = 3 (interior)
    # Abadi et al. 2016, Thm 2 written out independently: delta = min_lambda exp(lambda rdp(lambda+1) - lambda eps),
    # epsilon = min_lambda (lambda rdp(lambda+1) + ln(1/delta)) / lambda, lambda = order - 1
    lam = o - 1.0
    delta, order = moments_tail_delta(o, rdp, 1.0)
    i = int(np.argmin(lam * rdp - lam * 1.0))
    assert delta == pytest.approx(math.exp(lam[i] * rdp[i] - lam[i]), rel=1e-12) and order == o[i] == 3.0
    eps, order = moments_tail_epsilon(o, rdp, 1e-6)
    j = int(np.argmin((lam * rdp + math.log(1e6)) / lam))
    assert eps == pytest.approx((lam[j] * rdp[j] + math.log(1e6)) / lam[j], rel=1e-12) and order == o[j]
    # Abadi et al. 2016, Thm 2 by hand at one order: lambda = 3, alpha(lambda) = 3 * rdp(4) = 3 * 4/(2*4) = 1.5,
    # delta = exp(1.5 - 3 * 1) = e^{-1.5}.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        delta, order = moments_tail_delta([4.0], rdp_gaussian([4.0], 2.0), 1.0)
    assert delta == pytest.approx(math.exp(-1.5), rel=1e-12) and order == 4.0


def test_infinite_rdp_handled():
    o = np.array([2.0, 3.0, 4.0])
    eps, order = _quiet(epsilon_from_rdp, o, [np.inf, 0.5, np.inf], 1e-5)
    assert order == 3.0 and math.isfinite(eps)
    eps, order = epsilon_from_rdp(o, [np.inf] * 3, 1e-5)
    assert eps == math.inf and math.isnan(order)
    delta, order = delta_from_rdp(o, [np.inf] * 3, 1.0)
    assert delta == 1.0 and math.isnan(order)
    # nan is read as inf (conservative), never as a small value
    eps, order = _quiet(epsilon_from_rdp, o, [np.nan, 0.5, np.nan], 1e-5)
    assert order == 3.0


def test_epsilon_clipped_at_zero_and_delta_capped_at_one():
    # rdp = 0 with delta = 0.9 at alpha = 2: improved formula gives ln(1/2) - (ln 0.9 + ln 2) < 0 -> 0.
    eps, _ = _quiet(epsilon_from_rdp, [2.0], [0.0], 0.9)
    assert eps == 0.0
    # rdp far above epsilon: exp((alpha-1)(rdp - eps)) > 1 -> capped at 1.
    delta, _ = _quiet(delta_from_rdp, [2.0], [5.0], 0.0, conversion="mironov")
    assert delta == 1.0


def test_grid_edge_warning():
    o = np.array([2.0, 3.0, 4.0])
    # A very noisy Gaussian wants a large order: the optimum is the largest order of the grid.
    with pytest.warns(GridEdgeWarning, match="largest"):
        epsilon_from_rdp(o, rdp_gaussian(o, 100.0), 1e-5)
    # A very leaky one wants an order near 1: the optimum is the smallest order.
    with pytest.warns(GridEdgeWarning, match="smallest"):
        epsilon_from_rdp(o, rdp_gaussian(o, 0.01), 1e-5)
    with pytest.warns(GridEdgeWarning):
        delta_from_rdp(o, rdp_gaussian(o, 100.0), 0.1)
    # An interior optimum does not warn.
    with warnings.catch_warnings():
        warnings.simplefilter("error", GridEdgeWarning)
        epsilon_from_rdp(DEFAULT_ORDERS, rdp_gaussian(DEFAULT_ORDERS, 3.0), 1e-5)


# ---------------------------------------------------------------------------------------------
# Refinement of the optimal order between grid orders (rdp_at)
# ---------------------------------------------------------------------------------------------


def _gaussian_curve(s: float, steps: int):
    return lambda a: steps * np.asarray(a, dtype=float) / (2.0 * s * s)


@given(s=st.floats(0.5, 50.0), steps=st.integers(1, 10_000), log10_delta=st.floats(-12, -2))
def test_refinement_reaches_the_continuous_optimum_of_the_gaussian(s, steps, log10_delta):
    # Closed form: for rdp(a) = c a the improved conversion is smooth in a; the minimum over a fine
    # grid (4000 orders, ratio < 1.006 between neighbours) is the continuous optimum to ~1e-6. The
    # refinement on the coarse default grid must reach it to 1e-4 (the grid alone: up to ~1e-2) and
    # never go above the grid's own value.
    delta = 10.0**log10_delta
    curve = _gaussian_curve(s, steps)
    fine, _ = _quiet(epsilon_from_rdp, FINE, curve(FINE), delta)
    grid, _ = _quiet(epsilon_from_rdp, DEFAULT_ORDERS, curve(DEFAULT_ORDERS), delta)
    refined, order = _quiet(epsilon_from_rdp, DEFAULT_ORDERS, curve(DEFAULT_ORDERS), delta, rdp_at=curve)
    assert refined <= grid
    assert refined == pytest.approx(fine, rel=1e-4, abs=1e-9)
    assert DEFAULT_ORDERS.min() <= order <= DEFAULT_ORDERS.max()


def test_refined_order_lies_between_grid_orders():
    # s = 3, 50 steps: rdp = 50 a / 18; at delta = 1e-5 the optimum of the improved conversion lies
    # between the grid orders 2.75 and 3 (minimum over FINE: a = 2.938); the grid alone answers 3
    curve = _gaussian_curve(3.0, 50)
    _, grid_order = epsilon_from_rdp(DEFAULT_ORDERS, curve(DEFAULT_ORDERS), 1e-5)
    _, order = epsilon_from_rdp(DEFAULT_ORDERS, curve(DEFAULT_ORDERS), 1e-5, rdp_at=curve)
    assert grid_order == 3.0
    assert order not in DEFAULT_ORDERS and abs(order - 2.938) < 0.011  # lattice step here: 0.25 / 24


def test_refined_delta_is_never_above_the_grid_delta_and_stays_sound():
    # soundness against the exact profile (Balle & Wang 2018, Thm 8) at mu = sqrt(steps) / s
    for s, steps, eps in [(3.0, 50, 2.0), (1.0, 1, 1.0), (20.0, 10_000, 5.0)]:
        curve = _gaussian_curve(s, steps)
        grid, _ = _quiet(delta_from_rdp, DEFAULT_ORDERS, curve(DEFAULT_ORDERS), eps)
        refined, _ = _quiet(delta_from_rdp, DEFAULT_ORDERS, curve(DEFAULT_ORDERS), eps, rdp_at=curve)
        assert exact_gaussian_delta(eps, math.sqrt(steps) / s) <= refined <= grid


def test_refinement_keeps_the_grid_value_when_extra_orders_are_no_better():
    # rdp_at reporting inf (or nan) everywhere off the grid: the grid's answer stands
    curve = _gaussian_curve(3.0, 50)
    grid = epsilon_from_rdp(DEFAULT_ORDERS, curve(DEFAULT_ORDERS), 1e-5)
    for bad in (np.inf, np.nan):
        refined = epsilon_from_rdp(
            DEFAULT_ORDERS, curve(DEFAULT_ORDERS), 1e-5, rdp_at=lambda a, b=bad: np.full(np.shape(a), b)
        )
        assert refined == grid


def test_rdp_at_must_be_callable():
    with pytest.raises(ValueError, match="^rdp_at must be None or a function"):
        epsilon_from_rdp([2.0, 3.0], [0.1, 0.2], 1e-5, rdp_at=3.0)
    with pytest.raises(ValueError, match="^rdp_at must be None or a function"):
        delta_from_rdp([2.0, 3.0], [0.1, 0.2], 1.0, rdp_at="gaussian")
