r"""Noise scale and error bounds of the binary mechanism with Gaussian noise on the p-sums.

The counter itself is :class:`privcal.analysis.counter.GaussianBinaryCounter`. Here: the l2 sensitivity
of the vector of p-sums (:func:`gaussian_psum_sensitivity`), the smallest sigma for (epsilon, delta)
from the exact Gaussian profile of Balle & Wang 2018 (:func:`gaussian_sigma`), the uniform error bound
(:func:`gaussian_error_bound`) and a rigorous lower bound on its failure probability
(:func:`gaussian_sup_error_failure_lower_bound`). The tree geometry is
:mod:`privcal.analysis.counter_tree`; ``privcal.analysis.counter_bounds`` re-exports every public name
of this module. Source: Chan, Shi & Song 2011, Alg. 2, with Gaussian noise in place of Laplace.

``*_unchecked`` functions are the trusted kernels of their checked namesakes: they skip validation and
are for callers that have validated their arguments already.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, logsumexp, ndtr

from privcal._roots import brentq
from privcal.analysis import gaussian as _gaussian
from privcal.analysis.counter_tree import num_levels_unchecked, popcount_histogram_unchecked
from privcal import _validate as V

__all__ = [
    "gaussian_psum_sensitivity",
    "gaussian_sigma",
    "gaussian_error_bound",
    "gaussian_sup_error_failure_lower_bound",
    "gaussian_psum_sensitivity_unchecked",
    "gaussian_sigma_unchecked",
    "gaussian_error_bound_unchecked",
]


def gaussian_psum_sensitivity(steps: int, *, streams: int = 1, changes_per_stream: int = 1) -> float:
    r"""l2 sensitivity of the vector of all p-sums of ``streams`` counters when one unit changes them.

    The vector is every dyadic p-sum (levels 0..L-1, L = :func:`num_levels`) of every stream; one
    unit of privacy (a user) may change ``changes_per_stream`` inputs, each by at most 1 (values
    in [0, 1]), in each of ``streams`` distinct streams. Derivation:

    * one input: it lies in at most one p-sum per level, so at most L p-sums move, each by at most
      1: ||Delta||_2^2 <= L. Tight: input 1 lies in the p-sum (0, 2^j] of every level j.
    * inputs of distinct streams move disjoint coordinates, so the squares add: streams * L.
    * k inputs of *one* stream: the squares do NOT simply add, because several changed inputs can
      lie in the same p-sum (T = 2, inputs 1 and 2 both +1: the level-1 p-sum moves by 2, so
      ||Delta||_2^2 = 1 + 1 + 4 = 6 > 2 L = 4). Per level the moves n_i of the p-sums satisfy
      sum n_i <= k, so sum n_i^2 <= k^2: ||Delta||_2^2 <= k^2 L (the triangle inequality).

    Together: Delta_2 = changes_per_stream * sqrt(streams * L); exact for one change per stream
    (tests/test_counter.py enumerates neighbouring streams of small trees). For comparison the l1
    sensitivity, which prices the Laplace counters, is changes_per_stream * streams * L.

    Args:
        steps: stream length T, an integer >= 1.
        streams: number of distinct streams (counters) one unit may change, an integer >= 1;
            default 1.
        changes_per_stream: number of inputs one unit may change in each of those streams, an
            integer >= 1; default 1.

    Returns:
        Delta_2, in (0, inf) (unit of the stream values).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _gaussian_psum_sensitivity(V.positive_int("steps", steps), V.positive_int("streams", streams),
                                      V.positive_int("changes_per_stream", changes_per_stream))


def gaussian_psum_sensitivity_unchecked(steps: int, *, streams: int = 1, changes_per_stream: int = 1) -> float:
    """:func:`gaussian_psum_sensitivity` without validation, for callers that validated the arguments (the
    Gaussian counters of ``privcal.rl.pucb``): the same Delta_2.

    Args:
        steps: stream length T, an int >= 1 (not checked).
        streams: an int >= 1 (not checked); default 1.
        changes_per_stream: an int >= 1 (not checked); default 1.

    Returns:
        Delta_2, in (0, inf).
    """
    return _gaussian_psum_sensitivity(steps, streams, changes_per_stream)


def _gaussian_psum_sensitivity(steps: int, streams: int = 1, changes_per_stream: int = 1) -> float:
    return changes_per_stream * math.sqrt(streams * num_levels_unchecked(steps))


def gaussian_sigma(steps: int, epsilon: float, delta: float, *, streams: int = 1,
                   changes_per_stream: int = 1) -> float:
    r"""Smallest sigma of :class:`GaussianBinaryCounter` making the releases (epsilon, delta)-DP.

    sigma = Delta_2 / mu(epsilon, delta), Delta_2 = :func:`gaussian_psum_sensitivity` and mu the
    largest mu of the EXACT Gaussian privacy profile delta(epsilon; mu) = Phi(mu/2 - epsilon/mu) -
    e^epsilon Phi(-mu/2 - epsilon/mu) (Balle & Wang 2018, Thm 8; ``privcal.analysis.gaussian``), never
    the classic sqrt(2 ln(1.25/delta)) form (valid only for epsilon < 1). All the p-sums together
    are one Gaussian mechanism on the vector of p-sums; the releases are its post-processing. When
    the streams are fed adaptively (inputs depending on earlier releases, as in PUCB) and the
    rounds of the inputs a unit may change are fixed in advance (in PUCB a unit is one round of
    every stream), each round's release is a Gaussian mechanism whose sensitivity is fixed in
    advance, and the adaptive composition of mu_i-GDP mechanisms is sqrt(sum mu_i^2)-GDP exactly
    (Dong, Roth & Su 2022, Cor. 3.3 with Thm 3.2): this same profile with mu = Delta_2 / sigma. The result is checked: delta(epsilon; Delta_2/sigma)
    <= delta (it is nudged up until it is).

    Args:
        steps: stream length T, an integer >= 1.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        streams: number of distinct streams one unit may change, an integer >= 1; default 1.
        changes_per_stream: inputs one unit may change per stream, an integer >= 1; default 1.

    Returns:
        sigma, the noise standard deviation of each p-sum, in (0, inf) (unit of the stream values).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _gaussian_sigma(V.positive_int("steps", steps), V.positive("epsilon", epsilon),
                           V.open_unit("delta", delta), V.positive_int("streams", streams),
                           V.positive_int("changes_per_stream", changes_per_stream))


def gaussian_sigma_unchecked(steps: int, epsilon: float, delta: float, *, streams: int = 1,
                             changes_per_stream: int = 1) -> float:
    """:func:`gaussian_sigma` without validation, for callers that validated the arguments (the Gaussian
    counters of ``privcal.rl.pucb``): the same sigma, checked against delta the same way.

    Args:
        steps: stream length T, an int >= 1 (not checked).
        epsilon: target epsilon, a float in (0, inf) (not checked).
        delta: target delta, a float in (0, 1) (not checked).
        streams: an int >= 1 (not checked); default 1.
        changes_per_stream: an int >= 1 (not checked); default 1.

    Returns:
        sigma, the noise standard deviation of each p-sum.
    """
    return _gaussian_sigma(steps, epsilon, delta, streams, changes_per_stream)


def _gaussian_sigma(steps: int, epsilon: float, delta: float, streams: int = 1,
                    changes_per_stream: int = 1) -> float:
    sens = _gaussian_psum_sensitivity(steps, streams, changes_per_stream)
    sigma = _gaussian.sigma_exact_unchecked(epsilon, delta, sensitivity=sens)
    while _gaussian.delta_exact_unchecked(epsilon, sens / sigma) > delta:  # fail conservative
        sigma *= 1.0 + 1e-12
    return sigma


def _log_gaussian_union_failure(bound: float, histogram: np.ndarray, sigma: float) -> float:
    """ln sum_k N_k 2 Phi(-bound / (sigma sqrt k)): the union-bound failure probability of one counter."""
    logs = [math.log(n_k) + math.log(2.0) + float(log_ndtr(-bound / (sigma * math.sqrt(k))))
            for k, n_k in enumerate(histogram) if k >= 1 and n_k > 0]
    return float(logsumexp(logs))


def gaussian_error_bound(steps: int, sigma: float, failure_probability: float, *,
                         counters: int = 1) -> float:
    r"""Valid uniform error bound of Gaussian binary-mechanism counters (exact tails + union bound).

    With probability >= 1 - beta (beta = ``failure_probability``), |release_t - c(t)| <= E
    simultaneously for all t in 1..T and all ``counters`` counters, where E solves
        counters * sum_{k>=1} N_k * 2 Phi(-E / (sigma sqrt k)) = beta,
    N_k = :func:`popcount_histogram`: the error at round t is a sum of popcount(t) independent
    N(0, sigma^2) draws, exactly N(0, popcount(t) sigma^2) (no Laplace-sum tail needed), and the
    union bound runs over rounds and counters. At T = 1 and one counter it is the exact quantile
    sigma Phi^{-1}(1 - beta/2). Valid whatever the dependence between counters.

    Args:
        steps: stream length T, an integer >= 1.
        sigma: noise standard deviation of each p-sum, in (0, inf).
        failure_probability: probability beta that the bound may fail, in (0, 1).
        counters: number of counters covered by the bound, an integer >= 1; default 1.

    Returns:
        E (unit of the stream values), in (0, inf); never smaller than the root (fail
        conservative).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _gaussian_error_bound(V.positive_int("steps", steps), V.positive("sigma", sigma),
                                 V.open_unit("failure_probability", failure_probability),
                                 counters=V.positive_int("counters", counters))


def gaussian_error_bound_unchecked(steps: int, sigma: float, failure_probability: float, *,
                                   counters: int = 1) -> float:
    """:func:`gaussian_error_bound` without validation, for callers that validated the arguments (the Gaussian
    counters of ``privcal.rl.pucb``): the same bound E.

    Args:
        steps: stream length T, an int >= 1 (not checked).
        sigma: noise standard deviation of each p-sum, a float in (0, inf) (not checked).
        failure_probability: a float in (0, 1) (not checked).
        counters: an int >= 1 (not checked); default 1.

    Returns:
        E, in (0, inf); never smaller than the root.
    """
    return _gaussian_error_bound(steps, sigma, failure_probability, counters=counters)


def _gaussian_error_bound(steps: int, sigma: float, failure_probability: float, *,
                          counters: int = 1) -> float:
    hist = popcount_histogram_unchecked(steps)
    target = math.log(failure_probability) - math.log(counters)

    def excess(bound: float) -> float:
        return _log_gaussian_union_failure(bound, hist, sigma) - target

    high = sigma * math.sqrt(num_levels_unchecked(steps)) * (math.sqrt(2.0 * math.log(
        2.0 * counters * steps / failure_probability)) + 1.0)
    while excess(high) > 0:
        high *= 2.0
    root = float(brentq(excess, 0.0, high, xtol=1e-12 * high, rtol=1e-12))
    while excess(root) > 0:  # fail conservative: never return a bound whose failure exceeds beta
        root *= 1.0 + 1e-12
    return root


def gaussian_sup_error_failure_lower_bound(bound: float, steps: int, sigma: float,
                                           counters: int = 1) -> float:
    """Rigorous lower bound on P(sup_t |error_t| > bound) for independent Gaussian counters.

    Rounds t = 2^j (j = 0..L-1) each release exactly one p-sum, of distinct levels, so their errors
    are independent N(0, sigma^2): P(no failure) <= (1 - 2 Phi(-bound/sigma))^{L * counters}
    (CSS11 Alg. 2 with Gaussian noise).

    Args:
        bound: error threshold, in [0, inf) (unit of the stream values).
        steps: stream length T, an integer >= 1.
        sigma: noise standard deviation of each p-sum, in (0, inf).
        counters: number of independent counters, an integer >= 1; default 1.

    Returns:
        A lower bound on the failure probability, in [0, 1] (1 at ``bound`` = 0).

    Raises:
        ValueError: an argument is outside its range.
    """
    b = V.nonnegative("bound", bound)
    n = num_levels_unchecked(V.positive_int("steps", steps)) * V.positive_int("counters", counters)
    sd = V.positive("sigma", sigma)
    if b == 0:
        return 1.0
    return float(-math.expm1(n * math.log1p(-2.0 * float(ndtr(-b / sd)))))
