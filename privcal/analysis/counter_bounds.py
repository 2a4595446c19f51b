r"""Laplace scale and error bounds of the binary (tree) mechanism for continual counting.

The counters themselves live in :mod:`privcal.analysis.counter`, which re-exports the public names of this
module. Here: the Laplace scale and the uniform error bounds of the Laplace counters (:func:`error_bound`,
the printed :func:`error_bound_paper` of Vietri, Balle, Krishnamurthy & Wu, ICML 2020, App. A.3, and the
lower bound :func:`sup_error_failure_lower_bound`). Sources: Chan, Shi & Song 2011, Alg. 2 / Thm 3.5.

The tree geometry (:func:`num_levels`, :func:`psums_used`, :func:`popcount_histogram`) is
:mod:`privcal.analysis.counter_tree`, and the noise scale and error bounds of Gaussian noise on the p-sums
(:func:`gaussian_sigma`, :func:`gaussian_error_bound`; Balle & Wang 2018 for the exact Gaussian profile)
are :mod:`privcal.analysis.counter_gaussian_bounds`; this module re-exports both, so
``from privcal.analysis.counter_bounds import gaussian_sigma`` works.

``*_unchecked`` functions are the trusted kernels of their checked namesakes: they skip validation and
are for callers that have validated their arguments already.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Callable, TypeVar, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, logsumexp

from privcal._roots import brentq
from privcal.analysis.counter_gaussian_bounds import (
    gaussian_error_bound,
    gaussian_error_bound_unchecked,
    gaussian_psum_sensitivity,
    gaussian_psum_sensitivity_unchecked,
    gaussian_sigma,
    gaussian_sigma_unchecked,
    gaussian_sup_error_failure_lower_bound,
)
from privcal.analysis.counter_tree import (
    num_levels,
    num_levels_unchecked,
    popcount_histogram,
    popcount_histogram_unchecked,
    psums_used,
    psums_used_unchecked,
)
from privcal import _validate as V

__all__ = [
    "num_levels",
    "laplace_scale",
    "psums_used",
    "error_variance",
    "error_bound_paper",
    "error_bound",
    "sup_error_failure_lower_bound",
    "popcount_histogram",
    "laplace_sum_sf",
    "gaussian_psum_sensitivity",
    "gaussian_sigma",
    "gaussian_error_bound",
    "gaussian_sup_error_failure_lower_bound",
    "gaussian_psum_sensitivity_unchecked",
    "gaussian_sigma_unchecked",
    "gaussian_error_bound_unchecked",
    "num_levels_unchecked",
    "psums_used_unchecked",
    "popcount_histogram_unchecked",
    "error_bound_unchecked",
    "error_bound_paper_unchecked",
    "sup_error_failure_lower_bound_unchecked",
    "accept_old_beta",
]

_F = TypeVar("_F", bound=Callable)


def accept_old_beta(fn: _F) -> _F:
    """Decorator: let ``fn`` take its ``failure_probability`` under the deprecated keyword ``beta``.

    In privcal ``beta`` names only the kernel parameter of exp(-beta |x - y|); a call that passes
    ``beta=`` gets a ``DeprecationWarning`` and the result of ``failure_probability=``; passing both
    raises ``TypeError``.

    Args:
        fn: a function with a keyword parameter ``failure_probability``.

    Returns:
        The wrapped function (same name and docstring).
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "beta" in kwargs:
            if "failure_probability" in kwargs:
                raise TypeError(f"{fn.__qualname__}() got failure_probability and its old name beta")
            warnings.warn(f"{fn.__qualname__}(beta=...) is deprecated: pass failure_probability=...",
                          DeprecationWarning, stacklevel=2)
            kwargs["failure_probability"] = kwargs.pop("beta")
        return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def laplace_scale(steps: int, epsilon: float) -> float:
    """Laplace scale b of each p-sum that makes the whole stream epsilon-DP.

    b = L / epsilon with L = :func:`num_levels` (L1 sensitivity of the p-sum vector is L for a
    change of one stream value in [0, 1]; Laplace mechanism, Dwork et al. 2006; Dwork & Roth
    2014, Thm 3.6).

    Args:
        steps: stream length T, an integer >= 1.
        epsilon: privacy parameter of the whole stream, in (0, inf).

    Returns:
        b, in (0, inf) (same unit as the stream values).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _laplace_scale(V.positive_int("steps", steps), V.positive("epsilon", epsilon))


def _laplace_scale(steps: int, epsilon: float) -> float:
    return num_levels_unchecked(steps) / epsilon


def error_variance(t: ArrayLike, steps: int, epsilon: float) -> Union[float, np.ndarray]:
    """Exact variance of the release error at round ``t``: popcount(t) * 2 b^2, b = L/epsilon.

    The error is a sum of popcount(t) independent Laplace(b) draws, each of variance 2 b^2
    (CSS11 Alg. 2; b from :func:`laplace_scale`). Elementwise in ``t``.

    Args:
        t: round index (or array of them), integers in [1, steps].
        steps: stream length T, an integer >= 1.
        epsilon: privacy parameter of the whole stream, in (0, inf).

    Returns:
        The variance (squared unit of the stream values), a float or an array shaped like ``t``.

    Raises:
        ValueError: an argument is outside its range.
    """
    steps_int = V.positive_int("steps", steps)
    b = _laplace_scale(steps_int, V.positive("epsilon", epsilon))
    k = psums_used(t)
    if np.any(np.asarray(t) > steps_int):
        raise ValueError(f"t must be <= steps={steps_int}, got {t!r}")
    return k * 2.0 * b * b


@accept_old_beta
def error_bound_paper(steps: int, epsilon: float, failure_probability: float, *,
                      log_base: float = 2.0) -> float:
    r"""Uniform error bound of the private counter as printed: (4/epsilon) ln(1/beta) log(T)^{5/2}.

    Vietri, Balle, Krishnamurthy & Wu, ICML 2020, App. A.3 (claimed to hold simultaneously for all
    1 <= t <= T with probability >= 1 - beta, beta = ``failure_probability``). The paper writes
    ``ln`` for beta and ``log`` for T; we read ``log`` as log2 (``log_base=2``), ``log_base=math.e``
    gives the natural-log reading.
    Where it fails: at T = 1 it is 0 although the release carries Laplace noise; with the natural
    log it is violated for small T (e.g. T = 2..4) at the noise scale L/epsilon of this module;
    for large T it is loose by a factor that grows like log(T) (see ``privcal.rl.pucb.checks``).

    Args:
        steps: stream length T, an integer >= 1.
        epsilon: privacy parameter of the whole stream, in (0, inf).
        failure_probability: probability beta that the bound may fail, in (0, 1) (the paper's
            beta; the old keyword ``beta=`` is deprecated).
        log_base: base of the paper's log(T), in (0, inf) and != 1; default 2.

    Returns:
        The printed bound E (unit of the stream values), >= 0.

    Raises:
        ValueError: an argument is outside its range.
    """
    steps_int = V.positive_int("steps", steps)
    eps = V.positive("epsilon", epsilon)
    fail = V.open_unit("failure_probability", failure_probability)
    base = V.positive("log_base", log_base)
    if base == 1.0:
        raise ValueError(f"log_base must be positive and != 1, got {log_base!r}")
    return _error_bound_paper(steps_int, eps, fail, log_base=base)


def _error_bound_paper(steps: int, epsilon: float, failure_probability: float, *,
                       log_base: float = 2.0) -> float:
    return (4.0 / epsilon * math.log(1.0 / failure_probability)
            * (math.log(steps) / math.log(log_base)) ** 2.5)


def laplace_sum_sf(x: float, count: int, scale: float) -> float:
    r"""P(X_1 + ... + X_k > x) for k = ``count`` iid Laplace(0, ``scale``) draws and x >= 0.

    Closed form from X = G_1 - G_2 with G_i ~ Gamma(k, scale) and the Gamma(k) survival function:
        P(S_k > x) = e^{-y} sum_{i=0}^{k-1} sum_{l=0}^{i}
                     y^{i-l} (k-1+l)! / (l! (i-l)! (k-1)! 2^{k+l}),
    y = x / scale (k = 1 gives e^{-y}/2). Evaluated in log space.

    Args:
        x: threshold, in [0, inf] (same unit as ``scale``).
        count: number k of summed Laplace draws, an integer >= 1.
        scale: Laplace scale b of each draw, in (0, inf).

    Returns:
        The survival probability, in [0, 1/2].

    Raises:
        ValueError: an argument is outside its range.
    """
    k = V.positive_int("count", count)
    b = V.positive("scale", scale)
    xv = float(x)
    if not xv >= 0:
        raise ValueError(f"x must be in [0, inf), got {x!r}")
    return _laplace_sum_sf(xv, k, b)


def _laplace_sum_sf(x: float, count: int, scale: float) -> float:
    k = count
    y = x / scale
    log_y = math.log(y) if y > 0 else -math.inf
    logs = []
    for i in range(k):
        for l in range(i + 1):
            power = i - l
            if power and log_y == -math.inf:
                continue
            logs.append((power * log_y if power else 0.0) + gammaln(k + l) - gammaln(l + 1)
                        - gammaln(power + 1) - gammaln(k) - (k + l) * math.log(2.0))
    return float(min(0.5, math.exp(-y + float(logsumexp(logs)))))


def _log_union_failure(bound: float, histogram: np.ndarray, scale: float) -> float:
    """ln sum_k N_k 2 P(S_k > bound): the union-bound failure probability of one counter."""
    logs = [math.log(n_k) + math.log(2.0 * _laplace_sum_sf(bound, k, scale))
            for k, n_k in enumerate(histogram) if k >= 1 and n_k > 0]
    return float(logsumexp(logs))


@accept_old_beta
def error_bound(steps: int, epsilon: float, failure_probability: float, *,
                counters: int = 1) -> float:
    r"""Valid uniform error bound of the binary mechanism (exact tails + union bound), our version.

    With probability >= 1 - beta (beta = ``failure_probability``), |release_t - c(t)| <= E
    simultaneously for all t in 1..T and all ``counters`` independent counters, where E solves
        counters * sum_{k>=1} N_k * 2 P(S_k > E) = beta,
    N_k = :func:`popcount_histogram` (rounds whose release sums k p-sums), S_k a sum of k iid
    Laplace(b) draws with b = L/epsilon (:func:`laplace_sum_sf`). Union bound over rounds and
    counters, exact per-round tails; at T = 1 and one counter it is the exact quantile b ln(1/beta).

    Args:
        steps: stream length T, an integer >= 1.
        epsilon: privacy parameter of each counter's whole stream, in (0, inf).
        failure_probability: probability beta that the bound may fail, in (0, 1) (the old
            keyword ``beta=`` is deprecated).
        counters: number of independent counters covered by the bound, an integer >= 1; default 1.

    Returns:
        E (unit of the stream values), in (0, inf); never smaller than the root (fail
        conservative).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _error_bound(V.positive_int("steps", steps), V.positive("epsilon", epsilon),
                        V.open_unit("failure_probability", failure_probability),
                        counters=V.positive_int("counters", counters))


def _error_bound(steps: int, epsilon: float, failure_probability: float, *,
                 counters: int = 1) -> float:
    b = _laplace_scale(steps, epsilon)
    fail = failure_probability
    k = counters
    hist = popcount_histogram_unchecked(steps)
    target = math.log(fail) - math.log(k)

    def excess(bound: float) -> float:
        return _log_union_failure(bound, hist, b) - target

    high = b * (math.log(2.0 * k * steps / fail) + 1.0)
    while excess(high) > 0:
        high *= 2.0
    root = float(brentq(excess, 0.0, high, xtol=1e-12 * high, rtol=1e-12))
    while excess(root) > 0:  # fail conservative: never return a bound whose failure exceeds beta
        root *= 1.0 + 1e-12
    return root


def sup_error_failure_lower_bound(bound: float, steps: int, epsilon: float,
                                  counters: int = 1) -> float:
    """Rigorous lower bound on P(sup_t |error_t| > bound) for ``counters`` independent counters.

    Rounds t = 2^j (j = 0..L-1) each release exactly one p-sum, of distinct levels, so their errors
    are independent Laplace(b): P(no failure) <= (1 - exp(-bound/b))^{L * counters}
    (b = :func:`laplace_scale`; CSS11 Alg. 2).

    Args:
        bound: error threshold, in [0, inf) (unit of the stream values).
        steps: stream length T, an integer >= 1.
        epsilon: privacy parameter of each counter's stream, in (0, inf).
        counters: number of independent counters, an integer >= 1; default 1.

    Returns:
        A lower bound on the failure probability, in [0, 1] (1 at ``bound`` = 0).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _sup_error_failure_lower_bound(
        V.nonnegative("bound", bound), V.positive_int("steps", steps),
        V.positive("epsilon", epsilon), V.positive_int("counters", counters))


def _sup_error_failure_lower_bound(bound: float, steps: int, epsilon: float,
                                   counters: int = 1) -> float:
    b = _laplace_scale(steps, epsilon)
    n = num_levels_unchecked(steps) * counters
    return float(-math.expm1(n * math.log1p(-math.exp(-bound / b)))) if bound > 0 else 1.0


def error_bound_unchecked(steps: int, epsilon: float, failure_probability: float, *,
                          counters: int = 1) -> float:
    """:func:`error_bound` without validation (trusted kernel).

    Args:
        steps: stream length T, a Python int >= 1 (not checked).
        epsilon: privacy parameter of each counter's stream, in (0, inf) (not checked).
        failure_probability: probability beta that the bound may fail, in (0, 1) (not checked).
        counters: number of independent counters, an int >= 1 (not checked); default 1.

    Returns:
        The valid uniform error bound E of :func:`error_bound`.
    """
    return _error_bound(steps, epsilon, failure_probability, counters=counters)


def error_bound_paper_unchecked(steps: int, epsilon: float, failure_probability: float, *,
                                log_base: float = 2.0) -> float:
    """:func:`error_bound_paper` without validation (trusted kernel; VBKW 2020, App. A.3, as printed).

    Args:
        steps: stream length T, a Python int >= 1 (not checked).
        epsilon: privacy parameter of the whole stream, in (0, inf) (not checked).
        failure_probability: the paper's beta, in (0, 1) (not checked).
        log_base: base of the paper's log(T), positive and != 1 (not checked); default 2.

    Returns:
        The printed bound (4/epsilon) ln(1/beta) log(T)^{5/2}.
    """
    return _error_bound_paper(steps, epsilon, failure_probability, log_base=log_base)


def sup_error_failure_lower_bound_unchecked(bound: float, steps: int, epsilon: float,
                                            counters: int = 1) -> float:
    """:func:`sup_error_failure_lower_bound` without validation (trusted kernel).

    Args:
        bound: error threshold, in [0, inf) (not checked).
        steps: stream length T, a Python int >= 1 (not checked).
        epsilon: privacy parameter of each counter's stream, in (0, inf) (not checked).
        counters: number of independent counters, an int >= 1 (not checked); default 1.

    Returns:
        The lower bound on P(sup_t |error_t| > bound) of :func:`sup_error_failure_lower_bound`.
    """
    return _sup_error_failure_lower_bound(bound, steps, epsilon, counters)
