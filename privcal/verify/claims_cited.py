r"""Composition theorems cited by Wang & Hegde 2019 (proof of Thm 5, App. E.2): Kairouz, Oh & Viswanath
2015 (Thm 3.3, Thm 3.4) and Dwork, Rothblum & Vadhan 2010 (advanced composition).

These are theorems; the checks confirm that privcal's implementations agree with an independent
brute-force computation and with each other (optimal <= closed-form approximation <= basic).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from privcal.analysis import composition as C
from privcal.errors import InfeasibleError
from privcal.verify.common import FAILS, HOLDS, g
from privcal.verify.model import Outcome, claim

CLAIMS: list = []

KOV = "Kairouz, Oh & Viswanath 2015 (cited by Wang & Hegde 2019)"
DRV = "Dwork, Rothblum & Vadhan 2010 (cited by Wang & Hegde 2019)"


def _brute_force_delta(epsilon: float, epsilon0: float, delta0: float, k: int) -> float:
    """Hockey-stick divergence of the k-fold product of the (eps0, delta0) dominating pair, by enumeration.

    P = (delta0, (1-delta0) p, (1-delta0) (1-p), 0), Q = (0, (1-delta0)(1-p), (1-delta0) p, delta0),
    p = e^eps0/(1 + e^eps0) (Kairouz, Oh & Viswanath 2015, Sec. 3); all 4^k outcomes summed.
    """
    p = 1.0 / (1.0 + math.exp(-epsilon0))
    pp = np.array([delta0, (1 - delta0) * p, (1 - delta0) * (1 - p), 0.0])
    qq = np.array([0.0, (1 - delta0) * (1 - p), (1 - delta0) * p, delta0])
    pk, qk = np.ones(1), np.ones(1)
    for _ in range(k):
        pk = np.outer(pk, pp).ravel()
        qk = np.outer(qk, qq).ravel()
    return float(np.sum(np.maximum(pk - math.exp(epsilon) * qk, 0.0)))


def _kov(name: str, epsilon0: float, delta0: float, k: int, **target: float):
    """privcal.analysis.composition.<name>(epsilon0, delta0, steps=k, epsilon= or delta=): k composed mechanisms."""
    return getattr(C, name)(epsilon0, delta0, steps=k, **target)


_KOV_SMALL = st.tuples(st.integers(1, 6), st.floats(0.0, 2.0), st.floats(0.0, 0.1), st.floats(0.0, 8.0))


@claim(
    CLAIMS, "KOV-thm3.3-optimal-composition", paper=KOV, location="Thm 3.3 (ICML 2015; arXiv 1311.0776)",
    statement="The k-fold adaptive composition of (eps0, delta0)-DP mechanisms is ((k - 2i) eps0, 1 - (1 - "
              "delta0)^k (1 - delta_i))-DP, delta_i = sum_{l<i} C(k,l)(e^{(k-l)eps0} - e^{(k-2i+l)eps0})/(1 + "
              "e^eps0)^k, and no better guarantee holds for every such composition.",
    method="independent brute force: hockey-stick divergence of the k-fold product of the dominating pair "
           "enumerated over all 4^k outcomes (k <= 6), against privcal's profile at every eps (hypothesis) and "
           "the printed grid formula",
    function="privcal.analysis.composition.kov_delta, privcal.analysis.composition.kov_epsilon_grid_paper",
)
def _kov33(ctx) -> Outcome:
    worst = [0.0]

    def bad(t):
        k, eps0, delta0, eps = t
        brute = _brute_force_delta(eps, eps0, delta0, k)
        lib = _kov("kov_delta", eps0, delta0, k, epsilon=eps)
        # the enumeration sums 4^k terms of size <= 1: absolute float64 error below ~1e-12
        err = abs(lib - brute)
        worst[0] = max(worst[0], err)
        grid_bad = any(abs(d - b) > 1e-8 * b + 1e-12 for e, d in _kov("kov_epsilon_grid_paper", eps0, delta0, k)
                       for b in (_brute_force_delta(e, eps0, delta0, k),))
        return err > 1e-8 * brute + 1e-12 or grid_bad

    found = ctx.find(_KOV_SMALL, bad, examples=80)
    if found is not None:
        return Outcome(FAILS, "privcal's profile or the printed grid differs from the brute force",
                       counterexample=f"k = {found[0]}, eps0 = {g(found[1])}, delta0 = {g(found[2])}, "
                                      f"eps = {g(found[3])}")
    return Outcome(HOLDS, f"the printed grid and privcal's profile equal the brute-force hockey-stick divergence to "
                          f"relative error <= 1e-8 (+ 1e-12 absolute) (checked, {ctx.examples(80)} examples); "
                          "optimality is the theorem (the dominating pair is itself such a composition)",
                   data={"largest_absolute_difference": worst[0]})


_KOV_LARGE = st.tuples(st.integers(1, 2000), st.floats(1e-4, 2.0), st.floats(-12.0, -3.0), st.floats(-10.0, -1.0))


def kov34_terms(epsilon0: float, delta0: float, k: int, delta: float) -> tuple[float, float, float]:
    """The three terms of KOV Thm 3.4 as printed, computed here independently of privcal.analysis.composition.

    delta~ solves 1 - (1 - delta0)^k (1 - delta~) = delta, i.e. delta~ = 1 - (1 - delta)/(1 - delta0)^k
    (computed with log1p/expm1).

    Args:
        epsilon0: epsilon of each composed mechanism, in (0, inf).
        delta0: delta of each composed mechanism, in [0, 1).
        k: number of composed mechanisms, an int >= 1.
        delta: the composition's target delta, in (0, 1).

    Returns:
        (k eps0, the ln(e + sqrt(k eps0^2)/delta~) term, the ln(1/delta~) term).

    Raises:
        InfeasibleError: delta~ <= 0 (delta is not above k delta0's share).
    """
    tilde = -math.expm1(math.log1p(-delta) - k * math.log1p(-delta0))
    if not tilde > 0:
        raise InfeasibleError("delta~ <= 0")
    head = math.expm1(epsilon0) * epsilon0 * k / (math.exp(epsilon0) + 1.0)
    second = head + epsilon0 * math.sqrt(2 * k * math.log(math.e + math.sqrt(k * epsilon0**2) / tilde))
    third = head + epsilon0 * math.sqrt(2 * k * -math.log(tilde))
    return k * epsilon0, second, third


def _kov34_violation(t) -> str | None:
    """What is wrong at t = (k, eps0, l0, ld) (delta0 = 10^l0 delta/k, delta = 10^ld), or None."""
    k, eps0, frac, ld = t
    delta = 10.0**ld
    delta0 = delta * 10.0**frac / k
    try:
        _, second, third = kov34_terms(eps0, delta0, k, delta)
        opt = _kov("kov_epsilon", eps0, delta0, k, delta=delta)
        lib = _kov("kov_epsilon_approx", eps0, delta0, k, delta=delta)
    except InfeasibleError:
        return None
    if second < opt * (1 - 1e-9) or third < opt * (1 - 1e-9):
        return "a Thm 3.4 term is below the optimal epsilon (Thm 3.3)"
    if not math.isclose(lib, min(k * eps0, second, third), rel_tol=1e-9, abs_tol=1e-12):
        return "privcal.analysis.composition.kov_epsilon_approx differs from the printed formula"
    return None


@claim(
    CLAIMS, "KOV-thm3.4-approximation", paper=KOV, location="Thm 3.4",
    statement="For delta~ with 1 - (1 - delta0)^k (1 - delta~) = delta, the composition is (eps~, delta)-DP with "
              "eps~ = min{k eps0, (e^eps0 - 1) eps0 k/(e^eps0 + 1) + eps0 sqrt(2k ln(e + sqrt(k eps0^2)/delta~)), "
              "(e^eps0 - 1) eps0 k/(e^eps0 + 1) + eps0 sqrt(2k ln(1/delta~))}.",
    method="hypothesis over k in 1..2000, eps0, delta0, delta (and pinned points): each of the two closed-form "
           "terms, computed independently from the statement, is >= the optimal epsilon (Thm 3.3, exact), and "
           "privcal's kov_epsilon_approx equals the printed minimum (relative 1e-9)",
    function="privcal.analysis.composition.kov_epsilon_approx",
)
def _kov34(ctx) -> Outcome:
    pinned = ((100, 0.1, -1.0, -5.0), (2000, 0.01, -3.0, -10.0), (10, 1.0, -1.0, -3.0))
    found = ctx.find(_KOV_LARGE, lambda t: _kov34_violation(t) is not None, examples=80, pinned=pinned)
    if found is not None:
        k, eps0, frac, ld = found
        return Outcome(FAILS, _kov34_violation(found),
                       counterexample=f"k = {k}, eps0 = {g(eps0)}, delta0 = {g(10.0 ** ld * 10.0 ** frac / k)}, "
                                      f"delta = {g(10.0 ** ld)}")
    delta = 1e-5
    delta0 = delta * 0.1 / 100
    opt = _kov("kov_epsilon", 0.1, delta0, 100, delta=delta)
    _, second, third = kov34_terms(0.1, delta0, 100, delta)
    return Outcome(HOLDS, f"optimal <= each closed-form term of Thm 3.4, and privcal equals the printed minimum "
                          f"(checked: {len(pinned)} pinned points and {ctx.examples(80)} examples); e.g. k = 100, "
                          f"eps0 = 0.1, delta = 1e-5: optimal {g(opt)} <= {g(second)} and {g(third)} <= k eps0 = 10")


@claim(
    CLAIMS, "DRV-advanced-composition", paper=DRV, location="Thm III.3 (Dwork & Roth 2014, Thm 3.20)",
    statement="k-fold adaptive composition of (eps0, delta0)-DP mechanisms is (sqrt(2k ln(1/delta')) eps0 + "
              "k eps0 (e^eps0 - 1), k delta0 + delta')-DP.",
    method="hypothesis over k in 1..2000, eps0, delta0, delta: the optimal composition (KOV Thm 3.3, exact) never "
           "exceeds it",
    function="privcal.analysis.composition.drv_epsilon",
)
def _drv(ctx) -> Outcome:
    def bad(t):
        k, eps0, frac, ld = t
        delta = 10.0**ld
        delta0 = delta * 10.0**frac / k
        try:
            drv = _kov("drv_epsilon", eps0, delta0, k, delta=delta)
            opt = _kov("kov_epsilon", eps0, delta0, k, delta=delta)
        except InfeasibleError:
            return False
        return drv < opt * (1 - 1e-9)

    found = ctx.find(_KOV_LARGE, bad, examples=80)
    if found is not None:
        return Outcome(FAILS, "advanced composition below the optimal epsilon", counterexample=repr(found))
    return Outcome(HOLDS, f"never below the optimal composition in {ctx.examples(80)} examples")
