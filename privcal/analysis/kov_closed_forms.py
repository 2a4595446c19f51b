r"""Closed forms of k-fold composition: Kairouz, Oh & Viswanath 2015's grid and Thm 3.4, DRV and basic composition.

* Thm 3.3's grid as printed (:func:`kov_epsilon_grid_paper`) and the closed form of Thm 3.4
  (:func:`kov_epsilon_approx`, an upper bound on the optimal composition), Kairouz, Oh & Viswanath 2015
  (ICML; arXiv 1311.0776);
* Dwork, Rothblum & Vadhan 2010 advanced composition (:func:`drv_epsilon`) and basic composition
  (:func:`basic_epsilon`), the bounds KOV improves on.

The exact profile they are compared with is :mod:`privcal.analysis.kov_profile`; :mod:`privcal.analysis.kov`
re-exports every public name of both.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _validate as V
from ..errors import InfeasibleError
from .kov_profile import fail_probability_unchecked, validated_kov_arguments

__all__ = [
    "kov_epsilon_grid_paper",
    "kov_epsilon_approx",
    "kov_epsilon_approx_unchecked",
    "drv_epsilon",
    "basic_epsilon",
    "log_e_plus",
]

_LN2 = math.log(2.0)


def log_e_plus(log_x: float) -> float:
    """ln(e + x) from ln x, without overflow (the logarithm in Thm 3.4's first bound).

    Args:
        log_x: ln x, a float in [-inf, inf).

    Returns:
        ln(e + x) = logaddexp(1, ln x).
    """
    return float(np.logaddexp(1.0, log_x))


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x < 0, accurate over the whole range."""
    with np.errstate(divide="ignore"):
        return np.where(x > -_LN2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def kov_epsilon_grid_paper(epsilon0: float, delta0: float, *, steps: int) -> list[tuple[float, float]]:
    """Kairouz, Oh & Viswanath 2015, Thm 3.3 as printed: the pairs (eps_i, delta_i), i = 0 .. floor(k/2).

    eps_i = (k - 2i) eps0,  delta_i = 1 - (1 - delta0)^k (1 - delta_i^RR),
    delta_i^RR = sum_{l=0}^{i-1} C(k,l) (e^{(k-l) eps0} - e^{(k-2i+l) eps0}) / (1 + e^eps0)^k.
    Each sum is evaluated term by term in log space (O(k^2) work: meant for checks, k up to ~10^4).

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 20000].

    Returns:
        the floor(k/2) + 1 pairs (epsilon_i, delta_i), epsilon decreasing.

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon0, delta0, steps = validated_kov_arguments(epsilon0, delta0, steps)
    if steps > 20000:
        raise ValueError(f"steps must be <= 20000 for the O(k^2) grid, got {steps!r}")
    return _kov_epsilon_grid_paper(epsilon0, delta0, steps=steps)


def _kov_epsilon_grid_paper(epsilon0: float, delta0: float, *, steps: int) -> list[tuple[float, float]]:
    """kov_epsilon_grid_paper for validated inputs."""
    k = steps
    fail = fail_probability_unchecked(delta0, k)
    log_norm = k * float(np.logaddexp(0.0, epsilon0))  # log (1 + e^eps0)^k
    ls = np.arange(k // 2 + 1, dtype=float)
    log_binom = float(special.gammaln(k + 1.0)) - special.gammaln(ls + 1.0) - special.gammaln(k - ls + 1.0)
    pairs = []
    for i in range(k // 2 + 1):
        if i == 0 or epsilon0 == 0.0:
            rr = 0.0
        else:
            l = ls[:i]
            # e^{(k-l) eps0} - e^{(k-2i+l) eps0} = e^{(k-l) eps0} (1 - e^{-2(i-l) eps0})
            terms = log_binom[:i] + (k - l) * epsilon0 + _log1mexp(-2.0 * (i - l) * epsilon0) - log_norm
            top = float(np.max(terms))
            rr = math.exp(top + math.log(float(np.sum(np.exp(terms - top)))))
        pairs.append(((k - 2 * i) * epsilon0, min(1.0, fail + (1.0 - fail) * rr)))
    return pairs


def kov_epsilon_approx(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """Closed-form epsilon of Kairouz, Oh & Viswanath 2015, Thm 3.4 (an upper bound on the optimal one).

    eps~ = min{ k eps0,
                (e^eps0 - 1) eps0 k / (e^eps0 + 1) + eps0 sqrt(2k ln(e + sqrt(k eps0^2) / delta~)),
                (e^eps0 - 1) eps0 k / (e^eps0 + 1) + eps0 sqrt(2k ln(1 / delta~)) },
    where delta~ solves 1 - (1 - delta0)^k (1 - delta~) = delta.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).

    Returns:
        epsilon of the composition, in [0, k * epsilon0].

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: 1 - (1 - delta0)^k >= delta (delta~ would not be positive).
    """
    epsilon0, delta0, steps = validated_kov_arguments(epsilon0, delta0, steps)
    delta = V.open_unit("delta", delta)
    return kov_epsilon_approx_unchecked(epsilon0, delta0, steps=steps, delta=delta)


def kov_epsilon_approx_unchecked(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """:func:`kov_epsilon_approx` without validation, for callers that validated the arguments (the Gaussian
    KOV search beyond :data:`privcal.analysis.kov_gaussian.K_CLOSED_FORM` steps): the same value.

    Args:
        epsilon0: per-step epsilon, a float in [0, 1e250] (not checked).
        delta0: per-step delta, a float in [0, 1] (not checked).
        steps: number k of composed mechanisms, an int in [1, 1e8] (not checked).
        delta: target delta of the composition, a float in (0, 1) (not checked).

    Returns:
        epsilon of the composition, in [0, k * epsilon0].

    Raises:
        InfeasibleError: 1 - (1 - delta0)^k >= delta (delta~ would not be positive).
    """
    k = steps
    fail = fail_probability_unchecked(delta0, k)
    if fail >= delta:
        raise InfeasibleError(
            f"Thm 3.4 needs delta~ > 0 but 1 - (1 - delta0)^k = {fail!r} >= delta = {delta!r}"
        )
    log_dt = math.log(delta - fail) - math.log1p(-fail)  # log delta~
    if epsilon0 == 0.0:
        return 0.0
    drift = k * epsilon0 * math.tanh(epsilon0 / 2.0)  # (e^eps0 - 1) eps0 k / (e^eps0 + 1)
    first = drift + epsilon0 * math.sqrt(2.0 * k * log_e_plus(math.log(math.sqrt(k) * epsilon0) - log_dt))
    second = drift + epsilon0 * math.sqrt(2.0 * k * -log_dt)
    return min(k * epsilon0, first, second)


def drv_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """Advanced composition: eps = sqrt(2k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1), delta' = delta - k delta0

    Dwork, Rothblum & Vadhan 2010 (FOCS), Thm III.3; Dwork & Roth 2014, Thm 3.20: k-fold adaptive
    composition of (eps0, delta0)-DP mechanisms is (eps, k delta0 + delta')-DP.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).

    Returns:
        epsilon of the composition, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: delta' = delta - k delta0 <= 0.
    """
    epsilon0, delta0, steps = validated_kov_arguments(epsilon0, delta0, steps)
    delta = V.open_unit("delta", delta)
    return _drv_epsilon(epsilon0, delta0, steps=steps, delta=delta)


def _drv_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """drv_epsilon for validated inputs."""
    k = steps
    slack = delta - k * delta0
    if not slack > 0:
        raise InfeasibleError(f"advanced composition needs delta - k*delta0 > 0, got {slack!r}")
    return math.sqrt(2.0 * k * -math.log(slack)) * epsilon0 + k * epsilon0 * math.expm1(epsilon0)


def basic_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """Basic composition: k (eps0, delta0)-DP steps are (k eps0, k delta0)-DP; k eps0 if k delta0 <= delta.

    Dwork & Roth 2014, Thm 3.16.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).

    Returns:
        epsilon of the composition, k * epsilon0.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: k delta0 > delta.
    """
    epsilon0, delta0, steps = validated_kov_arguments(epsilon0, delta0, steps)
    delta = V.open_unit("delta", delta)
    return _basic_epsilon(epsilon0, delta0, steps=steps, delta=delta)


def _basic_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """basic_epsilon for validated inputs."""
    k = steps
    if k * delta0 > delta:
        raise InfeasibleError(f"basic composition needs k*delta0 <= delta, got {k * delta0!r} > {delta!r}")
    return k * epsilon0
