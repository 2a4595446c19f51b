r"""Error bounds and noise scales of the binary (tree) mechanism for continual counting.

The counters themselves live in :mod:`privcal.analysis.counter`, which re-exports every public name of this
module. Here: the tree geometry (:func:`num_levels`, :func:`psums_used`, :func:`popcount_histogram`), the
Laplace scale and the uniform error bounds of the Laplace counters (:func:`error_bound`, the printed
:func:`error_bound_paper` of Vietri, Balle, Krishnamurthy & Wu, ICML 2020, App. A.3, and the lower bound
:func:`sup_error_failure_lower_bound`), and the same for Gaussian noise on the p-sums
(:func:`gaussian_sigma`, :func:`gaussian_error_bound`). Sources: Chan, Shi & Song 2011, Alg. 2 / Thm 3.5;
Balle & Wang 2018 for the exact Gaussian profile.

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
from scipy.special import gammaln, log_ndtr, logsumexp, ndtr

from privcal._roots import brentq
from privcal.analysis import gaussian as _gaussian
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


def num_levels(steps: int) -> int:
    """Number of tree levels of the binary mechanism for a stream of ``steps`` rounds.

    L = floor(log2 T) + 1 = T.bit_length(): levels 0..floor(log2 T) hold the dyadic p-sums that fit
    in [1, T]; every round lies in at most one p-sum per level (Chan, Shi & Song 2011, Sec. 3.4).

    Args:
        steps: stream length T (number of rounds), an integer >= 1.

    Returns:
        L, an integer >= 1.

    Raises:
        ValueError: ``steps`` is not a positive integer.
    """
    return _num_levels(V.positive_int("steps", steps))


def _num_levels(steps: int) -> int:
    return steps.bit_length()


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
    return _num_levels(steps) / epsilon


def psums_used(t: ArrayLike) -> Union[int, np.ndarray]:
    """Number of noisy p-sums added up in the release at round ``t`` (t >= 1): popcount(t).

    Works elementwise on integer arrays. Source: the binary decomposition of t (CSS11 Alg. 2).

    Args:
        t: round index, an integer >= 1, or an array of them (integral floats are accepted).

    Returns:
        popcount(t): an int for a scalar ``t``, else an int64 array of the shape of ``t``.

    Raises:
        ValueError: ``t`` holds a value that is not an integer >= 1.
    """
    arr = np.asarray(t)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ValueError(f"t must be an integer >= 1, got {t!r}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (np.mod(arr, 1) == 0)):
        raise ValueError(f"t must be an integer >= 1, got {t!r}")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise ValueError(f"t must be an integer >= 1, got {t!r}")
    return _psums_used(arr)


def _psums_used(arr: np.ndarray) -> Union[int, np.ndarray]:
    """popcount of an int64 array (or 0-d array) of rounds >= 1."""
    counts = np.zeros(arr.shape, dtype=np.int64)
    work = arr.copy()
    while np.any(work):
        counts += work & 1
        work >>= 1
    return counts if counts.ndim else int(counts)


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


def popcount_histogram(steps: int) -> np.ndarray:
    """Number of rounds t in 1..T whose release uses exactly k p-sums, for k = 0..L (index k).

    N_k = #{1 <= t <= T : popcount(t) = k}, counted digit by digit over the binary expansion of
    T + 1 in O(log^2 T) operations (exact integers, returned as float64).

    Args:
        steps: stream length T, an integer >= 1.

    Returns:
        Array of L + 1 counts (float64), index k = number of p-sums.

    Raises:
        ValueError: ``steps`` is not a positive integer.
    """
    return _popcount_histogram(V.positive_int("steps", steps))


def _popcount_histogram(steps: int) -> np.ndarray:
    n = steps + 1  # count t in [0, n), then drop t = 0
    levels = n.bit_length()
    counts = [0] * (levels + 1)
    ones_above = 0
    for j in range(levels - 1, -1, -1):
        if (n >> j) & 1:
            # t equals n above bit j, has 0 at bit j and any j low bits
            for low in range(j + 1):
                counts[ones_above + low] += math.comb(j, low)
            ones_above += 1
    counts[0] -= 1  # t = 0
    return np.array(counts[: _num_levels(steps) + 1], dtype=float)


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
    hist = _popcount_histogram(steps)
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
    n = _num_levels(steps) * counters
    return float(-math.expm1(n * math.log1p(-math.exp(-bound / b)))) if bound > 0 else 1.0


# ---------------------------------------------------------------------------------------------
# Gaussian noise on the p-sums
# ---------------------------------------------------------------------------------------------

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
    return changes_per_stream * math.sqrt(streams * _num_levels(steps))


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
    hist = _popcount_histogram(steps)
    target = math.log(failure_probability) - math.log(counters)

    def excess(bound: float) -> float:
        return _log_gaussian_union_failure(bound, hist, sigma) - target

    high = sigma * math.sqrt(_num_levels(steps)) * (math.sqrt(2.0 * math.log(
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
    n = _num_levels(V.positive_int("steps", steps)) * V.positive_int("counters", counters)
    sd = V.positive("sigma", sigma)
    if b == 0:
        return 1.0
    return float(-math.expm1(n * math.log1p(-2.0 * float(ndtr(-b / sd)))))


def num_levels_unchecked(steps: int) -> int:
    """:func:`num_levels` without validation (trusted kernel).

    Args:
        steps: stream length T, a Python int >= 1 (not checked).

    Returns:
        L = T.bit_length().
    """
    return _num_levels(steps)


def psums_used_unchecked(t: np.ndarray) -> Union[int, np.ndarray]:
    """:func:`psums_used` without validation (trusted kernel): popcount of int64 rounds.

    Args:
        t: an int64 array (or 0-d array) of rounds >= 0 (not checked; round 0 uses 0 p-sums).

    Returns:
        popcount(t): an int for a 0-d array, else an int64 array of the shape of ``t``.
    """
    return _psums_used(t)


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
