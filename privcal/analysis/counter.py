r"""Private continual counting with the binary (tree) mechanism.

A stream sigma_1, ..., sigma_T of values in [0, 1] arrives one value per round; after every round
the mechanism releases an estimate of the prefix sum c(t) = sigma_1 + ... + sigma_t.
The binary mechanism (Chan, Shi & Song 2011, "Private and continual release of statistics",
Alg. 2 / Thm 3.5; Dwork, Naor, Pitassi & Rothblum 2010, "DP under continual observation") keeps the
dyadic partial sums ("p-sums") of the stream: the p-sum at level j that ends at round t covers the
2^j rounds (t - 2^j, t] and exists when 2^j divides t. The release at round t adds the noisy p-sums
of the set bits of t, so it uses popcount(t) of them.

Noise scale (and why). Levels j = 0, 1, ..., floor(log2 T) are the only ones whose p-sums fit in
[1, T], so there are L = floor(log2 T) + 1 = T.bit_length() levels and every stream element lies in
exactly one p-sum per level, i.e. in at most L released p-sums. Changing one element by at most 1
changes the vector of all p-sums by at most L in L1 norm, so Laplace noise of scale
b = L / epsilon on every p-sum makes the whole sequence of releases epsilon-DP (Laplace mechanism,
then post-processing). CSS11 write "log T" for L: for T = 2^k there are k + 1 levels, so we use
L = floor(log2 T) + 1 (= ceil(log2 T) unless T is a power of two); the ceil(log2 T) + 1 sometimes
quoted is one level too many when T is not a power of two. VBKW's PC(T, epsilon) (ICML 2020,
App. A.3) does not state its scale; its error bound (:func:`error_bound_paper`) is checked against
the scale used here in ``privcal.rl.pucb.checks.counter_error_check``: with log = log2 it holds
for T >= 2 at the usual failure probability, is 0 (violated) at T = 1, and fails for a failure
probability close to 1.

Gaussian noise (:class:`GaussianBinaryCounter`). The same tree with N(0, sigma^2) on every p-sum
is the Gaussian mechanism on the vector of all p-sums, priced by its l2 sensitivity
(:func:`gaussian_psum_sensitivity`: sqrt(L) per changed input, against L in l1) with the exact
Gaussian profile (:func:`gaussian_sigma`, Balle & Wang 2018), so it is (epsilon, delta)-DP. Its
release error at round t is exactly N(0, popcount(t) sigma^2) and :func:`gaussian_error_bound` is
the union bound over rounds and counters of these Gaussian tails. When one unit touches many
streams (PUCB: 6H of them) the l2 sensitivity grows like the square root of their number instead of
linearly, which is where the Gaussian counters win.

Noise is drawn lazily (one Laplace array per round, for the one p-sum that completes in that round)
from a ``numpy.random.Generator`` (``privcal._rng``), so a seed reproduces the run. Memory is 2 L
floats per counter.

Names: the probability that an error bound fails is ``failure_probability`` (VBKW call it beta;
in privcal ``beta`` is only the kernel parameter of exp(-beta |x - y|)). The old keyword ``beta=``
is still accepted, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from typing import Callable, TypeVar, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, log_ndtr, logsumexp, ndtr

from privcal import _rng
from privcal._roots import brentq
from privcal.analysis import gaussian as _gaussian
from privcal import _validate as V
from privcal.errors import InfeasibleError

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
    "BinaryCounter",
    "GaussianBinaryCounter",
    "ExactCounter",
]

_F = TypeVar("_F", bound=Callable)


def _accept_old_beta(fn: _F) -> _F:
    """Let ``fn`` take its ``failure_probability`` under the old keyword ``beta`` (deprecated).

    ``beta`` now names only the kernel parameter of exp(-beta |x - y|); callers that still pass
    ``beta=`` get a ``DeprecationWarning`` and the same result.
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


@_accept_old_beta
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


@_accept_old_beta
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
    (b = :func:`laplace_scale`; CSS11 Alg. 2). Moved here from ``privcal.rl.pucb`` (still
    importable there).

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


def _check_shape(shape) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        raise ValueError(f"shape must be a tuple of non-negative integers, got {shape!r}") from None
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0:
            raise ValueError(f"shape must be a tuple of non-negative integers, got {shape!r}")
    return tuple(int(d) for d in dims)


def _check_stream_values(values, shape, clip: bool) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    try:
        arr = np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(f"values must broadcast to the counter shape {shape}, "
                         f"got an array of shape {arr.shape}") from None
    if np.isnan(arr).any():
        raise ValueError("values must be numbers in [0, 1], got nan")
    if clip:
        return np.clip(arr, 0.0, 1.0)
    bad = (arr < 0.0) | (arr > 1.0)
    if bad.any():
        first = arr[bad].flat[0]
        raise ValueError(f"values must be in [0, 1] (pass clip=True to clip), got {first!r}")
    return arr


class _CounterBase:
    """Shared bookkeeping: the round index and the per-round validation of the fed values."""

    def __init__(self, steps, shape, clip: bool):
        self._init_base(V.positive_int("steps", steps), _check_shape(shape), clip)

    def _init_base(self, steps: int, shape: tuple[int, ...], clip: bool) -> None:
        """The bookkeeping from checked ``steps`` and ``shape``."""
        self.steps = steps
        self.shape = shape
        self.clip = bool(clip)
        self.t = 0

    def _next_round(self, values) -> np.ndarray:
        if self.t >= self.steps:
            raise InfeasibleError(
                f"the counter was built for steps={self.steps} rounds; a further value would "
                "void its privacy guarantee (build a counter with a larger steps)")
        arr = _check_stream_values(values, self.shape, self.clip)
        self.t += 1
        return arr

    @property
    def counters(self) -> int:
        """Number of counters held (product of ``shape``)."""
        return int(np.prod(self.shape, dtype=np.int64))


class _TreeCounter(_CounterBase):
    """The binary-mechanism bookkeeping shared by the Laplace and the Gaussian counters.

    Subclasses set ``levels`` and ``_rng`` and define ``_draw()`` (one noise array of shape ``shape``
    for the p-sum that completes in the current round) and ``variance``.
    """

    def _allocate(self) -> None:
        self._exact = np.zeros((self.levels,) + self.shape)  # running exact p-sums, one per level
        self._noisy = np.zeros((self.levels,) + self.shape)  # their noisy releases
        self._estimate = np.zeros(self.shape)

    def _draw(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def estimate(self) -> np.ndarray:
        """Releases after the rounds fed so far (zeros before the first round); a copy."""
        return self._estimate.copy()

    def update(self, values: ArrayLike) -> np.ndarray:
        """Feed one value per counter (round t -> t + 1) and return the releases for round t + 1.

        Args:
            values: one value in [0, 1] per counter, broadcastable to ``shape``.

        Returns:
            The releases (noisy prefix sums) after this round, an array of shape ``shape``.

        Raises:
            ValueError: a value is outside [0, 1] (and ``clip`` is False) or the shape is wrong.
            InfeasibleError: the counter has already been fed ``steps`` rounds.
        """
        arr = self._next_round(values)
        t = self.t
        level = (t & -t).bit_length() - 1  # trailing zeros of t: the p-sum completing now
        psum = arr + self._exact[:level].sum(axis=0) if level else arr.copy()
        self._exact[:level] = 0.0
        self._exact[level] = psum
        self._noisy[:level] = 0.0
        self._noisy[level] = psum + self._draw()
        bits = [j for j in range(self.levels) if (t >> j) & 1]
        self._estimate = self._noisy[bits].sum(axis=0)
        return self._estimate.copy()


class BinaryCounter(_TreeCounter):
    r"""An array of independent binary-mechanism counters, each epsilon-DP for its whole stream.

    ``BinaryCounter(steps, epsilon, shape, seed)`` holds ``prod(shape)`` counters; each call
    ``update(values)`` feeds one value in [0, 1] to every counter (``values`` broadcasts to
    ``shape``) and returns the new releases (noisy prefix sums), also available as ``estimate``.
    Mechanism: Chan, Shi & Song 2011 Alg. 2 (binary mechanism), Laplace scale b = L/epsilon with
    L = floor(log2 steps) + 1 (:func:`laplace_scale`). Out-of-range values raise ``ValueError``
    unless ``clip=True``. Releases are unbiased (E[release_t] = c(t)) with variance
    :func:`error_variance`; they are *not* monotone in t (VBKW App. A.3 says PC is monotone: that
    needs a post-processing step such as a running max, which keeps DP but not unbiasedness).
    :class:`GaussianBinaryCounter` is the same tree with Gaussian noise ((epsilon, delta)-DP).

    Args:
        steps: stream length T (rounds the counters may be fed), an integer >= 1.
        epsilon: privacy parameter of each counter's whole stream, in (0, inf).
        shape: shape of the array of counters, an int or a tuple of ints >= 0; default () (one
            counter).
        seed: None, a non-negative int, a ``numpy.random.SeedSequence`` or a
            ``numpy.random.Generator`` (used and advanced as is); default None (fresh entropy).
        clip: clip fed values into [0, 1] instead of rejecting them; default False.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, steps: int, epsilon: float, shape: Union[int, tuple[int, ...]] = (),
                 seed: _rng.Seed = None, *, clip: bool = False):
        super().__init__(steps, shape, clip)
        self._setup(V.positive("epsilon", epsilon), seed)

    @classmethod
    def unchecked(cls, steps: int, epsilon: float, shape: tuple[int, ...] = (), seed: _rng.Seed = None, *,
                  clip: bool = False) -> "BinaryCounter":
        """The counter of ``BinaryCounter(steps, epsilon, shape, seed, clip=clip)``, built without validation.

        For callers that validated the arguments (e.g. :class:`privcal.rl.pucb.agent.PUCB`, whose
        per-counter epsilon is derived from its own validated epsilon): same noise, same draws.

        Args:
            steps: stream length T, an int >= 1 (not checked).
            epsilon: privacy parameter of each counter's whole stream, a float in (0, inf) (not checked).
            shape: shape of the array of counters, a tuple of ints >= 0 (not checked, not converted
                from an int); default ().
            seed: as for the constructor (converted by ``privcal._rng``); default None.
            clip: clip fed values into [0, 1] instead of rejecting them; default False.

        Returns:
            The counter.
        """
        counter = cls.__new__(cls)
        counter._init_base(steps, shape, clip)
        counter._setup(epsilon, seed)
        return counter

    def _setup(self, epsilon: float, seed: _rng.Seed) -> None:
        self.epsilon = epsilon
        self.levels = _num_levels(self.steps)
        self.laplace_scale = self.levels / self.epsilon
        self._rng = _rng.as_generator(seed)
        self._allocate()

    def _draw(self) -> np.ndarray:
        return self._rng.laplace(0.0, self.laplace_scale, size=self.shape)

    @property
    def variance(self) -> float:
        """Exact variance of the current release error, popcount(t) 2 b^2 (0 before round 1)."""
        if self.t == 0:
            return 0.0
        return float(_psums_used(np.asarray(self.t, dtype=np.int64))) * 2.0 * self.laplace_scale ** 2


class GaussianBinaryCounter(_TreeCounter):
    r"""An array of binary-mechanism counters with Gaussian noise N(0, sigma^2) on every p-sum.

    Same tree, bookkeeping and interface as :class:`BinaryCounter` (``update``, ``estimate``,
    ``variance``, ``levels``, ``counters``); only the noise differs. The privacy of the releases
    depends on how many streams (and inputs) one unit of privacy may change, so the counter takes
    ``sigma`` and :func:`gaussian_sigma` calibrates it: e.g. ``GaussianBinaryCounter(T,
    gaussian_sigma(T, epsilon, delta), shape)`` makes each counter's whole stream
    (epsilon, delta)-DP when a unit changes one input of one stream; see
    :func:`gaussian_psum_sensitivity` for several streams (all the counters of ``shape`` are then
    covered by the one guarantee, because the noise is calibrated to the joint l2 sensitivity).
    The release at round t sums popcount(t) independent N(0, sigma^2) draws, so its error is
    exactly N(0, popcount(t) sigma^2) (:func:`gaussian_error_bound` bounds it uniformly).

    Args:
        steps: stream length T (rounds the counters may be fed), an integer >= 1.
        sigma: standard deviation of the noise on each p-sum, in (0, inf) (unit of the stream
            values).
        shape: shape of the array of counters, an int or a tuple of ints >= 0; default () (one
            counter).
        seed: None, a non-negative int, a ``numpy.random.SeedSequence`` or a
            ``numpy.random.Generator`` (used and advanced as is); default None (fresh entropy).
        clip: clip fed values into [0, 1] instead of rejecting them; default False.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, steps: int, sigma: float, shape: Union[int, tuple[int, ...]] = (),
                 seed: _rng.Seed = None, *, clip: bool = False):
        super().__init__(steps, shape, clip)
        self._setup(V.positive("sigma", sigma), seed)

    @classmethod
    def unchecked(cls, steps: int, sigma: float, shape: tuple[int, ...] = (), seed: _rng.Seed = None, *,
                  clip: bool = False) -> "GaussianBinaryCounter":
        """The counter of ``GaussianBinaryCounter(steps, sigma, shape, seed, clip=clip)``, built without validation.

        For callers that validated the arguments (e.g. :class:`privcal.rl.pucb.agent.PUCB`, whose sigma
        comes from its own calibration): same noise, same draws.

        Args:
            steps: stream length T, an int >= 1 (not checked).
            sigma: standard deviation of the noise on each p-sum, a float in (0, inf) (not checked).
            shape: shape of the array of counters, a tuple of ints >= 0 (not checked, not converted
                from an int); default ().
            seed: as for the constructor (converted by ``privcal._rng``); default None.
            clip: clip fed values into [0, 1] instead of rejecting them; default False.

        Returns:
            The counter.
        """
        counter = cls.__new__(cls)
        counter._init_base(steps, shape, clip)
        counter._setup(sigma, seed)
        return counter

    def _setup(self, sigma: float, seed: _rng.Seed) -> None:
        self.sigma = sigma
        self.levels = _num_levels(self.steps)
        self._rng = _rng.as_generator(seed)
        self._allocate()

    def _draw(self) -> np.ndarray:
        return self._rng.normal(0.0, self.sigma, size=self.shape)

    @property
    def variance(self) -> float:
        """Exact variance of the current release error, popcount(t) sigma^2 (0 before round 1)."""
        if self.t == 0:
            return 0.0
        return float(_psums_used(np.asarray(self.t, dtype=np.int64))) * self.sigma ** 2


class ExactCounter(_CounterBase):
    """Exact prefix sums with the :class:`BinaryCounter` interface (the non-private reference).

    No privacy: used by the non-private (UBEV-style) baseline so that it shares PUCB's code path.

    Args:
        steps: stream length T (rounds the counters may be fed), an integer >= 1.
        shape: shape of the array of counters, an int or a tuple of ints >= 0; default ().
        clip: clip fed values into [0, 1] instead of rejecting them; default False.

    Raises:
        ValueError: an argument is outside its range.
    """

    epsilon = math.inf
    laplace_scale = 0.0
    variance = 0.0

    def __init__(self, steps: int, shape: Union[int, tuple[int, ...]] = (), *,
                 clip: bool = False):
        super().__init__(steps, shape, clip)
        self._estimate = np.zeros(self.shape)

    @property
    def estimate(self) -> np.ndarray:
        """Exact prefix sums after the rounds fed so far; a copy."""
        return self._estimate.copy()

    def update(self, values: ArrayLike) -> np.ndarray:
        """Feed one value per counter and return the exact prefix sums.

        Args:
            values: one value in [0, 1] per counter, broadcastable to ``shape``.

        Returns:
            The exact prefix sums after this round, an array of shape ``shape``.

        Raises:
            ValueError: a value is outside [0, 1] (and ``clip`` is False) or the shape is wrong.
            InfeasibleError: the counter has already been fed ``steps`` rounds.
        """
        self._estimate = self._estimate + self._next_round(values)
        return self._estimate.copy()
